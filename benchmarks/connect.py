"""The connect transport against the real arena: what a decision costs through a web
process's relay compared with a webhook, and what idle connected bots cost the web
process holding them.

    python benchmarks/connect.py [--decisions 300] [--matches 2] [--bots 1000] [--idle 20]
                                 [--server werkzeug|gunicorn] [--threads N] [--profile]
                                 [--smoke]

The web process is ``python -m arena serve`` (werkzeug, which closes every connection
after its answer), or with ``--server gunicorn`` the image's command (``deploy/Dockerfile``'s
``CMD``, read each run) with one gevent worker of its two (the ``server`` extra), on an
embedded database of its own.

1. Per decision, on loopback, the random Cactus sample bot (``PolicyBot``) run as a user
   runs it, in a process of its own; this process plays the worker:
   - webhook: ``HttpClient`` -> the SDK's server (``python -m sample_bots.cactus_random
     --port P``);
   - connect: ``RelayClient`` (the home looked up in the database per request, as a
     worker does) -> the relay listener of the web process -> the long poll of the SDK's
     ``ConnectClient`` (``python -m sample_bots.cactus_random --connect URL --bot-id ID
     --secret S``; ``--threads`` sets its polls, the SDK's default 8 otherwise).
   Two measures, each taking turns between the transports (the order swapped every
   repetition) ``--reps`` times: ``act``, ``--decisions`` sequential ``/act`` of one real
   payload (the median wall time of one); ``match``, ``--matches`` full 4-seat matches
   played by ``arena.match.referee.Referee`` with every seat the same bot (wall time per
   decision, start and end included).  Shown: min/median/max over the repetitions, the
   ms connect adds per decision and the ratio; the connect bot's latency as its home
   measured it (the part of the hop on the bot's side); the CPU per ``act`` of this
   process, the web process and the bot's; and, measured after, the floors of the steps
   a relayed decision is made of: the home's lookup (``sessions.locate``, a database
   session per call, once per match and bot), a poll the web process refuses at once, a
   hop the relay listener refuses at once.  ``--profile`` adds this process's CPU profile
   of the connect loop.

2. One web process holding ``--bots`` idle connected bots: the bots are registered
   directly in its database, then this process opens each one's session and keeps one
   long poll of each open (asyncio, one connection per bot, opened again when the server
   closes it, signed as the SDK signs; a poll that comes back empty after the arena's
   ``poll_seconds`` is sent again).  Shown, once the server's thread count has stopped
   growing: the web process's RSS (``VmRSS``) before and with the bots, per bot, its
   threads, and its CPU over ``--idle`` seconds with every poll open (``utime + stime``
   from ``/proc``), with what each poll sent again costs it.  A bot that could not open
   its session or keep its poll, or a web process that died, makes it exit with an error
   once the figures are printed.

``--smoke``: one repetition of 5 decisions and one match, then 3 idle bots for 1 s.

Run from the repository root with the server's dependencies installed (Linux: ``/proc``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import http.client
import io
import json
import os
import pstats
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
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
from sdk_roundtrip import act_body  # noqa: E402

from arena import sealing, services  # noqa: E402
from arena.cli.processes import stop_processes  # noqa: E402
from arena.config import Config, from_env  # noqa: E402
from arena.db import Database  # noqa: E402
from arena.match.exchanges import settle  # noqa: E402
from arena.match.http_client import HttpClient  # noqa: E402
from arena.match.pools import Pools  # noqa: E402
from arena.match.referee import Referee  # noqa: E402
from arena.relay import sessions  # noqa: E402
from arena.relay.client import RelayClient  # noqa: E402

PYTHONPATH = os.pathsep.join([str(ROOT), str(ROOT / "sdk")])
HOOK_SECRET = "benchmark-webhook-secret"
SEATS = 4
# what an idle poller says of itself as it opens its session (as an SDK bot's GET /)
INFO = {"apiversion": "1", "name": "idle", "sdk": "benchmark", "games": ["cactus"], "capacity": 1}
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


# -- processes -------------------------------------------------------------------------------


@contextmanager
def started(argv: list[str], env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """A process of this checkout (its output to a file: a full pipe must not stall it)."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed when the process is stopped)
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": PYTHONPATH, **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield proc
    finally:
        stop_processes([proc], timeout=10)
        log.close()


SERVERS = {
    "werkzeug": "arena serve (werkzeug, a thread per connection; it closes each one)",
    "gunicorn": "the image's command (deploy/Dockerfile's CMD) with --workers 1 (keep-alive)",
}


@contextmanager
def web_process(
    data_dir: Path, server: str = "werkzeug", threads: int = 64
) -> Iterator[tuple[int, str, Database, Config]]:
    """One web process on a free port with an embedded database under ``data_dir``:
    ``arena serve``, or gunicorn with one gevent worker (as the deployment runs it, one
    process of its two; ``threads`` is werkzeug's only).  Yields the pid of the process
    serving requests, its address, its database as a worker opens it, and its
    configuration (which a process writing bots into its database seals their secrets
    with: ``arena.sealing.use``)."""
    port = free_port()
    env = {"ARENA_DATA_DIR": str(data_dir), "ARENA_PROFILE": "local"}
    config = from_env({**os.environ, **env})  # the web process's: it gets this environment
    database = Database(config.database_url)
    if server == "werkzeug":
        argv = [sys.executable, "-m", "arena", "serve", "--port", str(port)]
    else:
        database.upgrade()  # arena serve does it itself
        argv = host_command(image_command(ROOT / "deploy" / "Dockerfile"), port, workers=1)
    try:
        with started(argv, env) as proc:
            wait_until(lambda: accepts(port) or proc.poll() is not None, 60, server)
            if proc.poll() is not None:
                raise RuntimeError(f"{server} exited at start")
            pid = proc.pid
            if server == "gunicorn":  # the worker process, not the arbiter
                children = Path(f"/proc/{pid}/task/{pid}/children")
                wait_until(lambda: children.read_text().split(), 30, "gunicorn's worker")
                pid = int(children.read_text().split()[0])
            yield pid, f"http://127.0.0.1:{port}", database, config
    finally:
        database.dispose()


def api(url: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read() or b"null")


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def running(pid: int) -> bool:
    """Whether the process is alive (not gone, nor a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def spread(values: list[float]) -> str:
    return f"{min(values):7.3f} {statistics.median(values):7.3f} {max(values):7.3f}"


# -- 1. per decision -----------------------------------------------------------------------
def act_loop(client: Any, payload: dict[str, Any], n: int) -> tuple[float, float]:
    """The median wall seconds of ``n`` sequential ``/act``, and the median latency the
    referee records (for a connect bot: what its home measured, from the request handed
    to the bot's poll to its answer arriving in the next poll)."""
    walls, recorded = [], []
    for _ in range(n):
        began = time.perf_counter()
        exchange = client.begin_act(payload)
        settle([exchange])
        answer = exchange.result()
        walls.append(time.perf_counter() - began)
        recorded.append(exchange.finished - exchange.started)
        assert isinstance(answer, dict) and "action" in answer, answer
    return statistics.median(walls), statistics.median(recorded)


def refused_round_trip(port: int, path: str, n: int, keep_alive: bool) -> float:
    """The median ms of a request the server refuses at once (a wrong signature): what
    serving one request costs it at least, on a new connection each or one kept."""
    headers = {
        "Content-Type": "application/json",
        "X-Arena-Timestamp": "1",
        "X-Arena-Signature": "sha256=0",
    }
    body = json.dumps({"bot_id": 1, "request_id": "0" * 32, "session": "x", "answers": []})
    times = []
    conn = http.client.HTTPConnection("127.0.0.1", port)
    try:
        for _ in range(n):
            if not keep_alive:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port)
            began = time.perf_counter()
            conn.request("POST", path, body.encode(), headers)
            answer = conn.getresponse()
            answer.read()
            times.append(time.perf_counter() - began)
            assert answer.status == 401, answer.status
    finally:
        conn.close()
    return statistics.median(times) * 1e3


def match_loop(clients: list[Any], matches: int, seed: int) -> float:
    """Wall seconds per decision of ``matches`` full matches (start and end included)."""
    referee = Referee()
    decisions = 0
    began = time.perf_counter()
    for m in range(matches):
        record = referee.run("cactus", clients, seed=seed + m, match_id=f"bench-{seed + m}")
        for step in record.steps:  # format 2 (a list of decisions) or 1 (an object)
            made = step["decisions"] if isinstance(step, dict) else step
            decisions += len(made)
            faults = [d["fault"] for d in made if d.get("fault")]
            assert not faults, faults
    return (time.perf_counter() - began) / decisions


def per_decision(args: argparse.Namespace, tmp: Path) -> None:
    payload = json.loads(act_body("cactus", SEATS))
    bot = "sample_bots.cactus_random"
    with ExitStack() as stack:
        web_pid, url, database, config = stack.enter_context(
            web_process(tmp / "latency", args.server)
        )
        # this process plays the worker: its hops are signed with the relay key, derived
        # from the arena's secrets key (the web process's data dir's key file)
        sealing.use(config)
        made = api(
            url,
            "POST",
            "/api/bots",
            {"name": "bench-laptop", "connect": True, "owner": "bench", "games": ["cactus"]},
        )
        bot_id, secret = made["id"], made["signing_secret"]
        threads = [] if args.threads is None else ["--threads", str(args.threads)]
        laptop = stack.enter_context(
            started(
                [
                    sys.executable,
                    "-m",
                    bot,
                    "--connect",
                    url,
                    "--bot-id",
                    str(bot_id),
                    "--secret",
                    secret,
                    *threads,
                ]
            )
        )
        hook_port = free_port()
        hook = stack.enter_context(
            started(
                [
                    sys.executable,
                    "-m",
                    bot,
                    "--port",
                    str(hook_port),
                    "--secret",
                    HOOK_SECRET,
                    *threads,
                ]
            )
        )
        wait_until(lambda: accepts(hook_port) or hook.poll() is not None, 30, "webhook bot")

        def locate() -> str | None:  # what arena.worker gives a RelayClient
            with database.session() as session:
                return sessions.locate(session, bot_id)

        wait_until(lambda: locate() is not None, 30, "the connect bot's session")
        info = api(url, "GET", f"/api/bots/{bot_id}")
        capacity = (info.get("connection") or {}).get("capacity") or 1
        pools, relay_pools = Pools(), Pools()
        stack.callback(pools.close)
        stack.callback(relay_pools.close)
        endpoint = f"http://127.0.0.1:{hook_port}"
        ways: dict[str, list[Any]] = {
            "webhook": [
                HttpClient(endpoint, HOOK_SECRET, f"hook{i}", pool=pools.get(endpoint, capacity))
                for i in range(SEATS)
            ],
            "connect": [
                RelayClient(
                    bot_id,
                    secret,
                    f"laptop{i}",
                    locate=locate,
                    pools=relay_pools,
                    capacity=capacity,
                )
                for i in range(SEATS)
            ],
        }
        for clients in ways.values():  # warm up: connections, caches, the bot's policies
            act_loop(clients[0], payload, 30)
            match_loop(clients, 1, seed=10_000)
        acts: dict[str, list[float]] = {name: [] for name in ways}
        home_ms: list[float] = []  # the connect bot's latency as its home measured it
        matches: dict[str, list[float]] = {name: [] for name in ways}
        # CPU ms per decision of the acts: (worker, web process, bot process) per transport
        cpu: dict[str, list[float]] = {name: [0.0, 0.0, 0.0] for name in ways}
        bot_pid = {"webhook": hook.pid, "connect": laptop.pid}
        for rep in range(args.reps):
            order = list(ways) if rep % 2 == 0 else list(reversed(ways))
            for name in order:
                marks = (time.process_time(), cpu_ticks(web_pid), cpu_ticks(bot_pid[name]))
                wall, recorded = act_loop(ways[name][0], payload, args.decisions)
                spent = (
                    time.process_time() - marks[0],
                    (cpu_ticks(web_pid) - marks[1]) / CLK_TCK,
                    (cpu_ticks(bot_pid[name]) - marks[2]) / CLK_TCK,
                )
                for i, seconds in enumerate(spent):
                    cpu[name][i] += seconds * 1e3 / (args.decisions * args.reps)
                acts[name].append(wall * 1e3)
                if name == "connect":
                    home_ms.append(recorded * 1e3)
            for name in order:
                matches[name].append(match_loop(ways[name], args.matches, seed=rep * 100) * 1e3)
        looks = []
        for _ in range(args.decisions):
            began = time.perf_counter()
            locate()
            looks.append(time.perf_counter() - began)
        home = locate()
        assert home is not None
        web_port, relay_port = int(url.rsplit(":", 1)[1]), int(home.rsplit(":", 1)[1])
        floors = {
            "web: a refused poll (401), new connection": refused_round_trip(
                web_port, "/api/connect/poll", args.decisions, keep_alive=False
            ),
            "relay listener: a refused hop (401), kept": refused_round_trip(
                relay_port, f"/relay/{bot_id}/act", args.decisions, keep_alive=True
            ),
        }
        profile = None
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            act_loop(ways["connect"][0], payload, args.decisions)
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
            profile = out.getvalue()

    print(f"web process: {SERVERS[args.server]}")
    print(
        f"1. per decision, loopback, cactus random sample bot (capacity {capacity}); "
        f"{args.reps} alternating repetitions"
    )
    print(
        f"   act: {args.decisions} sequential /act of {len(json.dumps(payload))} bytes, "
        f"median of each repetition; match: {args.matches} x {SEATS}-seat matches, "
        "wall time per decision"
    )
    print(f"   {'ms per decision':<28}{'min':>7} {'median':>7} {'max':>7}")
    for label, table in (("act", acts), ("match", matches)):
        added = [c - w for c, w in zip(table["connect"], table["webhook"], strict=True)]
        ratio = [c / w for c, w in zip(table["connect"], table["webhook"], strict=True)]
        print(f"   {label + ' webhook':<28}{spread(table['webhook'])}")
        print(f"   {label + ' connect':<28}{spread(table['connect'])}")
        print(f"   {label + ' added by connect':<28}{spread(added)}")
        print(f"   {label + ' ratio connect/webhook':<28}{spread(ratio)}")
    print(
        f"   {'act connect, home-measured':<28}{spread(home_ms)}  (handed to the poll -> "
        "answer in the next poll: the bot's side of the hop)"
    )
    for name in ("webhook", "connect"):
        worker, web, bot_cpu = cpu[name]
        print(
            f"   {'CPU ms per act, ' + name:<28}worker {worker:.3f}  web {web:.3f}  "
            f"bot {bot_cpu:.3f}  (all repetitions)"
        )
    print("   floors, measured after (what one request costs at least, end to end):")
    print(
        f"   {'worker: sessions.locate (a DB session)':<46}median "
        f"{statistics.median(looks) * 1e3:.3f} ms per call "
        "(once per match and bot, again only when the bot moves)"
    )
    for label, ms in floors.items():
        print(f"   {label:<46}median {ms:.3f} ms per request")
    if profile:
        print("   the worker's profile of the connect act loop (cumulative):")
        print("\n".join("     " + line for line in profile.strip().splitlines()))


# -- 2. idle bots --------------------------------------------------------------------------
class Pollers:
    """``n`` connected bots, each one keep-alive connection with one long poll open."""

    def __init__(self, host: str, port: int, bots: list[tuple[int, str]]):
        self.host, self.port, self.bots = host, port, bots
        self.opened = 0  # sessions opened
        self.waiting = 0  # polls being sent or sent, and not answered yet
        self.answered = 0  # polls answered (empty, after poll_seconds)
        self.failures: dict[str, int] = {}
        self.connections = 0  # TCP connections opened
        self.gate = asyncio.Semaphore(64)  # connections being opened at once

    def failed(self, why: str) -> None:
        self.failures[why] = self.failures.get(why, 0) + 1

    async def post(
        self, link: dict[str, Any], path: str, bot_id: int, secret: str, fields: dict[str, Any]
    ) -> tuple[int, Any]:
        """One signed POST on the bot's connection (``link["streams"]``), opened again
        when the server closed it after its last answer (werkzeug closes every one)."""
        if link.get("streams") is None:
            async with self.gate:  # the listener's backlog is 128
                link["streams"] = await asyncio.open_connection(self.host, self.port)
            self.connections += 1
        reader, writer = link["streams"]
        body = json.dumps(
            {"bot_id": bot_id, "request_id": secrets.token_hex(16), **fields}, separators=(",", ":")
        ).encode()
        head = [
            f"POST /api/connect/{path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        head += [f"{k}: {v}" for k, v in signed_headers(secret, body).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields_ = (line.partition(":") for line in lines[1:] if line)
        headers = {name.lower(): value.strip() for name, _, value in fields_}
        data = await reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            writer.close()
            link["streams"] = None
        return status, json.loads(data) if data else None

    async def bot(self, bot_id: int, secret: str) -> None:
        try:
            link: dict[str, Any] = {}
            status, opened = await self.post(link, "session", bot_id, secret, {"info": INFO})
            if status != 200:
                self.failed(f"session HTTP {status}")
                return
            self.opened += 1
            while True:
                self.waiting += 1
                try:
                    status, _ = await self.post(
                        link, "poll", bot_id, secret, {"session": opened["session"], "answers": []}
                    )
                finally:
                    self.waiting -= 1
                if status != 200:
                    self.failed(f"poll HTTP {status}")
                    return
                self.answered += 1
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            self.failed(type(exc).__name__)

    def start(self) -> list[asyncio.Task]:
        return [asyncio.ensure_future(self.bot(b, s)) for b, s in self.bots]


async def hold(
    args: argparse.Namespace, pid: int, url: str, bots: list[tuple[int, str]]
) -> dict[str, Any]:
    host, port = url.removeprefix("http://").split(":")
    pollers = Pollers(host, int(port), bots)
    began = time.monotonic()
    tasks = pollers.start()
    n = len(bots)
    while time.monotonic() - began < args.connect_wait:
        failed = sum(pollers.failures.values())
        if pollers.waiting + failed >= n:  # every poll sent (or failed)
            break
        await asyncio.sleep(0.2)
    # ... and taken by the server (a thread each) once its threads stop growing for 2 s
    count, same_since = -1, time.monotonic()
    while time.monotonic() - same_since < 2.0 and time.monotonic() - began < args.connect_wait:
        if threads_of(pid) != count:
            count, same_since = threads_of(pid), time.monotonic()
        await asyncio.sleep(0.25)
    connected_in = time.monotonic() - began
    result = {
        "connected_in": connected_in,
        "opened": pollers.opened,
        "waiting": pollers.waiting,
        "rss_with": rss_kib(pid),
        "threads_with": threads_of(pid),
    }
    answered, ticks, t0 = pollers.answered, cpu_ticks(pid), time.monotonic()
    await asyncio.sleep(args.idle)
    result["cpu"] = (cpu_ticks(pid) - ticks) / CLK_TCK / (time.monotonic() - t0) * 100
    result["answered_idle"] = pollers.answered - answered
    result["waiting_after"] = pollers.waiting
    result["rss_after"] = rss_kib(pid)
    result["failures"] = dict(pollers.failures)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return result


def idle_bots(args: argparse.Namespace, tmp: Path) -> None:
    n = args.bots
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 256:  # this process's end of every connection
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1024), hard))
    with web_process(tmp / "idle", args.server, threads=n + 64) as (pid, url, database, config):
        # the secrets written here must be sealed with the web process's key, or it
        # cannot open them (its data dir's key file, not one of this directory's)
        sealing.use(config)
        bots: list[tuple[int, str]] = []
        with database.session() as session:
            for i in range(n + 1):
                secret = f"bench-idle-secret-{i:06d}-{secrets.token_hex(8)}"
                bot, _, _ = services.register_bot(
                    session,
                    config,
                    name=f"idle-{i}",
                    owner="bench",
                    games=["cactus"],
                    signing_secret=secret,
                    connect=True,
                )
                session.flush()
                bots.append((bot.id, secret))
        warm_id, warm_secret = bots.pop()

        async def warm_up() -> None:  # the connect endpoints' first use: relay, hub, caches
            host, port = url.removeprefix("http://").split(":")
            pollers = Pollers(host, int(port), [])
            link: dict[str, Any] = {}
            status, opened = await pollers.post(
                link, "session", warm_id, warm_secret, {"info": INFO}
            )
            if status != 200:
                raise RuntimeError(f"the arena refused a session: HTTP {status} {opened}")
            await pollers.post(
                link,
                "poll",
                warm_id,
                warm_secret,
                {"session": opened["session"], "answers": [], "draining": True},
            )
            await pollers.post(link, "close", warm_id, warm_secret, {"session": opened["session"]})
            if link.get("streams") is not None:
                link["streams"][1].close()

        asyncio.run(warm_up())
        for _ in range(20):
            api(url, "GET", "/api/bots")
        time.sleep(1.0)
        before, threads_before = rss_kib(pid), threads_of(pid)
        ticks, t0 = cpu_ticks(pid), time.monotonic()
        time.sleep(min(args.idle, 5.0))
        cpu_empty = (cpu_ticks(pid) - ticks) / CLK_TCK / (time.monotonic() - t0) * 100
        held = asyncio.run(hold(args, pid, url, bots))
        alive = running(pid)

    added = held["rss_with"] - before
    per_bot = added / max(held["waiting"], 1)
    print(f"2. one web process, {SERVERS[args.server]}, holding {n} idle connect bots")
    print(
        f"   sessions opened {held['opened']}/{n}, polls open {held['waiting']}/{n} "
        f"after {held['connected_in']:.1f} s; failures {held['failures'] or 'none'}; "
        f"web process {'alive' if alive else 'DIED'}"
    )
    print(f"   {'RSS before (no bot)':<34}{before / 1024:8.1f} MiB  threads {threads_before}")
    print(
        f"   {'RSS with the bots':<34}{held['rss_with'] / 1024:8.1f} MiB  threads "
        f"{held['threads_with']}"
    )
    print(f"   {'RSS after the idle window':<34}{held['rss_after'] / 1024:8.1f} MiB")
    print(f"   {'RSS per bot with a poll open':<34}{per_bot:8.1f} KiB")
    print(f"   {'CPU with no bot':<34}{cpu_empty:8.1f} % of a core")
    idle = f"CPU over {args.idle:g} s idle, polls open"
    print(
        f"   {idle:<34}{held['cpu']:8.1f} % of a core "
        f"({held['answered_idle']} polls came back empty and were sent again; "
        f"{held['waiting_after']} open at the end)"
    )
    if held["answered_idle"]:  # an idle bot's cost is its poll sent again every poll_seconds
        per_poll = held["cpu"] / 100 * args.idle / held["answered_idle"] * 1e3
        print(
            f"   {'CPU per poll sent again':<34}{per_poll:8.1f} ms (at the default 25 s per "
            f"poll: {per_poll * n / 25 / 10:.1f} % of a core for {n} bots)"
        )
    if held["failures"] or not alive:
        sys.exit("2. failed: a bot's session or poll failed, or the web process died")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--decisions", type=int, default=300, help="sequential /act per turn")
    parser.add_argument("--matches", type=int, default=2, help="full matches per turn")
    parser.add_argument("--reps", type=int, default=3, help="turns each transport takes")
    parser.add_argument(
        "--threads", type=int, default=None, help="the sample bot's --threads (default: the SDK's)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="profile the worker's side of the connect act loop"
    )
    parser.add_argument("--bots", type=int, default=1000, help="idle connected bots (0: skip)")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of idle CPU measured")
    parser.add_argument(
        "--connect-wait",
        type=float,
        default=120.0,
        help="seconds to wait for every bot's poll to be open",
    )
    parser.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default="werkzeug",
        help="the web process: arena serve, or gunicorn as deployed (pip install gunicorn)",
    )
    parser.add_argument("--skip-decisions", action="store_true", help="only part 2")
    args = parse_args(
        parser,
        smoke={"decisions": 5, "matches": 1, "reps": 1, "bots": 3, "idle": 1.0},
    )
    print_versions("werkzeug" if args.server == "werkzeug" else "gunicorn")
    with tempfile.TemporaryDirectory(prefix="arena-connect-bench-") as tmp:
        if not args.skip_decisions:
            per_decision(args, Path(tmp))
        if args.bots > 0:
            idle_bots(args, Path(tmp))


if __name__ == "__main__":
    main()
