"""The HTTP transport: the client the referee uses to talk to a bot's endpoint.

Endpoints are untrusted: the client never follows a redirect, caps the size of an answer
(and of its head, in bytes and in lines: ``arena.match.answers``), bounds a whole
exchange (connect, send, every read) by one deadline so that a bot trickling its answer
byte by byte is cut off, never gives a bot a second deadline for the same answer, and
signs every request so a bot can tell the referee from anybody else.

Why a small HTTP/1.1 client of our own.  A decision over loopback cost the worker about
460 us of CPU with ``http.client``, against 30 us for the engine: building the request
(about a quarter), parsing the answer's headers with the standard library's e-mail parser
(a third), a watchdog thread armed per request.  Here each request is one ``send`` of
bytes whose fixed part is encoded once per endpoint, the HMAC key is prepared once per
bot, and the answer is parsed from bytes as they arrive (``ResponseParser``).  JSON goes
through orjson: encoding a view took the standard library 36-81 us, about a tenth of
that with orjson.

Every request is an ``HttpExchange``: a non-blocking state machine (wait for a slot,
connect, TLS handshake, send, read) that ``arena.match.exchanges.settle`` drives, alone
or with the other requests of a reaction window, in one thread.  Each exchange's
deadline starts when its slot is taken and its request leaves, each is read as its bytes
arrive, and each, at its deadline, reads what is already there before it is called a
timeout: one seat's silence never costs another seat a strike or skews its latency.
Connections are kept alive and pooled per endpoint (``arena.match.pools``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import select
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

import orjson

from arena import __version__
from arena.match.answers import MAX_ANSWER_BYTES, Response, ResponseParser
from arena.match.exchanges import Waker, act_seconds, settle
from arena.match.faults import BotFault, excerpt
from arena.match.pools import CONNECT_TIMEOUT, Connection, EndpointPool, _connect_fault

PROTOCOL_VERSION = "1"
SIGNATURE_HEADER = "X-Arena-Signature"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
_SIGNED = f"{TIMESTAMP_HEADER}: %s\r\n{SIGNATURE_HEADER}: sha256=%s\r\n".encode()
# /start, /end and GET / are not decisions: they get a fixed time
CONTROL_TIMEOUT = 5.0
DEADLINE_GRACE = 0.25  # seconds past deadline_ms allowed for the network
RESET_WAIT = 1.0  # seconds to wait for a reset after a kept-alive connection's end
USER_AGENT = f"card-bot-arena/{__version__}"
_READ = 65536  # bytes asked of a socket at a time


def _fault(exc: BaseException, conn: Connection | None = None) -> BotFault:
    """The fault a failed exchange counts as, with the bytes of answer it got."""
    if isinstance(exc, BotFault):
        fault = exc
    elif isinstance(exc, TimeoutError):
        fault = BotFault("timeout", str(exc) or "no answer within the deadline")
    elif isinstance(exc, ConnectionRefusedError):
        fault = BotFault("connection_refused", str(exc))
    elif isinstance(exc, ConnectionResetError | BrokenPipeError | EOFError):
        fault = BotFault("connection_closed", str(exc))
    else:
        fault = BotFault("connection_error", f"{type(exc).__name__}: {exc}")
    if fault.error is None and not isinstance(exc, BotFault):
        fault.error = type(exc).__name__
    if fault.received is None and conn is not None:
        fault.received = conn.received
    return fault


# where an exchange is: what it waits for next
_IN_LINE, _CONNECTING, _HANDSHAKING, _SENDING, _READING, _RESETTING, _OVER = range(7)
_WOULD_BLOCK = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


class HttpExchange:
    """One request to a bot and its answer, driven without blocking by
    ``arena.match.exchanges.settle`` (the ``Exchange`` protocol documented there).

    It waits for a connection slot of its endpoint's pool; once it has one, its deadline
    starts (``started``), it takes a kept-alive connection or connects (non-blocking, TLS
    included), signs and sends its request, and feeds what it reads to a
    ``ResponseParser``.  At its deadline it reads what is buffered once more, then fails
    with a timeout; connecting also has its own ``connect_timeout`` within the deadline.
    A kept-alive connection that turns out dead before the bot read the request (see
    ``_fail``) is replaced and the request sent again, within the same deadline."""

    __slots__ = (
        "_at",
        "_body",
        "_client",
        "_connect_by",
        "_error",
        "_parser",
        "_post_head",
        "_queued",
        "_request",
        "_reset_until",
        "_response",
        "_reused",
        "_sent",
        "_slot",
        "_state",
        "_want",
        "conn",
        "done",
        "finished",
        "granted",
        "seconds",
        "started",
    )

    def __init__(self, client: HttpClient, post_head: bytes | None, body: bytes, seconds: float):
        self._client = client
        self._post_head = post_head  # None: a GET
        self._body = body
        self.seconds = seconds
        self._state = _IN_LINE
        self._at = self._connect_by = self._reset_until = 0.0
        self._slot = False
        self._queued = False  # in its pool's line for a slot
        self.granted = False  # a slot handed over by the pool while in line
        self.conn: Connection | None = None
        self._reused = False
        self._request = b""
        self._sent = 0
        self._want = select.POLLIN
        self._parser: ResponseParser | None = None
        self._response: Response | None = None
        self._error: BotFault | None = None
        self.done = False
        self.started = self.finished = time.perf_counter()

    # -- the Exchange protocol -------------------------------------------------------------
    def advance(self, waker: Waker) -> None:
        if self.done:
            return
        try:
            if self._state == _IN_LINE:
                if not self.granted and (self._queued or not self._client.pool.take(self, waker)):
                    self._queued = True
                    return  # in line: woken when a slot is handed over
                self._start()
            self._drive()
            if not self.done and time.monotonic() >= self._at:
                raise TimeoutError(f"no answer within {self.seconds:.2f}s")
        except Exception as exc:
            self._fail(exc)

    def watch(self) -> tuple[int, int] | None:
        if self._state in (_IN_LINE, _OVER) or self.conn is None:
            return None
        if self._state == _RESETTING:
            return self.conn.sock.fileno(), 0  # errors and hang-ups are always reported
        return self.conn.sock.fileno(), self._want

    def due(self) -> float | None:
        if self._state == _IN_LINE or self.done:
            return None
        if self._state == _CONNECTING:
            return self._connect_by
        if self._state == _RESETTING:
            return self._reset_until
        return self._at

    def result(self) -> Any:
        """The answer as JSON, or the fault it counts as (``BotFault``)."""
        if self._error is not None:
            raise self._error
        response = self._response
        assert response is not None, "the exchange is not settled"
        status = response.status
        if not 200 <= status < 300:
            kind, detail = "http_status", f"HTTP {status}"
            if 300 <= status < 400:
                kind, detail = "redirect", f"HTTP {status}: redirects are not followed"
            raise BotFault(
                kind,
                detail,
                status=status,
                received=len(response.body),
                excerpt=excerpt(response.body),
            )
        try:
            return orjson.loads(response.body) if response.body else {}
        except orjson.JSONDecodeError as exc:  # also bad UTF-8, and nesting deeper than 1024
            raise BotFault(
                "not_json",
                f"the answer is not JSON: {exc}",
                status=status,
                received=len(response.body),
                excerpt=excerpt(response.body),
            ) from None

    @property
    def response(self) -> Response | None:
        """The answer as received (status, headers, body), or None: it failed."""
        return self._response if self._error is None else None

    def cancel(self) -> None:
        if self.done:
            return
        if self._state == _IN_LINE:
            self._client.pool.leave_line(self)
        self._fail(BotFault("connection_error", "the request was given up by the arena"))

    # -- the steps -----------------------------------------------------------------------------
    def _start(self) -> None:
        """A slot is ours: the bot's time starts now."""
        self._slot = True
        self.granted = False
        self._at = time.monotonic() + self.seconds
        self.started = time.perf_counter()
        self._request = self._client._request(self._post_head, self._body)  # signed now
        conn = self._client.pool.idle()
        if conn is None:
            self._connect()
        else:
            self.conn, self._reused = conn, True
            self._to_send()

    def _connect(self) -> None:
        pool = self._client.pool
        self.conn, connected = pool.open()
        self._reused = False
        self._connect_by = min(time.monotonic() + pool.connect_timeout, self._at)
        if connected:
            self._connected()
        else:
            self._state, self._want = _CONNECTING, select.POLLOUT

    def _connected(self) -> None:
        assert self.conn is not None
        if self._client.pool.https:
            self.conn.sock = self._client.pool.tls(self.conn.sock)
            self._state = _HANDSHAKING
        else:
            self._to_send()

    def _to_send(self) -> None:
        assert self.conn is not None
        self.conn.received = 0
        self._sent = 0
        self._state, self._want = _SENDING, select.POLLOUT

    def _drive(self) -> None:
        """Go as far as can be gone without waiting."""
        conn = self.conn
        while conn is not None and not self.done:
            sock = conn.sock
            state = self._state
            if state == _CONNECTING:
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise _connect_fault(OSError(code, os.strerror(code)))
                try:
                    sock.getpeername()
                except OSError:  # still connecting
                    if time.monotonic() >= self._connect_by:
                        raise BotFault(
                            "timeout", "connect: timed out", error="TimeoutError"
                        ) from None
                    return
                self._connected()
            elif state == _HANDSHAKING:
                try:
                    sock.do_handshake()  # type: ignore[attr-defined]
                except ssl.SSLWantReadError:
                    self._want = select.POLLIN
                    return
                except ssl.SSLWantWriteError:
                    self._want = select.POLLOUT
                    return
                self._to_send()
            elif state == _SENDING:
                try:
                    while self._sent < len(self._request):
                        self._sent += sock.send(memoryview(self._request)[self._sent :])
                except _WOULD_BLOCK as exc:
                    self._want = _wanted(exc, select.POLLOUT)
                    return
                self._parser = ResponseParser(self._client.max_answer_bytes)
                self._state, self._want = _READING, select.POLLIN
            elif state == _READING:
                try:
                    data = sock.recv(_READ)
                except _WOULD_BLOCK as exc:
                    self._want = _wanted(exc, select.POLLIN)
                    return
                assert self._parser is not None
                if data:
                    conn.received += len(data)
                    response = self._parser.feed(data)
                else:
                    response = self._parser.feed_eof()
                if response is not None:
                    self._finish(response)
            elif state == _RESETTING:
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    self._send_again()  # reset: the bot never read it
                    conn = self.conn
                    continue
                if time.monotonic() < self._reset_until:
                    return
                if time.monotonic() >= self._at:  # waited it out for a reset
                    raise TimeoutError(f"no answer within {self.seconds:.2f}s")
                raise EOFError("the bot closed the connection without answering")
            else:
                return

    def _fail(self, exc: Exception) -> None:
        """The exchange failed with ``exc``: a fault, unless the request, sent on a
        kept-alive connection and given no byte of answer, never reached the bot, so that
        sending it once more cannot give the bot the same request (or the same deadline)
        twice.

        A socket the bot closed before the request arrived, or closed with the request
        unread, answers it with a reset (TCP RST): sending fails, or reading does, or,
        when the bot's FIN came first, the reset follows the end of stream within a round
        trip.  A bot that read the request and then hung up sends its FIN and nothing
        else.  So an end of stream is waited on for a reset (the ``_RESETTING`` step, its
        socket polled for errors), RESET_WAIT at most and within the deadline."""
        conn = self.conn
        if (
            self._reused
            and conn is not None
            and self._state in (_SENDING, _READING)
            and isinstance(exc, EOFError | ConnectionResetError | BrokenPipeError)
            and not conn.received
        ):
            try:
                if isinstance(exc, EOFError):
                    # an end of stream: a reset may follow
                    self._state = _RESETTING
                    self._reset_until = min(time.monotonic() + RESET_WAIT, self._at)
                    self._drive()
                else:
                    self._send_again()
                    self._drive()
                if not self.done and time.monotonic() >= self._at:
                    raise TimeoutError(f"no answer within {self.seconds:.2f}s")
                return
            except Exception as again:
                exc = again
        self._error = _fault(exc, self.conn)
        self._finish(None)

    def _send_again(self) -> None:
        """The request never reached the bot: once more on a new connection, within
        the same deadline."""
        assert self.conn is not None
        self.conn.close()
        self.conn = None
        if time.monotonic() >= self._at:
            raise TimeoutError(f"no answer within {self.seconds:.2f}s")
        self._connect()

    def _finish(self, response: Response | None) -> None:
        self.finished = time.perf_counter()
        self.done = True
        self._state = _OVER
        self._response = response
        conn, self.conn = self.conn, None
        pool = self._client.pool
        if conn is not None:
            if response is not None and response.keep_alive:
                pool.put_back(conn)
            else:
                conn.close()
        if self._slot:
            self._slot = False
            pool.give_back()


def _wanted(exc: BaseException, otherwise: int) -> int:
    """What a would-block waits for: TLS may need to read to write, and the reverse."""
    if isinstance(exc, ssl.SSLWantReadError):
        return select.POLLIN
    if isinstance(exc, ssl.SSLWantWriteError):
        return select.POLLOUT
    return otherwise


class HttpClient:
    """One bot over HTTP/1.1 keep-alive: its endpoint's pool, its signing key."""

    def __init__(
        self,
        endpoint: str,
        secret: str | None = None,
        name: str | None = None,
        *,
        pool: EndpointPool | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        check_address: Callable[[str], None] | None = None,
    ):
        self.pool = pool or EndpointPool(
            endpoint, connect_timeout=connect_timeout, check_address=check_address
        )
        self._own_pool = pool is None
        self.endpoint = self.pool.endpoint
        self.name = name or endpoint
        self.max_answer_bytes = max_answer_bytes
        self._mac = None if secret is None else hmac.new(secret.encode(), None, hashlib.sha256)
        # what every request of a kind starts with, encoded once
        common = f"Host: {self.pool.netloc}\r\nUser-Agent: {USER_AGENT}\r\n"
        common += "Accept: application/json\r\n"
        self._get_head = f"GET {self.pool.path}/ HTTP/1.1\r\n{common}\r\n".encode()
        self._post_heads = {
            path: f"POST {self.pool.path}{path} HTTP/1.1\r\n{common}"
            "Content-Type: application/json\r\nContent-Length: ".encode()
            for path in ("/act", "/start", "/end")
        }

    # -- the client interface of the referee --------------------------------------------
    def info(self, seconds: float = CONTROL_TIMEOUT) -> dict[str, Any]:
        """``GET /``: the bot's name, author, version, games and protocol version, within
        ``seconds`` in all (connecting too)."""
        reply = self.finish(HttpExchange(self, None, b"", seconds))
        if not isinstance(reply, dict):
            raise BotFault("bad_answer", "GET / must answer a JSON object")
        return reply

    def start(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/start", info, CONTROL_TIMEOUT))

    def act(self, payload: dict[str, Any]) -> Any:
        return self.finish(self.begin_act(payload))

    def begin_act(self, payload: dict[str, Any]) -> HttpExchange:
        """The exchange of an ``/act``, for the referee to settle with the rest of its
        window; it waits ``deadline_ms``, what is left of the seat's time bank and the
        network's grace."""
        return self.begin("/act", payload, act_seconds(payload, DEADLINE_GRACE))

    def end(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/end", info, CONTROL_TIMEOUT))

    def close(self) -> None:
        """Close the connections of a pool of this client's own (a shared pool is the
        business of whoever shares it)."""
        if self._own_pool:
            self.pool.close()

    # -- one exchange ------------------------------------------------------------------------
    def begin(self, path: str, payload: Any, seconds: float) -> HttpExchange:
        """The exchange of a POST, not sent yet (``settle`` sends it).  Every body gets a
        fresh ``request_id``: it is signed with the body, so a bot that remembers the ids
        it has seen can refuse a captured request played to it again."""
        body = orjson.dumps({**payload, "request_id": os.urandom(16).hex()})
        return HttpExchange(self, self._post_heads[path], body, seconds)

    def finish(self, exchange: HttpExchange) -> Any:
        """Settle one exchange alone: its answer, or the fault it counts as."""
        settle([exchange])
        return exchange.result()

    def _request(self, post_head: bytes | None, body: bytes) -> bytes:
        """The bytes of a request, signed at the moment it is sent."""
        if post_head is None:
            return self._get_head
        tail = b"%d\r\n" % len(body)
        if self._mac is not None:
            timestamp = b"%d" % time.time()
            mac = self._mac.copy()
            mac.update(timestamp + b"." + body)
            tail += _SIGNED % (timestamp, mac.hexdigest().encode())
        return b"".join((post_head, tail, b"\r\n", body))
