"""Schemas of the tournaments' routes: formats, pass rules, options, standings, grades
and the versions a bot played."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from arena.api.schemas.fields import (
    MAX_MATCHES_PER_BOT,
    MAX_OPTIONS,
    MAX_SEATS,
    MAX_TOURNAMENT_BOTS,
    PageArgsSchema,
    StrictInteger,
    UtcDateTime,
    id_field,
    query_id_field,
)
from arena.competition import formats, grading
from arena.competition.formats import DEALS
from arena.games import GAMES
from arena.models import (
    LIVE_VIEWS,
    TOURNAMENT_STATUSES,
)
from arena.services import (
    MAX_ID,
    MAX_SEED,
)

MAX_TIME_BANK_MS = 600_000  # ten minutes per bot per match


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
    time_bank_ms = StrictInteger(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, max=MAX_TIME_BANK_MS),
        metadata={
            "description": "each bot's time bank per match, in milliseconds: a decision "
            "answered past its deadline draws the overage from it instead of being a "
            "fault (a timeout only once it is spent); every /act tells the bot what is "
            f"left. 0 to {MAX_TIME_BANK_MS}; default: none"
        },
    )
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
    time_bank_ms = fields.Integer(
        allow_none=True,
        metadata={"description": "each bot's time bank per match, in ms (null: none)"},
    )
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
