"""The connect client's cost per decision on loopback, against the webhook round trip
measured in the same run.

    python benchmarks/connect_client.py [--requests 200] [--rounds 5] [--smoke]

Ways of getting one ``/act`` answered by the random Cactus sample bot, each bot in a
process of its own as a user runs it (``python -m sample_bots.cactus_random ...``), the
arena's side in this one, taking turns ``rounds`` times so that a noisy moment of the
machine does not land on one only:

- webhook: a signed ``POST /act`` to the SDK's server over one keep-alive
  ``http.client`` connection, until its answer is read (the arena's side of a decision);
- connect: the request queued in the SDK tests' fake arena, which hands it to the poll
  the ``ConnectClient`` holds open, until the answer arrives in the bot's next poll
  (the request is signed ahead, as for the webhook); with the bot's capacity of 1 (one
  poll open), and with the sample bot's default of 8 (eight polls: the fake arena then
  wakes eight threads for each request, its own cost);
- floor: the same through the fake arena, with a minimal poller in place of the
  ``ConnectClient`` (this script with ``--floor URL``): it signs its polls but checks
  nothing and calls no bot (a canned answer): what the fake arena and the two HTTP
  exchanges cost by themselves.

Prints the median time per decision of each, and the ratios connect / webhook and
connect / floor.  The fake arena is ``http.server``, not the arena's own web server:
the end-to-end figure is for a benchmark against the real arena.  Needs the arena
package (the sample bot) and the SDK importable (``pip install -e ./sdk``).
``--smoke``: one round of 5 decisions each way.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk" / "tests"))  # the fake arena of the SDK's tests
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import parse_args, print_versions  # noqa: E402
from arenabot import sign, signed_headers  # noqa: E402
from fake_arena import BotProcess, FakeArena, golden_requests  # noqa: E402
from sdk_roundtrip import round_trips  # noqa: E402

SECRET = "benchmark-secret-0123456789"
ACT = golden_requests()["act"][1]


def signed_entries(n: int) -> list[tuple[str, dict[str, Any]]]:
    """``n`` golden ``/act`` requests with fresh ids, signed: (request id, entry)."""
    entries = []
    for _ in range(n):
        request_id = os.urandom(16).hex()
        raw = json.dumps({**ACT, "request_id": request_id}, separators=(",", ":")).encode()
        stamp = str(int(time.time()))
        entry = {
            "path": "/act",
            "body": raw.decode(),
            "timestamp": stamp,
            "signature": sign(SECRET, stamp, raw),
        }
        entries.append((request_id, entry))
    return entries


def over_connect(arena: FakeArena, n: int) -> list[float]:
    """Seconds from a request queued to its answer's arrival in a poll, one at a time."""
    times = []
    for request_id, entry in signed_entries(n):
        started = time.perf_counter()
        arena.resubmit(entry)
        arena.answer(request_id)
        times.append(arena.answered_at[request_id] - started)
        assert arena.answers[request_id][0]["status"] == 200
    return times


def over_webhook(port: int, n: int) -> list[float]:
    body = json.dumps({k: v for k, v in ACT.items() if k != "request_id"}).encode()
    return round_trips(port, body, n, SECRET)


class FloorPoller:
    """The least a poller does: signed polls, a canned answer to each request."""

    def __init__(self, url: str):
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port))

    def run(self) -> None:
        session = self._post("session", {"info": {"capacity": 1}})["session"]
        answers: list[dict[str, Any]] = []
        while True:
            body = {"session": session, "answers": answers, "draining": False}
            requests = self._post("poll", body)["requests"]
            answers = [
                {
                    "request_id": json.loads(r["body"])["request_id"],
                    "status": 200,
                    "body": {"action": {"type": "draw"}},
                }
                for r in requests
            ]

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        raw = json.dumps({"bot_id": 1, "request_id": os.urandom(16).hex(), **body}).encode()
        self.conn.request("POST", f"/api/connect/{path}", raw, signed_headers(SECRET, raw))
        return json.loads(self.conn.getresponse().read())


def start(*args: str) -> BotProcess:
    """A bot's process; it has started when it says so on stderr."""
    bot = BotProcess(list(args), ROOT, {"ARENA_BOT_SECRET": SECRET})
    bot.wait_for("listening on" if "--port" in args else "connected to")
    return bot


def floor_main(url: str) -> None:
    """The minimal poller, until its arena goes away."""
    poller = FloorPoller(url)
    print(f"floor poller connected to {url}", file=sys.stderr, flush=True)
    with contextlib.suppress(OSError, http.client.HTTPException):
        poller.run()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5, help="turns each way takes")
    parser.add_argument("--floor", metavar="URL", help=argparse.SUPPRESS)
    args = parse_args(parser, smoke={"requests": 5, "rounds": 1})
    if args.floor:
        floor_main(args.floor)
        return
    print_versions()

    arenas = {name: FakeArena(SECRET, poll_seconds=60) for name in ("connect", "connect8", "floor")}
    bot = "sample_bots.cactus_random"
    commands = {
        "webhook": ["-m", bot, "--port", "0"],
        "connect": ["-m", bot, "--connect", arenas["connect"].url, "--bot-id", "1",
                    "--threads", "1"],
        "connect8": ["-m", bot, "--connect", arenas["connect8"].url, "--bot-id", "1"],
        "floor": [str(Path(__file__).relative_to(ROOT)), "--floor", arenas["floor"].url],
    }  # fmt: skip
    bots: dict[str, BotProcess] = {}
    try:
        for name, command in commands.items():
            bots[name] = start(*command)
        port = int(bots["webhook"].seen[-1].rsplit(":", 1)[1])
        for name, polls in (("connect", 1), ("connect8", 8), ("floor", 1)):
            arena = arenas[name]
            arena.wait(lambda a=arena, n=polls: a.stats.open_polls == n)
        ways = {
            "webhook": lambda n: over_webhook(port, n),
            "connect": lambda n: over_connect(arenas["connect"], n),
            "connect8": lambda n: over_connect(arenas["connect8"], n),
            "floor": lambda n: over_connect(arenas["floor"], n),
        }
        for way in ways.values():
            way(20)  # warm up
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, way in ways.items():
                times[name] += way(args.requests)
    finally:
        for process in bots.values():
            process.kill()
        for arena in arenas.values():
            arena.close()
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"/act of {len(json.dumps(ACT))} bytes, {args.rounds} x {args.requests} decisions "
        "each way, one at a time"
    )
    for name, label in [
        ("webhook", "webhook round trip (SDK server)"),
        ("connect", "connect, 1 poll (fake arena)"),
        ("connect8", "connect, 8 polls (fake arena)"),
        ("floor", "floor, minimal poller (fake arena)"),
    ]:
        print(f"{label:<40}{medians[name] * 1e6:9.1f} us per decision")
    print(f"ratio connect / webhook {medians['connect'] / medians['webhook']:.2f}")
    print(f"ratio connect / floor   {medians['connect'] / medians['floor']:.2f}")
    print(f"ratio connect, 8 polls / webhook {medians['connect8'] / medians['webhook']:.2f}")


if __name__ == "__main__":
    main()
