"""Schemas of the scrimmages' route: what a bot's owner asks for, and the matches made."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from arena.api.schemas.fields import MAX_SEATS, StrictInteger, id_field
from arena.games import GAMES
from arena.services import MAX_ID
from arena.services.scrimmages import MAX_MATCHES, house_names


class OpponentField(fields.Field):
    """A bot's id (a whole number) or a house policy's name (``"heuristic"``)."""

    default_error_messages = {
        "invalid": "Give a bot's id or a house policy: {policies}.",
        "policy": "No house policy {value!r}: the policies are {policies}.",
        "range": f"A bot's id is from 1 to {MAX_ID}.",
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int | str:
        policies = ", ".join(house_names())
        if isinstance(value, str):
            if value not in house_names():
                raise self.make_error("policy", value=value, policies=policies)
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if not 1 <= value <= MAX_ID:
                raise self.make_error("range")
            return value
        raise self.make_error("invalid", policies=policies)


class ScrimmageCreateSchema(Schema):
    bot_id = id_field(required=True, metadata={"description": "your bot: it asks, and plays"})
    opponents = fields.List(
        OpponentField(
            metadata={
                "oneOf": [
                    {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                    {"type": "string", "enum": house_names()},
                ],
                "description": "a bot's id (a bot that accepts challenges, or yours) or a "
                "house policy's name",
            }
        ),
        required=True,
        validate=validate.Length(min=1, max=MAX_SEATS - 1),
        metadata={
            "description": "who the bot plays against at each table: bots of its event (or, "
            "both, of the open arena) and house policies, which may repeat"
        },
    )
    matches = StrictInteger(
        load_default=1,
        validate=validate.Range(min=1, max=MAX_MATCHES),
        metadata={
            "description": "how many matches, the seats rotated from one to the next (at "
            "most the bot's hourly allowance)"
        },
    )
    game = fields.String(
        validate=validate.OneOf(sorted(GAMES)),
        metadata={"description": "default: the bot's first game that every opponent plays"},
    )


class ScrimmagesCreatedSchema(Schema):
    match_ids = fields.List(
        fields.Integer(), metadata={"description": "the matches made, queued: one per table"}
    )
    game = fields.String()
    per_hour = fields.Integer(
        metadata={"description": "the scrimmage matches a bot may play an hour"}
    )
