"""The Cactus encoding (arena/games/cactus/encoding.py): the leak oracle over
random play for every player count, preset and notable option, the explanation against
the view it came from, hand-made views slice by slice, the action indices, and the docs.
Rule ids are those of docs/rules/cactus.md."""

from __future__ import annotations

import copy
import itertools
import random
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.games import cards
from arena.games.cactus import ENCODING, GAME
from arena.games.cactus.encoding import (
    CARD_RANK,
    CARD_SUIT,
    CARD_VALUE,
    KNOWN,
    MAX_PLAYERS,
    MAX_POSITIONS,
    POSITION_SIZE,
    PRESENT,
    RANK,
    SLOT,
    SLOT_SCALE,
    SUIT,
    VALUE,
    CactusEncoding,
)
from arena.games.cactus.options import DEFAULT_VALUES
from arena.games.cactus.schema import ACTIONS
from arena.games.encoding import Encoding
from tests.support.contract import Leak, check_encoding

DOC = Path(__file__).resolve().parents[1] / "docs" / "learn" / "cactus.md"
E = ENCODING


def encode(view: dict[str, Any]) -> list[float]:
    out = [0.0] * E.size
    E.encode(view, out)
    return out


def at(name: str, offset: int = 0) -> int:
    return E.field(name).start + offset


def pos(k: int, p: int, part: int) -> int:
    """Index of ``part`` of position ``p`` in the layout block of relative seat ``k``."""
    return at(f"layout_{k}", p * POSITION_SIZE + part)


def rank_i(name: str) -> int:
    return cards.RANKS.index(name[:-1])


def suit_i(name: str) -> int:
    return cards.SUITS.index(name[-1])


# -- the leak oracle over random play ---------------------------------------------------

OPTION_SETS: list[tuple[int, dict[str, Any]]] = [
    (4, {"decks": 3}),  # CA-1
    (3, {"preset": "classic", "powers": {"9": "peek_other", "Q": "blind_swap"}}),  # PG-3
    (5, {"call": "any_time", "reaction_priority": "random"}),  # CA-7, CA-9
    (3, {"initial_peek": "choose_two", "scoring": "tas_de_merde"}),  # PG-1, CL-8
    (4, {"scoring": "maximus", "penalty_cards": 2}),  # CL-8, CL-5 "kamikaze"
    (3, {"preset": "pagat", "penalty_cards": 4, "snap_after_miss": True}),  # PG-4: big layouts
    (2, {"preset": "pagat", "snap_chain": True, "wrong_snap": "stays"}),  # CL-4, CL-5
    (6, {"values": {"K": -3, "J": 25, "Q": 12}, "eight_power": False, "passed_on_eight": False}),
    (8, {"preset": "pagat", "decks": 1}),
]


@pytest.mark.parametrize("preset", ["classic", "pagat"])
@pytest.mark.parametrize("players", range(GAME.min_players, GAME.max_players + 1))
def test_observations_pass_the_leak_oracle(players: int, preset: str) -> None:
    # CA-3, "What each seat may see": every card the observation names is one the seat
    # may know where the explanation puts it
    for seed in (1, 2):
        assert check_encoding(GAME, E, players, seed, {"preset": preset}) > 0


@pytest.mark.parametrize(("players", "options"), OPTION_SETS)
def test_observations_pass_the_leak_oracle_under_options(
    players: int, options: dict[str, Any]
) -> None:
    assert check_encoding(GAME, E, players, 3, options) > 0


class PositionsAsSlots(CactusEncoding):
    """The naive encoding: slots named by position only, explained as if position = id."""

    def explain(self, values: list[float]) -> dict[str, Any]:
        found = super().explain(values)
        for rows in found["layouts"]:
            for p, row in enumerate(rows):
                row["slot"] = p
        return found


def test_the_oracle_catches_a_card_explained_at_the_wrong_slot() -> None:
    # CA-3 / PG-4: once slots are gone or added, position p is not slot p; an explanation
    # that forgot the ids puts known cards at slots the seat knows nothing of
    with pytest.raises(Leak):
        for seed in range(20):
            check_encoding(GAME, PositionsAsSlots(), 4, seed, {"preset": "pagat"})


# -- the explanation against the view, over random play ---------------------------------


def random_views(players: int, seed: int, options: dict[str, Any], limit: int = 400):
    """(view, legal actions or None) of every seat at each step of a random match."""
    state = GAME.new_state(players, seed, options)
    rng = random.Random(seed)
    found = 0
    while GAME.outcome(state) is None and found < limit:
        requests = GAME.pending(state)
        asked = {r.seat: r.legal_actions for r in requests}
        for seat in range(players):
            yield GAME.view(state, seat), asked.get(seat)
            found += 1
        GAME.apply(state, {r.seat: rng.choice(r.legal_actions) for r in requests})


def expected_explanation(view: dict[str, Any]) -> dict[str, Any]:
    layouts = []
    for rows in view["layouts"]:
        rows = sorted(rows, key=lambda r: r["slot"])[:MAX_POSITIONS]
        layouts.append(
            [r if r["slot"] < SLOT_SCALE else {"slot": SLOT_SCALE, "card": None} for r in rows]
        )
    return {
        "seat": view["seat"],
        "players": view["players"],
        "layouts": layouts,
        "discard": view["discard"],
        "drawn": view["drawn"],
    }


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, {"preset": "classic"}),
        (8, {"preset": "classic"}),
        (5, {"preset": "pagat"}),
        *OPTION_SETS[:6],
    ],
)
def test_explain_gives_back_the_views_cards(players: int, options: dict[str, Any]) -> None:
    for view, _ in random_views(players, 7, options):
        got = E.explain(encode(view))
        want = expected_explanation(view)
        assert got["layouts"] == want["layouts"]
        assert got["drawn"] == want["drawn"]
        assert Counter(got["discard"]) == Counter(want["discard"])
        assert got["discard"][-1:] == want["discard"][-1:]  # CA-4: the top card last
        assert (got["seat"], got["players"]) == (want["seat"], want["players"])


def test_observations_have_one_size_and_stay_in_range() -> None:
    sizes = set()
    for players, options in [(2, {}), (8, {"preset": "pagat"}), *OPTION_SETS]:
        for view, _ in random_views(players, 11, options, limit=200):
            out = encode(view)
            sizes.add(len(out))
            assert all(0.0 <= v <= 1.0 for v in out)
    assert sizes == {E.size}


def test_cached_observations_and_indices_equal_fresh_ones() -> None:
    """encode keeps parts of each match's last observations and reuses them while they
    stay equal (arena/games/cactus/encoding.py, _Stream): with three matches stepped in
    turn, float32 buffers and views changed in place after encoding, every observation
    must equal one of a new encoding, and legal_indices the base class's loop."""
    matches = [
        random_views(4, 21, {"preset": "classic"}, limit=600),
        random_views(3, 22, {"preset": "pagat", "penalty_cards": 4}, limit=600),  # PG-4
        random_views(5, 23, {"values": {"K": -3, "J": 25}, "decks": 2}, limit=600),  # CA-1/2
    ]
    cached = CactusEncoding()
    seen = 0
    for views in itertools.zip_longest(*matches):
        views = [v for v in views if v is not None]
        for view, legal in views:
            got = array("f", bytes(4 * cached.size))  # written through a memoryview
            cached.encode(view, got)
            want = [0.0] * E.size
            CactusEncoding().encode(view, want)
            assert got == array("f", want)
            if legal is not None:
                assert cached.legal_indices(view, legal) == Encoding.legal_indices(
                    CactusEncoding(), view, legal
                )
            seen += 1
        view = copy.deepcopy(views[0][0])  # a caller's copy, changed after encoding it
        cached.encode(view, [0.0] * E.size)
        for rows in view["layouts"]:
            if rows:
                rows[0]["card"] = "AS" if rows[0]["card"] != "AS" else "KD"
        # a card put on the discard, then one more on a discard whose other cards changed
        # (one card more than before, but not by a discard: nothing to update from)
        other = ["KS" if name != "KS" else "KH" for name in view["discard"]]
        for discard in ([*view["discard"], "QH"], [*other, "QH", "2C"]):
            view["discard"][:] = discard
            got_list = [0.0] * E.size
            cached.encode(view, got_list)
            want = [0.0] * E.size
            CactusEncoding().encode(view, want)
            assert got_list == want
    assert seen > 1000


# -- hand-made views ----------------------------------------------------------------------


def make_view(**changes: Any) -> dict[str, Any]:
    """Seat 1 of 3 deciding what to do with a drawn 2H (the shape of rules/cactus.md's
    golden view); ``changes`` replace keys."""
    view: dict[str, Any] = {
        "game": "cactus",
        "seat": 1,
        "players": 3,
        "round": 2,
        "turn": 3,
        "dealer": 0,
        "to_move": 1,
        "phase": "drawn",
        "decision": "drawn",
        "layouts": [
            [{"slot": 3, "card": "5C"}, {"slot": 2, "card": None}, {"slot": 0, "card": None}],
            # my layout, not in slot order: a penalty card (slot 4) and a refilled slot 1
            [
                {"slot": 2, "card": "8D"},
                {"slot": 3, "card": "AS"},
                {"slot": 4, "card": None},
                {"slot": 0, "card": "KH"},
            ],
            [{"slot": 1, "card": None}, {"slot": 2, "card": "QS"}],
        ],
        "discard": ["9D", "QH", "QS", "JD", "10S", "2S"],
        "stock": 33,
        "drawn": "2H",
        "called_by": None,
        "values": dict(DEFAULT_VALUES),
        "scores": {"wins": [1, 2, 0], "sum_totals": [10, 0, 400]},
        "events": [],
    }
    view.update(changes)
    return view


def one_hot(out: list[float], name: str) -> list[int]:
    f = E.field(name)
    return [i for i in range(f.size) if out[f.start + i]]


# (relative seat, position) -> the card the observation must show known there, else None
MY_VIEW_CARDS = {
    (0, 0): "KH",  # slot 0
    (0, 1): "8D",  # slot 2
    (0, 2): "AS",  # slot 3
    (0, 3): None,  # slot 4, the penalty card
    (1, 0): None,  # seat 2's slot 1
    (1, 1): "QS",  # seat 2's slot 2
    (2, 0): None,  # seat 0's slot 0
    (2, 1): None,
    (2, 2): "5C",  # seat 0's slot 3
}


@pytest.mark.parametrize(("where", "card"), MY_VIEW_CARDS.items())
def test_layout_positions_are_seat_relative_and_by_slot_order(where, card) -> None:
    # CA-3: position p is the p-th smallest slot id; block k the k-th seat after me
    out = encode(make_view())
    k, p = where
    assert out[pos(k, p, PRESENT)] == 1.0
    ranks = [r for r in range(13) if out[pos(k, p, RANK + r)]]
    suits = [s for s in range(4) if out[pos(k, p, SUIT + s)]]
    if card is None:  # an unknown card is present but not encoded as known
        assert (out[pos(k, p, KNOWN)], ranks, suits, out[pos(k, p, VALUE)]) == (0, [], [], 0)
    else:
        assert out[pos(k, p, KNOWN)] == 1.0
        assert (ranks, suits) == ([rank_i(card)], [suit_i(card)])
        assert out[pos(k, p, VALUE)] == (DEFAULT_VALUES[card[:-1]] + 5) / 20  # CA-2


def test_slot_ids_empty_positions_and_counts() -> None:
    out = encode(make_view())
    assert [round(out[pos(0, p, SLOT)] * SLOT_SCALE) for p in range(4)] == [0, 2, 3, 4]
    assert out[pos(0, 4, PRESENT)] == 0.0  # no fifth card
    assert out[pos(1, 2, PRESENT)] == 0.0
    assert out[pos(3, 0, PRESENT)] == 0.0  # relative seat 3 is not at a 3-player table
    assert one_hot(out, "seat_present") == [0, 1, 2]
    assert [out[at("layout_count", k)] * MAX_POSITIONS for k in range(3)] == [4, 2, 3]


def test_public_fields() -> None:
    out = encode(make_view(called_by=0, round=60, turn=10))
    assert one_hot(out, "my_seat") == [1]
    assert one_hot(out, "players") == [1]  # 3 players
    assert one_hot(out, "dealer") == [2]  # seat 0 is two seats after seat 1
    assert one_hot(out, "to_move") == [0]
    assert one_hot(out, "called_by") == [2] and out[at("called")] == 1.0  # CA-7
    assert one_hot(out, "phase") == [2] and one_hot(out, "decision") == [2]  # drawn
    assert out[at("round")] == 1.0 and out[at("turn")] == 10 / 200
    assert out[at("stock")] == 33 / 156  # CA-4
    assert one_hot(out, "power") == [] and out[at("eight_offer")] == 0.0


def test_cards_in_hand_and_discard() -> None:
    out = encode(make_view())
    drawn, top = at("drawn"), at("discard_top")
    assert out[drawn] == 1.0 and out[drawn + CARD_RANK + 1] == 1.0  # the 2 of hearts
    assert out[drawn + CARD_SUIT + 2] == 1.0 and out[drawn + CARD_VALUE] == 7 / 20
    assert out[top + CARD_RANK + 1] == 1.0 and out[top + CARD_SUIT + 3] == 1.0  # 2S
    assert out[at("discard_size")] == 6 / 156
    named = {cards.NAMES[i] for i in one_hot(out, "discard_cards")}
    assert named == {"9D", "QH", "QS", "JD", "10S", "2S"}
    assert out[at("discard_ranks", rank_i("QH"))] == 2 / 12
    empty = encode(make_view(discard=[], drawn=None))
    assert one_hot(empty, "drawn") == one_hot(empty, "discard_top") == []


def test_copies_of_one_card_with_three_decks() -> None:
    out = encode(make_view(discard=["7H", "7H", "7H"]))  # CA-1 option decks: 3
    assert out[at("discard_cards", cards.NAMES.index("7H"))] == 1.0
    assert E.explain(out)["discard"] == ["7H", "7H", "7H"]


def test_scores_are_seat_relative() -> None:
    out = encode(make_view())
    assert one_hot(out, "scoring") == [0]  # wins (CL-8)
    scores = at("scores")
    # me (seat 1), then seat 2, then seat 0
    assert [out[scores + 2 * k] for k in range(3)] == [0.2, 0.0, 0.1]
    assert [out[scores + 2 * k + 1] for k in range(3)] == [0.0, 1.0, 10 / 400]
    pagat = encode(make_view(scores={"penalty": [300, 30, 0]}))  # PG-5, clipped
    assert one_hot(pagat, "scoring") == [3]
    assert [pagat[scores + 2 * k] for k in range(3)] == [0.2, 0.0, 1.0]
    maximus = encode(make_view(scores={"points": [-1, 5, -9]}))  # CL-8: wrong calls
    assert [maximus[scores + 2 * k] for k in range(3)] == [10 / 15, 0.0, 4 / 15]


def test_values_follow_the_option() -> None:
    # CA-2, option values: the table and the known cards' values, clipped to -5..15
    values = {**DEFAULT_VALUES, "K": -10, "Q": 30, "8": 3}
    out = encode(make_view(values=values))
    assert out[at("values", rank_i("KH"))] == 0.0
    assert out[at("values", rank_i("QS"))] == 1.0
    assert out[at("values", rank_i("8D"))] == 8 / 20
    assert out[pos(0, 0, VALUE)] == 0.0 and out[pos(0, 1, VALUE)] == 8 / 20


def test_decision_extras() -> None:
    snap = encode(make_view(phase="snap", decision="snap", drawn=None, locked_slots=[4]))
    assert one_hot(snap, "locked") == [3]  # CL-5: slot 4 is my position 3
    power = encode(make_view(phase="power", decision="power", drawn=None, power="peek_other"))
    assert one_hot(power, "power") == [1]  # PG-3
    offer = encode(make_view(phase="turn", decision="turn", drawn=None, eight_offer=True))
    assert offer[at("eight_offer")] == 1.0  # CL-3
    waiting = encode(make_view(decision=None))
    assert one_hot(waiting, "decision") == []


def test_positions_beyond_the_cap_and_huge_slot_ids() -> None:
    # positions 0..14 hold slots 0..14, position 15 slot 70 (an id past SLOT_SCALE),
    # position 16 (past the cap) slot 71
    mine = [{"slot": s, "card": "3C"} for s in [71, *range(MAX_POSITIONS - 1), 70]]
    view = make_view(layouts=[[], mine, []])
    out = encode(view)
    last = MAX_POSITIONS - 1
    assert out[pos(0, last, PRESENT)] == 1.0 and out[pos(0, last, SLOT)] == 1.0
    assert out[pos(0, last, KNOWN)] == 0.0  # its id cannot be named exactly: not encoded
    assert out[at("layout_count")] == 1.0
    assert E.explain(out)["layouts"][1][-1] == {"slot": SLOT_SCALE, "card": None}
    assert E.action_index(view, {"type": "swap", "slot": 71}) is None  # position 16
    assert E.action_index(view, {"type": "swap", "slot": 70}) == E.actions.index[("swap", last)]


# -- actions ------------------------------------------------------------------------------


def test_action_space_is_fixed_distinct_and_documented() -> None:
    keys = E.actions.keys
    assert len(set(keys)) == len(keys) == len(E.actions.docs) == 2078
    assert all(E.actions.index[k] == i for i, k in enumerate(keys))
    assert {k[0] for k in keys} == set(ACTIONS)  # every action type of the schema


ACTION_CASES = [  # view: make_view() (seat 1 of 3), action -> key
    ({"type": "draw"}, ("draw",)),
    ({"type": "take_discard"}, ("take_discard",)),
    ({"type": "discard"}, ("discard",)),
    ({"type": "pass"}, ("pass",)),
    ({"type": "skip"}, ("skip",)),
    ({"type": "call"}, ("call",)),
    ({"type": "swap", "slot": 4}, ("swap", 3)),
    ({"type": "swap", "slot": 0}, ("swap", 0)),
    ({"type": "peek", "slot": 2}, ("peek", 1)),
    ({"type": "snap", "slot": 3}, ("snap", 2)),
    ({"type": "initial_peek", "slots": [2, 3]}, ("initial_peek", 1, 2)),
    ({"type": "initial_peek", "slots": [0, 4]}, ("initial_peek", 0, 3)),
    ({"type": "peek_other", "player": 2, "slot": 2}, ("peek_other", 1, 1)),  # PG-3
    ({"type": "peek_other", "player": 0, "slot": 3}, ("peek_other", 2, 2)),
    (
        {"type": "blind_swap", "slot": 4, "player": 0, "other_slot": 0},
        ("blind_swap", 3, 2, 0),
    ),
    ({"type": "swap", "slot": 9}, None),  # no such slot
]


@pytest.mark.parametrize(("action", "key"), ACTION_CASES)
def test_action_index(action: dict[str, Any], key: tuple[Any, ...] | None) -> None:
    index = E.action_index(make_view(), action)
    assert index == (None if key is None else E.actions.index[key])


def test_every_legal_action_maps_back_to_itself() -> None:
    kinds: Counter[str] = Counter()
    for players, options in [(3, {"preset": "pagat"}), (8, {"preset": "classic"}), *OPTION_SETS]:
        for view, legal in random_views(players, 5, options, limit=600):
            if legal is None:
                continue
            found = E.legal_indices(view, legal)
            assert found, "no legal action has an index"
            for index, action in found.items():
                assert E.action_index(view, action) == index
                key = E.actions.keys[index]
                assert key[0] == action["type"]
                if "player" in action:  # relative seats 1..players-1
                    assert key[2 if action["type"] == "blind_swap" else 1] == (
                        (action["player"] - view["seat"]) % view["players"]
                    )
                kinds[action["type"]] += 1
            assert len(found) == len(legal)  # within the position cap in these matches
    assert set(kinds) == {k[0] for k in E.actions.keys}


# -- docs ---------------------------------------------------------------------------------


def test_docs_quote_the_field_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert E.field_table() in text
    assert f"{E.size} values" in text and f"{len(E.actions)} actions" in text


def test_fields_tile_the_observation() -> None:
    start = 0
    for f in E.fields:
        assert f.start == start and f.doc
        start = f.stop
    assert start == E.size
    blocks = [f.name for f in E.fields if f.name.startswith("layout_")]
    assert blocks == ["layout_count"] + [f"layout_{k}" for k in range(MAX_PLAYERS)]


def test_index_formulas_of_the_docs() -> None:
    index = E.actions.index
    pairs = [(i, j) for i in range(MAX_POSITIONS) for j in range(i + 1, MAX_POSITIONS)]
    assert [index[("initial_peek", i, j)] for i, j in pairs] == list(range(6, 6 + len(pairs)))
    for p in range(MAX_POSITIONS):
        assert (index[("peek", p)], index[("swap", p)], index[("snap", p)]) == (
            126 + p,
            142 + p,
            158 + p,
        )
        for k in range(1, MAX_PLAYERS):
            assert index[("peek_other", k, p)] == 174 + 16 * (k - 1) + p
            for q in range(MAX_POSITIONS):
                assert index[("blind_swap", p, k, q)] == 286 + 16 * (7 * p + k - 1) + q
    text = DOC.read_text(encoding="utf-8")
    assert "286 + 16 (7 p + k - 1) + q" in text and "174 + 16 (k - 1) + p" in text
