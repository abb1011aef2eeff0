"""Bot transports: the HTTP client the referee uses to talk to bot endpoints.

Endpoints are untrusted (DESIGN.md, "Non-negotiable" 4): the client never follows a
redirect, caps the size of an answer (and of its head, in bytes and in lines), bounds a
whole exchange (connect, send, every read) by one deadline so that a bot trickling its
answer byte by byte is cut off, never gives a bot a second deadline for the same answer,
and signs every request so a bot can tell the referee from anybody else.

Why a small HTTP/1.1 client of our own.  A decision over loopback cost the worker about
460 us of CPU with ``http.client``, against 30 us for the engine: building the request
(about a quarter), parsing the answer's headers with the standard library's e-mail parser
(a third), a watchdog thread armed per request.  Here each request is one ``send`` of
bytes whose fixed part is encoded once per endpoint, the HMAC key is prepared once per
bot, and the answer is parsed from bytes as they arrive (``ResponseParser``: small,
incremental, linear in the bytes received, and fuzzed by the tests).  JSON goes through
orjson: encoding a view took the standard library 36-81 us, about a tenth of that with
orjson.

Every request is an ``HttpExchange``: a non-blocking state machine (wait for a slot,
connect, TLS handshake, send, read) that ``arena.match.referee.settle`` drives, alone or with
the other requests of a reaction window, in one thread.  Each exchange's deadline starts
when its slot is taken and its request leaves, each is read as its bytes arrive, and
each, at its deadline, reads what is already there before it is called a timeout: one
seat's silence never costs another seat a strike or skews its latency.

Connections are kept alive and pooled per endpoint (``EndpointPool``).  A worker keeps
one ``Pools`` registry for every match it plays, so a connection outlives its match, and
the number of requests in flight to one endpoint is bounded: by the pool's size, or by
the ``capacity`` the bot declares in ``GET /`` when that is smaller.  A request that finds
every slot taken waits in line for one, and its deadline starts only once it has it (the
wait is the arena's, not the bot's).  Waiting never blocks the other requests of its
window, and every request that holds a slot gives it back within its own deadline, so
matches cannot wait on each other in a circle.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import select
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson

from arena import __version__
from arena.match.referee import BotFault, Waker, excerpt, settle

PROTOCOL_VERSION = "1"
SIGNATURE_HEADER = "X-Arena-Signature"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
_SIGNED = f"{TIMESTAMP_HEADER}: %s\r\n{SIGNATURE_HEADER}: sha256=%s\r\n".encode()
MAX_ANSWER_BYTES = 64 * 1024  # the body of an answer
MAX_HEAD_BYTES = 64 * 1024  # its status line and headers (interim answers and trailers too)
MAX_HEADER_LINES = 100  # header lines of a head, and trailer lines after chunks
MAX_CAPACITY = 1024  # the most requests at once a bot may declare it takes
CONNECT_TIMEOUT = 2.0
# /start, /end and GET / are not decisions: they get a fixed time
CONTROL_TIMEOUT = 5.0
DEADLINE_GRACE = 0.25  # seconds past deadline_ms allowed for the network
MAX_CONNECTIONS = 32  # per endpoint and process, unless the pool is told otherwise
RESOLVE_TTL = 60.0  # seconds a checked address is used for new connections
IDLE_CLOSE = 60.0  # seconds a kept-alive connection may sit unused before it is closed
RESET_WAIT = 1.0  # seconds to wait for a reset after a kept-alive connection's end
USER_AGENT = f"card-bot-arena/{__version__}"
_READ = 65536  # bytes asked of a socket at a time


class Response:
    __slots__ = ("body", "keep_alive", "status")

    def __init__(self, status: int, body: bytes, keep_alive: bool):
        self.status = status
        self.body = body
        self.keep_alive = keep_alive


def _cut_short() -> BotFault:
    # a fault, not a closed connection: the answer was begun, so it is not sent again
    return BotFault("connection_closed", "the bot closed the connection mid-answer")


# what the parser waits for next
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _TO_CLOSE, _DONE = range(8)


class ResponseParser:
    """One response to a GET or POST, parsed from bytes as they arrive (no I/O here):
    ``feed`` each piece read, ``feed_eof`` at the end of the stream; either returns the
    ``Response`` once it is complete (``feed`` returns None until then) or raises the
    ``BotFault`` it is.  The head (CRLF or bare LF line endings), then a body of
    ``Content-Length`` bytes, in chunks, or up to the end of the connection; never more
    than ``cap`` bytes of body, ``MAX_HEAD_BYTES`` of head and ``MAX_HEADER_LINES`` lines
    of it.  Interim 1xx answers are skipped; redirects are reported, never followed.

    Linear in the bytes received however they are cut: a search for the end of the head
    or of a line resumes where the last one stopped, and repeated headers are joined
    once.  ``EOFError`` means the stream ended before any byte of an answer."""

    __slots__ = (
        "body",
        "buffer",
        "cap",
        "head_bytes",
        "headers",
        "http11",
        "need",
        "scanned",
        "state",
        "status",
        "trailers",
    )

    def __init__(self, cap: int = MAX_ANSWER_BYTES):
        self.cap = cap
        self.buffer = bytearray()
        self.scanned = 0  # bytes at the buffer's start already searched for an end
        self.state = _HEAD
        self.head_bytes = 0  # bytes of heads and trailers consumed so far
        self.trailers = 0
        self.status = 0
        self.http11 = True
        self.headers: dict[bytes, bytes] = {}
        self.body = bytearray()
        self.need = 0  # bytes of body (or of the chunk) still to come

    def feed(self, data: bytes) -> Response | None:
        self.buffer += data
        return self._parse()

    def feed_eof(self) -> Response:
        if self.state == _TO_CLOSE:
            return self._done(bytes(self.buffer), keep_alive=False)
        if self.state == _HEAD and not self.buffer and not self.head_bytes:
            raise EOFError("the bot closed the connection without answering")
        raise _cut_short()

    def _parse(self) -> Response | None:
        buffer = self.buffer
        while True:
            state = self.state
            if state == _HEAD:
                head = self._head()
                if head is None:
                    return None
                self.status, self.http11, self.headers = _parse_head(head)
                if 100 <= self.status < 200:
                    if self.status == 101:
                        raise BotFault("bad_answer", "HTTP 101: the bot switched protocols")
                    continue  # an interim answer: the real one follows
                response = self._frame()
                if response is not None:
                    return response
            elif state == _LENGTH:
                if len(buffer) < self.need:
                    return None
                body = bytes(buffer[: self.need])
                del buffer[: self.need]
                return self._done(body)
            elif state == _TO_CLOSE:
                if len(buffer) > self.cap:
                    raise BotFault("too_large", f"more than {self.cap} bytes")
                return None
            elif state == _CHUNK_SIZE:
                line = self._line(1024, "a chunk line that never ends")
                if line is None:
                    return None
                size_text = line.split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise BotFault("bad_answer", f"a bad chunk size {size_text[:20]!r}") from None
                if size < 0:
                    raise BotFault("bad_answer", "a negative chunk size")
                if size == 0:
                    self.state = _TRAILERS
                elif len(self.body) + size > self.cap:
                    raise BotFault("too_large", f"more than {self.cap} bytes")
                else:
                    self.need, self.state = size, _CHUNK_DATA
            elif state == _CHUNK_DATA:
                if not buffer:
                    return None
                piece = buffer[: self.need]
                self.body += piece
                self.need -= len(piece)
                del buffer[: len(piece)]
                self.scanned = 0
                if self.need:
                    return None
                self.state = _CHUNK_END
            elif state == _CHUNK_END:  # the line ending after a chunk's bytes, and nothing else
                if buffer[:1] == b"\n" or buffer[:2] == b"\r\n":
                    del buffer[: buffer.index(b"\n") + 1]
                    self.scanned, self.state = 0, _CHUNK_SIZE
                elif buffer == b"\r" or not buffer:
                    return None
                else:
                    raise BotFault("bad_answer", "a chunk longer than its size")
            elif state == _TRAILERS:
                line = self._line(MAX_HEAD_BYTES - self.head_bytes, "trailers that never end")
                if line is None:
                    return None
                self.head_bytes += len(line) + 1
                if not line:
                    return self._done(bytes(self.body))
                self.trailers += 1
                if self.trailers > MAX_HEADER_LINES:
                    raise BotFault("too_large", f"more than {MAX_HEADER_LINES} trailer lines")
            else:  # _DONE: nothing more is read for this answer
                return None

    def _head(self) -> list[bytes] | None:
        """The next head's lines, once its empty line is in the buffer; the search
        starts where the last one stopped (the end may straddle the old boundary)."""
        buffer = self.buffer
        start = max(self.scanned - 2, 0)
        # the head ends at its first empty line, whichever line ending it uses (a body may
        # well contain the other kind of empty line)
        ends = [(i, len(t)) for t in (b"\n\n", b"\n\r\n") if (i := buffer.find(t, start)) >= 0]
        if not ends:
            self.scanned = len(buffer)
            # an end still to come starts at len(buffer) - 2 or later
            if self.head_bytes + len(buffer) - 2 > MAX_HEAD_BYTES:
                raise BotFault("too_large", f"an answer head of more than {MAX_HEAD_BYTES} bytes")
            return None
        end, size = min(ends)
        if self.head_bytes + end > MAX_HEAD_BYTES:
            raise BotFault("too_large", f"an answer head of more than {MAX_HEAD_BYTES} bytes")
        head = bytes(buffer[:end])
        del buffer[: end + size]
        self.scanned = 0
        self.head_bytes += end + size
        if head.count(b"\n") > MAX_HEADER_LINES:
            raise BotFault(
                "too_large", f"an answer head of more than {MAX_HEADER_LINES} header lines"
            )
        return [line.rstrip(b"\r") for line in head.split(b"\n")]

    def _line(self, limit: int, never_ends: str) -> bytes | None:
        """The next line without its ending, once it is in the buffer; a line longer
        than ``limit`` is refused, whether its end has come or not."""
        buffer = self.buffer
        end = buffer.find(b"\n", self.scanned)
        if end < 0:
            self.scanned = len(buffer)
            if len(buffer) > limit:
                raise BotFault("bad_answer", never_ends)
            return None
        if end > limit:
            raise BotFault("bad_answer", never_ends)
        line = bytes(buffer[:end]).rstrip(b"\r")
        del buffer[: end + 1]
        self.scanned = 0
        return line

    def _frame(self) -> Response | None:
        """After the final head: how its body is framed (a Response if it has none)."""
        headers = self.headers
        encoding = headers.get(b"transfer-encoding", b"").lower()
        length = headers.get(b"content-length")
        if self.status in (204, 304):
            return self._done(b"")
        if encoding:
            if encoding.rsplit(b",", 1)[-1].strip() != b"chunked":
                raise BotFault("bad_answer", f"an unsupported transfer encoding {encoding[:40]!r}")
            self.state = _CHUNK_SIZE
        elif length is not None:
            if not length.isdigit():  # also refuses two different lengths ("5, 6")
                raise BotFault("bad_answer", f"a bad Content-Length {length[:40]!r}")
            if len(length) > 12 or int(length) > self.cap:
                raise BotFault("too_large", f"Content-Length {length[:40].decode('latin-1')}")
            self.need, self.state = int(length), _LENGTH
        else:  # the body ends with the connection
            self.state = _TO_CLOSE
        return None

    def _done(self, body: bytes, keep_alive: bool = True) -> Response:
        if len(body) > self.cap:
            raise BotFault("too_large", f"more than {self.cap} bytes")
        self.state = _DONE
        tokens = {t.strip() for t in self.headers.get(b"connection", b"").lower().split(b",")}
        if keep_alive:
            keep_alive = b"keep-alive" in tokens if not self.http11 else b"close" not in tokens
        # bytes after the answer: nothing was asked for them, the connection is not reused
        return Response(self.status, body, keep_alive and not self.buffer)


def _parse_head(lines: list[bytes]) -> tuple[int, bool, dict[bytes, bytes]]:
    """(status, HTTP/1.1 or later, headers by lower-case name); a header seen twice keeps
    its values joined by commas, as HTTP says they mean, joined once at the end."""
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
    repeated: dict[bytes, list[bytes]] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise BotFault("bad_answer", f"a malformed header line: {line[:80]!r}")
        name = name.lower()
        value = value.strip()
        if name in headers:
            repeated.setdefault(name, [headers[name]]).append(value)
        else:
            headers[name] = value
    for name, values in repeated.items():
        headers[name] = b", ".join(values)
    return int(code), version != b"HTTP/1.0", headers


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


class Connection:
    """A non-blocking socket to the endpoint, and the bytes of answer it has given to the
    request in flight."""

    __slots__ = ("idle_since", "received", "sock")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.idle_since = 0.0
        self.received = 0

    def stale(self) -> bool:
        """An idle keep-alive connection is no use if the bot closed it or wrote to it."""
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return True  # bytes after the last answer, decrypted already
        poller = select.poll()  # not select(): a busy worker has more than 1024 sockets
        try:
            poller.register(self.sock, select.POLLIN)
            return bool(poller.poll(0))
        except (OSError, ValueError):
            return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class EndpointPool:
    """Keep-alive connections to one endpoint, shared by every match of a process.

    At most ``max_connections`` requests are in flight to the endpoint at once, each on a
    connection of its own: that is how the arena honours the ``capacity`` a bot declares
    (``Pools.get``), and ``resize`` changes it while requests are in flight.  A request
    that finds every slot taken waits in line (first come, first served) and is woken,
    by its window's ``Waker``, once it is handed one: it never blocks its thread, so the
    rest of its window goes on meanwhile; a bot seated twice at one table with one slot is
    asked once, then again.  The address is resolved, checked by the address policy and
    then connected to, never resolved again in between (a name could rebind to a
    refused address)."""

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
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.path = parts.path.rstrip("/")
        self.netloc = parts.netloc
        self.connect_timeout = connect_timeout
        self.max_connections = max_connections
        self._check_address = check_address
        self._address: str | None = None
        self._family = socket.AF_INET
        self._resolved_at = 0.0
        self._idle: list[Connection] = []
        self._in_use = 0  # slots taken: requests in flight
        self._line: deque[tuple[HttpExchange, Waker]] = deque()  # waiting for a slot
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None

    # -- slots: requests in flight ----------------------------------------------------------
    def take(self, exchange: HttpExchange, waker: Waker) -> bool:
        """A slot now, or False: ``exchange`` waits in line, and once a slot is handed to
        it, its ``granted`` is set and ``waker`` wakes it."""
        with self._lock:
            if self._in_use < self.max_connections and not self._line:
                self._in_use += 1
                return True
            waker.arm()
            self._line.append((exchange, waker))
            return False

    def give_back(self) -> None:
        """A slot is free: to the first in line if the pool is not over its size."""
        with self._lock:
            if self._line and self._in_use <= self.max_connections:
                exchange, waker = self._line.popleft()
                exchange.granted = True  # the slot passes on: as many in flight
            else:
                self._in_use -= 1
                return
        waker.wake(exchange)

    def leave_line(self, exchange: HttpExchange) -> None:
        """``exchange`` no longer wants a slot (its window was given up): out of the line,
        or, if it was handed one meanwhile, the slot goes back."""
        with self._lock:
            for entry in self._line:
                if entry[0] is exchange:
                    self._line.remove(entry)
                    return
        if exchange.granted:
            exchange.granted = False
            self.give_back()

    def resize(self, max_connections: int) -> None:
        """Allow this many requests in flight from now on: those in line get the new
        slots at once; above the new size, requests in flight finish and slots are not
        handed on until the pool is within it."""
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        woken = []
        with self._lock:
            self.max_connections = max_connections
            while self._line and self._in_use < max_connections:
                exchange, waker = self._line.popleft()
                exchange.granted = True
                self._in_use += 1
                woken.append((exchange, waker))
            surplus = self._idle[: max(len(self._idle) - max_connections, 0)]
            del self._idle[: len(surplus)]
        for exchange, waker in woken:
            waker.wake(exchange)
        for conn in surplus:
            conn.close()

    # -- connections ------------------------------------------------------------------------
    def idle(self) -> Connection | None:
        """A kept-alive connection that is still good, or None: connect one."""
        with self._lock:
            while self._idle:
                candidate = self._idle.pop()
                if not candidate.stale():
                    return candidate
                candidate.close()
        return None

    def put_back(self, conn: Connection) -> None:
        """Keep ``conn`` for the next request (its answer was complete, kept alive)."""
        now = time.monotonic()
        conn.idle_since = now
        with self._lock:
            self._idle.append(conn)
            # the pool is used last in, first out: the first is the longest idle, closed
            # once it has been for a while (a worker talks to many bots)
            oldest = self._idle[0]
            if now - oldest.idle_since > IDLE_CLOSE:
                del self._idle[0]
            else:
                oldest = None
        if oldest is not None:
            oldest.close()

    def open(self) -> tuple[Connection, bool]:
        """A new non-blocking connection to the checked address, and whether it is
        connected already (else it is connecting: writable once it is)."""
        address = self.address()
        try:
            sock = socket.socket(self._family, socket.SOCK_STREAM)
        except OSError as exc:
            raise BotFault("connection_error", f"connect: {exc}") from None
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            code = sock.connect_ex((address, self.port))
            if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                raise OSError(code, os.strerror(code))
        except OSError as exc:
            sock.close()
            raise _connect_fault(exc) from None
        return Connection(sock), code == 0

    def tls(self, sock: socket.socket) -> ssl.SSLSocket:
        """``sock`` wrapped for TLS, its handshake to be done (``do_handshake``)."""
        if self._tls is None:
            self._tls = ssl.create_default_context()
        # the certificate is checked against the endpoint's name (and SNI names it)
        return self._tls.wrap_socket(sock, server_hostname=self.host, do_handshake_on_connect=False)

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
        self._address, self._family, self._resolved_at = address, infos[0][0], now
        return address

    def close(self) -> None:
        """Close the idle connections (those in use close when they come back)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _connect_fault(exc: OSError) -> BotFault:
    if isinstance(exc, ConnectionRefusedError):
        return BotFault("connection_refused", str(exc), error=type(exc).__name__)
    return BotFault("connection_error", f"connect: {exc}", error=type(exc).__name__)


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

    def get(self, endpoint: str, capacity: int | None = None) -> EndpointPool:
        """The endpoint's pool, sized at ``min(capacity, max_connections)``: ``capacity``
        is how many requests the bot declares it takes at once (``GET /``), None when it
        declares none.  A call with another capacity resizes the pool (the latest
        declaration wins, None included); ``ValueError`` if it is not an int of at least 1.
        """
        if capacity is not None and (
            isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1
        ):
            raise ValueError(f"a capacity is a whole number of at least 1, not {capacity!r}")
        size = self.max_connections if capacity is None else min(capacity, self.max_connections)
        key = endpoint.rstrip("/")
        with self._lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = EndpointPool(
                    key,
                    max_connections=size,
                    connect_timeout=self.connect_timeout,
                    check_address=self.check_address,
                )
                return pool
        if pool.max_connections != size:
            pool.resize(size)
        return pool

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()


# where an exchange is: what it waits for next
_IN_LINE, _CONNECTING, _HANDSHAKING, _SENDING, _READING, _RESETTING, _OVER = range(7)
_WOULD_BLOCK = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


class HttpExchange:
    """One request to a bot and its answer, driven without blocking by
    ``arena.match.referee.settle`` (the ``Exchange`` protocol documented there).

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
    def info(self) -> dict[str, Any]:
        """``GET /``: the bot's name, author, version, games and protocol version."""
        reply = self.finish(HttpExchange(self, None, b"", CONTROL_TIMEOUT))
        if not isinstance(reply, dict):
            raise BotFault("bad_answer", "GET / must answer a JSON object")
        return reply

    def start(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/start", info, CONTROL_TIMEOUT))

    def act(self, payload: dict[str, Any]) -> Any:
        return self.finish(self.begin_act(payload))

    def begin_act(self, payload: dict[str, Any]) -> HttpExchange:
        """The exchange of an ``/act``, for the referee to settle with the rest of its
        window; its deadline is ``deadline_ms`` and the network's grace."""
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
