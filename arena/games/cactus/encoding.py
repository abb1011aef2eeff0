"""The Cactus encoding (issue 26): a seat's view as a fixed-size observation, its JSON
actions as indices of one fixed action space, for learning environments and trained bots.

Boundary: this module reads only the ``view`` it is given (``Cactus.view``), never the
state, so an observation holds nothing the seat may not know (what it may know is CA-3's
"What each seat may see" of docs/rules/cactus.md); it knows nothing of ``arena.learn``.
docs/learn/cactus.md explains every slice and index for contestants.

Slots are named by *position*: position ``p`` of a layout is its ``p``-th smallest slot id
(CA-3: ids are stable and grow with penalty cards, CL-5/PG-4), both in the observation and
in the actions.  Positions from ``MAX_POSITIONS`` on are neither encoded nor indexed.
Seats are relative to the observer: block 0 is the observer, block ``k`` the ``k``-th seat
clockwise after it, in the observation and in the ``player`` of actions.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from operator import itemgetter
from typing import Any, ClassVar

from arena.games import cards
from arena.games.base import JSON, Action
from arena.games.cactus.engine import Cactus
from arena.games.cactus.options import POWER_NAMES
from arena.games.cactus.schema import DECISIONS, PHASES
from arena.games.encoding import ActionSpace, Encoding, Layout

MAX_PLAYERS = Cactus.max_players  # 8
MIN_PLAYERS = Cactus.min_players  # 2
# Layout positions encoded per seat.  Random play (2..8 players, both presets, whose
# random snappers throw wrongly all the time) stays within 12 positions in 99.9% of its
# decisions and never passed 16 in 20,000 pagat decisions (PG-4's two penalty cards per
# wrong throw are what grows a layout; classic's CL-5 refills the emptied slot).
MAX_POSITIONS = 16
# Slot ids are written as id / SLOT_SCALE, exact for ids 0..SLOT_SCALE - 1; an id from
# SLOT_SCALE on (30 PG-4 penalties in one round) is written 1.0 and its card not encoded.
SLOT_SCALE = 63
MAX_DECKS = 3  # CA-1, option decks
MAX_CARDS = MAX_DECKS * cards.CARDS_PER_DECK  # 156: the stock and discard normaliser
MAX_ROUND = 50  # PG-6's cap of the pagat preset
MAX_TURN = 200  # option max_turns's default (CA-7 ruling)
VALUE_LOW, VALUE_HIGH = -5, 15  # option values (CA-2) clipped to this range
N_RANKS, N_SUITS = len(cards.RANKS), len(cards.SUITS)
# the per-position record of a layout block
PRESENT, KNOWN, RANK, SUIT = 0, 1, 2, 2 + N_RANKS
VALUE, SLOT = SUIT + N_SUITS, SUIT + N_SUITS + 1
POSITION_SIZE = SLOT + 1  # 21
# a card record (drawn card, discard top): present, rank, suit, value
CARD_RANK, CARD_SUIT, CARD_VALUE = 1, 1 + N_RANKS, 1 + N_RANKS + N_SUITS
CARD_SIZE = CARD_VALUE + 1  # 19
SCORINGS = ("wins", "tally", "points", "penalty")  # the view's scores key of each scoring
# (key, low, high): a score is written (clip(x, low, high) - low) / (high - low)
SCORE_RANGES = {
    "wins": (0, 10),  # CL-8 rounds won
    "sum_totals": (0, 400),  # CL-8 the wins tie-break
    "tally": (0, 100),  # CL-8 tas_de_merde
    "points": (-5, 10),  # CL-8 maximus (a wrong call is -1)
    "penalty": (0, 150),  # PG-5/PG-6 (a deal may overshoot the target of 100)
}

# card name -> (rank index, suit index, identity index 0..51)
_CARD = {name: (i // N_SUITS, i % N_SUITS, i) for i, name in enumerate(cards.NAMES)}
_RANK_INDEX = {rank: i for i, rank in enumerate(cards.RANKS)}
_slot_of = itemgetter("slot")


def _scale(x: float, low: float, high: float) -> float:
    return (min(max(x, low), high) - low) / (high - low)


class CactusEncoding(Encoding):
    """Observation and action space of Cactus: see the module docstring and
    docs/learn/cactus.md."""

    game_id: ClassVar[str] = "cactus"

    def __init__(self) -> None:
        P, S = MAX_POSITIONS, MAX_PLAYERS
        lay = Layout()
        add = lay.add
        self._my_seat = add(
            "my_seat",
            S,
            "One-hot: the observer's absolute seat (0..7). Only for explain; a policy "
            "should not need it (everything else is seat-relative).",
        )
        self._players = add("players", S - 1, "One-hot: players at the table, 2..8.")
        self._seat_present = add(
            "seat_present", S, "Per relative seat k (0 = me): 1 if that seat is at the table."
        )
        self._dealer = add("dealer", S, "One-hot: the dealer's relative seat (CA-11).")
        self._to_move = add(
            "to_move", S, "One-hot: the relative seat whose turn it is (or was, phase over)."
        )
        self._called = add("called", 1, "1 once someone called 'cactus' this round (CA-7).")
        self._called_by = add("called_by", S, "One-hot: the caller's relative seat (CA-7).")
        self._phase = add("phase", len(PHASES), f"One-hot phase: {', '.join(PHASES)}.")
        self._decision = add(
            "decision",
            len(DECISIONS),
            f"One-hot decision asked of me: {', '.join(DECISIONS)} (all 0: none).",
        )
        self._power = add(
            "power",
            len(POWER_NAMES),
            f"One-hot, decision power only: the power in force, {', '.join(POWER_NAMES)} "
            "(PG-3; the option's rank table itself is not in the view).",
        )
        self._eight_offer = add(
            "eight_offer", 1, "1 if the passed-on 8 lets me peek first (CL-3, decision turn)."
        )
        self._round = add("round", 1, f"min(round, {MAX_ROUND}) / {MAX_ROUND}.")
        self._turn = add("turn", 1, f"min(turns begun this round, {MAX_TURN}) / {MAX_TURN}.")
        self._stock = add("stock", 1, f"Stock size / {MAX_CARDS} (CA-4).")
        card_doc = (
            "[present, rank one-hot A,2..10,J,Q,K (13), suit one-hot C,D,H,S (4), "
            f"value (clip(v, {VALUE_LOW}, {VALUE_HIGH}) + {-VALUE_LOW}) / "
            f"{VALUE_HIGH - VALUE_LOW}]"
        )
        self._drawn = add(
            "drawn", CARD_SIZE, f"The card I drew or took and hold (CA-5): {card_doc}."
        )
        self._top = add("discard_top", CARD_SIZE, f"The top discard card (CA-4): {card_doc}.")
        self._discard_size = add("discard_size", 1, f"Discard size / {MAX_CARDS}.")
        self._discard_cards = add(
            "discard_cards",
            cards.CARDS_PER_DECK,
            f"Per card identity (AC, AD, AH, AS, 2C, ... KS): copies in the discard / "
            f"{MAX_DECKS} (CA-1: up to 3 decks).",
        )
        self._discard_ranks = add(
            "discard_ranks",
            N_RANKS,
            f"Per rank A..K: cards of that rank in the discard / {4 * MAX_DECKS}.",
        )
        self._values = add(
            "values",
            N_RANKS,
            f"Per rank A..K: its points (option values, CA-2), (clip(v, {VALUE_LOW}, "
            f"{VALUE_HIGH}) + {-VALUE_LOW}) / {VALUE_HIGH - VALUE_LOW}.",
        )
        self._scoring = add(
            "scoring",
            len(SCORINGS),
            "One-hot scoring (CL-8, PG-5): wins, tas_de_merde (tally), maximus (points), penalty.",
        )
        ranges = ", ".join(f"{k} {lo}..{hi}" for k, (lo, hi) in SCORE_RANGES.items())
        self._scores = add(
            "scores",
            2 * S,
            "Per relative seat k: [k*2] its score (wins, tally, points or penalty), "
            f"[k*2+1] its sum_totals (scoring wins only), each clipped and scaled to 0..1 "
            f"over: {ranges}.",
        )
        self._count = add(
            "layout_count",
            S,
            f"Per relative seat: cards in its layout / {P} (clipped at 1).",
        )
        self._locked = add(
            "locked",
            P,
            "Per position of my layout: 1 if it holds a penalty card I may not throw yet "
            "(CL-5, decision snap only).",
        )
        record = (
            f"{P} positions (the k-th smallest slot id first) x {POSITION_SIZE} values: "
            "[present, known (I know its card), rank one-hot A..K (13, if known), suit "
            "one-hot C,D,H,S (4, if known), value as in values (if known), slot id / "
            f"{SLOT_SCALE} (1.0: {SLOT_SCALE} or more)]"
        )
        self._layouts = [
            add(
                f"layout_{k}",
                P * POSITION_SIZE,
                ("My layout" if k == 0 else f"The layout of relative seat {k}")
                + f" (CA-3): {record}.",
            )
            for k in range(S)
        ]
        self.fields, self.size = lay.fields, lay.size
        self._phase_index = {p: self._phase + i for i, p in enumerate(PHASES)}
        self._decision_index = {d: self._decision + i for i, d in enumerate(DECISIONS)}
        self._power_index = {p: self._power + i for i, p in enumerate(POWER_NAMES)}
        self._scoring_index = {k: i for i, k in enumerate(SCORINGS)}
        self._discard_at = {name: self._discard_cards + i for name, (_, _, i) in _CARD.items()}

        entries: list[tuple[Any, str]] = [
            (("draw",), "draw: the top stock card (CA-5)"),
            (("take_discard",), "take_discard: the top discard card (CA-5, PG-2)"),
            (("discard",), "discard: the card drawn (CA-5)"),
            (("pass",), "pass: no snap (CA-8) or no call (CA-7)"),
            (("skip",), "skip: the power unused (PG-3)"),
            (("call",), "call: 'cactus' (CA-7)"),
        ]
        entries += [
            (("initial_peek", i, j), f"initial_peek: my positions {i} and {j} (PG-1)")
            for i in range(P)
            for j in range(i + 1, P)
        ]
        for kind, rule in (("peek", "CL-2, CL-3, PG-3"), ("swap", "CA-5"), ("snap", "CA-8")):
            entries += [((kind, p), f"{kind}: my position {p} ({rule})") for p in range(P)]
        entries += [
            (("peek_other", k, p), f"peek_other: position {p} of relative seat {k} (PG-3)")
            for k in range(1, S)
            for p in range(P)
        ]
        entries += [
            (
                ("blind_swap", p, k, q),
                f"blind_swap: my position {p} with position {q} of relative seat {k} (PG-3)",
            )
            for p in range(P)
            for k in range(1, S)
            for q in range(P)
        ]
        self.actions = ActionSpace(entries)
        self._simple = {key[0]: i for i, key in enumerate(self.actions.keys) if len(key) == 1}
        # (values dict, its 13 scaled values): the engine sends one dict per match
        self._values_cache: tuple[Any, list[float]] = (None, [])
        # (view, {absolute seat: {slot id: position}}): action_index is called once per
        # legal action of the same view
        self._position_cache: tuple[Any, dict[int, dict[int, int]]] = (None, {})

    # -- observation ------------------------------------------------------------------------
    def _scaled_values(self, values: dict[str, int]) -> list[float]:
        cached = self._values_cache
        if cached[0] is values:
            return cached[1]
        scaled = [_scale(values[r], VALUE_LOW, VALUE_HIGH) for r in cards.RANKS]
        self._values_cache = (values, scaled)
        return scaled

    def _card(self, out: MutableSequence[float], base: int, name: str, vn: list[float]) -> None:
        rank, suit, _ = _CARD[name]
        out[base] = 1.0
        out[base + CARD_RANK + rank] = 1.0
        out[base + CARD_SUIT + suit] = 1.0
        out[base + CARD_VALUE] = vn[rank]

    def encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        me: int = view["seat"]
        n: int = view["players"]
        vn = self._scaled_values(view["values"])
        out[self._my_seat + me] = 1.0
        out[self._players + n - MIN_PLAYERS] = 1.0
        out[self._dealer + (view["dealer"] - me) % n] = 1.0
        out[self._to_move + (view["to_move"] - me) % n] = 1.0
        caller = view["called_by"]
        if caller is not None:
            out[self._called] = 1.0
            out[self._called_by + (caller - me) % n] = 1.0
        out[self._phase_index[view["phase"]]] = 1.0
        decision = view["decision"]
        if decision is not None:
            out[self._decision_index[decision]] = 1.0
        power = view.get("power")
        if power is not None:
            out[self._power_index[power]] = 1.0
        if view.get("eight_offer"):
            out[self._eight_offer] = 1.0
        out[self._round] = min(view["round"], MAX_ROUND) / MAX_ROUND
        out[self._turn] = min(view["turn"], MAX_TURN) / MAX_TURN
        out[self._stock] = min(view["stock"], MAX_CARDS) / MAX_CARDS
        drawn = view["drawn"]
        if drawn is not None:
            self._card(out, self._drawn, drawn, vn)
        discard = view["discard"]
        if discard:
            self._card(out, self._top, discard[-1], vn)
            out[self._discard_size] = min(len(discard), MAX_CARDS) / MAX_CARDS
            # CA-1: at most MAX_DECKS copies of a name, so no count needs clipping
            at = self._discard_at
            per_rank = [0] * N_RANKS
            for name in discard:
                i = at[name]
                out[i] += 1 / MAX_DECKS
                per_rank[i - at["AC"] >> 2] += 1
            base = self._discard_ranks
            for r, c in enumerate(per_rank):
                if c:
                    out[base + r] = c / (4 * MAX_DECKS)
        out[self._values : self._values + N_RANKS] = vn
        self._encode_scores(view["scores"], me, n, out)

        layouts = view["layouts"]
        own_slots: list[int] = []
        for k in range(n):
            rows = layouts[(me + k) % n]
            out[self._seat_present + k] = 1.0
            if not rows:
                continue
            out[self._count + k] = min(len(rows), MAX_POSITIONS) / MAX_POSITIONS
            if len(rows) > 1:
                rows = sorted(rows, key=_slot_of)
            base = self._layouts[k]
            for row in rows[:MAX_POSITIONS]:
                slot = row["slot"]
                out[base] = 1.0  # PRESENT
                if k == 0:
                    own_slots.append(slot)
                if slot >= SLOT_SCALE:  # beyond the exact slot ids: the card is not encoded
                    out[base + SLOT] = 1.0
                else:
                    out[base + SLOT] = slot / SLOT_SCALE
                    name = row["card"]
                    if name is not None:
                        rank, suit, _ = _CARD[name]
                        out[base + KNOWN] = 1.0
                        out[base + RANK + rank] = 1.0
                        out[base + SUIT + suit] = 1.0
                        out[base + VALUE] = vn[rank]
                base += POSITION_SIZE
        locked = view.get("locked_slots")
        if locked:
            for slot in locked:
                if slot in own_slots:
                    out[self._locked + own_slots.index(slot)] = 1.0

    def _encode_scores(
        self, scores: dict[str, list[int]], me: int, n: int, out: MutableSequence[float]
    ) -> None:
        base = self._scores
        for key, per_seat in scores.items():
            low, high = SCORE_RANGES[key]
            if key == "sum_totals":
                at = base + 1
            else:
                out[self._scoring + self._scoring_index[key]] = 1.0
                at = base
            for seat, x in enumerate(per_seat):
                out[at + 2 * ((seat - me) % n)] = _scale(x, low, high)

    # -- actions ----------------------------------------------------------------------------
    def _positions(self, view: dict[str, JSON], seat: int) -> dict[int, int]:
        """Slot id -> position of ``seat``'s layout in ``view`` (cached for that view)."""
        cached = self._position_cache
        if cached[0] is view:
            maps = cached[1]
        else:
            maps = {}
            self._position_cache = (view, maps)
        found = maps.get(seat)
        if found is None:
            slots = sorted(row["slot"] for row in view["layouts"][seat])
            found = maps[seat] = {s: p for p, s in enumerate(slots[:MAX_POSITIONS])}
        return found

    def action_index(self, view: dict[str, JSON], action: Action) -> int | None:
        kind = action["type"]
        simple = self._simple.get(kind)
        if simple is not None:
            return simple
        me: int = view["seat"]
        index = self.actions.index
        if kind in ("peek", "swap", "snap"):
            p = self._positions(view, me).get(action["slot"])
            return None if p is None else index[(kind, p)]
        if kind == "initial_peek":
            mine = self._positions(view, me)
            i, j = (mine.get(s) for s in action["slots"])
            if i is None or j is None:
                return None
            return index[("initial_peek", min(i, j), max(i, j))]
        player: int = action["player"]
        k = (player - me) % view["players"]
        theirs = self._positions(view, player)
        if kind == "peek_other":
            p = theirs.get(action["slot"])
            return None if p is None else index[("peek_other", k, p)]
        if kind == "blind_swap":
            p = self._positions(view, me).get(action["slot"])
            q = theirs.get(action["other_slot"])
            return None if p is None or q is None else index[("blind_swap", p, k, q)]
        return None

    # -- explanation ------------------------------------------------------------------------
    def _name(self, values: list[float], base: int, rank_at: int, suit_at: int) -> str:
        rank = max(range(N_RANKS), key=lambda r: values[base + rank_at + r])
        suit = max(range(N_SUITS), key=lambda s: values[base + suit_at + s])
        return cards.RANKS[rank] + cards.SUITS[suit]

    def explain(self, values: list[float]) -> dict[str, JSON]:
        me = max(range(MAX_PLAYERS), key=lambda s: values[self._my_seat + s])
        n = MIN_PLAYERS + max(range(MAX_PLAYERS - 1), key=lambda i: values[self._players + i])
        layouts: list[list[dict[str, JSON]]] = [[] for _ in range(n)]
        for k in range(n):
            rows = layouts[(me + k) % n]
            base = self._layouts[k]
            for _ in range(MAX_POSITIONS):
                if values[base + PRESENT] > 0.5:
                    card = None
                    if values[base + KNOWN] > 0.5:
                        card = self._name(values, base, RANK, SUIT)
                    rows.append({"slot": round(values[base + SLOT] * SLOT_SCALE), "card": card})
                base += POSITION_SIZE
        discard: list[str] = []
        for i, name in enumerate(cards.NAMES):
            discard += [name] * round(values[self._discard_cards + i] * MAX_DECKS)
        if values[self._top] > 0.5:  # the top card last, as the view has it
            top = self._name(values, self._top, CARD_RANK, CARD_SUIT)
            discard.remove(top)
            discard.append(top)
        drawn = None
        if values[self._drawn] > 0.5:
            drawn = self._name(values, self._drawn, CARD_RANK, CARD_SUIT)
        return {"seat": me, "players": n, "layouts": layouts, "discard": discard, "drawn": drawn}


ENCODING = CactusEncoding()
