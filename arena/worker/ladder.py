"""The rated ladder: every ``ladder_interval`` (beat), matches between active bots
close in rating, for every game whose ladder is on.
"""

from __future__ import annotations

import random

from sqlalchemy import func, select

from arena.config import Config
from arena.db import Database
from arena.models import MATCH_OPEN, Bot, Ladder, Match, MatchSeat, Rating
from arena.relay import sessions
from arena.worker import celery_app, queue
from arena.worker.celery_app import celery
from arena.worker.lifecycle import ELO


@celery.task(name="arena.ladder_round")
def ladder_round() -> list[int]:
    return schedule_ladder(celery_app._db(), celery_app._config())


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
                for b in session.scalars(
                    select(Bot).where(Bot.status == "active", Bot.kind == "bot")
                )
                if ladder.game in b.games
            ]
            # a bot that connects out is seated only while it is connected
            online = sessions.online(session, (b.id for b in bots if b.endpoint is None))
            bots = [b for b in bots if b.endpoint is not None or b.id in online]
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
    queue.enqueue_matches(config, created)
    return created
