"""Cactus Game for the tests: the card kinds by short name, the actions the tests answer
most, and a table built directly at the start of a turn (``table``), read by the rule,
learning and encoding tests of the game."""

from __future__ import annotations

from typing import Any

from arena.games.cactus_game import GAME
from arena.games.cactus_game.engine import POINT_CARDS, CactusGameState

C, S, W, J = "charlie", "spike", "walter", "joker"
FP, SH, LS, D3 = "free_point", "swap_hands", "look_and_steal", "draw_three"
SP, ASK, SC, STOP = "steal_a_point", "ask_for_a_card", "steal_a_card", "stop"
DRAW = {"type": "draw"}
PASS = {"type": "pass"}
STOP_IT = {"type": "stop"}


def table(
    n: int = 3,
    hands: list[list[str]] | None = None,
    *,
    draw: list[str] | None = None,
    discard: list[str] | None = None,
    points: list[int] | None = None,
    supply: int | None = None,
    player: int = 0,
    turn: int = 1,
    seed: int = 0,
    options: dict[str, Any] | None = None,
) -> CactusGameState:
    """A match at the start of ``player``'s turn (turn ``turn`` of the match) with the
    given hands and piles (the draw pile's top is its last card), nothing shown yet of
    what came before.  Unlisted hands are empty; the draw pile defaults to twenty Charlies
    so that draws are predictable; the Point supply holds what the points leave."""
    state = GAME.new_state(n, seed, options)
    state.hands = [list(h) for h in (hands or [])] + [[] for _ in range(n - len(hands or []))]
    state.draw_pile = list(draw) if draw is not None else [C] * 20
    state.discard = list(discard or [])
    state.points = list(points or [0] * n)
    state.supply = supply if supply is not None else POINT_CARDS - sum(state.points)
    state.player, state.phase, state.turn, state.this_turn = player, "turn", turn, []
    state.shown_upto = [len(state.events)] * n
    state._pending = None
    return state
