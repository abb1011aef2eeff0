"""Round trips of ``/act`` to a sample bot served by the SDK, against a minimal stdlib
server that also answers in one write with TCP_NODELAY (the transport's floor), over one
keep-alive ``http.client`` connection on loopback.

    python benchmarks/sdk_roundtrip.py [--requests 200] [--rounds 5] [--before REV] [--smoke]

Prints the median time per round trip of each and the ratio SDK / baseline.  A third line
shows what a server that writes headers and body separately without TCP_NODELAY costs
(Nagle's algorithm waiting for the client's delayed ACK).  With ``--before REV``, the
SDK's server as it was at git revision REV serves the random sample bot too, taking
turns with the others.  Needs the SDK (``pip install -e ./sdk``) and is run from the
repository root.  ``--smoke``: one round of 5 round trips.  Other benchmarks import
``act_body``, ``round_trips`` and ``OneWrite`` from it.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # sample_bots
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from arenabot import make_server, signed_headers

from arena.games import GAMES
from sample_bots.policy_bot import PolicyBot

SECRET = "benchmark-secret"
ANSWER = json.dumps({"action": {"type": "draw"}}).encode()


class OneWrite(BaseHTTPRequestHandler):
    """The floor: read the body, write a canned answer in one piece on a NODELAY socket."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(ANSWER)}\r\n\r\n"
        )
        self.wfile.write(head.encode() + ANSWER)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class TwoWrites(OneWrite):
    """The usual stdlib way: headers, then the body, Nagle on."""

    disable_nagle_algorithm = False

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)


def act_body(game_id: str = "cactus", players: int = 4) -> bytes:
    """A real ``/act`` body: a match of the game a few turns in."""
    game = GAMES[game_id]
    state = game.new_state(players, 1)
    for _ in range(12):
        game.apply(state, {r.seat: r.default_action for r in game.pending(state)})
    request = game.pending(state)[0]
    body = {
        "match_id": "bench",
        "decision_id": "12:0",
        "game": game_id,
        "seat": request.seat,
        "view": game.view(state, request.seat),
        "legal_actions": request.legal_actions,
        "deadline_ms": 2000,
    }
    return json.dumps(body).encode()


def round_trips(port: int, body: bytes, n: int, secret: str = SECRET) -> list[float]:
    """``n`` signed ``/act`` of ``body`` (a JSON object without its ``request_id``) on one
    kept-alive connection: each one's wall time, in seconds."""
    # every request has a request id of its own (the SDK refuses a replay), signed ahead
    requests = []
    for _ in range(n):
        signed = body[:-1] + b', "request_id": "%s"}' % os.urandom(16).hex().encode()
        headers = {"Content-Type": "application/json", **signed_headers(secret, signed)}
        requests.append((signed, headers))
    conn = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    try:
        for signed, headers in requests:
            started = time.perf_counter()
            conn.request("POST", "/act", signed, headers)
            response = conn.getresponse()
            data = response.read()
            times.append(time.perf_counter() - started)
            assert response.status == 200, data
    finally:
        conn.close()
    return times


def measure(ports: dict[str, int], body: bytes, n: int, rounds: int) -> dict[str, float]:
    """The median round trip to each port; the servers take turns, ``rounds`` times,
    so that a noisy moment of the machine does not land on one of them only."""
    times: dict[str, list[float]] = {name: [] for name in ports}
    for port in ports.values():
        round_trips(port, body, 20)  # warm up
    for _ in range(rounds):
        for name, port in ports.items():
            times[name] += round_trips(port, body, n)
    return {name: statistics.median(t) for name, t in times.items()}


def old_server_module(revision: str) -> Any:
    """``sdk/arenabot/server.py`` as it was at ``revision``, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{revision}:sdk/arenabot/server.py"],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    try:
        spec = importlib.util.spec_from_file_location("arenabot_server_before", f.name)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.unlink(f.name)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5, help="turns each server takes")
    parser.add_argument("--before", help="git revision of an older SDK server to compare")
    args = parse_args(parser, smoke={"requests": 5, "rounds": 1})
    print_versions()
    body = act_body()
    print(
        f"/act body: {len(body)} bytes; {args.rounds} x {args.requests} sequential round trips "
        "per server over one keep-alive connection; median round trip"
    )

    baseline = ThreadingHTTPServer(("127.0.0.1", 0), OneWrite)
    naive = ThreadingHTTPServer(("127.0.0.1", 0), TwoWrites)
    sdk_random = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=SECRET)
    sdk_heuristic = make_server(PolicyBot("cactus", "heuristic"), "127.0.0.1", 0, secret=SECRET)
    servers = [sdk_random, sdk_heuristic]
    if args.before:
        old = old_server_module(args.before)
        servers.append(old.make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, SECRET))
    for server in servers:
        server.serve_in_background()
    for server in (baseline, naive):
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}).start()
    try:
        ports = {
            "baseline": baseline.server_address[1],
            "random": sdk_random.port,
            "heuristic": sdk_heuristic.port,
        }
        if args.before:
            ports["before"] = servers[2].port
        medians = measure(ports, body, args.requests, args.rounds)
        two_writes = measure({"naive": naive.server_address[1]}, body, 20, 1)["naive"]
    finally:
        for server in (baseline, naive):
            server.shutdown()
            server.server_close()
        for server in servers:
            server.close()
    floor = medians["baseline"]
    rows = [
        ("SDK, sample bot cactus_random", medians["random"]),
        ("SDK, sample bot cactus_heuristic", medians["heuristic"]),
        ("two writes, Nagle on (20 trips)", two_writes),
    ]
    if args.before:
        rows.insert(2, (f"SDK at {args.before}, cactus_random", medians["before"]))
    print(f"{'baseline (one write, TCP_NODELAY)':<36}{floor * 1e6:9.1f} us per round trip")
    for label, median in rows:
        print(f"{label:<36}{median * 1e6:9.1f} us   ratio {median / floor:.2f}")


if __name__ == "__main__":
    main()
