"""The bot's HTTP server: standard library only, HTTP/1.1 keep-alive.

This module holds ``BotServer`` (the listening socket, the event loop, the bounds on
connections and buffered bytes), ``make_server``, ``serve`` and ``run`` (a bot module's
command line); the rest is split at its seams: ``arenabot.wire`` (a request's head and
body read within their caps, a response as one write), ``arenabot.service`` (the checks
of each of the arena's requests and the calls to the bot, shared with
``arenabot.connect``) and ``arenabot.connections`` (the front end's connections and the
threads of verified ones).

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
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from arenabot.bot import ActFunction, Bot, as_bot
from arenabot.connections import _Connection, _ConnectionThread, _Job
from arenabot.protocol import (
    DEFAULT_MAX_SKEW,
    MAX_BODY,
    REPLAY_MEMORY,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
)
from arenabot.service import (
    DEFAULT_THREADS,
    ERROR_TEXT_CAP,
    SECRET_ENV,
    BotService,
    _bot_error,
    _encode,
    _parse,
)
from arenabot.wire import (
    MAX_HEAD,
    MAX_HEADERS,
    SERVER_HEADER,
    Head,
    HeadError,
    Headers,
    _Requests,
    _response,
    read_head,
)

# the server's own names, and those of its parts that it keeps giving (``arenabot.server.X``
# and ``from arenabot.server import X`` work as before the parts were split out)
__all__ = [
    "BACKLOG",
    "DEFAULT_PORT",
    "DEFAULT_THREADS",
    "ERROR_TEXT_CAP",
    "IDLE_TIMEOUT",
    "MAX_BUFFERED",
    "MAX_CONNECTIONS",
    "MAX_HEAD",
    "MAX_HEADERS",
    "MAX_VERIFIED",
    "REQUEST_TIMEOUT",
    "SECRET_ENV",
    "SERVER_HEADER",
    "BotServer",
    "BotService",
    "Head",
    "HeadError",
    "Headers",
    "_Requests",
    "_bot_error",
    "_encode",
    "_parse",
    "_response",
    "make_server",
    "read_head",
    "run",
    "serve",
]

DEFAULT_PORT = 9000  # not 8000: that is the arena's own web server
REQUEST_TIMEOUT = 10.0  # seconds a request may take to arrive, from its first byte
IDLE_TIMEOUT = 300.0  # seconds a keep-alive connection may stay idle before the bot closes it
MAX_CONNECTIONS = 4096  # open connections (fewer if the limit of open files is lower)
MAX_BUFFERED = 64 * 1024 * 1024  # bytes of requests being read on unproven connections
BACKLOG = 1024  # connections the system may queue before the server accepts them
MAX_VERIFIED = 256  # connections that carried a verified request, each served by a thread


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
            self.notices.refused(f"GET {head.path}", "path", "no such path")
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
