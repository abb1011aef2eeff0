"""House policies for Président: they read only the seat's view and the legal actions."""

from __future__ import annotations

from collections import Counter
from typing import Any

from arena.games.base import Action
from arena.games.policy import Policy, RandomPolicy

__all__ = ["PresidentHeuristic", "RandomPolicy"]

JOKERS = ("BJ", "RJ")


def rank_of(card_name: str) -> str:
    return card_name if card_name in JOKERS else card_name[:-1]


class PresidentHeuristic(Policy):
    """Sheds its weakest sets first, keeps the strongest rank and the Jokers to take the
    lead back, and gives its weakest cards in the exchange.

    - Leading: the whole holding of its weakest ordinary rank (a pair stays a pair).
    - Following: the weakest play that does not split a set; splits or spends 2s/Jokers
      only when its hand is short or an opponent is about to go out; else passes.
    - Goes out at once when one play empties its hand (unless the options forbid that
      finish: it learns them from ``start``).
    """

    name = "heuristic"

    def __init__(self, rng: Any):
        super().__init__(rng)
        self.options: dict[str, Any] = {}

    def start(self, info: dict[str, Any]) -> None:
        self.options = dict(info.get("options") or {})

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        order = view["rank_order"]
        strength = {r: i for i, r in enumerate((*order, *JOKERS))}
        if legal_actions[0]["type"] == "give":
            # the weakest cards: compare the strongest card given first
            return min(
                legal_actions,
                key=lambda a: sorted((strength[r] for r in a["ranks"]), reverse=True),
            )
        plays = [a for a in legal_actions if a["type"] == "play"]
        can_pass = legal_actions[0]["type"] == "pass"
        if not plays:
            return legal_actions[0]
        hand = view["cards"]
        size = len(hand)
        held = Counter(rank_of(c) for c in hand)
        best = order[-1]

        def precious(a: Action) -> bool:
            return a["rank"] == best or a["rank"] in JOKERS or a.get("jokers", 0) > 0

        def forbidden_finish(a: Action) -> bool:
            return (self.options.get("no_finish_on_two", False) and a["rank"] == best) or (
                self.options.get("no_finish_on_joker", False)
                and (a["rank"] in JOKERS or a.get("jokers", 0) > 0)
            )

        for a in plays:
            if a["count"] == size and not forbidden_finish(a):
                return a

        def weakest(pool: list[Action]) -> Action:
            return min(pool, key=lambda a: (strength[a["rank"]], -a["count"]))

        cheap = [a for a in plays if not precious(a)]
        whole = [a for a in cheap if a["count"] == held[a["rank"]]]
        if not can_pass:
            safe = [a for a in plays if not (a["count"] == size and forbidden_finish(a))]
            return weakest(whole or cheap or safe or plays)
        if whole:
            return weakest(whole)
        me = view["seat"]
        others = [n for s, n in enumerate(view["hand_sizes"]) if s != me and n > 0]
        pressed = size <= 5 or (bool(others) and min(others) <= 2)
        if cheap and pressed:
            return weakest(cheap)
        strong = [a for a in plays if a["count"] < size or not forbidden_finish(a)]
        if strong and pressed:
            return weakest(strong)
        return legal_actions[0]
