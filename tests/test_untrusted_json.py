"""Untrusted JSON bodies: every route that may take a body refuses one nested deeper than
``MAX_JSON_DEPTH`` (400) or larger than ``MAX_CONTENT_LENGTH`` (413) with the API's JSON
error, never a 500 or a ``RecursionError``, and nothing is written.

The routes come from the application's own URL map, so a route added later is covered
without touching this file."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from arena.api.limits import LARGER_BODIES, MAX_BODY_BYTES, MAX_JSON_DEPTH, json_depth
from arena.app import create_app
from arena.config import Config
from arena.models import Bot, Ladder, Match, Tournament

BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")
PLACEHOLDER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


def body_routes() -> list[tuple[str, str]]:
    """(URL, method) of every rule that accepts a method with a body, its variables
    filled in (an int converter gets 1, anything else a game id)."""
    app = create_app(Config(database_url="sqlite://", secret_key="collect", testing=True))
    try:
        routes = []
        for rule in app.url_map.iter_rules():
            url = PLACEHOLDER.sub(lambda m: "1" if m.group(1) == "int" else "cactus", rule.rule)
            routes += [(url, method) for method in sorted(rule.methods & set(BODY_METHODS))]
        return sorted(routes)
    finally:
        app.extensions["arena.db"].dispose()


ROUTES = body_routes()


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def stored(app: Flask) -> dict[str, int]:
    with app.extensions["arena.db"].session() as session:
        return {
            t.__tablename__: session.scalar(select(func.count()).select_from(t))
            for t in (Bot, Tournament, Match, Ladder)
        }


def api_error(response: Any, status: int, fragment: str) -> None:
    assert response.status_code == status, response.get_data()[:300]
    if response.request.path.startswith("/api/"):
        body = response.get_json()
        assert body["code"] == status
        assert fragment in body["message"], body
        assert body["errors"]["json"]  # by location, like a schema's errors


def test_the_url_map_has_the_routes_that_take_bodies() -> None:
    """The enumeration itself: if it found nothing, the tests below would prove nothing."""
    assert {
        ("/api/bots", "POST"),
        ("/api/bots/1", "PATCH"),
        ("/api/bots/1", "DELETE"),
        ("/api/tournaments", "POST"),
        ("/api/tournaments/1/cancel", "POST"),
        ("/api/ladders/cactus", "PUT"),
    } <= set(ROUTES)


@pytest.mark.parametrize(("url", "method"), ROUTES)
def test_json_nested_too_deep_is_400_on_every_route_that_takes_a_body(
    app: Flask, url: str, method: str
) -> None:
    client = app.test_client()
    before = stored(app)
    for body in (b"[" * 100_000, nested(MAX_JSON_DEPTH + 1), b'{"a":' * 5_000):
        response = client.open(url, method=method, data=body, content_type="application/json")
        api_error(response, 400, f"nested deeper than {MAX_JSON_DEPTH} levels")
    # the same, sent as UTF-16 (which request.get_json would also read)
    response = client.open(
        url,
        method=method,
        data=nested(1000).decode().encode("utf-16"),
        content_type="application/json; charset=utf-16",
    )
    assert response.status_code == 400
    assert stored(app) == before


@pytest.mark.parametrize(("url", "method"), ROUTES)
def test_a_body_over_the_size_limit_is_413_on_every_route(
    app: Flask, url: str, method: str
) -> None:
    client = app.test_client()
    before = stored(app)
    endpoint = app.url_map.bind("localhost").match(url, method)[0]
    limit = LARGER_BODIES.get(endpoint, MAX_BODY_BYTES) if method == "PUT" else MAX_BODY_BYTES
    big = json.dumps({"name": "x" * limit}).encode()
    response = client.open(url, method=method, data=big, content_type="application/json")
    api_error(response, 413, f"larger than {limit} bytes")
    # without a Content-Length (chunked), as a WSGI server that ends the input hands it on
    response = client.open(
        url,
        method=method,
        input_stream=io.BytesIO(big),
        content_type="application/json",
        headers={"Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )
    api_error(response, 413, f"larger than {limit} bytes")
    assert stored(app) == before


def test_nesting_up_to_the_limit_reaches_the_schema(app: Flask) -> None:
    """The limit is on structure, not on content: a body nested exactly to the limit, or
    brackets inside strings, are judged by the schema and the game as usual."""
    client = app.test_client()
    deep: Any = 1
    for _ in range(MAX_JSON_DEPTH - 2):  # the body and "options" are two levels
        deep = [deep]
    body = {
        "name": "cup",
        "game": "cactus",
        "bot_ids": [1, 2],
        "seats_per_match": 2,
        "games_per_pairing": 2,
        "options": {"values": deep},
    }
    response = client.post("/api/tournaments", json=body)
    assert response.status_code == 400, response.get_json()  # the game's options say why
    assert "option 'values' must be an object" in response.get_json()["message"]
    response = client.post("/api/bots", json={"name": "[" * 10_000, "owner": "{" * 10_000})
    assert response.status_code == 422, response.get_json()
    assert "name" in response.get_json()["errors"]["json"]
    assert stored(app)["bots"] == 0


def test_the_limits_are_in_the_openapi_document(client: Any) -> None:
    description = client.get("/api/openapi.json").get_json()["info"]["description"]
    assert f"{MAX_BODY_BYTES // 1024} KiB" in description
    assert f"{MAX_JSON_DEPTH} levels" in description


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ('"[[[["', 0),
        ("[]", 1),
        ("[[1], {}]", 2),
        ('{"a": {"b": [1, "]]]"]}}', 3),
        ('["\\"[[", [["\\\\"]]]', 3),  # an escaped quote, then an escaped backslash
        ('["unterminated [[[', 1),
        pytest.param("[" * 100_000, 100_000, id="100000-brackets"),
    ],
)
def test_json_depth_counts_brackets_outside_strings(text: str, depth: int) -> None:
    assert json_depth(text) == depth
    assert json_depth(text, limit=2) == min(depth, 3)
