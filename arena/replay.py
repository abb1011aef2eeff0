"""Match records: their stored form, older formats, and re-simulation (the determinism
check behind every replay).

A record is stored gzip-compressed (``encode``/``decode``): its JSON repeats the same keys
and card codes thousands of times, so a four-seat Cactus classic match of 115-160 KB of
JSON takes 5-6 KB on disk, and the API serves the stored bytes as they are, with
``Content-Encoding: gzip``, to a client that accepts it.

Format 1 (the first release) stored each step as ``{"answers": {seat: action},
"decisions": [...]}`` with every action twice and ``"default": false, "fault": null`` on
every decision; ``upgrade`` turns it into format 2 (see ``arena.referee``).
"""

from __future__ import annotations

import gzip
from typing import Any

import orjson

from arena.games import get_game
from arena.games.base import Action, Game, State
from arena.referee import RECORD_FORMAT

COMPRESSION_LEVEL = 6  # level 9 saves about 1% more for twice the time


def encode(record: dict[str, Any]) -> bytes:
    """The stored form of a record: compact JSON, gzip-compressed."""
    # compact UTF-8 JSON, the bytes json.dumps(separators=(",", ":"), ensure_ascii=False)
    # gives, in a tenth of its time; mtime=0: the same record always gives the same bytes
    return gzip.compress(orjson.dumps(record), COMPRESSION_LEVEL, mtime=0)


def decode(data: bytes) -> dict[str, Any]:
    return upgrade(orjson.loads(gzip.decompress(data)))


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """The record in the current format (format 1 records are converted)."""
    if record.get("format", 1) == RECORD_FORMAT:
        return record
    if record.get("format", 1) != 1:
        raise ValueError(f"unknown match record format {record.get('format')!r}")
    steps = [
        [
            {k: v for k, v in d.items() if k != "default" and v is not None}
            for d in step["decisions"]
        ]
        for step in record["steps"]
    ]
    return {**record, "format": RECORD_FORMAT, "steps": steps}


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


def fault_summary(record: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """What went wrong for each seat that had faults: ``count`` (the bot's own faults;
    the defaults played once it struck out are not counted), ``kinds`` (count by kind)
    and ``first``, the first fault with its step and cause."""
    summary: dict[int, dict[str, Any]] = {}
    for number, step in enumerate(record["steps"]):
        for decision in step:
            kind = decision.get("fault")
            if kind is None or kind == "struck_out":
                continue
            seat = summary.setdefault(decision["seat"], {"count": 0, "kinds": {}})
            seat["count"] += 1
            seat["kinds"][kind] = seat["kinds"].get(kind, 0) + 1
            if "first" not in seat:
                seat["first"] = {"step": number, "kind": kind, **decision.get("cause", {})}
    return summary


def describe_fault(fault: dict[str, Any]) -> str:
    """One line for a person: the kind, then the cause as far as it is known."""
    parts = [str(fault.get("kind", "fault"))]
    detail = fault.get("detail")
    if detail and detail != fault.get("kind"):
        parts.append(str(detail))
    if fault.get("received") is not None and "excerpt" not in fault:
        parts.append(f"{fault['received']} bytes received")
    if fault.get("excerpt"):
        parts.append(f"answer: {fault['excerpt']}")
    if fault.get("error") and fault["error"] not in str(detail):
        parts.append(str(fault["error"]))
    return " — ".join(parts)
