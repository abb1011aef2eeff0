"""The rated ladders: every ``ladder_interval`` (beat), matches between active bots
close in rating, for every ladder that is on: the open arena's per game, and each
event's (its own bots only).
"""

from __future__ import annotations

import random

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.config import Config
from arena.db import Database
from arena.models import MATCH_OPEN, Bot, Event, Ladder, Match, MatchSeat, Rating
from arena.relay import sessions
from arena.worker import celery_app, queue
from arena.worker.celery_app import celery
from arena.worker.lifecycle import ELO


@celery.task(name="arena.ladder_round")
def ladder_round() -> list[int]:
    return schedule_ladder(celery_app._db(), celery_app._config())


def schedule_ladder(database: Database, config: Config, seed: int | None = None) -> list[int]:
    """For every ladder that is on (the open arena's, per game, and each event's), pair
    active bots close in rating; an event's ladder seats only its bots, the open arena's
    only bots of no event.

    Bots are sorted by Elo and cut into consecutive groups of ``seats_per_match`` from a
    random offset, so neighbours in the ranking meet; a ladder that still has queued
    matches gets no more until they are played."""
    rng = random.Random(seed)
    created: list[int] = []
    with database.session() as session:
        ladders: list[tuple[int | None, str, int]] = [
            (None, ladder.game, ladder.seats_per_match)
            for ladder in session.scalars(select(Ladder).where(Ladder.enabled.is_(True)))
        ]
        for event in session.scalars(select(Event).order_by(Event.id)):
            ladders += [
                (event.id, game, row["seats_per_match"])
                for game, row in sorted(event.ladder.items())
                if row.get("enabled") and game in event.games
            ]
        for event_id, game, k in ladders:
            created += _ladder_round(session, rng, event_id, game, k)
    queue.enqueue_matches(config, created)
    return created


def _ladder_round(
    session: Session, rng: random.Random, event_id: int | None, game: str, k: int
) -> list[int]:
    in_event = Match.event_id.is_(None) if event_id is None else Match.event_id == event_id
    waiting = session.scalar(
        select(func.count(Match.id)).where(
            Match.game == game,
            Match.kind == "ladder",
            Match.status.in_(MATCH_OPEN),
            in_event,
        )
    )
    if waiting:
        return []
    bots = [
        b
        for b in session.scalars(
            select(Bot).where(
                Bot.status == "active",
                Bot.kind == "bot",
                Bot.event_id.is_(None) if event_id is None else Bot.event_id == event_id,
            )
        )
        if game in b.games
    ]
    # a bot that connects out is seated only while it is connected, a hosted bot once a
    # version of its code passed its validation
    online = sessions.online(session, (b.id for b in bots if b.connect))
    bots = [
        b
        for b in bots
        if (b.hosted and b.code_version) or (not b.hosted and (not b.connect or b.id in online))
    ]
    if len(bots) < k:
        return []
    elo = {
        r.bot_id: r.elo
        for r in session.scalars(
            select(Rating).where(Rating.game == game, Rating.bot_id.in_([b.id for b in bots]))
        )
    }
    bots.sort(key=lambda b: (-elo.get(b.id, ELO.initial), b.id))
    offset = rng.randrange(k)
    order = bots[offset:] + bots[:offset]
    created = []
    for start in range(0, len(order) - k + 1, k):
        group = order[start : start + k]
        rng.shuffle(group)
        match = Match(
            kind="ladder",
            game=game,
            options={},
            seed=rng.getrandbits(31),
            rated=True,
            event_id=event_id,
        )
        match.seats = [MatchSeat(seat=i, bot_id=b.id) for i, b in enumerate(group)]
        session.add(match)
        session.flush()
        created.append(match.id)
    return created
