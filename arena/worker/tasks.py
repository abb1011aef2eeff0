"""Celery tasks: playing matches, the rated ladder, and housekeeping.

``run_match(match_id)`` takes only the id and reloads everything from the database.  It
is idempotent: a second delivery of a finished match, or of one that another worker is
playing under a live lease, is a no-op; when two workers do play the same match (a lease
that lapsed while its worker was alive), the result is written under a lock by the
first to finish only.  That makes ``acks_late`` with ``task_reject_on_worker_lost`` safe:
a worker dying mid-match means the match is played again from its seed, never recorded
twice, and the warden (``arena.worker.warden``) of another worker takes it over within a lease
and a round, whatever the broker.

A match is I/O-bound: it waits on its bots almost all the time.  So a worker process
plays many at once (``ARENA_WORKER_CONCURRENCY``, 100 by default) on Celery's ``threads``
pool, one thread per match, the matches sharing one keep-alive connection pool per bot
endpoint (``arena.match.pools.Pools``).  Threads were chosen by measurement over gevent and
over an asyncio referee: see ``docs/workers.md``.  Matches and the other tasks (the
ladder, refits, housekeeping) have queues of their own, so the latter never wait behind
a tournament's backlog.

Ratings change in the same transaction as the result, under row locks (PostgreSQL) or
the database lock (SQLite, ``BEGIN IMMEDIATE``), and each rated result takes the next
number of a locked counter, so ``arena ratings rebuild`` can replay them in that order.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import threading
from collections.abc import Iterable
from typing import Any, NamedTuple

from celery import Celery
from celery.signals import worker_process_init, worker_ready, worker_shutdown
from kombu import Exchange, Queue
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from arena.competition.ratings import fit_ratings, replay_elo
from arena.config import Config, from_env
from arena.db import Database
from arena.match.http_client import HttpClient
from arena.match.pools import Pools
from arena.match.referee import MatchAbandoned, MatchRecord, MatchTimeLimit, Referee
from arena.models import (
    MATCH_OPEN,
    Bot,
    FittedRating,
    Ladder,
    Match,
    MatchSeat,
    Rating,
    RatingFit,
    utcnow,
)
from arena.worker import broker, lifecycle, live
from arena.worker.lifecycle import ELO, MAX_FAILURES
from arena.worker.warden import Warden, new_owner

log = logging.getLogger(__name__)

celery = Celery("arena")
MATCH_QUEUE = "arena.matches"
CONTROL_QUEUE = "arena.control"  # the ladder, refits and housekeeping
QUEUES = (MATCH_QUEUE, CONTROL_QUEUE)

_state: dict[str, Any] = {}
_state_lock = threading.Lock()


def celery_settings(config: Config) -> dict[str, Any]:
    """The Celery settings for ``config``."""
    settings: dict[str, Any] = {
        "broker_url": config.broker_url,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_queues": tuple(Queue(q, Exchange(q), routing_key=q) for q in QUEUES),
        "task_default_queue": CONTROL_QUEUE,
        "task_routes": {"arena.run_match": {"queue": MATCH_QUEUE}},
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a broker that restarts is waited for
        # a broker that goes away does not stop the matches being played: their results
        # go to the database, and a delivery made again finds them finished
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        # after a reconnection, Celery lowers the prefetch count and raises it again with
        # a basic.qos per finished task; on RabbitMQ the worker was seen to hang for good
        # in one of those calls (a threads pool, a broker restarted mid-tournament)
        "worker_enable_prefetch_count_reduction": False,
        "worker_hijack_root_logger": False,
        "timezone": "UTC",
        "beat_schedule": {
            "ladder": {"task": "arena.ladder_round", "schedule": config.ladder_interval},
            "housekeeping": {"task": "arena.housekeeping", "schedule": 30.0},
        },
    }
    if config.embedded_broker:
        # kombu's own file-system transport loses messages to a race (see arena.worker.broker)
        settings["broker_transport"] = broker.TRANSPORT
        settings["broker_transport_options"] = config.broker_folders()
    else:
        # from the URL's scheme; for Redis, kombu's transport with a repair (arena.worker.broker)
        scheme = config.broker_url.partition("://")[0]
        settings["broker_transport"] = broker.REDIS_TRANSPORT if scheme == "redis" else None
        # Redis hands an unacknowledged message out again after this long: never while
        # its match may still be running (the warden recovers a dead worker's match
        # long before that)
        settings["broker_transport_options"] = {"visibility_timeout": config.match_time_limit + 60}
    return settings


def configure(config: Config) -> Celery:
    """Bind the Celery app and the tasks' database to ``config``."""
    settings = celery_settings(config)
    # connections pooled for a previous broker must not outlive it
    if celery._pool is not None:
        celery._pool.force_close_all()
    celery._after_fork()
    celery.conf.update(settings)
    old = _state.get("db")
    if old is not None:
        old.dispose()
    pools = _state.get("pools")
    if pools is not None:
        pools.close()
    for writer in (_state.get("live") or {}).values():
        writer.close()
    _state.update(config=config, db=None, pools=None, live={})
    return celery


def _config() -> Config:
    if "config" not in _state:
        configure(from_env())
    return _state["config"]


def _db() -> Database:
    _config()
    with _state_lock:
        if _state.get("db") is None:
            _state["db"] = Database(_state["config"].database_url)
        return _state["db"]


def _pools() -> Pools:
    """The connection pools of this process, shared by all its matches."""
    config = _config()
    with _state_lock:
        if _state.get("pools") is None:
            _state["pools"] = Pools(
                max_connections=config.connections_per_bot,
                check_address=config.address_policy.check,
            )
        return _state["pools"]


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
    return warden or start_warden(capacity=_config().worker_concurrency)


def start_warden(capacity: int) -> Warden:
    """Keep the leases of this process's matches and recover others' (``arena.worker.warden``)."""
    config = _config()
    database = _db()
    with _state_lock:
        if _state.get("warden") is not None:
            return _state["warden"]
        warden = Warden(
            database,
            lease_seconds=config.lease_seconds,
            capacity=capacity,
            claim=claim,
            play=lambda match_id: play_claimed(_db(), _config(), match_id, warden.owner, warden),
            enqueue=lambda match_ids: enqueue_matches(_config(), match_ids),
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
    _state["pools"] = None
    start_warden(capacity=1)


@worker_ready.connect
def _worker_ready(sender: Any = None, **_: Any) -> None:
    """A pool of threads plays its matches in this process: the warden lives here."""
    pool = getattr(sender, "pool", None)
    if pool is not None and "prefork" not in type(pool).__module__:
        start_warden(capacity=getattr(pool, "limit", None) or 1)


@worker_shutdown.connect
def _worker_shutdown(**_: Any) -> None:
    warden = _state.get("warden")
    if warden is not None:
        warden.stop()


BUSY_RETRY_SECONDS = 2  # then a match whose bot plays in another worker is tried again
ENQUEUE_INLINE = 100  # more matches than this are sent by a worker (``send_matches``)


def enqueue_matches(config: Config, match_ids: Iterable[int]) -> None:
    """Send ``run_match`` for each id.  Call only after the commit that wrote them.

    A few are sent at once; more (a tournament of thousands) go in one ``send_matches``
    message that a worker fans out, so the request that created them does not wait for
    thousands of broker writes (about a millisecond each on the file-system broker)."""
    if _state.get("config") is not config:
        configure(config)
    ids = list(match_ids)
    if len(ids) > ENQUEUE_INLINE:
        send_matches.delay(ids)
    else:
        _send(ids)


def _send(match_ids: Iterable[int]) -> int:
    # one producer (one broker connection and channel) for all of them: half the time
    # per message of ``delay``, which acquires one each time
    sent = 0
    with celery.producer_or_acquire() as producer:
        for match_id in match_ids:
            run_match.apply_async((match_id,), producer=producer)
            sent += 1
    return sent


@celery.task(name="arena.send_matches", acks_late=True, reject_on_worker_lost=True)
def send_matches(match_ids: list[int]) -> int:
    """``run_match`` for each id, in order.  Sent again after a crash, a match gets two
    messages, which ``run_match`` tolerates (the second finds it claimed or finished)."""
    return _send(match_ids)


# -- playing a match ----------------------------------------------------------------------


@celery.task(bind=True, name="arena.run_match", acks_late=True, reject_on_worker_lost=True)
def run_match(self: Any, match_id: int, waiting: bool = False) -> str:
    """Play the match; ``waiting``: a message this task sent itself while the match's bot
    played in another worker (not a message the broker still had: see ``Warden.resend``)."""
    warden = _warden()
    if not waiting:
        warden.delivered()
    try:
        played = play_match(_db(), _config(), match_id, warden)
    except MatchNotPlayed as exc:
        # the match is queued again (its failures are counted): try once more shortly
        raise self.retry(exc=exc, countdown=2, max_retries=MAX_FAILURES) from exc
    if played == lifecycle.BUSY:
        # another worker sends the requests of one of its bots: wait for it to finish
        raise self.retry(countdown=BUSY_RETRY_SECONDS, max_retries=None, kwargs={"waiting": True})
    return played


class MatchNotPlayed(RuntimeError):
    """Playing or recording a match failed for a reason of the server's own."""


def claim(
    session: Session, match: Match, owner: str, until: dt.datetime, now: dt.datetime
) -> str | None:
    """``arena.worker.lifecycle.claim``, the rotations it queues again sent to the broker."""
    return lifecycle.claim(
        session, match, owner, until, now, enqueue=lambda ids: enqueue_matches(_config(), ids)
    )


def play_match(
    database: Database, config: Config, match_id: int, warden: Warden | None = None
) -> str:
    """Claim the match and play it if it still needs playing; returns what happened."""
    owner = warden.owner if warden is not None else new_owner()
    now = utcnow()
    until = now + dt.timedelta(seconds=config.lease_seconds)
    with database.session() as session:
        match = _locked_match(session, match_id, _WITH_BOTS)
        if match is None:
            return "missing"
        refused = claim(session, match, owner, until, now)
        if refused is not None:
            return refused  # a second delivery, or nothing left to do
        plan = lifecycle.plan(match)
    return play_claimed(database, config, match_id, owner, warden, plan)


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
    try:
        if plan is None:  # adopted: claimed by the warden, loaded here
            with database.session() as session:
                match = session.get(Match, match_id, options=[_WITH_BOTS])
                assert match is not None
                plan = lifecycle.plan(match)
        pools = _pools()
        clients = [
            HttpClient(s.endpoint, s.secret, s.name, pool=pools.get(s.endpoint, s.capacity))
            for s in plan.seats
        ]
        referee = Referee(
            max_strikes=config.max_strikes,
            deadline_ms=config.deadline_ms,
            time_limit=config.match_time_limit,
        )
        writer = _live_writer(database, config.live_interval)
        feed = writer.feed(match_id, plan.attempt) if writer is not None else None
        try:
            record = referee.run(
                plan.game,
                clients,
                plan.seed,
                plan.options,
                match_id=plan.bots_match_id,
                stop=stop,
                on_step=feed,
            )
        except MatchAbandoned:
            return "taken over"  # another worker holds the lease now
        except MatchTimeLimit as exc:
            _fail(database, config, match_id, owner, str(exc), final=True)
            return "failed"
        finally:
            if feed is not None:
                feed.close()
        recorded = save_result(
            database, match_id, record, config.pause_after_forfeits, (owner, plan.attempt)
        )
    except Exception as exc:  # a bug of ours must not lose the match: mark it, keep going
        log.exception("match %s could not be played", match_id)
        _fail(database, config, match_id, owner, f"{type(exc).__name__}: {exc}", final=False)
        raise MatchNotPlayed(f"match {match_id}: {exc}") from exc
    finally:
        if warden is not None:
            warden.release(match_id)
        if plan is not None and any(s.capacity is not None for s in plan.seats):
            _unpin(database, owner, match_id)
    return "recorded" if recorded else "not recorded"


def _unpin(database: Database, owner: str, match_id: int) -> None:
    """Let another worker play the bots of this match that this process no longer does."""
    try:
        with database.session() as session:
            seated = select(MatchSeat.bot_id).where(MatchSeat.match_id == match_id)
            lifecycle.unpin_idle(session, owner, session.scalars(seated))
    except Exception:  # the pins lapse with the lease anyway
        log.exception("the pins of match %s's bots were not let go", match_id)


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
    another delivery got there first, or the match was claimed again since."""
    with database.session() as session:
        match = _locked_match(session, match_id, _WITH_SEATS)
        ended = lifecycle.finish(session, match, record, pause_after, claimed)
        if ended is lifecycle.Ended.REFUSED:
            return False
        assert match is not None
        game, rated = match.game, match.rated
    if rated and ended is lifecycle.Ended.TOURNAMENT_OVER:
        refit_ratings.delay(game)  # the fitted ratings follow each finished tournament
    return True


# -- ratings from the history ------------------------------------------------------------------

REFIT_STALE_AFTER = dt.timedelta(minutes=10)  # a refit's claim this old is a crashed one's
REFIT_RETRY_SECONDS = 15  # a refit task that found another one running tries again after this


def _rated_rows(
    session: Session, game: str
) -> tuple[int | None, list[tuple[list[int], list[int]]]]:
    """The game's newest rating_seq and its rated history up to it, from one query (each
    rated match's seats joined, in the order of rating_seq and seat)."""
    rows = session.execute(
        select(Match.rating_seq, MatchSeat.bot_id, MatchSeat.rank)
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.game == game, Match.rating_seq.is_not(None))
        .order_by(Match.rating_seq, MatchSeat.seat)
    )
    history: list[tuple[list[int], list[int]]] = []
    newest: int | None = None
    bots: list[int] = []
    ranks: list[int] = []
    for seq, bot_id, rank in rows:
        if seq != newest:
            newest, bots, ranks = seq, [], []
            history.append((bots, ranks))
        bots.append(bot_id)
        ranks.append(rank)
    return newest, history


def rated_history(session: Session, game: str) -> list[tuple[list[int], list[int]]]:
    """(bots by seat, ranks) of every rated result, in the order they were rated."""
    return _rated_rows(session, game)[1]


def rebuild_ratings(database: Database, game: str, write: bool = False) -> dict[str, Any]:
    """Recompute the Elo of every bot from the rated history and compare it with what is
    stored; also refit the maximum-likelihood ratings, whether or not the history changed
    since the last fit.  With ``write``, store the recomputed Elo (the fitted ratings are
    always stored)."""
    with database.session() as session:
        newest, history = _rated_rows(session, game)
        elo = replay_elo(history, ELO)
        stored = {
            r.bot_id: r.elo for r in session.scalars(select(Rating).where(Rating.game == game))
        }
        differences = {
            bot_id: (stored.get(bot_id), elo.get(bot_id))
            for bot_id in set(elo) | set(stored)
            if stored.get(bot_id) != elo.get(bot_id)
        }
        if write:
            for row in session.scalars(select(Rating).where(Rating.game == game)):
                if row.bot_id in elo:
                    row.elo = elo[row.bot_id]
        _store_fit(session, game, newest, fit_ratings(history) if history else {})
    return {"game": game, "matches": len(history), "elo": elo, "differences": differences}


def _store_fit(session: Session, game: str, rating_seq: int | None, fitted: dict[int, Any]) -> None:
    """Replace the game's fitted ratings with ``fitted`` (``arena.competition.ratings.FittedRating``
    by bot id), and record ``rating_seq``, the newest rated result the fit includes."""
    now = utcnow()
    session.execute(delete(FittedRating).where(FittedRating.game == game))
    session.add_all(
        FittedRating(
            bot_id=bot_id,
            game=game,
            rating=f.rating,
            low=f.low,
            high=f.high,
            matches=f.games,
            fitted_at=now,
        )
        for bot_id, f in fitted.items()
    )
    _ensure_fit_row(session, game)
    session.execute(
        update(RatingFit)
        .where(RatingFit.game == game)
        .values(rating_seq=rating_seq, fitted_at=now)
        .execution_options(synchronize_session=False)
    )


def _ensure_fit_row(session: Session, game: str) -> None:
    """Insert the game's ``rating_fits`` row unless there is one; a concurrent insert of
    the same row (another refit's, committed first) is no error."""
    if session.scalar(select(RatingFit.game).where(RatingFit.game == game)) is not None:
        return
    try:
        with session.begin_nested():
            session.add(RatingFit(game=game))
    except IntegrityError:
        pass  # PostgreSQL: the other transaction inserted it and committed


def _claim_refit(session: Session, game: str, now: dt.datetime, stale_after: dt.timedelta) -> bool:
    """Claim the game's refit at ``now``: one conditional UPDATE, so of two claims made
    at once one only changes the row (PostgreSQL: the second waits on the row lock, then
    finds the row claimed; SQLite: transactions are serialised).  A claim older than
    ``stale_after`` is a crashed refit's and is taken over."""
    _ensure_fit_row(session, game)
    claimed = session.execute(
        update(RatingFit)
        .where(
            RatingFit.game == game,
            or_(RatingFit.running_since.is_(None), RatingFit.running_since < now - stale_after),
        )
        .values(running_since=now)
        .execution_options(synchronize_session=False)
    )
    return claimed.rowcount == 1


def _release_refit(session: Session, game: str, claimed_at: dt.datetime) -> bool:
    """Release the claim made at ``claimed_at``; False if it is no longer there (it
    outlived stale_after and another refit took it over)."""
    released = session.execute(
        update(RatingFit)
        .where(RatingFit.game == game, RatingFit.running_since == claimed_at)
        .values(running_since=None)
        .execution_options(synchronize_session=False)
    )
    return released.rowcount == 1


class Refit(NamedTuple):
    """What a refit did: ``fitted``, ``unchanged`` (no rated result since the stored
    fit), ``running`` (another refit of the game holds the claim) or ``taken over``
    (this one outlived its claim: its fit was not stored); and the matches it fitted."""

    status: str
    matches: int = 0


def refit_game(
    database: Database,
    game: str,
    *,
    now: dt.datetime | None = None,
    stale_after: dt.timedelta = REFIT_STALE_AFTER,
) -> Refit:
    """Refit the game's maximum-likelihood ratings, debounced: at most one refit of a
    game runs at a time, and it fits only if the history changed since the stored fit.

    1. Claim the game's ``rating_fits`` row (``_claim_refit``); if another refit holds
       it, return.  In the same transaction, if the game's newest rating_seq is the one
       of the stored fit, release the claim and return: nothing to fit.
    2. Load the history (one query) and fit it, outside any transaction: on SQLite a
       transaction holds the database lock, which results being recorded wait on.
    3. In one transaction: release the claim (if it is still this one's), store the
       fitted ratings and the newest rating_seq they include.
    On an exception the claim is released."""
    claimed_at = now or utcnow()
    with database.session() as session:
        if not _claim_refit(session, game, claimed_at, stale_after):
            return Refit("running")
        newest = session.scalar(select(func.max(Match.rating_seq)).where(Match.game == game))
        stored = session.scalar(select(RatingFit.rating_seq).where(RatingFit.game == game))
        if newest == stored:
            _release_refit(session, game, claimed_at)
            return Refit("unchanged")
    try:
        with database.session() as session:
            newest, history = _rated_rows(session, game)
        fitted = fit_ratings(history) if history else {}
        with database.session() as session:
            if not _release_refit(session, game, claimed_at):
                log.warning("refit of %s outlived its claim: its fit is not stored", game)
                return Refit("taken over")
            _store_fit(session, game, newest, fitted)
    except BaseException:
        with database.session() as session:
            _release_refit(session, game, claimed_at)
        raise
    return Refit("fitted", len(history))


@celery.task(
    bind=True,
    name="arena.refit_ratings",
    # long enough to outlast a crashed refit's claim, which is then taken over
    max_retries=int(REFIT_STALE_AFTER.total_seconds()) // REFIT_RETRY_SECONDS + 2,
)
def refit_ratings(self: Any, game: str) -> int:
    """Refit after a tournament; the number of matches fitted (0: no fit was needed).

    If another refit of the game is running, it may have read the history before this
    tournament's last result: the task tries again later, and that try fits only if the
    stored fit does not include the newest result."""
    refit = refit_game(_db(), game)
    if refit.status == "running" and not self.request.called_directly:
        raise self.retry(countdown=REFIT_RETRY_SECONDS)
    return refit.matches


# -- the rated ladder ------------------------------------------------------------------------


@celery.task(name="arena.ladder_round")
def ladder_round() -> list[int]:
    return schedule_ladder(_db(), _config())


def schedule_ladder(database: Database, config: Config, seed: int | None = None) -> list[int]:
    """For every game whose ladder is on, pair active bots close in rating.

    Bots are sorted by Elo and cut into consecutive groups of ``seats_per_match`` from a
    random offset, so neighbours in the ranking meet; a game that still has queued ladder
    matches gets no more until they are played."""
    rng = random.Random(seed)
    created: list[int] = []
    with database.session() as session:
        for ladder in session.scalars(select(Ladder).where(Ladder.enabled.is_(True))):
            waiting = session.scalar(
                select(func.count(Match.id)).where(
                    Match.game == ladder.game,
                    Match.kind == "ladder",
                    Match.status.in_(MATCH_OPEN),
                )
            )
            if waiting:
                continue
            bots = [
                b
                for b in session.scalars(select(Bot).where(Bot.status == "active"))
                if ladder.game in b.games
            ]
            k = ladder.seats_per_match
            if len(bots) < k:
                continue
            elo = {
                r.bot_id: r.elo
                for r in session.scalars(select(Rating).where(Rating.game == ladder.game))
            }
            bots.sort(key=lambda b: (-elo.get(b.id, ELO.initial), b.id))
            offset = rng.randrange(k)
            order = bots[offset:] + bots[:offset]
            for start in range(0, len(order) - k + 1, k):
                group = order[start : start + k]
                rng.shuffle(group)
                match = Match(
                    kind="ladder",
                    game=ladder.game,
                    options={},
                    seed=rng.getrandbits(31),
                    rated=True,
                )
                match.seats = [MatchSeat(seat=i, bot_id=b.id) for i, b in enumerate(group)]
                session.add(match)
                session.flush()
                created.append(match.id)
    enqueue_matches(config, created)
    return created


# -- housekeeping ------------------------------------------------------------------------------


@celery.task(name="arena.housekeeping")
def housekeeping() -> list[str]:
    """Refit the ratings of games with newer rated results (the ladder's matches belong
    to no tournament, so nothing else refits them).  Recovering matches is not its job:
    every worker's warden does that, with or without beat."""
    return refit_stale(_db())


def refit_stale(database: Database) -> list[str]:
    """Refit the games with rated results newer than their stored fit; the games refit.
    A game whose refit is running elsewhere is left to it (or to the next round), and a
    game whose refit fails does not stop the others."""
    with database.session() as session:
        newest = session.execute(
            select(Match.game, func.max(Match.rating_seq))
            .where(Match.rating_seq.is_not(None))
            .group_by(Match.game)
        ).all()
        fitted = dict(session.execute(select(RatingFit.game, RatingFit.rating_seq)).all())
    refit = []
    for game in sorted(game for game, seq in newest if fitted.get(game) != seq):
        try:
            if refit_game(database, game).status == "fitted":
                refit.append(game)
        except Exception:
            log.exception("refit of %s failed", game)
    return refit
