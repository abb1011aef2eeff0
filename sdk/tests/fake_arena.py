"""A fake arena for the tests of the connect transport: the three endpoints of the
repository's ``docs/protocol.md`` ("Playing from a laptop") on a loopback port, with
nothing behind them but a queue of requests that a test hands out.

It checks every call of the bot as the arena does (the signature with the bot's secret,
the timestamp's skew, a ``request_id`` never seen before: with the SDK's own ``verify``
and ``ReplayGuard``), hands out requests signed with the SDK's own ``sign``, keeps every
answer it receives (by request id, a duplicate included), and counts the polls open.  A
test can make it cut the connection of the next poll that carries answers after reading
it (the bot never learns that they arrived), replace or end the session, or refuse the
session.  Real request bodies come from the golden fixtures of ``docs/protocol.md`` and
of each game's rules (``golden_requests``).

``BotProcess`` runs a bot's command line and reads its stderr line by line;
``listening_sockets`` tells from ``/proc`` whether a process listens on a port.
Standard library and the SDK only: the JavaScript bot's tests and the connect benchmark
use them too.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from arenabot import ReplayGuard, SignatureError, sign, verify

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GOLDEN = re.compile(r"<!-- golden: ([a-z_]+) -->\s*```json\n(.*?)```", re.S)
RULES = {"cactus-game": "cactus-game.md", "president": "president.md"}


def golden_requests() -> dict[str, tuple[str, dict[str, Any]]]:
    """Real request bodies by name, each ``(path, body)`` without its ``request_id``:
    the example match of ``docs/protocol.md`` (``start``, ``act``, ``act_snap``,
    ``end``: Cactus) and an ``/act`` of each other game built from the real view and
    legal actions its rules document shows (``act_cactus-game``, ``act_president``)."""
    protocol = dict(GOLDEN.findall((DOCS / "protocol.md").read_text(encoding="utf-8")))
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in ("start", "act", "act_snap", "end"):
        body = json.loads(protocol[name])
        body.pop("request_id", None)
        found[name] = ("/" + name.split("_")[0], body)
    for game, document in RULES.items():
        golden = dict(GOLDEN.findall((DOCS / "rules" / document).read_text(encoding="utf-8")))
        view = json.loads(golden["view"])
        found[f"act_{game}"] = (
            "/act",
            {
                "match_id": f"example-{game}",
                "decision_id": f"0:{view['seat']}",
                "game": game,
                "seat": view["seat"],
                "view": view,
                "legal_actions": json.loads(golden["legal_actions"]),
                "deadline_ms": 2000,
            },
        )
    return found


@dataclass
class _Poll:
    """A poll the fake arena holds."""

    bumped: bool = False  # ended by a newer poll beyond capacity


@dataclass
class Session:
    token: str
    info: dict[str, Any]
    replaced: bool = False
    closed: bool = False


@dataclass
class Stats:
    sessions: int = 0
    closes: int = 0
    polls: int = 0
    open_polls: int = 0
    most_open: int = 0
    bumps: int = 0
    cut: int = 0
    poll_bodies: list[dict[str, Any]] = field(default_factory=list)


class FakeArena:
    """``url`` serves the three endpoints for one bot (``bot_id``, ``secret``) until
    ``close()``.  ``submit`` queues a request for the bot; ``answer`` waits for the
    answer to one.  Thread-safe: the server's threads and the test share one lock, with a
    condition for the test (``cond``) and one for the polls (``polls``: a request queued
    wakes one poll, not every poll that waits)."""

    def __init__(
        self,
        secret: str,
        bot_id: int = 1,
        poll_seconds: float = 25,  # an integer, as the arena sends it
        tls: tuple[Path, Path] | None = None,
    ):
        """``tls``: (certificate, key) files to serve HTTPS with."""
        self.secret = secret
        self.bot_id = bot_id
        self.poll_seconds = poll_seconds
        self.guard = ReplayGuard()
        lock = threading.RLock()
        self.cond = threading.Condition(lock)
        self.polls = threading.Condition(lock)
        self.session: Session | None = None
        self.old_sessions: dict[str, Session] = {}
        self.queue: deque[dict[str, Any]] = deque()
        self.answers: dict[str, list[dict[str, Any]]] = {}
        self.sent_at: dict[str, float] = {}
        self.answered_at: dict[str, float] = {}
        self.playing = 0
        self.draining = False
        self.refuse_session: tuple[int, dict[str, Any]] | None = None
        self.cut_next_answers = False
        self.stats = Stats()
        self.stopped = False
        self.open: list[_Poll] = []
        self.server = _Server(("127.0.0.1", 0), _handler(self))
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    # -- what a test does -------------------------------------------------------------------
    def submit(
        self,
        path: str,
        body: dict[str, Any] | bytes,
        *,
        secret: str | None = None,
        timestamp: int | None = None,
        request_id: str | None = None,
    ) -> str:
        """Queue a request for the bot, signed as the arena signs (with ``secret``, by
        default the bot's, at ``timestamp``, by default now); its ``request_id`` (a fresh
        one unless given or already in ``body``).  Bytes are sent as they are."""
        if isinstance(body, bytes):
            raw = body
            request_id = request_id or json.loads(raw)["request_id"]
        else:
            request_id = request_id or body.get("request_id") or os.urandom(16).hex()
            body = {**body, "request_id": request_id}
            raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        request = {
            "path": path,
            "body": raw.decode("utf-8"),
            "timestamp": stamp,
            "signature": sign(secret or self.secret, stamp, raw),
        }
        with self.cond:
            self.queue.append(request)
            self.polls.notify()
        return request_id

    def resubmit(self, request: dict[str, Any]) -> None:
        """Queue an entry exactly as given (a request sent before: a replay)."""
        with self.cond:
            self.queue.append(request)
            self.polls.notify()

    def answer(self, request_id: str, timeout: float = 20.0) -> dict[str, Any]:
        """The first answer the bot gave to ``request_id``; AssertionError after
        ``timeout`` seconds without one."""
        self.wait(lambda: request_id in self.answers, timeout, f"no answer to {request_id}")
        return self.answers[request_id][0]

    def wait(self, predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
        """Until ``predicate()`` holds (read under the lock); AssertionError after
        ``timeout`` seconds (a guard against a hang, not a measure of time)."""
        with self.cond:
            if not self.cond.wait_for(predicate, timeout):
                raise AssertionError(f"the fake arena waited {timeout:g} s: {what or predicate}")

    def set_playing(self, playing: int) -> None:
        with self.cond:
            self.playing = playing
            self._changed()

    def replace_session(self) -> None:
        """Another copy of the bot opened a session: the polls of this one get 409."""
        with self.cond:
            assert self.session is not None
            self.session.replaced = True
            self.old_sessions[self.session.token] = self.session
            self.session = Session(os.urandom(8).hex(), self.session.info)
            self._changed()

    def end_session(self) -> None:
        """The arena ends the session (its polls get 409 "closed")."""
        with self.cond:
            assert self.session is not None
            self.session.closed = True
            self.old_sessions[self.session.token] = self.session
            self.session = None
            self._changed()

    def _changed(self) -> None:
        """Something every waiter may care about changed (under the lock)."""
        self.cond.notify_all()
        self.polls.notify_all()

    def close(self) -> None:
        with self.cond:
            self.stopped = True
            self._changed()
        self.server.shutdown()
        self.server.server_close()

    # -- the endpoints (in the server's threads) ---------------------------------------------
    def handle(self, path: str, raw: bytes, headers: Any) -> tuple[int, Any] | None:
        """The status and JSON answer of one call (None: cut the connection)."""
        timestamp = headers.get("X-Arena-Timestamp")
        try:
            verify(self.secret, timestamp, headers.get("X-Arena-Signature"), raw)
            body = json.loads(raw)
            self.guard.check(body.get("request_id"), timestamp)
        except SignatureError as exc:
            return 401, _error(401, str(exc))
        if body.get("bot_id") != self.bot_id or type(body.get("bot_id")) is not int:
            return 404, _error(404, f"no bot {body.get('bot_id')!r} connects")
        if path == "/api/connect/session":
            return self._session(body)
        if path == "/api/connect/poll":
            return self._poll(body)
        if path == "/api/connect/close":
            return self._close(body)
        return 404, _error(404, "no such endpoint")

    def _session(self, body: dict[str, Any]) -> tuple[int, Any]:
        with self.cond:
            if self.refuse_session is not None:
                return self.refuse_session
            info = body.get("info")
            if not isinstance(info, dict) or not isinstance(info.get("capacity"), int):
                return 400, _error(400, "info must declare a capacity")
            replaced = self.session is not None
            if self.session is not None:
                self.session.replaced = True
                self.old_sessions[self.session.token] = self.session
            self.session = Session(os.urandom(8).hex(), info)
            self.stats.sessions += 1
            self._changed()
            return 200, {
                "session": self.session.token,
                "poll_seconds": self.poll_seconds,
                "replaced": replaced,
            }

    def _gone(self, token: Any) -> tuple[int, Any] | None:
        """409 for a session that is over, with its reason; 404 for a token the arena
        never gave (never "replaced", which stops the bot)."""
        if self.session is not None and token == self.session.token:
            return None
        old = self.old_sessions.get(token)
        if old is None:
            return 404, _error(404, f"no session {token!r}: the arena never opened it")
        reason = "closed" if old.closed and not old.replaced else "replaced"
        return 409, {**_error(409, f"the session was {reason}"), "reason": reason}

    def _poll(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        token = body.get("session")
        with self.cond:
            self.stats.polls += 1
            self.stats.poll_bodies.append(body)
            gone = self._gone(token)
            if gone is not None:
                return gone
            answers = body.get("answers")
            now = time.perf_counter()
            for answer in answers if isinstance(answers, list) else []:
                self.answers.setdefault(answer["request_id"], []).append(answer)
                self.answered_at.setdefault(answer["request_id"], now)
            if body.get("draining") is True and not self.draining:
                self.draining = True
                self.polls.notify_all()  # they may answer now
            self.cond.notify_all()
            if self.cut_next_answers and answers:
                self.cut_next_answers = False
                self.stats.cut += 1
                return None
            assert self.session is not None
            capacity = self.session.info["capacity"]
            if len(self.open) >= capacity:  # the oldest poll gives way
                self.open.pop(0).bumped = True
                self.stats.bumps += 1
                self._changed()
            poll = _Poll()
            self.open.append(poll)
            self.stats.open_polls = len(self.open)
            self.stats.most_open = max(self.stats.most_open, len(self.open))
            deadline = time.monotonic() + self.poll_seconds
            requests: list[dict[str, Any]] = []
            try:
                while True:
                    if poll.bumped or self.stopped:
                        break
                    gone = self._gone(token)
                    if gone is not None:
                        return gone
                    if self.queue:
                        request = self.queue.popleft()
                        self.sent_at[json.loads(request["body"])["request_id"]] = (
                            time.perf_counter()
                        )
                        requests = [request]
                        break
                    if self.draining and self.playing == 0:
                        break
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self.polls.wait(left)
            finally:
                if poll in self.open:
                    self.open.remove(poll)
                self.stats.open_polls = len(self.open)
                if self.queue and not requests:  # woken for a request it did not take
                    self.polls.notify()
                self.cond.notify_all()
            return 200, {"requests": requests, "playing": self.playing}

    def _close(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        with self.cond:
            gone = self._gone(body.get("session"))
            if gone is not None:  # a session over already is closed all the same
                return gone if gone[0] == 404 else (204, None)
            assert self.session is not None
            self.session.closed = True
            self.old_sessions[self.session.token] = self.session
            self.session = None
            self.stats.closes += 1
            self._changed()
            return 204, None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A bot that went away mid-poll (it stopped, or a test cut it) is no error."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _error(code: int, message: str) -> dict[str, Any]:
    """The arena API's JSON error."""
    names = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 409: "Conflict"}
    return {"code": code, "status": names.get(code, "Error"), "message": message}


def _handler(arena: FakeArena) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            result = arena.handle(self.path, raw, self.headers)
            if result is None:  # the answer is lost: the bot never learns what arrived
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            status, payload = result
            data = b"" if payload is None else json.dumps(payload).encode()
            head = f"HTTP/1.1 {status} -\r\nContent-Length: {len(data)}\r\n"
            if payload is not None:
                head += "Content-Type: application/json\r\n"
            self.wfile.write(head.encode() + b"\r\n" + data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


# -- a bot's process, as a user runs it --------------------------------------------------------
class BotProcess:
    """A bot's command line running; its stderr read line by line."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None):
        """``args``: the command, ``python`` by default (``[sys.executable, *args]``
        unless ``args[0]`` is a path to a program); the environment without ``ARENA_*``
        but ``env``."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        environment.update(env or {})
        command = args if os.path.isabs(args[0]) else [sys.executable, *args]
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")

    def wait_for(self, words: str) -> str:
        while True:
            line = self.lines.get(timeout=30)
            assert line, f"the bot stopped (status {self.proc.wait()}): {self.seen}"
            self.seen.append(line)
            if words in line:
                return line

    def finish(self) -> tuple[int, list[str]]:
        status = self.proc.wait(30)
        while (line := self.lines.get(timeout=30)) != "":
            self.seen.append(line)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        return status, self.seen

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.finish()


def listening_sockets(pid: int) -> tuple[int, int]:
    """(sockets the process holds open, of which listening), from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    listening = 0
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if path.exists():
            for row in path.read_text().splitlines()[1:]:
                cells = row.split()
                listening += cells[3] == "0A" and int(cells[9]) in inodes  # 0A: LISTEN
    return len(inodes), listening
