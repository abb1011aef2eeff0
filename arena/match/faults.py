"""A bot's faults: ``BotFault`` (what the referee and the transports raise when a bot
gives no usable answer), the ``excerpt`` of a refused answer kept with it, and every
fault kind in words its bot's owner can act on.

The kinds: ``timeout``, ``connection_refused``, ``connection_closed``,
``connection_error``, ``refused_address`` (the network policy), ``http_status``,
``redirect``, ``too_large``, ``not_json``, ``bad_answer`` (transports and referee),
``illegal_action`` (the referee), ``error: <Exception>`` (an in-process or hosted bot that
raised), ``crashed`` (a hosted bot's process that ended or could not start), ``paused``
(a bot the arena did not ask: paused as the match of a tournament started) and
``struck_out`` (a seat no longer asked).  A record keeps each fault's kind and its
``cause`` (``BotFault.cause``); ``fault_summary`` sums them per seat and
``fault_reason``/``describe_fault``/``seat_fault_reason`` say them in words (pages,
the API, the command line).
"""

from __future__ import annotations

import json
import re
from typing import Any

EXCERPT_CAP = 200  # characters of a refused answer kept with its fault
# the kinds in which no byte of an answer arrived: the bot's network, or the arena's own
NETWORK_FAULTS = frozenset(
    {"timeout", "connection_refused", "connection_closed", "connection_error", "disconnected"}
)


def excerpt(data: Any) -> str:
    """What a bot said, as text of at most EXCERPT_CAP characters: bytes decoded with
    replacement, anything else written as JSON (so ``5`` and ``"5"`` differ)."""
    if isinstance(data, bytes | bytearray):
        text = bytes(data[: EXCERPT_CAP * 4]).decode("utf-8", "replace")
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, default=repr)[: EXCERPT_CAP + 1]
        except (TypeError, ValueError, RecursionError):
            text = repr(data)[: EXCERPT_CAP + 1]
    return text if len(text) <= EXCERPT_CAP else text[: EXCERPT_CAP - 1] + "\u2026"


class ArenaError(Exception):
    """A transport's failure of the arena's own, not the bot's (a hosted bot's sandbox
    that could not be made, no core free for it): the match is not recorded, and is
    played again, so that no bot is charged for it."""


class BotFault(Exception):
    """A bot that did not give a usable answer; ``kind`` names the fault, the other
    fields say what caused it: ``detail`` in words, the HTTP ``status`` of the answer,
    the bytes ``received`` of it, an ``excerpt`` of what was refused and the ``error``
    (the exception class) that ended the exchange, as far as each is known."""

    def __init__(
        self,
        kind: str,
        detail: str = "",
        *,
        status: int | None = None,
        received: int | None = None,
        excerpt: str | None = None,
        error: str | None = None,
    ):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        self.status = status
        self.received = received
        self.excerpt = excerpt
        self.error = error

    def cause(self) -> dict[str, Any]:
        """The record of the cause: the fields that are known (``detail`` always)."""
        cause: dict[str, Any] = {"detail": self.detail or self.kind}
        for key in ("status", "received", "excerpt", "error"):
            value = getattr(self, key)
            if value is not None:
                cause[key] = value
        return cause


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


def silenced(record: dict[str, Any]) -> bool:
    """Whether the match ended in a silence that looks like the arena's own: from some
    decision to the end, every request failed on the network (no byte of an answer), for
    two seats or more, and no seat answered after.  One bot going away leaves the others
    answering; every bot of a match going away at once is, far more often, the worker
    cut off from them (its link, its host's network), for which no bot may be charged."""
    silent: set[int] = set()
    for step in record["steps"]:
        for decision in step:
            kind = decision.get("fault")
            if kind in NETWORK_FAULTS:
                silent.add(decision["seat"])
            elif kind != "struck_out":  # an answer (good or not): someone was heard
                silent.clear()
    return len(silent) >= 2


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
    if kind == "disconnected":
        return f"disconnected: {detail}" if detail else "disconnected from the arena"
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
    if kind == "paused":  # a paused bot's seat in a tournament (arena.worker.lifecycle)
        return "not asked: the bot was paused, its seat played the default actions"
    if kind == "crashed":  # a hosted bot's process (arena.hosted.client)
        return f"the bot's process crashed: {detail}" if detail else "the bot's process crashed"
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
