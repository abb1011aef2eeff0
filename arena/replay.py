"""Re-simulating a match record: the determinism check behind every replay."""

from __future__ import annotations

from typing import Any

from arena.games import get_game
from arena.games.base import Game, State


def resimulate(record: dict[str, Any]) -> tuple[Game, State]:
    """Play the record's answers again from its seed and options."""
    game = get_game(record["game"])
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    for step in record["steps"]:
        game.apply(state, {int(seat): action for seat, action in step["answers"].items()})
    return game, state


def check(record: dict[str, Any]) -> list[str]:
    """What differs between the record and its re-simulation (empty when they agree)."""
    game, state = resimulate(record)
    problems = []
    events = [e.to_json() for e in state.events]
    if events != record["events"]:
        first = next(
            (i for i, (a, b) in enumerate(zip(events, record["events"], strict=False)) if a != b),
            min(len(events), len(record["events"])),
        )
        problems.append(f"events differ from event {first} on")
    outcome = game.outcome(state)
    if outcome is None:
        problems.append("the re-simulated match is not over")
    else:
        recorded = record["outcome"] or {}
        if outcome.ranks != recorded.get("game_ranks", recorded.get("ranks")):
            problems.append("ranks differ")
        if outcome.scores != recorded.get("scores"):
            problems.append("scores differ")
    return problems


def seat_events(record: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """Exactly the events seat ``seat`` received, as they were recorded."""
    return [e for e in record["events"] if e["to"] == "public" or seat in e["to"]]
