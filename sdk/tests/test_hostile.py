"""What anybody on the network can do to a bot's public endpoint: heads that never end or
never stop growing, idle connections by the hundred, unsigned requests.  Each costs the
bot little and none stops the arena's signed requests from being answered."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from arenabot import Bot, BotServer, as_bot, make_server
from arenabot.server import DEFAULT_THREADS
from conftest import SECRET, Client, EchoBot, act_body

Serve = Callable[..., BotServer]
Connect = Callable[..., Client]


@pytest.fixture
def sockets() -> Iterator[Callable[[BotServer], socket.socket]]:
    """``connect(server)``: a raw connection to a served bot, closed after the test."""
    opened: list[socket.socket] = []

    def connect(server: BotServer) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        opened.append(sock)
        return sock

    yield connect
    for sock in opened:
        sock.close()


def answered(sock: socket.socket, wait: float = 0.0) -> bool:
    """Whether the server has written something (or closed) on ``sock``."""
    return bool(select.select([sock], [], [], wait)[0])


def read_until_closed(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def status_of(data: bytes) -> int:
    return int(data.split(b" ", 2)[1])


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (EOF or reset), without waiting."""
    if not answered(sock):
        return False
    try:
        sock.recv(65536)
        return not answered(sock) or sock.recv(65536) == b""
    except OSError:
        return True


# -- the request head: capped as a whole, and given a deadline ------------------------------


@pytest.mark.parametrize(
    "lines",
    [[b"X-Long: " + b"x" * 70_000], [b"X-%d: %s" % (i, b"x" * 990) for i in range(70)]],
    ids=["one-line-of-70-KB", "70-lines-of-1-KB"],
)
def test_a_head_over_64_kib_is_431_and_the_connection_closes(
    serve: Serve, sockets: Callable[[BotServer], socket.socket], lines: list[bytes]
) -> None:
    sock = sockets(serve(EchoBot()))
    sock.sendall(b"POST /act HTTP/1.1\r\n" + b"\r\n".join(lines) + b"\r\n\r\n")
    data = read_until_closed(sock)  # the connection closes after the answer
    assert status_of(data) == 431
    assert b"Connection: close" in data


def test_a_head_sent_line_by_line_is_refused_once_past_64_kib(
    serve: Serve, sockets: Callable[[BotServer], socket.socket]
) -> None:
    """The server does not wait for the end of a head that is already too large: 100
    lines of 1 KB, sent one at a time, are refused at the 66th."""
    sock = sockets(serve(EchoBot()))
    sock.sendall(b"POST /act HTTP/1.1\r\n")
    sent = 0
    while sent < 100 and not answered(sock, 0.05):
        sock.sendall(b"X-%d: %s\r\n" % (sent, b"x" * 990))
        sent += 1
    assert sent < 100  # refused before the end of the head
    assert status_of(read_until_closed(sock)) == 431


def test_a_head_that_never_ends_is_cut_off_at_its_deadline(
    serve: Serve, sockets: Callable[[BotServer], socket.socket]
) -> None:
    """A client trickling header lines, one every 0.1 s: 408 and closed once the request
    has taken ``request_timeout`` (1 s here), however steadily the bytes come."""
    sock = sockets(serve(EchoBot(), request_timeout=1.0))
    sock.sendall(b"POST /act HTTP/1.1\r\n")
    give_up = time.monotonic() + 20
    while not answered(sock, 0.1) and time.monotonic() < give_up:
        sock.sendall(b"X-Slow: 1\r\n")
    data = read_until_closed(sock)
    assert status_of(data) == 408
    assert b"did not arrive within 1 s" in data


def test_a_connection_that_never_sends_is_closed_at_the_deadline(
    serve: Serve, sockets: Callable[[BotServer], socket.socket]
) -> None:
    sock = sockets(serve(EchoBot(), request_timeout=0.5))
    assert read_until_closed(sock) == b""  # closed without a word (the socket waits 10 s)


def test_an_idle_kept_alive_connection_may_wait_longer_than_a_request(
    serve: Serve, client: Connect
) -> None:
    """The deadline is for a request that has begun: between requests a kept-alive
    connection has ``idle_timeout``."""
    c = client(serve(EchoBot(), request_timeout=0.3))
    assert c.post("/act", act_body())[0] == 200
    time.sleep(0.8)
    sock = c.conn.sock
    assert c.post("/act", act_body(decision_id="1:0"))[0] == 200
    assert c.conn.sock is sock


def test_expect_100_continue_is_answered_before_the_body(
    serve: Serve, sockets: Callable[[BotServer], socket.socket]
) -> None:
    sock = sockets(serve(EchoBot(), secret=None))
    body = json.dumps(act_body()).encode()
    sock.sendall(
        b"POST /act HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
    sock.sendall(body)
    assert status_of(sock.recv(65536)) == 200


# -- bounds on connections and buffers ----------------------------------------------------


def hostile(server: BotServer, n: int, connect: Callable[[BotServer], socket.socket]) -> list:
    """``n`` connections that never finish a request: a third idle, a third with half a
    head, a third with a head and half a body."""
    socks = []
    for i in range(n):
        sock = connect(server)
        if i % 3 == 1:
            sock.sendall(b"POST /act HTTP/1.1\r\nX-Arena-Timestamp: 1")
        elif i % 3 == 2:
            sock.sendall(b"POST /act HTTP/1.1\r\nContent-Length: 5000\r\n\r\n{")
        socks.append(sock)
    return socks


def test_the_connection_bound_keeps_room_for_a_signed_request(
    serve: Serve, client: Connect, sockets: Callable[[BotServer], socket.socket]
) -> None:
    """300 hostile connections against a bound of 50: the oldest are closed to make
    room; a kept-alive connection that carried a signed request is not, and a new
    connection's signed request is answered."""
    server = serve(EchoBot(), max_connections=50)
    arena = client(server)
    assert arena.post("/act", act_body())[0] == 200
    kept = arena.conn.sock
    socks = hostile(server, 300, sockets)
    time.sleep(0.5)  # the server accepts them all
    closed = sum(closed_by_server(sock) for sock in socks)
    assert closed >= 300 - 50
    status, answer, _ = client(server).post("/act", act_body(decision_id="1:0"))
    assert (status, answer) == (200, {"action": {"type": "draw"}})
    assert arena.post("/act", act_body(decision_id="2:0"))[0] == 200
    assert arena.conn.sock is kept


def test_bytes_held_for_unfinished_requests_are_bounded(
    serve: Serve, client: Connect, sockets: Callable[[BotServer], socket.socket]
) -> None:
    """Bodies that never end, 9 KB each on 20 connections, against a bound of 40 KB of
    such bytes: the oldest connections are closed; a signed request still gets in."""
    server = serve(EchoBot(), max_body=10_000, max_buffered=40_000)
    socks = []
    for _ in range(20):
        sock = sockets(server)
        sock.sendall(b"POST /act HTTP/1.1\r\nContent-Length: 10000\r\n\r\n" + b"x" * 9000)
        socks.append(sock)
    time.sleep(0.5)
    closed = [closed_by_server(sock) for sock in socks]
    assert sum(closed) >= 20 - 40_000 // 9000
    assert not closed[-1]  # the newest stays
    assert client(server).post("/act", act_body())[0] == 200


def test_the_listen_backlog_holds_at_least_128_connections() -> None:
    """Connections that arrive faster than the server accepts them wait in the system's
    queue (the listen backlog) instead of being dropped: 200 connects to a server that
    accepts none yet, at least 128 established."""
    with make_server(EchoBot(), "127.0.0.1", 0, secret=SECRET) as server:  # not serving
        socks = [socket.socket() for _ in range(200)]
        try:
            for sock in socks:
                sock.setblocking(False)
                sock.connect_ex(("127.0.0.1", server.port))
            pending, established = set(socks), 0
            give_up = time.monotonic() + 0.5  # a dropped SYN is sent again after 1 s
            while pending and time.monotonic() < give_up:
                _, ready, _ = select.select([], list(pending), [], 0.1)
                for sock in ready:
                    pending.discard(sock)
                    established += sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
            assert established >= 128
        finally:
            for sock in socks:
                sock.close()


# -- unsigned requests cost little --------------------------------------------------------


class Holding(Bot):
    """Holds its one thread in ``act`` until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        self.calls += 1
        self.entered.set()
        self.release.wait(10)
        return legal_actions[0]


def test_unsigned_requests_are_refused_without_the_bot_while_it_is_busy(
    serve: Serve, client: Connect
) -> None:
    bot = Holding()
    server = serve(bot)
    busy: list[int] = []
    arena = threading.Thread(target=lambda: busy.append(client(server).post("/act", act_body())[0]))
    arena.start()
    try:
        assert bot.entered.wait(10)  # the bot's one thread is taken
        for i in range(50):
            c = client(server)
            kwargs: dict[str, Any] = (
                {"sign": False}
                if i % 2
                else {"headers": {"X-Arena-Signature": "sha256=" + "0" * 64}}
            )
            status, body, _ = c.post("/act", act_body(decision_id=f"{i}:1"), **kwargs)
            assert status == 401, body
        assert bot.calls == 1
    finally:
        bot.release.set()
        arena.join(10)
    assert busy == [200]


# -- capacity -----------------------------------------------------------------------------


def act_first(view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
    return legal_actions[0]


class ThreadSafeEcho(EchoBot):
    thread_safe = True


@pytest.mark.parametrize(
    ("make", "options", "capacity"),
    [
        (EchoBot, {}, 1),
        (ThreadSafeEcho, {}, DEFAULT_THREADS),
        (ThreadSafeEcho, {"threads": 3}, 3),
        (lambda: act_first, {}, 1),
        (lambda: as_bot(act_first, thread_safe=True), {}, DEFAULT_THREADS),
        (lambda: as_bot(act_first, thread_safe=True), {"threads": 2}, 2),
    ],
    ids=["class", "thread-safe-class", "threads-3", "function", "thread-safe-function", "2"],
)
def test_get_root_declares_the_capacity(
    serve: Serve, client: Connect, make: Callable[[], Any], options: dict[str, Any], capacity: int
) -> None:
    status, info, _ = client(serve(make(), **options)).get("/")
    assert status == 200
    assert info["capacity"] == capacity


def test_a_thread_safe_function_bot_is_called_concurrently(serve: Serve, client: Connect) -> None:
    barrier = threading.Barrier(2, timeout=10)

    def meet(view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        barrier.wait()  # passes only when two calls are inside at once
        return legal_actions[0]

    server = serve(as_bot(meet, thread_safe=True))
    statuses: list[int] = []

    def ask(c: Client) -> None:
        statuses.append(c.post("/act", act_body())[0])

    threads = [threading.Thread(target=ask, args=(client(server),)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert statuses == [200, 200]


def test_more_threads_for_a_bot_that_is_not_thread_safe_is_refused() -> None:
    with pytest.raises(ValueError, match="not thread-safe"):
        make_server(EchoBot(), "127.0.0.1", 0, secret=SECRET, threads=2)
    with pytest.raises(TypeError, match="True or False"):
        as_bot(act_first, thread_safe="yes")


class CountingEcho(ThreadSafeEcho):
    """Counts the calls in progress at once; each takes a little while, so that calls
    allowed to overlap do."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.05)
            return super().act(view, legal_actions)
        finally:
            with self.lock:
                self.running -= 1


def test_verified_connections_past_the_thread_bound_wait_for_a_thread(
    serve: Serve, client: Connect
) -> None:
    """Six connections with a signed request each, at once, against a bound of two
    threads for verified connections (and a bot that may run more calls at once): all
    are answered, never more than two at a time.  (Counting live threads would also
    count one that has given its place up and is about to end.)"""
    bot = CountingEcho()
    server = serve(bot, max_verified=2)
    clients = [client(server) for _ in range(6)]
    barrier = threading.Barrier(len(clients), timeout=10)
    statuses: list[int] = []

    def ask(c: Client) -> None:
        barrier.wait()
        statuses.append(c.post("/act", act_body())[0])

    asking = [threading.Thread(target=ask, args=(c,)) for c in clients]
    for t in asking:
        t.start()
    for t in asking:
        t.join(10)
    assert statuses == [200] * 6
    assert bot.most == 2
