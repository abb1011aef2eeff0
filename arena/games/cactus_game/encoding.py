"""Cactus Game's learning encoding: a seat's view as a fixed-size observation, its JSON
actions as fixed indices (the contract of ``arena.games.encoding``; rules CG-1..CG-21 of
docs/rules/cactus-game.md, explained for contestants in docs/learn/cactus-game.md).

The boundary: :meth:`CactusGameEncoding.encode` reads only the view it is given (its hand,
the public piles and counts, the open Stop window, ``this_turn`` and the hand it looked
at), never the state, and keeps no memory between calls: what a seat learned in earlier
events (a hand it looked at before, an Ask that failed) is the learner's to remember.
Seats are relative to the observer (block 0 is me, block k the k-th seat clockwise
after me), so the observation has the same size for 2 to 6 players and every option.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import MutableSequence
from typing import Any

from arena.games.base import JSON, Action
from arena.games.cactus_game.engine import (
    CHARACTERS,
    DECK,
    JOKER,
    KINDS,
    POINT_CARDS,
    SET_SIZE,
    CactusGame,
)
from arena.games.cactus_game.schema import CARD_RULES, DECISIONS, PHASES, TARGETS
from arena.games.encoding import ActionSpace, Encoding, Layout

MIN_PLAYERS = CactusGame.min_players
MAX_PLAYERS = CactusGame.max_players
TOTAL_CARDS = sum(DECK.values())  # CG-1: 90 white cards
HAND_CAP = 30  # hand sizes are clipped here (a hand this big never happens in practice)
TURNS_LEFT_CAP = 50  # turns left before the cap (CG-21), clipped: only the end game matters
PLAYS_CAP = 10  # cards played this turn, clipped
AT_LEAST = (1, 2, 3)  # CG-7: a set takes three cards, so counts up to three matter most
PLAYED = tuple(TARGETS)  # the 7 action cards that are played on one's turn (not Stop)
CHARACTER_SETS = tuple(c for c in CHARACTERS if c != JOKER)  # the three set characters


def _sets() -> list[tuple[str, ...]]:
    """Every set CG-7 allows, as the engine lists it: the character first, then Jokers."""
    found = [
        (character,) * used + (JOKER,) * (SET_SIZE - used)
        for character in CHARACTER_SETS
        for used in (3, 2, 1)
    ]
    found.append((JOKER,) * SET_SIZE)
    return found


def _action_entries() -> list[tuple[Any, str]]:
    entries: list[tuple[Any, str]] = [
        (("draw",), "draw: draw one card, the turn ends (CG-5)"),
        (("pass",), "pass: let the card in the Stop window be (CG-17)"),
        (("stop",), "stop: Stop the card in the open window (CG-17, CG-18)"),
    ]
    entries += [(("take", k), f"take {k} from the hand looked at (CG-12)") for k in KINDS]
    entries += [(("play_set", cards), f"play_set {'+'.join(cards)} (CG-7)") for cards in _sets()]
    for card in PLAYED:
        fields, rule = TARGETS[card], CARD_RULES[card].split()[0]
        if not fields:  # CG-10, CG-13
            entries.append((("play", card), f"play {card} ({rule})"))
        elif fields == ("players",):  # CG-11: two relative seats, me (0) possibly one
            entries += [
                (("play", card, (a, b)), f"play {card} on relative seats {a} and {b} ({rule})")
                for a in range(MAX_PLAYERS)
                for b in range(a + 1, MAX_PLAYERS)
            ]
        elif fields == ("target",):  # CG-12, CG-14, CG-16: another player
            entries += [
                (("play", card, t), f"play {card} at relative seat {t} ({rule})")
                for t in range(1, MAX_PLAYERS)
            ]
        else:  # CG-15: another player and any of the 12 kinds
            entries += [
                (("play", card, t, k), f"play {card} at relative seat {t} naming {k} ({rule})")
                for t in range(1, MAX_PLAYERS)
                for k in KINDS
            ]
    return entries


class CactusGameEncoding(Encoding):
    """Observation and action space of Cactus Game (see the module docstring)."""

    game_id = "cactus-game"

    def __init__(self) -> None:
        n_kinds, seats = len(KINDS), MAX_PLAYERS
        layout = Layout()
        add = layout.add
        self.o_players = add("players", MAX_PLAYERS - MIN_PLAYERS + 1, "one-hot: 2..6 players")
        self.o_seat = add(
            "my_seat",
            seats,
            "one-hot: my absolute seat 0..5 (only for naming seats back in explain; "
            "the seat order is random, CG-3)",
        )
        self.o_target = add("target", 1, "Points that win / 30 (CG-20)")
        self.o_turn = add("turn", 1, "turns begun / max_turns (CG-21)")
        self.o_turns_left = add(
            "turns_left", 1, f"min(max_turns - turn, {TURNS_LEFT_CAP}) / {TURNS_LEFT_CAP} (CG-21)"
        )
        self.o_phase = add("phase", len(PHASES), "one-hot: " + ", ".join(PHASES))
        self.o_decision = add(
            "decision", len(DECISIONS) + 1, "one-hot: none, " + ", ".join(DECISIONS)
        )
        self.o_current = add("current", seats, "one-hot: whose turn it is, relative seat")
        self.o_hand = add(
            "hand", n_kinds, "my hand: count of each kind / its copies in the deck (CG-1)"
        )
        self.o_hand_at_least = add(
            "hand_at_least",
            n_kinds * len(AT_LEAST),
            "my hand, per kind (kind-major): 1 if I hold at least 1, 2, 3 (CG-7)",
        )
        self.o_discard = add(
            "discard", n_kinds, "discard pile: count of each kind / its copies in the deck"
        )
        self.o_discard_size = add("discard_size", 1, "discard pile size / 90")
        self.o_draw_pile = add("draw_pile", 1, "draw pile size / 90 (CG-8)")
        self.o_supply = add("point_supply", 1, "Point cards left in the supply / 30 (CG-2, CG-9)")
        self.o_present = add("present", seats, "per relative seat: 1 if that seat plays")
        self.o_sizes = add(
            "hand_sizes", seats, f"per relative seat: min(hand size, {HAND_CAP}) / {HAND_CAP}"
        )
        self.o_empty = add(
            "hand_empty", seats, "per relative seat: 1 if its hand is empty (CG-6, CG-16)"
        )
        self.o_points = add("points", seats, "per relative seat: Points owned / 30 (CG-2)")
        self.o_progress = add(
            "points_to_target", seats, "per relative seat: min(Points / target, 1) (CG-20)"
        )
        self.o_chain = add("chain_open", 1, "1 while an action card waits in a Stop window")
        self.o_chain_card = add(
            "chain_card", len(PLAYED), "one-hot: the waiting card: " + ", ".join(PLAYED)
        )
        self.o_chain_player = add("chain_player", seats, "one-hot: who played it, relative seat")
        self.o_chain_target = add(
            "chain_target", seats, "one-hot: its target (CG-12, CG-14..CG-16), relative seat"
        )
        self.o_chain_players = add(
            "chain_players", seats, "two-hot: Swap Hands' two players (CG-11), relative seats"
        )
        self.o_chain_named = add(
            "chain_named", n_kinds, "one-hot: the kind Ask for a Card names (CG-15)"
        )
        self.o_chain_stops = add(
            "chain_stops", 1, "Stops played on it so far / 10 (the deck's Stops, CG-18)"
        )
        self.o_chain_cancelled = add(
            "chain_cancelled", 1, "1 if that count is odd: the card is cancelled as it stands"
        )
        self.o_chain_top = add(
            "chain_top",
            seats,
            "one-hot: whose card the open window is about (the last Stop's player, else "
            "the card's), relative seat: that seat cannot Stop it (CG-18, CG-19)",
        )
        self.o_looked = add("looked_open", 1, "1 when the view shows a hand I looked at (CG-12)")
        self.o_looked_player = add("looked_player", seats, "one-hot: whose hand, relative seat")
        self.o_looked_cards = add(
            "looked", n_kinds, "that hand: count of each kind / its copies in the deck"
        )
        self.o_this_turn = add(
            "this_turn",
            n_kinds,
            "cards played this turn (sets, action cards, Stops): count per kind / copies",
        )
        self.o_this_turn_plays = add(
            "this_turn_plays", 1, f"min(plays this turn, {PLAYS_CAP}) / {PLAYS_CAP}"
        )
        self.fields, self.size = layout.fields, layout.size
        self.actions = ActionSpace(_action_entries())

        # lookup tables, so that encode and action_index do dict reads only
        self.kind_index = {k: i for i, k in enumerate(KINDS)}
        self.copies = [float(DECK[k]) for k in KINDS]
        self.inverse = {k: 1.0 / DECK[k] for k in KINDS}
        self.phase_index = {p: i for i, p in enumerate(PHASES)}
        self.decision_index = {None: 0, **{d: i + 1 for i, d in enumerate(DECISIONS)}}
        self.played_index = {k: i for i, k in enumerate(PLAYED)}
        index = self.actions.index
        self.i_draw, self.i_pass, self.i_stop = index[("draw",)], index[("pass",)], index[("stop",)]
        self.i_take = {k: index[("take", k)] for k in KINDS}
        self.i_set = {cards: index[("play_set", cards)] for cards in _sets()}

    # -- the observation -------------------------------------------------------------------
    def encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        me: int = view["seat"]
        n: int = view["players"]
        target: int = view["target"]
        max_turns: int = view["max_turns"]
        turn: int = view["turn"]
        out[self.o_players + n - MIN_PLAYERS] = 1.0
        out[self.o_seat + me] = 1.0
        out[self.o_target] = target / POINT_CARDS
        out[self.o_turn] = min(turn / max_turns, 1.0)
        left = max_turns - turn
        if left > 0:
            out[self.o_turns_left] = min(left, TURNS_LEFT_CAP) / TURNS_LEFT_CAP
        out[self.o_phase + self.phase_index[view["phase"]]] = 1.0
        out[self.o_decision + self.decision_index[view["decision"]]] = 1.0
        out[self.o_current + (view["player"] - me) % n] = 1.0

        kind_index, inverse = self.kind_index, self.inverse
        # my hand: counts, and the thresholds a set needs (CG-7)
        o_hand, o_least = self.o_hand, self.o_hand_at_least
        for kind, count in Counter(view["hand"]["cards"]).items():
            i = kind_index[kind]
            out[o_hand + i] = count * inverse[kind]
            base = o_least + 3 * i
            out[base] = 1.0
            if count >= 2:
                out[base + 1] = 1.0
                if count >= 3:
                    out[base + 2] = 1.0
        discard = view["discard"]["cards"]
        o = self.o_discard
        for kind, count in Counter(discard).items():
            out[o + kind_index[kind]] = count * inverse[kind]
        out[self.o_discard_size] = len(discard) / TOTAL_CARDS
        out[self.o_draw_pile] = min(view["draw_pile"] / TOTAL_CARDS, 1.0)
        out[self.o_supply] = view["point_supply"] / POINT_CARDS

        # per relative seat (CG-2: Points face up; hand sizes public)
        sizes, points = view["hand_sizes"], view["points"]
        o_present, o_sizes, o_empty = self.o_present, self.o_sizes, self.o_empty
        o_points, o_progress = self.o_points, self.o_progress
        for rel in range(n):
            seat = (me + rel) % n
            out[o_present + rel] = 1.0
            size = sizes[seat]
            if size:
                out[o_sizes + rel] = min(size, HAND_CAP) / HAND_CAP
            else:
                out[o_empty + rel] = 1.0
            owned = points[seat]
            if owned:
                out[o_points + rel] = owned / POINT_CARDS
                out[o_progress + rel] = min(owned / target, 1.0)

        chain = view.get("chain")
        if chain is not None:  # CG-17, CG-18: the card waiting in its Stop window
            out[self.o_chain] = 1.0
            out[self.o_chain_card + self.played_index[chain["card"]]] = 1.0
            player = chain["player"]
            out[self.o_chain_player + (player - me) % n] = 1.0
            if "target" in chain:
                out[self.o_chain_target + (chain["target"] - me) % n] = 1.0
            if "players" in chain:
                for seat in chain["players"]:
                    out[self.o_chain_players + (seat - me) % n] = 1.0
            if "named" in chain:
                out[self.o_chain_named + kind_index[chain["named"]]] = 1.0
            stops = chain["stops"]
            if stops:
                out[self.o_chain_stops] = min(len(stops) / DECK["stop"], 1.0)
                if len(stops) % 2:
                    out[self.o_chain_cancelled] = 1.0
                player = stops[-1]
            out[self.o_chain_top + (player - me) % n] = 1.0

        looked = view.get("looked")
        if looked is not None:  # CG-12: the hand I looked at, decision 'take'
            out[self.o_looked] = 1.0
            out[self.o_looked_player + (looked["player"] - me) % n] = 1.0
            o = self.o_looked_cards
            for kind, count in Counter(looked["cards"]).items():
                out[o + kind_index[kind]] = count * inverse[kind]

        this_turn = view["this_turn"]
        if this_turn:
            counts: dict[str, int] = {}
            for event in this_turn:
                if event["type"] == "play_set":
                    for kind in event["cards"]:
                        counts[kind] = counts.get(kind, 0) + 1
                else:  # play, stop: one card each
                    kind = event["card"]
                    counts[kind] = counts.get(kind, 0) + 1
            o = self.o_this_turn
            for kind, count in counts.items():
                out[o + kind_index[kind]] = min(count * inverse[kind], 1.0)
            out[self.o_this_turn_plays] = min(len(this_turn), PLAYS_CAP) / PLAYS_CAP

    # -- the actions -----------------------------------------------------------------------
    def action_index(self, view: dict[str, JSON], action: Action) -> int | None:
        kind = action["type"]
        if kind == "draw":
            return self.i_draw
        if kind == "pass":
            return self.i_pass
        if kind == "stop":
            return self.i_stop
        if kind == "take":
            return self.i_take[action["card"]]
        if kind == "play_set":
            return self.i_set[tuple(action["cards"])]
        # play: targets are relative seats, so one index means the same move at any seat
        me, n = view["seat"], view["players"]
        card = action["card"]
        index = self.actions.index
        if "players" in action:  # CG-11
            a, b = ((seat - me) % n for seat in action["players"])
            return index[("play", card, (a, b) if a < b else (b, a))]
        if "named" in action:  # CG-15
            return index[("play", card, (action["target"] - me) % n, action["named"])]
        if "target" in action:  # CG-12, CG-14, CG-16
            return index[("play", card, (action["target"] - me) % n)]
        return index[("play", card)]  # CG-10, CG-13

    # -- back to view-shaped JSON ----------------------------------------------------------
    def _cards(self, values: list[float], start: int) -> list[str]:
        """The kinds a per-kind count slice names, each as many times as counted."""
        copies = self.copies
        cards: list[str] = []
        for i, kind in enumerate(KINDS):
            cards += [kind] * round(values[start + i] * copies[i])
        return cards

    @staticmethod
    def _one(values: list[float], start: int, size: int) -> int | None:
        hot = [i for i in range(size) if values[start + i] > 0.5]
        return hot[0] if hot else None

    def explain(self, values: list[float]) -> dict[str, JSON]:
        n_pick = self._one(values, self.o_players, MAX_PLAYERS - MIN_PLAYERS + 1)
        me = self._one(values, self.o_seat, MAX_PLAYERS)
        if n_pick is None or me is None:
            return {}  # not an observation: nothing names a seat
        n = n_pick + MIN_PLAYERS

        def absolute(start: int) -> int | None:
            rel = self._one(values, start, MAX_PLAYERS)
            return None if rel is None else (me + rel) % n

        phase = self._one(values, self.o_phase, len(PHASES))
        decision = self._one(values, self.o_decision, len(DECISIONS) + 1)
        explained: dict[str, JSON] = {
            "seat": me,
            "players": n,
            "player": absolute(self.o_current),
            "phase": None if phase is None else PHASES[phase],
            "decision": None if not decision else DECISIONS[decision - 1],
            "hand": {"cards": self._cards(values, self.o_hand)},
            "discard": {"cards": self._cards(values, self.o_discard)},
        }
        this_turn: list[JSON] = []
        for kind in self._cards(values, self.o_this_turn):
            if kind in CHARACTERS:
                this_turn.append({"type": "play_set", "cards": [kind]})
            elif kind == "stop":
                this_turn.append({"type": "stop", "card": kind})
            else:
                this_turn.append({"type": "play", "card": kind})
        explained["this_turn"] = this_turn
        if values[self.o_chain] > 0.5:
            card = self._one(values, self.o_chain_card, len(PLAYED))
            chain: dict[str, JSON] = {
                "type": "play",
                "player": absolute(self.o_chain_player),
                "card": None if card is None else PLAYED[card],
            }
            named = self._one(values, self.o_chain_named, len(KINDS))
            if named is not None:
                chain["named"] = KINDS[named]
            explained["chain"] = chain
        if values[self.o_looked] > 0.5:
            explained["looked"] = {
                "player": absolute(self.o_looked_player),
                "cards": self._cards(values, self.o_looked_cards),
            }
        return explained


ENCODING = CactusGameEncoding()
