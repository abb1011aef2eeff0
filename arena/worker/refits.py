"""The ratings from the rated history: the maximum-likelihood refit after each
tournament (``refit_ratings``, debounced per game) and ``arena ratings rebuild``, which
replays the Elo of every rated result in the order they were rated.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, NamedTuple

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.competition.ratings import fit_ratings, replay_elo
from arena.db import Database
from arena.models import FittedRating, Match, MatchSeat, Rating, RatingFit, utcnow
from arena.worker import celery_app
from arena.worker.celery_app import celery
from arena.worker.lifecycle import ELO

log = logging.getLogger(__name__)


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
    with database.long_session() as session:  # the fit may take a while on a long history
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
    refit = refit_game(celery_app._db(), game)
    if refit.status == "running" and not self.request.called_directly:
        raise self.retry(countdown=REFIT_RETRY_SECONDS)
    return refit.matches
