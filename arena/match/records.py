"""Match records: their stored form, older formats, and re-simulation (the determinism
check behind every replay).

A record is stored gzip-compressed (``encode``/``decode``): its JSON repeats the same keys
and card codes thousands of times, so a four-seat Cactus classic match of 115-160 KB of
JSON takes 5-6 KB on disk, and the API serves the stored bytes as they are, with
``Content-Encoding: gzip``, to a client that accepts it.

Format 1 (the first release) stored each step as ``{"answers": {seat: action},
"decisions": [...]}`` with every action twice and ``"default": false, "fault": null`` on
every decision; ``upgrade`` turns it into format 2 (see ``arena.match.referee``).
"""

from __future__ import annotations

import gzip
import re
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


def fault_summary(record: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """What went wrong for each seat that had faults: ``count`` (the bot's own faults;
    the defaults played once it struck out are not counted), ``kinds`` (count by kind)
    and ``first``, the first fault with its step, cause and the milliseconds the referee
    waited for it (``latency_ms``: how long a timeout took)."""
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
                if decision.get("latency_ms") is not None:
                    seat["first"]["latency_ms"] = decision["latency_ms"]
    return summary


def fault_reason(fault: dict[str, Any]) -> str:
    """Why an answer was refused, in a few words its bot's owner can act on: "timeout
    after 2250 ms", "HTTP 500: the bot's server failed", "HTTP 401: the bot refused the
    arena's signature", "illegal action {...} (not in the legal list)", "body too large
    (5242893 bytes)".  ``fault`` is a kind with as much of its cause as is known (a
    ``first`` of ``fault_summary``, or only ``{"kind": ...}``); every kind the referee and
    the HTTP client produce has its own words, an unknown one keeps its kind and detail."""
    kind = str(fault.get("kind") or "fault")
    detail = str(fault.get("detail") or "")
    if detail == kind:  # a cause without words repeats the kind
        detail = ""
    received = fault.get("received")
    if kind == "timeout":
        if detail.startswith("connect"):
            return "timeout while connecting to the endpoint"
        # how long the referee waited: recorded since faults keep it, else in the words
        waited = fault.get("latency_ms")
        within = re.search(r"within (\d+(?:\.\d+)?) ?s", detail)
        if isinstance(waited, int | float):
            text = f"timeout after {round(waited)} ms"
        elif within:
            text = f"timeout after {round(float(within[1]) * 1000)} ms"
        else:
            text = "timeout (no answer within the deadline)"
        if received:  # the bot began to answer, too slowly
            text += f" ({_bytes(received)} of the answer received)"
        return text
    if kind == "connection_refused":
        return "connection refused: nothing listens at the endpoint"
    if kind == "connection_closed":
        if "mid-answer" in detail or received:
            return f"the bot closed the connection mid-answer ({_bytes(received or 0)} received)"
        return "the bot closed the connection without answering"
    if kind == "connection_error":
        return f"connection error: {detail}" if detail else "connection error"
    if kind == "refused_address":
        # the policy's own words say what is refused, never why (arena.match.netpolicy)
        return detail or "the endpoint's address is not allowed by the arena's network policy"
    if kind in ("http_status", "redirect"):
        return _status_reason(kind, fault.get("status"), detail)
    if kind == "too_large":
        size = re.fullmatch(r"Content-Length (\d+)", detail)
        if size:
            return f"body too large ({size[1]} bytes)"
        if detail.startswith("an answer head"):
            return f"answer headers too large ({detail.removeprefix('an answer head of ')})"
        return f"body too large ({detail})" if detail else "body too large"
    if kind == "not_json":
        why = detail.removeprefix("the answer is not JSON").removeprefix(": ")
        return f"the answer is not JSON ({why})" if why else "the answer is not JSON"
    if kind == "bad_answer":
        if not detail or "'action'" in detail:  # the referee's: JSON, but no action in it
            return "the answer is not an object with an 'action'"
        return f"a malformed HTTP answer: {detail}"
    if kind == "illegal_action":
        action = fault.get("excerpt")
        return (
            f"illegal action {action} (not in the legal list)"
            if action is not None
            else "illegal action (not in the legal list)"
        )
    if kind.startswith("error: "):  # an in-process bot that raised
        error = fault.get("error") or kind.removeprefix("error: ")
        return f"the bot raised {error}: {detail}" if detail else f"the bot raised {error}"
    if kind == "struck_out":
        return "struck out: no longer asked, the default action played"
    return f"{kind}: {detail}" if detail else kind


_STATUS_WORDS = {
    401: "the bot refused the arena's signature",
    403: "the bot refused the request",
    404: "the endpoint has no /act",
    405: "the endpoint does not take a POST to /act",
    408: "the bot timed out the request itself",
    413: "the bot refused the request as too large",
    429: "the bot refused the request as one too many",
}


def _status_reason(kind: str, status: Any, detail: str) -> str:
    """An answer's HTTP status in words (the status from the cause, else from its words)."""
    if not isinstance(status, int):
        found = re.search(r"HTTP (\d{3})", detail)
        status = int(found[1]) if found else None
    if status is None:  # only the kind is known
        return "HTTP redirect, never followed" if kind == "redirect" else "HTTP error status"
    if kind == "redirect" or 300 <= status < 400:
        return f"HTTP {status}: a redirect, never followed"
    if status in _STATUS_WORDS:
        return f"HTTP {status}: {_STATUS_WORDS[status]}"
    if 500 <= status < 600:
        return f"HTTP {status}: the bot's server failed"
    return f"HTTP {status}: not a success"


# kinds whose reason already says how much of the answer there was, and kinds whose
# reason says all their error (the exception's class) would
_SIZED = ("timeout", "connection_closed", "too_large")
_SAID = ("timeout", "connection_closed", "connection_refused")


def _bytes(n: int) -> str:
    return f"{n} byte" if n == 1 else f"{n} bytes"


def describe_fault(fault: dict[str, Any]) -> str:
    """One line for a person: the reason (``fault_reason``), then what the bot answered
    and the error that ended the exchange when they add to it."""
    reason = fault_reason(fault)
    parts = [reason]
    excerpt = fault.get("excerpt")
    if excerpt and excerpt not in reason:
        parts.append(f"answer: {excerpt}")
    elif fault.get("received") and fault.get("kind") not in _SIZED:
        parts.append(f"{_bytes(fault['received'])} received")
    error = fault.get("error")
    if error and error not in reason and fault.get("kind") not in _SAID:
        parts.append(str(error))
    return " \u2014 ".join(parts)


def seat_fault_reason(faults: dict[str, Any] | None) -> str | None:
    """Why a seat was struck out or forfeited, from its ``fault_summary``: the reason of
    its first fault, and its most frequent kind too when that is another (None without
    faults)."""
    if not faults:
        return None
    kinds: dict[str, int] = faults.get("kinds") or {}
    first = faults.get("first")
    common = max(sorted(kinds), key=lambda k: kinds[k]) if kinds else None
    if not first:
        return fault_reason({"kind": common}) if common else None
    reason = fault_reason(first)
    if common is not None and common != first.get("kind") and kinds[common] > 1:
        reason += f"; then mostly {fault_reason({'kind': common})} (\u00d7{kinds[common]})"
    return reason
