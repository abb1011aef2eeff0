"""Président views (game ``president``).

Cards are names such as ``"10H"``, and ``"BJ"``/``"RJ"`` for the black and the coloured
Joker when the match plays with them.  ``view["cards"]`` is my hand, weakest first in the
current order; ``view["rank_order"]`` the natural ranks weakest first (reversed after a
revolution); ``view["trick"]`` the current trick: ``rank`` and ``count`` of the play to
beat (``rank`` is None when the next play leads), who played it (``by``), ``passes``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from arenabot.views import Action, View, has_type

JOKERS = ("BJ", "RJ")


def rank(card: str) -> str:
    """``"10H"`` → ``"10"``; a Joker is its own rank (``"BJ"``, ``"RJ"``)."""
    return card if card in JOKERS else card[:-1]


def my_cards(view: View) -> list[str]:
    """My cards, weakest first in the current order, Jokers last."""
    return list(view["cards"])


def rank_counts(view: View) -> dict[str, int]:
    """How many cards of each rank I hold."""
    return dict(Counter(rank(c) for c in view["cards"]))


def strength(view: View) -> dict[str, int]:
    """Rank → strength in the current order, 0 the weakest; the Jokers beat every rank."""
    return {r: i for i, r in enumerate((*view["rank_order"], *JOKERS))}


def current_trick(view: View) -> dict[str, Any] | None:
    """The play to beat (``rank``, ``count``, ``jokers``, ``by``, ``passes``...), or None
    when the next play leads a new trick."""
    trick = view["trick"]
    return None if trick["rank"] is None else dict(trick)


def can_pass(legal_actions: Sequence[Action]) -> bool:
    """Whether passing is allowed now (it never is when leading)."""
    return has_type(legal_actions, "pass")
