"""Why a bot was struck: ``arena.match.faults.fault_reason`` and ``describe_fault`` in words, for
every fault kind the referee and the HTTP client produce, from the causes the referee
really records against misbehaving bots on loopback (``tests.support.badbots`` and a few raw
sockets of this module's own)."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from arenabot import make_server

from arena.games import make_policy
from arena.match import http_client
from arena.match.answers import MAX_ANSWER_BYTES, MAX_HEAD_BYTES
from arena.match.exchanges import Client
from arena.match.faults import describe_fault, fault_reason, fault_summary, seat_fault_reason
from arena.match.http_client import HttpClient
from arena.match.netpolicy import AddressPolicy
from arena.match.referee import PolicyClient, Referee, policy_rng
from sample_bots.policy_bot import PolicyBot
from tests.support.badbots import _Handler, absent_bot_url, closing_bot, http_bot, serving

DEADLINE_MS = 300
HUGE = len(b'{"action": "' + b"x" * (5 * 1024 * 1024) + b'"}')  # what badbots' "huge" sends
ARENA = Path(__file__).resolve().parent.parent / "arena"


def house(seat: int) -> PolicyClient:
    return PolicyClient(make_policy("cactus", "random", policy_rng(1, seat)), f"house{seat}")


def first_fault(client: Client) -> dict[str, Any]:
    """The first fault of ``client`` in a match against a house bot, as stored (the
    ``first`` of ``fault_summary``): one strike and it is out, so the match is quick."""
    referee = Referee(max_strikes=1, deadline_ms=DEADLINE_MS)
    record = referee.run("cactus", [client, house(1)], seed=4).to_json()
    return fault_summary(record)[0]["first"]


@contextmanager
def raw_bot(answer: bytes) -> Iterator[str]:
    """Answers every request with exactly ``answer`` and closes the connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(answer)
                except OSError:
                    pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


class _NoAction(_Handler):
    """JSON, but not an object with an action."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self._send(200, json.dumps({"move": 1}).encode() if self.path == "/act" else b"{}")


class _Raises:
    """An in-process bot with a bug."""

    name = "buggy"

    def start(self, info: dict[str, Any]) -> None:
        pass

    def act(self, payload: dict[str, Any]) -> Any:
        raise ValueError("no card to play")

    def end(self, info: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


def over_http(
    stack: ExitStack, url: str, secret: str | None = "s3cret", **options: Any
) -> HttpClient:
    client = HttpClient(url, secret=secret, name="bad", **options)
    stack.callback(client.close)
    return client


def _behaving(behaviour: str) -> Callable[[ExitStack], Client]:
    return lambda stack: over_http(stack, stack.enter_context(http_bot(behaviour)))


def _raw(answer: bytes) -> Callable[[ExitStack], Client]:
    return lambda stack: over_http(stack, stack.enter_context(raw_bot(answer)))


def _wrong_secret(stack: ExitStack) -> Client:
    server = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret="the bot's own")
    server.serve_in_background()
    stack.callback(server.close)
    return over_http(stack, server.url, secret="what the arena signs with")


def _no_action(stack: ExitStack) -> Client:
    return over_http(stack, stack.enter_context(serving(_NoAction)))


def _refused(stack: ExitStack) -> Client:
    policy = AddressPolicy.for_profile("production")  # no loopback
    url = stack.enter_context(http_bot("ok"))
    return over_http(stack, url, check_address=policy.check)


OVERSIZED = b"HTTP/1.1 200 OK\r\n\r\n" + b" " * (MAX_ANSWER_BYTES + 10)
LONG_HEAD = b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * (3 * MAX_HEAD_BYTES) + b"\r\n\r\n"

CASES: list[tuple[str, Callable[[ExitStack], Client], str, str]] = [
    # (case, the bot, its kind, the line describe_fault writes: a regular expression)
    ("sleepy", _behaving("sleepy"), "timeout", r"timeout after (\d+) ms"),
    (
        "trickle",
        _behaving("trickle"),
        "timeout",
        r"timeout after (\d+) ms \([1-9]\d* bytes? of the answer received\)",
    ),
    (
        "error500",
        _behaving("error500"),
        "http_status",
        re.escape('HTTP 500: the bot\'s server failed \u2014 answer: {"error": "boom"}'),
    ),
    (
        "wrong secret",
        _wrong_secret,
        "http_status",
        r"HTTP 401: the bot refused the arena's signature \u2014 answer: .*wrong signature.*",
    ),
    ("redirect", _behaving("redirect"), "redirect", r"HTTP 302: a redirect, never followed"),
    (
        "not_json",
        _behaving("not_json"),
        "not_json",
        r"the answer is not JSON \(.+\) \u2014 answer: <html>hello</html>",
    ),
    (
        "illegal",
        _behaving("illegal"),
        "illegal_action",
        re.escape('illegal action {"type": "fly"} (not in the legal list)'),
    ),
    ("huge", _behaving("huge"), "too_large", re.escape(f"body too large ({HUGE} bytes)")),
    (
        "oversized without a length",
        _raw(OVERSIZED),
        "too_large",
        re.escape(f"body too large (more than {MAX_ANSWER_BYTES} bytes)"),
    ),
    (
        "long head",
        _raw(LONG_HEAD),
        "too_large",
        re.escape(f"answer headers too large (more than {MAX_HEAD_BYTES} bytes)"),
    ),
    (
        "no action",
        _no_action,
        "bad_answer",
        re.escape("the answer is not an object with an 'action' \u2014 answer: {\"move\": 1}"),
    ),
    (
        "not HTTP",
        _raw(b"HELLO THERE\r\n\r\n"),
        "bad_answer",
        re.escape(
            "a malformed HTTP answer: not an HTTP/1.x status line: b'HELLO THERE' "
            "\u2014 15 bytes received"
        ),
    ),
    (
        "cut short",
        _raw(b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"act'),
        "connection_closed",
        r"the bot closed the connection mid-answer \(\d+ bytes received\)",
    ),
    (
        "closer",
        lambda stack: over_http(stack, stack.enter_context(closing_bot())),
        "connection_closed",
        r"the bot closed the connection without answering",
    ),
    (
        "absent",
        lambda stack: over_http(stack, absent_bot_url()),
        "connection_refused",
        r"connection refused: nothing listens at the endpoint",
    ),
    (
        "refused address",
        _refused,
        "refused_address",
        r"the endpoint's address is not allowed: .+",
    ),
    (
        "house bot bug",
        lambda stack: _Raises(),
        "error: ValueError",
        r"the bot raised ValueError: no card to play",
    ),
]


@pytest.mark.parametrize(("bot", "kind", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_fault_says_why_in_words(
    bot: Callable[[ExitStack], Client], kind: str, line: str
) -> None:
    with ExitStack() as stack:
        fault = first_fault(bot(stack))
    assert fault["kind"] == kind, fault
    text = describe_fault(fault)
    assert re.fullmatch(line, text), text
    assert describe_fault(fault).startswith(fault_reason(fault))
    if kind == "timeout":  # the time the referee waited: the deadline and its grace
        waited = int(re.match(r"timeout after (\d+) ms", text)[1])
        assert DEADLINE_MS <= waited < DEADLINE_MS + 2000


def test_a_connection_error_says_what_failed() -> None:
    # what the client makes of an OSError that is neither a refusal nor a reset
    fault = {
        "kind": "connection_error",
        **http_client._fault(OSError(113, "No route to host")).cause(),
    }
    assert describe_fault(fault) == "connection error: OSError: [Errno 113] No route to host"
    unresolved = {"kind": "connection_error", "detail": "cannot resolve bot.invalid: no"}
    assert fault_reason(unresolved) == "connection error: cannot resolve bot.invalid: no"


def test_every_kind_the_arena_produces_has_words_of_its_own() -> None:
    """A kind only named, with no cause (an old summary, a chart of kinds), still gets
    its own words, not the fallback of an unknown kind (its name again)."""
    # the referee and the transports, in the package that plays a match
    source = "".join(path.read_text() for path in sorted((ARENA / "match").glob("*.py")))
    source += (ARENA / "relay" / "client.py").read_text()  # the connect transport's
    kinds = set(re.findall(r'BotFault\(\s*"([a-z_]+)"', source))
    kinds |= set(re.findall(r'kind, detail = "([a-z_]+)"', source))
    assert {"timeout", "http_status", "illegal_action", "too_large", "redirect"} <= kinds
    assert "disconnected" in kinds  # the connect transport's own
    for kind in kinds | {"struck_out", "error: KeyError"}:
        reason = fault_reason({"kind": kind})
        assert reason != kind and not reason.startswith(f"{kind}:"), kind


def test_older_and_unknown_causes() -> None:
    # faults stored before the wait was kept: the deadline in the words, or none
    assert fault_reason({"kind": "timeout", "detail": "no answer within 2.25s"}) == (
        "timeout after 2250 ms"
    )
    assert fault_reason({"kind": "timeout", "detail": "timed out"}) == (
        "timeout (no answer within the deadline)"
    )
    assert fault_reason({"kind": "timeout", "detail": "connect: timed out"}) == (
        "timeout while connecting to the endpoint"
    )
    assert fault_reason({"kind": "http_status", "detail": "HTTP 404"}) == (
        "HTTP 404: the endpoint has no /act"
    )
    assert fault_reason({"kind": "http_status", "status": 418}) == "HTTP 418: not a success"
    assert fault_reason({"kind": "too_large", "detail": "Content-Length 70000"}) == (
        "body too large (70000 bytes)"
    )
    assert describe_fault({"kind": "weird", "detail": "it sang"}) == "weird: it sang"
    assert describe_fault({"kind": "weird", "detail": "weird", "received": 3}) == (
        "weird \u2014 3 bytes received"
    )
    assert describe_fault({}) == "fault"


def test_a_seat_is_struck_for_its_first_fault_and_its_most_frequent_kind() -> None:
    first = {"step": 0, "kind": "timeout", "detail": "timed out", "latency_ms": 2250.4}
    only = {"count": 3, "kinds": {"timeout": 3}, "first": first}
    assert seat_fault_reason(only) == "timeout after 2250 ms"
    mixed = {"count": 5, "kinds": {"timeout": 1, "illegal_action": 4}, "first": first}
    assert seat_fault_reason(mixed) == (
        "timeout after 2250 ms; then mostly illegal action (not in the legal list) (\u00d74)"
    )
    assert seat_fault_reason({"count": 2, "kinds": {"http_status": 2}}) == "HTTP error status"
    assert seat_fault_reason(None) is None
