"""House policies for Cactus Game.  They read only the view and the legal actions.

The heuristic remembers, from the events its seat received, which cards it knows another
player holds (a hand it looked at, a card taken from it, an Ask that failed), and plays:

- a winning set or Point card as soon as it has one;
- cards that gain cards without ending the turn (Look and Steal on the biggest hand, an Ask
  for a card it knows is there or that would complete a set, Steal a Card, a Swap Hands
  for a much bigger hand);
- then ends the turn with the best set (rarest characters first, Jokers spared), Steal a
  Point on the leader, Free Point, Draw Three, or a plain draw;
- keeps its Stops for what hurts: Steal a Point or Free Point near the target, cards aimed
  at itself when it has Stops to spare, and a Stop on its own card.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import DEAL_EVENT, Action
from arena.games.cactus_game.engine import DECK, JOKER, SET_POINTS, SET_SIZE
from arena.games.policy import Policy, RandomPolicy

__all__ = ["CactusGameHeuristic", "RandomPolicy"]

TOTAL_CARDS = sum(DECK.values())
CARD_VALUE: dict[str, float] = {
    "stop": 1.5,
    "steal_a_point": 1.6,
    "free_point": 1.4,
    "look_and_steal": 1.1,
    "draw_three": 0.9,
    "steal_a_card": 0.8,
    "ask_for_a_card": 0.7,
    "swap_hands": 0.4,
}
Counts = dict[str, int]


def _count(cards: list[str]) -> Counts:
    counts: Counts = {}
    for kind in cards:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _remove(counts: Counts, kind: str) -> None:
    if counts.get(kind, 0) > 0:
        counts[kind] -= 1


class CactusGameHeuristic(Policy):
    name = "heuristic"

    def __init__(self, rng: Any):
        super().__init__(rng)
        self.known: list[Counts] = []  # per seat: cards it surely holds, as far as we know
        self.mine: Counts = {}

    # -- memory ----------------------------------------------------------------------------
    def _observe(self, view: dict[str, Any]) -> None:
        me, n = view["seat"], view["players"]
        if len(self.known) != n:
            self.known = [{} for _ in range(n)]
        known = self.known
        for e in view["events"]:
            kind = e["type"]
            if kind == DEAL_EVENT:
                self.known = known = [{} for _ in range(n)]
            elif kind == "play" or kind == "stop":
                _remove(known[e["player"]], e["card"])
            elif kind == "play_set":
                for card in e["cards"]:
                    _remove(known[e["player"]], card)
            elif kind == "look" and "cards" in e:
                known[e["target"]] = _count(e["cards"])
            elif kind in ("take", "steal_card") and e.get("count"):
                source = known[e["from"]]
                if "card" in e:
                    _remove(source, e["card"])
                    if e["from"] == me:  # we know what the taker now holds
                        taker = known[e["player"]]
                        taker[e["card"]] = taker.get(e["card"], 0) + 1
                else:
                    source.clear()  # some card left that hand: what we knew is unsure
            elif kind == "ask":
                source = known[e["from"]]
                if e["given"]:
                    _remove(source, e["named"])
                    asker = known[e["player"]]
                    asker[e["named"]] = asker.get(e["named"], 0) + 1
                else:
                    source[e["named"]] = 0
            elif kind == "swap_hands":
                a, b = e["players"]
                if me in (a, b):
                    other = b if me == a else a
                    known[other] = dict(self.mine)  # it holds what we held
                else:
                    known[a], known[b] = known[b], known[a]
            self._track_own(e, me)
        sizes = view["hand_sizes"]
        for seat, counts in enumerate(known):
            if sum(counts.values()) > sizes[seat]:
                counts.clear()
        self.mine = _count(view["hand"]["cards"])

    def _track_own(self, e: dict[str, Any], me: int) -> None:
        """Our own hand between two views, for what a Swap Hands gives away."""
        kind, mine = e["type"], self.mine
        if kind == "dealt":
            self.mine = _count(e["cards"])
        elif kind == "draw" and e["player"] == me:
            for card in e.get("cards", []):
                mine[card] = mine.get(card, 0) + 1
        elif kind == "swap_hands" and me in e["players"]:
            self.mine = _count(e["cards"])
        elif kind in ("play", "stop") and e["player"] == me:
            _remove(mine, e["card"])
        elif kind == "play_set" and e["player"] == me:
            for card in e["cards"]:
                _remove(mine, card)
        elif kind in ("take", "steal_card", "ask") and "card" in e:
            if e["player"] == me:
                mine[e["card"]] = mine.get(e["card"], 0) + 1
            elif e["from"] == me:
                _remove(mine, e["card"])

    # -- values ----------------------------------------------------------------------------
    def _value(self, kind: str, mine: Counts) -> float:
        """What one more card of ``kind`` is worth to a hand ``mine``."""
        jokers = mine.get(JOKER, 0)
        if kind == JOKER:
            best = max(mine.get(c, 0) for c in ("charlie", "spike", "walter"))
            return 2.0 + 0.8 * min(best + jokers, 2)
        if kind in SET_POINTS:
            have = mine.get(kind, 0) + jokers
            points = SET_POINTS[kind]
            if have + 1 >= SET_SIZE:
                return points + 1.5
            return points * (0.3 + 0.35 * have)
        value = CARD_VALUE[kind]
        if kind == "stop" and not mine.get("stop"):
            value += 0.7
        return value

    def _best_set(self, legal: list[Action]) -> tuple[Action, int] | None:
        best: tuple[float, Action, int] | None = None
        for a in legal:
            if a["type"] != "play_set":
                continue
            cards = a["cards"]
            points = SET_POINTS[cards[0]]
            score = points - 0.6 * cards.count(JOKER)  # spare Jokers for rarer sets
            if best is None or score > best[0]:
                best = (score, a, points)
        return None if best is None else (best[1], best[2])

    # -- decisions -------------------------------------------------------------------------
    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        self._observe(view)
        decision = view["decision"]
        if decision == "stop":
            choice = self._stop(view, legal_actions)
        elif decision == "take":
            choice = self._take(view, legal_actions)
        else:
            choice = self._turn(view, legal_actions)
        return choice if choice in legal_actions else legal_actions[0]

    def _take(self, view: dict[str, Any], legal: list[Action]) -> Action:
        mine = self.mine
        return max(legal, key=lambda a: self._value(a["card"], mine))

    def _stop(self, view: dict[str, Any], legal: list[Action]) -> Action:
        chain = view["chain"]
        want = self._want_effect(view, chain)
        happens = len(chain["stops"]) % 2 == 0  # CG-18: what happens if all pass now
        if want is not None and want != happens:
            return {"type": "stop"}
        return {"type": "pass"}

    def _want_effect(self, view: dict[str, Any], chain: dict[str, Any]) -> bool | None:
        """True/False when this seat cares whether the card takes effect, else None."""
        me, p, card = view["seat"], chain["player"], chain["card"]
        if p == me:
            return True
        stops = self.mine.get("stop", 0)
        points, target = view["points"], view["target"]
        others_best = max(points[s] for s in range(len(points)) if s != p)
        threat = points[p] + 1 >= target or (points[p] >= target - 2 and points[p] >= others_best)
        if card == "steal_a_point":
            return False if chain["target"] == me or threat else None
        if card == "free_point":
            return False if threat else None
        if card in ("look_and_steal", "steal_a_card", "ask_for_a_card"):
            if chain["target"] == me and stops >= 2:
                return False
            if card == "ask_for_a_card" and chain["target"] == me:
                named = chain["named"]
                if self.mine.get(named) and self._value(named, self.mine) >= 2.5:
                    return False
            return None
        if card == "swap_hands" and me in chain["players"]:
            a, b = chain["players"]
            other = b if me == a else a
            sizes = view["hand_sizes"]
            return False if sizes[me] > sizes[other] + 1 else None
        return None

    def _turn(self, view: dict[str, Any], legal: list[Action]) -> Action:
        me = view["seat"]
        points, target, supply = view["points"], view["target"], view["point_supply"]
        sizes = view["hand_sizes"]
        by_card: dict[str, list[Action]] = {}
        for a in legal:
            if a["type"] == "play":
                by_card.setdefault(a["card"], []).append(a)
        best_set = self._best_set(legal)

        def leader_among(actions: list[Action]) -> Action:
            return max(actions, key=lambda a: (points[a["target"]], sizes[a["target"]]))

        # 1. a winning move
        if best_set is not None:
            for a in legal:
                if a["type"] == "play_set":
                    gain = min(SET_POINTS[a["cards"][0]], supply)
                    if points[me] + gain >= target:
                        return a
        if points[me] + 1 >= target:
            if "steal_a_point" in by_card:
                return leader_among(by_card["steal_a_point"])
            if "free_point" in by_card and supply:
                return by_card["free_point"][0]

        # 2. cards that gain cards and keep the turn going (CG-12: an empty hand gives none)
        looks = [a for a in by_card.get("look_and_steal", []) if sizes[a["target"]]]
        if looks:
            return max(looks, key=lambda a: (sizes[a["target"]], points[a["target"]]))
        if "ask_for_a_card" in by_card:
            ask = self._best_ask(view, by_card["ask_for_a_card"])
            if ask is not None:
                return ask
        if "steal_a_card" in by_card:
            return max(
                by_card["steal_a_card"], key=lambda a: (sizes[a["target"]], points[a["target"]])
            )
        if "swap_hands" in by_card:
            mine_after = sizes[me] - 1
            swaps = [a for a in by_card["swap_hands"] if me in a["players"]]
            if swaps:
                best = max(swaps, key=lambda a: sizes[sum(a["players"]) - me])
                if sizes[sum(best["players"]) - me] >= mine_after + 3:
                    return best

        # 3. end the turn
        if best_set is not None:
            return best_set[0]
        if "steal_a_point" in by_card:
            return leader_among(by_card["steal_a_point"])
        if "free_point" in by_card and supply:
            return by_card["free_point"][0]
        if "draw_three" in by_card:
            return by_card["draw_three"][0]
        return {"type": "draw"}

    def _best_ask(self, view: dict[str, Any], asks: list[Action]) -> Action | None:
        """An Ask worth its card: a kind known to be there, or a likely set completion."""
        mine, sizes = self.mine, view["hand_sizes"]
        best: tuple[float, Action] | None = None
        for a in asks:
            t, named = a["target"], a["named"]
            known = self.known[t].get(named)
            if known == 0 and named in self.known[t]:
                continue  # it told us it had none
            if known:
                chance = 1.0
            else:
                share = DECK[named] / TOTAL_CARDS
                chance = 1.0 - (1.0 - share) ** sizes[t]
            score = chance * self._value(named, mine)
            if best is None or score > best[0]:
                best = (score, a)
        if best is not None and best[0] > 1.2:
            return best[1]
        return None
