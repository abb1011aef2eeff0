"""Property tests of Cactus Game's learning encoding (``arena/games/cactus_game/encoding.py``)
against the rules CG-1..CG-21 of docs/rules/cactus-game.md and the layout that
docs/learn/cactus-game.md promises:

- ``agrees(view, explained)``: ``ENCODING.explain`` says what the view says (seat, turn,
  phase, decision, every card of the hand, the discard, this turn's plays, the Stop window
  and the looked-at hand, as multisets), and every slice of the observation is what the
  learning document's formula gives for that view (relative seats, clips and all).  The
  expected values are computed here from the documents (kind order, deck copies, caps),
  never read back from the encoding;
- random play under the leak oracle (``check_encoding``) at every player count (2..6), the
  game's presets (it has none) and option sets that move every option off its default,
  with ``agrees`` and ``check_indices`` (every legal action an index of its own; the
  document names no action without one, so no ``unnamed`` hook);
- hand-built states, each checked at every seat with ``agrees``, ``check_indices`` and the
  document's index formulas: Stop chains of one to ten Stops and their priority (CG-17,
  CG-18, CG-19), chains started by each action card at every player count and what
  follows them (CG-10..CG-16), the looked-at hand (CG-12), every set and every target at
  once (CG-7, CG-11, CG-15), the turn cap (CG-21) and the documented clips.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from arena.games.cactus_game import ENCODING, GAME
from arena.games.cactus_game.engine import CactusGameOptions, CactusGameState
from tests.support.cactus_game import (
    ASK,
    D3,
    DRAW,
    FP,
    LS,
    SC,
    SH,
    SP,
    STOP,
    STOP_IT,
    C,
    J,
    S,
    W,
    table,
)
from tests.support.contract import check_encoding, check_indices

# -- what the documents say ------------------------------------------------------------------
# docs/learn/cactus-game.md: the kind order of every per-kind slice
KIND_ORDER = (C, S, W, J, FP, SH, LS, D3, SP, ASK, SC, STOP)
# CG-1: the copies of each kind in the 90 white cards
COPIES = {C: 16, S: 12, W: 5, J: 3, FP: 3, SH: 3, LS: 6, D3: 6, SP: 6, ASK: 10, SC: 10, STOP: 10}
WHITE_CARDS, POINT_CARDS = 90, 30  # CG-1, CG-2
SEATS = 6  # CG-3: 2..6 players, one entry per relative seat
HAND_CAP, TURNS_LEFT_CAP, PLAYS_CAP, STOPS_SCALE = 30, 50, 10, 10  # docs/learn clips
PHASE_ORDER = ("turn", "stop", "take", "over")
DECISION_ORDER = (None, "turn", "stop", "take")
CHAIN_CARDS = (FP, D3, SH, LS, SC, SP, ASK)  # the `chain_card` one-hot, as documented
# docs/learn: the sets in index order 15..24 (CG-7): per character x3, x2 + Joker, + 2 Jokers
SET_ORDER = [(ch,) * used + (J,) * (3 - used) for ch in (C, S, W) for used in (3, 2, 1)] + [
    (J, J, J)
]


def rel(view: dict[str, Any], seat: int) -> int:
    """A seat's relative number: 0 is the observer, k the k-th seat clockwise after it."""
    return (seat - view["seat"]) % view["players"]


def hot(size: int, *indices: int) -> list[float]:
    return [1.0 if i in indices else 0.0 for i in range(size)]


def per_kind(cards: Counter[str], clip: bool = False) -> list[float]:
    """count / copies per kind, in the documented order (clipped at 1 for ``this_turn``)."""
    values = [cards[k] / COPIES[k] for k in KIND_ORDER]
    return [min(v, 1.0) for v in values] if clip else values


def per_seat(view: dict[str, Any], value: Callable[[int], float]) -> list[float]:
    """A per-relative-seat slice: entry k is seat (me + k) % players, 0 past the count."""
    n, me = view["players"], view["seat"]
    return [value((me + k) % n) if k < n else 0.0 for k in range(SEATS)]


def this_turn_cards(view: dict[str, Any]) -> Counter[tuple[str, str]]:
    """(event type, card) for every card this turn's plays put down (CG-4, CG-7, CG-17)."""
    found: Counter[tuple[str, str]] = Counter()
    for event in view["this_turn"]:
        if event["type"] == "play_set":
            found.update((event["type"], card) for card in event["cards"])
        else:
            found[(event["type"], event["card"])] += 1
    return found


def expected_observation(view: dict[str, Any]) -> dict[str, list[float]]:
    """Every slice of the observation of ``view``, by the formulas of docs/learn."""
    n, me = view["players"], view["seat"]
    target, max_turns, turn = view["target"], view["max_turns"], view["turn"]
    hand = Counter(view["hand"]["cards"])
    sizes, points = view["hand_sizes"], view["points"]
    expected: dict[str, list[float]] = {
        "players": hot(5, n - 2),
        "my_seat": hot(SEATS, me),
        "target": [target / POINT_CARDS],
        "turn": [min(turn / max_turns, 1.0)],
        "turns_left": [max(min(max_turns - turn, TURNS_LEFT_CAP), 0) / TURNS_LEFT_CAP],
        "phase": hot(4, PHASE_ORDER.index(view["phase"])),
        "decision": hot(4, DECISION_ORDER.index(view["decision"])),
        "current": hot(SEATS, rel(view, view["player"])),
        "hand": per_kind(hand),
        "hand_at_least": [float(hand[k] >= t) for k in KIND_ORDER for t in (1, 2, 3)],
        "discard": per_kind(Counter(view["discard"]["cards"])),
        "discard_size": [len(view["discard"]["cards"]) / WHITE_CARDS],
        "draw_pile": [view["draw_pile"] / WHITE_CARDS],
        "point_supply": [view["point_supply"] / POINT_CARDS],
        "present": per_seat(view, lambda s: 1.0),
        "hand_sizes": per_seat(view, lambda s: min(sizes[s], HAND_CAP) / HAND_CAP),
        "hand_empty": per_seat(view, lambda s: float(sizes[s] == 0)),
        "points": per_seat(view, lambda s: points[s] / POINT_CARDS),
        "points_to_target": per_seat(view, lambda s: min(points[s] / target, 1.0)),
    }
    chain = view.get("chain") or {}
    stops = chain.get("stops", [])
    card, named = chain.get("card"), chain.get("named")
    seats = {k: [rel(view, chain[k])] if k in chain else [] for k in ("player", "target")}
    top = [rel(view, stops[-1] if stops else chain["player"])] if chain else []
    expected.update(
        chain_open=[float(bool(chain))],
        chain_card=hot(7, *([CHAIN_CARDS.index(card)] if card else [])),
        chain_player=hot(SEATS, *seats["player"]),
        chain_target=hot(SEATS, *seats["target"]),
        chain_players=hot(SEATS, *(rel(view, s) for s in chain.get("players", []))),
        chain_named=hot(12, *([KIND_ORDER.index(named)] if named else [])),
        chain_stops=[min(len(stops) / STOPS_SCALE, 1.0)],
        chain_cancelled=[float(len(stops) % 2 == 1)],  # CG-18: an odd count cancels
        chain_top=hot(SEATS, *top),  # CG-19: the last Stop's player, else the card's
    )
    looked = view.get("looked")
    expected.update(
        looked_open=[float(looked is not None)],
        looked_player=hot(SEATS, *([rel(view, looked["player"])] if looked else [])),
        looked=per_kind(Counter(looked["cards"] if looked else [])),
        this_turn=per_kind(Counter(card for _, card in this_turn_cards(view).elements()), True),
        this_turn_plays=[min(len(view["this_turn"]), PLAYS_CAP) / PLAYS_CAP],
    )
    return expected


def observe(view: dict[str, Any]) -> list[float]:
    values = [0.0] * ENCODING.size
    ENCODING.encode(view, values)
    return values


def agrees(view: dict[str, Any], explained: dict[str, Any]) -> None:
    """``explained`` (``ENCODING.explain`` of the observation of ``view``) says what
    ``view`` says, and every slice of that observation is the documented formula's value.

    The explanation: the same seat, players, current player, phase and decision; the hand,
    the discard and the looked-at hand as multisets (no clip: a count never exceeds the
    deck's copies); this turn's cards as (type, card) multisets, clipped at the copies as
    docs/learn clips ``this_turn``; the Stop window's player, card and named kind.  Events
    are not encoded (docs/learn), so they are the only card-bearing part left out."""
    assert set(explained) <= set(view), f"keys the view lacks: {set(explained) - set(view)}"
    for key in ("seat", "players", "player", "phase", "decision"):
        assert explained[key] == view[key], f"{key}: {explained[key]!r} != {view[key]!r}"
    for key in ("hand", "discard"):
        got, want = Counter(explained[key]["cards"]), Counter(view[key]["cards"])
        assert got == want, f"{key}: {sorted(got.elements())} != {sorted(want.elements())}"
    want_turn = this_turn_cards(view)
    for (kind, card), count in want_turn.items():
        want_turn[(kind, card)] = min(count, COPIES[card])
    assert this_turn_cards(explained) == want_turn, "this_turn"
    chain = view.get("chain")
    assert ("chain" in explained) == (chain is not None), "chain shown iff the view has one"
    if chain is not None:
        got_chain = explained["chain"]
        assert {"card", "player"} | ({"named"} & set(chain)) <= set(got_chain)
        for key, value in got_chain.items():
            assert chain.get(key) == value, f"chain/{key}: {value!r} != {chain.get(key)!r}"
    looked = view.get("looked")
    assert ("looked" in explained) == (looked is not None), "looked shown iff the view has it"
    if looked is not None:
        assert explained["looked"]["player"] == looked["player"]
        assert Counter(explained["looked"]["cards"]) == Counter(looked["cards"])
    # the observation itself, slice by slice
    values = observe(view)
    expected = expected_observation(view)
    assert set(expected) == {f.name for f in ENCODING.fields}, "a slice the test does not know"
    for name, want in expected.items():
        f = ENCODING.field(name)
        assert values[f.start : f.stop] == pytest.approx(want), f"slice {name}"


# -- the action indices of docs/learn ----------------------------------------------------------
def documented_action(view: dict[str, Any], i: int) -> dict[str, Any]:
    """The JSON action index ``i`` stands for in ``view``, by docs/learn's formulas."""
    me, n = view["seat"], view["players"]
    if i < 3:
        return {"type": ("draw", "pass", "stop")[i]}
    if i < 15:
        return {"type": "take", "card": KIND_ORDER[i - 3]}
    if i < 25:
        return {"type": "play_set", "cards": list(SET_ORDER[i - 15])}
    if i < 27:
        return {"type": "play", "card": (FP, D3)[i - 25]}
    if i < 42:  # 27 + (pairs before a) + (b - a - 1)
        pairs = [(a, b) for a in range(SEATS) for b in range(a + 1, SEATS)]
        a, b = pairs[i - 27]
        return {"type": "play", "card": SH, "players": sorted(((me + a) % n, (me + b) % n))}
    if i < 57:
        card, t = ((LS, 41), (SC, 46), (SP, 51))[(i - 42) // 5]
        return {"type": "play", "card": card, "target": (me + i - t) % n}
    t, place = divmod(i - 57, 12)
    return {"type": "play", "card": ASK, "target": (me + t + 1) % n, "named": KIND_ORDER[place]}


def check_seat(state: CactusGameState, seat: int) -> dict[str, Any]:
    """``agrees`` for the view of ``seat``; if it is asked, ``check_indices`` and each
    index decoded by the document's formulas is the very legal action."""
    view = GAME.view(state, seat)
    agrees(view, ENCODING.explain(observe(view)))
    for request in GAME.pending(state):
        if request.seat == seat:
            named = check_indices(ENCODING, view, request.legal_actions)
            assert len(named) == len(request.legal_actions)  # docs/learn: no action unnamed
            for i, action in named.items():
                assert documented_action(view, i) == action, f"index {i}"
    return view


def check_all(state: CactusGameState) -> list[dict[str, Any]]:
    return [check_seat(state, seat) for seat in range(state.n_players)]


# -- random play -------------------------------------------------------------------------------
# every option off its default at least once (test_option_sets_move_every_option checks)
OPTION_SETS: list[dict[str, Any] | None] = [
    None,  # CG-20: 7 / 5 / 4 Points by player count; CG-21: 400 turns
    {"target": 1},  # CG-20: the first gain wins
    {"target": 3, "max_turns": 52},  # CG-21: turns_left drops under its clip of 50
    {"target": 30, "max_turns": 70},  # CG-20 out of reach, CG-21 ends the game
    {"max_turns": 1},  # CG-21: one turn
    {"max_turns": 4},  # CG-6, CG-21: a few turns
    *({"preset": name} for name in GAME.presets),  # the game has no presets (CG rules)
]
SEEDS = range(2)


def test_option_sets_move_every_option() -> None:
    """Each option of CactusGameOptions (CG-20 target, CG-21 max_turns) is off its default
    in some option set, and every preset is listed."""
    moved = {key for options in OPTION_SETS if options for key in options}
    for f in dataclasses.fields(CactusGameOptions):
        assert f.name in moved, f.name
        assert any(o and f.name in o and o[f.name] != f.default for o in OPTION_SETS), f.name
    assert {o["preset"] for o in OPTION_SETS if o and "preset" in o} == set(GAME.presets)


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
@pytest.mark.parametrize("n", range(GAME.min_players, GAME.max_players + 1))
def test_random_play_agrees_and_indexes_every_action(
    n: int, options: dict[str, Any] | None
) -> None:
    """CG-1..CG-21 in random play: the leak oracle, ``agrees`` and ``check_indices`` on
    every view a seat is given."""
    for seed in SEEDS:
        assert check_encoding(GAME, ENCODING, n, seed, options, agrees=agrees) > 0


def test_agrees_catches_a_wrong_explanation() -> None:
    """``agrees`` is not vacuous: an explanation that drops a hand card, or an observation
    with a seat off by one, fails it (CG-3)."""
    state = table(3, [[C, C, J], [S], [W]], discard=[STOP])
    view = GAME.view(state, 0)
    explained = ENCODING.explain(observe(view))
    agrees(view, explained)
    explained["hand"]["cards"].pop()
    with pytest.raises(AssertionError, match="hand"):
        agrees(view, explained)
    shifted = {**view, "player": 1}  # the observation says seat 0 plays, this view seat 1
    with pytest.raises(AssertionError):
        agrees(shifted, ENCODING.explain(observe(view)))


# -- hand-built states --------------------------------------------------------------------------
def act(state: CactusGameState, answers: dict[int, dict[str, Any]]) -> None:
    """Apply ``answers`` (each seat must be asked); other asked seats pass (the default)."""
    requests = GAME.pending(state)
    assert set(answers) <= {r.seat for r in requests}, (answers, requests)
    GAME.apply(state, {r.seat: answers.get(r.seat, r.default_action) for r in requests})


def play(card: str, **targets: Any) -> dict[str, Any]:
    return {"type": "play", "card": card, **targets}


def window(state: CactusGameState) -> list[int]:
    """The seats asked in the open Stop window, in the order the engine asks them."""
    return [r.seat for r in GAME.pending(state) if r.kind == "stop"]


def stop_chain(stoppers: list[list[int]]) -> Iterator[CactusGameState]:
    """4 players: seat 1 plays Steal a Card on seat 3 (CG-16); then, window after window,
    the seats of each list answer Stop at once.  Every seat holds five Stops."""
    state = table(4, [[STOP] * 5, [SC, C] + [STOP] * 5, [STOP] * 5, [W] + [STOP] * 5], player=1)
    act(state, {1: play(SC, target=3)})
    yield state
    for seats in stoppers:
        act(state, {seat: STOP_IT for seat in seats})
        yield state
    while state.phase == "stop":  # then everyone passes: the chain resolves
        act(state, {})
        yield state


STOP_CHAINS: list[tuple[str, list[list[int]], list[int]]] = [
    ("CG-17 one Stop, cancels", [[2]], [2]),
    ("CG-18 the card's player stops the Stop: two, even, it happens", [[2], [1]], [2, 1]),
    # CG-17: all three answer the card; priority runs clockwise from seat 2 (after 1)
    ("CG-17 CG-18 priority, then three Stops", [[3, 0, 2], [1, 3], [2, 0]], [2, 3, 0]),
    # CG-17: seats 0 and 3 answer the card: 3 comes first after seat 1; CG-18: in a
    # Stop's window priority runs from the seat after that Stop's player
    ("CG-18 four Stops answered out of turn", [[0, 3], [1, 2], [0, 3], [2, 1]], [3, 1, 3, 1]),
    ("CG-18 six Stops", [[3], [1], [0], [2], [3], [0]], [3, 1, 0, 2, 3, 0]),
]


@pytest.mark.parametrize(
    ("rule", "stoppers", "kept"), STOP_CHAINS, ids=[row[0] for row in STOP_CHAINS]
)
def test_stop_chains(rule: str, stoppers: list[list[int]], kept: list[int]) -> None:
    """CG-17 CG-18 CG-19: a chain of several Stops answered out of turn; at each window
    every seat's observation agrees with its view (chain_stops, chain_cancelled and
    chain_top follow the chain), pass and stop have their indices, and the seat whose
    card the window is about is not asked (CG-19)."""
    seen: list[list[int]] = []
    for state in stop_chain(stoppers):
        views = check_all(state)
        if state.phase == "stop":
            stops = views[0]["chain"]["stops"]
            seen.append(stops)
            top = stops[-1] if stops else 1
            assert top not in window(state)  # CG-19: not on one's own card
    assert seen[-1] == kept  # CG-17: the first in priority is kept
    assert state.phase == "turn" and state.player == 1  # CG-16: the turn goes on


def test_ten_stops_and_eleven_plays() -> None:
    """CG-18 with all ten Stops of the deck (CG-1), seats 0 and 1 stopping each other in
    turn: chain_stops reaches 10 / 10 and this_turn_plays, eleven plays, is clipped at 10
    (docs/learn).  Seat 2 holds a Stop and passes, so the tenth Stop's window is asked;
    ten is even: the Free Point happens, 1 Point, the turn ends (CG-10)."""
    state = table(3, [[FP, C] + [STOP] * 5, [S] + [STOP] * 5, [W, STOP]])
    act(state, {0: play(FP)})
    for k in range(10):
        check_all(state)
        act(state, {(k + 1) % 2: STOP_IT})
    views = check_all(state)
    assert window(state) == [2] and len(views[2]["chain"]["stops"]) == 10
    values = observe(views[2])
    for name in ("chain_stops", "this_turn_plays"):
        assert values[ENCODING.field(name).start] == 1.0, name
    act(state, {})
    assert state.points == [1, 0, 0] and state.player == 1
    check_all(state)


# each action card, its targets at ``n`` players (the player is seat n - 1, so that the
# relative seats wrap), and what a hand-built table needs for it to be playable
def _targets(card: str, n: int) -> dict[str, Any]:
    p = n - 1
    if card in (FP, D3):  # CG-10, CG-13
        return {}
    if card == SH:  # CG-11: the player and the seat before it, or two others
        return {"players": sorted((p, p - 1)) if n == 2 else [0, n - 2]}
    if card == ASK:  # CG-15
        return {"target": 0, "named": STOP}
    return {"target": n - 2}  # CG-12, CG-14, CG-16: the seat before the player


@pytest.mark.parametrize("stopped", [False, True], ids=["let", "stopped"])
@pytest.mark.parametrize("card", CHAIN_CARDS)
def test_each_action_card_opens_a_chain_at_every_player_count(card: str, stopped: bool) -> None:
    """CG-10..CG-16 CG-17 at 2..6 players: the card waits in its window (chain_card,
    chain_player, chain_target or chain_players, chain_named), then resolves or is stopped;
    what follows is checked too: the take decision of Look and Steal (CG-12), the turn that
    goes on (CG-11, CG-15, CG-16, any stopped card) or the next player's turn (CG-10,
    CG-13, CG-14)."""
    for n in range(GAME.min_players, GAME.max_players + 1):
        p = n - 1
        hands = [[C, SP, STOP, STOP, J] for _ in range(n)]
        hands[p] = [card, W, W]
        stopper = 0  # the first seat after the player: always another seat
        hands[stopper] = [STOP, S, ASK, LS]
        points = [1] * n  # CG-14: everyone owns a Point
        state = table(n, hands, points=points, player=p, discard=[D3, C])
        check_all(state)
        action = play(card, **_targets(card, n))
        act(state, {p: action})
        views = check_all(state)
        assert state.phase == "stop" and views[0]["chain"]["card"] == card
        act(state, {stopper: STOP_IT} if stopped else {})  # the others pass
        views = check_all(state)
        if stopped:  # CG-18: nobody stops the Stop (they pass): odd, cancelled
            while state.phase == "stop":
                act(state, {})
                views = check_all(state)
            assert state.player == p and state.phase == "turn", f"{card} at {n}"
        elif card == LS:  # CG-12: the take decision
            assert state.phase == "take" and views[p]["looked"]["player"] == n - 2
        elif card in (SH, ASK, SC):  # the turn goes on
            assert state.player == p and state.phase == "turn"
        else:  # CG-10, CG-13, CG-14: the turn ended
            assert state.player == 0 or state.phase == "over"


def test_looked_at_hand_and_every_take() -> None:
    """CG-12: after the window (the target spent a Stop in it and the player stopped
    back: two Stops, even), the take decision shows the hand as it is then; each kind
    there is a take at index 3 + its place; at 5 players the looked player is relative
    seat 3 (seat 0 seen from seat 2).  Nobody else is shown it."""
    hands = [[C, C, W, J, STOP, STOP, SP], [S], [LS, STOP, C], [], [D3]]
    state = table(5, hands, player=2)
    act(state, {2: play(LS, target=0)})
    check_all(state)
    act(state, {0: STOP_IT})
    check_all(state)
    act(state, {2: STOP_IT})
    check_all(state)  # seat 0 may stop again (CG-18): it passes
    act(state, {})
    views = check_all(state)
    assert state.phase == "take"
    assert sorted(views[2]["looked"]["cards"]) == sorted([C, C, W, J, STOP, SP])
    assert all("looked" not in v for i, v in enumerate(views) if i != 2)
    for kind in (C, W, J, STOP, SP):  # every take leads back to the turn
        again = table(5, hands, player=2)
        act(again, {2: play(LS, target=0)})
        act(again, {0: STOP_IT})
        act(again, {2: STOP_IT})
        act(again, {})
        act(again, {2: {"type": "take", "card": kind}})
        assert again.phase == "turn" and kind in again.hands[2]
        check_all(again)


def test_looked_at_every_kind() -> None:
    """CG-12: a looked-at hand holding every kind: twelve take indices, 3..14."""
    state = table(3, [[LS], [*KIND_ORDER, C, C], [S]])
    act(state, {0: play(LS, target=1)})
    act(state, {})  # seat 1's Stop window: it passes
    assert state.phase == "take"
    check_all(state)
    named = check_indices(ENCODING, GAME.view(state, 0), GAME.pending(state)[0].legal_actions)
    assert sorted(named) == list(range(3, 15))


def test_look_at_an_empty_hand() -> None:
    """CG-12: naming a player with no card shows nothing, and there is no take."""
    state = table(3, [[LS, C], [S], []])
    act(state, {0: play(LS, target=2)})
    views = check_all(state)
    assert state.phase == "turn" and "looked" not in views[0]


@pytest.mark.parametrize("n", range(GAME.min_players, GAME.max_players + 1))
def test_every_play_at_once(n: int) -> None:
    """CG-7, CG-10..CG-16: a hand with every set and every action card, every other seat
    holding a card and a Point: every set, every Swap Hands pair (CG-11, oneself
    included), every target and named kind is legal, each at its own documented index;
    from each seat of the table (relative seats wrap)."""
    for p in range(n):
        hands = [[C] for _ in range(n)]
        hands[p] = [C, C, C, S, S, S, W, W, W, J, J, J, FP, SH, LS, D3, SP, ASK, SC, STOP]
        state = table(n, hands, points=[1] * n, player=p)
        check_all(state)
        legal = GAME.pending(state)[0].legal_actions
        pairs = n * (n - 1) // 2
        others = n - 1
        assert len(legal) == 1 + 10 + 2 + pairs + 3 * others + 12 * others


def test_swaps_and_asks_resolve() -> None:
    """CG-11: after a swap the two hands changed sides, the turn goes on; CG-15: the Ask's
    card moves; CG-16: a stolen card moves.  Each follow-up turn state agrees."""
    state = table(6, [[SH, ASK, SC, C], [S, S], [W], [J, J, J], [], [STOP]], player=0)
    act(state, {0: play(SH, players=[3, 5])})
    act(state, {})  # seat 5 passes... then holds the Jokers
    check_all(state)
    assert state.hands[5] == [J, J, J]
    act(state, {0: play(ASK, target=3, named=STOP)})  # seat 3 now holds the Stop
    assert window(state) == [3]
    check_all(state)
    act(state, {})
    check_all(state)
    assert STOP in state.hands[0]
    act(state, {0: play(SC, target=1)})
    check_all(state)
    assert state.phase == "turn" and len(state.hands[0]) == 3 and len(state.this_turn) == 3


TURN_CAPS: list[tuple[str, dict[str, Any] | None, int, float]] = [
    ("CG-21 400 turns, turn 1: 399 left, clipped at 50", None, 1, 1.0),
    ("CG-21 the clip's edge: 50 left", {"max_turns": 60}, 10, 1.0),
    ("CG-21 under the clip: 49 left", {"max_turns": 60}, 11, 49 / 50),
    ("CG-21 the last turn", {"max_turns": 5}, 5, 0.0),
]


@pytest.mark.parametrize(
    ("what", "options", "turn", "left"), TURN_CAPS, ids=[row[0] for row in TURN_CAPS]
)
def test_turn_cap(what: str, options: dict[str, Any] | None, turn: int, left: float) -> None:
    """CG-21: turns_left = min(max_turns - turn, 50) / 50 (docs/learn); at the last turn
    a draw ends the game: phase over, no decision, nothing left."""
    state = table(3, [[C, FP], [S], [W]], turn=turn, options=options)
    views = check_all(state)
    f = ENCODING.field("turns_left")
    assert observe(views[1])[f.start] == pytest.approx(left)
    act(state, {0: DRAW})
    views = check_all(state)
    if left == 0.0:
        assert state.phase == "over" and all(v["decision"] is None for v in views)


def test_turn_cap_in_a_chain() -> None:
    """CG-13 CG-21: Draw Three let through on the last turn ends the turn and the game."""
    state = table(2, [[D3, C], [STOP, S]], turn=3, options={"max_turns": 3})
    act(state, {0: play(D3)})
    check_all(state)
    act(state, {})
    views = check_all(state)
    assert state.phase == "over" and views[0]["turn"] == 3


def test_big_hands_clip() -> None:
    """docs/learn: hand sizes are clipped at 30; a hand of every Charlie, Spike and Walter
    (33 cards, CG-1) still counts each kind exactly in its own hand slice."""
    big = [C] * 16 + [S] * 12 + [W] * 5
    state = table(4, [[C], big, [], [J]], discard=[STOP] * 10, points=[0, 4, 0, 0])
    views = check_all(state)
    f = ENCODING.field("hand_sizes")
    assert observe(views[0])[f.start + 1] == 1.0
    state = table(4, [big, [S], [], [J]], points=[3, 0, 0, 0])
    check_all(state)  # CG-7: all three characters' sets legal


def test_a_winning_set_stays_in_this_turn() -> None:
    """CG-7 CG-20: a set that reaches the target ends the game at once; the final views
    still show this turn's plays (an Ask let through, then the set: three cards counted
    in this_turn, CG-4) and no decision."""
    state = table(3, [[W, W, J, ASK], [W, STOP], [S]], points=[4, 0, 0], options={"target": 7})
    act(state, {0: play(ASK, target=1, named=W)})
    check_all(state)
    act(state, {})  # seat 1 passes: it gives its Walter (CG-15)
    check_all(state)
    act(state, {0: {"type": "play_set", "cards": [W, W, W]}})
    views = check_all(state)
    assert state.phase == "over" and state.points[0] == 7
    assert [e["type"] for e in views[1]["this_turn"]] == ["play", "play_set"]
