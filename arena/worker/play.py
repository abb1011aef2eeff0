"""The match task: ``run_match(match_id)`` claims a match, plays it and records it.

``run_match`` takes only the id and reloads everything from the database.  It is
idempotent: a second delivery of a finished match, or of one that another worker is
playing under a live lease, is a no-op; when two workers do play the same match (a lease
that lapsed while its worker was alive), the result is written under a lock by the
first to finish only.  That makes ``acks_late`` with ``task_reject_on_worker_lost`` safe:
a worker dying mid-match means the match is played again from its seed, never recorded
twice, and the warden (``arena.worker.warden``) of another worker takes it over within a
lease and a round, whatever the broker.

A match is I/O-bound: it waits on its bots almost all the time.  So a worker process
plays many at once (``ARENA_WORKER_CONCURRENCY``, 100 by default) on Celery's ``threads``
pool, one thread per match, the matches sharing one keep-alive connection pool per bot
endpoint (``arena.match.pools.Pools``).  Threads were chosen by measurement over gevent
and over an asyncio referee: see ``docs/workers.md``.

Ratings change in the same transaction as the result, under row locks (PostgreSQL) or
the database lock (SQLite, ``BEGIN IMMEDIATE``), and each rated result takes the next
number of a locked counter, so ``arena ratings rebuild`` can replay them in that order.

A result is recorded only under a live lease: the match's row is locked first, and the
lease must be the recording process's and not yet lapsed (``lifecycle.finish``); holding
the row's lock to the commit keeps any other warden from adopting it meanwhile.  A
database error while recording (a link cut, a lock or pool timeout, a session ended by
the server) is retried while the lease is held; a process fenced by its warden gives up.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import time
from typing import Any

from celery.signals import worker_process_init, worker_ready, worker_shutdown
from sqlalchemy import exc as sa_exc
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from arena.config import Config
from arena.db import Database
from arena.games import make_policy
from arena.hosted.client import HostedClient
from arena.match.faults import silenced
from arena.match.http_client import HttpClient
from arena.match.pools import Pools
from arena.match.referee import (
    MatchAbandoned,
    MatchRecord,
    MatchTimeLimit,
    PolicyClient,
    Referee,
    WithheldClient,
    policy_rng,
)
from arena.metrics import worker as worker_metrics
from arena.models import Match, MatchSeat, aware, utcnow
from arena.relay import sessions
from arena.relay.client import RelayClient
from arena.sealing import SealingError
from arena.worker import celery_app, heartbeat, hosting, lifecycle, live, queue
from arena.worker.celery_app import _state, _state_lock, celery
from arena.worker.lifecycle import MAX_FAILURES
from arena.worker.refits import refit_ratings
from arena.worker.warden import Warden, new_owner

log = logging.getLogger(__name__)


def _pools() -> Pools:
    """The connection pools of this process, shared by all its matches."""
    config = celery_app._config()
    with _state_lock:
        if _state.get("pools") is None:
            _state["pools"] = Pools(
                max_connections=config.connections_per_bot,
                check_address=config.address_policy.check,
            )
        return _state["pools"]


def _client(
    database: Database, config: Config, plan: lifecycle.Plan, index: int
) -> HttpClient | RelayClient | PolicyClient | HostedClient | WithheldClient:
    """The referee's client of a seat's bot: over HTTP to its endpoint, through the web
    process holding its session when it connects out, its own code in a sandbox of this
    host when the arena hosts it, or a house policy in process; none for a paused bot's
    seat (``lifecycle.withheld``)."""
    seat = plan.seats[index]
    if seat.withheld:
        return WithheldClient(seat.name, "the bot was paused when the match started")
    if seat.policy is not None:
        rng = policy_rng(plan.seed, index)
        return PolicyClient(make_policy(plan.game, seat.policy, rng), seat.name)
    if seat.code is not None:
        return hosting.client(database, config, seat.bot_id, seat.code, seat.name)
    if seat.endpoint is not None:
        pool = _pools().get(seat.endpoint, seat.capacity)
        return HttpClient(seat.endpoint, seat.secret, seat.name, pool=pool)

    def locate(bot_id: int = seat.bot_id) -> str | None:
        with database.session() as session:
            return sessions.locate(session, bot_id)

    return RelayClient(
        seat.bot_id, seat.secret, seat.name, locate=locate, pools=_relay_pools(),
        capacity=seat.capacity,
    )  # fmt: skip


def _relay_pools() -> Pools:
    """The connections of this process to the web processes holding connected bots'
    sessions: the arena's own addresses, which the bots' address policy is not for."""
    with _state_lock:
        if _state.get("relay_pools") is None:
            _state["relay_pools"] = Pools(max_connections=celery_app._config().connections_per_bot)
        return _state["relay_pools"]


def _live_writer(database: Database, interval: float) -> live.LiveWriter | None:
    """The writer of this process's running matches' steps for ``database`` (None when
    ``interval`` is 0: nothing is written)."""
    if interval <= 0:
        return None
    with _state_lock:
        writers = _state.setdefault("live", {})
        if database.url not in writers:
            writers[database.url] = live.LiveWriter(database, interval)
        return writers[database.url]


def _warden() -> Warden:
    """This process's warden, started with the first match if no signal started it."""
    with _state_lock:
        warden = _state.get("warden")
    return warden or start_warden(capacity=celery_app._config().worker_concurrency)


def start_warden(capacity: int) -> Warden:
    """Keep the leases of this process's matches and recover others' (``arena.worker.warden``)."""
    config = celery_app._config()
    database = celery_app._db()
    with _state_lock:
        if _state.get("warden") is not None:
            return _state["warden"]
        warden = Warden(
            database,
            lease_seconds=config.lease_seconds,
            capacity=capacity,
            claim=claim,
            play=lambda match_id: play_claimed(
                celery_app._db(), celery_app._config(), match_id, warden.owner, warden
            ),
            enqueue=lambda match_ids: queue.enqueue_matches(celery_app._config(), match_ids),
            messages_waiting=queue.messages_waiting,
        )
        _state["warden"] = warden
    warden.start()
    return warden


@worker_process_init.connect
def _fresh_process(**_: Any) -> None:
    """A forked pool process must not share its parent's database connections or
    sockets; it plays one match at a time and has a warden of its own."""
    if _state.get("db") is not None:
        _state["db"].engine.dispose(close=False)
    _state["pools"] = _state["relay_pools"] = None
    heartbeat.start_for(start_warden(capacity=1))


@worker_ready.connect
def _worker_ready(sender: Any = None, **_: Any) -> None:
    """A pool of threads plays its matches in this process: the warden lives here."""
    pool = getattr(sender, "pool", None)
    if pool is not None and "prefork" not in type(pool).__module__:
        # the process beats under its warden's name (arena.worker.heartbeat)
        heartbeat.start_for(start_warden(capacity=getattr(pool, "limit", None) or 1))


@worker_shutdown.connect
def _worker_shutdown(**_: Any) -> None:
    heartbeat.stop()  # a clean stop: no longer counted as alive
    warden = _state.get("warden")
    if warden is not None:
        warden.stop()


BUSY_RETRY_SECONDS = 2  # then a match whose bot plays in another worker is tried again
# the database is away, a lock or the pool timed out: what retrying is worth
DATABASE_ERRORS = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError)
DATABASE_RETRY_SECONDS = (0.5, 1, 2, 4, 5)  # then every 5 s while the lease is held


# max_retries=None: retries for a busy bot, a fenced process or the database away are
# unbounded (a retry given max_retries=None takes the task's own, else 3)
@celery.task(
    bind=True,
    name="arena.run_match",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def run_match(self: Any, match_id: int, waiting: bool = False) -> str:
    """Play the match; ``waiting``: a message this task sent itself while the match's bot
    played in another worker (not a message the broker still had: see ``Warden.resend``)."""
    warden = _warden()
    if not waiting:
        warden.delivered()
    if warden.fenced:
        # this process cannot reach the database: another worker takes the match
        raise self.retry(countdown=BUSY_RETRY_SECONDS)
    try:
        played = play_match(celery_app._db(), celery_app._config(), match_id, warden)
    except DATABASE_ERRORS as exc:
        log.warning(
            "match %s not claimed: the database is away (%s)",
            match_id,
            exc,
            extra={"match_id": match_id},
        )
        raise self.retry(countdown=BUSY_RETRY_SECONDS) from exc
    except MatchNotPlayed as exc:
        # the match is queued again (its failures are counted): try once more shortly
        raise self.retry(exc=exc, countdown=2, max_retries=MAX_FAILURES) from exc
    if played in (lifecycle.BUSY, HOSTED_ELSEWHERE, HOSTED_BUSY):
        # not claimed, for now: another worker sends the requests of one of its bots, or
        # this one cannot run its hosted bots (no sandbox here, or as many as it may
        # already); the match comes back shortly, for this worker or another
        raise self.retry(countdown=BUSY_RETRY_SECONDS, kwargs={"waiting": True})
    return played


HOSTED_ELSEWHERE = "a bot of the match is hosted, and this worker cannot host bots"
HOSTED_BUSY = "a bot of the match is hosted, and this worker runs as many as it may"


class MatchNotPlayed(RuntimeError):
    """Playing or recording a match failed for a reason of the server's own."""


def claim(
    session: Session, match: Match, owner: str, until: dt.datetime, now: dt.datetime
) -> str | None:
    """``arena.worker.lifecycle.claim``, the rotations it queues again sent to the broker."""
    return lifecycle.claim(
        session,
        match,
        owner,
        until,
        now,
        enqueue=lambda ids: queue.enqueue_matches(celery_app._config(), ids),
    )


def play_match(
    database: Database, config: Config, match_id: int, warden: Warden | None = None
) -> str:
    """Claim the match and play it if it still needs playing; returns what happened."""
    owner = warden.owner if warden is not None else new_owner()
    now = utcnow()
    until = now + dt.timedelta(seconds=config.lease_seconds)
    hosted = 0  # this process's hosted seats the match holds (arena.worker.hosting)
    try:
        with database.session() as session:
            match = _locked_match(session, match_id, _WITH_BOTS)
            if match is None:
                return "missing"
            wanted = sum(s.bot.hosted and not lifecycle.withheld(match, s) for s in match.seats)
            if wanted and not hosting.can_host():
                return HOSTED_ELSEWHERE  # said once, in one line, by can_host
            if wanted:
                if not hosting.reserve(config, wanted):
                    return HOSTED_BUSY
                hosted = wanted
            refused = claim(session, match, owner, until, now)
            if refused is not None:
                return refused  # a second delivery, or nothing left to do
            plan = lifecycle.plan(match)
        return play_claimed(database, config, match_id, owner, warden, plan)
    finally:
        hosting.release(hosted)


def play_claimed(
    database: Database,
    config: Config,
    match_id: int,
    owner: str,
    warden: Warden | None = None,
    plan: lifecycle.Plan | None = None,
) -> str:
    """Play a match that ``owner`` (this process) has claimed, and record it."""
    stop = warden.hold(match_id) if warden is not None else None
    clients: list[Any] = []
    try:
        if plan is None:  # adopted: claimed by the warden, loaded here
            with database.session() as session:
                match = session.get(Match, match_id, options=[_WITH_BOTS])
                assert match is not None
                plan = lifecycle.plan(match)
        for i in range(len(plan.seats)):  # one by one: those made are closed on an error
            clients.append(_client(database, config, plan, i))
        deadlines = [seat.deadline_ms for seat in plan.seats]
        # the backstop is sized for the arena's deadline, not a person's minute; each
        # seat's time bank may lengthen a match by as much
        banked = (plan.time_bank_ms or 0) * len(plan.seats) / 1000.0
        referee = Referee(
            max_strikes=config.max_strikes,
            deadline_ms=config.deadline_ms,
            time_limit=config.match_time_limit + banked if not any(deadlines) else None,
            time_bank_ms=plan.time_bank_ms,
        )
        writer = _live_writer(database, config.live_interval)
        feed = writer.feed(match_id, plan.attempt) if writer is not None else None
        began = time.monotonic()  # the match's duration (arena_match_seconds)
        try:
            record = referee.run(
                plan.game,
                clients,
                plan.seed,
                plan.options,
                match_id=plan.bots_match_id,
                deadlines_ms=deadlines,
                stop=stop,
                on_step=feed,
            )
        except MatchAbandoned:
            worker_metrics.result("abandoned")
            return "taken over"  # another worker holds the lease now
        except MatchTimeLimit as exc:
            _fail(database, config, match_id, owner, str(exc), final=True)
            worker_metrics.result("failed")
            return "failed"
        finally:
            if feed is not None:
                feed.close()
        # counted from the record, off the referee's hot path (arena.metrics.worker)
        played_for = time.monotonic() - began
        worker_metrics.match_played(
            plan.game, record.steps, played_for, worker_metrics.counted_seats(plan.seats)
        )
        if silenced({"steps": record.steps}) and _played_again(database, config, match_id, owner):
            return "played again: every bot went silent at once"
        recorded = _save_retrying(
            database, match_id, record, config.pause_after_forfeits, (owner, plan.attempt), stop
        )
    except Exception as exc:  # a bug of ours must not lose the match: mark it, keep going
        if isinstance(exc, SealingError):  # the keys of this worker: one line for its operator
            log.error(
                "match %s could not be played: %s", match_id, exc, extra={"match_id": match_id}
            )
        else:
            log.exception("match %s could not be played", match_id, extra={"match_id": match_id})
        worker_metrics.result("failed")
        _fail(database, config, match_id, owner, f"{type(exc).__name__}: {exc}", final=False)
        raise MatchNotPlayed(f"match {match_id}: {exc}") from exc
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                client.close()  # a hosted bot's process ends with its match
        if warden is not None:
            warden.release(match_id)
        if plan is not None and any(s.capacity is not None for s in plan.seats):
            _unpin(database, owner, match_id)
    worker_metrics.result("recorded" if recorded else "refused")
    return "recorded" if recorded else "not recorded"


def _played_again(database: Database, config: Config, match_id: int, owner: str) -> bool:
    """Every bot of the match went silent at once (``silenced``): most likely this worker
    was cut off from them, and no bot is charged for that.  The attempt is put back in
    the queue and sent again a lease later, then two leases later; a third silent attempt
    is recorded (the bots really are away).  False when the match is recorded now."""
    with database.session() as session:
        match = _locked_match(session, match_id, _WITH_SEATS)
        if match is None or match.status != "running" or match.lease_owner != owner:
            return False
        if match.failures + 1 >= MAX_FAILURES:
            return False
        lifecycle.fail(
            session,
            match,
            "every bot went silent at once (the worker's own network, most likely): played again",
            config.pause_after_forfeits,
            final=False,
        )
        delay = config.lease_seconds * match.failures
    log.warning(
        "match %s: every bot went silent at once; played again in %.0f s",
        match_id,
        delay,
        extra={"match_id": match_id},
    )
    try:
        run_match.apply_async((match_id,), countdown=delay)
    except Exception:  # the broker is away too: the wardens send it again
        log.warning("match %s: not sent again; a warden will", match_id)
    return True


def _save_retrying(
    database: Database,
    match_id: int,
    record: MatchRecord,
    pause_after: int,
    claimed: tuple[str, int],
    stop: threading.Event | None,
) -> bool:
    """``save_result``, tried again on a database error while the lease is this process's
    (``stop`` unset); without a warden, a few times.  False once the lease is no longer
    this process's (``stop`` set): nothing is recorded, quietly (another worker plays it)."""
    delays = iter(DATABASE_RETRY_SECONDS)
    while True:
        try:
            return save_result(database, match_id, record, pause_after, claimed)
        except DATABASE_ERRORS as exc:
            if stop is not None and stop.is_set():
                # fenced, or the match taken over: it is another worker's to record now
                log.warning(
                    "match %s: not recorded (%s) and no longer this process's",
                    match_id,
                    type(exc).__name__,
                    extra={"match_id": match_id},
                )
                return False
            delay = next(delays, None if stop is None else DATABASE_RETRY_SECONDS[-1])
            if delay is None:
                raise
            log.warning(
                "match %s: recording failed (%s); trying again in %s s",
                match_id,
                type(exc).__name__,
                delay,
                extra={"match_id": match_id},
            )
            if stop is not None and stop.wait(delay):
                return False  # fenced while waiting: as above
            if stop is None:
                time.sleep(delay)


def _unpin(database: Database, owner: str, match_id: int) -> None:
    """Let another worker play the bots of this match that this process no longer does."""
    try:
        with database.session() as session:
            seated = select(MatchSeat.bot_id).where(MatchSeat.match_id == match_id)
            lifecycle.unpin_idle(session, owner, session.scalars(seated))
    except Exception:  # the pins lapse with the lease anyway
        log.exception(
            "the pins of match %s's bots were not let go", match_id, extra={"match_id": match_id}
        )


def _fail(
    database: Database, config: Config, match_id: int, owner: str, reason: str, final: bool
) -> None:
    """The attempt ``owner`` holds failed: the match is queued again or failed."""
    with database.session() as session:
        match = _locked_match(session, match_id, _WITH_SEATS)
        if match is not None and match.status == "running" and match.lease_owner == owner:
            lifecycle.fail(session, match, reason, config.pause_after_forfeits, final)


_WITH_SEATS = selectinload(Match.seats)
_WITH_BOTS = selectinload(Match.seats).selectinload(MatchSeat.bot)


def _locked_match(session: Session, match_id: int, *load: Any) -> Match | None:
    """The match, its row locked (its seats, and what else ``load`` says, in queries of
    their own, not locked)."""
    query = select(Match).where(Match.id == match_id).with_for_update().options(*load)
    return session.scalars(query).first()


class _LeaseLapsed(Exception):
    """The lease ran out before the result's transaction could commit: roll it back."""


def save_result(
    database: Database,
    match_id: int,
    record: MatchRecord,
    pause_after: int = 3,
    claimed: tuple[str, int] | None = None,
) -> bool:
    """Write the result, the replay and (once settled: ``arena.worker.lifecycle``) the rating
    changes and standings in one transaction, with each seat's faults; a bot that
    forfeited ``pause_after`` matches in a row is paused.  ``claimed``: the (owner,
    attempt) of the worker that played it, which must still be the match's (None: an
    in-process caller that claimed nothing).  Returns False when nothing was written:
    another delivery got there first, the match was claimed again since, or its lease
    lapsed before the transaction could commit (it waited on locks that long)."""
    try:
        with database.session() as session:
            match = _locked_match(session, match_id, _WITH_SEATS)
            expires = match.lease_expires_at if match is not None else None
            ended = lifecycle.finish(session, match, record, pause_after, claimed)
            if ended is lifecycle.Ended.REFUSED:
                return False
            assert match is not None
            game, rated = match.game, match.rated
            session.flush()
            if claimed is not None and (expires is None or aware(expires) <= utcnow()):
                # fenced at the commit too: nothing is recorded past the lease
                raise _LeaseLapsed
    except _LeaseLapsed:
        log.warning("match %s: its lease lapsed while recording; not recorded", match_id)
        return False
    if rated and ended is lifecycle.Ended.TOURNAMENT_OVER:
        refit_ratings.delay(game)  # the fitted ratings follow each finished tournament
    return True
