"""Schemas of the bots' routes: registration, changes, secrets and what a bot's answers show."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from arena.api.schemas.fields import (
    PageArgsSchema,
    UtcDateTime,
    endpoint_field,
    games_field,
    id_field,
    name_field,
    query_id_field,
    signing_secret_field,
)
from arena.api.schemas.ratings import RatingViewSchema
from arena.games import GAMES
from arena.models import (
    BOT_KINDS,
    BOT_SET_STATUSES,
    BOT_STATUSES,
)
from arena.services import (
    ROTATABLE,
    SECRET_MAX_LENGTH,
    SECRET_MIN_LENGTH,
)


class BotCreateSchema(Schema):
    name = name_field(required=True)
    endpoint = endpoint_field(
        allow_none=False,
        metadata={"description": "where the arena calls the bot (or give connect: true)"},
    )
    connect = fields.Boolean(
        load_default=False,
        metadata={
            "description": "the bot connects out to the arena instead (a laptop, no public "
            "address): no endpoint, and give its games"
        },
    )
    hosted = fields.Boolean(
        load_default=False,
        metadata={
            "description": "the arena runs the bot's code (upload it with PUT "
            "/api/bots/<id>/code): no endpoint, and give its games"
        },
    )
    owner = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "who answers for the bot (free text); required without an "
            "account (default: the account's name)"
        },
    )
    event_id = id_field(
        allow_none=True,
        metadata={
            "description": "the event it plays in; null: the open arena; absent: from an "
            "account in exactly one event, that event, else the open arena"
        },
    )
    description = fields.String(load_default="", validate=validate.Length(max=500))
    games = games_field(load_default=None, metadata={"description": "default: all it declares"})
    playable = fields.Boolean(
        load_default=False,
        metadata={"description": "let people pick the bot as an opponent at /play"},
    )
    signing_secret = signing_secret_field(
        load_default=None,
        metadata={
            "description": f"your own signing secret, {SECRET_MIN_LENGTH} to "
            f"{SECRET_MAX_LENGTH} printable ASCII characters without spaces: start the bot "
            "with it before registering (default: the arena makes one)"
        },
    )

    @validates_schema
    def _endpoint_or_connect(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("hosted"):
            if "endpoint" in data or data.get("connect"):
                raise ValidationError(
                    "A hosted bot has no endpoint and does not connect: give one of the three.",
                    "hosted",
                )
            if not data.get("games"):
                raise ValidationError("Give the games of a hosted bot.", "games")
        elif data.get("connect"):
            if "endpoint" in data:
                raise ValidationError(
                    "A bot that connects out has no endpoint: give one or the other.", "connect"
                )
            if not data.get("games"):
                raise ValidationError("Give the games of a bot that connects out.", "games")
        elif "endpoint" not in data:
            raise ValidationError(
                'Missing data for required field (or "connect": true).', "endpoint"
            )


class BotUpdateSchema(Schema):
    name = name_field(metadata={"description": "its owner or an organiser renames it"})
    endpoint = endpoint_field(metadata={"description": "checked again with GET /"})
    connect = fields.Boolean(
        metadata={"description": "true: the bot connects out from now on (no endpoint)"}
    )
    description = fields.String(validate=validate.Length(max=500))
    status = fields.String(
        validate=validate.OneOf(BOT_SET_STATUSES),
        metadata={
            "description": "active also ends a pause after forfeits; paused: an "
            "organiser's pause (only an organiser ends it)"
        },
    )
    games = games_field()
    playable = fields.Boolean(
        metadata={"description": "let people pick the bot as an opponent at /play"}
    )
    accepts_challenges = fields.Boolean(
        metadata={
            "description": "let the owners of other bots of its event (or of the open arena) "
            "challenge it to scrimmages (POST /api/scrimmages)"
        }
    )
    event_id = id_field(
        allow_none=True,
        metadata={
            "description": "move the bot into this event (null: to the open arena): its "
            "owner before the freeze and within the event's rules, an organiser any time"
        },
    )
    reference = fields.Boolean(
        metadata={
            "description": "true: a reference bot, offered in every event's tournaments "
            "and qualifiers and never graded (an organiser of its event, or the admin)"
        }
    )

    @validates_schema
    def _not_empty(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError("Give at least one field to change.")


class BotRotateSchema(Schema):
    rotate = fields.List(
        fields.String(validate=validate.OneOf(ROTATABLE)),
        load_default=lambda: list(ROTATABLE),
        validate=validate.Length(min=1, max=len(ROTATABLE)),
        metadata={"description": "what gets a new value (default: both)"},
    )
    signing_secret = signing_secret_field(
        allow_none=True,
        metadata={
            "description": "your own new signing secret (rules as at registration; "
            "default: the arena makes one); needs signing_secret in rotate"
        },
    )

    @validates_schema
    def _secret_is_rotated(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("signing_secret") is not None and "signing_secret" not in data["rotate"]:
            raise ValidationError(
                "A new signing_secret is given but 'rotate' does not list signing_secret.",
                "signing_secret",
            )


class BotAttachSchema(Schema):
    owner_token = fields.String(
        required=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "the bot's owner token: proves the bot is yours"},
    )


class BotRotatedSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    rotated = fields.List(fields.String(), metadata={"description": "what got a new value"})
    owner_token = fields.String(
        metadata={"description": "shown once, if rotated: the old one no longer works"}
    )
    signing_secret = fields.String(
        metadata={"description": "shown once, if rotated: the arena signs with it from now on"}
    )


class BotListArgsSchema(PageArgsSchema):
    status = fields.String(
        validate=validate.OneOf(BOT_STATUSES),
        metadata={"description": "default: every bot not deleted"},
    )
    kind = fields.String(
        validate=validate.OneOf(BOT_KINDS),
        metadata={"description": "default: bots and house bots (people's seats on request)"},
    )
    game = fields.String(validate=validate.OneOf(sorted(GAMES)))
    mine = fields.Boolean(
        metadata={"description": "true: only the bots of the account signed in (or its token)"}
    )
    q = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "the name contains this (without case)"},
    )
    owner = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "the owner is this (without case)"},
    )
    event_id = query_id_field(
        metadata={"description": "the bots of this event (default: every one you may see)"}
    )
    reference = fields.Boolean(
        metadata={
            "description": "true: only the reference bots offered to every event (house "
            "bots and bots marked reference); false: none of them"
        }
    )


class BotRatingSchema(RatingViewSchema):
    game = fields.String()


ENDPOINT_SHOWN = (
    "present only for those who manage the bot (its owner token, its account, an organiser "
    "of its event, the admin); absent for anyone else"
)


class BotValidationSchema(Schema):
    """The verdict of a bot's latest validation match (``docs/hosted.md``, Validation)."""

    status = fields.String(
        metadata={
            "description": "validating (its match is still to be played), passed (no "
            "fault) or failed"
        }
    )
    reason = fields.String(
        allow_none=True, metadata={"description": "why it failed: its faults, in words"}
    )
    match_id = fields.Integer(metadata={"description": "the validation match"})


class BotSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    endpoint = fields.String(
        allow_none=True,
        metadata={"description": ENDPOINT_SHOWN + "; null for a bot that connects out"},
    )
    owner = fields.String()
    description = fields.String()
    games = fields.List(fields.String())
    status = fields.String(metadata={"description": "one of " + ", ".join(BOT_STATUSES)})
    paused_reason = fields.String(
        allow_none=True,
        metadata={"description": "why the arena paused the bot (status paused)"},
    )
    forfeit_streak = fields.Integer(metadata={"description": "matches forfeited in a row"})
    info = fields.Dict(metadata={"description": "the bot's answer to GET /"})
    connect = fields.Boolean(
        metadata={"description": "the bot connects out to the arena (it has no endpoint)"}
    )
    hosted = fields.Boolean(metadata={"description": "the arena runs the bot's uploaded code"})
    code_version = fields.String(
        allow_none=True,
        metadata={"description": "a hosted bot's version that plays (null: none passed yet)"},
    )
    kind = fields.String(
        metadata={
            "description": "bot (a contestant's program), house (one of the arena's own "
            "policies) or person (a seat played in a browser)"
        }
    )
    playable = fields.Boolean(
        metadata={"description": "its owner lets people pick it as an opponent at /play"}
    )
    accepts_challenges = fields.Boolean(
        metadata={"description": "its owner lets other bots challenge it to scrimmages"}
    )
    account_id = fields.Integer(
        allow_none=True, metadata={"description": "the account it belongs to"}
    )
    event_id = fields.Integer(
        allow_none=True, metadata={"description": "its event (null: the open arena)"}
    )
    reference = fields.Boolean(
        metadata={
            "description": "a reference bot (a house bot, or marked by an organiser): "
            "offered in every event's tournaments and qualifiers, never graded"
        }
    )
    paused_by = fields.String(
        allow_none=True,
        metadata={"description": "arena (forfeits in a row) or organiser, when paused"},
    )
    validation = fields.Nested(
        BotValidationSchema,
        allow_none=True,
        metadata={
            "description": "its latest validation match, played when it is new or has a "
            "new version (null: none yet, as for a bot that never connected)"
        },
    )
    created_at = UtcDateTime()
    updated_at = UtcDateTime()


class BotConnectionSchema(Schema):
    """Where a bot that connects out stands."""

    connected = fields.Boolean()
    since = UtcDateTime(allow_none=True, metadata={"description": "its session opened"})
    last_seen = UtcDateTime(allow_none=True)
    draining = fields.Boolean(metadata={"description": "stopping: no new match is started"})
    sdk = fields.String(allow_none=True)
    version = fields.String(allow_none=True)
    capacity = fields.Integer(allow_none=True, metadata={"description": "requests at once"})
    sessions_replaced = fields.Integer(
        metadata={"description": "sessions a newer one replaced (another copy of the bot)"}
    )
    replaced_at = UtcDateTime(allow_none=True)


class BotFaultsSchema(Schema):
    match_id = fields.Integer()
    game = fields.String()
    finished_at = UtcDateTime()
    forfeited = fields.Boolean()
    count = fields.Integer(metadata={"description": "answers that were faults"})
    kinds = fields.Dict(keys=fields.String(), values=fields.Integer())
    first = fields.Dict(
        metadata={
            "description": "the first fault: step, kind, detail, status, received, "
            "excerpt, error (as far as known)"
        }
    )


class BotDetailSchema(BotSchema):
    connection = fields.Nested(
        BotConnectionSchema,
        allow_none=True,
        metadata={"description": "a bot that connects out: its session (null: a webhook bot)"},
    )
    ratings = fields.List(fields.Nested(BotRatingSchema))
    recent_faults = fields.List(
        fields.Nested(BotFaultsSchema),
        metadata={"description": "its most recent finished matches that had faults"},
    )


class BotRegisteredSchema(BotSchema):
    owner_token = fields.String(
        metadata={"description": "shown once: send it as Authorization: Bearer to manage the bot"}
    )
    signing_secret = fields.String(
        metadata={"description": "shown once: the key of the X-Arena-Signature HMAC"}
    )
