"""The game registry: an explicit list of game modules (no registration on import).

Each game module exposes ``GAME`` (a :class:`arena.games.base.Game`), ``POLICIES``
(policy name -> :class:`arena.games.policy.Policy` subclass) and ``ENCODING`` (its
:class:`arena.games.encoding.Encoding`, for learning environments and trained bots).
"""

from __future__ import annotations

import random
from types import ModuleType

from arena.games import cactus, cactus_game, president
from arena.games.base import Game, OptionsError
from arena.games.encoding import Encoding
from arena.games.policy import Policy

_MODULES: tuple[ModuleType, ...] = (cactus, cactus_game, president)

GAMES: dict[str, Game] = {m.GAME.id: m.GAME for m in _MODULES}
POLICIES: dict[str, dict[str, type[Policy]]] = {m.GAME.id: dict(m.POLICIES) for m in _MODULES}
ENCODINGS: dict[str, Encoding] = {m.GAME.id: m.ENCODING for m in _MODULES}


def get_game(game_id: str) -> Game:
    try:
        return GAMES[game_id]
    except (KeyError, TypeError):
        raise OptionsError(f"unknown game {game_id!r}; games: {', '.join(sorted(GAMES))}") from None


def make_policy(game_id: str, name: str, rng: random.Random) -> Policy:
    policies = POLICIES[get_game(game_id).id]
    if name not in policies:
        raise OptionsError(
            f"{game_id} has no in-process policy {name!r}; policies: {', '.join(policies)}"
        )
    return policies[name](rng)
