"""Small helpers for reading views and legal actions, one module per game.

A view is the JSON object of the ``/act`` body, exactly as the game engine wrote it; these
helpers only name what is in it.  ``from arenabot.views import cactus`` (game ``cactus``),
``cactus_game`` (``cactus-game``), ``president`` (``president``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

View = Mapping[str, Any]
Action = dict[str, Any]


def of_type(legal_actions: Sequence[Action], *types: str) -> list[Action]:
    """The legal actions whose ``type`` is one of ``types``, in their order."""
    return [a for a in legal_actions if a.get("type") in types]


def has_type(legal_actions: Sequence[Action], action_type: str) -> bool:
    """Whether some legal action has this ``type`` (e.g. ``"pass"``, ``"snap"``)."""
    return any(a.get("type") == action_type for a in legal_actions)
