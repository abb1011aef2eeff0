"""Limits on the request bodies the server reads: bytes and JSON nesting.

Both are checked once, before any view runs (``check_request_body``, installed by
``create_app``), so every route that reads a body — through webargs, ``request.get_json``
or anything added later — gets the same clear 4xx instead of a ``RecursionError`` (Python's
JSON parser recurses once per level: a body of 100,000 ``[`` exhausts the stack) or a 500.

The largest legitimate bodies are tournament requests: a list of bot ids and game options
three levels deep (``{"options": {"values": {"A": 1}}}``).  Both limits leave a wide margin.
"""

from __future__ import annotations

import json
import re
from typing import NoReturn

import flask
from flask import request
from werkzeug.exceptions import HTTPException

from arena.hosted.bundles import MAX_UPLOAD

MAX_BODY_BYTES = 256 * 1024  # Flask's MAX_CONTENT_LENGTH: a larger body is answered 413
MAX_JSON_DEPTH = 32  # arrays and objects inside one another; deeper is answered 400
# the routes that take a larger body than MAX_BODY_BYTES, and how large
LARGER_BODIES = {"hosted.BotCode": MAX_UPLOAD}

API_DESCRIPTION = (  # the OpenAPI document's description
    "Request bodies are JSON (`Content-Type: application/json`) of at most "
    f"{MAX_BODY_BYTES // 1024} KiB (a larger one is answered 413), with arrays and objects "
    f"nested at most {MAX_JSON_DEPTH} levels deep (deeper is answered 400). Every error is "
    "a JSON object with `code`, `status`, `message` and, for invalid fields, `errors`."
)

# a JSON string (also one left open at the end of the body), or a bracket outside strings;
# possessive repeats and the optional closing quote keep the scan linear on any input
_TOKENS = re.compile(r'"(?:[^"\\]++|\\.?)*+"?|[\[{]|[\]}]', re.S)


def json_depth(text: str, limit: int | None = None) -> int:
    """How deeply the arrays and objects of a JSON text nest (0 for a scalar, 1 for
    ``[]``); brackets inside strings do not count.  With ``limit``, counting stops at the
    first level past it (the answer is then ``limit + 1``).  The text need not be valid
    JSON: a parser that reads it can never go deeper than this count."""
    depth = deepest = 0
    for token in _TOKENS.finditer(text):
        char = text[token.start()]
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    break
        elif char != '"':  # a closing bracket; a string changes nothing
            depth -= 1
    return deepest


def _refuse(status: int, message: str, field_message: str) -> NoReturn:
    """The API's error shape: ``message``, and ``errors`` by location like a schema's."""
    try:
        flask.abort(status, message)
    except HTTPException as err:
        err.data = {"messages": {"json": [field_message]}}  # type: ignore[attr-defined]
        raise


def check_request_body() -> None:
    """``before_request``: refuse a body over ``MAX_CONTENT_LENGTH`` (413) and a JSON body
    nested deeper than ``MAX_JSON_DEPTH`` (400), whatever the route and method; a hosted
    bot's code upload may be larger (``LARGER_BODIES``)."""
    if request.endpoint in LARGER_BODIES and request.method == "PUT":
        request.max_content_length = LARGER_BODIES[request.endpoint]
    limit = request.max_content_length
    too_large = f"the body is larger than {limit} bytes"
    if limit is not None and (request.content_length or 0) > limit:
        _refuse(413, too_large, "Body too large.")
    if not request.is_json:
        return  # nothing here reads other bodies as JSON (a form is refused by the schema)
    body = request.get_data(cache=True)  # kept for the view: read once
    if limit is not None and request.content_length is None and len(body) >= limit:
        # a body without a length (chunked: the server ends the input) is cut at the
        # limit without a word: is there more of it?
        try:
            more = request.environ["wsgi.input"].read(1)
        except (OSError, ValueError):
            more = b""  # the client went away
        if more:
            _refuse(413, too_large, "Body too large.")
    try:  # as the JSON parsers decode it: UTF-8, or UTF-16/32 for request.get_json
        text = body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError:
        return  # no parser reads it: the route answers that it is not JSON
    brackets = text.count("[") + text.count("{")  # few brackets: no need to scan
    if brackets > MAX_JSON_DEPTH and json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        _refuse(
            400,
            f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels",
            "JSON nested too deeply.",
        )
