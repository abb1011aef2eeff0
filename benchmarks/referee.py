"""The referee over HTTP: time per decision in full matches against SDK random bots,
against a raw ``http.client`` round trip to a stdlib server measured in the same run.

    python benchmarks/referee.py [--matches 3] [--round-trips 1000] [--smoke]

A decision's time covers everything the referee does for it: building the view, signing,
the round trip, the bot parsing the view and choosing, checking the answer, applying it.
The baseline is the floor of the transport alone: a real ``/act`` body of the same game
posted over one keep-alive connection to a server that answers a canned body in one
write (the median of ``--round-trips``).  The last column is the referee process's own
CPU time per decision.  ``--smoke``: one match of each game, 50 round trips.

Bots and the baseline server run in processes of their own, as real bots do: threads in
the referee's process would compete with it for the interpreter lock.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import accepts, parse_args, print_versions
from sdk_roundtrip import act_body, round_trips

from arena.games import GAMES
from arena.match.http_client import HttpClient
from arena.match.referee import Referee

ROOT = Path(__file__).resolve().parent.parent
# the server package and the SDK of this checkout, in every process a benchmark starts
PYTHONPATH = os.pathsep.join([str(ROOT), str(ROOT / "sdk")])
BASELINE_SERVER = """
import sys
from http.server import ThreadingHTTPServer
sys.path.insert(0, sys.argv[2])
from sdk_roundtrip import OneWrite
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), OneWrite).serve_forever()
"""

SECRET = "benchmark-secret"
PLAYERS = {"cactus": 4, "cactus-game": 4, "president": 4}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(n: int) -> list[int]:
    """``n`` different free ports."""
    ports: list[int] = []
    while len(ports) < n:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


@contextmanager
def processes(commands: list[tuple[list[str], int]]) -> Iterator[list[str]]:
    """Server processes, each ``(argv, port)``, started at once; their URLs once each
    accepts connections on its port."""
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for argv, _ in commands:
            procs.append(subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        for proc, (argv, port) in zip(procs, commands, strict=True):
            while not accepts(port):
                if proc.poll() is not None:
                    raise RuntimeError(f"{argv} exited ({proc.returncode})")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{argv} did not start")
                time.sleep(0.05)
        yield [f"http://127.0.0.1:{port}" for _, port in commands]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()


@contextmanager
def process(argv: list[str], port: int) -> Iterator[str]:
    """A server process, once it accepts connections on ``port``: its URL."""
    with processes([(argv, port)]) as (url,):
        yield url


def per_decision(game: str, matches: int) -> tuple[float, float, int]:
    """Seconds and the referee's CPU seconds per /act over ``matches`` full matches, and
    the number of decisions."""
    n = PLAYERS.get(game, GAMES[game].min_players)
    module = f"sample_bots.{game.replace('-', '_')}_random"
    ports = free_ports(n)
    bots = [
        ([sys.executable, "-m", module, "--port", str(p), "--secret", SECRET], p) for p in ports
    ]
    with processes(bots) as urls:
        clients = [HttpClient(url, SECRET, f"random{i}") for i, url in enumerate(urls)]
        referee = Referee()
        asked = 0
        try:
            referee.run(game, clients, seed=matches, match_id="warm-up")
            started, cpu = time.perf_counter(), time.process_time()
            for m in range(matches):
                record = referee.run(game, clients, seed=m, match_id=f"bench-{m}")
                for step in record.steps:  # format 2 (a list of decisions) or 1 (an object)
                    decisions = step["decisions"] if isinstance(step, dict) else step
                    asked += len(decisions)
                    assert not any(d.get("fault") for d in decisions)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        finally:
            for client in clients:
                client.close()
    return elapsed / asked, cpu / asked, asked


def raw_round_trip(body: bytes, n: int = 1000) -> float:
    """The median of ``n`` raw round trips of ``body`` to the baseline server."""
    port = free_port()
    here = str(Path(__file__).resolve().parent)
    with process([sys.executable, "-c", BASELINE_SERVER, str(port), here], port):
        round_trips(port, body, 50)  # warm up
        return statistics.median(round_trips(port, body, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--round-trips", type=int, default=1000, help="of the baseline")
    args = parse_args(parser, smoke={"matches": 1, "round_trips": 50})
    print_versions()
    print(
        f"{'game':<14}{'decisions':>10}{'/act bytes':>11}{'raw us':>8}{'us/decision':>13}"
        f"{'vs raw':>8}{'referee CPU us':>16}"
    )
    for game in sorted(GAMES):
        body = act_body(game, PLAYERS.get(game, GAMES[game].min_players))
        raw = raw_round_trip(body, args.round_trips)
        seconds, cpu, asked = per_decision(game, args.matches)
        print(
            f"{game:<14}{asked:>10}{len(body):>11}{raw * 1e6:>8.0f}{seconds * 1e6:>13.0f}"
            f"{seconds / raw:>7.2f}x{cpu * 1e6:>16.0f}"
        )


if __name__ == "__main__":
    main()
