"""Schemas of ratings, ladders and the games' descriptions."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from arena.api.schemas.fields import MAX_SEATS, StrictBoolean, StrictInteger, UtcDateTime
from arena.competition.ratings import PROVISIONAL_MATCHES, PROVISIONAL_WIDTH


class FittedSchema(Schema):
    rating = fields.Float()
    low = fields.Float()
    high = fields.Float()
    matches = fields.Integer()


PROVISIONAL = (
    "true: too little evidence for the fitted rating to be compared (no fit yet, fewer "
    f"than {PROVISIONAL_MATCHES} rated matches in it, or a 95% interval wider than "
    f"{PROVISIONAL_WIDTH:.0f} points)"
)
TIE_GROUP = (
    "bots sharing a number are statistically tied: neighbours on the leaderboard whose "
    "fitted ratings differ by less than the 95% margin of the difference from the group's "
    "first; null: not tied with a neighbour, or provisional"
)


class RatingViewSchema(Schema):
    """A bot's rating in one game: the live Elo and the fitted rating, as every page shows it."""

    elo = fields.Float()
    matches = fields.Integer(metadata={"description": "rated matches played"})
    fitted = fields.Nested(
        FittedSchema, allow_none=True, metadata={"description": "null: not fitted yet"}
    )
    provisional = fields.Boolean(metadata={"description": PROVISIONAL})


class LeaderboardRowSchema(RatingViewSchema):
    bot_id = fields.Integer()
    name = fields.String()
    tie_group = fields.Integer(allow_none=True, metadata={"description": TIE_GROUP})


class LadderSchema(Schema):
    game = fields.String()
    enabled = fields.Boolean()
    seats_per_match = fields.Integer()
    updated_at = UtcDateTime(allow_none=True)


class LadderUpdateSchema(Schema):
    enabled = StrictBoolean(required=True)
    seats_per_match = StrictInteger(
        load_default=None,
        validate=validate.Range(min=2, max=MAX_SEATS),
        metadata={"description": "default: the smallest table the game is played at"},
    )


class OptionSchema(Schema):
    name = fields.String()
    type = fields.String(
        metadata={"description": "the JSON type of a value: boolean, integer, string or object"}
    )
    enum = fields.List(
        fields.Raw(),
        metadata={"description": "the values allowed, when not every value of the type is"},
    )
    default = fields.Raw(
        allow_none=True, metadata={"description": "the value of a match started without it"}
    )
    nullable = fields.Boolean(
        metadata={"description": "null is allowed too: the game then chooses (see description)"}
    )
    description = fields.String()
    minimum = fields.Integer(metadata={"description": "integers only"})
    maximum = fields.Integer(metadata={"description": "integers only"})
    allowed_keys = fields.List(
        fields.String(), metadata={"description": "objects only: the keys allowed, if not any"}
    )


class PresetSchema(Schema):
    name = fields.String()
    description = fields.String()
    options = fields.Dict(metadata={"description": "the option values it sets"})


class _GameBaseSchema(Schema):
    id = fields.String()
    title = fields.String()
    min_players = fields.Integer()
    max_players = fields.Integer()
    default_options = fields.Dict()
    options = fields.List(
        fields.Nested(OptionSchema),
        metadata={"description": "every option, in the order the game declares them"},
    )
    options_schema = fields.Dict(
        metadata={
            "description": "the JSON Schema (draft 2020-12) of a tournament's options: types, "
            "allowed values, defaults, descriptions and the presets; options that contradict "
            "each other are refused when the tournament is created"
        }
    )


class GameSchema(_GameBaseSchema):
    presets = fields.Dict(
        keys=fields.String(),
        values=fields.Dict(),
        metadata={"description": "preset name -> the option values it sets"},
    )


class GameDetailSchema(_GameBaseSchema):
    presets = fields.List(fields.Nested(PresetSchema))


class GameWireSchema(Schema):
    game = fields.String()
    title = fields.String()
    view = fields.Dict(
        metadata={
            "description": "the JSON Schema (draft 2020-12) of the view a bot receives: every "
            "key, its type and meaning; each event type is its definition event_<type>"
        }
    )
    actions = fields.Dict(
        keys=fields.String(),
        values=fields.Dict(),
        metadata={"description": "action type -> the JSON Schema of that action"},
    )
    act_request = fields.Dict(
        metadata={"description": "the JSON Schema of the body of POST /act, view included"}
    )
