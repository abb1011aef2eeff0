"""Building exact Cactus situations for rule tests."""

from __future__ import annotations

from typing import Any

from arena.games import cards
from arena.games.cactus import GAME
from arena.games.cactus.engine import CactusState


def card(name: str) -> int:
    """The first physical card with that name (one deck)."""
    return cards.NAMES.index(name)


def table(
    n: int = 3,
    preset: str = "classic",
    layouts: list[list[str]] | None = None,
    stock: list[str] | None = None,
    discard: list[str] | None = None,
    player: int = 0,
    **options: Any,
) -> CactusState:
    """A state at the start of ``player``'s turn with the given cards.

    ``layouts[p]`` fills slots 0, 1, 2... of seat p; ``stock`` and ``discard`` list cards
    bottom first (the last one is on top).  Nobody knows any layout card."""
    state = GAME.new_state(n, 1, {"preset": preset, **options})
    if layouts is not None:
        state.layouts = [{i: card(c) for i, c in enumerate(row)} for row in layouts]
        state.next_slot = [max(4, len(row)) for row in layouts]
    if stock is not None:
        state.stock = [card(c) for c in stock]
    if discard is not None:
        state.discard = [card(c) for c in discard]
    state.known = [[{} for _ in range(n)] for _ in range(n)]
    state.layout_version += 1  # views must not reuse rows built before this set-up
    state.locked.clear()
    state.window = None
    state.peeking.clear()
    state.player = player
    state.phase = "turn"
    state.hand = None
    state._pending = None
    return state


def act(state: CactusState, seat: int, action: dict[str, Any]) -> None:
    GAME.apply(state, {seat: action})


def answer_all(state: CactusState, answers: dict[int, dict[str, Any]]) -> None:
    """Answer a multi-seat request: the given answers, ``pass`` for everyone else."""
    full = {r.seat: answers.get(r.seat, r.default_action) for r in GAME.pending(state)}
    GAME.apply(state, full)


def legal(state: CactusState, seat: int) -> list[dict[str, Any]]:
    return next(r.legal_actions for r in GAME.pending(state) if r.seat == seat)


def asked(state: CactusState) -> list[int]:
    return [r.seat for r in GAME.pending(state)]


def names(ids: list[int]) -> list[str]:
    return [cards.name(c) for c in ids]


def layout(state: CactusState, seat: int) -> dict[int, str]:
    return {s: cards.name(c) for s, c in state.layouts[seat].items()}


def pass_windows(state: CactusState) -> None:
    """Everyone passes the open snap windows (and calls nothing) until a turn starts."""
    while state.phase in ("snap", "call", "power"):
        answer_all(state, {})
