"""Tournaments: building one (validate the request, schedule it with its format from
``arena.competition.formats``, write it with its matches queued), reading and cancelling it.

A tournament of more than ``BUILD_INLINE`` matches is not built in the request that asks
for it: the request validates it and writes its row and entries with the status
"building"; a worker then schedules it and writes its matches ``BUILD_BATCH`` at a time
(``build_tournament``, a task of ``arena.worker.building``), each batch its own short
transaction, so no request waits for it and no writer waits long behind it."""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from arena.competition import formats, grading
from arena.config import Config
from arena.db import Database
from arena.games import get_game
from arena.games.base import Game, OptionsError
from arena.models import (
    MATCH_OPEN,
    Bot,
    Match,
    MatchSeat,
    Tournament,
    TournamentEntry,
    utcnow,
)
from arena.services.errors import MAX_ID, MAX_SEED, ServiceError
from arena.worker import lifecycle

log = logging.getLogger(__name__)

# A tournament of more matches than this is built by a worker (202 Accepted), a smaller
# one in the request (201): about half a second of writing on SQLite, less on PostgreSQL.
BUILD_INLINE = 2_000
# Matches a worker writes per transaction: SQLite's write lock is held for a tenth of a
# second or so per batch, and every other writer (a request, a worker saving a result or
# renewing its leases) gets its turn between two batches.
BUILD_BATCH = 500
# On SQLite, the pause after each batch: a connection waiting for the lock polls for it
# (at most every 100 ms), so a writer that takes it again at once starves the others.
SQLITE_PAUSE = 0.1


def resolve_options(game: Game, options: dict[str, Any] | None) -> dict[str, Any]:
    """The complete options as stored (a ``preset`` key is expanded)."""
    try:
        return game.options_json(game.resolve_options(options or {}))
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None


def game_engine(game_id: str) -> Game:
    """The game's engine, else a 400."""
    try:
        return get_game(game_id)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None


def check_entrants(
    session: Session, engine: Game, bot_ids: Sequence[int], event_id: int | None = None
) -> list[int]:
    """The bots exist, are active, play the game and play in ``event_id`` (None: the open
    arena: events never mix), or, in an event's tournament, are reference bots (house
    bots, and bots marked ``reference``: offered to every event); their ids, sorted."""
    ids = [i for i in bot_ids if 0 < i <= MAX_ID]
    rows = {}
    codeless = []  # hosted, and no version of their code passed its validation yet
    for bot_id, status, played, event, hosted, version, kind, reference in session.execute(
        select(
            Bot.id,
            Bot.status,
            Bot.games,
            Bot.event_id,
            Bot.hosted,
            Bot.code_version,
            Bot.kind,
            Bot.reference,
        ).where(Bot.id.in_(ids))
    ):
        offered = event_id is not None and (kind == "house" or bool(reference))
        rows[bot_id] = (status, played, event_id if offered else event)
        if hosted and not version:
            codeless.append(bot_id)
    missing = sorted(set(bot_ids) - set(rows))
    if missing:
        raise ServiceError(400, f"no bot(s) {', '.join(map(str, missing))}")
    if codeless:
        raise ServiceError(
            400,
            f"bot(s) {', '.join(map(str, sorted(codeless)))} are hosted and no version of "
            "their code has passed its validation yet",
        )
    inactive = sorted(i for i, (status, _, _) in rows.items() if status != "active")
    if inactive:
        raise ServiceError(400, f"bot(s) {', '.join(map(str, inactive))} are not active")
    other = sorted(i for i, (_, played, _) in rows.items() if engine.id not in played)
    if other:
        raise ServiceError(400, f"bot(s) {', '.join(map(str, other))} do not play {engine.id}")
    elsewhere = sorted(i for i, (_, _, event) in rows.items() if event != event_id)
    if elsewhere:
        where = f"event {event_id}" if event_id is not None else "the open arena"
        raise ServiceError(400, f"bot(s) {', '.join(map(str, elsewhere))} do not play in {where}")
    return sorted(rows)


@dataclasses.dataclass(frozen=True)
class TournamentPlan:
    """A tournament request that passed every check but the entrants' (which needs the
    database): its game, complete options, format and what the format is asked for."""

    engine: Game
    options: dict[str, Any]
    format: formats.Format
    entry: formats.Entry
    matches: int = 0  # how many its schedule has (``Format.count``)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A plan's matches, the seed they were drawn from, and what they achieved."""

    tables: list[formats.Table]
    seed: int
    balance: formats.Balance


def validate_tournament(
    config: Config,
    *,
    game: str,
    options: dict[str, Any] | None,
    bot_ids: Sequence[int],
    seats_per_match: int,
    format: str = formats.DEFAULT_FORMAT,
    deal: str = "independent",
    games_per_pairing: int | None = None,
    matches_per_bot: int | None = None,
    challenger_ids: Sequence[int] = (),
    sprt: dict[str, float] | None = None,
    pass_rule: dict[str, Any] | None = None,
) -> TournamentPlan:
    """Everything a request can get wrong that needs no database, each a 400: the format,
    the game and its options, the seats, the entrants as the format wants them, the stop
    rule, a qualifier's pass rule, and the size (counted without building:
    ``config.max_tournament_matches``)."""
    try:
        fmt = formats.get_format(format)
    except formats.FormatError:
        raise ServiceError(400, f"format must be one of {', '.join(formats.FORMATS)}") from None
    engine = game_engine(game)
    resolved = resolve_options(engine, options)
    try:
        engine.check_players(seats_per_match)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None
    if len(set(bot_ids)) != len(bot_ids):
        raise ServiceError(400, "bot_ids lists a bot more than once")
    try:
        rule = None if pass_rule is None else grading.PassRule.from_json(pass_rule)
    except grading.GradingError as exc:
        raise ServiceError(400, f"pass_rule: {exc}") from None
    entry = formats.Entry(
        bot_ids=tuple(bot_ids),
        seats_per_match=seats_per_match,
        deal=deal,
        games_per_pairing=games_per_pairing,
        matches_per_bot=matches_per_bot,
        challenger_ids=tuple(sorted(set(challenger_ids))),
        pass_rule=rule,
    )
    try:
        # who plays, before what the stop rule says: a stand-in rule says one is given
        fmt.check(dataclasses.replace(entry, sprt=None if sprt is None else formats.Sprt()))
    except formats.FormatError as exc:
        raise ServiceError(400, str(exc)) from None
    if sprt is not None:
        try:
            rule = formats.Sprt(**sprt)
            rule.bounds()
        except (formats.FormatError, TypeError) as exc:
            raise ServiceError(400, f"sprt: {exc}") from None
        entry = dataclasses.replace(entry, sprt=rule)
    try:
        total = fmt.count(entry)
    except formats.FormatError as exc:
        raise ServiceError(400, str(exc)) from None
    limit = config.max_tournament_matches
    if total > limit:
        raise ServiceError(
            400,
            f"this tournament would have {total} matches; the limit is {limit} "
            "(fewer bots, seats or matches; ARENA_MAX_TOURNAMENT_MATCHES sets it)",
        )
    return TournamentPlan(engine, resolved, fmt, entry, total)


def schedule_tournament(plan: TournamentPlan, seed: int | None = None) -> Schedule:
    """The plan's matches from its format (a random seed when none is given)."""
    if seed is None:
        seed = secrets.randbelow(MAX_SEED + 1)
    entry = plan.entry
    try:
        tables = plan.format.build(entry, seed)
    except formats.FormatError as exc:
        raise ServiceError(400, str(exc)) from None
    achieved = formats.balance(
        tables, entry.bot_ids, entry.seats_per_match, challenger_ids=entry.challenger_ids
    )
    return Schedule(tables, seed, achieved)


def _write_header(
    session: Session,
    plan: TournamentPlan,
    *,
    seed: int,
    balance: formats.Balance | None,
    status: str,
    name: str,
    live_view: str,
    event_id: int | None,
) -> Tournament:
    """The tournament row and its entries (no match yet)."""
    entry = plan.entry
    tournament = Tournament(
        name=name,
        game=plan.engine.id,
        options=plan.options,
        format=plan.format.name,
        deal=entry.deal,
        seats_per_match=entry.seats_per_match,
        **plan.format.stored(entry),
        sprt=None if entry.sprt is None else dataclasses.asdict(entry.sprt),
        pass_rule=None if entry.pass_rule is None else entry.pass_rule.to_json(),
        balance=None if balance is None else balance.to_json(),
        seed=seed,
        status=status,
        live_view=live_view,
        event_id=event_id,
    )
    session.add(tournament)
    session.flush()
    chosen = set(entry.challenger_ids)
    session.execute(
        insert(TournamentEntry),
        [
            {"tournament_id": tournament.id, "bot_id": i, "challenger": i in chosen}
            for i in entry.bot_ids
        ],
    )
    return tournament


def _write_matches(
    session: Session,
    tournament: Tournament,
    tables: Sequence[formats.Table],
    *,
    rated: bool,
    cancelled: frozenset[int] = frozenset(),
) -> list[int]:
    """Bulk inserts of ``tables`` as the tournament's matches, queued (cancelled where a
    bot of ``cancelled`` sits); their ids, in order."""
    if not tables:
        return []
    now = utcnow()
    match_ids = list(
        session.scalars(
            insert(Match).returning(Match.id, sort_by_parameter_order=True),
            [
                {
                    "tournament_id": tournament.id,
                    "kind": "tournament",
                    "game": tournament.game,
                    "options": tournament.options,
                    "seed": table.seed,
                    "deal": table.deal,
                    "status": "cancelled" if cancelled.intersection(table.seats) else "queued",
                    "rated": rated,
                    "event_id": tournament.event_id,
                    "created_at": now,
                }
                for table in tables
            ],
        )
    )
    session.execute(
        insert(MatchSeat),
        [
            {"match_id": match_id, "seat": seat, "bot_id": bot_id}
            for match_id, table in zip(match_ids, tables, strict=True)
            for seat, bot_id in enumerate(table.seats)
        ],
    )
    return match_ids


def write_tournament(
    session: Session,
    plan: TournamentPlan,
    schedule: Schedule,
    *,
    name: str,
    live_view: str = "public",
    rated: bool = True,
    event_id: int | None = None,
) -> tuple[Tournament, list[int]]:
    """The tournament row, its entries and every match of the schedule queued, with bulk
    inserts (tens of thousands of matches are written in seconds); returns it and the
    match ids, in schedule order."""
    tournament = _write_header(
        session,
        plan,
        seed=schedule.seed,
        balance=schedule.balance,
        status="running",
        name=name,
        live_view=live_view,
        event_id=event_id,
    )
    match_ids = _write_matches(session, tournament, schedule.tables, rated=rated)
    session.expire(tournament, ["entries", "matches"])
    return tournament, match_ids


def create_tournament(
    session: Session,
    config: Config,
    *,
    name: str,
    seed: int | None = None,
    live_view: str = "public",
    rated: bool = True,
    event_id: int | None = None,
    build_inline: int | None = None,
    time_bank_ms: int | None = None,
    created_by: int | None = None,
    **request: Any,
) -> tuple[Tournament, list[int]]:
    """Write a tournament with every match of its schedule queued (``arena.competition.formats``);
    returns it and the match ids, in schedule order.  The caller commits, then enqueues.

    With ``build_inline`` (``BUILD_INLINE``, say), a tournament of more matches is only
    validated and written without its matches, "building" and no match id: the caller
    commits, then sends it to a worker (``arena.worker.building.send_build``).

    ``request`` is what ``validate_tournament`` takes: ``bot_ids`` are every entrant; a
    gauntlet's ``challenger_ids`` are among them and the others are its field.  Every
    entrant plays in ``event_id`` (None: the open arena): events never mix.
    ``time_bank_ms``: each bot's time bank per match (``arena.match.referee``; None or
    0: none).  ``created_by``: the account that starts it (None: a token's holder), told
    when it finishes (``arena.services.notices``)."""
    plan = validate_tournament(config, **request)
    entrants = check_entrants(session, plan.engine, plan.entry.bot_ids, event_id)
    plan = dataclasses.replace(plan, entry=dataclasses.replace(plan.entry, bot_ids=tuple(entrants)))
    if build_inline is not None and plan.matches > build_inline:
        tournament = _write_header(
            session,
            plan,
            seed=secrets.randbelow(MAX_SEED + 1) if seed is None else seed,
            balance=None,  # the worker stores it with its first batch
            status="building",
            name=name,
            live_view=live_view,
            event_id=event_id,
        )
        tournament.time_bank_ms = time_bank_ms or None
        tournament.created_by = created_by
        session.expire(tournament, ["entries", "matches"])
        return tournament, []
    tournament, match_ids = write_tournament(
        session,
        plan,
        schedule_tournament(plan, seed),
        name=name,
        live_view=live_view,
        rated=rated,
        event_id=event_id,
    )
    # read by the workers only once the caller has committed and enqueued the matches
    tournament.time_bank_ms = time_bank_ms or None
    tournament.created_by = created_by
    return tournament, match_ids


def stored_plan(tournament: Tournament) -> TournamentPlan:
    """The plan a tournament was written from, read back from its row and entries: its
    schedule follows from it and the tournament's seed, as when it was created."""
    fmt = formats.get_format(tournament.format)
    entries = sorted(tournament.entries, key=lambda e: e.bot_id)
    entry = formats.Entry(
        bot_ids=tuple(e.bot_id for e in entries),
        seats_per_match=tournament.seats_per_match,
        deal=tournament.deal,
        games_per_pairing=tournament.games_per_pairing,
        matches_per_bot=tournament.matches_per_bot,
        challenger_ids=tuple(e.bot_id for e in entries if e.challenger),
        sprt=None if tournament.sprt is None else formats.Sprt(**tournament.sprt),
        pass_rule=(
            None
            if tournament.pass_rule is None
            else grading.PassRule.from_json(tournament.pass_rule)
        ),
    )
    return TournamentPlan(
        get_game(tournament.game), dict(tournament.options), fmt, entry, fmt.count(entry)
    )


def build_progress(session: Session, tournament: Tournament) -> dict[str, int] | None:
    """A building tournament's ``{"written": n, "total": N}`` matches; None once built."""
    if tournament.status != "building":
        return None
    written = session.scalar(
        select(func.count()).select_from(Match).where(Match.tournament_id == tournament.id)
    )
    return {"written": written or 0, "total": stored_plan(tournament).matches}


def build_tournament(
    database: Database,
    tournament_id: int,
    *,
    rated: bool,
    enqueue: Callable[[list[int]], object],
    pause_after: int = 3,
    batch: int = BUILD_BATCH,
) -> int:
    """Schedule a "building" tournament from its stored plan and seed and write its
    matches, ``batch`` per transaction, each batch's queued matches sent (``enqueue``)
    after its commit; the last batch sets it running.  Returns the matches written here.

    It resumes: the matches of a tournament are written in schedule order, a batch
    whole or not at all, so those already there are the schedule's first ones and it
    goes on after them.  Two deliveries at once take each batch in turn (the row's lock,
    SQLite's write lock) and neither writes a match the other has.  A tournament
    cancelled meanwhile stops it; a challenger decided by the stop rule meanwhile gets
    its later matches written cancelled."""
    with database.session() as session:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None or tournament.status != "building":
            return 0
        plan = stored_plan(tournament)
        seed = tournament.seed
    schedule = schedule_tournament(plan, seed)  # outside any transaction: seconds of work
    tables = schedule.tables
    written = 0
    while True:
        with database.session() as session:
            tournament = session.get(Tournament, tournament_id, with_for_update=True)
            if tournament is None or tournament.status != "building":
                return written
            done = session.scalar(
                select(func.count()).select_from(Match).where(Match.tournament_id == tournament_id)
            )
            chunk = tables[done : done + batch]
            decided = frozenset(
                session.scalars(
                    select(TournamentEntry.bot_id).where(
                        TournamentEntry.tournament_id == tournament_id,
                        TournamentEntry.sprt_decision.is_not(None),
                    )
                )
            )
            match_ids = _write_matches(session, tournament, chunk, rated=rated, cancelled=decided)
            queued = [
                i for i, t in zip(match_ids, chunk, strict=True) if not decided & set(t.seats)
            ]
            if tournament.balance is None:
                tournament.balance = schedule.balance.to_json()
            last = done + len(chunk) >= len(tables)
            if last:
                tournament.status = "running"
                open_matches = session.scalar(
                    select(func.count())
                    .select_from(Match)
                    .where(Match.tournament_id == tournament_id, Match.status.in_(MATCH_OPEN))
                )
                if not open_matches:  # every match was played (or cancelled) already
                    lifecycle.settle_tournaments(session, [tournament_id], pause_after)
        written += len(match_ids)
        if database.engine.dialect.name == "sqlite" and not last:
            time.sleep(SQLITE_PAUSE)  # the others' turn at the lock
        if queued:
            try:
                enqueue(queued)
            except Exception:
                # they stay queued in the database, where the wardens send them again
                log.exception("tournament %s: enqueueing its matches failed", tournament_id)
        if last:
            return written


def create_final(
    session: Session,
    config: Config,
    original: Tournament,
    *,
    matches_factor: int | None = None,
    games_per_pairing: int | None = None,
    matches_per_bot: int | None = None,
    build_inline: int | None = None,
    created_by: int | None = None,
) -> tuple[Tournament, list[int]]:
    """A final run of ``original``: the same entrants (and challengers), game, options,
    format, deal, event, stop rule, pass rule and time bank, with more matches (its
    own count times ``matches_factor``, or the count given) and a new seed, named
    "<name> (final)" and ``cloned_from`` it.  The caller commits, then enqueues, or
    sends a "building" one to a worker (as ``create_tournament``, ``build_inline``
    too)."""
    fmt = formats.FORMATS.get(original.format)
    if fmt is None:
        raise ServiceError(409, f"tournament {original.id}'s format {original.format!r} is unknown")
    people = session.scalar(
        select(Bot.id)
        .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
        .where(TournamentEntry.tournament_id == original.id, Bot.kind == "person")
        .limit(1)
    )
    if people is not None:
        raise ServiceError(409, "a tournament with people at the table has no final run")
    counts = {"games_per_pairing": games_per_pairing, "matches_per_bot": matches_per_bot}
    for name, value in counts.items():
        if value is None:
            continue
        if not fmt.takes(name):
            raise ServiceError(400, f"{name} is not a field of the {fmt.name} format")
        if value <= (getattr(original, name) or 0):
            raise ServiceError(
                400, f"a final plays more: {name} must be above {getattr(original, name)}"
            )
    if matches_factor is not None:
        for name in counts:
            if fmt.takes(name) and getattr(original, name) is not None:
                counts[name] = getattr(original, name) * matches_factor
    rated = session.scalar(
        select(Match.rated).where(Match.tournament_id == original.id).order_by(Match.id).limit(1)
    )
    entries = original.entries
    tournament, match_ids = create_tournament(
        session,
        config,
        name=f"{original.name[: 100 - len(' (final)')]} (final)",
        live_view=original.live_view,
        time_bank_ms=original.time_bank_ms,
        rated=True if rated is None else rated,
        event_id=original.event_id,
        build_inline=build_inline,
        created_by=created_by,
        game=original.game,
        options=dict(original.options),
        bot_ids=[e.bot_id for e in entries],
        seats_per_match=original.seats_per_match,
        format=original.format,
        deal=original.deal,
        challenger_ids=[e.bot_id for e in entries if e.challenger],
        sprt=original.sprt,
        pass_rule=original.pass_rule,
        **{name: value for name, value in counts.items() if fmt.takes(name)},
    )
    tournament.cloned_from = original.id
    session.flush()
    return tournament, match_ids


def get_tournament(session: Session, tournament_id: int) -> Tournament:
    tournament = session.get(Tournament, tournament_id) if 0 < tournament_id <= MAX_ID else None
    if tournament is None:
        raise ServiceError(404, f"no tournament {tournament_id}")
    return tournament


def cancel_tournament(session: Session, tournament: Tournament, pause_after: int = 3) -> None:
    """Queued matches are cancelled; running ones finish and still count (and keep the
    tournament's seed hidden until they do: ``tournament_seed``), and finished ones that
    waited for a cancelled rotation of their deal are settled."""
    if tournament.status not in ("running", "building"):  # building: its builder stops
        raise ServiceError(409, f"tournament {tournament.id} is already {tournament.status}")
    lifecycle.cancel_queued(session, Match.tournament_id == tournament.id)
    tournament.status = "cancelled"
    lifecycle.settle_tournaments(session, [tournament.id], pause_after)
