"""House policies for Président: they read only the seat's view and the legal actions."""

from __future__ import annotations

from collections import Counter
from math import comb
from typing import Any

from arena.games.base import Action
from arena.games.policy import Policy, RandomPolicy

__all__ = ["PresidentHeuristic", "RandomPolicy"]

JOKERS = ("BJ", "RJ")
COUPS = ("guillotine", "coup_d_etat")  # PV-8, the stronger first
CALL_BELOW = 0.1  # PV-15: calls when the announcement's estimated chance is below this


def rank_of(card_name: str) -> str:
    return card_name if card_name in JOKERS else card_name[:-1]


class PresidentHeuristic(Policy):
    """Sheds its weakest sets first, keeps the strongest rank and the Jokers to take the
    lead back, and gives its weakest cards in the exchange.

    - Leading: the whole holding of its weakest ordinary rank (a pair stays a pair), or a
      run (PV-13) from that rank when one sheds more without splitting a set.
    - Following: the weakest play that does not split a set; splits or spends 2s/Jokers
      only when its hand is short or an opponent is about to go out; else passes.
    - Goes out at once when one play empties its hand (unless the options forbid that
      finish: it learns them from ``start``).
    - Variants: a coup d'état or a guillotine (PV-8) at once, naming the leading opponent
      Trou du Cul; a putsch (PV-9) with a strong hand; a rapidité (PV-14) unless it throws
      its strongest cards early; with menteur (PV-15) it announces only what it holds,
      lays exactly that, and calls an announcement its own hand makes unlikely, the more
      readily against a player caught lying before.
    """

    name = "heuristic"

    def __init__(self, rng: Any):
        super().__init__(rng)
        self.options: dict[str, Any] = {}
        self.calls: dict[int, list[int]] = {}  # PV-15: per seat, [lies, true] seen on calls

    def start(self, info: dict[str, Any]) -> None:
        self.options = dict(info.get("options") or {})
        self.calls = {}

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        order = view["rank_order"]
        strength = {r: i for i, r in enumerate((*order, *JOKERS))}
        first = legal_actions[0]["type"]
        if first == "give":
            # the weakest cards: compare the strongest card given first
            return min(
                legal_actions,
                key=lambda a: sorted((strength[r] for r in a["ranks"]), reverse=True),
            )
        self._remember_calls(view)
        kinds = {a["type"] for a in legal_actions}
        if "putsch" in kinds:
            return self._putsch(view, legal_actions, strength)
        if "throw" in kinds:
            return self._throw(view, legal_actions)
        if "call" in kinds:
            return self._call(view, legal_actions)
        if first == "lay":
            return self._lay(view, legal_actions)
        if first == "name":
            return self._name(view, legal_actions)
        coups = [a for a in legal_actions if a["type"] in COUPS]
        if coups:  # PV-8: Président at once
            return min(coups, key=lambda a: (COUPS.index(a["type"]), strength[a["rank"]]))
        plays = [a for a in legal_actions if a["type"] in ("play", "run")]
        can_pass = first == "pass"
        hand = view["cards"]
        held = Counter(rank_of(c) for c in hand)
        if self.options.get("menteur"):
            plays = [a for a in plays if self._holds(held, order, a)]
            if not plays:  # nothing true to announce: pass, or lie as little as it can
                if can_pass:
                    return legal_actions[0]
                plays = [a for a in legal_actions if a["type"] in ("play", "run")]
        if not plays:
            return legal_actions[0]
        chosen = self._choose(view, plays, can_pass, held, strength)
        return legal_actions[0] if chosen is None else chosen

    # -- sets and runs -----------------------------------------------------------------------
    def _choose(
        self,
        view: dict[str, Any],
        plays: list[Action],
        can_pass: bool,
        held: Counter[str],
        strength: dict[str, int],
    ) -> Action | None:
        order = view["rank_order"]
        size = len(view["cards"])
        best = order[-1]

        def ranks(a: Action) -> list[str]:
            if a["type"] == "run":  # PV-13: consecutive ranks in the order in force
                low = order.index(a["rank"])
                return order[low : low + a["length"]]
            return [a["rank"]]

        def total(a: Action) -> int:
            return a["count"] * a.get("length", 1)

        def top(a: Action) -> int:
            return strength[ranks(a)[-1]]

        def precious(a: Action) -> bool:
            named = ranks(a)
            return best in named or named[-1] in JOKERS or a.get("jokers", 0) > 0

        def forbidden_finish(a: Action) -> bool:
            return (self.options.get("no_finish_on_two", False) and best in ranks(a)) or (
                self.options.get("no_finish_on_joker", False)
                and (a["rank"] in JOKERS or a.get("jokers", 0) > 0)
            )

        def whole(a: Action) -> bool:  # splits no set
            return all(a["count"] == held[r] for r in ranks(a))

        for a in plays:
            if total(a) == size and not forbidden_finish(a):
                return a

        def weakest(pool: list[Action]) -> Action:
            return min(pool, key=lambda a: (top(a), -total(a)))

        cheap = [a for a in plays if not precious(a)]
        wholes = [a for a in cheap if whole(a)]
        if not can_pass:
            if wholes:  # a lead: the weakest rank, the run from it if it sheds more
                low = min(strength[ranks(a)[0]] for a in wholes)
                return max(
                    (a for a in wholes if strength[ranks(a)[0]] == low),
                    key=lambda a: (total(a), -top(a)),
                )
            safe = [a for a in plays if not (total(a) == size and forbidden_finish(a))]
            return weakest(cheap or safe or plays)
        if wholes:
            return weakest(wholes)
        me = view["seat"]
        others = [n for s, n in enumerate(view["hand_sizes"]) if s != me and n > 0]
        pressed = size <= 5 or (bool(others) and min(others) <= 2)
        if cheap and pressed:
            return weakest(cheap)
        strong = [a for a in plays if total(a) < size or not forbidden_finish(a)]
        if strong and pressed:
            return weakest(strong)
        return None

    # -- PV-8, PV-9, PV-14 ------------------------------------------------------------------
    def _putsch(
        self, view: dict[str, Any], legal: list[Action], strength: dict[str, int]
    ) -> Action:
        """PV-9: a putsch when a third of the hand is among the three strongest ranks."""
        top3 = len(view["rank_order"]) - 3
        strong = sum(strength[rank_of(c)] >= top3 for c in view["cards"])
        putsch = next(a for a in legal if a["type"] == "putsch")
        return putsch if 3 * strong >= len(view["cards"]) else legal[0]

    def _throw(self, view: dict[str, Any], legal: list[Action]) -> Action:
        """PV-14: cards thrown out of turn are a turn saved; keep the strongest rank while
        the hand is long, and never throw into a forbidden finish."""
        throw = next(a for a in legal if a["type"] == "throw")
        size = len(view["cards"])
        best = view["rank_order"][-1]
        if throw["rank"] == best:
            if throw["count"] == size and self.options.get("no_finish_on_two", False):
                return legal[0]
            if size - throw["count"] > 4:
                return legal[0]
        return throw

    def _name(self, view: dict[str, Any], legal: list[Action]) -> Action:
        """PV-8 guillotine: the leading opponent becomes Trou du Cul, the trailing one
        Vice-Président."""
        scores = view["scores"]
        return max(
            legal,
            key=lambda a: (scores[a["trou_du_cul"]], -scores[a.get("vice_president", 0)]),
        )

    # -- PV-15 menteur -----------------------------------------------------------------------
    @staticmethod
    def _claimed(order: list[str], a: Action) -> Counter[str]:
        if a["type"] == "run":
            low = order.index(a["rank"])
            return Counter({r: a["count"] for r in order[low : low + a["length"]]})
        claim = Counter({a["rank"]: a["count"] - a.get("jokers", 0)})
        if a.get("jokers"):
            claim["joker"] = a["jokers"]
        return claim

    def _holds(self, held: Counter[str], order: list[str], a: Action) -> bool:
        claim = self._claimed(order, a)
        jokers = held["BJ"] + held["RJ"]
        return all((jokers if r == "joker" else held[r]) >= k for r, k in claim.items())

    def _lay(self, view: dict[str, Any], legal: list[Action]) -> Action:
        """Lays exactly what it announced (it announces only what it holds).  Read from the
        view alone: the cards it laid face down on this trick, less those of its earlier
        announcements there, are those laid for this one."""
        announcing = view.get("announcing")
        if not announcing:
            return legal[0]
        me = view["seat"]
        earlier = sum(
            a["count"] * a.get("length", 1)
            for a in view["trick"]["plays"]
            if a["type"] == "announce" and a["seat"] == me
        )
        laid = Counter(rank_of(c) for c in view["face_down"]["cards"][earlier:])
        claim = self._claimed(view["rank_order"], announcing)
        if claim["joker"]:  # wild Jokers, either colour
            laid["joker"] = laid.pop("BJ", 0) + laid.pop("RJ", 0)
        still = claim - laid
        for a in legal:
            rank = a["rank"]
            want = still["joker" if rank in JOKERS and not still[rank] else rank]
            if want > 0 and a["count"] == min(
                want, max(b["count"] for b in legal if b["rank"] == rank)
            ):
                return a
        return legal[0]

    def _remember_calls(self, view: dict[str, Any]) -> None:
        for event in view.get("events", ()):
            if event.get("type") == "menteur":
                seen = self.calls.setdefault(event["seat"], [0, 0])
                seen[0 if event["lied"] else 1] += 1

    def _call(self, view: dict[str, Any], legal: list[Action]) -> Action:
        """Calls when the announcement is unlikely: the chance that the announcer held the
        cards (hypergeometric, from the cards it cannot see) times how often that player
        told the truth when called (a prior of one lie and one truth)."""
        announced = view.get("announced") or {}
        seat = announced.get("seat")
        call = next(a for a in legal if a["type"] == "call")
        if seat is None:
            return legal[0]
        order = view["rank_order"]
        kind = "run" if "length" in announced else "play"
        claim = self._claimed(order, {**announced, "type": kind})
        held = Counter(rank_of(c) for c in view["cards"])
        leftover = Counter(rank_of(c) for c in view["leftover"]["cards"])
        decks = self.options.get("decks", 1) or 1
        me = view["seat"]
        hidden = sum(n for s, n in enumerate(view["hand_sizes"]) if s != me) + sum(claim.values())
        hand = view["hand_sizes"][seat] + sum(claim.values())
        chance = 1.0
        for rank, k in claim.items():
            if rank == "joker" or k <= 0:
                continue
            copies = (decks if rank in JOKERS else 4 * decks) - held[rank] - leftover[rank]
            chance *= _at_least(k, hidden, copies, hand)
        lies, truths = self.calls.get(seat, [0, 0])
        honesty = (truths + 1) / (lies + truths + 2)
        return call if chance * honesty < CALL_BELOW else legal[0]


def _at_least(k: int, population: int, successes: int, draws: int) -> float:
    """P(X >= k) for X hypergeometric: ``draws`` cards from ``population`` holding
    ``successes`` of the kind (both clamped to what is possible)."""
    successes = max(0, min(successes, population))
    draws = max(0, min(draws, population))
    if successes < k or draws < k:
        return 0.0
    total = comb(population, draws)
    below = sum(comb(successes, i) * comb(population - successes, draws - i) for i in range(k))
    return max(0.0, 1.0 - below / total)
