"""Président's learning encoding (``arena.games.encoding``): a seat's view as a fixed-size
observation, and every JSON action of the game (PR-1..12, variants PV-1..16) as an index
of one fixed action space.

The boundary: this module reads the *view* a seat is given (``President.view``) and the
actions sent with it, never the state, so an observation holds only what that seat may
know; it does not decide what a view shows (``views.py``) nor what is legal (``engine``).

Two numberings are used, both documented in docs/learn/president.md:

- a card's *identity* (its name, PR-1): ``4 * i + suit`` for the ``i``-th rank of the
  52-card order 3..2 (PR-2) and the suits C, D, H, S, then 52 = ``BJ`` and 53 = ``RJ``
  (PV-3).  Own hand, played pile, leftover, exchanged and face-down cards are encoded as
  counts per identity (two decks may hold two of a name, PV-16), so ``explain`` names the
  very cards the view names.
- a rank's *strength slot*: its place in the order in force (``rank_order``, reversed by a
  revolution, PV-7) aligned on the strongest rank: slot 12 is the strongest natural rank
  (the 2, or the 7 of the 32-card deck, PR-2), 11 the next... so the 32-card deck fills
  slots 5..12; the Jokers are 13 (``BJ``) and 14 (``RJ``), PV-3.  Summaries per rank and
  every action naming a rank use slots: suits never matter (PR-2), strength does.
"""

from __future__ import annotations

import itertools
from collections.abc import MutableSequence
from typing import Any

from arena.games import cards
from arena.games.base import JSON, Action
from arena.games.encoding import ActionSpace, Encoding, Layout
from arena.games.president.deck import JOKERS, ORDER_32, ORDER_52
from arena.games.president.engine import President
from arena.games.president.rounds import NEUTRAL, PRESIDENT, TROU, VICE_PRESIDENT, VICE_TROU
from arena.games.president.special_plays import MAX_RUN_WIDTH, MIN_RUN

MAX_SEATS = President.max_players  # 8 seat blocks, whatever the player count
MIN_SEATS = President.min_players
MAX_DECKS = 2  # PV-16
N_NATURAL = len(ORDER_52)  # 13 strength slots of natural ranks
N_SLOTS = N_NATURAL + len(JOKERS)  # 15: the Jokers are slots 13 and 14 (PV-3)
N_IDS = cards.CARDS_PER_DECK + len(JOKERS)  # 54 card identities
MAX_OF_RANK = 4 * MAX_DECKS  # 8 natural cards of one rank (PV-16)
MAX_SET = MAX_OF_RANK + 1  # 9: a full rank and a wild Joker (PV-3)
MAX_WILD = 2 * MAX_DECKS  # 4 Jokers in all (PV-3, PV-16)
MAX_GIVE = 4  # PR-10: 2 or 1, 4 after a failed putsch (PV-9)
MAX_RUN = N_NATURAL  # PV-13: a run of every rank at most
# normalisations (values are clipped to 1 above them)
MAX_CARDS = 108  # two decks and four Jokers (PV-16, PV-3)
HAND_NORM = 36  # a hand's size; a menteur pick-up (PV-15) may exceed it: clipped
SCORE_NORM = 100  # a total score (PR-12); negative (PV-9) clipped to 0
ROUND_NORM = 50  # the round (DEFAULT_MAX_ROUNDS)
PASS_NORM = MAX_SEATS - 1

PHASES = ("play", "exchange", "rapidite", "call", "lay", "putsch", "guillotine", "over")
ROLES = (PRESIDENT, VICE_PRESIDENT, NEUTRAL, VICE_TROU, TROU)  # PR-9
SUITS = cards.SUITS
# card identity -> name, and back
ID_NAMES: tuple[str, ...] = (*(r + s for r in ORDER_52 for s in SUITS), *JOKERS)
CARD_ID: dict[str, int] = {name: i for i, name in enumerate(ID_NAMES)}
# the card configurations by the number of cards in play (PR-1, PV-3, PV-16): deck size,
# decks, Jokers
CONFIGS: dict[int, tuple[int, int, bool]] = {
    size * decks + (2 * decks if jokers else 0): (size, decks, jokers)
    for size in (52, 32)
    for decks in (1, 2)
    for jokers in (False, True)
}


def _orders() -> dict[str, tuple[str, ...]]:
    """The four orders a view's ``rank_order`` can be (52 or 32 cards, PR-2; normal or
    reversed, PV-7), keyed by their weakest rank (which tells them apart)."""
    out = {}
    for natural in (ORDER_52, ORDER_32):
        for order in (natural, tuple(reversed(natural))):
            out[order[0]] = order
    return out


ORDERS = _orders()


def _play_shapes() -> list[tuple[int, int]]:
    """(count, jokers) of a set of one natural rank: 1..MAX_OF_RANK naturals, or with
    joker_wild up to MAX_SET cards of which up to MAX_WILD Jokers (PV-3; a hand of Jokers
    only plays them as the weakest rank, so a set may be all Jokers)."""
    return [
        (count, jokers)
        for count in range(1, MAX_SET + 1)
        for jokers in range(min(count, MAX_WILD) + 1)
        if count - jokers <= MAX_OF_RANK
    ]


def _gives() -> list[tuple[int, ...]]:
    """Every multiset of 0..MAX_GIVE natural slots (PR-10, PV-9), weakest slot first."""
    return [
        ranks
        for k in range(MAX_GIVE + 1)
        for ranks in itertools.combinations_with_replacement(range(N_NATURAL), k)
    ]


def _runs() -> list[tuple[int, int, int]]:
    """(weakest slot, length, cards of each rank) of the runs (PV-13)."""
    return [
        (low, length, width)
        for width in range(1, MAX_RUN_WIDTH + 1)
        for low in range(N_NATURAL - MIN_RUN + 1)
        for length in range(MIN_RUN, N_NATURAL - low + 1)
    ]


class PresidentEncoding(Encoding):
    """The observation and the action space of Président (docs/learn/president.md)."""

    game_id = "president"

    def __init__(self) -> None:
        layout = Layout()
        add = layout.add
        S = MAX_SEATS
        self.o_phase = add("phase", len(PHASES), "one-hot `phase`: " + ", ".join(PHASES))
        self.o_round = add("round", 1, f"`round` / {ROUND_NORM}, clipped")
        self.o_players = add("players", S - MIN_SEATS + 1, f"one-hot player count {MIN_SEATS}..{S}")
        self.o_config = add(
            "config",
            3,
            "1 each: the 32-card deck (PR-1), two decks (PV-16), Jokers in play (PV-3); "
            "read from `rank_order` and the number of cards in the view",
        )
        self.o_variant = add(
            "variant",
            3,
            "1 each when the view has the key: `trick.length` (suites, PV-13), `putsch` "
            "(PV-9), `face_down` (menteur, PV-15)",
        )
        self.o_reversed = add("reversed", 1, "1 when a revolution reversed the order (PV-7)")
        self.o_hand = add(
            "hand_cards", N_IDS, "own `cards`: count per card identity / 2 (identity table below)"
        )
        self.o_hand_ranks = add(
            "hand_ranks",
            N_SLOTS,
            f"own `cards` per strength slot: naturals / {MAX_OF_RANK}, Jokers / {MAX_DECKS}",
        )
        self.o_played = add(
            "played_cards", N_IDS, "`played.cards` (face up this round): count per identity / 2"
        )
        self.o_played_ranks = add(
            "played_ranks", N_SLOTS, "`played.cards` per strength slot, normalised as hand_ranks"
        )
        self.o_leftover = add(
            "leftover_cards", N_IDS, "`leftover.cards` (set aside, PR-3): count per identity / 2"
        )
        self.o_unseen = add(
            "unseen_ranks",
            N_SLOTS,
            "per strength slot, the cards of the configuration not in own hand, "
            "`played.cards`, `leftover.cards` nor own `face_down.cards` (held by others or "
            "face down, PV-15), normalised as hand_ranks",
        )
        self.o_pile_down = add(
            "pile_face_down", 1, f"`played.face_down` / {MAX_CARDS} (menteur, PV-15)"
        )
        self.o_trick_rank = add(
            "trick_rank", N_SLOTS, "one-hot strength slot of `trick.rank` (none before the lead)"
        )
        self.o_trick = add(
            "trick",
            5,
            f"`trick.count` / {MAX_SET}, `trick.jokers` / {MAX_WILD}, run length / {MAX_RUN} "
            f"(0 for a set, PV-13), `trick.passes` / {PASS_NORM} (PR-6), `trick.forced` "
            "(PV-2, PV-6)",
        )
        seat = "by relative seat k (0 = me, then clockwise in `table`)"
        self.o_present = add("seat_present", S, f"{seat}: 1 when the seat exists")
        self.o_size = add(
            "seat_hand_size", S, f"{seat}: `hand_sizes` / {HAND_NORM}, clipped (PR-3)"
        )
        self.o_out = add("seat_out", S, f"{seat}: 1 when it has a place in `places` (PR-8)")
        self.o_place = add(
            "seat_place", S, f"{seat}: (place + 1) / {S} in `places`, 0 while playing (PR-8)"
        )
        self.o_role = add(
            "seat_role",
            S * len(ROLES),
            f"{seat}: entry 5k + r, one-hot role in `roles` (PR-9): " + ", ".join(ROLES),
        )
        self.o_score = add(
            "seat_score", S, f"{seat}: `scores` / {SCORE_NORM}, clipped to [0, 1] (PR-12)"
        )
        self.o_turn = add("seat_turn", S, f"{seat}: 1 for `turn`")
        self.o_dealer = add("seat_dealer", S, f"{seat}: 1 for `dealer` (PR-4, PR-11)")
        self.o_by = add("seat_trick_by", S, f"{seat}: 1 for `trick.by`, who played the top")
        self.o_putschist = add("seat_putschist", S, f"{seat}: 1 for `putsch` (PV-9)")
        self.o_announcer = add("seat_announcer", S, f"{seat}: 1 for `announced.seat` (PV-15)")
        self.o_exchange = add(
            "exchange",
            4,
            "1 each: `exchange.gave` present, its `forced`, `exchange.received` present, its "
            "`forced` (PR-10)",
        )
        self.o_gave = add(
            "exchange_gave", N_IDS, "`exchange.gave.cards`: count per identity / 2 (PR-10)"
        )
        self.o_received = add(
            "exchange_received", N_IDS, "`exchange.received.cards`: count per identity / 2"
        )
        self.o_face_down = add(
            "face_down_cards",
            N_IDS,
            "own `face_down.cards` on this trick: count per identity / 2 (PV-15)",
        )
        shape = f"count / {MAX_SET}, jokers / {MAX_WILD}, run length / {MAX_RUN} (0: a set)"
        self.o_announced_rank = add(
            "announced_rank", N_SLOTS, "one-hot strength slot of `announced.rank` (PV-15)"
        )
        self.o_announced = add("announced_shape", 3, f"`announced`: {shape}")
        self.o_announcing_rank = add(
            "announcing_rank", N_SLOTS, "one-hot strength slot of `announcing.rank` (PV-15)"
        )
        self.o_announcing = add("announcing_shape", 3, f"`announcing`: {shape}")
        self.fields, self.size = layout.fields, layout.size

        self.phase_at = {p: self.o_phase + i for i, p in enumerate(PHASES)}
        self.role_index = {r: i for i, r in enumerate(ROLES)}
        # per relative seat k: its entries of seat_present, seat_hand_size, seat_role (the
        # first of 5) and seat_score
        self.seat_at = [
            (self.o_present + k, self.o_size + k, self.o_role + 5 * k, self.o_score + k)
            for k in range(S)
        ]
        # per order (keyed by its weakest rank): rank name -> slot, card name -> (identity,
        # slot), the slot names
        self.rank_slot: dict[str, dict[str, int]] = {}
        self.card_ids: dict[str, dict[str, tuple[int, int]]] = {}
        self.slot_names: dict[str, tuple[str | None, ...]] = {}
        for weakest, order in ORDERS.items():
            shift = N_NATURAL - len(order)  # align the strongest rank on slot 12
            slots = {name: i + shift for i, name in enumerate(order)}
            slots.update({j: N_NATURAL + i for i, j in enumerate(JOKERS)})
            self.rank_slot[weakest] = slots
            self.card_ids[weakest] = {
                name: (cid, slots[name[:-1] if cid < cards.CARDS_PER_DECK else name])
                for name, cid in CARD_ID.items()
                if cid >= cards.CARDS_PER_DECK or name[:-1] in slots
            }
            names: list[str | None] = [None] * N_SLOTS
            for name, s in slots.items():
                names[s] = name
            self.slot_names[weakest] = tuple(names)
        # per configuration, for every slot (0 cards for a slot the configuration lacks):
        # its cards in the configuration, the value of one card, its entries of hand_ranks,
        # played_ranks and unseen_ranks
        slot_norm = [1 / MAX_OF_RANK] * N_NATURAL + [1 / MAX_DECKS] * len(JOKERS)
        values = [tuple(c * norm for c in range(MAX_CARDS + 1)) for norm in slot_norm]
        self.slot_totals: dict[tuple[int, int, bool], list[tuple[int, float, int, int, int]]] = {}
        for size, decks, jokers in CONFIGS.values():
            total = [0] * N_SLOTS
            for s in range(N_NATURAL - len(ORDER_32 if size == 32 else ORDER_52), N_NATURAL):
                total[s] = 4 * decks
            if jokers:
                total[N_NATURAL] = total[N_NATURAL + 1] = decks
            self.slot_totals[(size, decks, jokers)] = [
                (t, values[s], self.o_hand_ranks + s, self.o_played_ranks + s, self.o_unseen + s)
                for s, t in enumerate(total)
            ]

        self.actions = ActionSpace(self._entries())
        index = self.actions.index
        # per order: (rank name, count, jokers) of a play -> index (the hot path)
        self.play_index: dict[str, dict[tuple[str, int, int], int]] = {}
        for weakest, slots in self.rank_slot.items():
            self.play_index[weakest] = {
                (name, count, jokers): index[("play", s, count, jokers)]
                for name, s in slots.items()
                for count in range(1, MAX_SET + 1)
                for jokers in range(MAX_WILD + 1)
                if ("play", s, count, jokers) in index
            }
        self.i_pass = index[("pass",)]

    @staticmethod
    def _entries() -> list[tuple[Any, str]]:
        def rank(s: int) -> str:
            return JOKERS[s - N_NATURAL] if s >= N_NATURAL else f"slot {s}"

        out: list[tuple[Any, str]] = [(("pass",), "pass (PR-6; a reaction window: nothing)")]
        for s in range(N_NATURAL):
            for count, jokers in _play_shapes():
                wild = f" of which {jokers} wild Jokers (PV-3)" if jokers else ""
                out.append((("play", s, count, jokers), f"play {count} of {rank(s)}{wild}"))
        for s in (N_NATURAL, N_NATURAL + 1):
            out.append((("play", s, 1, 0), f"play the Joker {rank(s)} alone (PV-3)"))
        for ranks in _gives():
            named = ", ".join(map(str, ranks)) or "nothing"
            out.append((("give", ranks), f"give back the cards of slots {named} (PR-10)"))
        for low, length, width in _runs():
            out.append(
                (
                    ("run", low, length, width),
                    f"run of {length} ranks from slot {low}, {width} each",
                )
            )
        for s in range(N_NATURAL):
            for count in range(1, MAX_OF_RANK + 1):
                out.append((("throw", s, count), f"throw {count} of slot {s} (PV-14)"))
        for kind in ("coup_d_etat", "guillotine"):
            for s in range(N_NATURAL):
                for count in (5, 6):
                    for jokers in (1, 2):
                        out.append(
                            (
                                (kind, s, count, jokers),
                                f"{kind} of {count} cards of slot {s} with {jokers} Jokers (PV-8)",
                            )
                        )
        for vice in (None, *range(1, MAX_SEATS)):
            for trou in range(1, MAX_SEATS):
                if vice != trou:
                    v = "no Vice-Président" if vice is None else f"Vice-Président seat +{vice}"
                    out.append((("name", vice, trou), f"name {v}, Trou du Cul seat +{trou} (PV-8)"))
        out.append((("putsch",), "putsch: cancel the exchanges (PV-9)"))
        for s in range(N_SLOTS):
            for count in range(1, MAX_SET + 1):
                out.append((("lay", s, count), f"lay {count} of {rank(s)} face down (PV-15)"))
        out.append((("call",), "call menteur (PV-15)"))
        return out

    # -- the observation ---------------------------------------------------------------------
    def _relative(self, view: dict[str, JSON]) -> tuple[list[int], list[int]]:
        """The seats by relative position (clockwise in ``table``, me first) and each
        seat's relative position."""
        table: Any = view["table"]
        n = len(table)
        i0 = table.index(view["seat"])
        seats = [table[(i0 + k) % n] for k in range(n)]
        rel = [0] * n
        for k, s in enumerate(seats):
            rel[s] = k
        return seats, rel

    def encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        # A numpy array (what ``arena.learn`` passes) is written through a memoryview of its
        # buffer: an item write costs 15 ns instead of 25 ns (75 ns instead of 32 for
        # ``+=``); the cast of each float to the array's type is the same C cast numpy does.
        # With the tables of ``_encode``: 14.1 -> 7.9 us a call (thread CPU time, best of 15
        # over 9,438 views of random 4-player play; a list ``out``: 9.8 -> 8.5 us).
        if type(out) is not list:
            try:
                buffer = memoryview(out)  # type: ignore[arg-type]
            except TypeError:
                pass
            else:
                if buffer.format in ("f", "d") and buffer.ndim == 1 and not buffer.readonly:
                    self._encode(view, buffer)  # type: ignore[arg-type]
                    return
        self._encode(view, out)

    def _encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        """``encode`` into a list or a memoryview: each value is written once (counts are
        summed in local lists first), offsets and per-order tables come from ``__init__``."""
        v: Any = view
        order = v["rank_order"]
        weakest = order[0]
        ids = self.card_ids[weakest]
        rank_slot = self.rank_slot[weakest]
        out[self.phase_at[v["phase"]]] = 1.0
        rnd = v["round"]
        out[self.o_round] = 1.0 if rnd >= ROUND_NORM else rnd / ROUND_NORM
        sizes = v["hand_sizes"]
        n = len(sizes)
        out[self.o_players + n - MIN_SEATS] = 1.0
        played = v["played"]
        played_cards = played["cards"]
        face_down = played.get("face_down", 0)
        leftover = v["leftover"]["cards"]
        total = sum(sizes) + len(played_cards) + face_down + len(leftover)
        config = CONFIGS.get(total)
        if config is None:  # (never from the engine: every card is somewhere in the view)
            config = (len(order) * 4, 2 if total > 68 else 1, total % 4 != 0)
        _, decks, jokers = config
        o = self.o_config
        if len(order) == 8:
            out[o] = 1.0
        if decks == 2:
            out[o + 1] = 1.0
        if jokers:
            out[o + 2] = 1.0
        trick = v["trick"]
        o = self.o_variant
        length = trick.get("length")
        if length is not None:
            out[o] = 1.0
        if "putsch" in v:
            out[o + 1] = 1.0
        if "face_down" in v:
            out[o + 2] = 1.0
        if v["reversed"]:
            out[self.o_reversed] = 1.0

        # own hand and the face-up pile: by identity (a name is there once with one deck,
        # so a plain write, half the cost of ``+=``; twice at most with two decks, PV-16)
        # and counted per slot in local lists, each slot written once below; the
        # leftover and own face-down cards by identity, counted per slot (``known``) for
        # unseen_ranks
        mine = [0] * N_SLOTS
        seen = [0] * N_SLOTS
        known = [0] * N_SLOTS
        oh, op = self.o_hand, self.o_played
        if decks == 1:
            for name in v["cards"]:
                cid, s = ids[name]
                out[oh + cid] = 0.5
                mine[s] += 1
            for name in played_cards:
                cid, s = ids[name]
                out[op + cid] = 0.5
                seen[s] += 1
        else:
            for name in v["cards"]:
                cid, s = ids[name]
                out[oh + cid] += 0.5
                mine[s] += 1
            for name in played_cards:
                cid, s = ids[name]
                out[op + cid] += 0.5
                seen[s] += 1
        oc = self.o_leftover
        for name in leftover:
            cid, s = ids[name]
            out[oc + cid] += 0.5
            known[s] += 1
        mine_down = v.get("face_down")
        if mine_down is not None:  # PV-15
            oc = self.o_face_down
            for name in mine_down["cards"]:
                cid, s = ids[name]
                out[oc + cid] += 0.5
                known[s] += 1
            if face_down:
                out[self.o_pile_down] = min(face_down / MAX_CARDS, 1.0)
        # per slot: own and played counts, and the unseen rest of the configuration, each
        # value read from a table of count * norm (multiples of 1/8 and 1/2, exact in
        # float32; the table instead of a multiply: -4%)
        for h, p, k, (in_play, value, a_hand, a_played, a_unseen) in zip(
            mine, seen, known, self.slot_totals[config], strict=True
        ):
            if h:
                out[a_hand] = value[h]
            if p:
                out[a_played] = value[p]
            left = in_play - h - p - k
            if left > 0:
                out[a_unseen] = value[left]

        top = trick["rank"]
        if top is not None:
            out[self.o_trick_rank + rank_slot[top]] = 1.0
        o = self.o_trick
        out[o] = min(trick["count"] / MAX_SET, 1.0)
        out[o + 1] = min(trick["jokers"] / MAX_WILD, 1.0)
        if length is not None and length > 1:
            out[o + 2] = min(length / MAX_RUN, 1.0)
        out[o + 3] = min(trick["passes"] / PASS_NORM, 1.0)
        if trick["forced"]:
            out[o + 4] = 1.0

        # the seats, relative to me in table order: the table rotated to start at me (C
        # slicing), with each seat's offsets precomputed per relative position
        table = v["table"]
        i0 = table.index(v["seat"])
        rel = [0] * n
        roles, scores = v["roles"], v["scores"]
        role_index = self.role_index
        seat_at = self.seat_at
        for k, s in enumerate(table[i0:] + table[:i0]):
            a_present, a_size, a_role, a_score = seat_at[k]
            rel[s] = k
            out[a_present] = 1.0
            hs = sizes[s]
            out[a_size] = 1.0 if hs >= HAND_NORM else hs / HAND_NORM
            role = roles[s]
            if role is not None:
                out[a_role + role_index[role]] = 1.0
            sc = scores[s]
            if sc > 0:
                out[a_score] = 1.0 if sc >= SCORE_NORM else sc / SCORE_NORM
        for place, s in enumerate(v["places"], 1):
            if s is not None:
                k = rel[s]
                out[self.o_out + k] = 1.0
                out[self.o_place + k] = place / MAX_SEATS
        turn = v["turn"]
        if turn is not None:
            out[self.o_turn + rel[turn]] = 1.0
        out[self.o_dealer + rel[v["dealer"]]] = 1.0
        by = trick["by"]
        if by is not None:
            out[self.o_by + rel[by]] = 1.0
        putschist = v.get("putsch")
        if putschist is not None:
            out[self.o_putschist + rel[putschist]] = 1.0

        exchange = v["exchange"]
        if exchange is not None:  # PR-10
            o = self.o_exchange
            part = exchange["gave"]
            if part is not None:
                out[o] = 1.0
                if part["forced"]:
                    out[o + 1] = 1.0
                oc = self.o_gave
                for name in part["cards"]:
                    out[oc + ids[name][0]] += 0.5
            part = exchange["received"]
            if part is not None:
                out[o + 2] = 1.0
                if part["forced"]:
                    out[o + 3] = 1.0
                oc = self.o_received
                for name in part["cards"]:
                    out[oc + ids[name][0]] += 0.5

        announced = v.get("announced")
        if announced is not None:  # PV-15
            out[self.o_announcer + rel[announced["seat"]]] = 1.0
            self._shape(announced, rank_slot, self.o_announced_rank, self.o_announced, out)
        announcing = v.get("announcing")
        if announcing is not None:
            self._shape(announcing, rank_slot, self.o_announcing_rank, self.o_announcing, out)

    @staticmethod
    def _shape(
        play: Any, rank_slot: dict[str, int], o_rank: int, o: int, out: MutableSequence[float]
    ) -> None:
        """An announcement (PV-15): its rank's slot, count, Jokers and run length."""
        out[o_rank + rank_slot[play["rank"]]] = 1.0
        out[o] = min(play["count"] / MAX_SET, 1.0)
        out[o + 1] = min(play.get("jokers", 0) / MAX_WILD, 1.0)
        length = play.get("length", 1)
        if length > 1:
            out[o + 2] = min(length / MAX_RUN, 1.0)

    # -- actions -----------------------------------------------------------------------------
    def legal_indices(
        self, view: dict[str, JSON], legal_actions: list[Action]
    ) -> dict[int, Action]:
        # ``Encoding.legal_indices`` with passes and plays (nearly every action of a
        # request) indexed inline, without a call of ``action_index`` each
        found: dict[int, Action] = {}
        play_index = self.play_index[view["rank_order"][0]]  # type: ignore[index]
        for action in legal_actions:
            kind = action["type"]
            if kind == "pass":
                i: int | None = self.i_pass
            elif kind == "play":
                i = play_index.get((action["rank"], action["count"], action.get("jokers", 0)))
            else:
                i = self.action_index(view, action)
            if i is not None and i not in found:
                found[i] = action
        return found

    def action_index(self, view: dict[str, JSON], action: Action) -> int | None:
        kind = action["type"]
        if kind == "pass":
            return self.i_pass
        order: Any = view["rank_order"]
        weakest: str = order[0]
        if kind == "play":
            return self.play_index[weakest].get(
                (action["rank"], action["count"], action.get("jokers", 0))
            )
        index = self.actions.index
        slots = self.rank_slot[weakest]
        if kind == "give":
            key: tuple[Any, ...] = ("give", tuple(sorted(slots[r] for r in action["ranks"])))
        elif kind == "lay":
            key = ("lay", slots[action["rank"]], action["count"])
        elif kind == "throw":
            key = ("throw", slots[action["rank"]], action["count"])
        elif kind == "run":
            key = ("run", slots[action["rank"]], action["length"], action["count"])
        elif kind in ("coup_d_etat", "guillotine"):
            key = (kind, slots[action["rank"]], action["count"], action["jokers"])
        elif kind == "name":
            _, rel = self._relative(view)
            vice = action.get("vice_president")
            key = ("name", None if vice is None else rel[vice], rel[action["trou_du_cul"]])
        else:  # putsch, call
            key = (kind,)
        return index.get(key)

    # -- the explanation ---------------------------------------------------------------------
    def explain(self, values: list[float]) -> dict[str, JSON]:
        def names(start: int) -> list[str]:
            out: list[str] = []
            for cid, x in enumerate(values[start : start + N_IDS]):
                if x:  # (most identities are absent: skip them)
                    out += [ID_NAMES[cid]] * round(x * 2)
            return out

        def slot(start: int) -> str | None:
            for s in range(N_SLOTS):
                if values[start + s] > 0.5:
                    return slot_names[s]
            return None

        o = self.o_config
        small, reversed_order = values[o] > 0.5, values[self.o_reversed] > 0.5
        natural = ORDER_32 if small else ORDER_52
        weakest = natural[-1] if reversed_order else natural[0]
        slot_names = self.slot_names[weakest]
        menteur = values[self.o_variant + 2] > 0.5
        played: dict[str, Any] = {"cards": names(self.o_played)}
        if menteur:  # PV-15: the leak table reads the pile as face down
            played["face_down"] = round(values[self.o_pile_down] * MAX_CARDS)
        view: dict[str, Any] = {
            "cards": names(self.o_hand),
            "rank_order": list(ORDERS[weakest]),
            "reversed": reversed_order,
            "leftover": {"cards": names(self.o_leftover)},
            "played": played,
            "trick": {"rank": slot(self.o_trick_rank)},
        }
        o = self.o_exchange
        if values[o] > 0.5 or values[o + 2] > 0.5:
            view["exchange"] = {
                key: {"cards": names(start), "forced": values[flag + 1] > 0.5}
                if values[flag] > 0.5
                else None
                for key, start, flag in (
                    ("gave", self.o_gave, o),
                    ("received", self.o_received, o + 2),
                )
            }
        else:
            view["exchange"] = None
        if menteur:
            view["face_down"] = {"cards": names(self.o_face_down)}
            for key, start in (
                ("announced", self.o_announced_rank),
                ("announcing", self.o_announcing_rank),
            ):
                rank = slot(start)
                view[key] = None if rank is None else {"rank": rank}
        return view


ENCODING = PresidentEncoding()
