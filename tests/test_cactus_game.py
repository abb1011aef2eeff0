"""Cactus Game (``cactus-game``): rules CG-1..CG-21 of rules/cactus-game.md.

- table-driven rule tests on hand-built tables (``table`` sets hands and piles directly);
- a game-specific oracle (``KnowledgeOracle``) rebuilt only from the events each seat
  received, which also proves the events complete (the hands rebuilt from them are the
  true ones), over the same 300 random matches per player count that tests/test_contract.py
  plays under the engine contract's table-driven leak oracle, and proof that it catches
  deliberately leaky views;
- the heuristic against three random bots.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from arena.games import get_game, make_policy
from arena.games.base import IllegalAction, OptionsError, State
from arena.games.cactus_game import GAME
from arena.games.cactus_game.engine import (
    DECK,
    DEFAULT_TARGET,
    POINT_CARDS,
    CactusGame,
    CactusGameState,
)
from arena.match.records import check as check_replay
from arena.match.referee import PolicyClient, Referee, policy_rng
from tests.support.cactus_game import (
    ASK,
    D3,
    DRAW,
    FP,
    LS,
    PASS,
    SC,
    SH,
    SP,
    STOP,
    STOP_IT,
    C,
    J,
    S,
    W,
)
from tests.support.cactus_game import table as support_table
from tests.support.contract import (
    card_names,
    play_random,
    snapshot,
)


def play(card: str, **targets: Any) -> dict[str, Any]:
    return {"type": "play", "card": card, **targets}


def sets(*cards: str) -> dict[str, Any]:
    return {"type": "play_set", "cards": list(cards)}


def take(card: str) -> dict[str, Any]:
    return {"type": "take", "card": card}


# -- building tables ------------------------------------------------------------------------
def table(
    n: int = 3,
    hands: list[list[str]] | None = None,
    *,
    target: int | None = None,
    max_turns: int = 400,
    **setup: Any,
) -> CactusGameState:
    """tests.support.cactus_game.table with the options the rule table sets (CG-20's
    ``target``, CG-21's ``max_turns``) as arguments."""
    return support_table(n, hands, options={"target": target, "max_turns": max_turns}, **setup)


def step(state: State, answers: dict[int, dict[str, Any]]) -> None:
    """Apply ``answers``; pending seats not named give their default (pass in a window).
    Cards and Points are conserved by every step."""
    before = sorted(GAME.all_cards(state))
    requests = GAME.pending(state)
    asked = {r.seat for r in requests}
    assert set(answers) <= asked, f"{sorted(answers)} not all asked; asked {sorted(asked)}"
    GAME.apply(state, {r.seat: answers.get(r.seat, r.default_action) for r in requests})
    assert sorted(GAME.all_cards(state)) == before


def legal(state: State, seat: int) -> list[dict[str, Any]]:
    return next(r.legal_actions for r in GAME.pending(state) if r.seat == seat)


def new_events(state: State, since: int) -> list[dict[str, Any]]:
    return [e.data for e in state.events[since:]]


# -- table-driven rule tests ----------------------------------------------------------------
@dataclass
class Case:
    """A table, the answers step by step, and what the table looks like afterwards."""

    rule: str
    what: str
    hands: list[list[str]]
    steps: list[dict[int, dict[str, Any]]]
    expect: dict[str, Any]
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.rule} {self.what}"


CASES = [
    # CG-4/CG-5: a draw ends the turn at once
    Case("CG-5", "draw ends the turn", [[C, S], [W]], [{0: DRAW}],
         {"hands": [[C, C, S], [W], []], "player": 1}),
    # CG-6: seat 1 starts its turn with no card: it draws three, then seat 2 plays
    Case("CG-6", "forced three-card draw on an empty hand", [[C], [], [S]], [{0: DRAW}],
         {"hands": [[C, C], [C, C, C], [S]], "player": 2, "turn": 3}),
    # CG-7: sets and their Points; each gain ends the turn
    Case("CG-7", "three Charlies give 1", [[C, C, C, S], [W]], [{0: sets(C, C, C)}],
         {"points": [1, 0, 0], "hands": [[S], [W], []], "player": 1, "discard": [C, C, C]}),
    Case("CG-7", "three Spikes give 2", [[S, S, S], [W]], [{0: sets(S, S, S)}],
         {"points": [2, 0, 0], "player": 1}),
    Case("CG-7", "three Walters give 3", [[W, W, W], [W]], [{0: sets(W, W, W)}],
         {"points": [3, 0, 0], "player": 1}),
    Case("CG-7", "three Jokers give 3", [[J, J, J], [W]], [{0: sets(J, J, J)}],
         {"points": [3, 0, 0], "player": 1}),
    Case("CG-7", "a Spike and two Jokers give 2", [[S, J, J], [W]], [{0: sets(S, J, J)}],
         {"points": [2, 0, 0], "player": 1, "hands": [[], [W], []]}),
    Case("CG-7", "two Walters and a Joker give 3", [[W, W, J, C], [W]], [{0: sets(W, W, J)}],
         {"points": [3, 0, 0], "hands": [[C], [W], []]}),
    # CG-19: a set opens no Stop window even when every other seat holds a Stop
    Case("CG-19", "a set cannot be stopped", [[C, C, C], [STOP], [STOP]], [{0: sets(C, C, C)}],
         {"points": [1, 0, 0], "player": 1, "hands": [[], [STOP], [STOP]]}),
    # CG-8: the discard is reshuffled into an empty draw pile
    Case("CG-8", "reshuffle the discard when the draw pile is empty", [[C], [W]],
         [{0: DRAW}], {"hands": [[C, S], [W], []], "discard": [], "draw_pile": 0},
         {"draw": [], "discard": [S]}),
    Case("CG-8", "both piles empty: the draw gives nothing, the turn ends", [[C], [W]],
         [{0: DRAW}], {"hands": [[C], [W], []], "player": 1}, {"draw": [], "discard": []}),
    # CG-9: the Point supply runs out
    Case("CG-9", "a set takes what is left of the supply", [[W, W, W], [C]],
         [{0: sets(W, W, W)}], {"points": [1, 0, 0], "supply": 0, "player": 1}, {"supply": 1}),
    Case("CG-9", "an empty supply gives nothing, the turn still ends", [[FP, C], [C]],
         [{0: play(FP)}], {"points": [0, 0, 0], "supply": 0, "player": 1}, {"supply": 0}),
    # CG-10: Free Point
    Case("CG-10", "Free Point gains 1 and ends the turn", [[FP, C], [STOP]],
         [{0: play(FP)}, {1: PASS}], {"points": [1, 0, 0], "player": 1}),
    Case("CG-10", "Free Point stopped: no Point, the turn goes on", [[FP, C], [STOP]],
         [{0: play(FP)}, {1: STOP_IT}],
         {"points": [0, 0, 0], "player": 0, "phase": "turn", "discard": [FP, STOP]}),
    # CG-11: Swap Hands
    Case("CG-11", "Swap Hands with oneself", [[SH, C, C], [S], [W, W]],
         [{0: play(SH, players=[0, 2])}], {"hands": [[W, W], [S], [C, C]], "player": 0}),
    Case("CG-11", "Swap Hands between two other players", [[SH, C], [S], [W, W]],
         [{0: play(SH, players=[1, 2])}], {"hands": [[C], [W, W], [S]], "player": 0}),
    Case("CG-11", "Swap Hands with an empty hand", [[SH, C], [], [W, W]],
         [{0: play(SH, players=[1, 2])}], {"hands": [[C], [W, W], []], "player": 0}),
    Case("CG-11", "Swap Hands leaving oneself empty", [[SH], [S, S]],
         [{0: play(SH, players=[0, 1])}], {"hands": [[S, S], [], []], "player": 0}),
    Case("CG-11", "Swap Hands stopped", [[SH, C], [S, STOP]],
         [{0: play(SH, players=[0, 1])}, {1: STOP_IT}],
         {"hands": [[C], [S], []], "player": 0}),
    # CG-12: Look and Steal; the choice comes after the window
    Case("CG-12", "Look and Steal takes the chosen card", [[LS], [S, W, STOP]],
         [{0: play(LS, target=1)}, {1: PASS}, {0: take(W)}],
         {"hands": [[W], [S, STOP], []], "player": 0, "phase": "turn"}),
    Case("CG-12", "Look and Steal stopped: no look, no take", [[LS, C], [S, W, STOP]],
         [{0: play(LS, target=1)}, {1: STOP_IT}],
         {"hands": [[C], [S, W], []], "player": 0, "phase": "turn"}),
    Case("CG-12", "the target spent its only card on a Stop that was stopped", [[LS, STOP], [STOP]],
         [{0: play(LS, target=1)}, {1: STOP_IT}, {0: STOP_IT}],
         {"hands": [[], [], []], "player": 0, "phase": "turn"}),
    Case("CG-12", "Look and Steal at a player with no card: nothing seen, nothing taken",
         [[LS, C], [], [S]], [{0: play(LS, target=1)}],
         {"hands": [[C], [], [S]], "player": 0, "phase": "turn"}),
    # CG-13: Draw Three
    Case("CG-13", "Draw Three draws three and ends the turn", [[D3], [STOP]],
         [{0: play(D3)}, {1: PASS}], {"hands": [[C, C, C], [STOP], []], "player": 1}),
    Case("CG-13", "Draw Three stopped: nothing drawn, the turn goes on", [[D3, S], [STOP]],
         [{0: play(D3)}, {1: STOP_IT}], {"hands": [[S], [], []], "player": 0}),
    Case("CG-13", "Draw Three across a reshuffle", [[D3], [W]], [{0: play(D3)}],
         {"hands": [[C, S, D3], [W], []], "discard": [], "player": 1},
         {"draw": [S], "discard": [C]}),
    # CG-14: Steal a Point
    Case("CG-14", "Steal a Point takes one and ends the turn", [[SP], [STOP]],
         [{0: play(SP, target=1)}, {1: PASS}],
         {"points": [1, 1, 0], "supply": 28, "player": 1}, {"points": [0, 2, 0]}),
    Case("CG-14", "Steal a Point stopped: the turn goes on", [[SP, C], [STOP]],
         [{0: play(SP, target=1)}, {1: STOP_IT}],
         {"points": [0, 2, 0], "player": 0}, {"points": [0, 2, 0]}),
    # CG-15: Ask for a Card
    Case("CG-15", "Ask, the target has the card", [[ASK], [W, W, S]],
         [{0: play(ASK, target=1, named=W)}],
         {"hands": [[W], [W, S], []], "player": 0, "phase": "turn"}),
    Case("CG-15", "Ask, the target has no such card", [[ASK], [S, S]],
         [{0: play(ASK, target=1, named=W)}], {"hands": [[], [S, S], []], "player": 0}),
    Case("CG-15", "Ask a player with no card: nothing given", [[ASK, C], [], [S]],
         [{0: play(ASK, target=1, named=W)}],
         {"hands": [[C], [], [S]], "player": 0, "phase": "turn"}),
    Case("CG-15", "Ask stopped", [[ASK], [W, STOP]],
         [{0: play(ASK, target=1, named=W)}, {1: STOP_IT}], {"hands": [[], [W], []]}),
    # CG-16: Steal a Card (a one-card hand makes the random pick certain)
    Case("CG-16", "Steal a Card takes a card", [[SC], [W]], [{0: play(SC, target=1)}],
         {"hands": [[W], [], []], "player": 0}),
    Case("CG-16", "Steal a Card stopped", [[SC], [W, STOP]],
         [{0: play(SC, target=1)}, {1: STOP_IT}], {"hands": [[], [W], []]}),
    # CG-17: several seats answer Stop at once: the first clockwise after the player wins
    Case("CG-17", "first Stop in priority order is kept", [[C], [FP, C], [STOP], [STOP]],
         [{1: play(FP)}, {2: STOP_IT, 3: STOP_IT}, {3: PASS}],
         {"hands": [[C], [C], [], [STOP]], "points": [0, 0, 0, 0], "player": 1},
         {"n": 4, "player": 1}),
    Case("CG-17", "priority wraps around the table", [[STOP], [C], [FP, C], [STOP]],
         [{2: play(FP)}, {0: STOP_IT, 3: STOP_IT}, {0: PASS}],
         {"hands": [[STOP], [C], [C], []], "player": 2}, {"n": 4, "player": 2}),
    # CG-18: chains of Stops
    Case("CG-18", "a Stop of a Stop lets the card happen", [[FP, STOP], [STOP, S]],
         [{0: play(FP)}, {1: STOP_IT}, {0: STOP_IT}],
         {"points": [1, 0, 0], "player": 1, "discard": [FP, STOP, STOP]}),
    Case("CG-18", "a Stop of a Stop of a Stop cancels it", [[FP, STOP, C], [STOP, STOP]],
         [{0: play(FP)}, {1: STOP_IT}, {0: STOP_IT}, {1: STOP_IT}],
         {"points": [0, 0, 0], "player": 0, "hands": [[C], [], []]}),
    Case("CG-18", "a third seat stops the Stop", [[FP, C], [STOP, S], [STOP]],
         [{0: play(FP)}, {1: STOP_IT}, {2: STOP_IT}],
         {"points": [1, 0, 0], "player": 1, "hands": [[C], [S], []]}),
    # -- edges: boundaries, empty hands and piles, the largest table ------------------------
    # CG-4: a stopped card keeps the turn; the draw that follows ends it; the next seat's
    # empty hand draws three (CG-6) and the turn comes back
    Case("CG-4", "a stopped Draw Three, then a draw", [[D3, C], [STOP]],
         [{0: play(D3)}, {1: STOP_IT}, {0: DRAW}],
         {"hands": [[C, C], [C, C, C]], "player": 0, "turn": 3, "this_turn": []}, {"n": 2}),
    # CG-6: the forced draw takes what there is, across a reshuffle (CG-8) or not at all
    Case("CG-6", "a forced draw of the last card gives one", [[C], []], [{0: DRAW}],
         {"hands": [[C, S], [W]], "player": 0, "turn": 3}, {"n": 2, "draw": [W, S]}),
    Case("CG-6", "a forced draw across a reshuffle", [[C], []], [{0: DRAW}],
         {"hands": [[C, S], [W, J, J]], "player": 0, "discard": [], "draw_pile": 0},
         {"n": 2, "draw": [W, S], "discard": [J, J]}),
    Case("CG-6", "empty piles: forced draws give nothing, turns go on to the cap", [[C], [], []],
         [{0: DRAW}, {0: DRAW}],
         {"hands": [[C], [], []], "turn": 6, "phase": "over", "ranks": [1, 1, 1]},
         {"draw": [], "max_turns": 6}),
    # CG-9: what is left of the supply; a stolen Point does not come from the supply
    Case("CG-9", "a Walter set with two Points left gives two", [[W, W, W], [C]],
         [{0: sets(W, W, W)}], {"points": [2, 0, 0], "supply": 0, "player": 1}, {"supply": 2}),
    Case("CG-9", "a Point can be stolen from an empty supply", [[SP, C], [C]],
         [{0: play(SP, target=1)}], {"points": [1, 0, 0], "supply": 0, "player": 1},
         {"points": [0, 1, 0], "supply": 0}),
    # CG-13: the Draw Three just played can come back through a reshuffle
    Case("CG-13", "Draw Three reshuffles its own card back", [[D3], [W]], [{0: play(D3)}],
         {"hands": [[S, J, D3], [W], []], "discard": [], "draw_pile": 0, "player": 1},
         {"draw": [S, J], "discard": []}),
    # CG-14: the victim's last Point
    Case("CG-14", "Steal a Point takes the last one", [[SP], [C]], [{0: play(SP, target=2)}],
         {"points": [1, 0, 0], "player": 1}, {"points": [0, 0, 1]}),
    # CG-17 at the largest table: seat 4 plays; Stops at 0, 2 and 5 all answer: 5 is first
    # after 4; the Stop's window asks 0 and 2, who pass: the Free Point is cancelled
    Case("CG-17", "six seats: the first Stop clockwise after the player",
         [[STOP, C], [C], [STOP, C], [C], [FP, C], [STOP, C]],
         [{4: play(FP)}, {0: STOP_IT, 2: STOP_IT, 5: STOP_IT}, {0: PASS, 2: PASS}],
         {"hands": [[STOP, C], [C], [STOP, C], [C], [C], [C]], "points": [0] * 6,
          "player": 4, "phase": "turn", "this_turn": ["play", "stop"]},
         {"n": 6, "player": 4}),
    # CG-18: a Stop's window runs clockwise from the seat after its player, and the
    # original card's player may answer; two Stops: the Free Point happens
    Case("CG-18", "the Stop's window starts after the stopper",
         [[FP, STOP, C], [STOP], [STOP], [STOP]],
         [{0: play(FP)}, {2: STOP_IT}, {3: STOP_IT, 0: STOP_IT, 1: STOP_IT}, {}],
         {"hands": [[STOP, C], [STOP], [], []], "points": [1, 0, 0, 0], "player": 1},
         {"n": 4}),
    Case("CG-18", "four Stops: the card happens", [[FP, STOP, STOP, C], [STOP, STOP, C]],
         [{0: play(FP)}, {1: STOP_IT}, {0: STOP_IT}, {1: STOP_IT}, {0: STOP_IT}],
         {"hands": [[C], [C]], "points": [1, 0], "player": 1}, {"n": 2}),
    # CG-20: the game ends at once on the target, whatever gain reaches it
    Case("CG-20", "a Free Point reaching the target wins", [[FP, C], [C]], [{0: play(FP)}],
         {"points": [7, 0, 0], "phase": "over", "ranks": [1, 2, 2]}, {"points": [6, 0, 0]}),
    Case("CG-20", "a set past the target wins", [[W, W, W], [C]], [{0: sets(W, W, W)}],
         {"points": [8, 5, 0], "phase": "over", "ranks": [1, 2, 3]}, {"points": [5, 5, 0]}),
    Case("CG-20", "four players: the others ranked by Points, ties shared", [[FP], [C]],
         [{0: play(FP)}], {"points": [5, 3, 3, 0], "ranks": [1, 2, 2, 4]},
         {"n": 4, "points": [4, 3, 3, 0]}),
    Case("CG-20", "five players need five", [[FP, C], [C]], [{0: play(FP)}],
         {"points": [4, 0, 0, 0, 0], "phase": "turn", "player": 1, "ranks": None},
         {"n": 5, "points": [3, 0, 0, 0, 0]}),
    Case("CG-20", "six players need four", [[FP], [C]], [{0: play(FP)}],
         {"points": [4, 0, 0, 0, 0, 0], "ranks": [1, 2, 2, 2, 2, 2]},
         {"n": 6, "points": [3, 0, 0, 0, 0, 0]}),
    Case("CG-20", "the target option", [[C, C, C], [C]], [{0: sets(C, C, C)}],
         {"points": [2, 0, 0], "ranks": [1, 2, 2]}, {"points": [1, 0, 0], "target": 2}),
    # CG-21: the cap ranks by Points, equal Points share the first rank
    Case("CG-21", "the cap with everyone level", [[C], [C], [C]], [{0: DRAW}],
         {"phase": "over", "ranks": [1, 1, 1]}, {"points": [2, 2, 2], "max_turns": 1}),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_table(case: Case) -> None:
    setup = dict(case.setup)
    n = setup.pop("n", max(3, len(case.hands)))
    state = table(n, case.hands, **setup)
    for answers in case.steps:
        step(state, answers)
    got = {
        "hands": [sorted(h) for h in state.hands],
        "points": state.points,
        "player": state.player,
        "phase": state.phase,
        "discard": state.discard,
        "supply": state.supply,
        "draw_pile": len(state.draw_pile),
        "turn": state.turn,
        "ranks": None if state.result is None else state.result.ranks,
        "this_turn": [e["type"] for e in GAME.view(state, state.player)["this_turn"]],
    }
    for key, value in case.expect.items():
        if key == "hands":
            value = [sorted(h) for h in value]
        assert got[key] == value, f"{key}: {got[key]} != {value}"


# -- rules that need more than a table row ------------------------------------------------
def test_cg1_cg2_cg3_deck_points_and_deal() -> None:
    for n in range(2, 7):
        state = GAME.new_state(n, 7)
        white = Counter(c for c in GAME.all_cards(state) if c != "point")
        assert white == Counter(DECK) and sum(white.values()) == 90  # CG-1
        assert DECK[C] + DECK[S] + DECK[W] + DECK[J] == 36
        assert state.supply == POINT_CARDS == 30 and state.points == [0] * n  # CG-2
        assert [len(h) for h in state.hands] == [5] * n  # CG-3
        assert len(state.draw_pile) == 90 - 5 * n and state.discard == []
    firsts = {GAME.new_state(4, seed).player for seed in range(40)}
    assert firsts == {0, 1, 2, 3}  # CG-3: the first player comes from the seed
    assert GAME.new_state(4, 11).player == GAME.new_state(4, 11).player
    for bad in (1, 7, "3"):
        with pytest.raises(OptionsError):
            GAME.new_state(bad, 1)  # type: ignore[arg-type]


def test_cg2_points_and_hand_sizes_are_public() -> None:
    state = table(3, [[C, S], [W]], points=[2, 1, 0])
    view = GAME.view(state, 2)
    assert view["points"] == [2, 1, 0] and view["point_supply"] == 27
    assert view["hand_sizes"] == [2, 1, 0] and view["hand"] == {"cards": []}


def test_cg4_actions_keep_the_turn_until_a_draw_or_a_gain() -> None:
    state = table(3, [[SC, ASK, C, C], [S], [C, W]])
    step(state, {0: play(SC, target=1)})
    step(state, {0: play(ASK, target=2, named=C)})
    assert state.player == 0 and state.phase == "turn"
    assert sorted(state.hands[0]) == [C, C, C, S]
    step(state, {0: sets(C, C, C)})  # a gain ends the turn
    assert state.points == [1, 0, 0]
    assert (state.turn, state.player) == (3, 2)  # seat 1 had to draw three (CG-6)


def test_cg5_draw_is_always_legal_and_the_default() -> None:
    state = table(3, [[STOP]])
    request = GAME.pending(state)[0]
    assert request.legal_actions == [DRAW] and request.default_action == DRAW
    state = table(3, [[FP, SH, C, C, C], [S]])
    request = GAME.pending(state)[0]
    assert DRAW in request.legal_actions and request.default_action == DRAW


def test_cg6_forced_draw_skips_seats_and_counts_turns() -> None:
    state = table(4, [[C], [], [], [W]], draw=[S, S, S, J, J, J])
    step(state, {0: DRAW})  # seat 0 takes a Joker; seats 1 and 2 must draw three
    assert sorted(state.hands[1]) == [J, J, S] and state.hands[2] == [S, S]
    assert state.player == 3 and state.turn == 4
    forced = [e for e in new_events(state, 0) if e["type"] == "draw" and e.get("forced")]
    assert {e["player"] for e in forced} == {1, 2}


def test_cg7_set_listing_uses_jokers() -> None:
    state = table(3, [[C, C, J, J, S, W]])
    listed = [a["cards"] for a in GAME.pending(state)[0].legal_actions if a["type"] == "play_set"]
    # two Charlies and a Joker, or one character and both Jokers; never three Jokers
    assert sorted(listed) == sorted([[C, C, J], [C, J, J], [S, J, J], [W, J, J]])


def test_cg9_supply_shared_out_to_the_end() -> None:
    state = table(2, [[S, S, S], [C]], supply=1, points=[5, 3])
    step(state, {0: sets(S, S, S)})
    assert state.points == [6, 3] and state.supply == 0 and state.player == 1
    assert GAME.all_cards(state).count("point") == 9  # 9 owned, none left to gain


def test_cg12_look_and_steal_view_and_events() -> None:
    state = table(3, [[LS], [S, W, W], [C]])
    mark = len(state.events)
    step(state, {0: play(LS, target=1)})
    assert GAME.pending(state)[0].kind == "take"
    assert legal(state, 0) == [take(S), take(W)]
    assert GAME.view(state, 0)["looked"] == {"player": 1, "cards": [S, W, W]}
    assert "looked" not in GAME.view(state, 1) and "looked" not in GAME.view(state, 2)
    looks = [e for e in state.events[mark:] if e.data["type"] == "look"]
    assert [sorted(e.to) for e in looks] == [[0], [1, 2]]
    assert "cards" not in looks[1].data
    step(state, {0: take(W)})
    assert "looked" not in GAME.view(state, 0)
    takes = [e for e in state.events[mark:] if e.data["type"] == "take"]
    assert takes[0].data["card"] == W and takes[0].to == frozenset({0, 1})
    assert "card" not in takes[1].data and takes[1].to == frozenset({2})


def test_cg12_second_decision_waits_for_the_window() -> None:
    state = table(3, [[LS], [S, W, STOP], [STOP]])
    step(state, {0: play(LS, target=1)})
    assert {r.kind for r in GAME.pending(state)} == {"stop"}
    assert not any(e.data["type"] == "look" for e in state.events)
    step(state, {})
    assert GAME.pending(state)[0].kind == "take"


def test_cg14_steal_a_point_needs_a_point_owner() -> None:
    state = table(3, [[SP, C], [S], [W]], points=[3, 0, 0])
    assert not [a for a in legal(state, 0) if a.get("card") == SP]  # only oneself owns one
    state = table(3, [[SP, C], [S], [W]], points=[0, 0, 2])
    assert [a for a in legal(state, 0) if a.get("card") == SP] == [play(SP, target=2)]
    state = table(4, [[SP, C], [S], [W]], points=[0, 1, 0, 3], player=0)
    assert {a["target"] for a in legal(state, 0) if a.get("card") == SP} == {1, 3}
    state = table(4, [[C], [S], [SP, W]], points=[1, 1, 0, 3], player=2)
    assert {a["target"] for a in legal(state, 2) if a.get("card") == SP} == {0, 1, 3}


def test_cg15_ask_is_public() -> None:
    state = table(3, [[ASK, ASK], [W, S]])
    mark = len(state.events)
    step(state, {0: play(ASK, target=1, named=W)})
    step(state, {0: play(ASK, target=1, named=J)})
    asks = [e for e in state.events[mark:] if e.data["type"] == "ask"]
    assert [(e.to, e.data["given"], e.data.get("card")) for e in asks] == [
        (None, True, W),
        (None, False, None),
    ]
    plays = [e.data for e in state.events[mark:] if e.data["type"] == "play"]
    assert [p["named"] for p in plays] == [W, J] and all(e.to is None for e in asks)
    assert len([a for a in legal(state, 0) if a.get("card") == ASK]) == 0
    state = table(3, [[ASK], [W], []])
    asks_listed = [a for a in legal(state, 0) if a.get("card") == ASK]
    # CG-15: any other player may be named, the one with no card too
    assert len(asks_listed) == 24 and {a["target"] for a in asks_listed} == {1, 2}


def test_cg16_steal_a_card_is_random_from_the_seed() -> None:
    taken = set()
    for seed in range(30):
        state = table(2, [[SC], [C, S, W, J]], seed=seed)
        step(state, {0: play(SC, target=1)})
        (card,) = state.hands[0]
        taken.add(card)
        private = [e for e in state.events if e.data["type"] == "steal_card"]
        assert private[-1].to == frozenset({0, 1}) and private[-1].data["card"] == card
    assert taken == {C, S, W, J}
    state = table(3, [[SC], [], [C]])
    assert [a["target"] for a in legal(state, 0) if a.get("card") == SC] == [2]


def test_cg17_window_asks_every_stop_holder_but_the_player() -> None:
    state = table(4, [[FP, STOP], [STOP], [C], [STOP, STOP]], player=0)
    step(state, {0: play(FP)})
    requests = GAME.pending(state)
    assert [r.seat for r in requests] == [1, 3]  # CG-19: never the card's own player
    assert all(r.legal_actions == [PASS, STOP_IT] and r.default_action == PASS for r in requests)
    view = GAME.view(state, 3)
    assert view["decision"] == "stop" and view["chain"]["card"] == FP
    step(state, {3: STOP_IT})
    # CG-18: the Stop's window: everyone holding a Stop but seat 3, the player included
    assert [r.seat for r in GAME.pending(state)] == [0, 1]


def test_cg19_stop_is_not_playable_on_ones_turn() -> None:
    state = table(3, [[STOP, STOP, C], [STOP]])
    assert all(a.get("card") != STOP for a in legal(state, 0))


def test_cg20_win_thresholds() -> None:
    """CG-20: 7 Points with 2-3 players, 5 with 4-5, 4 with 6; option ``target``."""
    assert DEFAULT_TARGET == {2: 7, 3: 7, 4: 5, 5: 5, 6: 4}
    for n in range(2, 7):
        target = DEFAULT_TARGET[n]
        assert GAME.new_state(n, 1).target == target
        points = [0] * n
        points[0], points[1] = target - 1, target - 2
        state = table(n, [[C, C, C], [S]], points=points)
        step(state, {0: sets(C, C, C)})
        outcome = GAME.outcome(state)
        assert outcome is not None and GAME.pending(state) == []
        assert outcome.ranks == [1, 2] + [3] * (n - 2)  # the others by Points, ties shared
        assert outcome.scores[0] == target and outcome.rounds[0]["winner"] == 0
        # one Point short is not a win
        state = table(n, [[C, C, C], [S]], points=[target - 2] + [0] * (n - 1))
        step(state, {0: sets(C, C, C)})
        assert GAME.outcome(state) is None and state.player == 1
    assert GAME.new_state(6, 1, {"target": 9}).target == 9


def test_cg20_steal_a_point_can_win() -> None:
    """CG-20 with CG-14: a stolen Point that reaches the target wins at once."""
    state = table(2, [[SP], [C]], points=[6, 3])
    step(state, {0: play(SP, target=1)})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.ranks == [1, 2] and state.points == [7, 2]


def test_cg21_max_turns_cap() -> None:
    """CG-21: after ``max_turns`` turns everyone is ranked by Points."""
    state = table(3, [[C], [C], [C]], points=[1, 2, 1], max_turns=3)
    step(state, {0: DRAW})
    step(state, {1: DRAW})
    assert GAME.outcome(state) is None
    step(state, {2: DRAW})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.ranks == [2, 1, 2] and outcome.scores == [1, 2, 1]
    assert outcome.rounds[0]["winner"] is None and outcome.rounds[0]["reason"] == "max_turns"
    # forced draws count as turns too
    state = table(3, [[C], [], []], max_turns=3)
    step(state, {0: DRAW})
    assert GAME.outcome(state) is not None and state.turn == 3


def test_options() -> None:
    """CG-20 ``target`` (1..30, CG-2) and CG-21 ``max_turns`` (at least 1)."""
    o = GAME.resolve_options({"target": 3, "max_turns": 50})
    assert GAME.resolve_options(GAME.options_json(o)) == o
    assert GAME.options_json(GAME.resolve_options(None)) == {"target": None, "max_turns": 400}
    for bad in ({"target": 0}, {"target": 31}, {"target": "5"}, {"max_turns": 0}, {"x": 1}):
        with pytest.raises(OptionsError):
            GAME.resolve_options(bad)


def test_illegal_answers_are_refused() -> None:
    state = table(3, [[SC, C], [S]])
    bad_answers = (
        play(SC, target=2),  # CG-16: an empty hand
        play(SC, target=0),  # oneself
        play(SC, target=1.0),
        play(SC, target=True),
        play(SC, target=99),
        play(SC),
        play(STOP),  # CG-19
        sets(C, C, C),  # CG-7: one Charlie only
        {"type": "stop"},
    )
    before = snapshot(state)
    for bad in bad_answers:
        with pytest.raises(IllegalAction):
            GAME.apply(state, {0: bad})
        assert snapshot(state) == before


def test_cg12_cg15_cg16_which_players_may_be_named() -> None:
    """CG-12 and CG-15 name any other player, even one with no card; CG-16 only a player
    holding a card."""
    state = table(3, [[LS, ASK, SC], [], [S]])
    [request] = GAME.pending(state)
    targets: dict[str, set[int]] = {}
    for a in request.legal_actions:
        if a["type"] == "play":
            targets.setdefault(a["card"], set()).add(a["target"])
    assert targets == {LS: {1, 2}, ASK: {1, 2}, SC: {2}}
    asks = [a for a in request.legal_actions if a.get("card") == ASK and a["target"] == 1]
    assert len(asks) == len(DECK)  # CG-15: any of the 12 kinds, at the empty hand too


def test_cg15_ask_for_the_only_card_the_target_holds() -> None:
    """CG-15 at its boundary: the target's one card is the kind named, so it must give it
    and is left with none; the gift is public; the asker's turn goes on.  The empty hand
    then draws three at the start of its turn (CG-6)."""
    state = table(3, [[ASK, C], [W], [S]])
    since = len(state.events)
    step(state, {0: play(ASK, target=1, named=W)})  # nobody holds a Stop: no window
    assert sorted(state.hands[0]) == [C, W] and state.hands[1] == []
    asks = [e for e in state.events[since:] if e.data["type"] == "ask"]
    assert [(e.data, e.to) for e in asks] == [
        ({"type": "ask", "player": 0, "from": 1, "named": W, "given": True, "card": W}, None)
    ]
    assert (state.phase, state.player) == ("turn", 0)
    assert GAME.view(state, 2)["hand_sizes"] == [2, 0, 1]
    step(state, {0: DRAW})
    assert len(state.hands[1]) == 3 and state.player == 2


@pytest.mark.parametrize(("answer", "given"), [(PASS, True), (STOP_IT, False)])
def test_cg15_cg17_the_only_card_named_is_a_stop(answer: dict[str, Any], given: bool) -> None:
    """CG-15 with CG-17: a target whose one card is the Stop named may spend it on the Ask
    (then nothing is given) or pass (then it must give it); either way its hand is empty."""
    state = table(3, [[ASK, C], [STOP], [S]])
    step(state, {0: play(ASK, target=1, named=STOP)})
    assert [(r.seat, r.kind) for r in GAME.pending(state)] == [(1, "stop")]
    step(state, {1: answer})
    assert state.hands[1] == []
    assert sorted(state.hands[0]) == ([C, STOP] if given else [C])
    assert state.discard == ([ASK] if given else [ASK, STOP])


# -- edges the rule text pins -------------------------------------------------------------
BOOKLET = {  # CG-1, as the rule text lists them
    "charlie": 16, "spike": 12, "walter": 5, "joker": 3,
    "free_point": 3, "swap_hands": 3, "look_and_steal": 6, "draw_three": 6,
    "steal_a_point": 6, "ask_for_a_card": 10, "steal_a_card": 10, "stop": 10,
}  # fmt: skip


@pytest.mark.parametrize("n", [2, 6])
def test_cg1_cg3_the_deck_of_the_rules_at_two_and_six_players(n: int) -> None:
    """CG-1: the 90 white cards kind by kind; CG-3: five each, the rest face down, the
    first player from the seed, any seat."""
    state = GAME.new_state(n, 5)
    assert Counter(c for c in GAME.all_cards(state) if c != "point") == BOOKLET
    assert [len(h) for h in state.hands] == [5] * n and len(state.draw_pile) == 90 - 5 * n
    assert {GAME.new_state(n, seed).player for seed in range(60)} == set(range(n))


@pytest.mark.parametrize(
    ("hand", "listed"),
    [
        ([C, C, C], [[C, C, C]]),
        ([C, C, J], [[C, C, J]]),
        ([S, J, J], [[S, J, J]]),
        ([J, J, J], [[J, J, J]]),
        ([C, J, J, J], [[C, J, J], [J, J, J]]),
        ([W, W, W, J, J], [[W, W, W], [W, W, J], [W, J, J]]),
        ([S, S, W, W, J], [[S, S, J], [W, W, J]]),
        ([C, C, S, S, W, W], []),
        ([J, J, FP, STOP], []),
    ],
)
def test_cg7_which_sets_may_be_played(hand: list[str], listed: list[list[str]]) -> None:
    """CG-7: three of a kind, or completed by Jokers (one or two), or three Jokers."""
    state = table(2, [hand, [C]])
    got = [a["cards"] for a in legal(state, 0) if a["type"] == "play_set"]
    assert sorted(got) == sorted(listed)


def test_cg8_the_new_draw_pile_is_shuffled_with_the_match_generator() -> None:
    """CG-8: the discard becomes the draw pile shuffled (seeded): what is drawn from it
    depends on the generator, and the same generator draws the same card."""
    drawn = set()
    for seed in range(10):
        got = []
        for _ in range(2):
            state = table(2, [[C], [C]], draw=[], discard=[S, W, J, FP, SH, LS, D3, SP])
            state.rng.seed(seed)
            step(state, {0: DRAW})
            got.append(sorted(state.hands[0]))
        assert got[0] == got[1]
        drawn.add(tuple(got[0]))
    assert len(drawn) > 2


@pytest.mark.parametrize(
    ("n", "pairs"),
    [(2, [[0, 1]]), (3, [[0, 1], [0, 2], [1, 2]]),
     (6, [[a, b] for a in range(6) for b in range(a + 1, 6)])],
)  # fmt: skip
def test_cg11_swap_hands_names_any_two_players(n: int, pairs: list[list[int]]) -> None:
    """CG-11: any two different players, the player themself included, each pair once."""
    state = table(n, [[SH, C]])
    got = [a["players"] for a in legal(state, 0) if a.get("card") == SH]
    assert sorted(got) == pairs


def test_cg4_the_plays_of_a_turn_are_public_until_it_ends() -> None:
    """CG-4 and the view: every seat sees the cards played this turn; the next turn
    starts with none."""
    state = table(3, [[ASK, SC, C, C, C], [C, W], [S]])
    step(state, {0: play(ASK, target=1, named=W)})
    step(state, {0: play(SC, target=2)})
    for seat in range(3):
        shown = GAME.view(state, seat)["this_turn"]
        assert [(e["type"], e["card"]) for e in shown] == [("play", ASK), ("play", SC)]
    step(state, {0: sets(C, C, C)})
    assert [e["type"] for e in GAME.view(state, 0)["this_turn"]] == []
    assert all(GAME.view(state, seat)["this_turn"] == [] for seat in range(3))


def test_cg12_take_lists_each_kind_the_target_holds() -> None:
    """CG-12: any one card of the hand looked at: each kind it holds, once."""
    state = table(3, [[LS], [S, S, STOP, J, J]])
    step(state, {0: play(LS, target=1)})
    step(state, {1: PASS})
    assert legal(state, 0) == [take(J), take(S), take(STOP)]
    step(state, {0: take(STOP)})
    assert sorted(state.hands[1]) == [J, J, S, S] and state.hands[0] == [STOP]


def test_cg14_a_stolen_point_that_misses_the_target_ends_the_turn() -> None:
    """CG-14: the turn ends after the steal; the game goes on below the target."""
    state = table(2, [[SP, C], [C]], points=[5, 1])
    step(state, {0: play(SP, target=1)})
    assert state.points == [6, 0] and GAME.outcome(state) is None and state.player == 1


def test_view_public_counts_and_who_decides() -> None:
    """The legal view: one's own hand; every hand's size, the draw pile's size, the
    discard, every player's Points and the supply (CG-2), the target (CG-20) and the cap
    (CG-21), whose turn it is, and what each seat is asked now (CG-17: the Stop holders)."""
    state = table(3, [[FP, C], [STOP, W], [S]], draw=[C] * 7, discard=[W, J],
                  points=[2, 0, 1], target=6, max_turns=50)  # fmt: skip
    step(state, {0: play(FP)})
    for seat, decision in ((0, None), (1, "stop"), (2, None)):
        view = GAME.view(state, seat)
        assert view["hand"] == {"cards": sorted(state.hands[seat])}
        assert (view["hand_sizes"], view["draw_pile"], view["discard"]) == (
            [1, 2, 1], 7, {"cards": [W, J, FP]})  # fmt: skip
        assert (view["points"], view["point_supply"]) == ([2, 0, 1], 27)
        assert (view["target"], view["max_turns"], view["players"]) == (6, 50, 3)
        assert (view["turn"], view["player"], view["phase"]) == (1, 0, "stop")
        assert view["decision"] == decision and view["chain"]["card"] == FP
    step(state, {1: PASS})
    assert [GAME.view(state, s)["decision"] for s in range(3)] == [None, "turn", None]
    assert GAME.view(state, 2)["points"] == [3, 0, 1] and "chain" not in GAME.view(state, 2)


@pytest.mark.parametrize("winner", [0, 2])
def test_cg20_the_outcome_names_the_winner_and_why(winner: int) -> None:
    """CG-20: the player who reaches the target ranks first, whichever seat it is (seat 0
    too); the outcome and the public game_over event say it was the target."""
    hands = [[C], [C], [C]]
    hands[winner] = [FP]
    points = [0, 0, 0]
    points[winner] = 6
    state = table(3, hands, points=points, player=winner)
    step(state, {winner: play(FP)})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.ranks[winner] == 1
    assert outcome.rounds[0]["winner"] == winner and outcome.rounds[0]["reason"] == "target"
    over = state.events[-1]
    assert over.to is None and over.data["type"] == "game_over"
    assert (over.data["winner"], over.data["reason"]) == (winner, "target")
    assert [GAME.view(state, seat)["decision"] for seat in range(3)] == [None] * 3


def _seen_by(state: CactusGameState, seat: int, *types: str) -> list[dict[str, Any]]:
    return [e.data for e in state.events if e.visible_to(seat) and e.data["type"] in types]


def test_cg6_cg9_cg13_events_count_what_really_moved() -> None:
    """CG-6, CG-9, CG-13 and CG-8: the public events say how many cards were drawn and
    how many Points gained, not how many were due."""
    state = table(2, [[C], []], draw=[S, J], discard=[])
    step(state, {0: DRAW})  # J; seat 1 must draw three and finds one
    assert _seen_by(state, 0, "draw") == [
        {"type": "draw", "player": 0, "count": 1, "cards": [J]},
        {"type": "draw", "player": 1, "count": 1, "forced": True},
    ]
    state = table(2, [[W, W, W], [C]], supply=2)
    step(state, {0: sets(W, W, W)})
    assert _seen_by(state, 1, "gain") == [
        {"type": "gain", "player": 0, "count": 2, "reason": "set"}
    ]
    state = table(2, [[D3], [W]], draw=[S], discard=[C])
    step(state, {0: play(D3)})
    assert _seen_by(state, 1, "draw", "reshuffle") == [
        {"type": "reshuffle", "draw_pile": 2},
        {"type": "draw", "player": 0, "count": 3},
    ]
    assert _seen_by(state, 0, "draw") == [
        {"type": "draw", "player": 0, "count": 3, "cards": sorted([S, C, D3])}
    ]


def test_cg17_cg18_the_stop_events_say_whom_each_stop_answers() -> None:
    """CG-17, CG-18: each Stop is public with the seat it stops and its place in the
    chain; the card's fate is public."""
    state = table(2, [[FP, STOP, C], [STOP, C]])
    step(state, {0: play(FP)})
    step(state, {1: STOP_IT})
    step(state, {0: STOP_IT})
    assert _seen_by(state, 1, "stop", "resolve") == [
        {"type": "stop", "player": 1, "card": STOP, "against": 0, "chain": 1},
        {"type": "stop", "player": 0, "card": STOP, "against": 1, "chain": 2},
        {"type": "resolve", "player": 0, "card": FP, "stopped": False, "stops": 2},
    ]


# -- a stronger, game-specific oracle ----------------------------------------------------
PARTY: dict[str, Callable[[dict[str, Any]], set[int]]] = {
    # who may receive a private event that names cards, by event type
    "dealt": lambda d: {d["player"]},
    "draw": lambda d: {d["player"]},
    "look": lambda d: {d["player"]},
    "swap_hands": lambda d: set(d["players"]),
    "take": lambda d: {d["player"], d["from"]},
    "steal_card": lambda d: {d["player"], d["from"]},
}


class KnowledgeOracle:
    """What each seat may know, rebuilt only from the events it received (their ``to``
    tags and data), never from ``view()``: its own hand as a multiset, the discard pile,
    the last hand it looked at and when; plus which event dicts it may be shown.

    ``check_view`` then accepts a view only if its hand and discard equal the rebuilt
    ones, a looked-at hand appears only during the take decision and only while that hand
    is unchanged since the look, and no other part of the view names a card."""

    def __init__(self, n: int):
        self.n = n
        self.hands: list[Counter[str]] = [Counter() for _ in range(n)]
        self.discard: list[list[str]] = [[] for _ in range(n)]
        self.changed = [-1] * n  # index of the last event that changed each hand
        self.looks: list[tuple[int, int, list[str]] | None] = [None] * n
        self.visible: list[set[int]] = [set() for _ in range(n)]  # ids of event dicts
        self.public: set[int] = set()
        self.last_play: dict[str, Any] | None = None
        self.read = 0

    def update(self, state: State) -> None:
        for i in range(self.read, len(state.events)):
            event = state.events[i]
            data = event.data
            if event.to is None:
                self.public.add(id(data))
                if data["type"] == "play":
                    self.last_play = data
            elif any(True for _ in card_names(data)):
                self._check_private(data, event.to)
            for seat in range(self.n) if event.to is None else sorted(event.to):
                self.visible[seat].add(id(data))
                self._learn(seat, i, data)
        self.read = len(state.events)

    def _check_private(self, data: dict[str, Any], to: frozenset[int]) -> None:
        kind = data["type"]
        assert kind in PARTY, f"a private {kind} event names cards"
        assert to <= PARTY[kind](data), f"{kind} cards shown to {sorted(to)}, not a party"
        if kind in ("dealt", "draw", "swap_hands"):
            assert len(to) == 1, f"a {kind} hand shown to several seats"
        if kind == "look":
            # the looker sees exactly the target's hand as the target itself knows it
            target = data["target"]
            assert sorted(data["cards"]) == sorted(self.hands[target].elements())

    def _remove(self, seat: int, card: str, what: str) -> None:
        assert self.hands[seat][card] > 0, f"seat {seat} {what} a {card} it never got"
        self.hands[seat][card] -= 1

    def _learn(self, seat: int, i: int, d: dict[str, Any]) -> None:
        kind = d["type"]
        if kind == "dealt" and d["player"] == seat:
            self.hands[seat] = Counter(d["cards"])
            self.changed[seat] = i
        elif kind == "draw" and d["player"] == seat:
            assert len(d["cards"]) == d["count"]
            self.hands[seat].update(d["cards"])
            self.changed[seat] = i
        elif kind in ("play", "stop"):
            self.discard[seat].append(d["card"])
            if d["player"] == seat:
                self._remove(seat, d["card"], "played")
                self.changed[seat] = i
        elif kind == "play_set":
            self.discard[seat].extend(d["cards"])
            if d["player"] == seat:
                for card in d["cards"]:
                    self._remove(seat, card, "played")
                self.changed[seat] = i
        elif kind == "reshuffle":
            self.discard[seat].clear()
        elif kind == "swap_hands" and seat in d["players"]:
            self.hands[seat] = Counter(d["cards"])
            self.changed[seat] = i
        elif kind in ("take", "steal_card", "ask"):
            if "card" in d:
                if d["player"] == seat:
                    self.hands[seat][d["card"]] += 1
                    self.changed[seat] = i
                elif d["from"] == seat:
                    self._remove(seat, d["card"], "gave")
                    self.changed[seat] = i
            elif kind != "ask" and d["count"]:
                assert seat not in (d["player"], d["from"]), f"seat {seat} not told its {kind}"
        elif kind == "look" and d["player"] == seat and "cards" in d:
            self.looks[seat] = (i, d["target"], sorted(d["cards"]))

    def check_truth(self, state: CactusGameState) -> None:
        """The events are complete: the rebuilt hands and discard are the real ones."""
        for seat in range(self.n):
            hand = sorted(self.hands[seat].elements())
            assert hand == sorted(state.hands[seat]), f"seat {seat} hand"
            assert self.discard[seat] == state.discard

    def check_view(self, seat: int, view: dict[str, Any], decision: str | None) -> None:
        rest = dict(view)
        hand = rest.pop("hand")
        assert set(hand) == {"cards"}
        assert sorted(hand["cards"]) == sorted(self.hands[seat].elements()), (
            f"seat {seat} is shown hand {sorted(hand['cards'])}"
        )
        assert rest.pop("discard") == {"cards": self.discard[seat]}
        for data in rest.pop("events"):
            assert id(data) in self.visible[seat], f"seat {seat} is shown {data}"
        for data in rest.pop("this_turn"):
            assert id(data) in self.public, f"seat {seat} is shown {data} as a play"
        chain = rest.pop("chain", None)
        if chain is not None:
            assert {k: v for k, v in chain.items() if k != "stops"} == self.last_play
        looked = rest.pop("looked", None)
        if looked is not None:
            assert decision == "take", f"seat {seat} is shown a hand outside its take"
            assert self.looks[seat] is not None, f"seat {seat} never looked"
            i, target, cards = self.looks[seat]
            assert i > self.changed[target], f"seat {seat} is shown {target}'s current hand"
            assert looked == {"player": target, "cards": cards}
        leaked = sorted(card_names(rest))
        assert not leaked, f"seat {seat} is shown {leaked} in {sorted(rest)}"


def oracle_match(
    n: int, seed: int, *, contract_oracle: bool = True, all_seats: bool = True
) -> CactusGameState:
    """A random match with the knowledge oracle at every step (and the contract's leak
    oracle unless ``contract_oracle`` is false)."""
    oracle = KnowledgeOracle(n)

    def on_step(state: State) -> None:
        assert isinstance(state, CactusGameState)
        oracle.update(state)
        oracle.check_truth(state)
        decisions = {r.seat: r.kind for r in GAME.pending(state)}
        for seat in range(n) if all_seats or state.result else decisions:
            oracle.check_view(seat, GAME.view(state, seat), decisions.get(seat))

    state, _ = play_random(GAME, n, seed, oracle=contract_oracle, on_step=on_step)
    assert isinstance(state, CactusGameState)
    return state


@pytest.mark.parametrize("n", range(2, 7))
def test_random_matches_pass_the_knowledge_oracle(n: int) -> None:
    """The knowledge oracle over 300 matches per player count (the engine contract's
    checks of the same matches: tests/test_contract.py)."""
    winners = 0
    for seed in range(300):
        state = oracle_match(n, seed, contract_oracle=False, all_seats=seed < 30)
        winners += state.winner is not None
    assert winners > 250  # random play mostly reaches the target before the cap


def test_initial_views_pass_the_oracle() -> None:
    state = GAME.new_state(4, 3)
    oracle = KnowledgeOracle(4)
    oracle.update(state)
    oracle.check_truth(state)
    for seat in range(4):
        oracle.check_view(seat, GAME.view(state, seat), "turn" if seat == state.player else None)
        json.dumps(GAME.view(state, seat))


def _leaky(
    monkeypatch: pytest.MonkeyPatch, leak: Callable[[Any, dict[str, Any], int], None]
) -> None:
    honest = CactusGame.view

    def view(self: CactusGame, state: CactusGameState, seat: int) -> dict[str, Any]:
        result = honest(self, state, seat)
        leak(state, result, seat)
        return result

    monkeypatch.setattr(CactusGame, "view", view)


def test_oracle_catches_another_hand_in_the_view(monkeypatch: pytest.MonkeyPatch) -> None:
    def leak(state: CactusGameState, view: dict[str, Any], seat: int) -> None:
        view["next_player"] = {"cards": sorted(state.hands[(seat + 1) % state.n_players])}

    _leaky(monkeypatch, leak)
    with pytest.raises(AssertionError, match="is shown"):
        oracle_match(4, 1, contract_oracle=False)


def test_oracle_catches_a_hand_that_is_not_ones_own(monkeypatch: pytest.MonkeyPatch) -> None:
    def leak(state: CactusGameState, view: dict[str, Any], seat: int) -> None:
        other = state.hands[(seat + 1) % state.n_players]
        if other:  # one card of the neighbour's hand slips into one's own
            view["hand"] = {"cards": sorted([*view["hand"]["cards"], other[0]])}

    _leaky(monkeypatch, leak)
    with pytest.raises(AssertionError, match="is shown hand"):
        oracle_match(3, 2, contract_oracle=False)


def test_oracle_catches_a_looked_hand_kept_too_long(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[int, int] = {}

    def leak(state: CactusGameState, view: dict[str, Any], seat: int) -> None:
        if "looked" in view:
            seen[seat] = view["looked"]["player"]
        elif seat in seen:  # keeps showing the target's (current) hand after the take
            view["looked"] = {"player": seen[seat], "cards": sorted(state.hands[seen[seat]])}

    _leaky(monkeypatch, leak)
    with pytest.raises(AssertionError, match="shown a hand outside its take"):
        for seed in range(20):
            oracle_match(3, seed, contract_oracle=False)


def test_oracle_catches_a_private_event_sent_to_a_bystander(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    honest = CactusGame._emit_split

    def emit_split(state: Any, public: Any, private: Any, seats: tuple[int, ...]) -> None:
        honest(state, public, private, tuple(range(state.n_players)))  # everyone sees it

    monkeypatch.setattr(CactusGame, "_emit_split", staticmethod(emit_split))
    with pytest.raises(AssertionError, match="not a party"):
        oracle_match(3, 4, contract_oracle=False)


# -- registered and replayable ---------------------------------------------------------------


def test_registered_and_replayable() -> None:
    assert get_game("cactus-game") is GAME
    clients = [PolicyClient(make_policy(GAME.id, b, policy_rng(5, s))) for s, b in
               enumerate(["heuristic", "random", "heuristic"])]  # fmt: skip
    record = Referee().run(GAME.id, clients, 5, {"target": 4})
    assert check_replay(json.loads(json.dumps(record.to_json()))) == []


# -- the heuristic ---------------------------------------------------------------------------
def heuristic_win_rate(matches: int, first_seed: int = 1) -> float:
    """Like ``arena play cactus-game --players 4 --bots heuristic,random,random,random
    --matches N --seed 1``: the heuristic's seat rotates, each match has its own seed."""
    referee = Referee()
    wins = 0
    for m in range(matches):
        seed = first_seed + m
        seat_of_heuristic = (-m) % 4  # the CLI's rotation: seat s plays entry (m + s) % 4
        clients = [
            PolicyClient(
                make_policy(GAME.id, "heuristic" if s == seat_of_heuristic else "random",
                            policy_rng(seed, s))
            )
            for s in range(4)
        ]  # fmt: skip
        record = referee.run(GAME.id, clients, seed, None)
        assert record.outcome is not None
        wins += record.outcome["ranks"][seat_of_heuristic] == 1
    return wins / matches


def test_heuristic_beats_random() -> None:
    rate = heuristic_win_rate(200)
    print(f"heuristic win rate against three random bots over 200 matches: {rate:.1%}")
    assert rate >= 0.55, rate  # chance alone is 25%


def test_heuristic_reads_only_view_and_legal_actions() -> None:
    state = table(3, [[LS, C, C], [C, STOP, W], [S]], points=[0, 4, 0])
    policy = make_policy(GAME.id, "heuristic", policy_rng(1, 0))
    action = policy.act(GAME.view(state, 0), legal(state, 0))
    assert action == play(LS, target=1)  # the biggest hand
    step(state, {0: action})
    step(state, {})  # seat 1 passes
    action = policy.act(GAME.view(state, 0), legal(state, 0))
    assert action == take(C)  # the third Charlie
    step(state, {0: action})
    assert policy.act(GAME.view(state, 0), legal(state, 0)) == sets(C, C, C)
