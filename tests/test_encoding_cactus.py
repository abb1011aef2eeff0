"""Property tests of the Cactus encoding (arena/games/cactus/encoding.py) against its
documentation, docs/learn/cactus.md, and the rules, docs/rules/cactus.md (rule ids CA-n,
CL-n, PG-n).

Two oracles written from docs/learn/cactus.md, not from the code:

- ``doc_index``: the index the "Actions" table gives a JSON action (positions are the
  p-th smallest slot id, seats relative to the observer); positions 16 and beyond have
  none, the only actions the document excuses (``unnamed``).
- ``agrees``: ``explain`` gives back the view's cards where the view has them (layouts by
  seat in slot order, the first 16 positions, ids of 63 or more as 63 with no card; the
  discard as a multiset with its top card last; the drawn card), and the whole
  observation equals the one the "Observation" table describes for that view.

They run in random play (every player count, both presets, option sets that move every
option off its preset's value) through ``check_encoding``, and in states built card by
card: snap windows asking several seats, gaps and penalty cards, powers, calls, the
initial peek, three decks, 2 and 8 players, a layout past 16 positions.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections import Counter
from typing import Any

import pytest

from arena.games import cards
from arena.games.cactus import ENCODING, GAME
from arena.games.cactus.engine import CactusState
from arena.games.encoding import Encoding
from tests.support.cactus_helpers import act, answer_all, asked, card, legal, pass_windows, table
from tests.support.contract import check_encoding, check_indices

E = ENCODING
View = dict[str, Any]
Action = dict[str, Any]

# -- what docs/learn/cactus.md says -------------------------------------------------------

POSITIONS = 16  # "Positions 0 to 15 are encoded (MAX_POSITIONS = 16)"
RECORD = 21  # "Each position holds 21 values"
SLOT_IDS = 63  # "the slot id / 63", "An id of 63 or more is written 1.0"
VALUES = (-5, 15)  # "values are clipped to -5..15 and scaled to 0..1"
MAX_CARDS, COPIES, RANK_CARDS = 156, 3, 12  # "Counts": stock and discard, copies, a rank
MAX_ROUND, MAX_TURN = 50, 200
SCORE_RANGES = {  # the `scores` slice
    "wins": (0, 10),
    "sum_totals": (0, 400),
    "tally": (0, 100),
    "points": (-5, 10),
    "penalty": (0, 150),
}
SCORING = ("wins", "tally", "points", "penalty")  # the `scoring` one-hot
PHASES = ("initial_peek", "turn", "drawn", "taken", "snap", "power", "call", "over")
DECISIONS = PHASES[:-1]
POWERS = ("peek", "peek_other", "blind_swap")
SIMPLE = {"draw": 0, "take_discard": 1, "discard": 2, "pass": 3, "skip": 4, "call": 5}
OWN = {"peek": 126, "swap": 142, "snap": 158}
PAIRS = [(i, j) for i in range(POSITIONS) for j in range(i + 1, POSITIONS)]
PAIR_INDEX = {pair: 6 + r for r, pair in enumerate(PAIRS)}  # "6 + the rank of (i, j)"


def scaled(x: float, low: float, high: float) -> float:
    return (min(max(x, low), high) - low) / (high - low)


def slot_order(view: View, seat: int) -> list[int]:
    """The slot ids of ``seat``'s layout, smallest first: position p is the p-th (CA-3)."""
    return sorted(row["slot"] for row in view["layouts"][seat])


def positions(view: View, action: Action) -> list[int]:
    """The layout positions an action names (its own slots, then the other seat's)."""
    me, kind = view["seat"], action["type"]
    if kind in OWN:
        return [slot_order(view, me).index(action["slot"])]
    if kind == "initial_peek":
        mine = slot_order(view, me)
        return [mine.index(s) for s in action["slots"]]
    if kind == "peek_other":
        return [slot_order(view, action["player"]).index(action["slot"])]
    if kind == "blind_swap":
        return [
            slot_order(view, me).index(action["slot"]),
            slot_order(view, action["player"]).index(action["other_slot"]),
        ]
    return []


def unnamed(view: View, action: Action) -> bool:
    """docs/learn/cactus.md: "actions on [positions 16 and beyond] have no index"."""
    return any(p >= POSITIONS for p in positions(view, action))


def doc_index(view: View, action: Action) -> int | None:
    """The index of ``action`` by the "Actions" table of docs/learn/cactus.md."""
    kind = action["type"]
    if kind in SIMPLE:
        return SIMPLE[kind]
    if unnamed(view, action):
        return None
    ps = positions(view, action)
    if kind in OWN:
        return OWN[kind] + ps[0]
    if kind == "initial_peek":
        return PAIR_INDEX[(min(ps), max(ps))]
    k = (action["player"] - view["seat"]) % view["players"]  # the k-th seat clockwise
    assert 1 <= k < view["players"]
    if kind == "peek_other":
        return 174 + 16 * (k - 1) + ps[0]
    assert kind == "blind_swap", kind
    return 286 + 16 * (7 * ps[0] + k - 1) + ps[1]


class DocChecked:
    """ENCODING as check_encoding and check_indices use it, every ``action_index`` it
    gives compared with ``doc_index``."""

    def __init__(self, encoding: Encoding) -> None:
        self._encoding = encoding

    def __getattr__(self, name: str) -> Any:
        return getattr(self._encoding, name)

    def action_index(self, view: View, action: Action) -> int | None:
        got = self._encoding.action_index(view, action)
        want = doc_index(view, action)
        assert got == want, f"{action}: index {got}, docs/learn/cactus.md gives {want}"
        return got


CHECKED = DocChecked(E)


def encode(view: View) -> list[float]:
    out = [0.0] * E.size
    E.encode(view, out)
    return out


STARTS = {f.name: f.start for f in E.fields}  # the slices of the docs' table


def start(name: str) -> int:
    return STARTS[name]


def put_card(out: list[float], at: int, name: str, values: dict[str, int]) -> None:
    """A card record: [present, rank one-hot A..K, suit one-hot C,D,H,S, value]."""
    rank = name[:-1]
    out[at] = 1.0
    out[at + 1 + cards.RANKS.index(rank)] = 1.0
    out[at + 1 + 13 + cards.SUITS.index(name[-1])] = 1.0
    out[at + 1 + 13 + 4] = scaled(values[rank], *VALUES)


def expected_observation(view: View) -> list[float]:
    """The observation of ``view`` slice by slice as docs/learn/cactus.md's table says."""
    out = [0.0] * E.size
    me, n, values = view["seat"], view["players"], view["values"]

    def rel(seat: int) -> int:
        return (seat - me) % n

    out[start("my_seat") + me] = 1.0
    out[start("players") + n - 2] = 1.0
    for k in range(n):
        out[start("seat_present") + k] = 1.0
    out[start("dealer") + rel(view["dealer"])] = 1.0
    out[start("to_move") + rel(view["to_move"])] = 1.0
    if view["called_by"] is not None:  # CA-7
        out[start("called")] = 1.0
        out[start("called_by") + rel(view["called_by"])] = 1.0
    out[start("phase") + PHASES.index(view["phase"])] = 1.0
    if view["decision"] is not None:
        out[start("decision") + DECISIONS.index(view["decision"])] = 1.0
    if view.get("power") is not None:  # PG-3
        out[start("power") + POWERS.index(view["power"])] = 1.0
    if view.get("eight_offer"):  # CL-3
        out[start("eight_offer")] = 1.0
    out[start("round")] = min(view["round"], MAX_ROUND) / MAX_ROUND
    out[start("turn")] = min(view["turn"], MAX_TURN) / MAX_TURN
    out[start("stock")] = min(view["stock"], MAX_CARDS) / MAX_CARDS
    if view["drawn"] is not None:
        put_card(out, start("drawn"), view["drawn"], values)
    discard = view["discard"]
    if discard:  # CA-4: the top card last
        put_card(out, start("discard_top"), discard[-1], values)
        out[start("discard_size")] = min(len(discard), MAX_CARDS) / MAX_CARDS
        for name, c in Counter(discard).items():
            out[start("discard_cards") + cards.NAMES.index(name)] = c / COPIES
        for rank, c in Counter(name[:-1] for name in discard).items():
            out[start("discard_ranks") + cards.RANKS.index(rank)] = c / RANK_CARDS
    for r, rank in enumerate(cards.RANKS):  # CA-2
        out[start("values") + r] = scaled(values[rank], *VALUES)
    for key, per_seat in view["scores"].items():  # CL-8, PG-5
        second = key == "sum_totals"
        if not second:
            out[start("scoring") + SCORING.index(key)] = 1.0
        for seat, x in enumerate(per_seat):
            out[start("scores") + 2 * rel(seat) + second] = scaled(x, *SCORE_RANGES[key])
    for k in range(n):  # CA-3: by relative seat, positions in slot order
        rows = sorted(view["layouts"][(me + k) % n], key=lambda row: row["slot"])
        out[start("layout_count") + k] = min(len(rows), POSITIONS) / POSITIONS
        for p, row in enumerate(rows[:POSITIONS]):
            at = start(f"layout_{k}") + RECORD * p
            out[at] = 1.0
            out[at + 20] = min(row["slot"], SLOT_IDS) / SLOT_IDS
            if row["card"] is not None and row["slot"] < SLOT_IDS:
                out[at + 1] = 1.0
                put_card(out, at + 1, row["card"], values)  # rank, suit, value after known
    if view["decision"] == "snap":  # CL-5: locked, decision snap only
        mine = slot_order(view, me)
        for slot in view["locked_slots"]:
            p = mine.index(slot)
            if p < POSITIONS:
                out[start("locked") + p] = 1.0
    return out


def field_of(i: int) -> str:
    return next(f"{f.name}[{i - f.start}]" for f in E.fields if f.start <= i < f.stop)


def explained_view(view: View) -> View:
    """What ``explain`` must give back of ``view`` (docs/learn/cactus.md: positions 0..15
    in slot order, an id of 63 or more written 63 and its card not encoded)."""
    layouts = [
        [
            {"slot": row["slot"], "card": row["card"]}
            if row["slot"] < SLOT_IDS
            else {"slot": SLOT_IDS, "card": None}
            for row in sorted(rows, key=lambda row: row["slot"])[:POSITIONS]
        ]
        for rows in view["layouts"]
    ]
    return {"seat": view["seat"], "players": view["players"], "layouts": layouts}


def agrees(view: View, explained: View) -> None:
    """The explanation holds exactly the view's cards where the view has them, and the
    observation is the one docs/learn/cactus.md describes for this view."""
    want = explained_view(view)
    assert set(explained) == {"seat", "players", "layouts", "discard", "drawn"}
    assert (explained["seat"], explained["players"]) == (want["seat"], want["players"])
    assert explained["layouts"] == want["layouts"], "layouts differ from the view's"
    assert Counter(explained["discard"]) == Counter(view["discard"]), "discard differs"
    assert explained["discard"][-1:] == view["discard"][-1:], "CA-4: top card not last"
    assert explained["drawn"] == view["drawn"], "drawn card differs"
    got, expected = encode(view), expected_observation(view)
    if got == expected:
        return
    wrong = [
        i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if not math.isclose(a, b)
    ]
    assert not wrong, "observation differs from the docs at " + ", ".join(
        f"{field_of(i)}: {got[i]} != {expected[i]}" for i in wrong[:8]
    )


# -- random play ---------------------------------------------------------------------------

# every option off its preset's value at least once (test_option_sets_move_every_option)
OPTION_SETS: list[tuple[int, dict[str, Any]]] = [
    (8, {"decks": 1, "rounds": 1}),  # CA-1: one deck at 8 players
    (3, {"decks": 3, "values": {"K": -8, "A": 20, "5": -1, "J": 15}}),  # CA-1, CA-2 clipped
    (5, {"call": "any_time", "reaction_priority": "random", "rounds": 2}),  # CA-7, CA-9
    (4, {"preset": "pagat", "call": "any_time", "reaction_priority": "random", "decks": 2}),
    (3, {"initial_peek": "choose_two", "scoring": "tas_de_merde", "rounds": 2}),  # PG-1, CL-8
    (  # CL-2 off, PG-3's powers in classic
        4,
        {
            "eight_power": False,
            "passed_on_eight": False,
            "powers": {"8": "peek", "9": "peek_other", "Q": "blind_swap"},
        },
    ),
    (4, {"passed_on_eight": False, "powers": {"5": "peek", "J": "peek_other", "K": "blind_swap"}}),
    (3, {"wrong_snap": "returns", "penalty_cards": 3, "snap_after_miss": True}),  # PG-4 rules
    (4, {"penalty_cards": 4, "scoring": "maximus", "maximus_target": 2, "max_rounds": 4}),
    (2, {"penalty_cards": 0, "snap_chain": False, "scoring": "penalty", "target": 40}),
    (3, {"preset": "pagat", "wrong_snap": "stays", "snap_chain": True, "penalty_cards": 1}),
    (6, {"preset": "pagat", "penalty_cards": 4, "snap_after_miss": True, "target": 150}),
    (5, {"preset": "pagat", "scoring": "wins", "rounds": 3, "next_round": "rotate"}),  # CA-11
    (7, {"next_round": "lowest_score", "max_turns": 6, "rounds": 2}),  # PG-6, CA-7 ruling
    (2, {"preset": "pagat", "max_turns": 1, "max_rounds": 5, "initial_peek": "bottom_row"}),
    (
        8,
        {
            "preset": "pagat",
            "decks": 3,
            "powers": {"A": "blind_swap", "2": "peek_other", "3": "peek"},
        },
    ),
]


def test_option_sets_move_every_option() -> None:
    """Every option of CactusOptions (the rulings of CA-1..PG-6) takes a value other
    than its preset's in some row of OPTION_SETS."""
    moved = set()
    for _, options in OPTION_SETS:
        preset = {"preset": options.get("preset", "classic")}
        base, got = GAME.resolve_options(preset), GAME.resolve_options(options)
        moved |= {
            f.name for f in dataclasses.fields(got) if getattr(got, f.name) != getattr(base, f.name)
        }
    assert moved == {f.name for f in dataclasses.fields(GAME.resolve_options({}))}


@pytest.mark.parametrize("preset", ["classic", "pagat"])
@pytest.mark.parametrize("players", range(GAME.min_players, GAME.max_players + 1))
def test_random_play_every_player_count_and_preset(players: int, preset: str) -> None:
    """CA-1..CA-11 with CL-n or PG-n: every legal action has its documented index, and
    every observation says what its view says."""
    options = {"preset": preset, "rounds": 2}  # classic's 5 rounds (CL-8) cost, not test
    for seed in (11, 12):
        checked = check_encoding(
            GAME, CHECKED, players, seed, options, agrees=agrees, unnamed=unnamed
        )
        assert checked > 0


@pytest.mark.parametrize(("players", "options"), OPTION_SETS)
def test_random_play_under_options(players: int, options: dict[str, Any]) -> None:
    """The options of CA-1, CA-2, CA-7, CA-9, CL-1..CL-8, PG-1..PG-6 (see each row):
    documented indices, observations that say what the view says."""
    checked = check_encoding(GAME, CHECKED, players, 13, options, agrees=agrees, unnamed=unnamed)
    assert checked > 0


# -- built states ----------------------------------------------------------------------------


def check_table(state: CactusState) -> dict[int, dict[int, Action]]:
    """Every seat's view agrees with its observation; every asked seat's legal actions
    have their documented, distinct indices, also for a copy of the view never encoded
    (a bot may name actions without encoding).  Returns index -> action per asked seat."""
    requests = {r.seat: r.legal_actions for r in GAME.pending(state)}
    named = {}
    for seat in range(state.n_players):
        view = GAME.view(state, seat)
        agrees(view, E.explain(encode(view)))
        if seat in requests:
            named[seat] = check_indices(CHECKED, view, requests[seat], unnamed)
            fresh = copy.deepcopy(view)
            assert check_indices(CHECKED, fresh, requests[seat], unnamed) == named[seat]
    return named


def touched(state: CactusState) -> None:
    """The test changed layouts or knowledge by hand: views must rebuild their rows."""
    state.layout_version += 1
    state._pending = None


def keys(found: dict[int, Action]) -> dict[Any, Action]:
    """Index -> action as action-space key -> action, for readable expectations."""
    return {E.actions.keys[i]: a for i, a in found.items()}


def snap(slot: int) -> Action:
    return {"type": "snap", "slot": slot}


PASS = {"type": "pass"}


@pytest.mark.parametrize("preset", ["classic", "pagat"])
def test_a_snap_window_asks_several_seats_with_gaps(preset: str) -> None:
    """CA-8, CA-9: one window asks every seat with a card at once, the discarder last;
    positions follow slot ids past the gaps right throws leave (CA-3, CL-4 / PG-4)."""
    state = table(
        4,
        preset=preset,
        layouts=[["KH", "2C"], ["5S", "9D", "5D"], ["5H"], ["AS", "3C", "JD", "4S"]],
        stock=["6C", "5C"],
    )
    del state.layouts[1][1]  # seat 1: slots 0 and 2, a gap at 1
    del state.layouts[3][0]  # seat 3: slots 1, 2, 3
    state.known[2][1][2] = "5D"  # seen by seat 2 (as if swapped in from the discard)
    state.known[1][1][0] = "5S"
    touched(state)
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})  # 5C opens a window (CA-8)
    assert asked(state) == [1, 2, 3, 0]  # CA-9: clockwise after the discarder, it last
    found = check_table(state)
    assert keys(found[1]) == {("pass",): PASS, ("snap", 0): snap(0), ("snap", 1): snap(2)}
    assert keys(found[3]) == {("pass",): PASS, **{("snap", p): snap(p + 1) for p in range(3)}}
    answer_all(state, {1: snap(0), 2: snap(0)})  # seat 1 first: 5S right
    if preset == "classic":  # CL-4: the thrown 5 opens a window, seat 1 now owns it
        assert asked(state) == [2, 3, 0, 1]
        found = check_table(state)
        assert keys(found[1]) == {("pass",): PASS, ("snap", 0): snap(2)}  # slot 2 at 0
        answer_all(state, {1: snap(2)})
        assert asked(state) == [2, 3, 0]
        check_table(state)
    else:  # PG-4: one throw per discarded card
        assert state.phase != "snap"
        check_table(state)


def test_pagat_snap_after_miss_asks_the_others_again() -> None:
    """PG-4 with option snap_after_miss: after a wrong throw the card goes back, seen by
    all, two unseen penalty cards take new slots 4 and 5, and the others are asked again."""
    state = table(
        3,
        preset="pagat",
        layouts=[["5H"], ["QS", "2D", "7C"], ["5D"]],
        stock=["2S", "3H", "4H", "5C"],
        snap_after_miss=True,
    )
    del state.layouts[1][1]
    touched(state)
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: snap(0)})  # QS on 5C: wrong
    assert asked(state) == [2, 0]
    check_table(state)
    view = GAME.view(state, 0)
    assert explained_view(view)["layouts"][1] == [
        {"slot": 0, "card": "QS"},  # PG-4: seen by everybody as it went back
        {"slot": 2, "card": None},
        {"slot": 4, "card": None},
        {"slot": 5, "card": None},
    ]
    answer_all(state, {})
    pass_windows(state)
    act(state, 1, {"type": "draw"})
    found = check_table(state)[1]  # swap into slots 0, 2, 4, 5: positions 0..3
    assert {E.actions.keys[i] for i in found} == {("discard",)} | {("swap", p) for p in range(4)}
    assert found[142 + 2] == {"type": "swap", "slot": 4}


@pytest.mark.parametrize("penalty_cards", [1, 3])
def test_classic_penalty_cards_are_locked_and_positioned(penalty_cards: int) -> None:
    """CL-5: a wrong throw stays on the discard, the first penalty card refills the emptied
    slot, the others take new slots; all stay locked in the window that opens on the
    wrong card's rank (CL-4), and `locked` marks their positions."""
    state = table(
        3,
        layouts=[["KH"], ["QS", "9D", "6S", "7S"], ["5D", "QD"]],
        stock=["8H", "4H", "3H", "2H", "5C"],
        penalty_cards=penalty_cards,
    )
    del state.layouts[1][1]  # a gap at slot 1: seat 1 holds 0, 2, 3
    touched(state)
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: snap(2)})  # 6S on 5C: wrong, stays
    assert state.phase == "snap" and 1 in asked(state)  # CL-5: a window on the 6
    view = GAME.view(state, 1)
    new = list(range(4, 4 + penalty_cards - 1))
    assert sorted(view["locked_slots"]) == [2, *new]
    assert slot_order(view, 1) == [0, 2, 3, *new]
    found = check_table(state)
    assert keys(found[1]) == {("pass",): PASS, ("snap", 0): snap(0), ("snap", 2): snap(3)}
    out = encode(view)
    locked = [p for p in range(POSITIONS) if out[start("locked") + p]]
    assert locked == [1, *range(3, 3 + penalty_cards - 1)]
    answer_all(state, {2: snap(1)})  # QD on the 6: wrong too, seat 2 gets its own
    check_table(state)


POWER_CASES = [  # (options, rank discarded, power) -- PG-3
    ({"preset": "pagat"}, "7", "peek"),
    ({"preset": "pagat"}, "9", "peek_other"),
    ({"preset": "pagat"}, "Q", "blind_swap"),
    ({"powers": {"6": "peek", "J": "peek_other", "K": "blind_swap"}}, "6", "peek"),
    ({"powers": {"6": "peek", "J": "peek_other", "K": "blind_swap"}}, "J", "peek_other"),
    ({"powers": {"6": "peek", "J": "peek_other", "K": "blind_swap"}}, "K", "blind_swap"),
]


@pytest.mark.parametrize(("options", "rank", "power"), POWER_CASES)
def test_powers_name_positions_and_relative_seats(
    options: dict[str, Any], rank: str, power: str
) -> None:
    """PG-3 in the pagat preset and with option powers in classic: peek at an own slot,
    peek_other at another seat's, blind_swap one with another; with gaps and a penalty
    slot the positions are the slot order, the seat the k-th clockwise."""
    state = table(
        4,
        layouts=[["5H", "9S", "2C"], ["KS", "2D", "3D"], ["3C"], ["4D", "4H"]],
        stock=["2S", rank + "C"],
        **options,
    )
    del state.layouts[0][0]  # me: slots 1, 2 and a penalty slot 6
    state.layouts[0][6] = card("AH")
    del state.layouts[1][1]  # seat 1: slots 0, 2
    state.known[0][1][2] = "3D"  # what a peek_other showed me
    touched(state)
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    while state.phase == "snap":
        answer_all(state, {})
    assert state.phase == "power" and GAME.view(state, 0)["power"] == power
    found = keys(check_table(state)[0])
    assert len(found) == len(legal(state, 0))
    if power == "peek":
        assert found[("peek", 2)] == {"type": "peek", "slot": 6}
        assert {k for k in found} == {("skip",), ("peek", 0), ("peek", 1), ("peek", 2)}
    elif power == "peek_other":
        assert found[("peek_other", 1, 1)] == {"type": "peek_other", "player": 1, "slot": 2}
        assert found[("peek_other", 3, 1)] == {"type": "peek_other", "player": 3, "slot": 1}
        assert found[("peek_other", 2, 0)] == {"type": "peek_other", "player": 2, "slot": 0}
    else:
        want = {"type": "blind_swap", "slot": 6, "player": 3, "other_slot": 1}
        assert found[("blind_swap", 2, 3, 1)] == want
        assert len(found) == 1 + 3 * (2 + 1 + 2)
    act(state, 0, next(a for a in legal(state, 0) if a["type"] == power))
    check_table(state)


def test_the_classic_eight_peek_and_the_passed_on_eight() -> None:
    """CL-2: a stock-drawn 8 may be swapped, discarded or used to peek (swap and peek at
    the same slot are two indices); CL-3: discarded unused it lets the next player peek
    before drawing (eight_offer)."""
    state = table(3, layouts=[["5H", "9S", "2C"], ["KS", "2D", "3D"], ["3C"]], stock=["8C"])
    del state.layouts[0][0]
    del state.layouts[1][0]
    touched(state)
    act(state, 0, {"type": "draw"})
    found = keys(check_table(state)[0])
    assert found == {
        ("discard",): {"type": "discard"},
        ("swap", 0): {"type": "swap", "slot": 1},
        ("swap", 1): {"type": "swap", "slot": 2},
        ("peek", 0): {"type": "peek", "slot": 1},
        ("peek", 1): {"type": "peek", "slot": 2},
    }
    act(state, 0, {"type": "discard"})
    pass_windows(state)
    assert state.player == 1 and GAME.view(state, 1).get("eight_offer") is True
    found = keys(check_table(state)[1])
    assert set(found) == {("draw",), ("take_discard",), ("peek", 0), ("peek", 1)}


@pytest.mark.parametrize("call", ["end_of_turn", "any_time"])
def test_the_call_asks_one_or_every_seat(call: str) -> None:
    """CA-7: the call is asked of the player whose turn ended, or with any_time of every
    seat at once; pass and call are indices 3 and 5; the observation shows the caller."""
    state = table(5, layouts=[["KH"], ["2D"], ["3C"], ["4S"], ["6H"]], stock=["9C"], call=call)
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    while state.phase == "snap":
        answer_all(state, {})
    assert asked(state) == ([0] if call == "end_of_turn" else [0, 1, 2, 3, 4])
    for found in check_table(state).values():
        assert found == {3: PASS, 5: {"type": "call"}}
    answer_all(state, {asked(state)[-1]: {"type": "call"}})
    assert state.caller is not None
    check_table(state)


@pytest.mark.parametrize(("players", "options"), [(2, {"preset": "pagat"}), (8, {})])
def test_the_initial_peek_of_every_seat(players: int, options: dict[str, Any]) -> None:
    """PG-1 (and option initial_peek choose_two in classic): every seat chooses two of its
    four slots at once; the six pairs have the six documented indices."""
    state = GAME.new_state(players, 3, {**options, "initial_peek": "choose_two"})
    found = check_table(state)
    assert set(found) == set(range(players))
    for named in found.values():  # (0,1) (0,2) (0,3) (1,2) (1,3) (2,3), 6 + their rank
        assert set(named) == {6, 7, 8, 6 + 15, 6 + 16, 6 + 15 + 14}
    answer_all(state, {0: {"type": "initial_peek", "slots": [1, 3]}})
    check_table(state)
    assert [row["card"] is not None for row in GAME.view(state, 0)["layouts"][0]] == [
        False,
        True,
        False,
        True,
    ]


def copy_of(name: str, deck: int) -> int:
    """The physical card ``name`` of deck ``deck`` (arena/games/cards.py)."""
    return card(name) + cards.CARDS_PER_DECK * deck


def test_three_decks_three_copies_in_the_discard_and_layouts() -> None:
    """CA-1 with option decks 3: the discard holds the three 7 of hearts, layouts hold
    copies of one name; the explanation gives all three back, the top one last."""
    state = table(5, layouts=[["KH"], ["7D"], ["7S"], ["2C"], ["7C"]], decks=3)
    state.discard = [copy_of("7H", 0), copy_of("2C", 1), copy_of("7H", 1), copy_of("7H", 2)]
    state.stock = [copy_of("7D", 2), copy_of("7D", 1)]
    state.layouts[3] = {0: copy_of("2C", 2), 1: copy_of("2C", 0)}
    for seat in range(5):
        state.known[seat][3] = {0: "2C", 1: "2C"}  # as if both swapped in from the discard
    touched(state)
    check_table(state)
    out = encode(GAME.view(state, 1))
    assert out[start("discard_cards") + cards.NAMES.index("7H")] == 1.0
    assert Counter(E.explain(out)["discard"]) == Counter(["7H", "7H", "7H", "2C"])
    act(state, 0, {"type": "draw"})  # a third 7D
    act(state, 0, {"type": "discard"})
    assert asked(state) == [1, 2, 3, 4, 0]  # CA-9
    check_table(state)


def test_eight_players_relative_seats_reach_seven() -> None:
    """CA-1, PG-3 at 8 players: seat 5's blind swap with seat 4 is relative seat 7, with
    seat 6 relative seat 1; every one of its 1 + 2 x 7 x 2 actions has its own index."""
    hands = [["AS", "2S"] for _ in range(8)]
    state = table(8, preset="pagat", layouts=hands, stock=["3D", "QC"], player=5)
    act(state, 5, {"type": "draw"})
    act(state, 5, {"type": "discard"})
    while state.phase == "snap":
        answer_all(state, {})
    found = check_table(state)[5]
    assert len(found) == 1 + 2 * 7 * 2
    by_key = keys(found)
    want = {"type": "blind_swap", "slot": 1, "player": 4, "other_slot": 0}
    assert by_key[("blind_swap", 1, 7, 0)] == want
    want = {"type": "blind_swap", "slot": 0, "player": 6, "other_slot": 1}
    assert by_key[("blind_swap", 0, 1, 1)] == want
    assert found[286 + 16 * (7 * 1 + 7 - 1) + 0]["player"] == 4


def test_two_players_peek_other_is_relative_seat_one() -> None:
    """PG-3 at 2 players: seat 1's peek_other names seat 0, relative seat 1."""
    state = table(2, preset="pagat", layouts=[["AS", "2S", "3S"], ["4S"]], stock=["JC"], player=1)
    del state.layouts[0][0]
    touched(state)
    act(state, 1, {"type": "draw"})
    act(state, 1, {"type": "discard"})
    while state.phase == "snap":
        answer_all(state, {})
    found = keys(check_table(state)[1])
    assert found == {
        ("skip",): {"type": "skip"},
        ("peek_other", 1, 0): {"type": "peek_other", "player": 0, "slot": 1},
        ("peek_other", 1, 1): {"type": "peek_other", "player": 0, "slot": 2},
    }


def big_layout(slots: list[int]) -> dict[int, int]:
    names = [r + s for r in ("2", "3", "4", "5", "6") for s in cards.SUITS]
    return {slot: card(names[i]) for i, slot in enumerate(slots)}


def test_a_layout_past_sixteen_positions() -> None:
    """docs/learn/cactus.md: positions 16 and beyond are not encoded and actions on them
    have no index, exactly those; ids 63 and more are written 63 with no card, and still
    indexed below position 16.  Reached by PG-4 penalty cards (two per wrong throw)."""
    state = table(3, preset="pagat", layouts=[["KH"], ["KD"], ["KS"]], stock=["9D", "QC"])
    # 18 slots: positions 0..13 hold ids 0, 1, 3..14, then 62, 63 (written 63, no card),
    # and past the cap 70, 71; seat 1 has 17: ids 2..17 and 80
    state.layouts[0] = big_layout([0, 1, *range(3, 15), 62, 63, 70, 71])
    state.layouts[1] = big_layout([*range(2, 18), 80])
    state.next_slot = [72, 81, 4]
    for owner, slots in ((0, (1, 62, 63, 70)), (1, (17, 80))):  # seen, as by peeks
        state.known[0][owner] = {s: cards.name(state.layouts[owner][s]) for s in slots}
    touched(state)
    view = GAME.view(state, 0)
    lay = explained_view(view)["layouts"]
    known = state.known[0]
    assert lay[0][13:] == [
        {"slot": 14, "card": None},
        {"slot": 62, "card": known[0][62]},
        {"slot": 63, "card": None},  # known, but its id is not written exactly
    ]
    assert lay[1][-1] == {"slot": 17, "card": known[1][17]}
    check_table(state)
    act(state, 0, {"type": "draw"})  # QC
    found = check_table(state)[0]
    view = GAME.view(state, 0)
    lacking = [a for a in legal(state, 0) if E.action_index(view, a) is None]
    assert lacking == [{"type": "swap", "slot": 70}, {"type": "swap", "slot": 71}]
    assert found[142 + 15] == {"type": "swap", "slot": 63}  # position 15, id 63
    assert len(found) == 16 + 1
    act(state, 0, {"type": "discard"})
    state.layouts[2] = {}  # nobody but seat 1 and me to swap with
    touched(state)
    assert state.phase == "snap"
    check_table(state)
    while state.phase == "snap":
        answer_all(state, {})
    assert state.phase == "power"
    view = GAME.view(state, 0)
    actions = legal(state, 0)
    found = check_table(state)[0]
    lacking = [a for a in actions if E.action_index(view, a) is None]
    excused = [a for a in actions if unnamed(view, a)]
    assert lacking == excused and len(excused) == 18 * 17 - 16 * 16  # exactly those
    assert len(found) == 1 + 16 * 16
    assert found[286 + 16 * (7 * 15 + 0) + 15] == {
        "type": "blind_swap",
        "slot": 63,
        "player": 1,
        "other_slot": 17,
    }
