"""Bot transports: the HTTP client the referee uses to talk to bot endpoints.

Endpoints are untrusted (DESIGN.md, "Non-negotiable" 4): the client never follows a
redirect, caps the size of an answer (and of its head), bounds a whole exchange (connect,
send, every read) by one deadline so that a bot trickling its answer byte by byte is cut
off, never gives a bot a second deadline for the same answer, and signs every request so
a bot can tell the referee from anybody else.

Why a small HTTP/1.1 client of our own.  A decision over loopback cost the worker about
460 us of CPU with ``http.client``, against 30 us for the engine: building the request
(about a quarter), parsing the answer's headers with the standard library's e-mail parser
(a third), a watchdog thread armed per request.  Here each request is one ``sendall`` of
bytes whose fixed part is encoded once per endpoint, the HMAC key is prepared once per
bot, the status line and ``Content-Length`` (or chunks) are read from bytes, and the
deadline is enforced by giving every socket operation only the time that is left.  The
parser (``read_response``) is small and fuzzed by the tests.  JSON goes through orjson:
encoding a view took the standard library 36-81 us, about a tenth of that with orjson.

Connections are kept alive and pooled per endpoint (``EndpointPool``).  A worker keeps
one ``Pools`` registry for every match it plays, so a connection outlives its match, and
the number of connections to one endpoint is bounded: a request waits for a free slot
before its deadline starts (the wait is ours, not the bot's).  A reaction window holds
several slots at once; the referee begins its requests in the pools' fixed order
(``HttpClient.order``) so that two matches never wait on each other.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import os
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson

from arena import __version__
from arena.referee import BotFault, excerpt

PROTOCOL_VERSION = "1"
SIGNATURE_HEADER = "X-Arena-Signature"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
_SIGNED = f"{TIMESTAMP_HEADER}: %s\r\n{SIGNATURE_HEADER}: sha256=%s\r\n".encode()
MAX_ANSWER_BYTES = 64 * 1024  # the body of an answer
MAX_HEAD_BYTES = 64 * 1024  # its status line and headers
CONNECT_TIMEOUT = 2.0
# /start, /end and GET / are not decisions: they get a fixed time
CONTROL_TIMEOUT = 5.0
DEADLINE_GRACE = 0.25  # seconds past deadline_ms allowed for the network
MAX_CONNECTIONS = 32  # per endpoint and process, unless the pool is told otherwise
RESOLVE_TTL = 60.0  # seconds a checked address is used for new connections
IDLE_CLOSE = 60.0  # seconds a kept-alive connection may sit unused before it is closed
RESET_WAIT = 1.0  # seconds to wait for a reset after a kept-alive connection's end
USER_AGENT = f"card-bot-arena/{__version__}"
_READ = 65536


class Connection:
    """A socket to the endpoint and the bytes read from it but not yet used."""

    __slots__ = ("buffer", "idle_since", "received", "sock")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = bytearray()
        self.idle_since = 0.0
        self.received = 0  # bytes of the answer to the request in flight

    def stale(self) -> bool:
        """An idle keep-alive connection is no use if the bot closed it or wrote to it."""
        if self.buffer:
            return True
        poller = select.poll()  # not select(): a busy worker has more than 1024 sockets
        try:
            poller.register(self.sock, select.POLLIN)
            return bool(poller.poll(0))
        except (OSError, ValueError):
            return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Deadline:
    """The time left for one exchange; every socket operation gets only that."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def arm(self, sock: socket.socket) -> None:
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no answer within {self.seconds:.2f}s")
        sock.settimeout(left)


class Response:
    __slots__ = ("body", "keep_alive", "status")

    def __init__(self, status: int, body: bytes, keep_alive: bool):
        self.status = status
        self.body = body
        self.keep_alive = keep_alive


def _recv(conn: Connection, deadline: Deadline) -> bytes:
    deadline.arm(conn.sock)
    data = conn.sock.recv(_READ)
    conn.received += len(data)
    return data


def _never_read(conn: Connection, deadline: Deadline, error: BaseException) -> bool:
    """Whether a request on a kept-alive connection, that got no byte of answer, never
    reached the bot, so that sending it once more cannot give the bot the same request
    (or the same deadline) twice.

    A socket the bot closed before the request arrived, or closed with the request
    unread, answers it with a reset (TCP RST): sending fails, or reading does, or, when
    the bot's FIN came first, the reset follows the end of stream within a round trip.
    A bot that read the request and then hung up sends its FIN and nothing else.  So an
    end of stream is waited on for a reset, RESET_WAIT at most and within the deadline.
    """
    if conn.received:
        return False  # the bot began to answer: it had the request
    if isinstance(error, ConnectionResetError | BrokenPipeError):
        return True
    poller = select.poll()
    poller.register(conn.sock, 0)  # errors and hang-ups are always reported
    wait = min(RESET_WAIT, deadline.at - time.monotonic())
    if wait > 0:
        poller.poll(wait * 1000.0)
    try:
        return conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0
    except OSError:
        return True


def _cut_short() -> BotFault:
    # a fault, not a closed connection: the answer was begun, so it is not sent again
    return BotFault("connection_closed", "the bot closed the connection mid-answer")


def _fill(conn: Connection, deadline: Deadline) -> None:
    data = _recv(conn, deadline)
    if not data:
        raise _cut_short()
    conn.buffer += data


def _read_head(conn: Connection, deadline: Deadline) -> list[bytes]:
    """The status line and header lines of one response (CRLF or bare LF endings)."""
    buffer = conn.buffer
    while True:
        # the head ends at its first empty line, whichever line ending it uses (a body
        # may well contain the other kind of empty line)
        ends = [(i, len(t)) for t in (b"\n\n", b"\n\r\n") if (i := buffer.find(t)) >= 0]
        if ends:
            end, size = min(ends)
            head = bytes(buffer[:end])
            del buffer[: end + size]
            return [line.rstrip(b"\r") for line in head.split(b"\n")]
        if len(buffer) > MAX_HEAD_BYTES:
            raise BotFault("too_large", f"an answer head of more than {MAX_HEAD_BYTES} bytes")
        data = _recv(conn, deadline)
        if not data:
            if buffer:
                raise _cut_short()
            raise EOFError("the bot closed the connection without answering")
        buffer += data


def _parse_head(lines: list[bytes]) -> tuple[int, bool, dict[bytes, bytes]]:
    """(status, HTTP/1.1 or later, headers by lower-case name); a header seen twice keeps
    its values joined by commas, as HTTP says they mean."""
    version, _, rest = lines[0].partition(b" ")
    code = rest[:3]
    if (
        not version.startswith(b"HTTP/1.")
        or len(code) != 3
        or not code.isdigit()
        or rest[3:4] not in (b"", b" ")
    ):
        raise BotFault("bad_answer", f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise BotFault("bad_answer", f"a malformed header line: {line[:80]!r}")
        name = name.lower()
        value = value.strip()
        headers[name] = headers[name] + b", " + value if name in headers else value
    return int(code), version != b"HTTP/1.0", headers


def _read_exactly(conn: Connection, deadline: Deadline, n: int) -> bytes:
    buffer = conn.buffer
    while len(buffer) < n:
        _fill(conn, deadline)
    data = bytes(buffer[:n])
    del buffer[:n]
    return data


def _read_line(conn: Connection, deadline: Deadline, limit: int) -> bytes:
    buffer = conn.buffer
    while (end := buffer.find(b"\n")) < 0:
        if len(buffer) > limit:
            raise BotFault("bad_answer", "a chunk line that never ends")
        _fill(conn, deadline)
    line = bytes(buffer[:end]).rstrip(b"\r")
    del buffer[: end + 1]
    return line


def _read_chunked(conn: Connection, deadline: Deadline, cap: int) -> bytes:
    body = bytearray()
    while True:
        size_text = _read_line(conn, deadline, 1024).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BotFault("bad_answer", f"a bad chunk size {size_text[:20]!r}") from None
        if size < 0:
            raise BotFault("bad_answer", "a negative chunk size")
        if size == 0:
            while _read_line(conn, deadline, MAX_HEAD_BYTES):  # trailers, then an empty line
                pass
            return bytes(body)
        if len(body) + size > cap:
            raise BotFault("too_large", f"more than {cap} bytes")
        body += _read_exactly(conn, deadline, size)
        if _read_line(conn, deadline, 2) != b"":
            raise BotFault("bad_answer", "a chunk longer than its size")


def read_response(conn: Connection, deadline: Deadline, cap: int = MAX_ANSWER_BYTES) -> Response:
    """Read one response to a GET or POST: its head, then a body of ``Content-Length``
    bytes, in chunks, or up to the end of the connection; never more than ``cap`` bytes.
    Interim 1xx answers are skipped; redirects are reported, never followed."""
    while True:
        status, http11, headers = _parse_head(_read_head(conn, deadline))
        if not 100 <= status < 200:
            break
        if status == 101:
            raise BotFault("bad_answer", "HTTP 101: the bot switched protocols")
    tokens = {t.strip() for t in headers.get(b"connection", b"").lower().split(b",")}
    keep_alive = b"keep-alive" in tokens if not http11 else b"close" not in tokens
    encoding = headers.get(b"transfer-encoding", b"").lower()
    length = headers.get(b"content-length")
    if status in (204, 304):
        body = b""
    elif encoding:
        if encoding.rsplit(b",", 1)[-1].strip() != b"chunked":
            raise BotFault("bad_answer", f"an unsupported transfer encoding {encoding[:40]!r}")
        body = _read_chunked(conn, deadline, cap)
    elif length is not None:
        if not length.isdigit():  # also refuses two different lengths ("5, 6")
            raise BotFault("bad_answer", f"a bad Content-Length {length[:40]!r}")
        if len(length) > 12 or int(length) > cap:
            raise BotFault("too_large", f"Content-Length {length[:40].decode('latin-1')}")
        body = _read_exactly(conn, deadline, int(length))
    else:  # the body ends with the connection
        while len(conn.buffer) <= cap and (data := _recv(conn, deadline)):
            conn.buffer += data
        if len(conn.buffer) > cap:
            raise BotFault("too_large", f"more than {cap} bytes")
        body = bytes(conn.buffer)
        conn.buffer.clear()
        keep_alive = False
    if conn.buffer:  # bytes after the answer: nothing was asked for them
        keep_alive = False
    return Response(status, body, keep_alive)


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


_order = itertools.count()
_held = threading.local()  # per thread: pools it holds a connection slot of, and how many


def _held_slots() -> dict[EndpointPool, int]:
    counts = getattr(_held, "counts", None)
    if counts is None:
        counts = _held.counts = {}
    return counts


class EndpointPool:
    """Keep-alive connections to one endpoint, shared by every match of a process.

    At most ``max_connections`` are open at once.  A thread that already holds a slot of
    this pool (a bot seated twice at one table, both asked in one reaction window) is
    never made to wait for itself: it gets a connection beyond the bound, closed after
    use.  The address is resolved, checked by the address policy and then connected to,
    never resolved again in between (a name could rebind to a refused address)."""

    def __init__(
        self,
        endpoint: str,
        *,
        max_connections: int = MAX_CONNECTIONS,
        connect_timeout: float = CONNECT_TIMEOUT,
        check_address: Callable[[str], None] | None = None,
    ):
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) endpoint: {endpoint!r}")
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.endpoint = endpoint.rstrip("/")
        self.order = next(_order)
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.path = parts.path.rstrip("/")
        self.netloc = parts.netloc
        self.connect_timeout = connect_timeout
        self.max_connections = max_connections
        self._check_address = check_address
        self._address: str | None = None
        self._resolved_at = 0.0
        self._idle: list[Connection] = []
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None

    def checkout(self) -> tuple[Connection | None, bool]:
        """Take a slot (waiting while all are in use) and an idle connection that is
        still good, or None: connect one.  Returns it and whether a slot was taken."""
        held = _held_slots()
        slot = not held.get(self)
        if slot:
            self._slots.acquire()
        held[self] = held.get(self, 0) + 1
        conn = None
        with self._lock:
            while self._idle:
                candidate = self._idle.pop()
                if not candidate.stale():
                    conn = candidate
                    break
                candidate.close()
        return conn, slot

    def release(self, conn: Connection | None, slot: bool, reuse: bool) -> None:
        held = _held_slots()
        held[self] -= 1
        if not held[self]:
            del held[self]
        if conn is not None:
            if reuse and slot:
                now = time.monotonic()
                conn.idle_since = now
                with self._lock:
                    self._idle.append(conn)
                    # the pool is used last in, first out: the first is the longest idle,
                    # closed once it has been for a while (a worker talks to many bots)
                    oldest = self._idle[0]
                    if now - oldest.idle_since > IDLE_CLOSE:
                        del self._idle[0]
                    else:
                        oldest = None
                if oldest is not None:
                    oldest.close()
            else:
                conn.close()
        if slot:
            self._slots.release()

    def connect(self, deadline: Deadline) -> Connection:
        address = self.address()
        timeout = min(self.connect_timeout, max(deadline.at - time.monotonic(), 0.001))
        try:
            sock = socket.create_connection((address, self.port), timeout)
        except TimeoutError as exc:
            raise BotFault("timeout", f"connect: {exc}") from None
        except ConnectionRefusedError as exc:
            raise BotFault("connection_refused", str(exc)) from None
        except OSError as exc:
            raise BotFault("connection_error", f"connect: {exc}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.https:
            if self._tls is None:
                self._tls = ssl.create_default_context()
            try:
                deadline.arm(sock)
                # the certificate is checked against the endpoint's name (and SNI names it)
                sock = self._tls.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
        return Connection(sock)

    def address(self) -> str:
        """The address to connect to: resolved, then checked by the endpoint policy."""
        now = time.monotonic()
        if self._address is not None and now - self._resolved_at < RESOLVE_TTL:
            return self._address
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise BotFault("connection_error", f"cannot resolve {self.host}: {exc}") from None
        address = str(infos[0][4][0])
        if self._check_address is not None:
            try:
                self._check_address(address)
            except ValueError as exc:
                raise BotFault("refused_address", str(exc)) from None
        self._address, self._resolved_at = address, now
        return address

    def close(self) -> None:
        """Close the idle connections (those in use close when they come back)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class Pools:
    """Every endpoint's pool of one process (a worker keeps one for all its matches)."""

    def __init__(
        self,
        *,
        max_connections: int = MAX_CONNECTIONS,
        connect_timeout: float = CONNECT_TIMEOUT,
        check_address: Callable[[str], None] | None = None,
    ):
        self.max_connections = max_connections
        self.connect_timeout = connect_timeout
        self.check_address = check_address
        self._pools: dict[str, EndpointPool] = {}
        self._lock = threading.Lock()

    def get(self, endpoint: str) -> EndpointPool:
        key = endpoint.rstrip("/")
        with self._lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = EndpointPool(
                    key,
                    max_connections=self.max_connections,
                    connect_timeout=self.connect_timeout,
                    check_address=self.check_address,
                )
            return pool

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()


class Exchange:
    """A request on its way: sent by ``HttpClient.begin``, read by ``HttpClient.finish``.

    It is made once its connection slot is taken: the deadline runs from then, since
    waiting for a slot was the arena's time, not the bot's."""

    __slots__ = ("conn", "deadline", "error", "request", "reused", "slot", "started")

    def __init__(self, request: bytes, seconds: float, conn: Connection | None, slot: bool):
        self.request = request
        self.deadline = Deadline(seconds)
        self.started = time.perf_counter()
        self.conn = conn  # an idle kept-alive connection, or None: connect one
        self.reused = conn is not None
        self.slot = slot
        self.error: BaseException | None = None  # what sending raised, raised when read


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

    @property
    def order(self) -> int:
        """Requests of a reaction window are begun in this order (see the module doc)."""
        return self.pool.order

    # -- the client interface of the referee --------------------------------------------
    def info(self) -> dict[str, Any]:
        """``GET /``: the bot's name, author, version, games and protocol version."""
        reply = self.finish(self._begin(self._get_head, CONTROL_TIMEOUT))
        if not isinstance(reply, dict):
            raise BotFault("bad_answer", "GET / must answer a JSON object")
        return reply

    def start(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/start", info, CONTROL_TIMEOUT))

    def act(self, payload: dict[str, Any]) -> Any:
        return self.finish(self.begin_act(payload))

    def begin_act(self, payload: dict[str, Any]) -> Exchange:
        """Send ``/act`` and return at once; ``finish`` reads the answer.  The referee
        sends a reaction window's requests to every seat before it reads any, so the
        bots think at the same time without a thread per request."""
        seconds = payload.get("deadline_ms", 2000) / 1000.0 + DEADLINE_GRACE
        return self.begin("/act", payload, seconds)

    def end(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/end", info, CONTROL_TIMEOUT))

    def close(self) -> None:
        """Close the connections of a pool of this client's own (a shared pool is the
        business of whoever shares it)."""
        if self._own_pool:
            self.pool.close()

    # -- one exchange ------------------------------------------------------------------------
    def begin(self, path: str, payload: Any, seconds: float) -> Exchange:
        """Sign and send a POST; never raises: a failure waits in the exchange for
        ``finish``, which turns it into the right fault.  Every body gets a fresh
        ``request_id``: it is signed with the body, so a bot that remembers the ids it has
        seen can refuse a captured request played to it again."""
        body = orjson.dumps({**payload, "request_id": os.urandom(16).hex()})
        tail = b"%d\r\n" % len(body)
        if self._mac is not None:
            timestamp = b"%d" % time.time()
            mac = self._mac.copy()
            mac.update(timestamp + b"." + body)
            tail += _SIGNED % (timestamp, mac.hexdigest().encode())
        return self._begin(b"".join((self._post_heads[path], tail, b"\r\n", body)), seconds)

    def _begin(self, request: bytes, seconds: float) -> Exchange:
        exchange = Exchange(request, seconds, *self.pool.checkout())
        try:
            self._send(exchange)
        except Exception as exc:
            exchange.error = exc
        return exchange

    def _send(self, exchange: Exchange) -> None:
        if exchange.conn is None:
            exchange.conn = self.pool.connect(exchange.deadline)
        exchange.conn.received = 0
        exchange.deadline.arm(exchange.conn.sock)
        exchange.conn.sock.sendall(exchange.request)

    def finish(self, exchange: Exchange) -> Any:
        """The answer of an exchange begun by ``begin``, or the fault it counts as."""
        response = None
        try:
            try:
                if exchange.error is not None:
                    raise exchange.error
                assert exchange.conn is not None
                response = read_response(exchange.conn, exchange.deadline, self.max_answer_bytes)
            except (EOFError, ConnectionResetError, BrokenPipeError) as exc:
                assert exchange.conn is not None
                if not exchange.reused:
                    raise
                if not _never_read(exchange.conn, exchange.deadline, exc):
                    if exchange.deadline.at <= time.monotonic():  # waited it out for a reset
                        raise TimeoutError(
                            f"no answer within {exchange.deadline.seconds:.2f}s"
                        ) from None
                    raise
                # a kept-alive connection the bot had closed before reading the request:
                # send it once more on a new connection, within the same deadline
                exchange.conn.close()
                exchange.conn, exchange.reused, exchange.error = None, False, None
                self._send(exchange)
                response = read_response(exchange.conn, exchange.deadline, self.max_answer_bytes)
        except Exception as exc:
            raise _fault(exc, exchange.conn) from None
        finally:
            reuse = response is not None and response.keep_alive
            self.pool.release(exchange.conn, exchange.slot, reuse)
            exchange.conn = None
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

    finish_act = finish
