"""Bot transports: the HTTP client the referee uses to talk to bot endpoints.

Endpoints are untrusted (DESIGN.md, "Non-negotiable" 4): the client never follows a
redirect, caps the size of an answer, has separate connect and read timeouts, bounds a
whole exchange by its deadline (a bot that trickles its answer byte by byte is cut off),
and signs every request so a bot can tell the referee from anybody else.

Connections are kept alive and pooled per endpoint.  ``http.client`` was chosen after
measuring: a loopback round trip costs about 0.4-0.5 ms with it against 1.3-1.9 ms with
``requests.Session``; it sets TCP_NODELAY, and a small subclass makes it send each request
in one write.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import hmac
import http.client
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from arena.referee import BotFault

PROTOCOL_VERSION = "1"
SIGNATURE_HEADER = "X-Arena-Signature"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
MAX_ANSWER_BYTES = 64 * 1024
CONNECT_TIMEOUT = 2.0
# /start, /end and GET / are not decisions: they get a fixed read timeout
CONTROL_TIMEOUT = 5.0
DEADLINE_GRACE = 0.25  # seconds past deadline_ms allowed for the network


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of HMAC-SHA256(secret, timestamp + "." + body)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


class _OneWriteConnection(http.client.HTTPConnection):
    """http.client sends the request line and headers, then the body, in two writes; one
    write is one segment on the wire and one wake-up of the bot's server."""

    def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
        if isinstance(message_body, bytes) and not encode_chunked:
            self._buffer.extend((b"", b""))  # type: ignore[attr-defined]
            request = b"\r\n".join(self._buffer) + message_body  # type: ignore[attr-defined]
            del self._buffer[:]  # type: ignore[attr-defined]
            self.send(request)
            return
        super()._send_output(message_body, encode_chunked)


class _PinnedTLSConnection(_OneWriteConnection, http.client.HTTPSConnection):
    """TLS to the address the endpoint policy checked, the certificate checked against the
    endpoint's name: resolving the name again at connect time would let it rebind to an
    address the policy refuses."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._pinned = address
        self._create_connection = self._connect_pinned

    def _connect_pinned(
        self, address: tuple[str, int], timeout: float, source: tuple[str, int] | None = None
    ) -> socket.socket:
        return socket.create_connection((self._pinned, address[1]), timeout, source)


class _Watchdog:
    """One thread that shuts the sockets of exchanges past their deadline.

    A per-read socket timeout alone does not bound an exchange: a bot can send one byte
    just before each timeout.  Arming costs a heap push, not a thread per request."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, socket.socket]] = []
        self._live: set[int] = set()
        self._ids = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, sock: socket.socket, seconds: float) -> int:
        token = next(self._ids)
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="arena-watchdog")
                self._thread.daemon = True
                self._thread.start()
            heapq.heappush(self._heap, (time.monotonic() + seconds, token, sock))
            self._live.add(token)
            if self._heap[0][1] == token:
                # only an earlier deadline needs the thread awake; deadlines mostly come
                # in order, so most requests cost no thread switch
                self._cond.notify()
        return token

    def disarm(self, token: int) -> None:
        with self._cond:
            self._live.discard(token)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                when, token, sock = self._heap[0]
                delay = when - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
                expired = token in self._live
                self._live.discard(token)
            if expired:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


_WATCHDOG = _Watchdog()


@dataclass
class _Exchange:
    """A request on its way: sent by ``HttpClient._begin``, read by ``_finish``."""

    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    seconds: float
    conn: http.client.HTTPConnection | None = None
    reused: bool = False
    started: float = 0.0
    token: int | None = None  # the watchdog's
    error: BaseException | None = None  # what sending raised, raised again when read


def _fault(exc: BaseException) -> BotFault:
    """The fault a failed exchange counts as."""
    if isinstance(exc, BotFault):
        return exc
    if isinstance(exc, TimeoutError):
        return BotFault("timeout", str(exc))
    if isinstance(exc, ConnectionRefusedError):
        return BotFault("connection_refused", str(exc))
    if isinstance(exc, ConnectionResetError | BrokenPipeError | http.client.RemoteDisconnected):
        return BotFault("connection_closed", str(exc))
    return BotFault("connection_error", f"{type(exc).__name__}: {exc}")


class HttpClient:
    """A bot endpoint over HTTP/1.1 keep-alive, one pooled connection per concurrent
    request (a bot seated twice answers two seats of a reaction window at once)."""

    def __init__(
        self,
        endpoint: str,
        secret: str | None = None,
        name: str | None = None,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        check_address: Callable[[str], None] | None = None,
    ):
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) endpoint: {endpoint!r}")
        self.endpoint = endpoint.rstrip("/")
        self.name = name or endpoint
        self.secret = secret
        self.connect_timeout = connect_timeout
        self.max_answer_bytes = max_answer_bytes
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path.rstrip("/")
        self._host_header = parts.netloc
        self._check_address = check_address
        self._address: str | None = None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    # -- the client interface of the referee --------------------------------------------
    def info(self) -> dict[str, Any]:
        """``GET /``: the bot's name, author, version, games and protocol version."""
        reply = self._exchange("GET", "/", None, CONTROL_TIMEOUT)
        if not isinstance(reply, dict):
            raise BotFault("bad_answer", "GET / must answer a JSON object")
        return reply

    def start(self, info: dict[str, Any]) -> None:
        self._exchange("POST", "/start", info, CONTROL_TIMEOUT)

    def act(self, payload: dict[str, Any]) -> Any:
        return self.finish_act(self.begin_act(payload))

    def begin_act(self, payload: dict[str, Any]) -> _Exchange:
        """Send ``/act`` and return at once; ``finish_act`` reads the answer.  The
        referee sends a reaction window's requests to every seat before it reads any,
        so the bots think at the same time without a thread per request."""
        seconds = payload.get("deadline_ms", 2000) / 1000.0 + DEADLINE_GRACE
        return self._begin("POST", "/act", payload, seconds)

    def finish_act(self, exchange: _Exchange) -> Any:
        return self._finish(exchange)

    def end(self, info: dict[str, Any]) -> None:
        self._exchange("POST", "/end", info, CONTROL_TIMEOUT)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- one exchange ------------------------------------------------------------------------
    def _exchange(self, method: str, path: str, payload: Any, seconds: float) -> Any:
        return self._finish(self._begin(method, path, payload, seconds))

    def _begin(self, method: str, path: str, payload: Any, seconds: float) -> _Exchange:
        """Sign and send a request; never raises: a failure waits in the exchange for
        ``_finish``, which turns it into the right fault."""
        body = None if payload is None else json.dumps(payload, separators=(",", ":")).encode()
        headers = {"Host": self._host_header, "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
            if self.secret is not None:
                timestamp = str(int(time.time()))
                headers[TIMESTAMP_HEADER] = timestamp
                headers[SIGNATURE_HEADER] = sign(self.secret, timestamp, body)
        exchange = _Exchange(method, self._path + path, body, headers, seconds)
        try:
            exchange.conn, exchange.reused = self._checkout()
            self._send(exchange)
        except Exception as exc:
            exchange.error = exc
        return exchange

    def _send(self, exchange: _Exchange) -> None:
        conn = exchange.conn
        assert conn is not None
        exchange.started = time.monotonic()
        if conn.sock is None:
            conn.connect()
        conn.sock.settimeout(exchange.seconds)  # the read timeout (connect had its own)
        exchange.token = _WATCHDOG.arm(conn.sock, exchange.seconds)
        conn.request(exchange.method, exchange.path, body=exchange.body, headers=exchange.headers)

    def _finish(self, exchange: _Exchange) -> Any:
        try:
            try:
                status, data = self._receive(exchange)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not exchange.reused or exchange.conn is None:
                    raise
                # an idle keep-alive connection the bot had closed: one fresh try
                exchange.conn.close()
                exchange.conn, exchange.reused, exchange.error = self._connect(), False, None
                self._send(exchange)
                status, data = self._receive(exchange)
        except Exception as exc:
            if exchange.conn is not None:
                exchange.conn.close()
            raise _fault(exc) from None
        self._checkin(exchange.conn)
        if 300 <= status < 400:
            raise BotFault("redirect", f"HTTP {status}: redirects are not followed")
        if not 200 <= status < 300:
            raise BotFault("http_status", f"HTTP {status}")
        try:
            return json.loads(data) if data else {}
        except (ValueError, UnicodeDecodeError):
            raise BotFault("not_json", "the answer is not JSON") from None

    def _receive(self, exchange: _Exchange) -> tuple[int, bytes]:
        try:
            if exchange.error is not None:
                raise exchange.error
            conn = exchange.conn
            assert conn is not None
            response = conn.getresponse()
            length = response.getheader("Content-Length")
            if length is not None and length.isdigit() and int(length) > self.max_answer_bytes:
                raise BotFault("too_large", f"Content-Length {length}")
            data = response.read(self.max_answer_bytes + 1)
            if len(data) > self.max_answer_bytes:
                raise BotFault("too_large", f"more than {self.max_answer_bytes} bytes")
            if not response.isclosed():
                response.read()  # drain what is left so the connection can be reused
        except (OSError, http.client.HTTPException) as exc:
            if exchange.started and time.monotonic() - exchange.started >= exchange.seconds:
                raise TimeoutError(f"no answer within {exchange.seconds:.2f}s") from exc
            raise
        finally:
            if exchange.token is not None:
                _WATCHDOG.disarm(exchange.token)
                exchange.token = None
        if response.will_close:
            conn.close()
        return response.status, data

    # -- the pool ------------------------------------------------------------------------------
    def _checkout(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._connect(), False

    def _checkin(self, conn: http.client.HTTPConnection) -> None:
        if conn.sock is None:
            return
        with self._lock:
            self._idle.append(conn)

    def _connect(self) -> http.client.HTTPConnection:
        if self._address is None:
            self._address = self._resolve()
        if self._https:
            conn: http.client.HTTPConnection = _PinnedTLSConnection(
                self._host, self._port, self._address, self.connect_timeout
            )
        else:
            conn = _OneWriteConnection(self._address, self._port, timeout=self.connect_timeout)
        try:
            conn.connect()
        except TimeoutError as exc:
            raise BotFault("timeout", f"connect: {exc}") from None
        except ConnectionRefusedError as exc:
            raise BotFault("connection_refused", str(exc)) from None
        except OSError as exc:
            raise BotFault("connection_error", f"connect: {exc}") from None
        return conn

    def _resolve(self) -> str:
        """The address to connect to, resolved once and checked by the endpoint policy
        (so a name cannot resolve to an allowed address at check time and to a private
        one at call time)."""
        try:
            infos = socket.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise BotFault("connection_error", f"cannot resolve {self._host}: {exc}") from None
        address = infos[0][4][0]
        if self._check_address is not None:
            try:
                self._check_address(address)
            except ValueError as exc:
                raise BotFault("refused_address", str(exc)) from None
        return address
