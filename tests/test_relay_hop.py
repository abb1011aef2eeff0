"""The hop from a worker (or another web process) to a bot's home, as an attacker who
can reach the relay listener sees it (``arena.relay.internal``): every request is signed
with the relay key, which the workers and web processes derive from the arena's secrets
key and bots never see, and refused before any work without it; the listener reads a
request within a few seconds, never more than ``MAX_BODY``, and serves a bounded number
of connections at once; the worker's kept-alive connections survive its closing them."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from arena.match.exchanges import settle
from arena.match.faults import BotFault
from arena.match.pools import Connection, Pools
from arena.relay import internal
from arena.relay.client import RelayClient
from arena.relay.internal import DEADLINE, SIGNATURE, TIMESTAMP, Relay, signature
from tests.test_relay_client import BOT, PAYLOAD, SECRET, Bot

ACT = f"/relay/{BOT}/act"


class Lookups:
    """The bots' signing secrets as the listener looks them up (the database's place)."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, bot_id: int) -> str | None:
        self.calls.append(bot_id)
        return SECRET if bot_id == BOT else None


@pytest.fixture
def lookups() -> Lookups:
    return Lookups()


@pytest.fixture
def home(lookups: Lookups) -> Iterator[Relay]:
    relay = Relay(lookups)
    relay.home()
    yield relay
    relay.close()


@pytest.fixture
def bot(home: Relay) -> Iterator[Bot]:
    connected = Bot(home.hub, "s1")
    yield connected
    connected.stop.set()
    connected.thread.join(2)


@pytest.fixture
def pools() -> Iterator[Pools]:
    made = Pools()
    yield made
    made.close()


def address(relay: Relay) -> tuple[str, int]:
    host, port = relay.home().removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def act_body(request_id: str = "a" * 32) -> bytes:
    return orjson.dumps({**PAYLOAD, "request_id": request_id})


def bot_signed(body: bytes, deadline_ms: str = "2000") -> dict[str, str]:
    """The headers a worker sent before the relay key: the bot's signature, a deadline."""
    ts = str(int(time.time()))
    return {
        TIMESTAMP: ts,
        SIGNATURE: signature(SECRET, ts, body),
        DEADLINE: deadline_ms,
        "Content-Type": "application/json",
    }


def relay_signed(path: str, body: bytes, headers: dict[str, str], **how: Any) -> dict[str, str]:
    """``headers`` with the relay's signature of the hop (``how``: key, at, nonce)."""
    value = internal.sign_hop("POST", path, body, headers, **how)
    return {**headers, internal.RELAY_SIGNATURE: value}


def post(
    relay: Relay, path: str, body: bytes, headers: dict[str, str], timeout: float = 10.0
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(*address(relay), timeout=timeout)
    try:
        conn.request("POST", path, body, headers)
        answer = conn.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        conn.close()


def ask(client: RelayClient, payload: dict[str, Any] = PAYLOAD) -> Any:
    exchange = client.begin_act(payload)
    settle([exchange])
    try:
        return exchange.result()
    except BotFault as fault:
        return fault


def relay_client(relay: Relay, pools: Pools, capacity: int = 1) -> RelayClient:
    return RelayClient(BOT, SECRET, "laptop", locate=relay.home, pools=pools, capacity=capacity)


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """How long the listener took to close ``sock`` (what it said first is read and
    dropped), or None if it was still open after ``seconds``."""
    began = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except OSError:
        pass  # reset: closed too
    return time.monotonic() - began


def threads_within(bound: int, seconds: float) -> int:
    """The listener's threads once they are ``bound`` or fewer, or after ``seconds``."""
    until = time.monotonic() + seconds
    while (count := listener_threads()) > bound and time.monotonic() < until:
        time.sleep(0.02)
    return count


def listener_threads() -> int:
    """The listener's threads: one per connection it serves."""
    return sum(1 for t in threading.enumerate() if "process_request_thread" in t.name)


# -- (a) a request the bot's secret signed is not a worker's ----------------------------------
@pytest.mark.parametrize("what", ["act", "moved", "poll"])
def test_a_bot_signed_request_without_the_relay_signature_is_refused_before_any_work(
    home, bot, lookups, what
):
    """Whoever knows a bot's secret (the bot itself) or captured a signed body cannot
    hand the bot a request, end its session or take its requests: 401, and neither the
    bot's secret is looked up nor its mailbox touched."""
    body = {
        "act": act_body(),
        "moved": orjson.dumps({"token": "s1"}),
        "poll": orjson.dumps({"token": "s1", "answers": [], "draining": False, "wait": 0}),
    }[what]
    status, headers, _ = post(home, f"/relay/{BOT}/{what}", body, bot_signed(body))
    assert (status, headers.get("X-Arena-Relay")) == (401, "refused")
    time.sleep(0.3)
    assert bot.received == []
    assert home.hub.holds(BOT) == "s1"
    assert lookups.calls == []


# -- (b) a relay signature that is not the relay key's, or not for this request --------------
def test_a_made_up_relay_signature_is_refused(home, bot, lookups):
    body = act_body()
    made_up = {**bot_signed(body), "X-Arena-Relay-Signature": f"t={int(time.time())};v1=00"}
    status, headers, _ = post(home, ACT, body, made_up)
    assert (status, headers.get("X-Arena-Relay")) == (401, "refused")
    assert bot.received == [] and lookups.calls == []


@pytest.mark.parametrize(
    "tamper",
    [
        "the bot's secret as the key",
        "a wrong signature",
        "stale",
        "from the future",
        "another body",
        "another deadline",
        "another bot",
        "another path",
        "replayed",
    ],
)
def test_a_tampered_stale_or_replayed_relay_signature_is_refused(home, bot, lookups, tamper):
    body, path = act_body(), ACT
    headers = relay_signed(path, body, bot_signed(body))
    value = headers[internal.RELAY_SIGNATURE]
    if tamper == "the bot's secret as the key":
        headers = relay_signed(path, body, bot_signed(body), key=SECRET.encode())
    elif tamper == "a wrong signature":
        last = value[-1]
        headers[internal.RELAY_SIGNATURE] = value[:-1] + ("0" if last != "0" else "1")
    elif tamper == "stale":
        headers = relay_signed(path, body, bot_signed(body), at=time.time() - 120)
    elif tamper == "from the future":
        headers = relay_signed(path, body, bot_signed(body), at=time.time() + 120)
    elif tamper == "another body":
        body = act_body("b" * 32)
    elif tamper == "another deadline":
        headers[DEADLINE] = "60000"
    elif tamper == "another bot":
        path = "/relay/8/act"
    elif tamper == "another path":
        path = f"/relay/{BOT}/end"
    elif tamper == "replayed":
        assert post(home, path, body, headers)[0] == 200  # the worker's own, answered
        lookups.calls.clear()
        bot.received.clear()
    status, answer, said = post(home, path, body, headers)
    assert (status, answer.get("X-Arena-Relay")) == (401, "refused"), said
    time.sleep(0.2)
    assert bot.received == [] and lookups.calls == []


def test_a_relay_signed_request_is_delivered_with_the_bots_own_signature(home, bot):
    body = act_body()
    status, headers, said = post(home, ACT, body, relay_signed(ACT, body, bot_signed(body)))
    assert (status, headers.get("X-Arena-Relay")) == (200, "answer"), said
    [received] = bot.received
    assert received["request_id"] == "a" * 32


def test_the_relay_key_is_derived_from_the_secrets_key_and_an_old_one_still_opens(
    home, bot, monkeypatch
):
    """Rotation of ``ARENA_SECRETS_KEY`` (new key first, old one second): a process still
    signing with the old key is heard by one that lists both."""
    new, old = "A" * 43 + "=", "B" * 43 + "="
    keyring = SimpleNamespace(keys=[new, old])
    monkeypatch.setattr(internal.sealing, "keyring", lambda: keyring)
    monkeypatch.setattr(internal, "_keyless", [object()])  # no failure remembered
    derived = internal.hop_keys()
    assert derived == [internal.derive_hop_key(new), internal.derive_hop_key(old)]
    assert len(set(derived)) == 2 and all(len(k) == 32 for k in derived)
    assert derived[0] not in (new.encode(), old.encode())  # not the sealing key itself
    body = act_body()
    headers = relay_signed(ACT, body, bot_signed(body), key=derived[1])
    assert post(home, ACT, body, headers)[0] == 200
    other = relay_signed(ACT, body, bot_signed(body), key=internal.derive_hop_key("C" * 43 + "="))
    assert post(home, ACT, body, other)[0] == 401


def test_the_old_home_is_told_with_the_relay_signature_and_lets_the_session_go(
    home, bot, monkeypatch
):
    from arena.api import connect

    monkeypatch.setattr(connect, "relay", lambda: home)
    connect._tell_old_home(home.home(), BOT, "s1")
    assert home.hub.holds(BOT) is None


# -- (c) connections that never send their request ---------------------------------------------
def test_connections_that_never_send_their_request_are_dropped_and_a_real_one_goes_through(
    home, bot, pools
):
    """200 connections announce a body and never send it (half of them never finish
    their head): each is dropped within the listener's read time, the threads they held
    go, and a worker's request is answered meanwhile."""
    before = listener_threads()
    where = address(home)
    held: list[socket.socket] = []
    began = time.monotonic()
    try:
        for i in range(200):
            sock = socket.create_connection(where)
            held.append(sock)
            head = f"POST {ACT} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
            sock.sendall(head.encode() + (b"\r\n" if i % 2 else b""))
        time.sleep(0.2)
        assert ask(relay_client(home, pools)) == {"action": {"type": "pass"}}
        by = began + internal.READ_SECONDS + 2.0
        waits = [closed_within(sock, max(by - time.monotonic(), 0.01)) for sock in held]
        assert None not in waits, f"{waits.count(None)} of 200 connections still held"
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 2.0
    while listener_threads() > before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listener_threads() <= before + 2  # the worker's kept-alive connection, at most


def test_a_signed_request_whose_body_never_comes_is_dropped(home, bot, lookups):
    body = act_body()
    headers = relay_signed(ACT, body, bot_signed(body))
    head = f"POST {ACT} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection(address(home)) as sock:
        sock.sendall(head.encode() + body[:10])
        waited = closed_within(sock, internal.READ_SECONDS + 2.0)
    assert waited is not None and waited <= internal.READ_SECONDS + 1.0
    assert bot.received == [] and lookups.calls == []


def test_the_connections_at_once_are_bounded_and_a_workers_request_makes_room(lookups, pools):
    """Past ``max_connections``, a new connection closes the oldest one that has not
    shown the relay's signature: an attacker's connections do not add threads, and do
    not keep a worker's new connection out."""
    relay = Relay(lookups, max_connections=20)
    connected = Bot(relay.hub, "s1")
    where = address(relay)
    before = listener_threads()
    held: list[socket.socket] = []
    try:
        for _ in range(40):
            sock = socket.create_connection(where)
            sock.sendall(f"POST {ACT} HTTP/1.1\r\n".encode())
            held.append(sock)
        time.sleep(0.3)
        assert listener_threads() <= before + 20
        assert all(closed_within(sock, 0.5) is not None for sock in held[:20])  # the oldest
        assert ask(relay_client(relay, pools)) == {"action": {"type": "pass"}}
        # the connection the worker's made room for ends its thread as it is closed: on a
        # loaded machine a moment after the answer, never more than one at a time
        assert threads_within(before + 20, 1.0) <= before + 20
    finally:
        for sock in held:
            sock.close()
        connected.stop.set()
        relay.close()


def test_when_every_connection_is_a_workers_a_new_one_is_closed_at_once(lookups, pools):
    relay = Relay(lookups, max_connections=2)
    thinker = Bot(relay.hub, "s1", think=1.0)  # each in turn: answered after 1 s and 2 s
    client = relay_client(relay, pools, capacity=2)
    asked = [client.begin_act({**PAYLOAD, "deadline_ms": 3000}) for _ in range(2)]
    waiting = threading.Thread(target=settle, args=(asked,), daemon=True)
    waiting.start()
    try:
        time.sleep(0.5)  # both requests with the bot: two workers' connections
        with socket.create_connection(address(relay)) as sock:
            assert closed_within(sock, 0.5) is not None
        waiting.join(5)
        assert [a.result() for a in asked] == [{"action": {"type": "pass"}}] * 2
    finally:
        thinker.stop.set()
        relay.close()


# -- (d) a body larger than the listener takes --------------------------------------------------
@pytest.mark.parametrize(
    "length, status",
    [(str(internal.MAX_BODY + 1), 413), (str(10**12), 413), (None, 411), ("12x", 411)],
)
def test_a_body_too_large_or_of_no_stated_length_is_refused_unread(home, lookups, length, status):
    head = f"POST {ACT} HTTP/1.1\r\nHost: x\r\n"
    if length is not None:
        head += f"Content-Length: {length}\r\n"
    with socket.create_connection(address(home)) as sock:
        sock.sendall(head.encode() + b"\r\n")  # and never a byte of the body
        sock.settimeout(2.0)
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        assert (answer.status, answer.getheader("X-Arena-Relay")) == (status, "refused")
        answer.read()
        assert closed_within(sock, 2.0) is not None  # and the connection is closed
    assert lookups.calls == []


@pytest.mark.parametrize(
    "head",
    [
        "POST\r\n",  # no path, no version
        f"POST {ACT} SPDY/3\r\n",
        f"POST {ACT} HTTP/1.1\r\nHost x\r\n",  # a header line without its colon
        f"POST {ACT} HTTP/1.1\r\n: nameless\r\n",
    ],
)
def test_a_malformed_head_is_refused_400_and_closed(home, lookups, head):
    with socket.create_connection(address(home)) as sock:
        sock.sendall(head.encode() + b"\r\n")
        sock.settimeout(2.0)
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        assert answer.status == 400
        answer.read()
        assert closed_within(sock, 2.0) is not None
    assert lookups.calls == []


def test_header_names_are_read_whatever_their_case(home, bot):
    """HTTP header names are case-insensitive (RFC 9110): a worker's request whose
    headers are all in lower case (as some clients and proxies write them) is served."""
    body = act_body()
    signed = relay_signed(ACT, body, bot_signed(body))
    status, headers, said = post(home, ACT, body, {k.lower(): v for k, v in signed.items()})
    assert (status, headers.get("X-Arena-Relay")) == (200, "answer"), said
    assert [r["request_id"] for r in bot.received] == ["a" * 32]


# -- the worker's side: kept-alive connections, waits longer than the read time -------------
def test_a_kept_alive_connection_the_listener_closed_costs_the_worker_nothing(
    home, bot, pools, monkeypatch
):
    """The listener closes a worker's idle connection after ``IDLE_SECONDS``; the worker
    notices before it sends, or, when the close crosses its request, sends it again on
    a new connection: never a fault, never the home taken for lost."""
    monkeypatch.setattr(internal, "IDLE_SECONDS", 0.3)
    client = relay_client(home, pools)
    assert ask(client) == {"action": {"type": "pass"}}
    time.sleep(0.6)
    assert ask(client) == {"action": {"type": "pass"}}
    monkeypatch.setattr(Connection, "stale", lambda self: False)  # the close not seen yet
    time.sleep(0.6)
    assert ask(client) == {"action": {"type": "pass"}}
    assert client.last_home == home.home()
    assert len(bot.received) == 3


def test_the_listeners_idle_time_outlasts_the_workers_pool():
    from arena.match import pools

    assert internal.IDLE_SECONDS > pools.IDLE_CLOSE


def test_waiting_for_the_bot_is_not_cut_by_the_read_time(home, pools, monkeypatch):
    monkeypatch.setattr(internal, "READ_SECONDS", 0.3)
    thinker = Bot(home.hub, "s1", think=0.8)
    try:
        answer = ask(relay_client(home, pools), {**PAYLOAD, "deadline_ms": 3000})
    finally:
        thinker.stop.set()
    assert answer == {"action": {"type": "pass"}}


def test_an_unsigned_connection_is_not_kept_alive(home):
    body = act_body()
    with contextlib.closing(http.client.HTTPConnection(*address(home), timeout=5)) as conn:
        conn.request("POST", ACT, body, bot_signed(body))
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 401 and answer.will_close
