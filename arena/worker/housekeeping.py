"""Housekeeping (beat, every 30 s): the refits that no tournament's end asked for."""

from __future__ import annotations

import logging

from sqlalchemy import func, select

from arena.db import Database
from arena.models import Match, RatingFit
from arena.worker import celery_app
from arena.worker.celery_app import celery
from arena.worker.refits import refit_game

log = logging.getLogger(__name__)


@celery.task(name="arena.housekeeping")
def housekeeping() -> list[str]:
    """Refit the ratings of games with newer rated results (the ladder's matches belong
    to no tournament, so nothing else refits them).  Recovering matches is not its job:
    every worker's warden does that, with or without beat."""
    return refit_stale(celery_app._db())


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
