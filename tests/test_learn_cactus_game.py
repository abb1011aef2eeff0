"""Cactus Game's learning encoding (``arena/games/cactus_game/encoding.py``), rules
CG-1..CG-21 of docs/rules/cactus-game.md:

- the leak oracle over random play (``check_encoding``) for 2..6 players and notable
  options, and proof that it catches an explanation that names cards a seat may not know;
- table-driven slice tests on views of hand-built tables (own hand, discard, seats
  relative to the observer, the Stop window, the looked-at hand, this turn, scalars), and
  that another player's hidden cards change nothing;
- the action space: distinct keys, every schema action type present, every legal action
  of random play indexed, and each index decoded back to its JSON action;
- docs/learn/cactus-game.md quotes ``field_table()`` verbatim.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.games.cactus_game import ENCODING, GAME
from arena.games.cactus_game.encoding import MAX_PLAYERS, PLAYED, CactusGameEncoding
from arena.games.cactus_game.engine import DECK, KINDS, CactusGameState
from arena.games.cactus_game.schema import ACTIONS as SCHEMA_ACTIONS
from arena.games.cactus_game.schema import TARGETS
from tests.support.cactus_game import (
    ASK,
    D3,
    FP,
    LS,
    SC,
    SH,
    SP,
    STOP,
    C,
    J,
    S,
    W,
    table,
)
from tests.support.contract import Leak, check_encoding, play_random

DOCS = Path(__file__).resolve().parent.parent / "docs" / "learn" / "cactus-game.md"
OPTIONS: list[dict[str, Any] | None] = [
    None,
    {"target": 1},  # CG-20: the first gain wins
    {"target": 30, "max_turns": 80},  # CG-20, CG-21: long games end at the cap
    {"max_turns": 3},  # CG-21: ends almost at once
]


# -- the leak oracle over random play -------------------------------------------------------
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("n", range(GAME.min_players, GAME.max_players + 1))
def test_leak_oracle_over_random_play(n: int, options: dict[str, Any] | None) -> None:
    for seed in range(4):
        assert check_encoding(GAME, ENCODING, n, seed, options) > 0


class _LeakyEncoding(CactusGameEncoding):
    """Claims the discard's cards lie in the next seat's hand: a leak of what it holds."""

    def explain(self, values: list[float]) -> dict[str, Any]:
        explained = super().explain(values)
        me, n = explained["seat"], explained["players"]
        explained["looked"] = {"player": (me + 1) % n, "cards": explained["discard"]["cards"]}
        return explained


def test_the_oracle_catches_a_leaky_explanation() -> None:
    with pytest.raises(Leak, match="cards it may not know"):
        for seed in range(5):
            check_encoding(GAME, _LeakyEncoding(), 3, seed, None)


# -- hand-built tables ---------------------------------------------------------------------
def act(state: CactusGameState, answers: dict[int, dict[str, Any]]) -> None:
    """Apply ``answers``; other pending seats pass (their default)."""
    requests = GAME.pending(state)
    GAME.apply(state, {r.seat: answers.get(r.seat, r.default_action) for r in requests})


def observe(state: CactusGameState, seat: int) -> list[float]:
    values = [0.0] * ENCODING.size
    ENCODING.encode(GAME.view(state, seat), values)
    return values


def part(values: list[float], name: str) -> list[float]:
    f = ENCODING.field(name)
    return values[f.start : f.stop]


def per_kind(**counts: int) -> list[float]:
    """A per-kind slice: count / copies in the deck (CG-1)."""
    return [counts.get(k, 0) / DECK[k] for k in KINDS]


def hot(size: int, *indices: int) -> list[float]:
    return [1.0 if i in indices else 0.0 for i in range(size)]


def _stop_window() -> CactusGameState:
    # seat 0 asks seat 2 for a Walter; seat 1 holds a Stop (CG-15, CG-17)
    state = table(3, [[ASK, STOP, C], [STOP, S], [W, W]])
    act(state, {0: {"type": "play", "card": ASK, "target": 2, "named": W}})
    return state


def _stopped_once() -> CactusGameState:
    state = _stop_window()
    act(state, {1: {"type": "stop"}})  # CG-18: seat 0 may stop the Stop
    return state


def _looked() -> CactusGameState:
    # 4 players, seat 2 looks at seat 0's hand (CG-12); nobody holds a Stop
    state = table(4, [[C, W, W, SP], [S], [LS, J], [D3]], player=2)
    act(state, {2: {"type": "play", "card": LS, "target": 0}})
    return state


def _swap_window() -> CactusGameState:
    # 5 players, seat 3 swaps seats 4 and 0 (CG-11); seat 1 holds a Stop
    state = table(5, [[C], [STOP], [S], [SH, C], [W, W]], player=3)
    act(state, {3: {"type": "play", "card": SH, "players": [0, 4]}})
    return state


def _relative() -> CactusGameState:
    return table(4, [[C], [S, S], [W, W, W], []], points=[0, 1, 2, 3], player=1)


# (rule, what, table, observer seat, field, expected slice)
SLICES: list[tuple[str, str, Callable[[], CactusGameState], int, str, list[float]]] = [
    (
        "CG-3",
        "my own hand: counts per kind",
        lambda: table(3, [[C, C, J, STOP, C]]),
        0,
        "hand",
        per_kind(charlie=3, joker=1, stop=1),
    ),
    (
        "CG-7",
        "my own hand: at least 1, 2, 3 of each kind",
        lambda: table(3, [[C, C, J, S, S, S]]),
        0,
        "hand_at_least",
        [1.0, 1.0, 0.0] + [1.0, 1.0, 1.0] + [0.0] * 3 + [1.0, 0.0, 0.0] + [0.0] * 24,
    ),
    (
        "CG-3",
        "another seat's hand is not mine",
        lambda: table(3, [[C], [W, W, W]]),
        0,
        "hand",
        per_kind(charlie=1),
    ),
    (
        "CG-1",
        "the discard: counts per kind",
        lambda: table(2, [[C]], discard=[STOP, STOP, C, FP]),
        0,
        "discard",
        per_kind(stop=2, charlie=1, free_point=1),
    ),
    (
        "CG-1",
        "the discard's size",
        lambda: table(2, [[C]], discard=[STOP] * 9),
        0,
        "discard_size",
        [9 / 90],
    ),
    ("CG-8", "the draw pile's size", lambda: table(2, [[C]]), 1, "draw_pile", [20 / 90]),
    (
        "CG-9",
        "the Point supply",
        lambda: table(2, [[C]], points=[4, 2]),
        0,
        "point_supply",
        [24 / 30],
    ),
    ("CG-20", "the target", lambda: table(6, [[C]]), 3, "target", [4 / 30]),
    (
        "CG-20",
        "the target option",
        lambda: table(2, [[C]], options={"target": 12}),
        0,
        "target",
        [12 / 30],
    ),
    (
        "CG-21",
        "turn progress",
        lambda: table(2, [[C]], options={"max_turns": 10}),
        0,
        "turn",
        [1 / 10],
    ),
    (
        "CG-21",
        "turns left, clipped",
        lambda: table(2, [[C]], options={"max_turns": 10}),
        0,
        "turns_left",
        [9 / 50],
    ),
    ("CG-3", "the player count", lambda: table(5, [[C]]), 4, "players", hot(5, 3)),
    ("CG-3", "my absolute seat", lambda: table(5, [[C]]), 4, "my_seat", hot(6, 4)),
    (
        "CG-4",
        "whose turn, relative: seat 1 seen from seat 2 of 4",
        _relative,
        2,
        "current",
        hot(6, 3),
    ),
    ("CG-3", "seats present, relative", _relative, 2, "present", hot(6, 0, 1, 2, 3)),
    (
        "CG-3",
        "hand sizes, relative to seat 2",
        _relative,
        2,
        "hand_sizes",
        [3 / 30, 0.0, 1 / 30, 2 / 30, 0.0, 0.0],
    ),
    ("CG-6", "empty hands, relative to seat 2", _relative, 2, "hand_empty", hot(6, 1)),
    (
        "CG-2",
        "Points, relative to seat 2",
        _relative,
        2,
        "points",
        [2 / 30, 3 / 30, 0.0, 1 / 30, 0.0, 0.0],
    ),
    (
        "CG-20",
        "Points over the target (5 with 4 players), relative to seat 2",
        _relative,
        2,
        "points_to_target",
        [2 / 5, 3 / 5, 0.0, 1 / 5, 0.0, 0.0],
    ),
    ("CG-4", "phase and decision on my turn", _relative, 1, "decision", hot(4, 1)),
    ("CG-4", "no decision off my turn", _relative, 2, "decision", hot(4, 0)),
    ("CG-17", "the phase of a Stop window", _stop_window, 0, "phase", hot(4, 1)),
    ("CG-17", "the decision of the seat holding a Stop", _stop_window, 1, "decision", hot(4, 2)),
    ("CG-17", "the waiting card", _stop_window, 1, "chain_card", hot(7, PLAYED.index(ASK))),
    ("CG-17", "who played it, relative", _stop_window, 1, "chain_player", hot(6, 2)),
    ("CG-15", "its target, relative", _stop_window, 1, "chain_target", hot(6, 1)),
    ("CG-15", "the kind named", _stop_window, 2, "chain_named", hot(12, KINDS.index(W))),
    ("CG-18", "no Stop yet", _stop_window, 1, "chain_stops", [0.0]),
    ("CG-18", "the window is about the card's player", _stop_window, 1, "chain_top", hot(6, 2)),
    ("CG-18", "one Stop played", _stopped_once, 0, "chain_stops", [1 / 10]),
    ("CG-18", "one Stop cancels as it stands", _stopped_once, 0, "chain_cancelled", [1.0]),
    ("CG-18", "the window is about the Stop's player", _stopped_once, 0, "chain_top", hot(6, 1)),
    (
        "CG-17",
        "this turn: the card and the Stop",
        _stopped_once,
        2,
        "this_turn",
        per_kind(ask_for_a_card=1, stop=1),
    ),
    ("CG-17", "this turn: two plays", _stopped_once, 2, "this_turn_plays", [2 / 10]),
    (
        "CG-11",
        "Swap Hands' two players, relative to seat 1",
        _swap_window,
        1,
        "chain_players",
        hot(6, 3, 4),
    ),
    ("CG-11", "no target for Swap Hands", _swap_window, 1, "chain_target", hot(6)),
    ("CG-12", "the decision take", _looked, 2, "decision", hot(4, 3)),
    (
        "CG-12",
        "the hand looked at",
        _looked,
        2,
        "looked",
        per_kind(charlie=1, walter=2, steal_a_point=1),
    ),
    (
        "CG-12",
        "whose hand, relative: seat 0 seen from seat 2 of 4",
        _looked,
        2,
        "looked_player",
        hot(6, 2),
    ),
    ("CG-12", "nobody else sees it", _looked, 0, "looked_open", [0.0]),
    (
        "CG-12",
        "the hand looked at is mine: my hand slice",
        _looked,
        0,
        "hand",
        per_kind(charlie=1, walter=2, steal_a_point=1),
    ),
]


@pytest.mark.parametrize(
    ("rule", "what", "build", "seat", "name", "expected"),
    SLICES,
    ids=[f"{c[0]} {c[1]}" for c in SLICES],
)
def test_slices(
    rule: str,
    what: str,
    build: Callable[[], CactusGameState],
    seat: int,
    name: str,
    expected: list[float],
) -> None:
    assert part(observe(build(), seat), name) == pytest.approx(expected)


def test_hidden_hands_change_nothing() -> None:
    # CG-3: another player's hand is hidden; only its size shows (same sizes, other cards)
    one = table(4, [[C, S], [W, W, J], [STOP], [FP]], discard=[C])
    two = table(4, [[C, S], [SP, ASK, C], [D3], [J]], discard=[C])
    assert observe(one, 0) == observe(two, 0)
    assert observe(one, 1) != observe(two, 1)


def test_looked_at_hand_explained_at_its_seat() -> None:
    # CG-12: explain names the looked-at hand at looked/cards with its absolute seat
    explained = ENCODING.explain(observe(_looked(), 2))
    assert explained["looked"] == {"player": 0, "cards": [C, W, W, SP]}
    assert explained["hand"] == {"cards": [J]}
    assert explained["seat"] == 2 and explained["players"] == 4 and explained["player"] == 2


def test_explain_names_every_card_encoded() -> None:
    state = _stopped_once()
    explained = ENCODING.explain(observe(state, 0))
    assert sorted(explained["hand"]["cards"]) == sorted(state.hands[0])
    assert sorted(explained["discard"]["cards"]) == sorted(state.discard)
    assert explained["chain"] == {"type": "play", "player": 0, "card": ASK, "named": W}
    assert sorted(e["card"] for e in explained["this_turn"]) == [ASK, STOP]


# -- size and values ------------------------------------------------------------------------
def test_fields_tile_the_observation() -> None:
    stop = 0
    for f in ENCODING.fields:
        assert f.start == stop and f.size > 0 and f.doc
        stop = f.stop
    assert stop == ENCODING.size == 199
    assert len(ENCODING.actions) == 117


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_fixed_size_for_every_player_count(options: dict[str, Any] | None) -> None:
    # the same size at 2..6 players: encode writes only below ``size`` (a list of that
    # length raises IndexError otherwise), and two encodings agree
    for n in range(GAME.min_players, GAME.max_players + 1):
        state, _ = play_random(GAME, n, 7, options, oracle=False)
        for seat in range(n):
            values = [0.0] * ENCODING.size
            ENCODING.encode(GAME.view(state, seat), values)
            assert all(0.0 <= v <= 1.0 for v in values)
            assert values == observe(state, seat)


# -- actions ---------------------------------------------------------------------------------
def test_action_keys_distinct_and_complete() -> None:
    keys = ENCODING.actions.keys
    assert len(set(keys)) == len(keys) == len(ENCODING.actions.docs)
    assert {k[0] for k in keys} == set(SCHEMA_ACTIONS)  # every schema action type
    assert {k[1] for k in keys if k[0] == "play"} == set(TARGETS)  # CG-19: no play of Stop
    assert {k[1] for k in keys if k[0] == "take"} == set(KINDS)
    assert len([k for k in keys if k[0] == "play_set"]) == 10  # CG-7
    # CG-11: every pair of relative seats; CG-15: every other seat and kind
    assert len([k for k in keys if k[:2] == ("play", SH)]) == 15
    assert len([k for k in keys if k[:2] == ("play", ASK)]) == (MAX_PLAYERS - 1) * len(KINDS)


def decode(view: dict[str, Any], key: tuple[Any, ...]) -> dict[str, Any]:
    """The JSON action an action key means in ``view`` (the mapping docs/learn describes)."""
    me, n = view["seat"], view["players"]
    if key[0] in ("draw", "pass", "stop"):
        return {"type": key[0]}
    if key[0] == "take":
        return {"type": "take", "card": key[1]}
    if key[0] == "play_set":
        return {"type": "play_set", "cards": list(key[1])}
    action: dict[str, Any] = {"type": "play", "card": key[1]}
    if key[1] == SH:
        action["players"] = sorted((me + rel) % n for rel in key[2])
    elif len(key) >= 3:
        action["target"] = (me + key[2]) % n
        if len(key) == 4:
            action["named"] = key[3]
    return action


@pytest.mark.parametrize("n", range(GAME.min_players, GAME.max_players + 1))
def test_every_legal_action_round_trips(n: int) -> None:
    seen: set[Any] = set()
    for seed in range(6):
        state = GAME.new_state(n, seed, None)
        chooser = random.Random(seed)
        while GAME.outcome(state) is None:
            requests = GAME.pending(state)
            for r in requests:
                view = GAME.view(state, r.seat)
                found = ENCODING.legal_indices(view, r.legal_actions)
                # no cap: every legal action has its own index
                assert len(found) == len(r.legal_actions)
                for i, action in found.items():
                    assert ENCODING.action_index(view, action) == i
                    assert decode(view, ENCODING.actions.keys[i]) == action
                    seen.add(ENCODING.actions.keys[i][:2])
            GAME.apply(state, {r.seat: chooser.choice(r.legal_actions) for r in requests})
    # random play reached every action type, so the round trip covered them
    assert {k[0] for k in seen} == set(SCHEMA_ACTIONS)


def test_documented_index_formulas() -> None:
    # the numbering docs/learn/cactus-game.md gives for each action type
    index = ENCODING.actions.index
    assert [index[(t,)] for t in ("draw", "pass", "stop")] == [0, 1, 2]
    for place, kind in enumerate(KINDS):
        assert index[("take", kind)] == 3 + place  # CG-12
        for t in range(1, MAX_PLAYERS):  # CG-15
            assert index[("play", ASK, t, kind)] == 57 + 12 * (t - 1) + place
    assert index[("play", FP)] == 25 and index[("play", D3)] == 26
    for t in range(1, MAX_PLAYERS):  # CG-12, CG-16, CG-14
        assert (index[("play", LS, t)], index[("play", SC, t)], index[("play", SP, t)]) == (
            41 + t,
            46 + t,
            51 + t,
        )
    for a in range(MAX_PLAYERS):  # CG-11
        for b in range(a + 1, MAX_PLAYERS):
            before = sum(MAX_PLAYERS - 1 - i for i in range(a))
            assert index[("play", SH, (a, b))] == 27 + before + (b - a - 1)
    assert index[("play_set", (C, C, C))] == 15 and index[("play_set", (J, J, J))] == 24
    assert index[("play_set", (S, S, S))] == 18 and index[("play_set", (W, J, J))] == 23


# -- docs -----------------------------------------------------------------------------------
def test_docs_quote_the_field_table() -> None:
    assert ENCODING.field_table() in DOCS.read_text(encoding="utf-8")
