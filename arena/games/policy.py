"""In-process policies ("house bots"): the same interface as an SDK bot.

A policy sees exactly what an HTTP bot sees, the seat's view and its legal actions, never
the state.  Its randomness comes from the generator it is given (seeded per seat by the
referee), never from the global ``random``.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import Action


class Policy:
    name = "policy"

    def __init__(self, rng: random.Random):
        self.rng = rng

    def start(self, info: dict[str, Any]) -> None:
        """Called once before the match (``/start`` for an HTTP bot)."""

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        raise NotImplementedError

    def end(self, info: dict[str, Any]) -> None:
        """Called once after the match (``/end`` for an HTTP bot)."""


class RandomPolicy(Policy):
    """Uniform over the legal actions: the baseline every heuristic must beat."""

    name = "random"

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        return self.rng.choice(legal_actions)
