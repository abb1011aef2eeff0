"""The leak oracle of tests/support/contract.py checks the rule that no seat is ever shown
a card the game's rules keep from it; it must catch what an engine gets wrong about
visibility without trusting the engine: each test plants one bug in an engine (a view
that shows too much, an event tagged for too many seats, an event type or an event key
nobody classified, knowledge kept after the card moved unseen) and asserts that random
play under the oracle fails with a ``leak:`` message.

Every bug planted here passed the oracle that trusted the engine's own visibility tags.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from arena.games import cards
from arena.games.cactus import GAME as CACTUS
from arena.games.cactus.engine import Cactus, CactusState
from arena.games.cactus_game import GAME as CACTUS_GAME
from arena.games.cactus_game.engine import CactusGame, CactusGameState
from arena.games.president import GAME as PRESIDENT
from arena.games.president.engine import President, PresidentState
from tests.support.contract import play_random

PAGAT = {"preset": "pagat"}


def matches(game: Any, players: int, options: dict[str, Any] | None, seeds: int = 20) -> None:
    for seed in range(seeds):
        play_random(game, players, seed, options)


# -- views that show another seat's cards ---------------------------------------------------


def test_a_president_view_with_the_next_hand_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under any key, at any depth: the old oracle only looked under `card`/`cards`."""
    honest = President.view

    def view(self: President, state: PresidentState, seat: int) -> dict[str, Any]:
        shown = honest(self, state, seat)
        return {**shown, "next": list(state.hand_view[(seat + 1) % state.n_players])}

    monkeypatch.setattr(President, "view", view)
    with pytest.raises(AssertionError, match=r"^leak: .* at next/0, where the president"):
        matches(PRESIDENT, 4, None, seeds=1)


def test_a_cactus_game_view_with_an_opponent_hand_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Card kinds are common words (`stop` is also a phase), so they are matched
    everywhere and then located: no rule shows a card under `next_hand`."""
    honest = CactusGame.view

    def view(self: CactusGame, state: CactusGameState, seat: int) -> dict[str, Any]:
        shown = honest(self, state, seat)
        return {**shown, "next_hand": sorted(state.hands[(seat + 1) % state.n_players])}

    monkeypatch.setattr(CactusGame, "view", view)
    with pytest.raises(AssertionError, match=r"^leak: .* at next_hand/0, where the cactus-game"):
        matches(CACTUS_GAME, 3, None, seeds=1)


def test_a_cactus_view_that_keeps_a_blind_swapped_card_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PG-3 blind swap: neither card is seen, so the swapper no longer knows its slot.  A
    view that keeps showing the card it saw there shows a card it saw, so an oracle that
    only counts the names a seat saw lets it pass; knowledge per position does not."""
    swaps = []
    honest_swap, honest_view = Cactus._power_blind_swap, Cactus.view

    def blind_swap(self: Cactus, state: CactusState, action: dict[str, Any]) -> None:
        seat, slot = state.player, action["slot"]
        seen = state.known[seat][seat].get(slot)
        honest_swap(self, state, action)
        if seen is not None:  # kept on the match's own state: round, seat, slot, card
            state._planted_stale = (state.round, seat, slot, seen)  # type: ignore[attr-defined]
            swaps.append(state._planted_stale)  # type: ignore[attr-defined]

    def view(self: Cactus, state: CactusState, seat: int) -> dict[str, Any]:
        shown = honest_view(self, state, seat)
        memory = getattr(state, "_planted_stale", None)
        if memory is None or memory[:2] != (state.round, seat):
            return shown
        rows = [[dict(cell) for cell in row] for row in shown["layouts"]]  # rows are cached
        for cell in rows[seat]:
            if cell["slot"] == memory[2] and cell["card"] is None:
                cell["card"] = memory[3]  # the card it saw there before the swap
        return {**shown, "layouts": rows}

    monkeypatch.setattr(Cactus, "_power_blind_swap", blind_swap)
    monkeypatch.setattr(Cactus, "view", view)
    with pytest.raises(AssertionError, match=r"^leak: seat \d is shown .* may not know there"):
        matches(CACTUS, 3, PAGAT)
    assert swaps, "no blind swap of a known card was played"


# -- what a live match's audience is shown ------------------------------------------------


def test_a_spectator_view_with_a_hand_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The public table (a live match's audience) holds no seat's cards: PR-3."""
    honest = President.spectator_view

    def spectator_view(self: President, state: PresidentState, reveal: bool = False) -> Any:
        return {**honest(self, state, reveal), "cards": list(state.hand_view[0])}

    monkeypatch.setattr(President, "spectator_view", spectator_view)
    with pytest.raises(AssertionError, match=r"^leak: seat 4 is shown .* may not know there"):
        matches(PRESIDENT, 4, None, seeds=1)


def test_a_spectator_view_with_a_layout_card_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """CA-3: a layout card lies face down; the audience sees none of them, even the ones
    their owner peeked at (CL-1)."""
    honest = Cactus.spectator_view

    def spectator_view(self: Cactus, state: CactusState, reveal: bool = False) -> Any:
        shown = honest(self, state, reveal)
        rows = [[dict(cell) for cell in row] for row in shown["layouts"]]
        owner = state.player
        for cell in rows[owner][:1]:
            cell["card"] = state.names[state.layouts[owner][cell["slot"]]]
        return {**shown, "layouts": rows}

    monkeypatch.setattr(Cactus, "spectator_view", spectator_view)
    with pytest.raises(AssertionError, match=r"^leak: seat 3 is shown .* may not know there"):
        matches(CACTUS, 3, None, seeds=1)


# -- events tagged for too many seats, or not classified ----------------------------------


def test_a_peek_other_result_tagged_public_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """PG-3 peek_other: the card seen goes to the peeker only.  Tagged public, it would
    reach every bot; the test's table, not the tag, says who may see it."""
    honest = Cactus._power_peek_other

    def peek_other(self: Cactus, state: CactusState, action: dict[str, Any]) -> None:
        honest(self, state, action)
        seen = next(e for e in reversed(state.events) if e.data["type"] == "seen")
        seen.to = None  # the bug: tagged public

    monkeypatch.setattr(Cactus, "_power_peek_other", peek_other)
    with pytest.raises(AssertionError, match=r"^leak: seen event \d+ naming .* to everyone"):
        matches(CACTUS, 3, PAGAT)


def test_an_exchange_shown_to_every_seat_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """PR-10: the cards of an exchange are for the two seats only."""
    honest = President._emit_exchange

    def emit_exchange(self: President, state: PresidentState, *args: Any, **kw: Any) -> None:
        honest(self, state, *args, **kw)
        state.events[-1].to = None  # the bug: exchange_cards tagged public

    monkeypatch.setattr(President, "_emit_exchange", emit_exchange)
    with pytest.raises(AssertionError, match=r"^leak: exchange_cards event \d+ .* to everyone"):
        matches(PRESIDENT, 4, None, seeds=1)


def test_an_unclassified_event_type_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new event type fails until a person says in tests/support/leak_tables.py who may see it."""
    honest = CactusGame._begin_turn

    def begin_turn(self: CactusGame, state: CactusGameState, player: int) -> None:
        honest(self, state, player)
        state.emit({"type": "hint", "player": player, "cards": sorted(state.hands[player])})

    monkeypatch.setattr(CactusGame, "_begin_turn", begin_turn)
    with pytest.raises(AssertionError, match=r"^leak: event type 'hint' is not in the"):
        matches(CACTUS_GAME, 3, None, seeds=1)


def test_a_public_event_that_names_a_hidden_card_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CA-5: everyone sees who drew from the stock, not the card; a `card` key added to
    the public draw event is a key its table entry does not allow."""
    honest = Cactus._turn_draw

    def turn_draw(self: Cactus, state: CactusState, action: dict[str, Any]) -> None:
        honest(self, state, action)
        if state.hand is not None:
            draw = next(e for e in reversed(state.events) if e.data["type"] == "draw")
            draw.data["card"] = cards.name(state.hand)  # the bug

    monkeypatch.setattr(Cactus, "_turn_draw", turn_draw)
    with pytest.raises(AssertionError, match=r"^leak: draw event names .* under 'card'"):
        matches(CACTUS, 3, {"preset": "classic"}, seeds=1)


# -- the tables themselves ------------------------------------------------------------------


@pytest.mark.parametrize("game_id", ["cactus", "cactus-game", "president"])
def test_every_table_entry_cites_its_rules(game_id: str) -> None:
    """Each visibility entry says which rule decides it, so a reader can check it."""
    from tests.support.leak_tables import TABLES

    uncited = [
        kind
        for kind, seen in TABLES[game_id].events.items()
        if not re.search(r"\b(CA|CL|PG|CG|PR|PV)-\d+", seen.rule)
    ]
    assert uncited == []
