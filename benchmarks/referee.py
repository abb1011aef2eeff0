"""The referee over HTTP: time per decision in full matches against SDK random bots,
against a raw ``http.client`` round trip to a stdlib server measured in the same run.

    python benchmarks/referee.py [--matches 3]

A decision's time covers everything the referee does for it: building the view, signing,
the round trip, the bot parsing the view and choosing, checking the answer, applying it.
The baseline is the floor of the transport alone: the same-sized ``/act`` body posted
over one keep-alive connection to a server that answers a canned body in one write.

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
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sdk_roundtrip import act_body, round_trips

from arena.clients import HttpClient
from arena.games import GAMES
from arena.referee import Referee

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


@contextmanager
def process(argv: list[str], port: int):  # type: ignore[no-untyped-def]
    """A server process, once it accepts connections on ``port``."""
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{argv} did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait()


def per_decision(game: str, matches: int) -> tuple[float, int]:
    """Seconds per /act over ``matches`` full matches, and the number of decisions."""
    n = PLAYERS.get(game, GAMES[game].min_players)
    module = f"sample_bots.{game.replace('-', '_')}_random"
    ports = [free_port() for _ in range(n)]
    bots = [
        process([sys.executable, "-m", module, "--port", str(p), "--secret", SECRET], p)
        for p in ports
    ]
    urls = [bot.__enter__() for bot in bots]
    clients = [HttpClient(url, SECRET, f"random{i}") for i, url in enumerate(urls)]
    referee = Referee()
    asked = 0
    try:
        started = time.perf_counter()
        for m in range(matches):
            record = referee.run(game, clients, seed=m, match_id=f"bench-{m}")
            asked += sum(len(step) for step in record.steps)
            assert not any("fault" in d for step in record.steps for d in step)
        elapsed = time.perf_counter() - started
    finally:
        for client in clients:
            client.close()
        for bot in bots:
            bot.__exit__(None, None, None)
    return elapsed / asked, asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3)
    args = parser.parse_args()

    body = act_body()
    port = free_port()
    here = str(Path(__file__).resolve().parent)
    with process([sys.executable, "-c", BASELINE_SERVER, str(port), here], port):
        round_trips(port, body, 50)  # warm up
        raw = statistics.median(round_trips(port, body, 1000))
    print(f"raw http.client round trip ({len(body)}-byte /act body): {raw * 1e6:.0f} us")
    print(f"{'game':<14}{'decisions':>10}{'us/decision':>13}{'vs raw':>9}")
    for game in sorted(GAMES):
        seconds, asked = per_decision(game, args.matches)
        print(f"{game:<14}{asked:>10}{seconds * 1e6:>13.0f}{seconds / raw:>8.2f}x")


if __name__ == "__main__":
    main()
