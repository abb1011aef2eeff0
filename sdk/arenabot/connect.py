"""The connect transport, bot side: the bot opens the connections itself, to the arena's
own address, for a laptop or a network that no arena can call (the repository's
``docs/protocol.md``, "Playing from a laptop").  HTTP long-poll over ``http.client``:
standard library only, TLS with the system's certificates, and no listening socket.

``ConnectClient(bot, url, bot_id, secret).run()`` opens the bot's session, then keeps
``capacity`` polls open, each from a thread of its own on one keep-alive connection.  A
poll's answer brings at most one of the arena's requests; a ``BotService``, the HTTP
server's own, checks it (signature, timestamp skew, ``request_id``) and calls the bot
within its capacity (a bot that is not thread-safe is never called twice at once); the
answer rides in that thread's next poll.  A poll that fails (a network drop, a 5xx)
is sent again after a short wait (0.1 s doubling up to 3 s, with jitter), carrying the
answers that no poll's 200 has acknowledged yet.

Ctrl-C or SIGTERM drains: every poll says ``"draining": true`` from then on (one more is
sent at once so that the arena knows), the arena starts no new match and the matches in
play are played to their end; when a poll answers ``playing`` 0 the session is closed.
A second Ctrl-C stops at once.  ``run`` returns the process's exit status: 0 drained
(or the arena closed the session while draining); 1 another copy of the bot opened a
session and replaced this one; 2 the arena refused the bot (its id, secret, clock or
info), is not an arena, or could not be reached at start within ``start_wait``
seconds; 130 interrupted before draining could finish.  Each is said in one line on
stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import secrets
import signal
import socket
import ssl
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from arenabot.bot import ActFunction, Bot, as_bot
from arenabot.protocol import (
    DEFAULT_MAX_SKEW,
    MAX_BODY,
    MAX_REQUEST_ID,
    REQUEST_ID_FIELD,
    SDK_VERSION,
    signed_headers,
)
from arenabot.service import SECRET_ENV, BotService, Notices, _encode, _parse

SERVER_ENV = "ARENA_SERVER"  # the arena's address (the arena's own command line reads it too)
BOT_ID_ENV = "ARENA_BOT_ID"  # the bot's id at the arena: its being set selects connect mode
SESSION_PATH = "/api/connect/session"
POLL_PATH = "/api/connect/poll"
CLOSE_PATH = "/api/connect/close"

DEFAULT_POLL_SECONDS = 25.0  # how long the arena holds a poll, unless the session says
POLL_GRACE = 10.0  # seconds a poll may take beyond that before it counts as lost
CONNECT_TIMEOUT = 10.0  # seconds to open a connection, and for the session and close calls
START_WAIT = 10.0  # seconds the first session is tried on an arena that is down
BACKOFF_FIRST = 0.1  # seconds before the first retry; doubled after each failure...
BACKOFF_CAP = 3.0  # ...up to this, each wait drawn between half of it and all of it
DRAIN_CALLS_WAIT = 5.0  # seconds the bot's calls in progress may take before the close
MAX_ANSWER = 6 * MAX_BODY + 65536  # bytes of a poll's answer (a body is escaped in it)

EXIT_DRAINED = 0
EXIT_REPLACED = 1
EXIT_REFUSED = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it

_FAILURES = (OSError, http.client.HTTPException)  # a connection that failed or was cut
_jitter = random.Random()


class ConnectError(Exception):
    """Why the bot cannot play over connect (one line to show) and the exit status."""

    def __init__(self, message: str, status: int = EXIT_REFUSED):
        super().__init__(message)
        self.status = status


class _Interrupted(Exception):
    """Stopped while waiting: the second Ctrl-C, or a fatal answer on another thread."""


class _Link:
    """One keep-alive connection to the arena, opened again after a failure."""

    def __init__(self, client: ConnectClient):
        self.client = client
        self.conn: http.client.HTTPConnection | None = None

    def post(self, path: str, body: bytes, timeout: float) -> _Answer:
        """Send a signed ``POST`` and read its answer; ``_FAILURES`` when the connection
        fails or is cut (the link is then closed, to be opened again)."""
        client = self.client
        try:
            if self.conn is None:
                self.conn = client._connection()
            conn = self.conn
            if conn.sock is None:  # new, or closed by a "Connection: close"
                conn.connect()
            assert conn.sock is not None
            conn.sock.settimeout(timeout)
            headers = {
                "Content-Type": "application/json",
                "User-Agent": f"arenabot/{SDK_VERSION}",
                **signed_headers(client.secret, body),
            }
            conn.request("POST", client.prefix + path, body, headers)
            response = conn.getresponse()
            data = response.read(MAX_ANSWER + 1)
            if len(data) > MAX_ANSWER:
                raise http.client.HTTPException(f"an answer over {MAX_ANSWER} bytes")
        except BaseException:
            self.close()
            raise
        if response.will_close:
            self.close()
        return _Answer(response.status, data, response.getheader("Content-Type") or "", response)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def abort(self) -> None:
        """Cut the connection from another thread: a read in progress returns at once."""
        conn = self.conn
        sock = conn.sock if conn is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Answer:
    """The arena's answer to one call: its status, and its body as a JSON object
    (``payload``, None when it is not one)."""

    __slots__ = ("content_type", "payload", "response", "status")

    def __init__(
        self, status: int, data: bytes, content_type: str, response: http.client.HTTPResponse
    ):
        self.status = status
        self.content_type = content_type
        self.response = response
        try:
            payload = json.loads(data.decode("utf-8")) if data else None
        except (ValueError, RecursionError):
            payload = None
        self.payload: dict[str, Any] | None = payload if isinstance(payload, dict) else None

    @property
    def message(self) -> str:
        """The arena's words for a refusal (the API's ``message``), or its status."""
        payload = self.payload or {}
        text = payload.get("message") or payload.get("error")
        if isinstance(text, str) and text:
            return text[:300]
        return f"HTTP {self.status}"


class ConnectClient:
    """A bot playing over connect: ``run()`` blocks until the bot stops and returns the
    process's exit status (see the module's docstring); ``drain()`` (thread-safe) does
    what Ctrl-C does, ``stop()`` what a second Ctrl-C does.  Signals are handled only
    when ``run`` is called from the main thread.

    ``bot`` is a ``Bot`` or a function ``act(view, legal_actions)``; ``url`` the arena's
    address (``http(s)://host[:port][/prefix]``); ``bot_id`` and ``secret`` its
    registration's.  ``threads``, ``max_skew`` and ``max_request_ids`` mean what they
    mean for ``make_server``.  ``ConnectError`` for an address that is not one."""

    def __init__(
        self,
        bot: Bot | ActFunction,
        url: str,
        bot_id: int,
        secret: str,
        *,
        max_skew: float = DEFAULT_MAX_SKEW,
        threads: int | None = None,
        verbose: bool = False,
        start_wait: float = START_WAIT,
        backoff_cap: float = BACKOFF_CAP,
        stderr: Callable[[str], None] | None = None,
    ):
        if not secret:
            raise ConnectError(
                f"a bot that connects needs its signing secret (--secret or ${SECRET_ENV})"
            )
        if isinstance(bot_id, bool) or not isinstance(bot_id, int) or bot_id < 0:
            raise ConnectError(f"the bot id is the bot's number at the arena, not {bot_id!r}")
        self._write = stderr or _stderr
        # the requests it refuses and the answers it gives late are said where the rest is
        self.service = BotService(
            as_bot(bot),
            secret=secret,
            max_skew=max_skew,
            threads=threads,
            notices=Notices(self._say),
        )
        self.bot = self.service.bot
        self.bot_id = bot_id
        self.secret = secret
        self.verbose = verbose
        self.start_wait = start_wait
        self.backoff_cap = backoff_cap
        parts = urlsplit(url.strip())
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise ConnectError(
                f"{url!r} is not an arena's address: give http://host:port or https://host "
                f"(--connect or ${SERVER_ENV})"
            )
        self.url = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
        self.tls = parts.scheme == "https"
        # the system's certificates (SSL_CERT_FILE and SSL_CERT_DIR are honoured), read once
        self._tls_context = ssl.create_default_context() if self.tls else None
        self.host = parts.hostname
        self.port = port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        self.poll_seconds = DEFAULT_POLL_SECONDS
        self.playing: int | None = None  # the last poll's count of the bot's matches
        # shared by the threads: the session, and what the main thread must do next
        self._lock = threading.Lock()
        self._session_changed = threading.Condition(self._lock)
        self._token: str | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._draining = False
        self._closing = False
        self._drained = False
        self._session_lost = False
        self._outcome: tuple[int, str | None] | None = None
        self._signals = 0
        self._calls = 0  # the bot's calls in progress
        self._calls_done = threading.Condition(threading.Lock())
        self._reachable = True
        self._loops: list[_PollLoop] = []

    # -- the public controls -----------------------------------------------------------------
    def run(self) -> int:
        """Play until drained, replaced, refused or interrupted; the exit status."""
        previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                previous[signum] = signal.signal(signum, self._on_signal)
        try:
            return self._run()
        except (KeyboardInterrupt, _Interrupted):
            return EXIT_INTERRUPTED if self._outcome is None else self._outcome[0]
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._halt()

    def drain(self) -> None:
        """Start no new match; stop once the matches in play are over."""
        self._draining = True
        self._wake.set()

    def stop(self, status: int = EXIT_INTERRUPTED, message: str | None = None) -> None:
        """Stop at once (the bot's calls in progress are not waited for)."""
        self._finish(status, message)

    # -- the main thread ---------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: object) -> None:
        # a flag only, no lock (not even an Event's): the handler runs in the main thread,
        # which may hold that lock at that moment; the main loop looks 4 times a second
        self._signals += 1
        if self._signals > 1 or self._token is None:
            raise KeyboardInterrupt  # a second one, or nothing to drain yet: at once
        self._draining = True

    def _run(self) -> int:
        try:
            replaced = self._open_session(self.start_wait)
        except ConnectError as exc:
            self._say(str(exc))
            return exc.status
        bot = self.bot
        capacity = self.service.capacity
        polls = "1 poll" if capacity == 1 else f"{capacity} polls"
        self._say(
            f"{bot.name} {bot.version} connected to {self.url} as bot {self.bot_id}: "
            f"{polls} open, no listening socket (Ctrl-C drains)"
        )
        if replaced:
            self._say(
                "this session replaced an earlier one of the bot "
                "(a copy still running with it stops)"
            )
        self._loops = [_PollLoop(self) for _ in range(capacity)]
        for loop in self._loops:
            loop.start()
        notice_sent = False
        while True:
            self._wake.wait(0.25)  # a timeout: a signal handler sets flags only
            self._wake.clear()
            if self._outcome is not None:
                status, message = self._outcome
                if message:
                    self._say(message)
                return status
            if self._draining and not notice_sent:
                notice_sent = True
                # the count once an answer of the arena has said it (not before)
                in_play = (
                    "the matches in play are finished first"
                    if self.playing is None
                    else f"matches in play: {self.playing}"
                )
                self._say(
                    f"draining: the arena starts no new match; {in_play} "
                    "(Ctrl-C again to stop at once)"
                )
                notice = _PollLoop(self, notice=True)
                self._loops.append(notice)
                notice.start()
            if self._drained:
                self._wait_for_calls(DRAIN_CALLS_WAIT)
                self._close_session()
                self._say("drained: every match is over, session closed")
                return EXIT_DRAINED
            if self._session_lost:
                self._reopen()

    def _open_session(self, wait: float | None) -> bool:
        """Open the bot's session (its token for the polls); whether it replaced another.
        ``ConnectError`` for a refusal, or for an arena still unreachable after ``wait``
        seconds (None: try until stopped)."""
        try:
            # what the bot's page shows of the software at the other end
            info = {"sdk": f"arenabot {SDK_VERSION}", **self.service.info()}
            info_body = _encode(info)
        except Exception as exc:
            raise ConnectError(
                f"the bot's info() failed: {type(exc).__name__}: {exc}"[:300]
            ) from None
        link = _Link(self)
        give_up = None if wait is None else time.monotonic() + wait
        failures = 0
        try:
            while True:
                body = b'{"bot_id":%d,"request_id":"%s","info":%s}' % (
                    self.bot_id,
                    _request_id().encode(),
                    info_body,
                )
                try:
                    answer = link.post(SESSION_PATH, body, CONNECT_TIMEOUT)
                except ssl.SSLCertVerificationError as exc:
                    raise ConnectError(
                        f"the arena at {self.url} has a certificate this machine does not "
                        f"trust: {exc.verify_message or exc}"
                    ) from None
                except _FAILURES as exc:
                    problem = f"cannot reach the arena at {self.url}: {_reason(exc)}"
                else:
                    payload = answer.payload
                    if answer.status == 200 and payload and isinstance(payload.get("session"), str):
                        return self._opened(payload)
                    problem = self._refusal(answer, info)  # raises for what will not change
                failures += 1
                if give_up is not None and time.monotonic() >= give_up:
                    raise ConnectError(f"{problem} (tried for {wait:g} s)")
                if failures == 1:
                    self._say(f"{problem}: trying again")
                if self._stop.wait(self._backoff(failures)):
                    raise _Interrupted
        finally:
            link.close()

    def _opened(self, payload: dict[str, Any]) -> bool:
        seconds = payload.get("poll_seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            self.poll_seconds = min(float(seconds), 300.0)
        with self._lock:
            self._token = payload["session"]
            self._session_lost = False
            self._session_changed.notify_all()
        return payload.get("replaced") is True

    def _refusal(self, answer: _Answer, info: dict[str, Any]) -> str:
        """What the session's refusal means: ``ConnectError`` for one that trying again
        will not change, else the words for one that may pass (a 5xx, a 429)."""
        status, bot_id = answer.status, self.bot_id
        kind = answer.content_type.split(";")[0].strip() or "no content type"
        not_arena = (
            f"{self.url} is not an arena: POST {self.prefix}{SESSION_PATH} answered "
            f"HTTP {status} ({kind}); check the address (--connect or ${SERVER_ENV})"
        )
        if 300 <= status < 400:
            where = answer.response.getheader("Location") or "elsewhere"
            raise ConnectError(
                f"{self.url} redirects to {where}: give that address to --connect "
                "(redirects are not followed)"
            )
        if status >= 500 or status == 429:
            return f"the arena at {self.url} answers HTTP {status} ({answer.message})"
        payload = answer.payload
        # the arena's refusals are its API's errors, {"code", "status", "message"}: a
        # web server, or another bot's endpoint, answering 404 (or 401...) is no arena
        if payload is None or payload.get("code") != status or "message" not in payload:
            raise ConnectError(not_arena)
        if status == 401:
            raise ConnectError(
                f"the arena refused bot {bot_id}'s signature ({answer.message}): check the "
                f"bot id and the secret (--bot-id, --secret or ${SECRET_ENV}) and this "
                "machine's clock"
            )
        if status == 404:
            raise ConnectError(f"the arena has no bot {bot_id} that connects ({answer.message})")
        if status == 409:
            raise ConnectError(
                f"bot {bot_id} is registered with an endpoint, not to connect "
                f'({answer.message}): its owner sets {{"connect": true}} with PATCH '
                f"/api/bots/{bot_id}"
            )
        if status == 400:
            games = ",".join(str(g) for g in info.get("games", []))
            raise ConnectError(
                f"the arena refused the bot's info ({answer.message}): it declares games "
                f"[{games}], capacity {info.get('capacity')}, apiversion "
                f"{info.get('apiversion')}"
            )
        if status == 200:
            raise ConnectError(not_arena)
        raise ConnectError(f"the arena refused the session (HTTP {status}: {answer.message})")

    def _reopen(self) -> None:
        """The arena ended the session (a 409 "closed" on a poll): open a new one, for as
        long as it takes; the polls carry their answers there."""
        self._say("the arena closed the session: opening a new one")
        try:
            self._open_session(None)
        except ConnectError as exc:
            self._finish(exc.status, str(exc))
            return
        self._say("connected again")

    def _close_session(self) -> None:
        with self._lock:
            self._closing = True
            token = self._token
        body = _encode({"bot_id": self.bot_id, "session": token, REQUEST_ID_FIELD: _request_id()})
        link = _Link(self)
        try:
            answer = link.post(CLOSE_PATH, body, CONNECT_TIMEOUT)
            if answer.status >= 300 and answer.status != 409:  # 409: it was over already
                self._say(f"closing the session: the arena answers {answer.message}")
        except _FAILURES as exc:
            self._say(f"closing the session: {_reason(exc)} (the arena ends it by itself)")
        finally:
            link.close()

    def _wait_for_calls(self, timeout: float) -> None:
        with self._calls_done:
            self._calls_done.wait_for(lambda: self._calls == 0, timeout)

    # -- called from the poll threads --------------------------------------------------------
    def _connection(self) -> http.client.HTTPConnection:
        if self._tls_context is not None:
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, self.port, timeout=CONNECT_TIMEOUT, context=self._tls_context
            )
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=CONNECT_TIMEOUT)
        conn.connect()
        return conn

    def _finish(self, status: int, message: str | None) -> None:
        """The bot stops with ``status`` (the first outcome wins); the main thread says
        ``message``."""
        with self._lock:
            if self._outcome is None:
                self._outcome = (status, message)
            self._stop.set()
            self._session_changed.notify_all()
        self._wake.set()

    def _halt(self) -> None:
        """End every poll: the threads waiting return, a read in progress is cut."""
        with self._lock:
            self._stop.set()
            self._session_changed.notify_all()
        for loop in self._loops:
            loop.link.abort()

    def _on_drained(self) -> None:
        self._drained = True
        self._wake.set()

    def _on_session_closed(self, token: str) -> None:
        """A poll of ``token`` was answered 409 "closed"; unless the bot closed it, the
        main thread opens a new session."""
        with self._lock:
            if self._closing or self._token != token:
                return
            if self._draining:  # nothing to come back for
                self._drained = True
            else:
                self._session_lost = True
                self._token = None
        self._wake.set()

    def _session(self, old: str | None = None) -> str | None:
        """The session's token, once there is one other than ``old``; None on stop."""
        with self._lock:
            self._session_changed.wait_for(
                lambda: (self._token is not None and self._token != old) or self._stop.is_set()
            )
            return None if self._stop.is_set() else self._token

    def _connection_failed(self, exc: BaseException | str) -> None:
        with self._lock:
            first, self._reachable = self._reachable, False
        if first:
            reason = exc if isinstance(exc, str) else _reason(exc)
            self._say(f"lost the connection to the arena ({reason}): polling again")

    def _connection_works(self) -> None:
        if not self._reachable:
            with self._lock:
                again, self._reachable = not self._reachable, True
            if again:
                self._say("reconnected to the arena")

    def _answer(self, item: Any) -> bytes | None:
        """The answer to one request of a poll's answer, as it goes into the next poll:
        ``{"request_id", "status", "body"}`` (None for an entry that names no request)."""
        if not (
            isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and isinstance(item.get("body"), str)
        ):
            self._say("the arena sent a request without a path and a body: ignored")
            return None
        path = item["path"]
        raw = item["body"].encode("utf-8", "surrogatepass")
        if len(raw) > MAX_BODY:
            too_large = f"the body is larger than {MAX_BODY} bytes"
            self.service.notices.refused(f"POST {path}", "body", too_large)
            checked: Any = (413, _encode({"error": too_large}))
        else:
            checked = self.service.check(
                path, _text(item.get("timestamp")), _text(item.get("signature")), raw
            )
        if isinstance(checked, dict):
            request_id = checked.get(REQUEST_ID_FIELD)
            with self._calls_done:
                self._calls += 1
            try:
                status, data = self.service.answer(path, checked)
            finally:
                with self._calls_done:
                    self._calls -= 1
                    self._calls_done.notify_all()
        else:
            status, data = checked
            request_id = _request_id_of(raw)
        if self.verbose:
            when = time.strftime("%d/%b/%Y %H:%M:%S")
            self._say(f'[{when}] "POST {path}" {int(status)} {len(data)}', prefix=False)
        if not isinstance(request_id, str) or not 0 < len(request_id) <= MAX_REQUEST_ID:
            self._say(f"a request to {path[:40]} without a request_id cannot be answered")
            return None
        return b'{"request_id":%s,"status":%d,"body":%s}' % (
            json.dumps(request_id).encode(),
            int(status),
            data,
        )

    def _backoff(self, failures: int) -> float:
        """The wait before the next try: doubling from ``BACKOFF_FIRST`` up to the cap,
        drawn between half of it and all of it so that many bots cut off at once do not
        come back all at once."""
        delay = min(self.backoff_cap, BACKOFF_FIRST * 2 ** min(failures - 1, 30))
        return delay * _jitter.uniform(0.5, 1.0)

    def _say(self, message: str, *, prefix: bool = True) -> None:
        self._write(f"arenabot: {message}" if prefix else message)


class _PollLoop(threading.Thread):
    """One of the bot's polls, again and again: it carries the answers of the last
    request it brought, until a 200 acknowledges them.  A ``notice`` loop tells the
    arena at once that the bot drains: it ends after a poll answered with no request."""

    def __init__(self, client: ConnectClient, notice: bool = False):
        super().__init__(name="arenabot-poll", daemon=True)
        self.client = client
        self.notice = notice
        self.link = _Link(client)

    def run(self) -> None:
        try:
            self._poll()
        except _Interrupted:
            pass
        except Exception as exc:  # a bug: stop the bot rather than play on one poll short
            traceback.print_exc()
            self.client._finish(EXIT_REFUSED, f"a poll failed: {type(exc).__name__}: {exc}")
        finally:
            self.link.close()

    def _poll(self) -> None:
        client = self.client
        answers: list[bytes] = []
        failures = 0
        token = client._session()
        while token is not None and not client._stop.is_set():
            draining = client._draining or self.notice
            body = b'{"bot_id":%d,"session":%s,"request_id":"%s","draining":%s,"answers":[%s]}' % (
                client.bot_id,
                json.dumps(token).encode(),
                _request_id().encode(),
                b"true" if draining else b"false",
                b",".join(answers),
            )
            try:
                answer = self.link.post(POLL_PATH, body, client.poll_seconds + POLL_GRACE)
            except _FAILURES as exc:
                if client._stop.is_set():
                    return
                if self.notice and not answers:
                    return  # the other polls will say it
                failures += 1
                client._connection_failed(exc)
                self._wait(failures)
                continue
            status, payload = answer.status, answer.payload
            requests = payload.get("requests") if payload else None
            if status == 200 and isinstance(requests, list):
                failures = 0
                client._connection_works()
                answers = []  # acknowledged
                playing = payload.get("playing") if payload else None
                if isinstance(playing, int) and not isinstance(playing, bool):
                    client.playing = playing
                for item in requests:
                    encoded = client._answer(item)
                    if encoded is not None:
                        answers.append(encoded)
                if not requests and draining and playing == 0:
                    client._on_drained()
                    return
                if self.notice and not requests and not answers:
                    return
                continue
            if status == 409:
                reason = payload.get("reason") if payload else None
                if reason == "closed":
                    client._on_session_closed(token)
                    token = client._session(token)
                    continue
                if not client._closing:
                    client._finish(
                        EXIT_REPLACED,
                        f"another copy of bot {client.bot_id} connected to the arena and "
                        f"replaced this one ({answer.message}): stopping",
                    )
                return
            if status in (400, 401, 403, 404):
                if not client._closing:
                    client._finish(EXIT_REFUSED, _poll_refusal(client, answer))
                return
            # a 429 (an arena that refuses polls beyond capacity), a 5xx, a proxy's page
            if self.notice and not answers:
                return
            failures += 1
            client._connection_failed(f"HTTP {status}: {answer.message}")
            self._wait(failures)

    def _wait(self, failures: int) -> None:
        if self.client._stop.wait(self.client._backoff(failures)):
            raise _Interrupted


def _poll_refusal(client: ConnectClient, answer: _Answer) -> str:
    if answer.status == 401:
        return (
            f"the arena refused bot {client.bot_id}'s poll ({answer.message}): its secret "
            "changed (rotated?) or this machine's clock is off"
        )
    return f"the arena refused bot {client.bot_id}'s poll (HTTP {answer.status}: {answer.message})"


def _request_id() -> str:
    """A fresh ``request_id``: 32 lowercase hex digits."""
    return secrets.token_hex(16)


def _request_id_of(raw: bytes) -> str | None:
    """The ``request_id`` of a request body the checks refused, as far as it reads."""
    request, problem = _parse(raw, ())
    found = request.get(REQUEST_ID_FIELD) if problem is None else None
    return found if isinstance(found, str) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({exc.strerror or exc})"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    text = str(exc) or type(exc).__name__
    return text[:200]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
