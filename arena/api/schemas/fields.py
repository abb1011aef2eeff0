"""Fields and helpers every area's schemas share: strict numbers and booleans, UTC
moments, names, endpoints, secrets, ids and the page arguments of every list."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate

from arena.games import GAMES
from arena.models import (
    aware,
)
from arena.services import (
    MAX_ID,
    signing_secret_problem,
)

MAX_PAGE_SIZE = 100
MAX_SEATS = 16
MAX_TOURNAMENT_BOTS = 1000
MAX_MATCHES_PER_BOT = 10_000
MAX_OPTIONS = 64

# a bot's or an account's name: letters, digits and a few separators, not starting with one
NAME_PATTERN = r"^\w[\w .+\-()#]*$"


class StrictInteger(fields.Integer):
    """A JSON number that is a whole number: not a string, a float or a boolean."""

    def __init__(self, **kwargs: Any):
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class UtcDateTime(fields.DateTime):
    """A moment in an answer, always with its offset (``+00:00``): every datetime stored
    is UTC, but SQLite gives them back without a timezone, and an answer must not depend
    on the database."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        if isinstance(value, dt.datetime) and value.tzinfo is None:
            value = aware(value)
        return super()._serialize(value, attr, obj, **kwargs)


class StrictBoolean(fields.Boolean):
    """``true`` or ``false`` only (not 1, "yes" or "on")."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


def _plain_endpoint(url: str) -> None:
    """No credentials, query or fragment: the endpoint is shown to everyone."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ValidationError("The endpoint must not contain credentials.")
    if parts.query or parts.fragment:
        raise ValidationError("The endpoint must not have a query or a fragment.")


def endpoint_field(**kwargs: Any) -> fields.Url:
    return fields.Url(
        schemes={"http", "https"},
        require_tld=False,  # loopback and in-cluster names for local and compose setups
        validate=[validate.Length(max=512), _plain_endpoint],
        **kwargs,
    )


class TrimmedString(fields.String):
    """A string stored without its surrounding spaces (checked after trimming)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        return super()._deserialize(value, attr, data, **kwargs).strip()


def name_field(**kwargs: Any) -> TrimmedString:
    """A bot's or an account's name: trimmed here; unique without case and spaces (else
    409)."""
    return TrimmedString(
        validate=[
            validate.Length(min=1, max=64),
            validate.Regexp(
                NAME_PATTERN,
                error="Use letters, digits, spaces and . + - ( ) # _ ; start with a letter "
                "or a digit.",
            ),
        ],
        **kwargs,
    )


def _good_secret(secret: str) -> None:
    if problem := signing_secret_problem(secret):
        raise ValidationError(problem[0].upper() + problem[1:] + ".")


def signing_secret_field(**kwargs: Any) -> fields.String:
    """A signing secret its owner chooses (the arena makes one when none is given)."""
    return fields.String(validate=_good_secret, **kwargs)


def games_field(**kwargs: Any) -> fields.List:
    return fields.List(
        fields.String(validate=validate.Length(min=1, max=32)),
        validate=validate.Length(min=1, max=len(GAMES)),
        **kwargs,
    )


def id_field(**kwargs: Any) -> StrictInteger:
    """An id a request names: a whole number that can exist."""
    return StrictInteger(validate=validate.Range(min=1, max=MAX_ID), **kwargs)


def query_id_field(**kwargs: Any) -> fields.Integer:
    """An id in a query string, where every value is text (``?event_id=3``)."""
    return fields.Integer(strict=False, validate=validate.Range(min=1, max=MAX_ID), **kwargs)


# -- common ---------------------------------------------------------------------------------
class PageArgsSchema(Schema):
    """Page arguments of list answers (their metadata is in the X-Pagination header)."""

    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=1_000_000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_PAGE_SIZE))
