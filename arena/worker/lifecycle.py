"""The life of a match row: claimed, dealt, played again, failed, finished, settled.

Every change of a match's status is written here, once: by the workers (claim, finish,
fail) and by the web (after cancelling).  No Celery and no HTTP here; each function works
in its caller's transaction and leaves the commit to it.

::

    queued ──claim──► running ──finish──► finished ──settle──► in ratings and standings
      ▲  ▲               │ │
      │  └──lost lease───┘ └──fail──► queued again, or failed after MAX_FAILURES
      └──cancel──► cancelled

- **A lost lease is not the match's fault.**  A worker that dies (``kill -9``, out of
  memory, a machine gone or cut off) loses the lease on every match it held; another
  worker claims them again (``arena.worker.warden``).  That counts in ``lost_leases``, never in
  ``failures``: only a failure of the match itself (an error while playing or recording
  it, its time limit) counts toward giving up.  Past ``LOST_LEASE_ALERT`` lost leases a
  match is still played, and each further loss is logged as an error and noted on the
  match for the operator: something keeps killing the workers that play it.
- **A deal is dealt once.**  The bots of an abandoned attempt saw its deal (their hands,
  what they peeked at, maybe every hand if ``/end`` was sent), so a match claimed again
  after an attempt is dealt anew from a seed derived from its seed and the attempt
  (``redeal_seed``); the seed stored on the row, and recorded in the replay, is always
  the one dealt, so re-simulation holds.  Bots get a fresh ``match_id`` per attempt
  (``attempt_id``).
- **A duplicate deal stays one deal.**  The rotations of a duplicate deal must hold the
  same hands, so when one of them must be dealt anew, the whole group is: its queued
  rotations take the new seed, its running ones are stopped (their worker loses the
  lease) and queued again, and its finished ones are queued again too.  That is possible
  because a rotation's result is not *settled* (rated, added to the standings, counted
  toward a pause) until no rotation of its deal is queued or running any more: until
  then it can be discarded.  Nothing of the deal is published meanwhile either.
- **A paused bot leaves its tournaments.**  A match of a tournament that starts while one
  of its bots is paused (by the arena after forfeits in a row, or by an organiser) is
  played without it (``withheld``): its seat is never asked, plays the game's default
  actions and forfeits, settled like any forfeit, and the other bots play their match.
  A match already running plays on; a bot resumed before its next match plays it.
- **Results are fenced.**  A worker's result is written only while it still holds the
  match's lease and the record was dealt the match's current seed: a worker that was cut
  off, or whose deal was superseded, records nothing.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from sqlalchemy import delete, event, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from arena.competition.formats import MAX_SEED
from arena.competition.ratings import EloConfig, apply_match
from arena.competition.standings import record_result, skip_unplayed
from arena.match.faults import describe_fault, fault_summary
from arena.match.referee import MatchRecord
from arena.models import (
    MATCH_ENDED,
    MATCH_OPEN,
    Bot,
    BotPin,
    BotSession,
    Counter,
    Match,
    MatchLog,
    MatchSeat,
    Rating,
    RatingChange,
    Replay,
    Tournament,
    aware,
    utcnow,
)
from arena.services import notices, validation
from arena.services.scrimmages import SCRIMMAGE
from arena.worker import live

log = logging.getLogger(__name__)

ELO = EloConfig()
MAX_FAILURES = 3  # failures of the match itself after which it is failed
LOST_LEASE_ALERT = 10  # lost leases after which each further one is an alert
RATING_SEQ = "rating_seq"
# a match started from /play is cancelled when its people have not all sat down by then
PLAY_WAIT = dt.timedelta(minutes=30)
BUSY = "a bot of the match plays in another worker"  # a claim refused for now: try later

Enqueue = Callable[[list[int]], None]


# -- deals -----------------------------------------------------------------------------------
def redeal_seed(seed: int, attempt: int) -> int:
    """The seed of a deal dealt again for ``attempt``: a hash of the seed it replaces and
    the attempt, below ``MAX_SEED`` like every seed.  Nobody can tell it from the old
    seed without knowing the old seed, and the old one is never published before the
    match is over."""
    digest = hashlib.sha256(f"redeal:{seed}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def attempt_id(match_id: int, attempt: int) -> str:
    """The ``match_id`` the bots of an attempt are given: the match's id, then ``.2``,
    ``.3`` ... for the attempts after the first, so that a bot keeping state per match
    never mixes an abandoned attempt with the next."""
    return str(match_id) if attempt <= 1 else f"{match_id}.{attempt}"


def deal_group(match: Match) -> tuple[int, int] | None:
    """(tournament, deal) of a rotation of a duplicate deal; None for a deal of its own."""
    if match.deal is None or match.tournament_id is None:
        return None
    return match.tournament_id, match.deal


# -- claiming ----------------------------------------------------------------------------------
def claim(
    session: Session,
    match: Match,
    owner: str,
    until: dt.datetime,
    now: dt.datetime,
    enqueue: Enqueue | None = None,
) -> str | None:
    """Claim a locked match for ``owner`` with a lease ``until``: None when claimed, else
    why not (finished, failed, cancelled, or running under someone's live lease).

    A running match whose lease lapsed was abandoned by a worker that lost it: that is a
    lost lease, not a failure.  A match whose seed an earlier attempt dealt is dealt
    anew first (its whole deal group, for a rotation of a duplicate deal); the other
    rotations that this puts back in the queue are handed to ``enqueue`` once the
    transaction commits (without it, the wardens send them again after a lease)."""
    if match.status in MATCH_ENDED:
        return f"already {match.status}"
    lapsed = match.status == "running"
    if lapsed and match.lease_expires_at is not None and aware(match.lease_expires_at) > now:
        return "running under a live lease"
    if not lapsed and away_draining(session, match):
        return BUSY  # its queued matches wait until it comes back
    if not lapsed and people_not_ready(session, match):
        if match.kind == "play" and now - aware(match.created_at) > PLAY_WAIT:
            match.status = "cancelled"
            match.error = f"not every person sat down within {PLAY_WAIT.seconds // 60} minutes"
            match.finished_at = now
            return f"cancelled: {match.error}"
        return BUSY  # it waits for everyone to sit down
    if not pin_bots(session, match, owner, until, now):
        return BUSY
    if lapsed:
        match.lost_leases += 1
        if match.lost_leases >= LOST_LEASE_ALERT:
            match.error = (
                f"lost its worker {match.lost_leases} times: something keeps killing the "
                "workers that play it (memory? see the workers' logs)"
            )
            log.error("match %s: %s", match.id, match.error, extra={"match_id": match.id})
    if match.dealt:
        requeued = redeal(session, match)
        if requeued and enqueue is not None:
            event.listen(session, "after_commit", lambda _: _send(enqueue, requeued), once=True)
    match.status = "running"
    match.attempts += 1
    match.dealt = True
    match.started_at = now
    match.lease_owner = owner
    match.lease_expires_at = until
    for seat in match.seats:  # what played this attempt: the versions declared now
        # a hosted bot's validation tries the version it was written with
        if not (match.kind == validation.VALIDATION and seat.bot.hosted):
            seat.version = declared_version(seat.bot)
    live.forget(session, match.id, keep_attempt=match.attempts)  # earlier attempts: gone
    return None


def away_draining(session: Session, match: Match) -> bool:
    """A bot of the match connects out and drained its session (it was stopped): the
    arena starts no new match with it until it opens a new one."""
    return bool(
        session.scalar(
            select(func.count())
            .select_from(BotSession)
            .join(Bot, Bot.id == BotSession.bot_id)
            .where(
                BotSession.bot_id.in_([s.bot_id for s in match.seats if not withheld(match, s)]),
                BotSession.draining.is_(True),
                Bot.endpoint.is_(None),
            )
        )
    )


def people_not_ready(session: Session, match: Match) -> bool:
    """A person's seat of the match has never been opened (its link not followed yet),
    or the person is playing another match (a person plays one at a time): the match
    waits.  Once seated, a person who leaves gets default actions like any bot."""
    people = {s.bot_id for s in match.seats if s.bot.kind == "person"}
    if not people:
        return False
    opened = session.scalar(
        select(func.count()).select_from(BotSession).where(BotSession.bot_id.in_(people))
    )
    if (opened or 0) < len(people):
        return True
    playing = session.scalar(
        select(func.count())
        .select_from(MatchSeat)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            MatchSeat.bot_id.in_(people),
            Match.status == "running",
            Match.id != match.id,
        )
    )
    return bool(playing)


def pin_bots(
    session: Session, match: Match, owner: str, until: dt.datetime, now: dt.datetime
) -> bool:
    """Pin to ``owner`` (a worker process) every bot of the match that declares its
    capacity, unless another live process holds one of them: False then, and nothing is
    changed.  A bot's requests then all leave from one process, whose connection pool
    never has more than the bot's capacity in flight; the holder keeps the pin while it
    plays matches of the bot (``renew_pins``, ``unpin_idle``)."""
    bot_ids = sorted(
        {
            s.bot_id
            for s in match.seats
            if declared_capacity(s.bot) is not None and not withheld(match, s)
        }
    )
    if not bot_ids:
        return True
    _ensure_pins(session, bot_ids)
    pins = session.scalars(
        select(BotPin).where(BotPin.bot_id.in_(bot_ids)).order_by(BotPin.bot_id).with_for_update()
    ).all()
    for pin in pins:
        held = pin.owner is not None and pin.expires_at is not None
        if held and pin.owner != owner and aware(pin.expires_at) > now:
            return False
    for pin in pins:
        pin.owner, pin.expires_at = owner, until
    return True


def _ensure_pins(session: Session, bot_ids: list[int]) -> None:
    """A pin row for each bot (made the first time; two processes making one at once is
    no error: the other's row is the row)."""
    have = set(session.scalars(select(BotPin.bot_id).where(BotPin.bot_id.in_(bot_ids))))
    for bot_id in bot_ids:
        if bot_id not in have:
            try:
                with session.begin_nested():
                    session.add(BotPin(bot_id=bot_id))
            except IntegrityError:
                pass


def renew_pins(session: Session, owner: str, until: dt.datetime) -> None:
    """Push ``owner``'s pins a lease ahead (its warden does, with its matches' leases)."""
    session.execute(
        update(BotPin)
        .where(BotPin.owner == owner)
        .values(expires_at=until)
        .execution_options(synchronize_session=False)
    )


def unpin_idle(session: Session, owner: str, bot_ids: Iterable[int]) -> None:
    """Let go of ``owner``'s pins of these bots that none of its running matches seats:
    another process may then play their matches at once, not a lease later."""
    ids = sorted(set(bot_ids))
    pins = session.scalars(
        select(BotPin)
        .where(BotPin.bot_id.in_(ids), BotPin.owner == owner)
        .order_by(BotPin.bot_id)
        .with_for_update()
    ).all()
    if not pins:
        return
    # read after the pins are locked: a claim of this process that pinned one of them
    # again has committed by then, and its match shows here
    playing = set(
        session.scalars(
            select(MatchSeat.bot_id)
            .join(Match, Match.id == MatchSeat.match_id)
            .where(
                Match.lease_owner == owner,
                Match.status == "running",
                MatchSeat.bot_id.in_([p.bot_id for p in pins]),
            )
        )
    )
    for pin in pins:
        if pin.bot_id not in playing:
            pin.owner = pin.expires_at = None


def _send(enqueue: Enqueue, match_ids: list[int]) -> None:
    try:
        enqueue(match_ids)
    except Exception:  # the broker is away: the wardens send them again after a lease
        log.exception("matches %s, queued again for a new deal, were not sent", match_ids)


def redeal(session: Session, match: Match) -> list[int]:
    """Deal the locked ``match`` anew, and every other rotation of its duplicate deal;
    returns the rotations put back in the queue (running or finished ones).  Their
    worker, if any, loses its lease and stops; a finished rotation's result, not settled
    while its deal is played, is discarded with its replay."""
    seed = redeal_seed(match.seed, match.attempts + 1)
    log.info(
        "match %s is dealt anew for attempt %s",
        match.id,
        match.attempts + 1,
        extra={"match_id": match.id},
    )
    match.seed = seed
    group = deal_group(match)
    if group is None:
        return []
    tournament_id, deal = group
    # one change of a deal group at a time: results of its rotations lock this row too
    session.get(Tournament, tournament_id, with_for_update=True)
    siblings = session.scalars(
        select(Match)
        .where(Match.tournament_id == tournament_id, Match.deal == deal, Match.id != match.id)
        .order_by(Match.id)
        .with_for_update()
        .options(selectinload(Match.seats))
    ).all()
    requeued = []
    for sibling in siblings:
        sibling.seed = seed
        sibling.dealt = False
        if sibling.status == "running" or (sibling.status == "finished" and not sibling.settled):
            if sibling.status == "finished":
                _discard_result(session, sibling)
            sibling.status = "queued"
            sibling.lease_owner = sibling.lease_expires_at = None
            sibling.enqueued_at = utcnow()
            requeued.append(sibling.id)
    return requeued


def _discard_result(session: Session, match: Match) -> None:
    """Undo a finished, unsettled rotation: nothing of it was rated or counted yet."""
    match.result = None
    match.finished_at = None
    for seat in match.seats:
        seat.rank = seat.score = seat.faults = None
        seat.strikes = 0
        seat.forfeited = False
    session.execute(delete(Replay).where(Replay.match_id == match.id))
    session.execute(delete(MatchLog).where(MatchLog.match_id == match.id))


# -- what an attempt plays ---------------------------------------------------------------------
class SeatPlan(NamedTuple):
    """How to reach one seat's bot: endpoint (None: the bot connects out, and is reached
    through the web process holding its session), signing secret, name, declared
    capacity, id; a house bot's policy (played in this process); the seat's own
    deadline per decision, when not the arena's (a person's); a hosted bot's code
    version (run in a sandbox of this worker's host, ``arena.hosted``); ``withheld``: a
    paused bot's seat, not asked at all (``withheld``)."""

    endpoint: str | None
    secret: str
    name: str
    capacity: int | None
    bot_id: int = 0
    policy: str | None = None
    deadline_ms: int | None = None
    code: str | None = None
    withheld: bool = False


class Plan(NamedTuple):
    """What playing a claimed match needs, read while it is locked: the attempt's deal
    and the bots to ask."""

    match_id: int
    game: str
    seed: int
    options: dict[str, Any]
    seats: list[SeatPlan]
    attempt: int
    time_bank_ms: int | None = None  # its tournament's time bank per seat (None: none)

    @property
    def bots_match_id(self) -> str:
        return attempt_id(self.match_id, self.attempt)


def plan(match: Match) -> Plan:
    """The plan of a claimed match (its seats' bots loaded)."""
    seats = [
        SeatPlan(
            s.bot.endpoint,
            s.bot.signing_secret,
            s.bot.name,
            declared_capacity(s.bot),
            s.bot_id,
            (s.bot.info or {}).get("policy") if s.bot.kind == "house" else None,
            s.bot.deadline_ms,
            (s.version or "") if s.bot.hosted else None,  # "": no version passed yet
            withheld(match, s),
        )
        for s in match.seats
    ]
    # a tournament's matches have its time bank; the ladder's, play's and the others' none
    bank = match.tournament.time_bank_ms if match.tournament_id is not None else None
    return Plan(match.id, match.game, match.seed, match.options, seats, match.attempts, bank)


def withheld(match: Match, seat: MatchSeat) -> bool:
    """Whether the seat's bot is left out of this match of a tournament: it is paused (by
    the arena after forfeits in a row, or by an organiser), so it is not asked; its seat
    plays the default actions and forfeits (``arena.match.referee.WithheldClient``).
    Decided as the match starts: a bot resumed by then plays it."""
    paused = seat.bot.kind == "bot" and seat.bot.status == "paused"
    return paused and match.tournament_id is not None


def declared_version(bot: Bot) -> str | None:
    """The version the bot declares now: a webhook bot's ``GET /`` at registration or its
    last endpoint change, a connected bot's as it opened its session (``Bot.info``)."""
    value = (bot.info or {}).get("version")
    return value if isinstance(value, str) and value else None


def declared_capacity(bot: Bot) -> int | None:
    """How many requests at once the bot declared it takes (its ``GET /``), or None
    (a house bot, played in process, takes any number)."""
    if bot.kind == "house" or bot.hosted:  # a process of its own in every match
        return None
    value = (bot.info or {}).get("capacity")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return 1 if bot.endpoint is None else None  # a connected bot is handed one at a time


# -- ending ----------------------------------------------------------------------------------
class Ended(enum.Enum):
    """What recording a result did."""

    REFUSED = "not recorded"  # not the caller's to record (see ``finish``)
    RECORDED = "recorded"
    TOURNAMENT_OVER = "recorded, and its tournament is over"


def holds_lease(match: Match, claimed: tuple[str, int], now: dt.datetime | None = None) -> bool:
    """``claimed`` (owner, attempt) is the match's latest attempt and its lease has not
    lapsed: a result recorded now, under the row's lock, is the only one (no warden adopts
    a locked row, and none could have adopted it before: its lease was live)."""
    if (match.lease_owner, match.attempts) != claimed:
        return False
    return match.lease_expires_at is not None and aware(match.lease_expires_at) > (now or utcnow())


def finish(
    session: Session,
    match: Match | None,
    record: MatchRecord,
    pause_after: int,
    claimed: tuple[str, int] | None = None,
) -> Ended:
    """Write a played match's result on its locked row (seats loaded): each seat's rank,
    score, strikes and faults, the replay, and, unless it waits for the other rotations
    of its deal, its settlement; its tournament ends if nothing is left to play.
    ``claimed`` is the (owner, attempt) that played it: the owner must still hold a live
    lease (``holds_lease``) and the attempt be the match's latest (None: an in-process
    caller that claimed nothing).  Nothing is written when the match is not the caller's
    to record: gone, already ended, claimed again since (by another worker, or dealt
    anew), or its lease lapsed."""
    if match is None:
        return Ended.REFUSED
    if match.status in MATCH_ENDED or (claimed is not None and not holds_lease(match, claimed)):
        live.forget(session, match.id, keep_attempt=match.attempts)
        return Ended.REFUSED
    outcome = record.outcome or {}
    ranks = outcome["ranks"]
    faults = fault_summary(record.to_json())
    forfeited = set(outcome.get("forfeited", ()))
    for seat in match.seats:
        seat.rank = ranks[seat.seat]
        seat.score = float(outcome["scores"][seat.seat])
        seat.strikes = record.strikes[seat.seat]
        seat.faults = faults.get(seat.seat)
        seat.forfeited = seat.seat in forfeited
    session.add(Replay(match_id=match.id, record=record.to_json()))
    for seat_number, entries in record.logs.items():  # private: never in the replay
        session.merge(MatchLog(match_id=match.id, seat=seat_number, entries=entries))
    live.forget(session, match.id)  # the replay says everything now
    match.status = "finished"
    match.result = outcome
    match.error = None
    match.finished_at = utcnow()
    match.lease_owner = match.lease_expires_at = None
    if match.kind == validation.VALIDATION:
        session.flush()
        validation.validated(session, match, record.logs)
    if deal_group(match) is None:
        settle(session, match, pause_after)
    else:
        # the deal's rotations end one after the other: each sees the ones before
        session.get(Tournament, match.tournament_id, with_for_update=True)
        session.flush()
        settle_ready(session, match.tournament_id, pause_after)
    notices.match_faults(session, match)  # after settling: a pause it caused says enough
    return Ended.TOURNAMENT_OVER if finish_tournament(session, match) else Ended.RECORDED


def fail(session: Session, match: Match, reason: str, pause_after: int, final: bool) -> None:
    """An attempt of the running ``match`` failed for a reason of its own: it is queued
    again, or failed when ``final`` or after ``MAX_FAILURES``."""
    match.failures += 1
    match.error = reason[:500]
    match.lease_owner = match.lease_expires_at = None
    if final or match.failures >= MAX_FAILURES:
        match.status = "failed"
        match.finished_at = utcnow()
        live.forget(session, match.id)
        closed(session, match, pause_after)
    else:
        match.status = "queued"


def closed(session: Session, match: Match, pause_after: int) -> None:
    """``match`` ended without a result (failed, cancelled): the stop rule goes past it,
    the finished rotations its deal was waiting on are settled, and its tournament ends
    if nothing is left."""
    if match.tournament_id is not None:
        skip_unplayed(session, match.tournament_id)
        settle_ready(session, match.tournament_id, pause_after)
    finish_tournament(session, match)


# -- settling ----------------------------------------------------------------------------------
def settle(session: Session, match: Match, pause_after: int) -> None:
    """Put a finished match's result in the ratings, the standings and its bots' counts
    of forfeits in a row.  Forfeits are rated like any last place: a bot that knows its
    opponents at ``/start`` must not be able to dodge the strong ones by not answering."""
    match.settled = True  # before the standings: the last rotation of a deal counts it
    # bots are locked in the order of their ids: two results never wait on each other
    for seat in sorted(match.seats, key=lambda s: (s.bot_id, s.seat)):
        # a version on trial (what plays is another one), a scrimmage (a try, asked for
        # at will), or a paused bot that was not asked: none counts toward a pause
        if match.kind not in (validation.VALIDATION, SCRIMMAGE) and not _was_withheld(seat):
            _count_forfeit(session, seat, pause_after)
    if match.rated:
        _rate(session, match, [s.rank for s in sorted(match.seats, key=lambda s: s.seat)])
    record_result(session, match)  # standings, crosstable, deals, the stop rule
    notices.match_settled(session, match)  # a qualifier's grades it decides


def settle_ready(session: Session, tournament_id: int, pause_after: int) -> list[int]:
    """Settle the tournament's finished matches that wait for nothing: every one not yet
    settled whose deal has no rotation queued or running; in the order they were
    scheduled.  Returns them.  Settling may end a stop rule, which cancels matches and
    so completes more deals: it goes on until none is left."""
    done: list[int] = []
    while True:
        waiting = session.scalars(
            select(Match)
            .where(
                Match.tournament_id == tournament_id,
                Match.status == "finished",
                Match.settled.is_(False),
            )
            .order_by(Match.id)
            .options(selectinload(Match.seats))
        ).all()
        deals = {m.deal for m in waiting if m.deal is not None}
        in_play = set()
        if deals:
            in_play = set(
                session.scalars(
                    select(Match.deal).where(
                        Match.tournament_id == tournament_id,
                        Match.deal.in_(deals),
                        Match.status.in_(MATCH_OPEN),
                    )
                )
            )
        ready = [m for m in waiting if m.deal not in in_play]
        if not ready:
            return done
        for match in ready:
            settle(session, match, pause_after)
            done.append(match.id)
        session.flush()


def settle_tournaments(session: Session, tournament_ids: Iterable[int], pause_after: int) -> None:
    """After matches were cancelled in bulk: the stop rule goes past them, what no longer
    waits is settled, what is over ends."""
    for tournament_id in sorted(set(tournament_ids)):
        skip_unplayed(session, tournament_id)
        settle_ready(session, tournament_id, pause_after)
        _finish_tournament_if_done(session, tournament_id)


def _was_withheld(seat: MatchSeat) -> bool:
    """The seat's bot was paused as its match started, and never asked (``withheld``)."""
    return set((seat.faults or {}).get("kinds") or ()) == {"paused"}


def _count_forfeit(session: Session, seat: MatchSeat, pause_after: int) -> None:
    """Keep the bot's count of forfeits in a row; pause an active bot at ``pause_after``
    (the ladder stops seating it) and say why, until its owner sets it active again.

    The bot's row is written, and so locked, only when its count changes: a result does
    not queue behind every other result of the same bot (nearly all of them, in a
    tournament) for a count that stays 0."""
    if not seat.forfeited:
        session.execute(
            update(Bot)
            .where(Bot.id == seat.bot_id, Bot.forfeit_streak != 0)
            .values(forfeit_streak=0)
            .execution_options(synchronize_session=False)
        )
        return
    row = session.execute(
        update(Bot)
        .where(Bot.id == seat.bot_id)
        .values(forfeit_streak=Bot.forfeit_streak + 1)
        .returning(Bot.forfeit_streak, Bot.status)
        .execution_options(synchronize_session=False)
    ).first()
    if row is None or row.forfeit_streak < pause_after or row.status != "active":
        return
    first = (seat.faults or {}).get("first", {})
    reason = (
        f"paused after {row.forfeit_streak} forfeits in a row (match {seat.match_id}: "
        f"{describe_fault(first) if first else 'no usable answer'})"
    )[:300]
    owner = session.execute(
        update(Bot)
        .where(Bot.id == seat.bot_id)
        .values(status="paused", paused_by="arena", paused_reason=reason)
        .returning(Bot.account_id, Bot.name)
        .execution_options(synchronize_session=False)
    ).first()
    log.warning("bot %s paused: %s", seat.bot_id, reason, extra={"bot_id": seat.bot_id})
    if owner is not None:
        notices.bot_paused(
            session, owner.account_id, seat.bot_id, owner.name, reason, match_id=seat.match_id
        )


def _rate(session: Session, match: Match, ranks: list[int]) -> None:
    bot_ids = [s.bot_id for s in sorted(match.seats, key=lambda s: s.seat)]
    # a bot's first rated result makes its row; two first results at once make it once
    # (the second waits for the first to commit, then locks the row it made)
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert(Rating)
        .values(
            [
                {"bot_id": b, "game": match.game, "elo": ELO.initial, "matches": 0}
                for b in sorted(set(bot_ids))
            ]
        )
        .on_conflict_do_nothing()
    )
    rows = {
        r.bot_id: r
        for r in session.scalars(
            select(Rating)
            .where(Rating.game == match.game, Rating.bot_id.in_(bot_ids))
            .order_by(Rating.bot_id)
            .with_for_update()
        )
    }
    table = {bot_id: row.elo for bot_id, row in rows.items()}
    for bot_id, (before, after) in apply_match(table, bot_ids, ranks, ELO).items():
        row = rows[bot_id]
        row.elo = after
        row.matches += 1
        session.add(
            RatingChange(
                match_id=match.id, bot_id=bot_id, game=match.game, before=before, after=after
            )
        )
    # the sequence of rated results, taken last: its lock is the one every rated result
    # waits on, so it is held for the end of the transaction only.  Results that share a
    # bot still take their numbers in the order they rated it (each holds that bot's
    # rating row until it commits), which is all a rebuild needs.
    counter = session.scalars(
        select(Counter).where(Counter.name == RATING_SEQ).with_for_update()
    ).one()
    counter.value += 1
    match.rating_seq = counter.value


def finish_tournament(session: Session, match: Match) -> bool:
    """Mark the match's tournament finished if this was its last open match."""
    if match.tournament_id is None:
        return False
    return _finish_tournament_if_done(session, match.tournament_id, but=match.id)


def _finish_tournament_if_done(
    session: Session, tournament_id: int, but: int | None = None
) -> bool:
    query = select(func.count(Match.id)).where(
        Match.tournament_id == tournament_id, Match.status.in_(MATCH_OPEN)
    )
    if but is not None:
        query = query.where(Match.id != but)
    if session.scalar(query) == 0:
        tournament = session.get(Tournament, tournament_id)
        if tournament is not None and tournament.status == "running":
            tournament.status = "finished"
            tournament.finished_at = utcnow()
            notices.tournament_finished(session, tournament)
            return True
    return False


def cancel_queued(session: Session, *where: Any) -> list[int]:
    """Cancel the queued matches that ``where`` selects; the tournaments they belong to."""
    return list(
        session.scalars(
            update(Match)
            .where(Match.status == "queued", *where)
            .values(status="cancelled")
            .returning(Match.tournament_id)
            .execution_options(synchronize_session=False)
        )
    )
