"""What a seat was shown: the card codes in its views and in the events it received up
to a step, computed from the record by re-simulating it.  The browser tests check that a
page drawing a seat's table (the replay viewer's seat perspective, a person's seat at
/play) shows no other card."""

from __future__ import annotations

from typing import Any

from arena.match.records import answers


def known_to(game: Any, record: dict[str, Any], viewer: int, steps: int) -> set[str]:
    """Every card code seat ``viewer`` was shown up to ``steps``: in its views and in the
    events it received."""
    identities = _identities(game)
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    found: set[str] = set()
    for i in range(steps + 1):
        found |= _strings(game.view(state, viewer), identities)
        if i < steps and i < len(record["steps"]):
            game.apply(state, answers(record["steps"][i]))
    for event in state.events:
        if event.visible_to(viewer):
            found |= _strings(event.data, identities)
    return found


def cards_in(game: Any, value: Any) -> set[str]:
    """The card codes anywhere in ``value`` (a view, an event), keys too."""
    return _strings(value, _identities(game))


def _identities(game: Any) -> frozenset[str]:
    from arena.games import cards
    from arena.games.cactus_game.engine import KINDS
    from arena.games.president.engine import JOKERS

    if game.id == "cactus-game":
        return frozenset(KINDS)
    return frozenset(cards.NAMES) | frozenset(JOKERS)


def _strings(value: Any, identities: frozenset[str]) -> set[str]:
    if isinstance(value, str):
        return {value} & identities
    if isinstance(value, dict):
        return set().union(
            *(_strings(v, identities) for v in value.values()), set(value) & identities
        )
    if isinstance(value, list):
        return set().union(set(), *(_strings(v, identities) for v in value))
    return set()
