"""Celery tasks: playing matches, the rated ladder, and housekeeping.

``run_match(match_id)`` takes only the id and reloads everything from the database.  It
is idempotent: a second delivery of a finished match is a no-op, and when two deliveries
play the same match at once, the result is written under a lock by the first one only.
That makes ``acks_late`` with ``task_reject_on_worker_lost`` safe: a worker dying
mid-match means the match is played again from its seed, never recorded twice.

Ratings change in the same transaction as the result, under row locks (PostgreSQL) or
the database lock (SQLite, ``BEGIN IMMEDIATE``), and each rated result takes the next
number of a locked counter, so ``arena ratings rebuild`` can replay them in that order.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Iterable
from typing import Any

from celery import Celery
from celery.signals import worker_process_init
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena import broker
from arena.clients import HttpClient
from arena.config import Config, from_env
from arena.db import Database
from arena.models import (
    Bot,
    Counter,
    FittedRating,
    Ladder,
    Match,
    MatchSeat,
    Rating,
    RatingChange,
    Replay,
    Tournament,
    utcnow,
)
from arena.ratings import EloConfig, apply_match, fit_ratings, replay_elo
from arena.referee import MatchRecord, Referee

log = logging.getLogger(__name__)

celery = Celery("arena")
ELO = EloConfig()
MAX_ATTEMPTS = 3  # a match that fails this often is marked failed, not retried forever
RATING_SEQ = "rating_seq"
STALE_QUEUED = dt.timedelta(minutes=10)  # queued this long: the enqueue may have been lost
STALE_RUNNING = dt.timedelta(minutes=15)  # running this long: its worker is gone

_state: dict[str, Any] = {}


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
        "broker_connection_retry_on_startup": True,
        "worker_hijack_root_logger": False,
        "timezone": "UTC",
        "beat_schedule": {
            "ladder": {"task": "arena.ladder_round", "schedule": config.ladder_interval},
            "housekeeping": {"task": "arena.housekeeping", "schedule": 30.0},
        },
    }
    if config.embedded_broker:
        # kombu's own file-system transport loses messages to a race (see arena.broker)
        settings["broker_transport"] = broker.TRANSPORT
        settings["broker_transport_options"] = config.broker_folders()
    else:
        settings["broker_transport"] = None  # from the URL's scheme
        settings["broker_transport_options"] = {}
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
    _state.update(config=config, db=None)
    return celery


def _config() -> Config:
    if "config" not in _state:
        configure(from_env())
    return _state["config"]


def _db() -> Database:
    _config()
    if _state.get("db") is None:
        _state["db"] = Database(_state["config"].database_url)
    return _state["db"]


@worker_process_init.connect
def _fresh_connections(**_: Any) -> None:
    """A forked worker process must not share its parent's database connections."""
    if _state.get("db") is not None:
        _state["db"].engine.dispose(close=False)


def enqueue_matches(config: Config, match_ids: Iterable[int]) -> None:
    """Send ``run_match`` for each id.  Call only after the commit that wrote them."""
    if _state.get("config") is not config:
        configure(config)
    for match_id in match_ids:
        run_match.delay(match_id)


# -- playing a match ----------------------------------------------------------------------


@celery.task(bind=True, name="arena.run_match", acks_late=True, reject_on_worker_lost=True)
def run_match(self: Any, match_id: int) -> str:
    try:
        return play_match(_db(), _config(), match_id)
    except MatchNotPlayed as exc:
        # the match is queued again (its attempts are counted): try once more shortly
        raise self.retry(exc=exc, countdown=2, max_retries=MAX_ATTEMPTS) from exc


class MatchNotPlayed(RuntimeError):
    """Playing or recording a match failed for a reason of the server's own."""


def play_match(database: Database, config: Config, match_id: int) -> str:
    """Play the match if it still needs playing; returns what happened."""
    with database.session() as session:
        match = _locked_match(session, match_id)
        if match is None:
            return "missing"
        if match.status in ("finished", "failed", "cancelled"):
            return f"already {match.status}"  # a second delivery: nothing to do
        if match.attempts >= MAX_ATTEMPTS:
            match.status = "failed"
            match.error = f"gave up after {match.attempts} attempts"
            match.finished_at = utcnow()
            _maybe_finish_tournament(session, match)
            return "failed"
        match.status = "running"
        match.attempts += 1
        match.started_at = utcnow()
        seats = [(s.bot.endpoint, s.bot.signing_secret, s.bot.name) for s in match.seats]
        game, seed, options = match.game, match.seed, match.options
    policy = config.address_policy
    clients = [HttpClient(e, secret, name, check_address=policy.check) for e, secret, name in seats]
    try:
        referee = Referee(max_strikes=config.max_strikes, deadline_ms=config.deadline_ms)
        record = referee.run(game, clients, seed, options, match_id=str(match_id))
        recorded = save_result(database, match_id, record)
    except Exception as exc:  # a bug of ours must not lose the match: mark it, keep going
        log.exception("match %s could not be played", match_id)
        with database.session() as session:
            match = _locked_match(session, match_id)
            if match is not None and match.status == "running":
                match.status = "queued" if match.attempts < MAX_ATTEMPTS else "failed"
                match.error = f"{type(exc).__name__}: {exc}"[:500]
                if match.status == "failed":
                    _maybe_finish_tournament(session, match)
        raise MatchNotPlayed(f"match {match_id}: {exc}") from exc
    finally:
        for client in clients:
            client.close()
    return "recorded" if recorded else "duplicate"


def _locked_match(session: Session, match_id: int) -> Match | None:
    return session.scalars(select(Match).where(Match.id == match_id).with_for_update()).first()


def save_result(database: Database, match_id: int, record: MatchRecord) -> bool:
    """Write the result, the replay and the rating changes in one transaction.

    Returns False when another delivery of the same match got there first."""
    with database.session() as session:
        match = _locked_match(session, match_id)
        if match is None or match.status in ("finished", "cancelled"):
            return False
        outcome = record.outcome or {}
        ranks = outcome["ranks"]
        for seat in match.seats:
            seat.rank = ranks[seat.seat]
            seat.score = float(outcome["scores"][seat.seat])
            seat.strikes = record.strikes[seat.seat]
        session.add(Replay(match_id=match_id, record=record.to_json()))
        if match.rated:
            _rate(session, match, ranks)
        match.status = "finished"
        match.result = outcome
        match.error = None
        match.finished_at = utcnow()
        tournament_over = _maybe_finish_tournament(session, match)
        game, rated = match.game, match.rated
    if rated and tournament_over:
        refit_ratings.delay(game)  # the fitted ratings follow each finished tournament
    return True


def _rate(session: Session, match: Match, ranks: list[int]) -> None:
    # the lock serialises rated results: their order is the order of rating_seq
    counter = session.scalars(
        select(Counter).where(Counter.name == RATING_SEQ).with_for_update()
    ).one()
    counter.value += 1
    match.rating_seq = counter.value
    bot_ids = [s.bot_id for s in match.seats]
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
        row = rows.get(bot_id)
        if row is None:
            row = Rating(bot_id=bot_id, game=match.game, elo=after, matches=0)
            session.add(row)
        row.elo = after
        row.matches += 1
        session.add(
            RatingChange(
                match_id=match.id, bot_id=bot_id, game=match.game, before=before, after=after
            )
        )


def _maybe_finish_tournament(session: Session, match: Match) -> bool:
    """Mark the match's tournament finished if this was its last open match."""
    if match.tournament_id is None:
        return False
    open_matches = session.scalar(
        select(func.count(Match.id)).where(
            Match.tournament_id == match.tournament_id,
            Match.status.in_(("queued", "running")),
            Match.id != match.id,
        )
    )
    if open_matches == 0:
        tournament = session.get(Tournament, match.tournament_id)
        if tournament is not None and tournament.status == "running":
            tournament.status = "finished"
            tournament.finished_at = utcnow()
            return True
    return False


# -- ratings from the history ------------------------------------------------------------------


def rated_history(session: Session, game: str) -> list[tuple[list[int], list[int]]]:
    """(bots by seat, ranks) of every rated result, in the order they were rated."""
    matches = session.scalars(
        select(Match)
        .where(Match.game == game, Match.rating_seq.is_not(None))
        .order_by(Match.rating_seq)
    )
    return [([s.bot_id for s in m.seats], [s.rank for s in m.seats]) for m in matches]


def rebuild_ratings(database: Database, game: str, write: bool = False) -> dict[str, Any]:
    """Recompute the Elo of every bot from the rated history and compare it with what is
    stored; also refit the maximum-likelihood ratings.  With ``write``, store the
    recomputed Elo (the fitted ratings are always stored)."""
    with database.session() as session:
        history = rated_history(session, game)
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
        _store_fit(session, game, history)
    return {"game": game, "matches": len(history), "elo": elo, "differences": differences}


def _store_fit(session: Session, game: str, history: list[tuple[list[int], list[int]]]) -> None:
    fitted = fit_ratings(history) if history else {}
    for row in session.scalars(select(FittedRating).where(FittedRating.game == game)):
        session.delete(row)
    session.flush()
    for bot_id, f in fitted.items():
        session.add(
            FittedRating(
                bot_id=bot_id, game=game, rating=f.rating, low=f.low, high=f.high, matches=f.games
            )
        )


@celery.task(name="arena.refit_ratings")
def refit_ratings(game: str) -> int:
    with _db().session() as session:
        history = rated_history(session, game)
        _store_fit(session, game, history)
    return len(history)


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
                    Match.status.in_(("queued", "running")),
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
def housekeeping() -> list[int]:
    refit_stale(_db())
    return requeue_stale(_db(), _config())


def refit_stale(database: Database) -> list[str]:
    """Refit the games with rated results newer than their last fit (ladder matches
    belong to no tournament, so nothing else refits them)."""
    with database.session() as session:
        newest = dict(
            session.execute(
                select(Match.game, func.max(Match.finished_at))
                .where(Match.rating_seq.is_not(None))
                .group_by(Match.game)
            ).all()
        )
        fitted = dict(
            session.execute(
                select(FittedRating.game, func.max(FittedRating.fitted_at)).group_by(
                    FittedRating.game
                )
            ).all()
        )
    stale = [g for g, when in newest.items() if fitted.get(g) is None or fitted[g] < when]
    for game in stale:
        with database.session() as session:
            _store_fit(session, game, rated_history(session, game))
    return stale


def requeue_stale(database: Database, config: Config) -> list[int]:
    """Send again the matches whose message may be lost: queued long ago (the enqueue
    after the commit failed) or running far longer than any match takes (its worker
    died and the broker cannot redeliver, as the embedded file-system broker cannot)."""
    now = utcnow()
    with database.session() as session:
        stale = session.scalars(
            select(Match.id).where(
                ((Match.status == "queued") & (Match.created_at < now - STALE_QUEUED))
                | ((Match.status == "running") & (Match.started_at < now - STALE_RUNNING))
            )
        ).all()
    enqueue_matches(config, stale)
    return list(stale)
