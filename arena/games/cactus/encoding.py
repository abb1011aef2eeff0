"""The Cactus encoding: a seat's view as a fixed-size observation, its JSON
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

from array import array
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
_slot_of = itemgetter("slot")


def _scale(x: float, low: float, high: float) -> float:
    return (min(max(x, low), high) - low) / (high - low)


def _sink(out: MutableSequence[float]) -> tuple[MutableSequence[float], str]:
    """Where encode writes, and the typecode its cached regions are packed in.

    A numpy array (arena.learn) or an ``array`` of floats is written through a memoryview:
    an item write costs ~35 ns instead of numpy's ~55 ns, and a cached region packed as an
    ``array`` of the same typecode is copied in one slice assignment (a memcpy: ~0.15 us
    for a 336-value layout block).  Both round to float32 as numpy does.  Anything else (a
    list) is written directly, its regions as lists of floats (typecode "")."""
    try:
        view = memoryview(out)  # type: ignore[arg-type]
    except TypeError:
        return out, ""
    if view.format in ("f", "d"):
        return view, view.format
    return out, ""  # e.g. a non-native byte order: numpy converts, slowly but right


def _zeros(typecode: str, size: int) -> MutableSequence[float]:
    """A zeroed region in the form ``_sink``'s writer takes in a slice assignment (an
    ``array`` is made by repetition, ~0.2 us for a block, not from a list: ~3 us)."""
    return array(typecode, [0.0]) * size if typecode else [0.0] * size


# Matches whose encode caches are kept at once: environments stepped in turn in one
# process each find their own, up to this many (then every view misses and encode costs
# ~25 us, the uncached path, instead of ~8; measured with 32 matches and a bound of 16).
# A stream holds ~40 KB at 4 players, ~150 KB at 8.
MAX_STREAMS = 64
MAX_RECORD_TABLES = 16  # distinct option values (CA-2) whose position records are kept


class _Stream:
    """What encode keeps of one match's last views, to copy the parts of the observation
    that did not change instead of computing them again.

    A match is known by its values dict (CactusState.options.values, one object per
    match, sent in every view), so several environments stepped in turn in one process
    do not evict each other's entries.  Every region is reused only while what it encodes
    compares equal to a copy kept here (so a caller changing a view later cannot make it
    stale) and was packed for the same typecode (see ``_sink``).  Consecutive views mostly
    repeat them: a snap window asks several seats about the same table, a turn's draw
    changes no layout, a layout changes when its owner plays or is swapped with.

    Measured (4 players, random play, process time, encode + legal_indices, before ->
    after this module's tables and caches): 15.3 -> 7.0 us a decision in classic, 14.8
    -> 8.9 in pagat; with 4 matches stepped in turn 19.5 -> 8.9 and 18.9 -> 10.3 (one
    cache for all matches instead of one per match: 25.1 and 23.9, slower than none)."""

    __slots__ = ("blocks", "discard", "records", "scores", "values", "vn")

    def __init__(self, values: dict[str, int]):
        self.values = values
        # the option values scaled as written (values slice, card records)
        self.vn = [_scale(values[r], VALUE_LOW, VALUE_HIGH) for r in cards.RANKS]
        # discard_top .. discard_ranks: (typecode, discard copy, packed region, per-card
        # counts, per-rank counts); a discard that gained or lost its top card since is
        # updated from it
        self.discard: tuple[Any, ...] = ("?", [], None, [], [])
        # values .. scores per observer seat: (typecode, players, scores copy, region)
        self.scores: dict[int, tuple[str, int, dict[str, list[int]], Any]] = {}
        # a layout block per observer seat * MAX_PLAYERS + relative seat (a list: cheaper
        # to index than a dict): (typecode, rows copy, packed block, slot id -> position)
        self.blocks: list[tuple[str, list[dict[str, Any]], Any, dict[int, int]] | None]
        self.blocks = [None] * (MAX_PLAYERS * MAX_PLAYERS)
        # (typecode, the shared record table of CactusEncoding._record_tables)
        self.records: tuple[str, dict[Any, Any]] = ("?", {})


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
        index = self.actions.index
        self._simple = {key[0]: i for i, key in enumerate(self.actions.keys) if len(key) == 1}
        # The same indices as nested lists by position (and relative seat), so naming an
        # action costs list lookups instead of building and hashing a key tuple: with the
        # loop of legal_indices inlined, ~35% less time per request (measured, 4 players).
        self._own_at = {
            kind: [index[(kind, p)] for p in range(P)] for kind in ("peek", "swap", "snap")
        }
        self._pair_at = [[index.get(("initial_peek", i, j)) for j in range(P)] for i in range(P)]
        self._other_at = [[index.get(("peek_other", k, p)) for p in range(P)] for k in range(S)]
        self._blind_at = [
            [[index.get(("blind_swap", p, k, q)) for q in range(P)] for k in range(S)]
            for p in range(P)
        ]
        # The caches of encode, per match (see _Stream), by the id of the match's values
        # dict, oldest first; at most MAX_STREAMS of them.
        self._streams: dict[int, _Stream] = {}
        # {(typecode, scaled values): {(slot id, card name or None): packed position
        # record}}: a changed layout block is assembled from records by slice copies (~1.2
        # us a block, not 2.5 us writing each value; measured); shared by the matches
        # with the same values, a record is built once per process, not once per match
        self._record_tables: dict[tuple[str, tuple[float, ...]], dict[Any, Any]] = {}
        self._block_spans = [(start, start + P * POSITION_SIZE) for start in self._layouts]
        # layout_count's value per layout size below MAX_POSITIONS (1.0 from there on)
        self._count_value = [size / P for size in range(P)]
        # encode copies these two regions whole: their slices must follow one another
        assert self._discard_size == self._top + CARD_SIZE
        assert self._discard_cards == self._discard_size + 1
        assert self._discard_ranks == self._discard_cards + cards.CARDS_PER_DECK
        assert self._scoring == self._values + N_RANKS
        assert self._scores == self._scoring + len(SCORINGS)
        self._discard_region = (self._top, self._discard_ranks + N_RANKS)
        self._scores_region = (self._values, self._scores + 2 * S)
        # (view, {absolute seat: {slot id: position}}): action_index is called once per
        # legal action of the same view
        self._position_cache: tuple[Any, dict[int, dict[int, int]]] = (None, {})

    # -- observation ------------------------------------------------------------------------
    def _stream(self, values: dict[str, int]) -> _Stream:
        """The caches of the match whose views carry ``values`` (made on its first view)."""
        streams = self._streams
        stream = streams.get(id(values))
        if stream is None or stream.values is not values:
            stream = _Stream(values)
            streams.pop(id(values), None)
            if len(streams) >= MAX_STREAMS:
                del streams[next(iter(streams))]  # the oldest: its match is likely over
            streams[id(values)] = stream
        return stream

    @staticmethod
    def _discard_values(discard: list[str], stream: _Stream, typecode: str) -> tuple[Any, ...]:
        """The discard's cache entry (see ``_Stream``): its region holds the top
        card, the size, per-card and per-rank counts.  Built from the cached entry when
        the discard only gained or lost its top card (a discard, a snap, a take: most
        changes), else from scratch."""
        # offsets in the region: discard_top, discard_size, discard_cards, discard_ranks
        top, size_at = 0, CARD_SIZE
        cards_at = size_at + 1
        ranks_at = cards_at + cards.CARDS_PER_DECK
        cached = stream.discard
        prev = cached[1]
        grown = len(discard) - len(prev)
        if (
            prev
            and cached[0] == typecode
            and ((grown == 1 and discard[:-1] == prev) or (grown == -1 and prev[:-1] == discard))
        ):
            region = cached[2][:]
            card_counts, rank_counts = cached[3][:], cached[4][:]
            rank, suit, _ = _CARD[prev[-1]]  # the old top card's record, cleared
            region[top + CARD_RANK + rank] = 0.0
            region[top + CARD_SUIT + suit] = 0.0
            rank, _, i = _CARD[discard[-1] if grown == 1 else prev[-1]]
            card_counts[i] += grown
            rank_counts[rank] += grown
            # CA-1: at most MAX_DECKS copies of a name, so no count needs clipping
            region[cards_at + i] = card_counts[i] / MAX_DECKS
            region[ranks_at + rank] = rank_counts[rank] / (4 * MAX_DECKS)
        else:
            region = _zeros(typecode, ranks_at + N_RANKS)
            card_counts, rank_counts = [0] * cards.CARDS_PER_DECK, [0] * N_RANKS
            for name in discard:
                rank, _, i = _CARD[name]
                card_counts[i] += 1
                rank_counts[rank] += 1
            for i, c in enumerate(card_counts):
                if c:
                    region[cards_at + i] = c / MAX_DECKS
            for rank, c in enumerate(rank_counts):
                if c:
                    region[ranks_at + rank] = c / (4 * MAX_DECKS)
        rank, suit, _ = _CARD[discard[-1]]
        region[top] = 1.0
        region[top + CARD_RANK + rank] = 1.0
        region[top + CARD_SUIT + suit] = 1.0
        region[top + CARD_VALUE] = stream.vn[rank]
        region[size_at] = min(len(discard), MAX_CARDS) / MAX_CARDS
        # a copy of the discard: the cache must not follow a caller's later change of it
        return (typecode, discard[:], region, card_counts, rank_counts)

    def _scores_values(
        self, scores: dict[str, list[int]], me: int, n: int, vn: list[float], typecode: str
    ) -> MutableSequence[float]:
        """The values .. scores region: the rank values, the scoring, the seats' scores."""
        start, stop = self._scores_region
        region = _zeros(typecode, stop - start)
        for r, x in enumerate(vn):
            region[r] = x
        base = self._scores - start
        for key, per_seat in scores.items():
            low, high = SCORE_RANGES[key]
            if key == "sum_totals":
                at = base + 1
            else:
                region[self._scoring - start + SCORINGS.index(key)] = 1.0
                at = base
            for seat, x in enumerate(per_seat):
                region[at + 2 * ((seat - me) % n)] = _scale(x, low, high)
        return region

    def _block_values(
        self, rows: list[dict[str, Any]], stream: _Stream, typecode: str
    ) -> tuple[MutableSequence[float], dict[int, int]]:
        """A layout block: its first MAX_POSITIONS rows by slot id (CA-3), one record each;
        and its slot id -> position map (what ``_positions`` gives)."""
        vn = stream.vn
        if stream.records[0] != typecode:
            tables = self._record_tables
            table_key = (typecode, tuple(vn))
            if table_key not in tables and len(tables) >= MAX_RECORD_TABLES:
                tables.clear()  # a bound, for a caller cycling through many value tables
            stream.records = (typecode, tables.setdefault(table_key, {}))
        records = stream.records[1]
        block = _zeros(typecode, MAX_POSITIONS * POSITION_SIZE)
        positions: dict[int, int] = {}
        base = 0
        for p, row in enumerate(sorted(rows, key=_slot_of)[:MAX_POSITIONS]):
            slot = row["slot"]
            positions[slot] = p
            # beyond the exact slot ids the card is not encoded: one record for them all
            key = (slot, row["card"]) if slot < SLOT_SCALE else (SLOT_SCALE, None)
            record = records.get(key)
            if record is None:
                record = records[key] = self._record(*key, vn, typecode)
            block[base : base + POSITION_SIZE] = record
            base += POSITION_SIZE
        return block, positions

    @staticmethod
    def _record(
        slot: int, name: str | None, vn: list[float], typecode: str
    ) -> MutableSequence[float]:
        """One position record: present, known, rank, suit, value, slot id."""
        record = _zeros(typecode, POSITION_SIZE)
        record[PRESENT] = 1.0
        record[SLOT] = 1.0 if slot >= SLOT_SCALE else slot / SLOT_SCALE
        if name is not None:
            rank, suit, _ = _CARD[name]
            record[KNOWN] = 1.0
            record[RANK + rank] = 1.0
            record[SUIT + suit] = 1.0
            record[VALUE] = vn[rank]
        return record

    def encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        w, typecode = _sink(out)
        me: int = view["seat"]
        n: int = view["players"]
        stream = self._stream(view["values"])
        vn = stream.vn
        w[self._my_seat + me] = 1.0
        w[self._players + n - MIN_PLAYERS] = 1.0
        w[self._dealer + (view["dealer"] - me) % n] = 1.0
        w[self._to_move + (view["to_move"] - me) % n] = 1.0
        caller = view["called_by"]
        if caller is not None:
            w[self._called] = 1.0
            w[self._called_by + (caller - me) % n] = 1.0
        w[self._phase_index[view["phase"]]] = 1.0
        decision = view["decision"]
        if decision is not None:
            w[self._decision_index[decision]] = 1.0
        power = view.get("power")
        if power is not None:
            w[self._power_index[power]] = 1.0
        if view.get("eight_offer"):
            w[self._eight_offer] = 1.0
        w[self._round] = min(view["round"], MAX_ROUND) / MAX_ROUND
        w[self._turn] = min(view["turn"], MAX_TURN) / MAX_TURN
        w[self._stock] = min(view["stock"], MAX_CARDS) / MAX_CARDS
        drawn = view["drawn"]
        if drawn is not None:
            rank, suit, _ = _CARD[drawn]
            base = self._drawn
            w[base] = 1.0
            w[base + CARD_RANK + rank] = 1.0
            w[base + CARD_SUIT + suit] = 1.0
            w[base + CARD_VALUE] = vn[rank]

        discard = view["discard"]
        if discard:
            cached = stream.discard
            if not (cached[0] == typecode and cached[1] == discard):
                cached = stream.discard = self._discard_values(discard, stream, typecode)
            start, stop = self._discard_region
            w[start:stop] = cached[2]

        scores = view["scores"]
        cached_scores = stream.scores.get(me)
        if (
            cached_scores is not None
            and cached_scores[0] == typecode
            and cached_scores[1] == n
            and cached_scores[2] == scores
        ):
            region = cached_scores[3]
        else:
            region = self._scores_values(scores, me, n, vn, typecode)
            copy = {key: list(per_seat) for key, per_seat in scores.items()}
            stream.scores[me] = (typecode, n, copy, region)
        start, stop = self._scores_region
        w[start:stop] = region

        layouts = view["layouts"]
        present, count, spans = self._seat_present, self._count, self._block_spans
        count_value = self._count_value
        block_cache = stream.blocks
        first = me * MAX_PLAYERS  # this observer's entries of block_cache
        # the seats' slot -> position maps, handed to action_index and legal_indices of
        # this view (the env names the legal actions right after encoding): they need not
        # sort the layouts again
        maps: dict[int, dict[int, int]] = {}
        for k in range(n):
            w[present + k] = 1.0
            seat = (me + k) % n
            rows = layouts[seat]
            if not rows:
                continue
            size = len(rows)
            w[count + k] = count_value[size] if size < MAX_POSITIONS else 1.0
            cached_block = block_cache[first + k]
            if not (
                cached_block is not None and cached_block[0] == typecode and cached_block[1] == rows
            ):
                block, positions = self._block_values(rows, stream, typecode)
                copy = [row.copy() for row in rows]
                cached_block = block_cache[first + k] = (typecode, copy, block, positions)
            maps[seat] = cached_block[3]
            start, stop = spans[k]
            w[start:stop] = cached_block[2]
        self._position_cache = (view, maps)
        locked = view.get("locked_slots")
        if locked:
            own = maps.get(me, {})
            for slot in locked:
                p = own.get(slot)
                if p is not None:
                    w[self._locked + p] = 1.0

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
        own = self._own_at.get(kind)
        if own is not None:  # peek, swap, snap
            p = self._positions(view, me).get(action["slot"])
            return None if p is None else own[p]
        if kind == "initial_peek":
            mine = self._positions(view, me)
            i, j = (mine.get(s) for s in action["slots"])
            if i is None or j is None:
                return None
            return self._pair_at[min(i, j)][max(i, j)]
        player: int = action["player"]
        k = (player - me) % view["players"]
        theirs = self._positions(view, player)
        if kind == "peek_other":
            p = theirs.get(action["slot"])
            return None if p is None else self._other_at[k][p]
        if kind == "blind_swap":
            p = self._positions(view, me).get(action["slot"])
            q = theirs.get(action["other_slot"])
            return None if p is None or q is None else self._blind_at[p][k][q]
        return None

    def legal_indices(
        self, view: dict[str, JSON], legal_actions: list[Action]
    ) -> dict[int, Action]:
        """As Encoding.legal_indices, the loop over ``action_index`` inlined for the kinds a
        request lists by the dozen: the own positions of swap, snap and peek, and PG-3's
        blind_swap (up to 4 x 12 actions at 4 players)."""
        found: dict[int, Action] = {}
        simple, own_at, pair_at, blind_at = (
            self._simple,
            self._own_at,
            self._pair_at,
            self._blind_at,
        )
        me: int = view["seat"]
        mine: dict[int, int] | None = None
        theirs_of: dict[int, dict[int, int]] = {}
        for action in legal_actions:
            kind = action["type"]
            i = simple.get(kind)
            if i is None:
                own = own_at.get(kind)
                if own is not None:
                    if mine is None:
                        mine = self._positions(view, me)
                    p = mine.get(action["slot"])
                    i = None if p is None else own[p]
                elif kind == "initial_peek":  # PG-1: 6 pairs at the start of each round
                    if mine is None:
                        mine = self._positions(view, me)
                    a, b = action["slots"]
                    p, q = mine.get(a), mine.get(b)
                    if p is not None and q is not None:
                        i = pair_at[min(p, q)][max(p, q)]
                elif kind == "blind_swap":
                    if mine is None:
                        mine = self._positions(view, me)
                    player = action["player"]
                    theirs = theirs_of.get(player)
                    if theirs is None:
                        theirs = theirs_of[player] = self._positions(view, player)
                    p = mine.get(action["slot"])
                    q = theirs.get(action["other_slot"])
                    if p is not None and q is not None:
                        i = blind_at[p][(player - me) % view["players"]][q]
                else:
                    i = self.action_index(view, action)
            if i is not None and i not in found:
                found[i] = action
        return found

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
