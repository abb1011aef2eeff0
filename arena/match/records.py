"""Match records: their stored form, older formats, and re-simulation (the determinism
check behind every replay).

A record is stored gzip-compressed (``encode``/``decode``): its JSON repeats the same keys
and card codes thousands of times, so a four-seat Cactus classic match of 115-160 KB of
JSON takes 5-6 KB on disk, and the API serves the stored bytes as they are, with
``Content-Encoding: gzip``, to a client that accepts it.

Format 1 (the first release) stored each step as ``{"answers": {seat: action},
"decisions": [...]}`` with every action twice and ``"default": false, "fault": null`` on
every decision; format 2 stored each step as the list of its decisions; format 3 (see
``arena.match.referee``) adds the time bank: ``"time_bank_ms"`` (absent: none) and, on a
decision that drew on it, ``"bank_ms"``.  ``upgrade`` turns the older formats into the
current one (a match played before the bank had none).
"""

from __future__ import annotations

import gzip
from typing import Any

import orjson

from arena.games import get_game
from arena.games.base import Action, Game, IllegalAction, State
from arena.match.referee import RECORD_FORMAT

COMPRESSION_LEVEL = 6  # level 9 saves about 1% more for twice the time


def encode(record: dict[str, Any]) -> bytes:
    """The stored form of a record: compact JSON, gzip-compressed."""
    # compact UTF-8 JSON, the bytes json.dumps(separators=(",", ":"), ensure_ascii=False)
    # gives, in a tenth of its time; mtime=0: the same record always gives the same bytes
    return gzip.compress(orjson.dumps(record), COMPRESSION_LEVEL, mtime=0)


def decode(data: bytes) -> dict[str, Any]:
    return upgrade(orjson.loads(gzip.decompress(data)))


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """The record in the current format (formats 1 and 2 are converted)."""
    version = record.get("format", 1)
    if version == RECORD_FORMAT:
        return record
    if version not in (1, 2):
        raise ValueError(f"unknown match record format {record.get('format')!r}")
    if version == 1:
        steps = [
            [
                {k: v for k, v in d.items() if k != "default" and v is not None}
                for d in step["decisions"]
            ]
            for step in record["steps"]
        ]
        record = {**record, "steps": steps}
    return {**record, "format": RECORD_FORMAT}


def answers(step: list[dict[str, Any]]) -> dict[int, Action]:
    """What was applied at a step: each decision's action, by seat."""
    return {d["seat"]: d["action"] for d in step}


def resimulate(record: dict[str, Any]) -> tuple[Game, State]:
    """Play the record's answers again from its seed and options."""
    game = get_game(record["game"])
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    for step in record["steps"]:
        game.apply(state, answers(step))
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


def first_difference(record: dict[str, Any]) -> tuple[int, str] | None:
    """Where a record and its re-simulation part, played step by step: ``(step, what)``,
    step 0 being the deal and step k the record's k-th step (as ``arena play`` and the
    viewer count them), or None when they agree to the outcome.  An answer the engine
    refuses (``IllegalAction``) is a difference at its step, not an error.  A record that
    is not one (missing fields, an unknown game or option) raises KeyError, TypeError,
    ValueError or OptionsError."""
    game = get_game(record["game"])
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    recorded = record["events"]
    compared = 0

    def events_differ() -> str | None:
        nonlocal compared
        for i in range(compared, len(state.events)):
            event = state.events[i].to_json()
            if i >= len(recorded):
                return f"event {i} ({_brief(event)}) is not in the record"
            if event != recorded[i]:
                return _event_difference(i, recorded[i], event)
        compared = len(state.events)
        return None

    if (what := events_differ()) is not None:
        return 0, what
    steps = record["steps"]
    for number, step in enumerate(steps, start=1):
        try:
            game.apply(state, answers(step))
        except IllegalAction as exc:
            return number, f"the recorded answer is refused ({exc})"
        if (what := events_differ()) is not None:
            return number, what
    last = len(steps)
    if len(recorded) > compared:
        extra = len(recorded) - compared
        return last, f"the record has {extra} more event(s) from event {compared}"
    outcome = game.outcome(state)
    if outcome is None:
        return last, "the re-simulated match is not over after the record's last step"
    result = record["outcome"] or {}
    for name, mine, theirs in (
        ("ranks", outcome.ranks, result.get("game_ranks", result.get("ranks"))),
        ("scores", outcome.scores, result.get("scores")),
    ):
        if mine != theirs:
            return last, f"the {name} are recorded as {theirs}, re-simulated {mine}"
    return None


def _event_difference(i: int, recorded: Any, event: dict[str, Any]) -> str:
    """``event 3 (turn): player is recorded as 99, re-simulated 1``: the fields that
    differ, when the recorded event is of the same type."""
    if not isinstance(recorded, dict) or recorded.get("type") != event.get("type"):
        return f"event {i} is recorded as {_brief(recorded)}, re-simulated {_brief(event)}"
    keys = [
        k
        for k in sorted(set(recorded) | set(event))
        if recorded.get(k, _ABSENT) != event.get(k, _ABSENT)
    ]
    shown = [
        f"{k} is recorded as {_brief(recorded.get(k, _ABSENT))}, "
        f"re-simulated {_brief(event.get(k, _ABSENT))}"
        for k in keys[:2]
    ]
    more = f"; {len(keys) - 2} more field(s)" if len(keys) > 2 else ""
    return f"event {i} ({event.get('type')}): " + "; ".join(shown) + more


_ABSENT = object()


def _brief(value: Any, limit: int = 48) -> str:
    if value is _ABSENT:
        return "absent"
    text = orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def seat_events(record: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """Exactly the events seat ``seat`` received, as they were recorded."""
    return [e for e in record["events"] if e["to"] == "public" or seat in e["to"]]


def seat_decisions(record: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """Seat ``seat``'s own decisions, each with the number of its step."""
    return [
        {"step": i, **decision}
        for i, step in enumerate(record["steps"])
        for decision in step
        if decision["seat"] == seat
    ]
