"""A crowd at the shipped web tier: thousands of connected bots holding their long polls,
a tournament among a few of them, people browsing, a class logging in at once.

    python benchmarks/crowd.py [--bots 5000] [--players 4] [--matches 40] [--browsers 20]
        [--accounts 60] [--slow 0] [--seconds 60] [--ramp 0] [--web-workers N]
        [--register api|db] [--dockerfile deploy/Dockerfile] [--logs DIR] [--smoke]

The web tier is the image's command: ``deploy/Dockerfile``'s ``CMD`` (a JSON exec array),
read from it each run, with only the bind address changed (127.0.0.1 and a free port)
and, with ``--web-workers``, its ``--workers``; its program is this interpreter's
environment's ``gunicorn``.  Its environment is the Dockerfile's ``ARENA_*`` ``ENV``
(production profile) with ``ARENA_RELAY_HOST`` 127.0.0.1 and ``ARENA_DATA_DIR`` a
temporary folder, plus what production demands: a PostgreSQL database of its own on
127.0.0.1:5432 (created, then dropped), a ``redis-server`` of its own on a free port (the
broker, db 0; the rate limits and the connect transport's request ids, db 1), a secret
key, a secrets key (``arena.sealing.new_key``, what ``arena db new-secrets-key`` prints)
and an organiser token.  ``arena db upgrade`` runs first; one ``arena worker`` (Celery,
its defaults) plays the matches.  The open-files limit of this process, and so of every
process it starts, is raised to the hard limit.

The load side is this process's asyncio loop on raw streams (one keep-alive connection
per client), and a second process for the players:

- ``--bots`` connected bots (registered through the API with the organiser token, or
  with ``--register db`` written directly into the database), each with its session
  open and ONE long poll held (``POST /api/connect/session``, then ``POST
  /api/connect/poll`` again as soon as a poll returns), signed as the SDK signs; a
  request a poll brings is answered in the next poll.  They connect at once (as after a
  restart of the web tier: their polls then come back in waves, every ``poll_seconds``),
  or spread over ``--ramp`` seconds;
- ``--players`` more connected bots in a process of their own that play a tournament of
  ``--matches`` Cactus matches, every player at each (a round robin, rounded up to a
  multiple of the players; created by the organiser as the steady state
  begins): each answers ``/act`` with a random legal action and records its own think
  time (from the poll's answer read to the next poll written).  The connect transport's
  added ms per decision is the latency the arena recorded for the decision (its home
  measures it: the request handed to the bot's poll -> the answer arriving in the next
  poll, as ``benchmarks/connect.py``'s "home-measured") minus that think time, decision
  by decision;
- ``--browsers`` people each asking ``GET /healthz`` and ``GET /leaderboard/cactus`` in
  turn, ``--browse-pause`` seconds apart, in a third process (the crowd's thousands of
  links would delay their clocks);
- ``--accounts`` contestants who signed up with an event's join code (before the steady
  state) and all log in at once (``POST /api/accounts/tokens``, from one address, their
  connections opened first) a third of the way into it;
- ``--slow`` connections that send a request line and then one byte every 5 s.

The steady state starts once every bot has a poll sent (or ``--connect-wait`` is over)
and lasts ``--seconds``, longer while the tournament is still played (at most
``--drain`` more seconds).  Printed, per kind of request: count, p50, p99, max (ms) and
errors (a status other than the expected one, a timeout, a connection cut); the
decisions (recorded, think, added); per 5 s, the worst ``/healthz`` and the crowd's
polls that came back; the tournament's outcome and its faults; per web process (the
gunicorn master's children) its peak RSS, peak thread count (``/proc/<pid>/status``) and
CPU over the steady state, with the total; the CPU of the worker, of the load side and
of the whole machine (the figures mean little on a machine busy with something else).
``--logs`` keeps the web's and the worker's logs.  It exits with an
error once everything is printed when something is broken: a fault in a match, a match
not finished, a request that failed, a bot that could not hold its poll, a web process
that died.

``--smoke``: 3 bots, 4 players and 4 matches, 2 browsers, 3 accounts, 1 slow client, 3 s.

Run from the repository root on Linux (``/proc``) with the server's dependencies
(``pip install -e '.[postgres,redis,server]'``), PostgreSQL on 127.0.0.1:5432 (trust)
and ``redis-server`` installed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import random
import resource
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import (  # noqa: E402
    accepts,
    free_port,
    host_command,
    image_command,
    parse_args,
    print_versions,
    wait_until,
)
from arenabot import signed_headers  # noqa: E402

PYTHONPATH = os.pathsep.join([str(ROOT), str(ROOT / "sdk")])
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
GAME = "cactus"
SEATS = 4
PASSWORD = "a long crowd password"
# what a bot says of itself as it opens its session (an SDK bot's GET /)
INFO = {"apiversion": "1", "sdk": "crowd-benchmark", "games": [GAME], "capacity": 1}
SESSION_TIMEOUT = 30.0  # seconds for a session to open, a page, a registration
POLL_GRACE = 15.0  # seconds a poll may take beyond the arena's poll_seconds
HELD_SHARE = 0.8  # the arena holds an empty poll for this share of poll_seconds at least
LOGIN_TIMEOUT = 60.0
RETRY_SECONDS = (2.0, 5.0)  # a bot whose session or poll failed tries again after this
SLOW_EVERY = 5.0  # seconds between a slow client's bytes
SAMPLE_EVERY = 0.5  # seconds between samples of the web processes
OPENING_AT_ONCE = 64  # connections being opened at once (the listen backlog)
CLK_TCK = os.sysconf("SC_CLK_TCK")
EXPECTED = {"register": 201, "sign-up": 201, "login": 201, "tournament": 201}


# -- the deployment's command and environment ---------------------------------------------
def image_env(dockerfile: Path) -> dict[str, str]:
    """The ``ARENA_*`` variables the Dockerfile's ``ENV`` lines set (``ENV A=1 B=2``)."""
    env: dict[str, str] = {}
    for line in dockerfile.read_text().splitlines():
        if line.startswith("ENV "):
            for word in shlex.split(line[4:]):
                name, equals, value = word.partition("=")
                if equals and name.startswith("ARENA_"):
                    env[name] = value
    return env


def option(command: list[str], name: str, default: str = "-") -> str:
    return command[command.index(name) + 1] if name in command else default


# -- processes and services --------------------------------------------------------------------


@contextmanager
def started(
    argv: list[str], env: dict[str, str], log: Path, stop_seconds: float = 20.0
) -> Iterator[subprocess.Popen]:
    """A process (its output to ``log``), stopped with SIGTERM, then SIGKILL after
    ``stop_seconds``; the processes it started (gunicorn's), if left behind, too."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            kids = children(proc.pid)
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=stop_seconds)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            deadline = time.monotonic() + 5.0
            for pid in kids:  # a master that was killed leaves its processes running
                while alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                if alive(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether the process runs (not gone, nor a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def postgres_database() -> Iterator[str]:
    """A database of its own on the machine's PostgreSQL, dropped at the end."""
    import psycopg

    name = f"arena_crowd_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def redis_server(folder: Path) -> Iterator[tuple[int, int]]:
    """A redis-server of its own on a free port, keeping nothing on disk: (port, pid)."""
    port = free_port()
    argv = [
        "redis-server",
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(folder),
        "--maxclients",
        "10000",
    ]
    with started(argv, dict(os.environ), folder / "redis.log") as proc:
        wait_until(lambda: accepts(port) or proc.poll() is not None, 20, "redis-server")
        if proc.poll() is not None:
            raise SystemExit(f"redis-server exited: {(folder / 'redis.log').read_text()[-500:]}")
        yield port, proc.pid


def raise_open_files() -> tuple[int, int]:
    """The open-files limit raised to the hard limit (every process started inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def proc_status(pid: int) -> tuple[int, int] | None:
    """(VmRSS in KiB, threads), or None for a process that is gone."""
    rss = threads = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
    except OSError:
        return None
    return rss, threads


def machine_ticks() -> tuple[int, int]:
    """Every core's busy and total ticks (``/proc/stat``: all but idle and iowait)."""
    with open("/proc/stat") as f:
        ticks = [int(t) for t in f.readline().split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def cpu_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime, stime


# -- the load side's HTTP: one keep-alive connection per client ------------------------------
class Link:
    """One HTTP/1.1 connection to the web tier, opened on first use and again after the
    server closed it.  ``sent_at``: when the last request was written (perf_counter)."""

    def __init__(self, port: int, gate: asyncio.Semaphore):
        self.port, self.gate = port, gate
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.sent_at = 0.0

    async def connect(self) -> None:
        if self.streams is None:
            async with self.gate:
                self.streams = await asyncio.open_connection("127.0.0.1", self.port)

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        timeout: float = SESSION_TIMEOUT,
    ) -> tuple[int, bytes]:
        """(status, body); raises TimeoutError, OSError or IncompleteReadError (the
        connection is closed then)."""
        try:
            return await asyncio.wait_for(self._exchange(method, path, body, headers), timeout)
        except BaseException:
            self.close()
            raise

    async def _exchange(
        self, method: str, path: str, body: bytes, headers: dict[str, str] | None
    ) -> tuple[int, bytes]:
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        if body:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        data = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        for _ in range(2):
            fresh = self.streams is None
            await self.connect()
            assert self.streams is not None
            reader, writer = self.streams
            try:
                writer.write(data)
                await writer.drain()
                self.sent_at = time.perf_counter()
                raw = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                self.close()
                partial = getattr(exc, "partial", b"")
                if fresh or partial:
                    raise
                continue  # a kept connection the server had closed: once more, on a new one
            head = raw.decode("latin-1").split("\r\n")
            status = int(head[0].split()[1])
            answer = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                answer[name.strip().lower()] = value.strip()
            if answer.get("transfer-encoding", "").lower() == "chunked":
                parts = []
                while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                    parts.append(await reader.readexactly(size))
                    await reader.readexactly(2)
                await reader.readuntil(b"\r\n")
                content = b"".join(parts)
            elif "content-length" in answer:
                content = await reader.readexactly(int(answer["content-length"]))
            else:
                content = await reader.read()
                answer["connection"] = "close"
            if answer.get("connection", "").lower() == "close":
                self.close()
            return status, content
        raise ConnectionResetError("the connection was closed twice")


def problem_of(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, asyncio.IncompleteReadError):
        return "cut"
    return type(exc).__name__


@dataclass
class Kind:
    """The requests of one kind: each one's seconds, and what went wrong."""

    times: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    ended: list[float] = field(default_factory=list)  # time.monotonic() of each one's end


class Stats(dict[str, Kind]):
    def add(self, kind: str, seconds: float, problem: str | None = None) -> None:
        found = self.setdefault(kind, Kind())
        found.times.append(seconds)
        found.ended.append(time.monotonic())
        if problem:
            found.errors[problem] += 1

    async def timed(
        self, kind: str, call: Awaitable[tuple[int, bytes]], expected: int = 200
    ) -> tuple[int, bytes] | None:
        """The answer of ``call``, recorded under ``kind``; None when it failed."""
        began = time.perf_counter()
        try:
            status, body = await call
        except (OSError, asyncio.IncompleteReadError) as exc:  # TimeoutError is an OSError
            self.add(kind, time.perf_counter() - began, problem_of(exc))
            return None
        self.add(kind, time.perf_counter() - began, None if status == expected else f"{status}")
        return status, body


# -- connected bots ----------------------------------------------------------------------------
def answer_to(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a bot answers to one of the arena's requests (a legal action drawn at random,
    as the random sample bot plays: the first one makes a Cactus match last 7,000
    decisions, a random one about 500), and the request's body."""
    body = json.loads(request["body"])
    said = {"action": random.choice(body["legal_actions"])} if request["path"] == "/act" else {}
    return {"request_id": body["request_id"], "status": 200, "body": said}, body


class Bots:
    """Connected bots of this process, each one keep-alive connection with one long poll
    held; ``thinks`` (players) collects each ``/act``'s think time by decision."""

    def __init__(self, port: int, stats: Stats, thinks: dict[str, float] | None = None):
        self.port, self.stats, self.thinks = port, stats, thinks
        self.gate = asyncio.Semaphore(OPENING_AT_ONCE)
        self.stopping = False
        self.opened = 0  # bots with a session open
        self.waiting = 0  # polls sent and not answered yet
        self.held = 0  # polls answered empty after the arena held them
        self.held_by: set[int] = set()  # the bots whose poll was
        self.poll_seconds = 25.0  # as the arena said when a session opened
        self.handed = 0  # requests the polls brought
        self.links: list[Link] = []

    async def post(
        self,
        link: Link,
        what: str,
        bot_id: int,
        secret: str,
        fields: dict[str, Any],
        timeout: float,
    ) -> tuple[int, bytes]:
        body = json.dumps(
            {"bot_id": bot_id, "request_id": secrets.token_hex(16), **fields}, separators=(",", ":")
        ).encode()
        return await link.request(
            "POST", f"/api/connect/{what}", body, signed_headers(secret, body), timeout
        )

    async def run(self, bot_id: int, secret: str) -> None:
        link = Link(self.port, self.gate)
        self.links.append(link)
        info = {**INFO, "name": f"crowd-{bot_id}"}
        while not self.stopping:
            opened = await self.stats.timed(
                "session", self.post(link, "session", bot_id, secret, {"info": info}, 30.0)
            )
            if opened is None or opened[0] != 200:
                await asyncio.sleep(random.uniform(*RETRY_SECONDS))
                continue
            self.opened += 1
            try:
                await self.poll(link, bot_id, secret, json.loads(opened[1]))
            finally:
                self.opened -= 1

    async def poll(self, link: Link, bot_id: int, secret: str, opened: dict[str, Any]) -> None:
        """Polls one after another until the session is over (or a poll failed)."""
        token, seconds = opened["session"], float(opened["poll_seconds"])
        self.poll_seconds = seconds
        answers: list[dict[str, Any]] = []
        think: list[tuple[str, float]] = []  # (decision, received) of the answers carried
        while not self.stopping:
            fields = {"session": token, "answers": answers}
            began = time.perf_counter()
            self.waiting += 1
            try:
                status, data = await self.post(
                    link, "poll", bot_id, secret, fields, seconds + POLL_GRACE
                )
            except (OSError, asyncio.IncompleteReadError) as exc:
                if self.stopping:
                    return
                # as the SDK does: the same poll again (its answers too) after a while
                self.stats.add("poll", time.perf_counter() - began, problem_of(exc))
                await asyncio.sleep(random.uniform(*RETRY_SECONDS))
                continue
            finally:
                self.waiting -= 1
            received = time.perf_counter()
            if status != 200:
                self.stats.add("poll", received - began, f"{status}")
                if status in (404, 409):
                    return  # the session is over (replaced, closed): a new one
                await asyncio.sleep(random.uniform(*RETRY_SECONDS))
                continue
            if self.thinks is not None:
                for decision, at in think:
                    self.thinks[decision] = (link.sent_at - at) * 1e3
            answers, think = [], []
            handed = json.loads(data)["requests"]
            if not handed:
                if received - began > HELD_SHARE * seconds - 1.0:
                    self.held += 1
                    self.held_by.add(bot_id)
                self.stats.add("poll answered empty", received - began)
            for request in handed:
                self.handed += 1
                answer, body = answer_to(request)
                answers.append(answer)
                if request["path"] == "/act":
                    think.append((f"{body['match_id']}/{body['decision_id']}", received))

    def stop(self) -> None:
        self.stopping = True
        for link in self.links:
            link.close()


def without_pauses() -> None:
    """The load side's own pauses are not the arena's latency: Python's cyclic collector,
    left on, stopped this process for up to 0.3 s at a time with thousands of links open
    (measured with a ``gc.callbacks`` probe: the web processes had none above 20 ms), and
    each pause was counted in every request it held up.  Reference counting still frees
    what the load side drops; the few cycles wait for the end of the run."""
    gc.collect()
    gc.freeze()
    gc.disable()


def players_main(port: int, bots: list[tuple[int, str]], conn: Any) -> None:
    """The players' process: their bots until the parent says stop, then what they saw."""
    without_pauses()
    asyncio.run(players_loop(port, bots, conn))


async def players_loop(port: int, bots: list[tuple[int, str]], conn: Any) -> None:
    thinks: dict[str, float] = {}
    stats = Stats()
    players = Bots(port, stats, thinks)
    tasks = [asyncio.ensure_future(players.run(b, s)) for b, s in bots]
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + 60
    while players.waiting < len(bots) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    conn.send(("ready", players.waiting))
    with contextlib.suppress(EOFError, OSError):
        await loop.run_in_executor(None, conn.recv)  # "stop" (or the parent is gone)
    players.stop()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    summary = {k: (v.times, dict(v.errors)) for k, v in stats.items()}
    with contextlib.suppress(OSError):
        conn.send(("done", {"thinks": thinks, "stats": summary, "handed": players.handed}))


def people_main(port: int, browsers: int, pause: float, conn: Any) -> None:
    """The people browsing, in a process of their own: the crowd's thousands of links
    keep its loop busy in bursts, and a page timed there was late by up to 0.36 s that a
    prober of its own never saw (its worst ``/healthz`` 23 ms in the same 5 s)."""
    without_pauses()
    asyncio.run(people_loop(port, browsers, pause, conn))


async def people_loop(port: int, browsers: int, pause: float, conn: Any) -> None:
    stats, stop = Stats(), asyncio.Event()
    gate = asyncio.Semaphore(OPENING_AT_ONCE)
    links = [Link(port, gate) for _ in range(browsers)]
    loop = asyncio.get_running_loop()
    conn.send(("ready", browsers))
    with contextlib.suppress(EOFError, OSError):
        await loop.run_in_executor(None, conn.recv)  # "start"
    tasks = [
        asyncio.ensure_future(browse(link, stats, pause, i, stop)) for i, link in enumerate(links)
    ]
    with contextlib.suppress(EOFError, OSError):
        await loop.run_in_executor(None, conn.recv)  # "stop" (or the parent is gone)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    for link in links:
        link.close()
    summary = {k: (v.times, dict(v.errors), v.ended) for k, v in stats.items()}
    with contextlib.suppress(OSError):  # time.monotonic() is the machine's: ended compare
        conn.send(("done", {"stats": summary}))


# -- the crowd -----------------------------------------------------------------------------------
class Sampler:
    """The web processes (the master's children) and the Celery worker, sampled."""

    def __init__(self, master: int, worker: int, others: dict[str, int]):
        self.master, self.worker = master, worker
        self.others = others  # label -> pid: CPU only (the load side, our redis-server)
        self.machine = (0, 0)  # /proc/stat's busy and total ticks at the start
        self.machine_busy = 0.0  # % of one core, every core of the machine
        self.peak: dict[int, list[int]] = {}  # pid -> [peak RSS KiB, peak threads]
        self.last: dict[int, tuple[int, int]] = {}
        self.web: set[int] = set()
        self.peak_total = 0
        self.ticks: dict[int, int] = {}
        self.cpu: dict[int, float] = {}
        self.began = 0.0

    def sample(self) -> None:
        web = children(self.master)
        self.web.update(web)
        total = 0
        for pid in [*web, self.master, self.worker]:
            found = proc_status(pid)
            if found is None:
                continue
            self.last[pid] = found
            peak = self.peak.setdefault(pid, [0, 0])
            peak[0], peak[1] = max(peak[0], found[0]), max(peak[1], found[1])
            if pid in web:
                total += found[0]
        self.peak_total = max(self.peak_total, total)

    def start_cpu(self) -> None:
        self.began = time.monotonic()
        self.machine = machine_ticks()
        for pid in [*children(self.master), self.master, self.worker, *self.others.values()]:
            ticks = cpu_ticks(pid)
            if ticks is not None:
                self.ticks[pid] = ticks

    def stop_cpu(self) -> None:
        took = time.monotonic() - self.began
        for pid, before in self.ticks.items():
            after = cpu_ticks(pid)
            if after is not None:
                self.cpu[pid] = (after - before) / CLK_TCK / took * 100
        busy, total = machine_ticks()
        cores = os.cpu_count() or 1
        self.machine_busy = (busy - self.machine[0]) / max(total - self.machine[1], 1) * 100 * cores

    async def run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(SAMPLE_EVERY)


@dataclass
class Scene:
    """What the run learned, for the report."""

    stats: Stats = field(default_factory=Stats)
    bots: int = 0
    connected_in: float = 0.0
    polls_at_start: int = 0
    sessions_at_start: int = 0
    polls_at_end: int = 0
    held: int = 0
    held_bots: int = 0
    steady: float = 0.0
    poll_seconds: float = 25.0
    slow: dict[str, int] = field(default_factory=dict)
    tournament: dict[str, Any] = field(default_factory=dict)
    matches: list[dict[str, Any]] = field(default_factory=list)
    decisions: dict[str, list[float]] = field(default_factory=dict)
    unmatched: int = 0
    players: dict[str, Any] = field(default_factory=dict)
    players_ready: int = 0
    logins_at: float = 0.0
    began: float = 0.0  # time.monotonic() at the steady state's start
    load_average: float = 0.0  # the machine's, over 1 minute, as the steady state began


def json_body(value: Any) -> bytes:
    return json.dumps(value).encode()


async def browse(link: Link, stats: Stats, pause: float, first: int, stop: asyncio.Event) -> None:
    pages = (("healthz", "/healthz"), ("leaderboard", f"/leaderboard/{GAME}"))
    k = first
    while not stop.is_set():
        kind, path = pages[k % 2]
        k += 1
        await stats.timed(kind, link.request("GET", path, timeout=SESSION_TIMEOUT))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), pause * random.uniform(0.5, 1.5))


async def slow_client(port: int, n: int, stop: asyncio.Event, slow: Counter) -> None:
    """A request line and a header started, then a byte every SLOW_EVERY seconds."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        slow["could not connect"] += 1
        return
    slow["opened"] += 1
    began = time.monotonic()
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: crowd\r\nX-Slow-%d: " % n)
    closed = asyncio.ensure_future(reader.read(65536))
    try:
        while not stop.is_set():
            done, _ = await asyncio.wait({closed}, timeout=SLOW_EVERY)
            if done:
                said = closed.result().split(b"\r\n", 1)[0].decode("latin-1") or "EOF"
                slow[f"closed by the server after {time.monotonic() - began:.0f} s ({said})"] += 1
                return
            writer.write(b"x")
            await writer.drain()
        slow["still open at the end"] += 1
    except ConnectionError:
        slow[f"cut by the server after {time.monotonic() - began:.0f} s"] += 1
    finally:
        closed.cancel()
        writer.close()


async def login_class(port: int, stats: Stats, names: list[str]) -> None:
    """Every account logs in at the same moment, each on a connection opened before."""
    gate = asyncio.Semaphore(OPENING_AT_ONCE)
    links = [Link(port, gate) for _ in names]
    await asyncio.gather(*(link.connect() for link in links), return_exceptions=True)
    go = asyncio.Event()

    async def one(link: Link, name: str) -> None:
        await go.wait()
        body = json_body({"name": name, "password": PASSWORD, "label": "crowd"})
        await stats.timed(
            "login", link.request("POST", "/api/accounts/tokens", body, timeout=LOGIN_TIMEOUT), 201
        )
        link.close()

    tasks = [
        asyncio.ensure_future(one(link, name)) for link, name in zip(links, names, strict=True)
    ]
    await asyncio.sleep(0.1)
    go.set()
    await asyncio.gather(*tasks)


async def many(calls: list[Callable[[Link], Awaitable[Any]]], links: list[Link]) -> list[Any]:
    """``calls`` run one per link at a time (each given its link), their results in
    order; the links are closed at the end."""
    results: list[Any] = [None] * len(calls)
    queue = list(enumerate(calls))[::-1]

    async def runner(link: Link) -> None:
        while queue:
            i, call = queue.pop()
            results[i] = await call(link)
        link.close()

    await asyncio.gather(*(runner(link) for link in links))
    return results


async def api(link: Link, method: str, path: str, token: str | None, body: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, data = await link.request(
        method, path, b"" if body is None else json_body(body), headers, timeout=60.0
    )
    if status >= 300:
        raise SystemExit(f"{method} {path}: HTTP {status} {data[:300]!r}")
    return json.loads(data) if data else None


async def register_bots(
    args: argparse.Namespace, port: int, env: dict[str, str], stats: Stats, n: int
) -> list[tuple[int, str]]:
    """``n`` connect bots: (id, signing secret) each."""
    token = env["ARENA_ORGANISER_TOKEN"]
    made: list[tuple[int, str]] = []
    if args.register == "db":  # written as the API writes them, sealed with the same key
        from arena import sealing, services
        from arena.config import from_env
        from arena.db import Database

        config = from_env(env)
        sealing.use(config)
        database = Database(config.database_url)
        try:
            with database.session() as session:
                for i in range(n):
                    secret = f"crowd-secret-{i:06d}-{secrets.token_hex(12)}"
                    bot, _, _ = services.register_bot(
                        session,
                        config,
                        name=f"crowd-{i}",
                        owner="crowd",
                        games=[GAME],
                        signing_secret=secret,
                        connect=True,
                    )
                    session.flush()
                    made.append((bot.id, secret))
        finally:
            database.dispose()
        return made
    gate = asyncio.Semaphore(OPENING_AT_ONCE)

    def one(i: int) -> Callable[[Link], Awaitable[tuple[int, str] | None]]:
        async def call(link: Link) -> tuple[int, str] | None:
            body = json_body(
                {"name": f"crowd-{i}", "connect": True, "owner": "crowd", "games": [GAME]}
            )
            answer = await stats.timed(
                "register",
                link.request("POST", "/api/bots", body, {"Authorization": f"Bearer {token}"}),
                201,
            )
            if answer is None or answer[0] != 201:
                return None
            data = json.loads(answer[1])
            return data["id"], data["signing_secret"]

        return call

    results = await many([one(i) for i in range(n)], [Link(port, gate) for _ in range(8)])
    return [r for r in results if r is not None]


async def crowd(
    args: argparse.Namespace, port: int, env: dict[str, str], sampler: Sampler
) -> Scene:
    scene = Scene()
    stats = scene.stats
    token = env["ARENA_ORGANISER_TOKEN"]
    gate = asyncio.Semaphore(OPENING_AT_ONCE)
    admin = Link(port, gate)
    stop = asyncio.Event()
    sampling = asyncio.ensure_future(sampler.run())
    players = people = None
    try:
        # the class: an event, and its contestants signed up with its join code
        event = await api(admin, "POST", "/api/events", token, {"name": "crowd", "games": [GAME]})
        names = [f"crowd-student-{i:03d}" for i in range(args.accounts)]

        def sign_up(i: int) -> Callable[[Link], Awaitable[Any]]:
            body = json_body(
                {"name": names[i], "password": PASSWORD, "join_code": event["join_code"]}
            )
            return lambda link: stats.timed(
                "sign-up", link.request("POST", "/api/accounts", body), 201
            )

        await many([sign_up(i) for i in range(args.accounts)], [Link(port, gate) for _ in range(4)])

        # the bots: the players first (their own process), then the crowd
        began = time.monotonic()
        registered = await register_bots(args, port, env, stats, args.players + args.bots)
        print(
            f"registered {len(registered)} bots ({args.register}) in "
            f"{time.monotonic() - began:.1f} s",
            flush=True,
        )
        if len(registered) < args.players + args.bots:
            raise SystemExit("some bots could not be registered (see the table's register row)")
        player_bots, crowd_bots = registered[: args.players], registered[args.players :]
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        players = context.Process(target=players_main, args=(port, player_bots, theirs))
        players.start()
        sampler.others["load side, players"] = players.pid
        _, scene.players_ready = await received(ours, 90, "the players' sessions")
        ours_people, theirs_people = context.Pipe()
        people = context.Process(
            target=people_main, args=(port, args.browsers, args.browse_pause, theirs_people)
        )
        people.start()
        sampler.others["load side, people"] = people.pid
        await received(ours_people, 90, "the people's process", "people's")
        bots = Bots(port, stats)
        scene.bots = len(crowd_bots)
        began = time.monotonic()
        tasks = []
        for i, (bot_id, secret) in enumerate(crowd_bots):
            if args.ramp:  # the bots spread over --ramp seconds, as they come one by one
                await asyncio.sleep(
                    max(0.0, began + args.ramp * i / len(crowd_bots) - time.monotonic())
                )
            tasks.append(asyncio.ensure_future(bots.run(bot_id, secret)))
        while time.monotonic() - began < args.connect_wait and bots.waiting < len(crowd_bots):
            await asyncio.sleep(0.2)
        scene.connected_in = time.monotonic() - began
        scene.polls_at_start, scene.sessions_at_start = bots.waiting, bots.opened
        print(
            f"crowd: {bots.opened}/{len(crowd_bots)} sessions open, {bots.waiting} polls sent "
            f"after {scene.connected_in:.1f} s; players' polls sent: "
            f"{scene.players_ready}/{len(player_bots)}",
            flush=True,
        )

        # the steady state
        sampler.start_cpu()
        scene.began = time.monotonic()
        scene.load_average = os.getloadavg()[0]
        held_before, bots.held_by = bots.held, set()
        began = time.monotonic()
        body = {
            "name": "crowd",
            "game": GAME,
            "bot_ids": [b for b, _ in player_bots],
            "seats_per_match": args.players,
            "games_per_pairing": args.matches,
            "seed": 1,
        }
        # created while the crowd goes on: a web tier that cannot answer it delays nothing
        creating: asyncio.Future | None = asyncio.ensure_future(
            stats.timed(
                "tournament",
                admin.request(
                    "POST",
                    "/api/tournaments",
                    json_body(body),
                    {"Authorization": f"Bearer {token}"},
                    timeout=60.0,
                ),
                201,
            )
        )
        tournament_id = None
        ours_people.send("start")
        slow: Counter = Counter()
        load = [asyncio.ensure_future(slow_client(port, i, stop, slow)) for i in range(args.slow)]
        logins = None
        progress: dict[str, Any] = {}
        while True:
            elapsed = time.monotonic() - began
            if logins is None and elapsed >= args.seconds / 3:
                scene.logins_at = elapsed
                logins = asyncio.ensure_future(login_class(port, stats, names))
            if creating is not None and creating.done():
                created, creating = creating.result(), None
                if created is not None and created[0] == 201:
                    tournament_id = json.loads(created[1])["id"]
                elif created is not None:
                    print(f"the tournament was refused: {created[0]} {created[1][:500]!r}")
            if tournament_id is not None:
                found = await stats.timed(
                    "tournament progress",
                    admin.request("GET", f"/api/tournaments/{tournament_id}?crosstable=false"),
                )
                if found is not None and found[0] == 200:
                    progress = json.loads(found[1])["progress"]
            played = creating is None and (
                tournament_id is None
                or (progress and progress["queued"] + progress["running"] == 0)
            )
            if elapsed >= args.seconds and (played or elapsed >= args.seconds + args.drain):
                break
            await asyncio.sleep(1.0)
        if creating is not None:
            creating.cancel()
        if logins is not None:
            await logins
        scene.steady = time.monotonic() - began
        sampler.stop_cpu()
        scene.held, scene.held_bots = bots.held - held_before, len(bots.held_by)
        scene.poll_seconds = bots.poll_seconds
        scene.polls_at_end = bots.waiting
        scene.tournament = {"id": tournament_id, "progress": progress}
        stop.set()
        await asyncio.gather(*load, return_exceptions=True)
        scene.slow = dict(slow)
        ours_people.send("stop")
        _, people_seen = await received(ours_people, 60, "the people's figures", "people's")
        people.join(10)
        for kind, (times, errors, ended) in people_seen["stats"].items():
            found_kind = stats.setdefault(kind, Kind())
            found_kind.times += times
            found_kind.errors.update(errors)
            found_kind.ended += ended
        ours.send("stop")
        _, scene.players = await received(ours, 60, "the players' figures")
        players.join(10)
        bots.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for kind, (times, errors) in scene.players["stats"].items():
            found_kind = stats.setdefault(f"player {kind}", Kind())
            found_kind.times += times
            found_kind.errors.update(errors)
        if tournament_id is not None:
            await read_matches(admin, tournament_id, scene)
        admin.close()
    finally:
        sampling.cancel()
        for child in (players, people):
            if child is not None and child.is_alive():
                child.terminate()
                child.join(10)
    return scene


async def received(conn: Any, timeout: float, what: str, whose: str = "players'") -> Any:
    """The next message from the players' (or the people's) process, waited for off the
    loop."""
    loop = asyncio.get_running_loop()
    if not await loop.run_in_executor(None, conn.poll, timeout):
        raise SystemExit(f"{what}: nothing from the {whose} process within {timeout:g} s")
    return conn.recv()


async def read_matches(link: Link, tournament_id: int, scene: Scene) -> None:
    """The tournament's matches and each finished one's recorded latencies."""
    page = 1
    while True:
        rows = await api(
            link,
            "GET",
            f"/api/matches?tournament_id={tournament_id}&page_size=100&page={page}",
            None,
        )
        scene.matches += rows
        if len(rows) < 100:
            break
        page += 1
    thinks = scene.players["thinks"]
    recorded, think, added = [], [], []
    for match in scene.matches:
        if match["status"] != "finished":
            continue
        record = await api(link, "GET", f"/api/matches/{match['id']}/replay", None)
        for step, decisions in enumerate(record["steps"]):
            for decision in decisions if isinstance(decisions, list) else decisions["decisions"]:
                if "latency_ms" not in decision or "fault" in decision:
                    continue
                mine = thinks.get(f"{match['id']}/{step}:{decision['seat']}")
                if mine is None:
                    scene.unmatched += 1
                    continue
                recorded.append(decision["latency_ms"])
                think.append(mine)
                added.append(decision["latency_ms"] - mine)
    scene.decisions = {"recorded": recorded, "think": think, "added": added}


# -- the report ---------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def row(label: str, values_ms: list[float], errors: Counter | dict[str, int] | None = None) -> str:
    said = "0"
    if errors:
        total = sum(errors.values())
        said = f"{total} (" + ", ".join(f"{k} x{v}" for k, v in sorted(errors.items())) + ")"
    return (
        f"{label:<26}{len(values_ms):>7}{percentile(values_ms, 0.5):>10.1f}"
        f"{percentile(values_ms, 0.99):>10.1f}{max(values_ms, default=float('nan')):>10.1f}  {said}"
    )


def timeline(scene: Scene, bucket: float = 5.0) -> str:
    """Per ``bucket`` seconds of the steady state: the worst healthz and leaderboard, and
    how many of the crowd's polls came back empty (in waves when they come together)."""
    n = max(1, int(scene.steady // bucket) + 1)

    def bucketed(kind: str) -> tuple[list[float], list[int]]:
        worst, count = [0.0] * n, [0] * n
        found = scene.stats.get(kind, Kind())
        for seconds, ended in zip(found.times, found.ended, strict=True):
            i = int((ended - scene.began) // bucket)
            if 0 <= i < n:
                worst[i] = max(worst[i], seconds * 1e3)
                count[i] += 1
        return worst, count

    healthz, board = bucketed("healthz")[0], bucketed("leaderboard")[0]
    waves = bucketed("poll answered empty")[1]
    return (
        f"per {bucket:g} s of the steady state, worst healthz ms: "
        + " ".join(f"{w:.0f}" for w in healthz)
        + "\n  worst leaderboard ms: "
        + " ".join(f"{w:.0f}" for w in board)
        + "\n  and the crowd's polls answered empty: "
        + " ".join(str(c) for c in waves)
    )


ORDER = [
    "register",
    "sign-up",
    "session",
    "poll answered empty",
    "poll",
    "player session",
    "player poll",
    "healthz",
    "leaderboard",
    "login",
    "tournament",
    "tournament progress",
]


def report(
    args: argparse.Namespace, scene: Scene, sampler: Sampler, command: list[str]
) -> list[str]:
    """Prints the tables; returns what is broken."""
    broken: list[str] = []
    stats = scene.stats
    print(
        f"\nsteady state {scene.steady:.0f} s; logins at {scene.logins_at:.0f} s; "
        f"browsers pause {args.browse_pause:g} s between pages"
    )
    print(f"{'request':<26}{'count':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}  errors")
    for kind in sorted(stats, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k)):
        print(row(kind, [t * 1e3 for t in stats[kind].times], stats[kind].errors))
        if stats[kind].errors:
            broken.append(f"{kind}: {sum(stats[kind].errors.values())} requests failed")
    for kind in ("healthz", "leaderboard", "login", "sign-up"):
        if kind not in stats and (kind not in ("login", "sign-up") or args.accounts):
            broken.append(f"no {kind} request was made")
    decisions = scene.decisions
    labels = {
        "recorded": "decision, arena-recorded",
        "think": "decision, bot's think",
        "added": "decision, added by connect",
    }
    for key, label in labels.items():
        print(row(label, decisions.get(key, [])))

    print(timeline(scene))
    print(
        f"\nconnected bots: {scene.sessions_at_start}/{scene.bots} sessions open and "
        f"{scene.polls_at_start}/{scene.bots} polls sent after {scene.connected_in:.1f} s, "
        f"{scene.polls_at_end}/{scene.bots} sent at the end; in the steady state "
        f"{scene.held} polls were held (at least {HELD_SHARE * scene.poll_seconds:g} s) and "
        "answered empty, "
        f"for {scene.held_bots}/{scene.bots} bots"
    )
    if min(scene.sessions_at_start, scene.polls_at_start, scene.polls_at_end) < scene.bots:
        broken.append(
            f"not every bot connected: {scene.sessions_at_start} sessions open and "
            f"{scene.polls_at_start} polls sent at the start, {scene.polls_at_end} at the end, "
            f"of {scene.bots}"
        )
    if scene.steady > scene.poll_seconds + POLL_GRACE and scene.held_bots < scene.bots:
        broken.append(
            f"the web tier did not hold every bot's poll: {scene.bots - scene.held_bots} bots "
            f"had none held {HELD_SHARE * scene.poll_seconds:g} s in {scene.steady:.0f} s"
        )
    if args.slow:
        print(f"slow connections ({args.slow}, a byte every {SLOW_EVERY:g} s): {scene.slow}")

    progress = scene.tournament.get("progress") or {}
    faults: Counter = Counter()
    wins: Counter = Counter()
    names = {}
    for match in scene.matches:
        for seat in match["seats"]:
            names[seat["bot_id"]] = seat.get("bot_name")
            faults.update((seat.get("faults") or {}).get("kinds") or {})
            if match["status"] == "finished" and seat.get("rank") == 1:
                wins[seat["bot_id"]] += 1
    print(
        f"tournament {scene.tournament.get('id')}: {args.players} players, "
        f"{progress.get('finished', 0)}/{progress.get('total', args.matches)} matches finished, "
        f"{progress.get('failed', 0)} failed, "
        f"{progress.get('queued', 0) + progress.get('running', 0)} unfinished; "
        f"{scene.players.get('handed', 0)} requests handed to the players"
    )
    print(
        "  wins (rank 1): "
        + (", ".join(f"{names[b]} {n}" for b, n in wins.most_common()) or "none")
    )
    print(
        f"  faults: timeout {faults['timeout']}, disconnected {faults['disconnected']}, "
        f"other {sum(faults.values()) - faults['timeout'] - faults['disconnected']} "
        f"{dict(faults) if faults else ''}".rstrip()
    )
    if scene.unmatched:
        print(f"  decisions without the player's think time: {scene.unmatched}")
    if faults:
        broken.append(f"faults in the tournament's matches: {dict(faults)}")
    if not progress or progress["finished"] != progress["total"]:
        broken.append(f"the tournament did not finish every match: {progress}")

    print(f"\nweb: {' '.join(command)}")
    print(f"{'process':<22}{'pid':>8}{'peak RSS MiB':>14}{'peak threads':>14}{'CPU %':>8}")
    web = sorted(sampler.web)
    for i, pid in enumerate(web):
        rss, threads = sampler.peak.get(pid, [0, 0])
        print(
            f"{f'web process {i + 1}':<22}{pid:>8}{rss / 1024:>14.1f}{threads:>14}"
            f"{sampler.cpu.get(pid, float('nan')):>8.1f}"
        )
    total_threads = sum(sampler.peak.get(pid, [0, 0])[1] for pid in web)
    print(
        f"{'web processes, total':<22}{'':>8}{sampler.peak_total / 1024:>14.1f}{total_threads:>14}"
        f"{sum(sampler.cpu.get(pid, 0.0) for pid in web):>8.1f}   (RSS: peak of the sum)"
    )
    for label, pid in (("gunicorn master", sampler.master), ("celery worker", sampler.worker)):
        rss, threads = sampler.peak.get(pid, [0, 0])
        print(
            f"{label:<22}{pid:>8}{rss / 1024:>14.1f}{threads:>14}"
            f"{sampler.cpu.get(pid, float('nan')):>8.1f}"
        )
    for label, pid in sampler.others.items():
        print(f"{label:<22}{pid:>8}{'':>14}{'':>14}{sampler.cpu.get(pid, float('nan')):>8.1f}")
    ours = sum(sampler.cpu.values())
    print(
        f"machine: {os.cpu_count()} cores, busy {sampler.machine_busy:.0f} % of a core in all "
        f"during the steady state; the processes above {ours:.0f} %, the rest (PostgreSQL, "
        f"anything else running) {sampler.machine_busy - ours:.0f} %; load average at the "
        f"start {scene.load_average:.2f}"
    )
    workers = int(option(command, "--workers", "1"))
    if len(web) != workers or any(pid not in children(sampler.master) for pid in web):
        broken.append(f"web processes died or were replaced: {len(web)} seen, {workers} expected")
    return broken


# -- the run ----------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> None:
    soft, hard = raise_open_files()
    dockerfile = Path(args.dockerfile).resolve()
    cmd = image_command(dockerfile)
    workers = "the CMD's" if args.web_workers is None else "--web-workers"
    print(f"Dockerfile: {dockerfile}\nCMD: {json.dumps(cmd)}")
    print(
        f"open files limit: {soft} (hard {hard}); web --workers "
        f"{args.web_workers or option(cmd, '--workers')} ({workers})",
        flush=True,
    )
    if soft < args.bots + args.browsers + args.accounts + args.slow + 256:
        print(f"warning: {soft} open files may be too few for this crowd", flush=True)
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-crowd-")))
        database_url = stack.enter_context(postgres_database())
        redis_port, redis_pid = stack.enter_context(redis_server(tmp))
        from arena import sealing

        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        env.update(image_env(dockerfile))
        env.update(
            {
                "ARENA_RELAY_HOST": "127.0.0.1",  # the container's address, on this host
                "ARENA_DATA_DIR": str(tmp / "data"),
                "ARENA_DATABASE_URL": database_url,
                "ARENA_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
                "ARENA_RATELIMIT_STORAGE": f"redis://127.0.0.1:{redis_port}/1",
                "ARENA_SECRET_KEY": secrets.token_hex(32),
                "ARENA_SECRETS_KEY": sealing.new_key(),
                "ARENA_ORGANISER_TOKEN": secrets.token_urlsafe(32),
                "PYTHONPATH": PYTHONPATH,
            }
        )
        print(
            "environment: "
            + ", ".join(
                f"{k}={v}"
                for k, v in sorted(env.items())
                if k
                in (
                    "ARENA_PROFILE",
                    "ARENA_RELAY_HOST",
                    "ARENA_BROKER_URL",
                    "ARENA_RATELIMIT_STORAGE",
                    "ARENA_DATABASE_URL",
                )
            ),
            flush=True,
        )
        began = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "arena", "db", "upgrade"],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"arena db upgrade: {time.monotonic() - began:.1f} s", flush=True)
        port = free_port()
        command = host_command(cmd, port, args.web_workers)
        web_log = tmp / "web.log"
        # stopped as the deployment stops it: the requests in flight get --graceful-timeout
        grace = float(option(command, "--graceful-timeout", "30"))
        web = stack.enter_context(started(command, env, web_log, stop_seconds=grace + 10))
        expected = int(option(command, "--workers", "1"))

        def up() -> bool:
            if web.poll() is not None:
                raise SystemExit(f"the web command exited: {web_log.read_text()[-2000:]}")
            return accepts(port) and len(children(web.pid)) >= expected

        wait_until(up, 60, "the web command")
        worker = stack.enter_context(
            started([sys.executable, "-m", "arena", "worker"], env, tmp / "worker.log")
        )
        others = {"load side, crowd": os.getpid(), "redis-server (ours)": redis_pid}
        sampler = Sampler(web.pid, worker.pid, others)
        try:
            without_pauses()
            scene = asyncio.run(crowd(args, port, env, sampler))
        finally:
            if web.poll() is not None or worker.poll() is not None:
                for log in (web_log, tmp / "worker.log"):
                    print(f"--- {log.name}, last lines:\n{log.read_text()[-3000:]}")
            if args.logs:
                Path(args.logs).mkdir(parents=True, exist_ok=True)
                for log in (web_log, tmp / "worker.log"):
                    shutil.copy(log, Path(args.logs) / log.name)
        display = [Path(command[0]).name, *command[1:]]
        broken = report(args, scene, sampler, display)
        if web.poll() is not None:
            broken.append(f"the gunicorn master exited ({web.returncode})")
    if broken:
        sys.exit("broken:\n  " + "\n  ".join(broken))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--bots", type=int, default=5000, help="connected bots, a poll each")
    parser.add_argument("--players", type=int, default=4, help="connected bots that play")
    parser.add_argument("--matches", type=int, default=40, help="the players' tournament")
    parser.add_argument("--browsers", type=int, default=20, help="people browsing")
    parser.add_argument("--browse-pause", type=float, default=0.5, help="seconds between pages")
    parser.add_argument("--accounts", type=int, default=60, help="a class logging in at once")
    parser.add_argument("--slow", type=int, default=0, help="slow connections")
    parser.add_argument("--seconds", type=float, default=60.0, help="steady state")
    parser.add_argument(
        "--drain", type=float, default=120.0, help="more seconds for the tournament to finish"
    )
    parser.add_argument(
        "--connect-wait", type=float, default=180.0, help="seconds for every bot's poll to be sent"
    )
    parser.add_argument("--web-workers", type=int, help="--workers (default: the CMD's)")
    parser.add_argument(
        "--register",
        choices=["api", "db"],
        default="api",
        help="register the bots through the API (organiser token) or into the database",
    )
    parser.add_argument("--dockerfile", default=str(DOCKERFILE), help="whose CMD and ENV to run")
    parser.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        help="seconds over which the crowd connects (0: at once, as after a restart)",
    )
    parser.add_argument("--logs", help="copy the web's and the worker's logs into this folder")
    args = parse_args(
        parser,
        smoke={
            "bots": 3,
            "matches": 4,
            "browsers": 2,
            "accounts": 3,
            "slow": 1,
            "seconds": 3.0,
            "drain": 60.0,
            "connect_wait": 30.0,
        },
    )
    if not 2 <= args.players <= SEATS:
        parser.error(f"--players: 2 to {SEATS} (they all sit at every match)")
    # a round robin plays each pairing a multiple of its seats times (every seat as often)
    args.matches = max(1, -(-args.matches // args.players)) * args.players
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed: this benchmark starts one of its own")
    print_versions("gunicorn", "gevent", "flask", "sqlalchemy", "psycopg", "redis", "celery")
    run(args)


if __name__ == "__main__":
    main()
