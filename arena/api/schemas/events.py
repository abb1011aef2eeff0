"""Schemas of the events' routes: an event, joining it, its organisers and its roster."""

from __future__ import annotations

import datetime as dt
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from arena.api.schemas.fields import (
    PageArgsSchema,
    StrictBoolean,
    StrictInteger,
    TrimmedString,
    UtcDateTime,
)
from arena.games import GAMES
from arena.models import (
    EVENT_VISIBILITIES,
)


def _event_fields(required: bool) -> dict[str, fields.Field]:
    return {
        "name": TrimmedString(required=required, validate=validate.Length(min=1, max=100)),
        "games": fields.List(
            fields.String(validate=validate.OneOf(sorted(GAMES))),
            required=required,
            validate=validate.Length(min=1, max=len(GAMES)),
        ),
        "visibility": fields.String(
            validate=validate.OneOf(EVENT_VISIBILITIES),
            metadata={"description": "private: its pages and API need a member's login"},
        ),
        "bots_per_account": StrictInteger(
            validate=validate.Range(min=1, max=100),
            metadata={"description": "bots one contestant may have in it (default 1)"},
        ),
        "registration_opens_at": fields.AwareDateTime(allow_none=True, default_timezone=dt.UTC),
        "registration_closes_at": fields.AwareDateTime(allow_none=True, default_timezone=dt.UTC),
        "freeze_at": fields.AwareDateTime(
            allow_none=True,
            default_timezone=dt.UTC,
            metadata={
                "description": "after it: no new bots, no endpoint or transport changes, "
                "versions pinned"
            },
        ),
    }


EventCreateSchema = Schema.from_dict(_event_fields(required=True), name="EventCreateSchema")


class EventUpdateSchema(Schema.from_dict(_event_fields(required=False))):  # type: ignore[misc]
    new_join_code = StrictBoolean(
        metadata={"description": "true: a new join code (the old one stops working)"}
    )

    @validates_schema
    def _not_empty(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError("Give at least one field to change.")


class EventSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    games = fields.List(fields.String())
    visibility = fields.String()
    bots_per_account = fields.Integer()
    registration_opens_at = UtcDateTime(allow_none=True)
    registration_closes_at = UtcDateTime(allow_none=True)
    freeze_at = UtcDateTime(allow_none=True)
    frozen = fields.Boolean()
    registration_open = fields.Boolean()
    ladder = fields.Dict(metadata={"description": "per game: enabled, seats_per_match"})
    created_at = UtcDateTime()
    join_code = fields.String(metadata={"description": "only for its organisers"})
    role = fields.String(
        allow_none=True, metadata={"description": "yours in it: organiser, contestant or null"}
    )


class EventJoinSchema(Schema):
    join_code = fields.String(required=True, validate=validate.Length(min=1, max=32))


class EventOrganiserSchema(Schema):
    account = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "the name of the account that becomes an organiser"},
    )


class EventListArgsSchema(PageArgsSchema):
    mine = fields.Boolean(metadata={"description": "true: only the events you are in"})


class RosterRowSchema(Schema):
    account_id = fields.Integer(allow_none=True)
    account = fields.String(allow_none=True)
    role = fields.String(allow_none=True, metadata={"description": "organiser or contestant"})
    bot_id = fields.Integer(allow_none=True)
    bot = fields.String(allow_none=True)
    status = fields.String(allow_none=True)
    paused_by = fields.String(allow_none=True)
    transport = fields.String(allow_none=True, metadata={"description": "webhook or connect"})
    online = fields.Boolean(
        allow_none=True, metadata={"description": "connected now (null: a webhook bot)"}
    )
    healthy = fields.Boolean(
        allow_none=True, metadata={"description": "active and not forfeiting its matches"}
    )
    version = fields.String(allow_none=True, metadata={"description": "the version it declares"})
    matches = fields.Integer(allow_none=True, metadata={"description": "matches played"})
    qualifier_id = fields.Integer(
        allow_none=True,
        metadata={
            "description": "the event's latest qualifier (the grade columns: its organisers "
            "see every row's, a contestant their own rows' only)"
        },
    )
    grade = fields.String(
        allow_none=True, metadata={"description": "pass, fail or pending in that qualifier"}
    )
    grade_matches = fields.Integer(allow_none=True, metadata={"description": "matches graded"})
    grade_score = fields.Float(allow_none=True, metadata={"description": "mean score, 0 to 1"})
