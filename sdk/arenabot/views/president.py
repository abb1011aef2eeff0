"""Président views (game ``president``).

Cards are names such as ``"10H"``, and ``"BJ"``/``"RJ"`` for the black and the coloured
Joker when the match plays with them.  ``view["cards"]`` is my hand, weakest first in the
current order; ``view["rank_order"]`` the natural ranks weakest first (reversed after a
revolution); ``view["trick"]`` the current trick: ``rank`` and ``count`` of the play to
beat (``rank`` is None when the next play leads), who played it (``by``), ``passes``.

Variants add keys: with ``suites`` the trick's ``length`` (3 or more for a run, whose
``rank`` is its weakest); with ``putsch`` the putschist under ``putsch``; with ``menteur``
the cards I laid face down on this trick (``face_down``), the announcement I am laying
cards for (``announcing``) and the one the others may call (``announced``); the trick's
``rank`` and ``count`` are then what was announced, not necessarily what lies there.
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


def my_face_down(view: View) -> list[str]:
    """With ``menteur``: the cards I laid face down on the current trick."""
    return list((view.get("face_down") or {}).get("cards", []))


def announcement(view: View) -> dict[str, Any] | None:
    """With ``menteur``: the announcement that may be called now (``seat``, ``rank``,
    ``count``...), or None."""
    announced = view.get("announced")
    return None if announced is None else dict(announced)
