"""What every API blueprint shares: the argument parser, error mapping and request helpers."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import flask
import marshmallow as ma
import orjson
from flask import Response, current_app, request
from flask_smorest import Blueprint
from flask_smorest.pagination import PAGINATION_HEADER
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import HTTPException, default_exceptions
from werkzeug.routing import IntegerConverter, Map

from arena.config import Config
from arena.db import Database
from arena.logins import (
    bearer_token,
    current_caller,
    failed_logins,
    limit_registration,
    limit_signup,
    rate_limit,
)
from arena.services import MAX_ID, Caller, ServiceError
from arena.services.access import admin_open

# what the API modules import too
__all__ = [
    "bearer_token",
    "current_caller",
    "failed_logins",
    "limit_registration",
    "limit_signup",
    "rate_limit",
]

BEARER = [{"bearerAuth": []}]  # the OpenAPI security requirement of protected operations
# a read that answers anyone, and more to a token (a private event's members, an owner)
OPTIONAL_BEARER = [{}, *BEARER]
PAGINATION_HEADER_NAME = "X-Pagination"
# the header is JSON text (flask-smorest's format): documented with ``content`` as OpenAPI
# says such a header is, not with a ``schema``, which would mean "total,3,page,1"
PAGINATION_HEADERS_DOC = {  # for @blp.response
    PAGINATION_HEADER_NAME: {
        "description": PAGINATION_HEADER["description"] + " (a JSON object)",
        "content": {"application/json": {"schema": PAGINATION_HEADER["schema"]}},
    }
}


class IdConverter(IntegerConverter):
    """The app's ``int`` converter (``<int:bot_id>``): every whole number in a path here
    is an id, from 1 to ``MAX_ID``; any other matches no route (404), so no view ever asks
    the database for an id that cannot exist (PostgreSQL would answer with an error)."""

    def __init__(self, map: Map, *args: Any, **kwargs: Any) -> None:
        super().__init__(map, min=1, max=MAX_ID)


def id_parameter_schema(converter: IdConverter) -> dict[str, Any]:
    """How the OpenAPI document describes an id in a path."""
    return {"type": "integer", "minimum": 1, "maximum": MAX_ID}


def _summary(messages: Any, prefix: str = "") -> list[str]:
    """``{"json": {"name": ["Too long."]}}`` -> ``["json.name: Too long."]``."""
    if isinstance(messages, Mapping):
        lines = []
        for key, value in messages.items():
            where = key if key != "_schema" else ""
            lines += _summary(value, f"{prefix}.{where}" if prefix and where else prefix or where)
        return lines
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        text = " ".join(m.rstrip(".") + "." for m in messages).rstrip(".")
        return [f"{prefix}: {text}" if prefix else text]
    if isinstance(messages, list):
        return [line for m in messages for line in _summary(m, prefix)]
    return [f"{prefix}: {messages}" if prefix else str(messages)]


def _abort(status: int, message: str, messages: Any, exc: Exception) -> NoReturn:
    try:
        flask.abort(status, message)
    except HTTPException as err:
        # the app's error handler shows data["messages"] as "errors", field by field
        err.data = {"messages": messages}  # type: ignore[attr-defined]
        err.exc = exc  # type: ignore[attr-defined]
        err.of_arguments = True  # type: ignore[attr-defined]  # see credentials_first
        raise


class ArenaParser(FlaskParser):
    """webargs' parser, except that every location uses the schema's ``unknown`` (RAISE:
    a misspelt query argument is an error, not silently ignored) and that a validation
    error says what is wrong in its message as well as field by field."""

    def __init__(self) -> None:
        super().__init__(unknown=None)

    def parse(self, argmap: Any, req: Any = None, *, location: str | None = None, **kwargs: Any):  # type: ignore[no-untyped-def]
        """A JSON body whose schema has a ``fast_load(data)`` (the connect transport's
        poll, one per decision of a bot that connects out) is checked by it, without
        marshmallow; whatever it does not accept (it returns None) is parsed by the schema
        as usual, which says what is wrong."""
        loaded = None
        fast = getattr(argmap, "fast_load", None)
        if fast is not None and location in (None, "json"):
            try:
                data = orjson.loads((req or request).get_data(cache=True))
            except orjson.JSONDecodeError:
                data = None
            loaded = fast(data) if data is not None else None
        if loaded is None:
            loaded = super().parse(argmap, req, location=location, **kwargs)
        self._refuse_nul(loaded, req or request, location or self.location)
        return loaded

    @staticmethod
    def _refuse_nul(loaded: Any, req: flask.Request, location: str) -> None:
        """A 422 for a NUL character in any string given: PostgreSQL cannot store one
        (nor compare with one), and no name, code or token has one.  Looked for only
        when the request's text could hold one (``\\u0000`` in a JSON body, ``%00`` in a
        query): the connect transport's polls pass by at the cost of a substring search."""
        if location == "json":
            maybe = b"\\u0000" in req.get_data(cache=True)
        elif location == "query":
            maybe = b"%00" in req.query_string or b"\x00" in req.query_string
        else:
            maybe = True
        where = _nul_in(loaded) if maybe else None
        if where is not None:
            messages = {location: {where or "_schema": ["Must not contain a NUL character."]}}
            error = ma.ValidationError(messages)
            _abort(422, "invalid input: " + "; ".join(_summary(messages)), messages, error)

    def handle_error(
        self,
        error: ma.ValidationError,
        req: flask.Request,
        schema: ma.Schema,
        *,
        error_status_code: int | None,
        error_headers: Mapping[str, str] | None,
    ) -> NoReturn:
        status = error_status_code or self.DEFAULT_VALIDATION_STATUS
        message = "invalid input: " + "; ".join(_summary(error.messages))
        _abort(status, message, error.messages, error)

    def _handle_invalid_json_error(
        self,
        error: json.JSONDecodeError | UnicodeDecodeError,
        req: flask.Request,
        *args: Any,
        **kwargs: Any,
    ) -> NoReturn:
        _abort(400, "the body is not valid JSON", {"json": ["Invalid JSON body."]}, error)


def _nul_in(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (value or key) holding a NUL, else None."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and "\x00" in key:
                return inner
            found = _nul_in(item, inner)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _nul_in(item, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
    return None


def _service_error(exc: ServiceError) -> Response:
    """A ServiceError becomes the HTTP error of its status, formatted by the app's one
    JSON error helper."""
    http_exc = default_exceptions.get(exc.status, default_exceptions[400])(exc.message)
    http_exc.code = exc.status
    http_exc.extra = exc.fields  # type: ignore[attr-defined]
    response = flask.make_response(current_app.handle_http_exception(http_exc))
    if exc.status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    if "retry_after" in exc.fields:  # a 503 of a busy part: when to come back
        response.headers["Retry-After"] = str(exc.fields["retry_after"])
    return response


class ApiBlueprint(Blueprint):
    ARGUMENTS_PARSER = ArenaParser()

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.register_error_handler(ServiceError, _service_error)


def anyone(config: Config) -> bool:
    """``credentials_first``: the operation takes a request without a credential too."""
    return False


def nobody(config: Config) -> bool:
    """``credentials_first``: a request without a credential is always refused."""
    return True


def unless_open(config: Config) -> bool:
    """``credentials_first``: the admin's operations refuse a request without a credential
    when an organiser token is configured (``services.check_admin``)."""
    return not admin_open(config)


def credentials_first(
    refuses_anonymous: Callable[[Config], bool],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Put above ``@blp.arguments``: a request whose arguments (body, query) are invalid
    is judged by its credential first, so a caller who would be refused gets that answer
    (401), not a 422 that tells an unknown caller about the fields: a token that is no
    one's is a 401, and so is no credential at all where ``refuses_anonymous(config)``
    (``nobody``, ``unless_open``; ``anyone`` for operations open to all).  A request
    with valid arguments goes to the view as before, which says who may do what (a
    private event's thing stays a 404 to strangers)."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            try:
                return view(*args, **kwargs)
            except HTTPException as exc:
                if not getattr(exc, "of_arguments", False):
                    raise
                with database().session() as session:
                    who: Caller = current_caller(session)  # a token that is no one's: 401
                if who.anonymous and refuses_anonymous(config()):
                    raise ServiceError(
                        401, "this needs a credential: Authorization: Bearer <token>, or a login"
                    ) from None
                raise

        return checked

    return decorate


def database() -> Database:
    return current_app.extensions["arena.db"]


def config() -> Config:
    return current_app.extensions["arena.config"]


@functools.cache
def field_names(schema: type[ma.Schema]) -> tuple[str, ...]:
    """A schema's field names; making the schema deep-copies every field, which cost a
    list of 20 bots two thirds of its time when it was done per row."""
    return tuple(schema().fields)


def as_row(obj: object, schema: type[ma.Schema], **extra: Any) -> dict[str, Any]:
    """The schema's fields read from ``obj`` (not yet serialised: the response schema
    does that), with the computed ``extra`` values: for answers that add to a model."""
    return {
        **{name: getattr(obj, name) for name in field_names(schema) if name not in extra},
        **extra,
    }


def paged(
    query: Mapping[str, Any], items: list[Any], total: int
) -> tuple[list[Any], int, dict[str, str]]:
    """A list answer: the page's items as the body, the pagination metadata in the
    ``X-Pagination`` header (flask-smorest's format, as ``@blp.paginate`` writes it)."""
    page, page_size = query["page"], query["page_size"]
    metadata: dict[str, int] = {"total": total, "total_pages": -(-total // page_size)}
    if total:
        last = metadata["total_pages"]
        metadata.update(first_page=1, last_page=last)
        if page <= last:
            metadata["page"] = page
            if page > 1:
                metadata["previous_page"] = page - 1
            if page < last:
                metadata["next_page"] = page + 1
    return items, 200, {PAGINATION_HEADER_NAME: json.dumps(metadata)}
