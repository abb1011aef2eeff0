"""Marshmallow schemas of the JSON API: what it accepts (unknown fields rejected, types
strict, sizes bounded) and what it answers (an allow-list: tokens and secrets are in no
answer schema but the one of registration)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from arena.competition import formats, grading
from arena.competition.formats import DEALS
from arena.games import GAMES
from arena.models import (
    ACCOUNT_ROLES,
    BOT_KINDS,
    BOT_SET_STATUSES,
    BOT_STATUSES,
    EVENT_VISIBILITIES,
    LIVE_VIEWS,
    MATCH_STATUSES,
    TOURNAMENT_STATUSES,
    aware,
)
from arena.services import (
    MAX_ID,
    MAX_SEED,
    ROTATABLE,
    SECRET_MAX_LENGTH,
    SECRET_MIN_LENGTH,
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


# -- bots -----------------------------------------------------------------------------------
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
    event_id = id_field(metadata={"description": "the event it plays in (default: the open arena)"})
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


class BotRatingSchema(Schema):
    game = fields.String()
    elo = fields.Float()
    matches = fields.Integer()


ENDPOINT_SHOWN = (
    "present only for those who manage the bot (its owner token, its account, an organiser "
    "of its event, the admin); absent for anyone else"
)


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
    account_id = fields.Integer(
        allow_none=True, metadata={"description": "the account it belongs to"}
    )
    event_id = fields.Integer(
        allow_none=True, metadata={"description": "its event (null: the open arena)"}
    )
    paused_by = fields.String(
        allow_none=True,
        metadata={"description": "arena (forfeits in a row) or organiser, when paused"},
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


# -- tournaments ----------------------------------------------------------------------------
def _format_field(name: str) -> str:
    """A format parameter's description from the registry: which formats take it, and
    what it means in each."""
    uses = [(fmt, f) for fmt in formats.FORMATS.values() for f in fmt.fields if f.name == name]
    required = [fmt.name for fmt, f in uses if f.required]
    optional = [fmt.name for fmt, f in uses if not f.required]
    taken = " and ".join(required + optional)
    words = "; ".join(f"{fmt.name}: {f.description}" for fmt, f in uses)
    need = " (required there)" if required else ""
    return f"{taken} only{need}. {words}"


class FormatFieldSchema(Schema):
    name = fields.String(metadata={"description": "the key in a tournament's JSON"})
    label = fields.String(metadata={"description": "its words on a form, for this format"})
    description = fields.String()
    required = fields.Boolean(metadata={"description": "false: the format may go without"})


class FormatSchema(Schema):
    name = fields.String(metadata={"description": "a tournament's format"})
    title = fields.String()
    summary = fields.String(metadata={"description": "what it schedules"})
    hint = fields.String(metadata={"description": "when to choose it"})
    fields_ = fields.List(
        fields.Nested(FormatFieldSchema),
        data_key="fields",
        attribute="fields",
        metadata={
            "description": "its parameters besides bot_ids, seats_per_match and deal; a "
            "tournament may give no other format's"
        },
    )
    default = fields.Boolean(metadata={"description": "the format of a tournament not given one"})


class SprtSchema(Schema):
    """The gauntlet's stop rule: a sequential probability ratio test of each challenger's
    score against the field, between two Elo differences, at error rates alpha and beta."""

    elo0 = fields.Float(
        load_default=0.0,
        validate=validate.Range(min=-1000, max=1000),
        metadata={"description": "H0: the challenger is no better than this (Elo)"},
    )
    elo1 = fields.Float(
        load_default=10.0,
        validate=validate.Range(min=-1000, max=1000),
        metadata={"description": "H1: the challenger is better by at least this (Elo)"},
    )
    alpha = fields.Float(
        load_default=0.05,
        validate=validate.Range(min=0.001, max=0.5),
        metadata={"description": "chance of passing a challenger at elo0"},
    )
    beta = fields.Float(
        load_default=0.05,
        validate=validate.Range(min=0.001, max=0.5),
        metadata={"description": "chance of failing a challenger at elo1"},
    )

    @validates_schema
    def _ordered(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data["elo1"] <= data["elo0"]:
            raise ValidationError("elo1 must be greater than elo0.", "elo1")


class PassRuleSchema(Schema):
    """A qualifier's pass rule (``arena.competition.grading``): ``score`` (mean score
    against the reference bots at least ``min_score``), ``consecutive`` (at least
    ``wins`` wins in some ``of`` consecutive matches) or ``stop_rule`` (the stop rule,
    ``sprt``, accepts H1)."""

    kind = fields.String(required=True, validate=validate.OneOf(grading.RULE_KINDS))
    min_score = fields.Float(
        validate=validate.Range(min=0, max=1),
        metadata={"description": "score: the mean score to reach, 0 to 1"},
    )
    wins = StrictInteger(
        validate=validate.Range(min=1, max=MAX_MATCHES_PER_BOT),
        metadata={"description": "consecutive: the wins needed"},
    )
    of = StrictInteger(
        validate=validate.Range(min=1, max=MAX_MATCHES_PER_BOT),
        metadata={"description": "consecutive: in this many consecutive matches"},
    )

    @validates_schema
    def _fields_of_kind(self, data: dict[str, Any], **kwargs: Any) -> None:
        takes = {"score": ("min_score",), "consecutive": ("wins", "of"), "stop_rule": ()}
        own = takes.get(data.get("kind"), ())
        errors = {
            name: [f"Required by the {data['kind']} rule."] for name in own if name not in data
        }
        for name in ("min_score", "wins", "of"):
            if name in data and name not in own:
                errors[name] = [f"Not a field of the {data.get('kind')} rule."]
        if errors:
            raise ValidationError(errors)
        if "wins" in own and data["wins"] > data["of"]:
            raise ValidationError("wins cannot exceed of.", "wins")


class GameRulesSchema(Schema):
    """The rules a match is played with, as a request gives them: a preset and options
    over it (``requested_options`` merges them)."""

    preset = fields.String(validate=validate.Length(min=1, max=64))
    options = fields.Dict(
        keys=fields.String(validate=validate.Length(min=1, max=64)),
        values=fields.Raw(allow_none=True),
        validate=validate.Length(max=MAX_OPTIONS),
        load_default=None,
    )


def requested_options(data: dict[str, Any]) -> dict[str, Any]:
    """The options a request loaded by a ``GameRulesSchema`` asks for, its preset among
    them; both keys are taken out of ``data``."""
    options = dict(data.pop("options", None) or {})
    preset = data.pop("preset", None)
    if preset is not None:
        options["preset"] = preset
    return options


class TournamentCreateSchema(GameRulesSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    event_id = id_field(
        load_default=None,
        metadata={
            "description": "the event it belongs to (its organisers start it; every "
            "entrant plays in it); default: the open arena"
        },
    )
    game = fields.String(required=True, validate=validate.Length(min=1, max=32))
    format = fields.String(
        load_default=formats.DEFAULT_FORMAT,
        validate=validate.OneOf(tuple(formats.FORMATS)),
        metadata={
            "description": "; ".join(f"{f.name}: {f.summary}" for f in formats.FORMATS.values())
            + " (GET /api/formats lists each format's fields)"
        },
    )
    deal = fields.String(
        load_default="independent",
        validate=validate.OneOf(DEALS),
        metadata={
            "description": "duplicate: each deal is played once per rotation of its table, "
            "so every bot holds every hand"
        },
    )
    bot_ids = fields.List(
        StrictInteger(validate=validate.Range(min=1, max=MAX_ID)),
        required=True,
        validate=validate.Length(max=MAX_TOURNAMENT_BOTS),
        metadata={
            "description": "every entrant bot (a gauntlet's challengers and its field); at "
            "least two entrants with the people"
        },
    )
    people = fields.List(
        fields.String(validate=validate.Length(min=1, max=40)),
        load_default=list,
        validate=validate.Length(max=MAX_SEATS),
        metadata={
            "description": "people who play in the browser: each gets a seat of their own "
            "and one link (seat_links in the answer, shown once); with event_id the seats "
            "are the event's"
        },
    )
    person_deadline_s = StrictInteger(
        load_default=60,
        validate=validate.Range(min=2, max=600),
        metadata={"description": "each person's time per decision, in seconds"},
    )
    rated = fields.Boolean(
        load_default=None,
        metadata={"description": "rate the matches (default: yes, unless people play)"},
    )
    seats_per_match = StrictInteger(required=True, validate=validate.Range(min=2, max=MAX_SEATS))
    games_per_pairing = StrictInteger(
        validate=validate.Range(min=1, max=1000),
        metadata={"description": _format_field("games_per_pairing")},
    )
    matches_per_bot = StrictInteger(
        validate=validate.Range(min=1, max=MAX_MATCHES_PER_BOT),
        metadata={"description": _format_field("matches_per_bot")},
    )
    challenger_ids = fields.List(
        StrictInteger(validate=validate.Range(min=1, max=MAX_ID)),
        validate=validate.Length(min=1, max=MAX_TOURNAMENT_BOTS),
        metadata={"description": _format_field("challenger_ids")},
    )
    sprt = fields.Nested(
        SprtSchema,
        allow_none=True,
        metadata={"description": _format_field("sprt")},
    )
    pass_rule = fields.Nested(
        PassRuleSchema,
        allow_none=True,
        metadata={"description": _format_field("pass_rule")},
    )
    seed = StrictInteger(load_default=None, validate=validate.Range(min=0, max=MAX_SEED))
    live_view = fields.String(
        load_default="public",
        validate=validate.OneOf(LIVE_VIEWS),
        metadata={
            "description": "what a match's page shows while it is played: public (the "
            "public table only, the default) or everyone (every perspective, hidden "
            "cards included: for a class watching, not a contest)"
        },
    )

    @validates_schema
    def _entrants(self, data: dict[str, Any], **kwargs: Any) -> None:
        if len(data.get("bot_ids") or ()) + len(data.get("people") or ()) < 2:
            raise ValidationError("Give at least 2 entrants (bots and people).", "bot_ids")

    @validates_schema
    def _one_preset(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("preset") is not None and "preset" in (data.get("options") or {}):
            raise ValidationError("Give the preset either as 'preset' or in 'options'.")

    @validates_schema
    def _format_fields(self, data: dict[str, Any], **kwargs: Any) -> None:
        """The chosen format's required fields are given, and no other format's field."""
        fmt = formats.FORMATS[data.get("format", formats.DEFAULT_FORMAT)]
        own = {f.name for f in fmt.fields}
        errors = {
            f.name: [f"Required by the {fmt.name} format."]
            for f in fmt.fields
            if f.required and data.get(f.name) is None
        }
        for name in sorted(set(formats.FORMAT_FIELDS) - own):
            if data.get(name) is not None:
                errors[name] = [f"Not a field of the {fmt.name} format."]
        if errors:
            raise ValidationError(errors)


class TournamentListArgsSchema(PageArgsSchema):
    game = fields.String(validate=validate.OneOf(sorted(GAMES)))
    status = fields.String(validate=validate.OneOf(TOURNAMENT_STATUSES))
    event_id = query_id_field(metadata={"description": "the tournaments of this event"})


class WarningSchema(Schema):
    code = fields.String(
        metadata={"description": "no_worker: matches wait and no worker process is alive"}
    )
    message = fields.String(metadata={"description": "what is wrong and what to do, in words"})


class ProgressSchema(Schema):
    total = fields.Integer()
    queued = fields.Integer()
    running = fields.Integer()
    finished = fields.Integer()
    failed = fields.Integer()
    cancelled = fields.Integer()


class BuildSchema(Schema):
    written = fields.Integer(metadata={"description": "matches written so far"})
    total = fields.Integer(metadata={"description": "matches its schedule has"})


class StandingSchema(Schema):
    bot_id = fields.Integer()
    name = fields.String()
    matches = fields.Integer()
    points = fields.Float(
        metadata={"description": "1 per opponent ranked below, 1/2 per opponent ranked equal"}
    )
    points_per_match = fields.Float(allow_none=True)
    wins = fields.Integer()
    mean_rank = fields.Float(allow_none=True)
    challenger = fields.Boolean(metadata={"description": "a gauntlet's challenger"})
    faults = fields.Integer(
        metadata={
            "description": "answers that were faults over its finished matches (not the "
            "defaults played once it struck out)"
        }
    )
    forfeits = fields.Integer(
        metadata={"description": "matches it forfeited: not one usable answer (ranked last)"}
    )
    struck_out = fields.Integer(
        metadata={"description": "matches in which it reached max_strikes (ranked last)"}
    )
    deals = fields.Integer(
        metadata={"description": "duplicate: deals whose rotations all finished"}
    )
    par_per_deal = fields.Float(
        allow_none=True,
        metadata={"description": "duplicate: points above an equal bot's, per complete deal"},
    )


class EntrySchema(Schema):
    id = fields.Integer()
    name = fields.String()
    faults = fields.Integer(metadata={"description": "answers that were faults"})
    forfeits = fields.Integer(metadata={"description": "matches forfeited"})
    struck_out = fields.Integer(metadata={"description": "matches struck out"})


class CrosstableSchema(Schema):
    bots = fields.List(fields.Nested(EntrySchema))
    cells = fields.Dict(
        keys=fields.String(),
        # a cell is written as it is (a schema per cell is most of the answer's time
        # for a few thousand cells)
        values=fields.Dict(keys=fields.String(), values=fields.Raw()),
        metadata={
            "description": "cells[a][b]: a's pairwise results against b, "
            '{"wins", "draws", "losses"}; no cell where a and b have not met'
        },
    )


class BalanceSchema(Schema):
    matches_per_bot = fields.List(fields.Integer(), metadata={"description": "[min, max]"})
    seat_spread = fields.Integer(
        metadata={"description": "the most a bot's matches in one seat differ from another seat"}
    )
    pair_meetings = fields.List(
        fields.Integer(), metadata={"description": "[min, max] meetings of two bots"}
    )


class ChallengerStatusSchema(Schema):
    bot_id = fields.Integer()
    name = fields.String()
    observations = fields.Integer(
        metadata={
            "description": "matches (duplicate: complete deals) counted so far, in schedule order"
        }
    )
    waiting = fields.Integer(
        metadata={
            "description": "finished matches not counted yet: each waits for the "
            "matches scheduled before it to end (0 once decided)"
        }
    )
    score = fields.Float(allow_none=True, metadata={"description": "mean score vs the field"})
    llr = fields.Float(metadata={"description": "log-likelihood ratio of H1 against H0"})
    decision = fields.String(
        allow_none=True, metadata={"description": "H1 (passed), H0 (failed) or null (open)"}
    )


class SprtStatusSchema(SprtSchema):
    lower = fields.Float(metadata={"description": "H0 is accepted at or below this LLR"})
    upper = fields.Float(metadata={"description": "H1 is accepted at or above this LLR"})
    challengers = fields.List(fields.Nested(ChallengerStatusSchema))


class TournamentSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    event_id = fields.Integer(allow_none=True, metadata={"description": "null: the open arena"})
    game = fields.String()
    options = fields.Dict(metadata={"description": "the complete resolved options"})
    format = fields.String()
    deal = fields.String()
    seats_per_match = fields.Integer()
    games_per_pairing = fields.Integer(allow_none=True)
    matches_per_bot = fields.Integer(allow_none=True)
    sprt = fields.Nested(SprtSchema, allow_none=True)
    pass_rule = fields.Nested(
        PassRuleSchema, allow_none=True, metadata={"description": "a qualifier's pass rule"}
    )
    cloned_from = fields.Integer(
        allow_none=True, metadata={"description": "a final run: the tournament it was cloned from"}
    )
    balance = fields.Nested(BalanceSchema, allow_none=True)
    seed = fields.Integer(
        allow_none=True,
        metadata={
            "description": "null while the tournament runs or any of its matches is queued "
            "or running (after a cancel too): its matches' seeds, and so their deals, "
            "follow from it",
        },
    )
    status = fields.String()
    live_view = fields.String()
    bot_ids = fields.List(fields.Integer())
    challenger_ids = fields.List(fields.Integer())
    progress = fields.Nested(ProgressSchema)
    build = fields.Nested(
        BuildSchema,
        allow_none=True,
        metadata={
            "description": "while the status is 'building' (a big tournament: a worker "
            "writes its matches, which are queued as they are written): how far it is; "
            "null once built"
        },
    )
    warnings = fields.List(
        fields.Nested(WarningSchema),
        metadata={"description": "what keeps its matches from being played; empty: nothing"},
    )
    created_at = UtcDateTime()
    finished_at = UtcDateTime(allow_none=True)


class SeatLinkSchema(Schema):
    bot_id = fields.Integer()
    name = fields.String()
    url = fields.String(metadata={"description": "the seat's page; its key is the fragment"})


class TournamentDetailSchema(TournamentSchema):
    seat_links = fields.List(
        fields.Nested(SeatLinkSchema),
        allow_none=True,
        metadata={"description": "only in the answer that created it: each person's link"},
    )
    offline_bot_ids = fields.List(
        fields.Integer(),
        metadata={
            "description": "entrants that connect out to the arena and are not connected "
            "now: their matches are played, and each of their requests is a "
            "'disconnected' fault, until they connect"
        },
    )
    standings = fields.List(fields.Nested(StandingSchema))
    crosstable = fields.Nested(CrosstableSchema, allow_none=True)
    sprt_status = fields.Nested(SprtStatusSchema, allow_none=True)


class GradeRowSchema(Schema):
    tournament_id = fields.Integer()
    bot_id = fields.Integer()
    bot = fields.String()
    account = fields.String(allow_none=True, metadata={"description": "its account's name"})
    grade = fields.String(metadata={"description": "pass, fail or pending"})
    rule = fields.String(metadata={"description": "the pass rule in words"})
    matches = fields.Integer(metadata={"description": "matches played"})
    remaining = fields.Integer(metadata={"description": "matches still to play"})
    wins = fields.Integer(metadata={"description": "first place alone; a forfeit is a loss"})
    score = fields.Float(
        allow_none=True,
        metadata={"description": "mean score: points over opponents per match, 0 to 1"},
    )
    best_window = fields.String(
        allow_none=True,
        metadata={"description": "consecutive rule: wins/matches of the best run"},
    )
    reason = fields.String(metadata={"description": "the grade's reason in words"})
    evidence = fields.String(
        metadata={
            "description": "the deciding match ids, space-separated (the best run for the "
            "consecutive rule, else every match played)"
        }
    )


class VersionRowSchema(Schema):
    bot_id = fields.Integer()
    bot = fields.String()
    version = fields.String(allow_none=True, metadata={"description": "null: none declared"})
    matches = fields.Integer()
    points = fields.Float(
        metadata={"description": "1 per opponent ranked below, 1/2 per opponent ranked equal"}
    )
    points_per_match = fields.Float()
    wins = fields.Integer()
    mean_rank = fields.Float()
    mean_score = fields.Float(metadata={"description": "points over opponents per match"})
    forfeits = fields.Integer()
    first_played = UtcDateTime(allow_none=True)
    last_played = UtcDateTime(allow_none=True)


class BotVersionSchema(Schema):
    version = fields.String(
        allow_none=True,
        metadata={"description": "as declared when the match started (null: none declared)"},
    )
    matches = fields.Integer(metadata={"description": "finished matches played with it"})
    wins = fields.Integer(metadata={"description": "first place alone"})
    mean_score = fields.Float(
        allow_none=True, metadata={"description": "points over opponents per match, 0 to 1"}
    )
    forfeits = fields.Integer()
    first_played = UtcDateTime(allow_none=True)
    last_played = UtcDateTime(allow_none=True)


class TournamentFinalSchema(Schema):
    """How many more matches a final run plays: one of the three."""

    matches_factor = StrictInteger(
        validate=validate.Range(min=2, max=100),
        metadata={"description": "the original's games_per_pairing or matches_per_bot times this"},
    )
    games_per_pairing = StrictInteger(
        validate=validate.Range(min=1, max=1000),
        metadata={"description": "round robin: the final's games per pairing"},
    )
    matches_per_bot = StrictInteger(
        validate=validate.Range(min=1, max=MAX_MATCHES_PER_BOT),
        metadata={"description": "the other formats: the final's matches per bot"},
    )

    @validates_schema
    def _one(self, data: dict[str, Any], **kwargs: Any) -> None:
        given = [k for k in ("matches_factor", "games_per_pairing", "matches_per_bot") if k in data]
        if len(given) != 1:
            raise ValidationError(
                "Give one of matches_factor, games_per_pairing or matches_per_bot."
            )


class StandingsArgsSchema(Schema):
    by = fields.String(
        validate=validate.OneOf(["version"]),
        metadata={"description": "version: one row per bot and version it declared"},
    )


class TournamentDetailArgsSchema(Schema):
    crosstable = fields.Boolean(
        load_default=True,
        metadata={
            "description": "false leaves the crosstable out (null): it grows with "
            "the square of the number of bots"
        },
    )


# -- matches --------------------------------------------------------------------------------
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


# -- ratings, ladders and games -------------------------------------------------------------
class FittedSchema(Schema):
    rating = fields.Float()
    low = fields.Float()
    high = fields.Float()
    matches = fields.Integer()


class LeaderboardRowSchema(Schema):
    bot_id = fields.Integer()
    name = fields.String()
    elo = fields.Float()
    matches = fields.Integer()
    fitted = fields.Nested(FittedSchema, allow_none=True)


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


# -- accounts -------------------------------------------------------------------------------
def password_field(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.Length(min=1, max=200),
        load_only=True,
        metadata={"description": "10 to 200 characters, not the account's name"},
        **kwargs,
    )


class AccountCreateSchema(Schema):
    name = name_field(required=True)
    password = password_field(required=True)
    join_code = fields.String(
        validate=validate.Length(min=1, max=32),
        metadata={"description": "an event's join code: the account joins it"},
    )
    role = fields.String(
        load_default="contestant",
        validate=validate.OneOf(ACCOUNT_ROLES),
        metadata={"description": "organiser and admin: only the admin makes them"},
    )


class LoginSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    password = fields.String(required=True, validate=validate.Length(min=1, max=200))
    label = fields.String(
        load_default="",
        validate=validate.Length(max=64),
        metadata={"description": "what the token is for (shown in your list of tokens)"},
    )


class AccountEventSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    role = fields.String(metadata={"description": "organiser or contestant"})


class ApiTokenSchema(Schema):
    id = fields.Integer()
    label = fields.String()
    created_at = UtcDateTime()
    last_used_at = UtcDateTime(allow_none=True)


class AccountSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    role = fields.String(metadata={"description": "one of " + ", ".join(ACCOUNT_ROLES)})
    created_at = UtcDateTime()
    events = fields.List(fields.Nested(AccountEventSchema))


class AccountDetailSchema(AccountSchema):
    tokens = fields.List(fields.Nested(ApiTokenSchema))


class AccountCreatedSchema(AccountSchema):
    token = fields.String(
        metadata={"description": "shown once: an API token, for Authorization: Bearer"}
    )


class TokenCreatedSchema(Schema):
    id = fields.Integer()
    token = fields.String(metadata={"description": "shown once: Authorization: Bearer <token>"})
    account = fields.Nested(AccountSchema)


class ResetLinkSchema(Schema):
    account_id = fields.Integer()
    reset_path = fields.String(
        metadata={"description": "a one-time link to set a new password: hand it over"}
    )
    expires_at = UtcDateTime()


class SignedOutSchema(Schema):
    account_id = fields.Integer()
    sessions_ended = fields.Integer(
        metadata={"description": "the account's login sessions of the pages that ended"}
    )
    tokens_revoked = fields.Integer(metadata={"description": "its API tokens revoked"})


class PasswordResetSchema(Schema):
    secret = fields.String(required=True, validate=validate.Length(min=1, max=200))
    password = password_field(required=True)


class AccountListArgsSchema(PageArgsSchema):
    role = fields.String(validate=validate.OneOf(ACCOUNT_ROLES))


# -- events ---------------------------------------------------------------------------------
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


# -- exports: flat tables, the JSON answer and its CSV alike (arena.api.exports) -------------
class LeaderboardArgsSchema(Schema):
    game = fields.String(
        validate=validate.OneOf(sorted(GAMES)),
        metadata={"description": "one of the event's games (default: every one)"},
    )


class LeaderboardExportRowSchema(Schema):
    game = fields.String()
    rank = fields.Integer(metadata={"description": "1 for the best Elo of the game"})
    bot_id = fields.Integer()
    bot = fields.String()
    owner = fields.String()
    elo = fields.Float()
    matches = fields.Integer(metadata={"description": "rated matches played"})
    fitted_rating = fields.Float(allow_none=True, metadata={"description": "null: not fitted"})
    fitted_low = fields.Float(allow_none=True, metadata={"description": "its 95% interval"})
    fitted_high = fields.Float(allow_none=True)


class StandingRowSchema(Schema):
    rank = fields.Integer(metadata={"description": "1 for the best"})
    bot_id = fields.Integer()
    bot = fields.String()
    matches = fields.Integer()
    points = fields.Float(
        metadata={"description": "1 per opponent ranked below, 1/2 per opponent ranked equal"}
    )
    points_per_match = fields.Float(allow_none=True)
    wins = fields.Integer()
    mean_rank = fields.Float(allow_none=True)
    challenger = fields.Boolean(metadata={"description": "a gauntlet's challenger"})
    faults = fields.Integer()
    struck_out = fields.Integer()
    forfeits = fields.Integer()
    deals = fields.Integer(
        allow_none=True, metadata={"description": "duplicate deals only: complete deals"}
    )
    par_per_deal = fields.Float(
        allow_none=True,
        metadata={"description": "duplicate deals only: points above par per complete deal"},
    )


class CrosstableRowSchema(Schema):
    bot_id = fields.Integer()
    bot = fields.String()
    opponent_id = fields.Integer()
    opponent = fields.String()
    wins = fields.Integer(metadata={"description": "matches the bot ranked above the opponent"})
    draws = fields.Integer()
    losses = fields.Integer()
