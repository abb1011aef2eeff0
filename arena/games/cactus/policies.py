"""House policies for Cactus.  They read only the view and the legal actions."""

from __future__ import annotations

from typing import Any

from arena.games.base import Action
from arena.games.policy import Policy, RandomPolicy

__all__ = ["CactusHeuristic", "RandomPolicy"]


def _rank(card: str) -> str:
    return card[:-1]


class CactusHeuristic(Policy):
    """Keeps low cards: swaps high or unknown cards for low ones, peeks at what it does not
    know, snaps cards it knows match, and calls when its estimated total is low.

    It needs no memory of its own: the view carries every card this seat has seen."""

    name = "heuristic"

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        kind = view["decision"]
        choice = getattr(self, f"_{kind}")(view, legal_actions)
        return choice if choice in legal_actions else legal_actions[0]

    # -- reading the view ------------------------------------------------------------------
    @staticmethod
    def _values(view: dict[str, Any]) -> dict[str, int]:
        return view["values"]

    def _unknown_value(self, view: dict[str, Any]) -> float:
        values = self._values(view)
        return sum(values.values()) / len(values)

    def _mine(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        return view["layouts"][view["seat"]]

    def _estimate(self, view: dict[str, Any], slot: dict[str, Any]) -> float:
        if slot["card"] is None:
            return self._unknown_value(view)
        return self._values(view)[_rank(slot["card"])]

    def _worst_slot(self, view: dict[str, Any]) -> tuple[int, float] | None:
        """The slot to get rid of first: the highest estimate, known cards first on a tie."""
        mine = self._mine(view)
        if not mine:
            return None
        worst = max(mine, key=lambda s: (self._estimate(view, s), s["card"] is not None))
        return worst["slot"], self._estimate(view, worst)

    def _first_unknown(self, view: dict[str, Any]) -> int | None:
        return next((s["slot"] for s in self._mine(view) if s["card"] is None), None)

    def _value(self, view: dict[str, Any], card: str) -> int:
        return self._values(view)[_rank(card)]

    # -- decisions ----------------------------------------------------------------------------
    def _initial_peek(self, view: dict[str, Any], legal: list[Action]) -> Action:
        return legal[0]

    def _turn(self, view: dict[str, Any], legal: list[Action]) -> Action:
        unknown = self._first_unknown(view)
        if view.get("eight_offer") and unknown is not None:
            return {"type": "peek", "slot": unknown}
        worst = self._worst_slot(view)
        if view["discard"] and worst is not None:
            top = self._value(view, view["discard"][-1])
            if top <= 3 and top < worst[1] - 1:
                return {"type": "take_discard"}
        return {"type": "draw"}

    def _taken(self, view: dict[str, Any], legal: list[Action]) -> Action:
        worst = self._worst_slot(view)
        return {"type": "swap", "slot": worst[0]} if worst else legal[0]

    def _drawn(self, view: dict[str, Any], legal: list[Action]) -> Action:
        unknown = self._first_unknown(view)
        if unknown is not None and {"type": "peek", "slot": unknown} in legal:
            return {"type": "peek", "slot": unknown}
        worst = self._worst_slot(view)
        if worst is not None and self._value(view, view["drawn"]) < worst[1]:
            return {"type": "swap", "slot": worst[0]}
        return {"type": "discard"}

    def _snap(self, view: dict[str, Any], legal: list[Action]) -> Action:
        top = _rank(view["discard"][-1])
        for slot in self._mine(view):
            if slot["card"] is not None and _rank(slot["card"]) == top:
                action = {"type": "snap", "slot": slot["slot"]}
                if action in legal:
                    return action
        return {"type": "pass"}

    def _power(self, view: dict[str, Any], legal: list[Action]) -> Action:
        power = view.get("power")
        if power == "peek":
            unknown = self._first_unknown(view)
            if unknown is not None:
                return {"type": "peek", "slot": unknown}
        elif power == "peek_other":
            hidden = [
                a
                for a in legal
                if a["type"] == "peek_other"
                and view["layouts"][a["player"]][self._index(view, a)]["card"] is None
            ]
            if hidden:
                return self.rng.choice(hidden)
        elif power == "blind_swap":
            worst = self._worst_slot(view)
            if worst is not None and worst[1] >= self._unknown_value(view) + 2:
                targets = [a for a in legal if a["type"] == "blind_swap" and a["slot"] == worst[0]]
                if targets:
                    return self.rng.choice(targets)
        return {"type": "skip"}

    @staticmethod
    def _index(view: dict[str, Any], action: Action) -> int:
        row = view["layouts"][action["player"]]
        return next(i for i, s in enumerate(row) if s["slot"] == action["slot"])

    def _call(self, view: dict[str, Any], legal: list[Action]) -> Action:
        mine = self._mine(view)
        unknown = sum(s["card"] is None for s in mine)
        estimate = sum(self._estimate(view, s) for s in mine)
        if unknown <= 1 and estimate <= 5:
            return {"type": "call"}
        return {"type": "pass"}
