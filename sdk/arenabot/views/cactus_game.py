"""Cactus Game views (game ``cactus-game``).

Cards are kind names (``"charlie"``, ``"joker"``, ``"stop"``...); copies of a kind are
alike.  ``view["hand"]["cards"]`` is my hand, sorted; ``view["points"]`` the Points each
seat owns; ``view["target"]`` the Points that win; ``view["decision"]`` names what is asked
now (``turn``, ``stop``, ``take``).  ``view["chain"]`` is the action card waiting for its
effect and the Stops played on it, when there is one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from arenabot.views import Action, View

# what a completed set of three gains, by the character it completes (a Joker set: 3)
SET_POINTS: dict[str, int] = {"charlie": 1, "spike": 2, "walter": 3, "joker": 3}


def hand(view: View) -> list[str]:
    """My cards, sorted."""
    return list(view["hand"]["cards"])


def hand_counts(view: View) -> dict[str, int]:
    """How many of each kind I hold."""
    return dict(Counter(view["hand"]["cards"]))


def points(view: View, seat: int | None = None) -> int:
    """The Points a seat owns (default: mine)."""
    return view["points"][view["seat"] if seat is None else seat]


def target(view: View) -> int:
    """The Points that win the match at once."""
    return view["target"]


def points_to_win(view: View, seat: int | None = None) -> int:
    """How many more Points a seat needs (default: me)."""
    return max(0, target(view) - points(view, seat))


def leaders(view: View) -> list[int]:
    """The seats owning the most Points."""
    best = max(view["points"])
    return [seat for seat, p in enumerate(view["points"]) if p == best]


def set_points(action: Action) -> int:
    """What a ``play_set`` action gains (the completed character comes first)."""
    return SET_POINTS[action["cards"][0]]


def chain(view: View) -> dict[str, Any] | None:
    """The action card waiting for its effect: its ``player``, ``card``, targets and the
    seats that played ``stops`` on it; None when no card waits."""
    return view.get("chain")
