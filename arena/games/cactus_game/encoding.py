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

from collections import _count_elements  # Counter's C loop, without a Counter
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
        self._tables()

    def _tables(self) -> None:
        """Tables that make ``encode`` and ``legal_indices`` index reads and writes only.

        Each value is the very float the formula of its field gives (computed here with
        the same expression), so an observation is bit for bit what the formulas say.
        Measured (CPU time per call, the views and legal actions of 40 random 4-player
        matches) against the former Counter and per-call arithmetic: ``encode`` 7.5 ->
        4.9 µs, ``legal_indices`` 2.1 -> 1.25 µs."""
        copies_max = TOTAL_CARDS + 1  # no count of a kind, hand or pile exceeds the deck
        # count -> count / copies, per kind (hand, discard, looked) and clipped (this_turn)
        scaled = {k: [c * self.inverse[k] for c in range(copies_max)] for k in KINDS}
        clipped = {k: [min(v, 1.0) for v in scaled[k]] for k in KINDS}
        at = self.kind_index
        self._hand_at = {
            k: (self.o_hand + at[k], self.o_hand_at_least + 3 * at[k], scaled[k]) for k in KINDS
        }
        self._discard_at = {k: (self.o_discard + at[k], scaled[k]) for k in KINDS}
        self._looked_at = {k: (self.o_looked_cards + at[k], scaled[k]) for k in KINDS}
        self._this_turn_at = {k: (self.o_this_turn + at[k], clipped[k]) for k in KINDS}
        self._named_at = {k: self.o_chain_named + at[k] for k in KINDS}
        self._chain_card_at = {k: self.o_chain_card + i for k, i in self.played_index.items()}
        self._phase_at = {p: self.o_phase + i for p, i in self.phase_index.items()}
        self._decision_at = {d: self.o_decision + i for d, i in self.decision_index.items()}
        self._pile = [c / TOTAL_CARDS for c in range(copies_max)]  # discard, draw pile
        self._point = [c / POINT_CARDS for c in range(POINT_CARDS + 1)]  # target, Points
        self._size = [min(c, HAND_CAP) / HAND_CAP for c in range(copies_max)]
        self._left = [min(c, TURNS_LEFT_CAP) / TURNS_LEFT_CAP for c in range(TURNS_LEFT_CAP + 1)]
        self._plays = [min(c, PLAYS_CAP) / PLAYS_CAP for c in range(PLAYS_CAP + 1)]
        # [target][Points] -> min(Points / target, 1) (CG-20: target 1..30, Points 0..30)
        self._progress = [[0.0] * (POINT_CARDS + 1)] + [
            [min(owned / target, 1.0) for owned in range(POINT_CARDS + 1)]
            for target in range(1, POINT_CARDS + 1)
        ]
        # [players][my seat] -> per relative seat: (absolute seat, present, hand_sizes,
        # hand_empty, points, points_to_target indices) and absolute seat -> relative seat
        self._rows: list[list[tuple[tuple[int, int, int, int, int, int], ...]]] = []
        self._relative: list[list[list[int]]] = []
        for n in range(MAX_PLAYERS + 1):
            self._rows.append(
                [
                    tuple(
                        (
                            (me + rel) % n,
                            self.o_present + rel,
                            self.o_sizes + rel,
                            self.o_empty + rel,
                            self.o_points + rel,
                            self.o_progress + rel,
                        )
                        for rel in range(n)
                    )
                    for me in range(n)
                ]
            )
            self._relative.append([[(seat - me) % n for seat in range(n)] for me in range(n)])
        # [players][my seat] -> the "play" actions' indices by their absolute targets
        self._plays_at: list[list[dict[str, Any]]] = [[] for _ in range(MAX_PLAYERS + 1)]
        index = self.actions.index
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            for me in range(n):
                rel = self._relative[n][me]
                plays: dict[str, Any] = {}
                for card in PLAYED:
                    fields = TARGETS[card]
                    if not fields:  # CG-10, CG-13
                        plays[card] = index[("play", card)]
                    elif fields == ("players",):  # CG-11: [a][b], a < b as listed
                        plays[card] = [
                            [
                                index[("play", card, tuple(sorted((rel[a], rel[b]))))]
                                if a != b
                                else None
                                for b in range(n)
                            ]
                            for a in range(n)
                        ]
                    elif fields == ("target",):  # CG-12, CG-14, CG-16
                        plays[card] = [
                            index[("play", card, rel[t])] if t != me else None for t in range(n)
                        ]
                    else:  # CG-15: [target][named kind]
                        plays[card] = [
                            {k: index[("play", card, rel[t], k)] for k in KINDS}
                            if t != me
                            else None
                            for t in range(n)
                        ]
                self._plays_at[n].append(plays)
        self._header = (
            self.o_players - MIN_PLAYERS,
            self.o_seat,
            self.o_target,
            self.o_turn,
            self.o_turns_left,
            self.o_current,
        )
        self._simple = {"draw": self.i_draw, "pass": self.i_pass, "stop": self.i_stop}

    # -- the observation -------------------------------------------------------------------
    def encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        # Every formula is the field's doc (see __init__); the tables of _tables hold its
        # values, so each line is a read and a write (speed: the env calls this per step).
        me: int = view["seat"]
        n: int = view["players"]
        target: int = view["target"]
        max_turns: int = view["max_turns"]
        turn: int = view["turn"]
        relative = self._relative[n][me]
        o_players, o_seat, o_target, o_turn, o_turns_left, o_current = self._header
        out[o_players + n] = 1.0
        out[o_seat + me] = 1.0
        point = self._point
        out[o_target] = point[target]
        out[o_turn] = min(turn / max_turns, 1.0)
        left = max_turns - turn
        if left > 0:
            out[o_turns_left] = self._left[left if left < TURNS_LEFT_CAP else TURNS_LEFT_CAP]
        out[self._phase_at[view["phase"]]] = 1.0
        out[self._decision_at[view["decision"]]] = 1.0
        out[o_current + relative[view["player"]]] = 1.0

        # my hand: counts, and the thresholds a set needs (CG-7)
        cards = view["hand"]["cards"]
        if cards:
            counts: dict[str, int] = {}
            _count_elements(counts, cards)
            hand_at = self._hand_at
            for kind, count in counts.items():
                at, least, scaled = hand_at[kind]
                out[at] = scaled[count]
                out[least] = 1.0
                if count >= 2:
                    out[least + 1] = 1.0
                    if count >= 3:
                        out[least + 2] = 1.0
        cards = view["discard"]["cards"]
        pile = self._pile
        if cards:
            counts = {}
            _count_elements(counts, cards)
            discard_at = self._discard_at
            for kind, count in counts.items():
                at, scaled = discard_at[kind]
                out[at] = scaled[count]
            out[self.o_discard_size] = pile[len(cards)]
        draw_pile = view["draw_pile"]
        if draw_pile:
            out[self.o_draw_pile] = pile[draw_pile]
        out[self.o_supply] = point[view["point_supply"]]

        # per relative seat (CG-2: Points face up; hand sizes public)
        sizes, points = view["hand_sizes"], view["points"]
        size_of, progress = self._size, self._progress[target]
        for seat, present, size_at, empty_at, points_at, progress_at in self._rows[n][me]:
            out[present] = 1.0
            size = sizes[seat]
            if size:
                out[size_at] = size_of[size]
            else:
                out[empty_at] = 1.0
            owned = points[seat]
            if owned:
                out[points_at] = point[owned]
                out[progress_at] = progress[owned]

        chain = view.get("chain")
        if chain is not None:  # CG-17, CG-18: the card waiting in its Stop window
            out[self.o_chain] = 1.0
            out[self._chain_card_at[chain["card"]]] = 1.0
            player = chain["player"]
            out[self.o_chain_player + relative[player]] = 1.0
            if "target" in chain:
                out[self.o_chain_target + relative[chain["target"]]] = 1.0
            if "players" in chain:
                for seat in chain["players"]:
                    out[self.o_chain_players + relative[seat]] = 1.0
            if "named" in chain:
                out[self._named_at[chain["named"]]] = 1.0
            stops = chain["stops"]
            if stops:
                out[self.o_chain_stops] = min(len(stops) / DECK["stop"], 1.0)
                if len(stops) % 2:
                    out[self.o_chain_cancelled] = 1.0
                player = stops[-1]
            out[self.o_chain_top + relative[player]] = 1.0

        looked = view.get("looked")
        if looked is not None:  # CG-12: the hand I looked at, decision 'take'
            out[self.o_looked] = 1.0
            out[self.o_looked_player + relative[looked["player"]]] = 1.0
            counts = {}
            _count_elements(counts, looked["cards"])
            looked_at = self._looked_at
            for kind, count in counts.items():
                at, scaled = looked_at[kind]
                out[at] = scaled[count]

        this_turn = view["this_turn"]
        if this_turn:
            counts = {}
            for event in this_turn:
                if event["type"] == "play_set":
                    _count_elements(counts, event["cards"])
                else:  # play, stop: one card each
                    kind = event["card"]
                    counts[kind] = counts.get(kind, 0) + 1
            this_turn_at = self._this_turn_at
            for kind, count in counts.items():
                at, clipped = this_turn_at[kind]
                out[at] = clipped[count]
            plays = len(this_turn)
            out[self.o_this_turn_plays] = self._plays[plays if plays < PLAYS_CAP else PLAYS_CAP]

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

    def legal_indices(
        self, view: dict[str, JSON], legal_actions: list[Action]
    ) -> dict[int, Action]:
        """As the base class's, with ``action_index`` inlined on the tables of this seat
        and player count: a turn lists up to ~50 actions (36 Asks with 3 others), and the
        env asks this once per decision (2.1 -> 1.25 µs per call, see ``_tables``)."""
        plays = self._plays_at[view["players"]][view["seat"]]
        simple, take, sets = self._simple, self.i_take, self.i_set
        found: dict[int, Action] = {}
        for action in legal_actions:
            kind = action["type"]
            if kind == "play":
                at = plays[action["card"]]
                if "named" in action:  # CG-15
                    i = at[action["target"]][action["named"]]
                elif "target" in action:  # CG-12, CG-14, CG-16
                    i = at[action["target"]]
                elif "players" in action:  # CG-11
                    a, b = action["players"]
                    i = at[a][b]
                else:  # CG-10, CG-13
                    i = at
            elif kind == "take":
                i = take[action["card"]]
            elif kind == "play_set":
                i = sets[tuple(action["cards"])]
            else:
                i = simple[kind]
            if i is not None and i not in found:
                found[i] = action
        return found

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
