"""The whole path end to end: ``arena serve``, worker processes and SDK bots in processes
of their own that answer after an injected think time, one round robin through the API.

    python benchmarks/tournament.py [--lane embedded|services] [--latency-ms 50]
        [--game cactus-game] [--bots 4] [--seats 4] [--matches 600] [--workers 1]
        [--seconds 60] [--warmup 3] [--worker-arg=--concurrency=8 ...] [--smoke]

``embedded`` is the default of a fresh install (a SQLite file and the file-system
broker); ``services`` makes a PostgreSQL database of its own on 127.0.0.1:5432 and starts
a ``redis-server`` of its own on a free port.  Workers run with default flags unless
``--worker-arg`` says otherwise.

It prints, over the window from the tournament's creation to its end (or ``--seconds``):
matches finished per second and per minute, decisions per second, matches in flight
(``progress.running`` of ``GET /api/tournaments/<id>``, polled), the workers' CPU time
per decision and their peak memory, and the ratio of the time a match took per decision
to the floor measured in the same run: the engine's own time per decision (the recorded
matches replayed in-process) + a raw ``http.client`` round trip of the same size to a
one-write server + the injected think time.

``--smoke``: the embedded lane, two bots at two seats playing two matches with no think
time, 1 s for the worker to start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from referee import PYTHONPATH, free_port, free_ports, processes, raw_round_trip
from sdk_roundtrip import act_body

from arena.games import get_game

ROOT = Path(__file__).resolve().parent.parent
# an SDK sample bot whose every answer leaves after the think time: a bot on another
# machine (network round trip plus thinking); it sleeps outside any lock, as a real
# bot's network delay does not queue its other matches
LATENCY_BOT = """
import sys, time
from arenabot import run
from sample_bots.policy_bot import PolicyBot
game, policy, latency = sys.argv[1], sys.argv[2], float(sys.argv[3]) / 1000
class Slow(PolicyBot):
    def on_act(self, request):
        time.sleep(latency)
        return super().on_act(request)
run(Slow(game, policy), sys.argv[4:])
"""


def api(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


@contextmanager
def services_env() -> Iterator[dict[str, str]]:
    """A PostgreSQL database and a redis-server of this run's own."""
    import psycopg

    name = f"arena_bench_{uuid.uuid4().hex[:10]}"
    admin = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
    redis_port = free_port()
    redis = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield {
            "ARENA_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
            "ARENA_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
        }
    finally:
        redis.terminate()
        redis.wait()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a prefork worker's children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    return tree


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes and their descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for root in pids:
        for p in process_tree(root):
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def rss_mib(pids: list[int]) -> float:
    total = 0
    for root in pids:
        for p in process_tree(root):
            try:
                status = Path(f"/proc/{p}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def wait_http(url: str, seconds: float = 60, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Until ``url`` answers (an error after ``seconds``, or once ``proc`` has exited)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{proc.args} exited ({proc.returncode})") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer") from None
            time.sleep(0.1)


def decisions_of(record: dict[str, Any]) -> int:
    """Decisions in a replay, whatever its format (steps as lists of decisions, or as
    objects with a ``decisions`` list)."""
    return sum(len(s["decisions"]) if isinstance(s, dict) else len(s) for s in record["steps"])


def engine_seconds(records: list[dict[str, Any]]) -> float:
    """The engine's own time for these matches, replayed in-process: for each step the
    pending requests, the view of every asked seat, and applying the answers."""
    total = 0.0
    for record in records:
        game = get_game(record["game"])
        steps = [step["decisions"] if isinstance(step, dict) else step for step in record["steps"]]
        started = time.perf_counter()
        state = game.new_state(len(record["players"]), record["seed"], record["options"])
        for decisions in steps:
            for request in game.pending(state):
                game.view(state, request.seat)
            game.apply(state, {d["seat"]: d["action"] for d in decisions})
        total += time.perf_counter() - started
    return total


def run(args: argparse.Namespace) -> None:
    with ExitStack() as stack:
        data_dir = Path(tempfile.mkdtemp(prefix="arena-bench-"))
        stack.callback(shutil.rmtree, data_dir, True)
        env = {**os.environ, "ARENA_DATA_DIR": str(data_dir), "PYTHONPATH": PYTHONPATH}
        if args.lane == "services":
            env.update(stack.enter_context(services_env()))

        port, *bot_ports = free_ports(1 + args.bots)
        # arena serve brings the schema to the newest migration itself
        serve = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stack.callback(lambda: (serve.terminate(), serve.wait()))
        base = f"http://127.0.0.1:{port}"

        # the documented flow: a bot starts unsigned (while the server starts), is
        # registered, restarts with its secret
        policies = ["heuristic"] + ["random"] * (args.bots - 1)
        unsigned = [
            ([sys.executable, "-c", LATENCY_BOT, args.game, policy, str(args.latency_ms),
              "--port", str(bot_port)], bot_port)
            for policy, bot_port in zip(policies, bot_ports, strict=True)
        ]  # fmt: skip
        with processes(unsigned) as urls:
            wait_http(base + "/api/games", proc=serve)
            bots = [
                api(
                    base,
                    "POST",
                    "/api/bots",
                    {
                        "name": f"bench-{i}-{policy}",
                        "endpoint": url,
                        "owner": "bench",
                        "games": [args.game],
                    },
                )
                for i, (policy, url) in enumerate(zip(policies, urls, strict=True))
            ]
        signed = [
            ([*argv, f"--secret={bot['signing_secret']}"], bot_port)
            for (argv, bot_port), bot in zip(unsigned, bots, strict=True)
        ]
        stack.enter_context(processes(signed))
        bot_ids = [bot["id"] for bot in bots]

        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "arena", "worker", *args.worker_arg],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(args.workers)
        ]

        def stop_workers() -> None:
            for w in workers:
                w.terminate()
            for w in workers:
                try:
                    w.wait(20)
                except subprocess.TimeoutExpired:
                    w.kill()

        stack.callback(stop_workers)
        time.sleep(args.warmup)  # the workers connect to the broker
        pids = [w.pid for w in workers]
        per_pairing = -(-args.matches // args.seats) * args.seats
        cpu_before = cpu_seconds(pids)
        started = time.monotonic()
        tournament = api(
            base,
            "POST",
            "/api/tournaments",
            {
                "name": "bench",
                "game": args.game,
                "bot_ids": bot_ids,
                "seed": 1,
                "seats_per_match": args.seats,
                "games_per_pairing": per_pairing,
            },
        )
        tid = tournament["id"]
        running: list[int] = []
        peak_rss = 0.0
        while True:
            progress = api(base, "GET", f"/api/tournaments/{tid}")["progress"]
            running.append(progress["running"])
            peak_rss = max(peak_rss, rss_mib(pids))
            done = progress["finished"] + progress["failed"]
            elapsed = time.monotonic() - started
            if done >= progress["total"] or elapsed >= args.seconds:
                break
            time.sleep(0.5)
        cpu = cpu_seconds(pids) - cpu_before
        if progress["queued"] or progress["running"]:  # the window is over
            with contextlib.suppress(urllib.error.HTTPError):  # unless it just finished
                api(base, "POST", f"/api/tournaments/{tid}/cancel")

        matches = []
        page = 1
        while True:
            batch = api(
                base,
                "GET",
                f"/api/matches?tournament_id={tid}&status=finished&page_size=100&page={page}",
            )
            matches += batch
            if len(batch) < 100:
                break
            page += 1
        finished = [m for m in matches if m["finished_at"]]
        records = [api(base, "GET", f"/api/matches/{m['id']}/replay") for m in finished]
        decisions = sum(decisions_of(r) for r in records)
        failed = progress["failed"]

    sample = records[: min(len(records), 50)]
    engine = engine_seconds(sample) / max(sum(decisions_of(r) for r in sample), 1)
    rtt = raw_round_trip(act_body(args.game, args.seats))
    think = args.latency_ms / 1000
    # a match is a sequence of steps; a reaction window asks its seats at once, so the
    # floor of a match is one round trip and one think time per step, plus the engine
    ratios = [
        (
            datetime.fromisoformat(m["finished_at"]) - datetime.fromisoformat(m["started_at"])
        ).total_seconds()
        / (engine * decisions_of(r) + (rtt + think) * len(r["steps"]))
        for m, r in zip(finished, records, strict=True)
    ]
    n = len(finished)
    flags = " ".join(args.worker_arg) or "(default flags)"
    print(
        f"{args.lane} lane, {args.workers} worker(s) {flags}, {args.bots} bots answering "
        f"after {args.latency_ms:g} ms, {args.game} at {args.seats} seats"
    )
    print(f"  finished {n} matches ({failed} failed) and {decisions} decisions in {elapsed:.1f} s")
    print(f"  matches/s        {n / elapsed:8.2f}   ({60 * n / elapsed:.0f} per minute)")
    print(f"  decisions/s      {decisions / elapsed:8.0f}")
    print(f"  in flight        max {max(running)}, mean {statistics.fmean(running):.1f}")
    if decisions:
        print(
            f"  worker CPU       {1e6 * cpu / decisions:8.0f} us per decision "
            f"({cpu:.1f} s in all), peak memory {peak_rss:.0f} MiB"
        )
    print(
        f"  floor            engine {1e6 * engine:.0f} us per decision, raw round trip "
        f"{1e6 * rtt:.0f} us and think {args.latency_ms:g} ms per step"
    )
    if ratios:
        print(
            f"  a match took     {statistics.median(ratios):8.2f}x its floor (median over "
            f"matches; min {min(ratios):.2f}, max {max(ratios):.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", choices=["embedded", "services"], default="embedded")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--game", default="cactus-game")
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--matches", type=int, default=600)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds for workers to start")
    parser.add_argument(
        "--worker-arg", action="append", default=[], help="passed to arena worker (repeat)"
    )
    args = parse_args(
        parser,
        smoke={
            "lane": "embedded",
            "latency_ms": 0.0,
            "bots": 2,
            "seats": 2,
            "matches": 2,
            "seconds": 60.0,
            "warmup": 1.0,
        },
    )
    print_versions("celery", "kombu", *(["redis", "psycopg"] if args.lane == "services" else []))
    run(args)


if __name__ == "__main__":
    main()
