"""Schemas of the matches' routes: lists, seats, replays and frames."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from arena.api.schemas.fields import PageArgsSchema, UtcDateTime
from arena.games import GAMES
from arena.models import (
    MATCH_STATUSES,
)
from arena.services import (
    MAX_ID,
)


class MatchListArgsSchema(PageArgsSchema):
    game = fields.String(validate=validate.OneOf(sorted(GAMES)))
    status = fields.String(validate=validate.OneOf(MATCH_STATUSES))
    tournament_id = fields.Integer(validate=validate.Range(min=1, max=MAX_ID))
    bot_id = fields.Integer(validate=validate.Range(min=1, max=MAX_ID))


class SeatSchema(Schema):
    seat = fields.Integer()
    bot_id = fields.Integer()
    bot_name = fields.String(attribute="bot.name")
    bot_kind = fields.String(
        attribute="bot.kind", metadata={"description": "bot, house or person: who played the seat"}
    )
    rank = fields.Integer(allow_none=True)
    score = fields.Float(allow_none=True)
    strikes = fields.Integer()
    forfeited = fields.Boolean(metadata={"description": "no usable answer in the match"})
    faults = fields.Dict(
        allow_none=True,
        metadata={"description": "count, kinds (count by kind) and the first fault's cause"},
    )
    version = fields.String(
        allow_none=True,
        metadata={"description": "the version the bot declared when the match started"},
    )


class MatchSchema(Schema):
    id = fields.Integer()
    tournament_id = fields.Integer(allow_none=True)
    kind = fields.String()
    game = fields.String()
    status = fields.String()
    attempts = fields.Integer()
    rated = fields.Boolean()
    seed = fields.Integer(
        allow_none=True,
        metadata={
            "description": "null while any match that plays its deal is queued or running "
            "(the match itself, or another rotation of a duplicate deal): the seed gives "
            "the deal, every hidden card",
        },
    )
    seats = fields.List(fields.Nested(SeatSchema))
    created_at = UtcDateTime()
    started_at = UtcDateTime(allow_none=True)
    finished_at = UtcDateTime(allow_none=True)


class MatchDetailSchema(MatchSchema):
    options = fields.Dict()
    result = fields.Dict(allow_none=True)
    error = fields.String(allow_none=True)


class ReplayArgsSchema(Schema):
    seat = fields.Integer(
        metadata={"description": "only what this seat received (events and its decisions)"}
    )


class FramesArgsSchema(Schema):
    perspective = fields.String(
        load_default="all",
        validate=validate.Length(min=1, max=8),
        metadata={
            "description": "all (every card face up), public (what someone at no seat may "
            "know) or a seat number (what that seat knew). While a match is played only "
            "public, unless its tournament's live_view is everyone"
        },
    )
    since = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=1_000_000),
        metadata={
            "description": "the first frame wanted: a viewer that holds frames 0 "
            "to since - 1 asks for the rest"
        },
    )
