"""How one process best keeps many matches in flight: the measurement behind the worker's
design (docs/workers.md).

    python benchmarks/concurrency.py [--matches 100] [--latency-ms 0 50] [--seconds 15]
        [--smoke]

For each think time, the same number of concurrent Cactus Game matches against four SDK
bots (processes of their own, answering after the think time) is played three ways, each
in a process of its own for the same number of seconds:

- ``threads``: the arena's referee and HTTP client, one thread per match (what Celery's
  ``threads`` pool does);
- ``gevent``: the same code, one greenlet per match, the standard library patched by
  gevent (Celery's ``gevent`` pool; skipped unless gevent is installed);
- ``asyncio``: one event loop multiplexing every match, with a minimal client (orjson,
  the same signature, a Content-Length answer) and no deadline, record or fault handling:
  a lower bound of what an asyncio referee would cost.

It prints decisions per second and the process's CPU time (user + system) per decision,
with the ratio to ``threads`` measured in the same run, and the referee's faults (a bad
or late answer; the asyncio design stops at the first).  ``--smoke``: two matches in
flight, no think time, 0.3 s each.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from referee import PYTHONPATH, free_ports, processes
from tournament import LATENCY_BOT

GAME = "cactus-game"
SECRET = "benchmark-secret"

# each design runs as ``python -c RUNNER design matches seconds url...``; it prints one
# JSON line: decisions, faults (the referee's: a bad or late answer), seconds, user and
# system CPU seconds
RUNNER = r"""
import sys
design = sys.argv[1]
if design == "gevent":
    from gevent import monkey
    monkey.patch_all()
import hashlib, hmac, json, os, threading, time
matches, seconds, urls = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
GAME, SECRET = "cactus-game", "benchmark-secret"
count, faults = [0], [0]
lock = threading.Lock()

def arena_player(k, stop, pools):
    from arena.match.http_client import HttpClient
    from arena.match.referee import Referee
    m = 0
    while time.monotonic() < stop:
        clients = [HttpClient(u, SECRET, f"b{i}", pool=pools.get(u)) for i, u in enumerate(urls)]
        record = Referee().run(GAME, clients, seed=k * 100_000 + m)
        m += 1
        with lock:
            for step in record.steps:
                count[0] += len(step)
                faults[0] += sum(1 for d in step if d.get("fault"))

def run_threads(stop):
    from arena.match.pools import Pools
    pools = Pools()
    threads = [threading.Thread(target=arena_player, args=(k, stop, pools)) for k in range(matches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

def run_gevent(stop):
    import gevent
    from arena.match.pools import Pools
    pools = Pools()
    gevent.joinall([gevent.spawn(arena_player, k, stop, pools) for k in range(matches)])

def run_asyncio(stop):
    import asyncio
    from urllib.parse import urlsplit
    import orjson
    from arena.games import get_game
    from arena.games.base import find_legal
    mac = hmac.new(SECRET.encode(), None, hashlib.sha256)
    idle = {u: [] for u in urls}

    async def ask(url, payload):
        payload = {**payload, "request_id": os.urandom(16).hex()}  # the SDK refuses a replay
        if idle[url]:
            reader, writer = idle[url].pop()
        else:
            parts = urlsplit(url)
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        body = orjson.dumps(payload)
        stamp = b"%d" % time.time()
        signature = mac.copy()
        signature.update(stamp + b"." + body)
        writer.write(b"POST /act HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nX-Arena-Timestamp: %s\r\nX-Arena-Signature: "
                     b"sha256=%s\r\n\r\n" % (len(body), stamp, signature.hexdigest().encode())
                     + body)
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200 "):
            raise RuntimeError(f"the bot answered {head[:60]!r}")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        data = await reader.readexactly(length)
        idle[url].append((reader, writer))
        return orjson.loads(data)

    async def match(seed):
        game = get_game(GAME)
        state = game.new_state(len(urls), seed)
        step = 0
        while requests := game.pending(state):
            payloads = [{"match_id": str(seed), "decision_id": f"{step}:{r.seat}",
                         "game": GAME, "seat": r.seat, "view": game.view(state, r.seat),
                         "legal_actions": r.legal_actions, "deadline_ms": 2000}
                        for r in requests]
            replies = await asyncio.gather(*(ask(urls[r.seat], p)
                                             for r, p in zip(requests, payloads)))
            game.apply(state, {r.seat: find_legal(a["action"], r.legal_actions)
                               or r.default_action for r, a in zip(requests, replies)})
            count[0] += len(requests)
            step += 1

    async def player(k):
        m = 0
        while time.monotonic() < stop:
            await match(k * 100_000 + m)
            m += 1

    async def main():
        await asyncio.gather(*(player(k) for k in range(matches)))

    asyncio.run(main())

before, started = os.times(), time.monotonic()
{"threads": run_threads, "gevent": run_gevent, "asyncio": run_asyncio}[design](
    time.monotonic() + seconds)
after = os.times()
print(json.dumps({"decisions": count[0], "faults": faults[0],
                  "seconds": time.monotonic() - started,
                  "user": after.user - before.user, "system": after.system - before.system}))
"""


def has_gevent() -> bool:
    probe = subprocess.run([sys.executable, "-c", "import gevent"], capture_output=True)
    return probe.returncode == 0


def measure(design: str, matches: int, seconds: float, urls: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, design, str(matches), str(seconds), *urls],
        env={**os.environ, "PYTHONPATH": PYTHONPATH},
        stdout=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:  # its traceback went to stderr
        raise RuntimeError(f"the {design} design failed (exit code {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100, help="matches in flight")
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 50.0])
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parse_args(parser, smoke={"matches": 2, "latency_ms": [0.0], "seconds": 0.3})
    print_versions("gevent", "orjson")
    designs = ["threads", "asyncio"] + (["gevent"] if has_gevent() else [])
    print(f"{args.matches} {GAME} matches in flight, four bots, {args.seconds:g} s each")
    print(
        f"{'think':>7}  {'design':<9}{'decisions/s':>12}{'CPU us/decision':>17}{'vs threads':>12}"
        f"{'faults':>8}"
    )
    for latency in args.latency_ms:
        ports = free_ports(4)
        bot = [sys.executable, "-c", LATENCY_BOT, GAME, "random", str(latency)]
        commands = [([*bot, "--port", str(p), f"--secret={SECRET}"], p) for p in ports]
        with processes(commands) as urls:
            figures = {d: measure(d, args.matches, args.seconds, urls) for d in designs}
        base = (figures["threads"]["user"] + figures["threads"]["system"]) / max(
            figures["threads"]["decisions"], 1
        )
        for design, f in figures.items():
            per = (f["user"] + f["system"]) / max(f["decisions"], 1)
            print(
                f"{latency:>5g}ms  {design:<9}{f['decisions'] / f['seconds']:>12.0f}"
                f"{per * 1e6:>17.0f}{per / base:>11.2f}x{f.get('faults', 0):>8}"
            )


if __name__ == "__main__":
    main()
