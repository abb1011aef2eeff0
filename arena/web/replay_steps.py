"""Where each decision of a match record falls in its event list, per perspective.

A record keeps the applied answers (``steps``) and the resulting ``events`` but not which
events each step produced.  Re-simulating the record from its seed gives that: before
step ``i`` is applied, ``all[i]`` events exist and seat ``s`` has received ``seats[s][i]``
of them.  The replay viewer shows step ``i``'s decisions next to the first event at or
after that position, in the perspective being viewed.
"""

from __future__ import annotations

from typing import Any

from arena.games import get_game
from arena.replay import answers


def step_positions(record: dict[str, Any]) -> dict[str, Any] | None:
    """``{"all": [...], "seats": [[...], ...]}``, each ``len(steps) + 1`` long (the last
    entry is the event count), or None when the record does not re-simulate to its own
    events (then the viewer shows the decisions without placing them)."""
    try:
        game = get_game(record["game"])
        n_players = len(record["players"])
        state = game.new_state(n_players, record["seed"], record["options"])
        everyone: list[int] = []
        per_seat: list[list[int]] = [[] for _ in range(n_players)]
        received = [0] * n_players
        counted = 0

        def mark() -> None:
            nonlocal counted
            for event in state.events[counted:]:
                for seat in range(n_players):
                    if event.visible_to(seat):
                        received[seat] += 1
            counted = len(state.events)
            everyone.append(counted)
            for seat in range(n_players):
                per_seat[seat].append(received[seat])

        for step in record["steps"]:
            mark()
            game.apply(state, answers(step))
        mark()
        if [e.to_json() for e in state.events] != record["events"]:
            return None
    except Exception:  # a record this code cannot replay still gets its event list shown
        return None
    return {"all": everyone, "seats": per_seat}
