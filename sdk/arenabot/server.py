"""The bot's HTTP server: standard library only, HTTP/1.1 keep-alive.

A bot's endpoint is public, so anybody can connect to it.  The server is in two parts:

- a front end, one thread running an asyncio event loop, that accepts and reads every
  connection with caps and deadlines, answers what is malformed, unsigned or badly
  signed (before any JSON parsing), then parses and checks the rest (fields, request
  id) and answers ``GET /``;
- verified connections: once a connection carries a verified request it leaves the
  front end for a thread of its own (``max_verified`` of them at most), which calls the
  bot and then reads that connection's next requests with blocking reads, so that each
  of the arena's requests wakes one thread, as in a thread-per-connection server
  (handing every request from the loop to a pool of bot threads cost 50-60 us more per
  round trip on loopback).  The bot's calls go through ``capacity`` slots: one for a bot
  that is not thread-safe, whose calls then come one at a time, else ``threads``.
  ``GET /`` declares that number (``"capacity"``): the arena never sends more requests
  at once, and does not charge the wait to the bot's deadline.

Limits of the front end (each a constant or an argument of ``make_server``):

- a request's line and headers together: 64 KiB (431, and the connection closes);
  a body: ``max_body`` (413);
- a request must arrive, head and body, within ``request_timeout`` seconds (10) of its
  first byte, and a new connection must send one within that time of opening (408 for
  a request cut short, then the connection closes); a kept-alive connection may then sit
  idle ``idle_timeout`` seconds (300);
- at most ``max_connections`` connections, and ``max_buffered`` bytes of requests being
  read in the front end: past either, the front end's oldest connection is closed to
  make room.  A verified connection (the arena's kept-alive connections) is never
  closed for an unverified one, and a new connection is the last to go, so the arena's
  requests are still answered while thousands of hostile connections are open;
- the listen backlog is 1024 (the system may cap it), and the soft limit of open files
  is raised towards the hard limit so that the connection bound fits in it.

``benchmarks/sdk_hostile.py`` measures this against the thread-per-connection server
it replaced (median of 3 runs, loopback, 2 shared cores): an unfinished head of 100
lines of 64,000 bytes held 11.1 MB of its memory, and holds none here (431 at 64 KiB);
with 3,000 hostile connections open (unfinished heads, idle connections, floods of
unsigned requests), the arena's signed requests on a kept-alive connection take
0.34 ms (p50) and 23 ms (p99), against 0.49 ms and 308 ms, and on new connections 6 ms
and 93 ms, against 1.6 ms and 2.05 s (some timed out); of 1,000 signed requests
arriving at once, none fails, against 54% (a listen backlog of 5).

Each response (status line, headers and body) leaves in one write on a socket with
``TCP_NODELAY``.  A server that writes the headers and the body separately, with
Nagle's algorithm on, waits for the client's delayed ACK between the two writes: about
40 ms per round trip over loopback, for every decision of every match.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from arenabot.bot import ActFunction, Bot, as_bot, make_answer
from arenabot.protocol import (
    DEFAULT_MAX_SKEW,
    MAX_BODY,
    MAX_JSON_DEPTH,
    REPLAY_MEMORY,
    REQUEST_ID_FIELD,
    REQUIRED_FIELDS,
    SDK_VERSION,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    ReplayGuard,
    SignatureError,
    json_depth,
    verify,
)

SECRET_ENV = "ARENA_BOT_SECRET"
DEFAULT_PORT = 9000  # not 8000: that is the arena's own web server
MAX_HEAD = 64 * 1024  # bytes of a request's line and headers, together
MAX_HEADERS = 100  # header lines of one request
REQUEST_TIMEOUT = 10.0  # seconds a request may take to arrive, from its first byte
IDLE_TIMEOUT = 300.0  # seconds a keep-alive connection may stay idle before the bot closes it
MAX_CONNECTIONS = 4096  # open connections (fewer if the limit of open files is lower)
MAX_BUFFERED = 64 * 1024 * 1024  # bytes of requests being read on unproven connections
BACKLOG = 1024  # connections the system may queue before the server accepts them
DEFAULT_THREADS = 8  # requests a thread-safe bot is given at once (its capacity)
MAX_VERIFIED = 256  # connections that carried a verified request, each served by a thread
ERROR_TEXT_CAP = 300  # characters of an exception message sent back in a 500
SERVER_HEADER = f"arenabot/{SDK_VERSION}"

_HEAD_END = re.compile(rb"\r?\n\r?\n")  # the empty line after the headers (CRLF or LF)
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class HeadError(Exception):
    """A request head that cannot be served: answered with ``status`` and ``reason``,
    then the connection closes."""

    def __init__(self, status: HTTPStatus, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Headers(dict[str, str]):
    """A request's headers by lower-case name; a header sent twice has its values joined
    by commas, as HTTP says they mean."""

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        self[key] = f"{self[key]}, {value}" if key in self else value

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)


class Head:
    """A parsed request line and headers."""

    __slots__ = ("close", "expect_100", "headers", "method", "path", "requestline", "version")

    def __init__(self, requestline: str, method: str, target: str, version: str, headers: Headers):
        self.requestline = requestline
        self.method = method
        self.version = version
        self.headers = headers
        # "//act" is a path, not a network location
        target = "/" + target.lstrip("/") if target.startswith("//") else target
        self.path = urlsplit(target).path or "/"
        tokens = {t.strip() for t in headers.get("Connection", "").lower().split(",")}
        if version == "HTTP/1.1":
            self.close = "close" in tokens
        else:
            self.close = "keep-alive" not in tokens
        self.expect_100 = headers.get("Expect", "").lower() == "100-continue"


def read_head(buffer: bytes | bytearray, start: int = 0) -> tuple[Head, int] | None:
    """The head at the start of ``buffer`` and the offset of what follows it (the body),
    or None while its end has not arrived (``start``: where to look for that end, bytes
    before it having been searched already).  ``HeadError`` for a head that is over
    ``MAX_HEAD`` bytes, has over ``MAX_HEADERS`` lines, or is not HTTP/1.x."""
    end = _HEAD_END.search(buffer, max(start - 3, 0))
    if end is None:
        if len(buffer) > MAX_HEAD:
            raise HeadError(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                f"the request head is larger than {MAX_HEAD} bytes",
            )
        return None
    if end.end() > MAX_HEAD:
        raise HeadError(
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            f"the request head is larger than {MAX_HEAD} bytes",
        )
    lines = bytes(buffer[: end.start()]).split(b"\n")
    requestline = str(lines[0], "iso-8859-1").rstrip("\r")
    words = requestline.split()
    if len(words) != 3:
        raise HeadError(HTTPStatus.BAD_REQUEST, f"bad request line {requestline[:80]!r}")
    method, target, version = words
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        status = HTTPStatus.HTTP_VERSION_NOT_SUPPORTED
        if not version.startswith("HTTP/"):
            status = HTTPStatus.BAD_REQUEST
        raise HeadError(status, f"not an HTTP/1.x request: {version[:20]!r}")
    if len(lines) - 1 > MAX_HEADERS:
        raise HeadError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "too many headers")
    headers = Headers()
    for line in lines[1:]:
        name, colon, value = line.decode("iso-8859-1").partition(":")
        if not colon or not name or name != name.strip():
            raise HeadError(HTTPStatus.BAD_REQUEST, f"a malformed header line {line[:80]!r}")
        headers.add(name, value.strip())
    return Head(requestline, method, target, version, headers), end.end()


def _response(status: HTTPStatus, body: bytes, close: bool) -> bytes:
    """A whole response: it leaves in one write (see the module's docstring)."""
    head = (
        f"HTTP/1.1 {status.value} {status.phrase}\r\nServer: {SERVER_HEADER}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    )
    if status == HTTPStatus.UNAUTHORIZED:
        head += "WWW-Authenticate: Arena-HMAC-SHA256\r\n"
    if close:
        head += "Connection: close\r\n"
    return (head + "\r\n").encode("latin-1") + body


def _body_length(head: Head, max_body: int) -> int:
    """The length of a request's body; ``HeadError`` for a request that cannot be read
    (a method other than GET and POST, a chunked or oversized body, a bad length)."""
    if head.method not in ("GET", "POST"):
        raise HeadError(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({head.method!r})")
    if "chunked" in head.headers.get("Transfer-Encoding", "").lower():
        raise HeadError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
    raw = head.headers.get("Content-Length", "0").strip()
    if not (raw.isascii() and raw.isdigit()):
        raise HeadError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
    if int(raw) > max_body:
        raise HeadError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body is larger than {max_body} bytes"
        )
    return int(raw)


class _Requests:
    """Cuts the bytes of one connection into requests: a head, then a body of
    ``Content-Length`` bytes.  Used by the front end and by a connection's thread."""

    __slots__ = ("buffer", "head", "length", "max_body", "searched", "started", "wants_continue")

    def __init__(self, max_body: int):
        self.max_body = max_body
        self.buffer = bytearray()
        self.searched = 0  # bytes of the buffer searched for the end of the head
        self.head: Head | None = None  # a request whose body is being read
        self.length = 0  # the bytes of that body
        self.started = False  # bytes of the next request have arrived
        self.wants_continue = False  # a client waits for "100 Continue" to send the body

    def feed(self, data: bytes) -> None:
        self.buffer += data
        self.started = True

    def next(self) -> tuple[Head, bytes] | None:
        """The next complete request, or None until more bytes arrive; ``HeadError``
        for one that cannot be served (answer it, then close the connection)."""
        if self.head is None:
            if self.buffer[:1] in (b"\r", b"\n"):  # empty lines before a request
                del self.buffer[: len(self.buffer) - len(self.buffer.lstrip(b"\r\n"))]
            if not self.buffer:
                return None
            found = read_head(self.buffer, self.searched)
            if found is None:
                self.searched = len(self.buffer)
                return None
            head, offset = found
            del self.buffer[:offset]
            self.searched = 0
            self.length = _body_length(head, self.max_body)
            self.head = head
            self.wants_continue = head.expect_100 and len(self.buffer) < self.length
        if len(self.buffer) < self.length:
            return None
        head, self.head = self.head, None
        body = bytes(self.buffer[: self.length])
        del self.buffer[: self.length]
        self.started = bool(self.buffer)
        return head, body


class _Connection(asyncio.Protocol):
    """A connection in the front end's thread: its requests are read, checked and
    answered here until one is verified (signed, new, well formed); the connection is
    then handed, with that request, to a thread of its own (``_ConnectionThread``)."""

    def __init__(self, server: BotServer):
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.peer = "-"
        self.requests = _Requests(server.max_body)
        self.closed = False
        self.deadline = time.monotonic() + server.request_timeout

    # -- asyncio's callbacks ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family != getattr(socket, "AF_UNIX", None):
            # asyncio sets it only on sockets made with proto=IPPROTO_TCP: not this one's
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = transport.get_extra_info("peername")
        if peer:
            self.peer = str(peer[0])
        self.server._admit(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        if not self.requests.started:  # a request begins: its deadline runs
            self.deadline = min(self.deadline, time.monotonic() + self.server.request_timeout)
        self.requests.feed(data)
        if self.server._account(self, len(data)):
            return  # closed to keep the buffers within their bound
        before = len(self.requests.buffer)
        try:
            self._process()
        finally:  # what was read out of the buffer (what is left is counted until closed)
            self.server._buffered -= before - len(self.requests.buffer)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server._forget(self)

    # -- requests ----------------------------------------------------------------------------
    def _process(self) -> None:
        """Answer every complete request in the buffer, in order, until one is for the
        bot."""
        server = self.server
        while not self.closed:
            try:
                found = self.requests.next()
            except HeadError as exc:
                self._refuse(exc.status, exc.reason)
                return
            if found is None:
                if self.requests.wants_continue:
                    self.requests.wants_continue = False
                    self._write(_CONTINUE)
                return
            head, body = found
            checked = server._check(head, body)
            if isinstance(checked, dict):
                self._hand_over(head, checked)
                return
            self._answer(head, *checked)

    def _hand_over(self, head: Head, request: dict[str, Any]) -> None:
        """A verified request: the connection goes to a thread of its own, which calls
        the bot and then reads the connection's next requests itself."""
        transport = self.transport
        assert transport is not None
        if transport.get_write_buffer_size():  # answers the client has not read yet
            self._refuse(HTTPStatus.SERVICE_UNAVAILABLE, "read the answers before asking more")
            return
        sock = transport.get_extra_info("socket").dup()  # the same connection, another fd
        self.closed = True
        self.server._forget(self)
        transport.abort()  # closes asyncio's descriptor only: the connection stays open
        self.server._thread_for(sock, self.peer, self.requests, head, request)

    # -- answering -------------------------------------------------------------------------
    def _answer(self, head: Head, status: HTTPStatus, body: bytes) -> None:
        self._write(_response(status, body, head.close))
        self.server._log(self.peer, head.requestline, status, len(body))
        if head.close:
            self._close()
        elif self.requests.started:  # the next request is arriving already
            self.deadline = time.monotonic() + self.server.request_timeout
        else:
            idle = self.server.idle_timeout
            self.deadline = float("inf") if idle is None else time.monotonic() + idle

    def _refuse(self, status: HTTPStatus, reason: str) -> None:
        """An error the connection cannot go on after (the rest of the request was not
        read): answer it, then close."""
        if self.closed:
            return
        body = _encode({"error": reason})
        self._write(_response(status, body, close=True))
        self.server._log(self.peer, "-", status, len(body))
        self._close()

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _close(self) -> None:
        """Close after what was written has left."""
        if not self.closed:
            self.closed = True
            self.server._forget(self)
            if self.transport is not None:
                self.transport.close()

    def _abort(self) -> None:
        """Close now, dropping anything unsent."""
        if not self.closed:
            self.closed = True
            self.server._forget(self)
            if self.transport is not None:
                self.transport.abort()

    def _expire(self) -> None:
        """Its deadline passed: a request cut short gets 408, an idle one just closes."""
        if self.requests.started:
            self._refuse(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the request did not arrive within {self.server.request_timeout:g} s",
            )
        else:
            self._abort()


class _Job:
    """A verified connection waiting for, or served by, a ``_ConnectionThread``: its
    socket, its reader and the verified request it carried."""

    __slots__ = ("head", "peer", "request", "requests", "sock")

    def __init__(
        self,
        sock: socket.socket,
        peer: str,
        requests: _Requests,
        head: Head,
        request: dict[str, Any],
    ):
        self.sock = sock
        self.peer = peer
        self.requests = requests
        self.head = head
        self.request = request


class _ConnectionThread(threading.Thread):
    """Serves a connection that has carried a verified request (the arena's) with
    blocking reads, as long as it stays open: each request wakes one thread, which calls
    the bot (within the server's capacity) and answers.  Handing every request from the
    front end's loop to a pool of bot threads instead cost two thread switches, 50-60 us
    per request on loopback.  When its connection ends, or idles while another verified
    connection waits for a thread, the thread takes that one."""

    def __init__(self, server: BotServer, job: _Job):
        super().__init__(name="arenabot-connection", daemon=True)
        self.server = server
        self.job = job
        self.idle_since: float | None = None  # waiting for a request that has not begun

    def run(self) -> None:
        job: _Job | None = self.job
        try:
            while job is not None:
                self.job = job
                try:
                    self._serve(job)
                except OSError:
                    pass  # the client went away, or the server closed the connection
                finally:
                    job.sock.close()
                job = self.server._next_job(self)
        finally:
            self.server._thread_done(self)

    def close(self) -> None:
        """End the connection from another thread: the thread's read returns at once."""
        with contextlib.suppress(OSError):
            self.job.sock.shutdown(socket.SHUT_RDWR)

    def _serve(self, job: _Job) -> None:
        server = self.server
        head, request = job.head, job.request
        while True:
            status, data = server.answer(head.path, request)
            if not self._send(job, head, status, data):
                return
            while True:  # requests the front end's checks answer, until one for the bot
                found = self._read(job)
                if found is None:
                    return
                head, body = found
                checked = server._check(head, body)
                if isinstance(checked, dict):
                    request = checked
                    break
                if not self._send(job, head, *checked):
                    return

    def _send(self, job: _Job, head: Head, status: HTTPStatus, body: bytes) -> bool:
        """Answer; whether the connection goes on."""
        job.sock.settimeout(self.server.request_timeout)  # a client that does not read
        job.sock.sendall(_response(status, body, head.close))
        self.server._log(job.peer, head.requestline, status, len(body))
        return not head.close

    def _refuse(self, job: _Job, status: HTTPStatus, reason: str) -> None:
        body = _encode({"error": reason})
        with contextlib.suppress(OSError):
            job.sock.settimeout(self.server.request_timeout)
            job.sock.sendall(_response(status, body, close=True))
        self.server._log(job.peer, "-", status, len(body))

    def _read(self, job: _Job) -> tuple[Head, bytes] | None:
        """The next request; None when the connection is to close (after answering a
        request that cannot be read), or to give way to a connection waiting for a
        thread."""
        requests, server, sock = job.requests, self.server, job.sock
        deadline: float | None = None
        while True:
            try:
                found = requests.next()
            except HeadError as exc:
                self._refuse(job, exc.status, exc.reason)
                return None
            if found is not None:
                return found
            if requests.wants_continue:
                requests.wants_continue = False
                sock.settimeout(server.request_timeout)
                sock.sendall(_CONTINUE)
            if requests.started:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + server.request_timeout
                sock.settimeout(max(deadline - now, 0.001))
            else:
                if not server._idle(self):
                    return None  # a verified connection waits for this thread
                sock.settimeout(server.idle_timeout)
            try:
                data = sock.recv(65536)
            except TimeoutError:
                if requests.started:
                    self._refuse(
                        job,
                        HTTPStatus.REQUEST_TIMEOUT,
                        f"the request did not arrive within {server.request_timeout:g} s",
                    )
                return None
            finally:
                self.idle_since = None
            if not data:
                return None
            requests.feed(data)


class BotService:
    """The bot behind a transport: checks each of the arena's requests as the protocol
    says (signature, timestamp, fields, ``request_id``) and calls the bot within its
    capacity.  ``BotServer`` (the bot's own HTTP endpoint) and ``ConnectClient`` (the bot
    connecting out to the arena, ``arenabot.connect``) are both one: what a request is
    answered does not depend on the transport that carried it.  No sockets here.

    ``capacity`` is how many requests the bot is given at once (``GET /`` says it): 1
    for a bot that is not thread-safe, whose calls then come one at a time, else
    ``threads`` (default ``DEFAULT_THREADS``)."""

    def __init__(
        self,
        bot: Bot,
        *,
        secret: str | None = None,
        max_skew: float = DEFAULT_MAX_SKEW,
        max_request_ids: int = REPLAY_MEMORY,
        threads: int | None = None,
    ):
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise ValueError(f"threads must be at least 1, not {threads!r}")
        if threads is not None and threads > 1 and not bot.thread_safe:
            raise ValueError(
                f"{bot.name} is not thread-safe: it takes one request at a time (declare "
                "it thread-safe to give it more threads)"
            )
        self.bot = bot
        self.secret = secret
        self.max_skew = max_skew
        # while there is a secret (it may be set later), a signed request's request_id
        # must be new: one accepted already is a replay (401)
        self.replay_guard = ReplayGuard(max_skew, max_request_ids)
        self.capacity = (threads or DEFAULT_THREADS) if bot.thread_safe else 1
        # the bot's calls: one at a time, or up to its capacity at once
        self._bot_slots: contextlib.AbstractContextManager[Any] = (
            threading.BoundedSemaphore(self.capacity) if bot.thread_safe else threading.Lock()
        )

    def info(self) -> dict[str, Any]:
        """The answer to ``GET /``: the bot's ``info()`` and the server's ``capacity``."""
        return {**self.bot.info(), "capacity": self.capacity}

    def dispatch(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        """Call the bot for a checked request; the answer to send back."""
        if path == "/act":
            return make_answer(self.bot.on_act(request))
        if path == "/start":
            self.bot.start(request)
        else:
            self.bot.end(request)
        return {}

    def check(
        self, path: str, timestamp: str | None, signature: str | None, body: bytes
    ) -> tuple[HTTPStatus, bytes] | dict[str, Any]:
        """A ``POST`` of the arena with its two signature headers and raw body: the
        answer to give it at once (status and JSON body: 401, 400, 404), or, for a
        verified request to the bot, the request (its ``request_id`` is then spent)."""
        fields = REQUIRED_FIELDS.get(path)
        if fields is None:
            return HTTPStatus.NOT_FOUND, _encode({"error": f"no such path: {path}"})
        secret = self.secret  # it may be set while serving
        if secret is not None:
            try:
                verify(secret, timestamp, signature, body, max_skew=self.max_skew)
            except SignatureError as exc:
                return HTTPStatus.UNAUTHORIZED, _encode({"error": str(exc)})
        request, problem = _parse(body, fields)
        if problem is not None:
            return HTTPStatus.BAD_REQUEST, _encode({"error": problem})
        if secret is not None:
            try:  # signed, well formed: is it new?
                self.replay_guard.check(request.get(REQUEST_ID_FIELD), timestamp)
            except SignatureError as exc:
                return HTTPStatus.UNAUTHORIZED, _encode({"error": str(exc)})
        return request

    def answer(self, path: str, request: dict[str, Any]) -> tuple[HTTPStatus, bytes]:
        """The bot's answer to a verified request (status and JSON body), within the
        bot's capacity: a bot exception, or an answer that is not JSON, is a 500."""
        with self._bot_slots:
            try:
                return HTTPStatus.OK, _encode(self.dispatch(path, request))
            except Exception as exc:
                return _bot_error(exc)


class BotServer(BotService):
    """A bot behind HTTP.  ``serve_forever()`` serves from the calling thread,
    ``serve_in_background()`` from a new one; ``close()`` stops it, closes the open
    connections and waits (5 s at most) for the bot's calls in progress.

    ``capacity`` is how many requests the bot is given at once (see ``BotService``).
    The listening socket is bound when the server is made (``port``, ``url``)."""

    def __init__(
        self,
        address: tuple[str, int],
        bot: Bot,
        *,
        secret: str | None = None,
        max_skew: float = DEFAULT_MAX_SKEW,
        max_body: int = MAX_BODY,
        idle_timeout: float | None = IDLE_TIMEOUT,
        verbose: bool = False,
        max_request_ids: int = REPLAY_MEMORY,
        threads: int | None = None,
        request_timeout: float = REQUEST_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        max_buffered: int = MAX_BUFFERED,
        max_verified: int = MAX_VERIFIED,
    ):
        if request_timeout <= 0 or max_connections < 1 or max_verified < 1:
            raise ValueError("request_timeout, max_connections and max_verified must be positive")
        super().__init__(
            bot,
            secret=secret,
            max_skew=max_skew,
            max_request_ids=max_request_ids,
            threads=threads,
        )
        self.max_body = max_body
        self.idle_timeout = idle_timeout
        self.verbose = verbose
        self.request_timeout = request_timeout
        open_files = _raise_open_files_limit(max_connections + 1024)
        # the bound stays clear of the limit: a refused accept() stalls asyncio for 1 s
        self.max_connections = max(1, min(max_connections, open_files - max(64, open_files // 8)))
        self.max_verified = min(max_verified, self.max_connections)
        self.max_buffered = max(max_buffered, 2 * max_body)
        self._open: dict[_Connection, None] = {}  # the front end's, oldest first
        self._buffered = 0  # bytes in their buffers
        self._threads: set[_ConnectionThread] = set()  # verified connections
        self._waiting: collections.deque[_Job] = collections.deque()  # for a thread
        self._threads_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._serving = False
        self._thread: threading.Thread | None = None
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            if os.name == "posix":  # restart at once on a port left in TIME_WAIT
                self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind(address)
            self.socket.listen(BACKLOG)
        except BaseException:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = self.server_address[0]
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    # -- running and stopping --------------------------------------------------------------
    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until ``shutdown()`` or ``close()`` (``poll_interval`` is not used: the
        loop wakes when told to stop)."""
        self._serving = True
        self._stopped.clear()
        try:
            with asyncio.Runner() as runner:
                runner.run(self._serve())
        finally:
            self._serving = False
            self._stopped.set()

    def serve_in_background(self) -> threading.Thread:
        """Serve from a daemon thread (tests, notebooks); returns that thread."""
        self._stopped.clear()
        thread = threading.Thread(target=self.serve_forever, name="arenabot-server", daemon=True)
        self._thread = thread
        thread.start()
        return thread

    def shutdown(self) -> None:
        """Stop ``serve_forever`` (from another thread) and wait until it has returned."""
        self._stopping.set()
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(wake.set)
        if self._serving or self._thread is not None:
            self._stopped.wait()

    def close(self) -> None:
        """Stop accepting, end every open connection and wait for the bot's calls."""
        if self._serving or self._thread is not None:
            self.shutdown()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.socket.close()

    def __enter__(self) -> BotServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._loop = loop  # published after the event: shutdown() needs both
        if self._stopping.is_set():
            return
        listener = await loop.create_server(
            lambda: _Connection(self), sock=self.socket, backlog=BACKLOG
        )
        sweeper = asyncio.ensure_future(self._sweep())
        try:
            await self._wake.wait()
        finally:
            sweeper.cancel()
            listener.close()
            for conn in list(self._open):
                conn._abort()
            await asyncio.sleep(0)  # their connection_lost callbacks
            with self._threads_lock:
                threads = list(self._threads)
                waiting, self._waiting = list(self._waiting), collections.deque()
            for job in waiting:
                job.sock.close()
            for thread in threads:
                thread.close()
            give_up = time.monotonic() + 5.0  # a bot's call may still be running
            for thread in threads:
                thread.join(max(give_up - time.monotonic(), 0))
            self._loop = None

    async def _sweep(self) -> None:
        """Close the front end's connections whose deadline has passed."""
        period = min(1.0, self.request_timeout / 4)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for conn in [c for c in self._open if c.deadline <= now]:
                conn._expire()

    # -- the bounds (in the front end's thread) ---------------------------------------------
    def _admit(self, conn: _Connection) -> None:
        """A new connection: past ``max_connections``, make room by closing the front
        end's oldest connection; if there is none (every connection is verified), close
        the new one."""
        held = len(self._open) + len(self._threads) + len(self._waiting)
        if held >= self.max_connections:
            if not self._open:
                conn._abort()
                return
            next(iter(self._open))._abort()
        self._open[conn] = None

    def _account(self, conn: _Connection, received: int) -> bool:
        """``received`` more bytes in a connection's buffer; past ``max_buffered`` in
        all, close the oldest connections until the buffers fit.  Whether ``conn``
        itself was closed."""
        self._buffered += received
        while self._buffered > self.max_buffered and self._open:
            oldest = next(iter(self._open))
            oldest._abort()
            if oldest is conn:
                return True
        return False

    def _forget(self, conn: _Connection) -> None:
        if self._open.pop(conn, False) is None:
            self._buffered -= len(conn.requests.buffer)

    def _thread_for(
        self,
        sock: socket.socket,
        peer: str,
        requests: _Requests,
        head: Head,
        request: dict[str, Any],
    ) -> None:
        """Serve a verified connection from a thread of its own.  Past ``max_verified``
        such threads it waits for one: the verified connection idle the longest is
        closed to make room, or else the next thread to finish a request takes it."""
        job = _Job(sock, peer, requests, head, request)
        with self._threads_lock:
            if len(self._threads) < self.max_verified:
                thread = _ConnectionThread(self, job)
                self._threads.add(thread)
            else:
                thread = None
                self._waiting.append(job)
                idle = [t for t in self._threads if t.idle_since is not None]
                if idle:
                    min(idle, key=lambda t: t.idle_since or 0.0).close()
        if thread is not None:
            thread.start()

    def _idle(self, thread: _ConnectionThread) -> bool:
        """``thread``'s connection is about to wait for its next request: whether it may
        (no verified connection is waiting for a thread)."""
        with self._threads_lock:
            if self._waiting:
                return False
            thread.idle_since = time.monotonic()
            return True

    def _next_job(self, thread: _ConnectionThread) -> _Job | None:
        """The connection ``thread`` serves next, or None: it ends."""
        with self._threads_lock:
            if self._waiting and not self._stopping.is_set():
                return self._waiting.popleft()
            self._threads.discard(thread)
            return None

    def _thread_done(self, thread: _ConnectionThread) -> None:
        with self._threads_lock:
            self._threads.discard(thread)

    # -- checks, calls and answers -----------------------------------------------------------
    def _check(self, head: Head, body: bytes) -> tuple[HTTPStatus, bytes] | dict[str, Any]:
        """A complete request: the answer to give it at once (status and body), or, for
        a verified request to the bot, the request."""
        if head.method == "GET":
            if head.path == "/":
                return self._info()
            return HTTPStatus.NOT_FOUND, _encode({"error": f"no such path: {head.path}"})
        headers = head.headers
        return self.check(
            head.path, headers.get(TIMESTAMP_HEADER), headers.get(SIGNATURE_HEADER), body
        )

    def _info(self) -> tuple[HTTPStatus, bytes]:
        try:
            return HTTPStatus.OK, _encode(self.info())
        except Exception as exc:
            return _bot_error(exc)

    def _log(self, peer: str, requestline: str, status: HTTPStatus, size: int) -> None:
        if self.verbose:
            when = time.strftime("%d/%b/%Y %H:%M:%S")
            print(f'{peer} - - [{when}] "{requestline}" {status.value} {size}', file=sys.stderr)


def _bot_error(exc: Exception) -> tuple[HTTPStatus, bytes]:
    traceback.print_exc()  # the bot's author wants to see their bug
    text = f"the bot raised {type(exc).__name__}: {exc}"[:ERROR_TEXT_CAP]
    return HTTPStatus.INTERNAL_SERVER_ERROR, _encode({"error": text})


def _raise_open_files_limit(wanted: int) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` (never above
    the hard limit, never down); the soft limit then."""
    try:
        import resource
    except ImportError:  # not a Unix system
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    if soft >= wanted:
        return soft
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    for limit in (target, min(target, 10240)):  # macOS refuses more than OPEN_MAX
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
            return limit
    return soft


def _parse(body: bytes, fields: Sequence[str]) -> tuple[dict[str, Any], str | None]:
    """The request object, or a reason for a 400."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return {}, "the body is not UTF-8 JSON"
    # Python's parser recurses once per level: measure the nesting before parsing
    brackets = text.count("[") + text.count("{")  # fewer than the limit: nothing to measure
    if brackets > MAX_JSON_DEPTH and json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return {}, f"the body is nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        request = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: never past the check above
        return {}, "the body is not UTF-8 JSON"
    if not isinstance(request, dict):
        return {}, "the body must be a JSON object"
    missing = [f for f in fields if f not in request]
    if missing:
        return {}, f"missing field(s): {', '.join(missing)}"
    if "legal_actions" in fields and not (
        isinstance(request["legal_actions"], list) and request["legal_actions"]
    ):
        return {}, "legal_actions must be a non-empty list"
    return request, None


def _encode(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def make_server(
    bot: Bot | ActFunction,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    secret: str | None = None,
    max_skew: float = DEFAULT_MAX_SKEW,
    *,
    max_body: int = MAX_BODY,
    idle_timeout: float | None = IDLE_TIMEOUT,
    verbose: bool = False,
    max_request_ids: int = REPLAY_MEMORY,
    threads: int | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
    max_buffered: int = MAX_BUFFERED,
    max_verified: int = MAX_VERIFIED,
) -> BotServer:
    """A bound server for ``bot`` (a ``Bot`` or a function ``act(view, legal_actions)``:
    see ``as_bot``), not yet serving (port 0 picks a free port).  Without
    a secret, requests are not checked: for local development only.  With one, every
    POST must be signed and carry a ``request_id`` not seen before (``max_request_ids``
    bounds the memory of those ids: see ``ReplayGuard``).

    ``threads``: how many requests a thread-safe bot is given at once (its capacity,
    default ``DEFAULT_THREADS``); a bot that is not thread-safe gets one.  The other
    limits are described in the module's docstring."""
    bot = as_bot(bot)
    if not secret:
        secret = None
        print(
            f"arenabot: {bot.name} has no secret: request signatures are NOT checked "
            f"(local development only; pass --secret or set {SECRET_ENV})",
            file=sys.stderr,
        )
    return BotServer(
        (host, port),
        bot,
        secret=secret,
        max_skew=max_skew,
        max_body=max_body,
        idle_timeout=idle_timeout,
        verbose=verbose,
        max_request_ids=max_request_ids,
        threads=threads,
        request_timeout=request_timeout,
        max_connections=max_connections,
        max_buffered=max_buffered,
        max_verified=max_verified,
    )


def serve(
    bot: Bot | ActFunction,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    secret: str | None = None,
    max_skew: float = DEFAULT_MAX_SKEW,
    *,
    verbose: bool = False,
    threads: int | None = None,
) -> None:
    """Serve ``bot`` until interrupted (Ctrl-C or SIGTERM), then close cleanly."""
    server = make_server(bot, host, port, secret, max_skew, verbose=verbose, threads=threads)
    print(
        f"arenabot: {server.bot.name} {server.bot.version} listening on {server.url}",
        file=sys.stderr,
    )
    previous = None
    if threading.current_thread() is threading.main_thread():
        # a container stops its process with SIGTERM: close as on Ctrl-C
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(bot: Bot | ActFunction, argv: Sequence[str] | None = None, **info: Any) -> None:
    """The command line of a bot module: ``--port`` (default 9000), ``--host``,
    ``--secret`` (default: the ``ARENA_BOT_SECRET`` environment variable),
    ``--max-skew``, ``--threads`` (a thread-safe bot's capacity), ``--verbose``; or, to
    play with no listening socket by connecting out to the arena, ``--connect URL
    --bot-id ID`` (defaults: ``ARENA_SERVER`` and ``ARENA_BOT_ID``, whose being set
    selects that mode; see ``arenabot.connect``), which exits with its status.
    ``bot`` is a ``Bot`` or a function ``act(view, legal_actions)``; for a function,
    ``info`` gives its ``name``, ``author``, ``version``, ``games`` and ``thread_safe``
    (``run(act, name="mine", games=["cactus"])``)."""
    from arenabot.connect import BOT_ID_ENV, SERVER_ENV

    bot = as_bot(bot, **info)
    parser = argparse.ArgumentParser(
        description=f"Serve the bot {bot.name!r} over HTTP, or connect it to an arena."
    )
    parser.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=None, help=f"port to listen on (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"the secret shared with the arena (default: ${SECRET_ENV})",
    )
    parser.add_argument(
        "--max-skew",
        type=float,
        default=DEFAULT_MAX_SKEW,
        help="seconds a request's timestamp may be away from this clock",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="requests a thread-safe bot is given at once, its declared capacity "
        f"(default {DEFAULT_THREADS}; a bot that is not thread-safe takes one)",
    )
    parser.add_argument("--verbose", action="store_true", help="log every request")
    parser.add_argument(
        "--connect",
        metavar="URL",
        default=None,
        help="connect out to the arena at URL instead of listening: no port is opened "
        f"(default: ${SERVER_ENV} when ${BOT_ID_ENV} is set)",
    )
    parser.add_argument(
        "--bot-id",
        metavar="ID",
        default=None,
        help=f"the bot's id at the arena, to connect (default: ${BOT_ID_ENV})",
    )
    args = parser.parse_args(argv)
    mistake = None
    if args.threads is not None and args.threads < 1:
        mistake = f"--threads must be at least 1, not {args.threads}"
    elif args.threads is not None and args.threads > 1 and not bot.thread_safe:
        mistake = (
            f"--threads {args.threads}: {bot.name} is not thread-safe, it takes one request "
            "at a time (declare it thread_safe first: see the SDK's README)"
        )
    if mistake is not None:
        parser.exit(2, f"{parser.prog}: error: {mistake}\n")
    kwargs: dict[str, Any] = {"verbose": args.verbose}
    if args.threads is not None:
        kwargs["threads"] = args.threads
    env_bot_id = os.environ.get(BOT_ID_ENV) or None
    if args.connect is not None or args.bot_id is not None or env_bot_id is not None:
        status = _run_connected(bot, parser, args, env_bot_id, kwargs)
        if status:
            raise SystemExit(status)
        return
    host = "127.0.0.1" if args.host is None else args.host
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        serve(bot, host, port, args.secret, args.max_skew, **kwargs)
    except OSError as exc:  # binding: the port is taken, or the address is not this machine's
        parser.exit(
            2,
            f"{parser.prog}: error: cannot listen on {host}:{port}: "
            f"{exc.strerror or exc} (another port: --port N)\n",
        )


def _run_connected(
    bot: Bot,
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    env_bot_id: str | None,
    kwargs: dict[str, Any],
) -> int:
    """``run`` in connect mode: the command line's mistakes (one line, status 2), then
    the connect client's exit status."""
    from arenabot.connect import BOT_ID_ENV, SERVER_ENV, ConnectClient, ConnectError

    url = args.connect or os.environ.get(SERVER_ENV)
    bot_id = args.bot_id if args.bot_id is not None else env_bot_id
    from_env = args.connect is None and args.bot_id is None  # ARENA_BOT_ID chose the mode
    mistake = None
    if args.host is not None or args.port is not None:
        flag = "--host" if args.host is not None else "--port"
        serve_instead = f"unset ${BOT_ID_ENV}" if from_env else "leave out --connect and --bot-id"
        mistake = (
            f"{flag}: a bot that connects to the arena listens on no port (to serve on a "
            f"port, {serve_instead})"
        )
    elif not url:
        mistake = f"to connect, give the arena's address: --connect URL (or ${SERVER_ENV})"
    elif bot_id is None:
        mistake = f"to connect, give the bot's id at the arena: --bot-id ID (or ${BOT_ID_ENV})"
    elif not (bot_id.isascii() and bot_id.isdigit()):
        mistake = f"--bot-id is the bot's number at the arena, not {bot_id!r}"
    elif not args.secret:
        mistake = (
            f"to connect, give the bot's signing secret: --secret S (or ${SECRET_ENV}); "
            "the bot signs its polls with it"
        )
    if mistake is not None:
        parser.exit(2, f"{parser.prog}: error: {mistake}\n")
    try:
        client = ConnectClient(
            bot,
            url,
            int(bot_id),
            args.secret,
            max_skew=args.max_skew,
            **kwargs,
        )
    except ConnectError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    return client.run()
