"""Kept-alive connections to the bots, pooled per endpoint (``EndpointPool``), and a
process's registry of pools (``Pools``).

A worker keeps one ``Pools`` registry for every match it plays, so a connection outlives
its match, and the number of requests in flight to one endpoint is bounded: by the
pool's size, or by the ``capacity`` the bot declares in ``GET /`` when that is smaller.
A request that finds every slot taken waits in line for one, and its deadline starts
only once it has it (the wait is the arena's, not the bot's).  Waiting never blocks the
other requests of its window, and every request that holds a slot gives it back within
its own deadline, so matches cannot wait on each other in a circle.

Endpoints are untrusted: an address is resolved, checked by the address policy
(``arena.match.netpolicy``) and connected to, never resolved again in between.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from arena.match.exchanges import Waker
from arena.match.faults import BotFault

if TYPE_CHECKING:
    from arena.match.http_client import HttpExchange


MAX_CAPACITY = 1024  # the most requests at once a bot may declare it takes


CONNECT_TIMEOUT = 2.0


MAX_CONNECTIONS = 32  # per endpoint and process, unless the pool is told otherwise


RESOLVE_TTL = 60.0  # seconds a checked address is used for new connections


IDLE_CLOSE = 60.0  # seconds a kept-alive connection may sit unused before it is closed


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
