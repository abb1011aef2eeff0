"""What worker deaths cost a tournament: matches lost, and deals shown twice.

    python benchmarks/kills.py [--lane services|embedded] [--matches 180] [--kills 4]
        [--every 12] [--workers 2] [--latency-ms 100] [--seconds 600] [--warmup 3]
        [--lease-seconds S] [--smoke]

``arena serve``, ``--workers`` worker processes and four SDK bots in processes of their own
(answering after ``--latency-ms``) play a round robin of ``--matches`` two-seat Cactus
matches; every ``--every`` seconds one worker is killed with SIGKILL (``--kills`` times,
each replaced by a fresh one at once).  It prints how many matches finished and failed,
how long the tournament took, and, for the seats of every attempt after a match's first,
how many saw a first view identical to one an earlier attempt of the same match had shown
that seat (the bots write a digest of each attempt's first view).  Run it on two
checkouts to compare them: it uses only the API, the command line and the protocol.
A tournament still unfinished after ``--seconds`` makes it exit with an error, once the
figures are printed.  ``--lease-seconds`` sets the arena's ``ARENA_LEASE_SECONDS`` (how
soon a dead worker's matches are taken over).

``--smoke``: the embedded lane, 12 matches, one worker killed once, 1 s in; bots that
answer at once, leases of 3 s, 1 s for the worker to start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from referee import PYTHONPATH, free_ports, processes
from tournament import api, services_env, wait_http

# an SDK sample bot that answers after the think time and writes, for each attempt of a
# match it plays (each /start), a digest of the first view it is sent
VIEW_BOT = """
import hashlib, json, sys, threading, time
from arenabot import run
from sample_bots.policy_bot import PolicyBot
game, policy, latency, log = sys.argv[1], sys.argv[2], float(sys.argv[3]) / 1000, sys.argv[4]
lock, fresh = threading.Lock(), set()
class Watching(PolicyBot):
    def start(self, info):
        with lock:
            fresh.add((info["match_id"], info["seat"]))
        super().start(info)
    def on_act(self, request):
        key = (request["match_id"], request["seat"])
        with lock:
            first = key in fresh
            fresh.discard(key)
        if first:
            digest = hashlib.sha256(json.dumps(request["view"], sort_keys=True).encode())
            line = json.dumps({"match": key[0].split(".")[0], "seat": key[1],
                               "view": digest.hexdigest()})
            with lock, open(log, "a") as f:
                f.write(line + "\\n")
        time.sleep(latency)
        return super().on_act(request)
run(Watching(game, policy), sys.argv[5:])
"""


def views_shown_again(log: Path) -> tuple[int, int]:
    """(seats of attempts after a match's first, those whose first view an earlier
    attempt of the match had shown that seat)."""
    seen: dict[tuple[str, int], list[str]] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            seen.setdefault((entry["match"], entry["seat"]), []).append(entry["view"])
    again = repeated = 0
    for views in seen.values():
        for k, view in enumerate(views[1:], start=1):
            again += 1
            repeated += view in views[:k]
    return again, repeated


def run(args: argparse.Namespace) -> None:
    with ExitStack() as stack:
        data_dir = Path(tempfile.mkdtemp(prefix="arena-kills-"))
        stack.callback(shutil.rmtree, data_dir, True)
        env = {**os.environ, "ARENA_DATA_DIR": str(data_dir), "PYTHONPATH": PYTHONPATH}
        if args.lease_seconds is not None:
            env["ARENA_LEASE_SECONDS"] = str(args.lease_seconds)
        if args.lane == "services":
            env.update(stack.enter_context(services_env()))
        port, *bot_ports = free_ports(5)
        # arena serve brings the schema to the newest migration itself
        serve = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stack.callback(lambda: (serve.terminate(), serve.wait()))
        base = f"http://127.0.0.1:{port}"

        # each bot starts unsigned (while the server starts), is registered, restarts
        # with its secret
        log = data_dir / "first-views.jsonl"
        policies = ["heuristic", "random", "random", "random"]
        unsigned = [
            ([sys.executable, "-c", VIEW_BOT, "cactus", policy, str(args.latency_ms), str(log),
              "--port", str(bot_port)], bot_port)
            for policy, bot_port in zip(policies, bot_ports, strict=True)
        ]  # fmt: skip
        with processes(unsigned) as urls:
            wait_http(base + "/api/games", proc=serve)
            bots = []
            for i, url in enumerate(urls):
                body = {"name": f"kills-{i}", "endpoint": url, "owner": "bench"}
                bots.append(api(base, "POST", "/api/bots", body))
        signed = [
            ([*argv, f"--secret={bot['signing_secret']}"], bot_port)
            for (argv, bot_port), bot in zip(unsigned, bots, strict=True)
        ]
        stack.enter_context(processes(signed))
        bot_ids = [bot["id"] for bot in bots]

        workers: list[subprocess.Popen[bytes]] = []

        def start_worker() -> None:
            workers.append(
                subprocess.Popen(
                    [sys.executable, "-m", "arena", "worker"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

        def stop_workers() -> None:
            for w in workers:
                with contextlib.suppress(ProcessLookupError):
                    w.terminate()
            for w in workers:
                try:
                    w.wait(20)
                except subprocess.TimeoutExpired:
                    w.kill()

        stack.callback(stop_workers)
        for _ in range(args.workers):
            start_worker()
        time.sleep(args.warmup)  # the workers connect to the broker
        games = -(-args.matches // 6)  # six pairings of four bots, an even number each
        tournament = api(
            base,
            "POST",
            "/api/tournaments",
            {
                "name": "kills",
                "game": "cactus",
                "bot_ids": bot_ids,
                "seed": 1,
                "seats_per_match": 2,
                "games_per_pairing": games + games % 2,
            },
        )
        tid = tournament["id"]
        started = time.monotonic()
        kills = 0
        gave_up = False
        while True:
            elapsed = time.monotonic() - started
            if kills < args.kills and elapsed >= args.every * (kills + 1):
                victim = workers[0]  # the longest-lived: it holds matches
                os.kill(victim.pid, signal.SIGKILL)
                victim.wait()
                workers.remove(victim)
                start_worker()
                kills += 1
            progress = api(base, "GET", f"/api/tournaments/{tid}")["progress"]
            if progress["queued"] + progress["running"] == 0:
                break
            if elapsed > args.seconds:
                print(f"  gave up waiting after {elapsed:.0f} s: {progress}")
                gave_up = True
                break
            time.sleep(0.5)
        elapsed = time.monotonic() - started
        again, repeated = views_shown_again(log)
    print(
        f"{args.lane} lane, {args.workers} workers, {kills} kills {args.every:g} s apart, "
        f"bots answering after {args.latency_ms:g} ms"
    )
    print(
        f"  {progress['finished']} of {progress['total']} matches finished, "
        f"{progress['failed']} failed, in {elapsed:.0f} s"
    )
    print(f"  seats of a match's later attempts: {again}, shown a first view again: {repeated}")
    if gave_up:
        sys.exit(f"the tournament did not finish within {args.seconds:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", choices=["embedded", "services"], default="services")
    parser.add_argument("--matches", type=int, default=180)
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--every", type=float, default=12.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds for workers to start")
    parser.add_argument(
        "--lease-seconds", type=float, default=None, help="ARENA_LEASE_SECONDS (default 15)"
    )
    args = parse_args(
        parser,
        smoke={
            "lane": "embedded",
            "matches": 6,
            "kills": 1,
            "every": 1.0,
            "workers": 1,
            "latency_ms": 0.0,
            "seconds": 120.0,
            "lease_seconds": 3.0,
            "warmup": 1.0,
        },
    )
    print_versions("celery", "kombu", *(["redis", "psycopg"] if args.lane == "services" else []))
    run(args)


if __name__ == "__main__":
    main()
