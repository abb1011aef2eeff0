"""The rated ladders: each game's switch, which Celery beat reads."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.games import GAMES
from arena.games.base import OptionsError
from arena.models import Ladder
from arena.services.errors import ServiceError
from arena.services.tournaments import game_engine


def set_ladder(session: Session, game: str, enabled: bool, seats_per_match: int = 2) -> Ladder:
    """Turn the rated ladder of ``game`` on or off (Celery beat reads this row)."""
    engine = game_engine(game)
    try:
        engine.check_players(seats_per_match)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None
    ladder = session.get(Ladder, engine.id)
    if ladder is None:
        ladder = Ladder(game=engine.id)
        session.add(ladder)
    ladder.enabled = enabled
    ladder.seats_per_match = seats_per_match
    session.flush()
    return ladder


def ladders(session: Session) -> list[dict[str, Any]]:
    """Every game's ladder switch (a game never switched has no row: disabled, and the
    smallest table it can be played at)."""
    rows = {ladder.game: ladder for ladder in session.scalars(select(Ladder))}
    result = []
    for game_id in GAMES:
        ladder = rows.get(game_id)
        result.append(
            {
                "game": game_id,
                "enabled": bool(ladder and ladder.enabled),
                "seats_per_match": ladder.seats_per_match
                if ladder
                else max(2, GAMES[game_id].min_players),
                "updated_at": ladder.updated_at if ladder else None,
            }
        )
    return result
