"""Hostile clients against the SDK's bot server: the current one ("after") and the
thread-per-connection server it replaced ("before", ``sdk/arenabot/server.py`` as it
was at ``--before``), in the same run, each in a process of its own serving a sample bot
(cactus, random) with a secret.

    python benchmarks/sdk_hostile.py [--runs 3] [--hostile 3000] [--burst 1000] [--smoke]

Four figures, each on a fresh server process:

- heads: RSS of the server per unfinished head, after ``--heads`` (40) connections each
  send a request line and header lines of 64,000 bytes, one at a time, up to 100 of them
  (what the old server held) or until the server refuses, and never end the head;
- hostile: a keep-alive client signs ``/act`` requests as the arena does (one after the
  other, a 2.25 s timeout: the 2 s deadline and its grace) while ``--hostile`` (3,000)
  connections are open from another process: a third trickle a header line every
  second and never end their head, a third are idle, a third flood unsigned ``/act``
  requests back to back (each reconnects when the server closes it).  Its p50 and p99
  latency against the same client on the quiet server, and its failures;
- release: the same client while ``--hostile`` (3,000) connections that each sent most
  of a head finish it at once, with a badly signed 1 KB body: the client's p50, p99,
  max and failures among its requests begun while the released requests were being
  answered, and the share of those answered within 10 s;
- burst: the same client while ``--burst`` (1,000) connections arrive at once, each
  with one signed ``/act`` (2.25 s to be answered); the client's p50/p99 and failures,
  and the burst's failures.

Prints each figure per run and the min/median/max over ``--runs``.  Needs Linux (RSS is
read from /proc) and git (for the old server), and is run from the repository root.
Everything stays on 127.0.0.1; every loop is bounded in count and time.  ``--smoke``:
one run of 2 heads, 6 hostile connections, a burst of 4 and 6 requests of the client.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import importlib.util
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # sample_bots
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import parse_args, print_versions  # noqa: E402

SECRET = "benchmark-secret-0123456789"
TIMEOUT = 2.25  # seconds: a standard arena's deadline and its network grace
# the last revision with the thread-per-connection server
BEFORE = "d85a8a3"
HEAD_LINE = 64_000  # bytes of one header line of an unfinished head
HEAD_LINES = 99  # with Host, the most header lines the old server held (100)


# -- the server process -----------------------------------------------------------------------


def serve(kind: str, module_file: str | None) -> None:
    """Serve the sample bot with the server of ``kind``; print the port, then serve until
    stdin closes."""
    from arenabot import server as current

    from sample_bots.policy_bot import PolicyBot

    module: Any = current
    if module_file:
        spec = importlib.util.spec_from_file_location("arenabot_server_before", module_file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    raise_open_files()
    server = module.make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=SECRET)
    server.serve_in_background()
    print(server.port, flush=True)
    sys.stdin.read()  # until the benchmark closes it
    os._exit(0)  # thousands of connections: no slow clean-up


def raise_open_files() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > 65536:
        hard = 65536
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Server:
    """A server process: its pid and port."""

    def __init__(self, kind: str, module_file: str | None):
        command = [sys.executable, __file__, "--serve", kind]
        if module_file:
            command += ["--module", module_file]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def rss_mb(self) -> float:
        text = Path(f"/proc/{self.process.pid}/status").read_text()
        kb = next(int(line.split()[1]) for line in text.splitlines() if line.startswith("VmRSS"))
        return kb / 1024

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- requests as the arena makes them ----------------------------------------------------------


def act_body() -> dict[str, Any]:
    from arena.games import GAMES

    game = GAMES["cactus"]
    state = game.new_state(2, 1)
    for _ in range(12):
        game.apply(state, {r.seat: r.default_action for r in game.pending(state)})
    request = game.pending(state)[0]
    return {
        "match_id": "bench",
        "decision_id": "12:0",
        "game": "cactus",
        "seat": request.seat,
        "view": game.view(state, request.seat),
        "legal_actions": request.legal_actions,
        "deadline_ms": 2000,
    }


def signed_request(body: dict[str, Any], host: str = "127.0.0.1") -> bytes:
    """A whole signed ``/act`` request, with a fresh request id."""
    from arenabot import signed_headers

    raw = json.dumps({**body, "request_id": os.urandom(16).hex()}).encode()
    headers = {"Content-Type": "application/json", **signed_headers(SECRET, raw)}
    head = f"POST /act HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(raw)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + raw


class ArenaClient:
    """Signed ``/act`` requests one after the other on a keep-alive connection (or each
    on a new one: ``fresh``); a request that fails (no answer in 2.25 s, a closed
    connection) is counted, and the next one opens a new connection."""

    def __init__(self, port: int, fresh: bool = False):
        self.port = port
        self.fresh = fresh  # a new connection for every request
        self.body = act_body()
        self.conn: http.client.HTTPConnection | None = None
        self.latencies: list[float] = []
        self.failures = 0
        self.asked: list[tuple[float, float, bool]] = []  # (wall clock, latency, failed)

    def ask(self) -> None:
        from arenabot import signed_headers

        raw = json.dumps({**self.body, "request_id": os.urandom(16).hex()}).encode()
        headers = {"Content-Type": "application/json", **signed_headers(SECRET, raw)}
        started = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
            self.conn.request("POST", "/act", raw, headers)
            response = self.conn.getresponse()
            response.read()
            ok = response.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
        elapsed = time.perf_counter() - started
        failed = not ok or elapsed > TIMEOUT
        self.asked.append((time.time() - elapsed, min(elapsed, TIMEOUT), failed))
        if not failed and self.fresh and self.conn is not None:
            self.conn.close()
            self.conn = None
        if not failed:
            self.latencies.append(elapsed)
        else:
            self.failures += 1
            self.latencies.append(TIMEOUT)
            if self.conn is not None:
                self.conn.close()
            self.conn = None

    def run(self, n: int, pause: float = 0.01) -> None:
        for _ in range(n):
            self.ask()
            time.sleep(pause)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- the attackers (their own process) ---------------------------------------------------------


async def attack(port: int, n: int, duration: float) -> dict[str, int]:
    """``n`` hostile connections kept open until stdin closes, or ``duration`` seconds
    (see the module's docstring); prints "ready" once all are open the first time."""
    give_up = time.monotonic() + duration
    stopping = asyncio.Event()
    counts = {"open": 0, "connections": 0, "unsigned_answered": 0}
    unsigned = b"POST /act HTTP/1.1\r\nHost: bot\r\nContent-Length: 2\r\n\r\n{}"

    def going() -> bool:
        return not stopping.is_set() and time.monotonic() < give_up

    async def one(kind: int) -> None:
        while going():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            counts["open"] += 1
            counts["connections"] += 1
            try:
                if kind == 0:  # a head that never ends, a line a second
                    writer.write(b"POST /act HTTP/1.1\r\nHost: bot\r\n")
                    while going():
                        try:
                            await asyncio.wait_for(reader.read(65536), 1.0)
                            break  # answered (408) or closed: the server is done with it
                        except TimeoutError:
                            writer.write(b"X-Slow: 1\r\n")
                elif kind == 1:  # idle
                    while going():
                        try:
                            await asyncio.wait_for(reader.read(65536), 1.0)
                            break  # closed by the server
                        except TimeoutError:
                            pass
                else:  # unsigned requests, back to back
                    while going():
                        writer.write(unsigned)
                        if not await asyncio.wait_for(reader.read(65536), 5.0):
                            break
                        counts["unsigned_answered"] += 1
            except (OSError, TimeoutError):
                pass
            finally:
                counts["open"] -= 1
                writer.close()
            await asyncio.sleep(0.05)  # then connect again

    loop = asyncio.get_running_loop()
    stdin = loop.run_in_executor(None, sys.stdin.read)
    stdin.add_done_callback(lambda _: stopping.set())
    tasks = []
    for i in range(n):
        tasks.append(asyncio.ensure_future(one(i % 3)))
        if i % 100 == 99:
            await asyncio.sleep(0.01)
    for _ in range(300):
        if counts["open"] >= n * 0.95:
            break
        await asyncio.sleep(0.05)
    print(f"ready {counts['open']}", flush=True)
    started = time.monotonic()
    answered = counts["unsigned_answered"]
    await stopping.wait()
    counts["unsigned_per_s"] = int(
        (counts["unsigned_answered"] - answered) / (time.monotonic() - started)
    )
    await asyncio.gather(*tasks)
    return counts


async def release(port: int, n: int) -> dict[str, Any]:
    """``n`` connections each send most of a head, then all finish it at once with a
    badly signed 1 KB body: how many were answered within 10 s."""
    body = b"{" + b" " * 1022 + b"}"
    rest = (
        b"X-Arena-Timestamp: %d\r\nX-Arena-Signature: sha256=%s\r\n\r\n"
        % (int(time.time()), b"0" * 64)
    ) + body
    opened: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def begin() -> None:
        try:
            async with asyncio.timeout(20):  # a connect whose SYN was dropped tries again
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except (OSError, TimeoutError):
            return
        writer.write(b"POST /act HTTP/1.1\r\nHost: bot\r\nContent-Length: 1024\r\n")
        opened.append((reader, writer))

    await asyncio.gather(*(begin() for _ in range(n)))
    print(f"ready {len(opened)}", flush=True)
    await asyncio.sleep(1.0)
    answered = 0

    async def finish(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal answered
        try:
            writer.write(rest)
            async with asyncio.timeout(10):
                data = await reader.read(65536)
            answered += bool(data)
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()

    started = time.time()
    await asyncio.gather(*(finish(r, w) for r, w in opened))
    return {"released": len(opened), "answered": answered, "from": started, "to": time.time()}


async def burst(port: int, n: int) -> dict[str, Any]:
    """``n`` connections at once, one signed ``/act`` each: how many got no answer in
    2.25 s, and the latency of those answered."""
    body = act_body()
    requests = [signed_request(body) for _ in range(n)]
    latencies: list[float] = []
    failures = 0

    async def one(request: bytes) -> None:
        nonlocal failures
        started = time.perf_counter()
        writer = None
        try:
            async with asyncio.timeout(TIMEOUT):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200 "):
                    raise OSError(head[:40])
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            failures += 1
        finally:
            if writer is not None:
                writer.close()

    print("go", flush=True)
    await asyncio.gather(*(one(r) for r in requests))
    return {"failures": failures, "latencies": latencies}


def attacker(port: int, kind: str, n: int, duration: float) -> None:
    raise_open_files()
    if kind == "hostile":
        result = asyncio.run(attack(port, n, duration))
    elif kind == "release":
        result = asyncio.run(release(port, n))
    else:
        result = asyncio.run(burst(port, n))
    print(json.dumps(result), flush=True)


class Attacker:
    def __init__(self, port: int, kind: str, n: int, duration: float = 0.0):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--attack", str(port), kind, str(n), str(duration)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.first = self.process.stdout.readline().split()

    def result(self) -> dict[str, Any]:
        """Tell it to stop (the hostile connections), then its figures."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        out = self.process.stdout.read()
        self.process.wait(120)
        return json.loads(out.strip().splitlines()[-1])


# -- the figures -------------------------------------------------------------------------------


def heads(kind: str, module_file: str | None, n: int) -> dict[str, float]:
    """MB of RSS per unfinished head, and how many of the heads the server still holds."""
    server = Server(kind, module_file)
    socks = []
    try:
        time.sleep(0.3)
        before = server.rss_mb()
        line = b"X-Pad: " + b"x" * (HEAD_LINE - 9) + b"\r\n"
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            socks.append(sock)
            try:
                sock.sendall(b"POST /act HTTP/1.1\r\nHost: bot\r\n")
                for _ in range(HEAD_LINES):
                    sock.sendall(line)
            except OSError:
                pass  # refused and closed by the server
        time.sleep(1.0)
        grown = server.rss_mb() - before
        held = 0
        for sock in socks:
            sock.setblocking(False)
            try:
                sock.recv(65536)  # an answer (431), or the end: refused
            except BlockingIOError:
                held += 1  # no answer, not closed: the server holds the head
            except OSError:
                pass  # reset: refused
        return {"rss_per_head_mb": grown / n, "held": held}
    finally:
        for sock in socks:
            sock.close()
        server.stop()


def hostile(kind: str, module_file: str | None, n: int, requests: int) -> dict[str, float]:
    server = Server(kind, module_file)
    try:
        quiet = ArenaClient(server.port)
        quiet.run(requests // 3 + 20)
        quiet_p50 = statistics.median(quiet.latencies[20:])
        quiet.close()
        attack = Attacker(server.port, "hostile", n, duration=requests * 0.05 + 60)
        opened = int(attack.first[1])
        time.sleep(1.0)
        client, fresh = ArenaClient(server.port), ArenaClient(server.port, fresh=True)
        probing = threading.Thread(target=fresh.run, args=(requests // 5, 0.05))
        probing.start()
        client.run(requests)
        probing.join()
        client.close()
        counts = attack.result()
        return {
            "hostile_open": opened,
            "unsigned_answered_per_s": counts["unsigned_per_s"],
            "quiet_p50_ms": quiet_p50 * 1000,
            "p50_ms": percentile(client.latencies, 0.5) * 1000,
            "p99_ms": percentile(client.latencies, 0.99) * 1000,
            "failures": client.failures,
            "requests": requests,
            "new_connection_p50_ms": percentile(fresh.latencies, 0.5) * 1000,
            "new_connection_p99_ms": percentile(fresh.latencies, 0.99) * 1000,
            "new_connection_failures": fresh.failures,
            "new_connection_requests": len(fresh.latencies),
        }
    finally:
        server.stop()


def releasing(kind: str, module_file: str | None, n: int) -> dict[str, float]:
    """The client while ``n`` unfinished heads are finished at once."""
    server = Server(kind, module_file)
    try:
        client = ArenaClient(server.port)
        client.run(20)  # warm, connected
        client.latencies, client.failures = [], 0
        attack = Attacker(server.port, "release", n)
        stop = threading.Event()

        def measure() -> None:
            for _ in range(100_000):  # back to back while the heads are held and released
                if stop.is_set():
                    break
                client.ask()

        fresh = ArenaClient(server.port, fresh=True)

        def probe() -> None:
            for _ in range(10_000):  # a new connection every 20 ms
                if stop.is_set():
                    break
                fresh.ask()
                time.sleep(0.02)

        measuring = threading.Thread(target=measure)
        probing = threading.Thread(target=probe)
        measuring.start()
        probing.start()
        result = attack.result()
        stop.set()
        measuring.join()
        probing.join()
        client.close()
        # the requests begun while the released requests were being answered
        during = [a for a in client.asked if result["from"] <= a[0] <= result["to"]]
        latencies = [latency for _, latency, _ in during] or [0.0]
        new = [a for a in fresh.asked if result["from"] <= a[0] <= result["to"]]
        new_latencies = [latency for _, latency, _ in new] or [0.0]
        return {
            "new_connection_p50_ms": percentile(new_latencies, 0.5) * 1000,
            "new_connection_max_ms": max(new_latencies) * 1000,
            "new_connection_failures": sum(failed for _, _, failed in new),
            "new_connection_requests": len(new),
            "released": result["released"],
            "answered_pct": 100 * result["answered"] / max(result["released"], 1),
            "seconds": result["to"] - result["from"],
            "p50_ms": percentile(latencies, 0.5) * 1000,
            "p99_ms": percentile(latencies, 0.99) * 1000,
            "max_ms": max(latencies) * 1000,
            "failures": sum(failed for _, _, failed in during),
            "requests": len(during),
        }
    finally:
        server.stop()


def bursting(kind: str, module_file: str | None, n: int) -> dict[str, float]:
    server = Server(kind, module_file)
    try:
        client = ArenaClient(server.port)
        client.run(20)  # warm, connected
        client.latencies, client.failures = [], 0
        stop = threading.Event()

        def measure() -> None:
            for _ in range(20_000):  # back to back while the burst lasts
                if stop.is_set():
                    break
                client.ask()

        measuring = threading.Thread(target=measure)
        attack = Attacker(server.port, "burst", n)
        measuring.start()
        result = attack.result()
        stop.set()
        measuring.join()
        client.close()
        return {
            "burst_failures_pct": 100 * result["failures"] / n,
            "burst_p50_ms": 1000 * percentile(result["latencies"] or [TIMEOUT], 0.5),
            "p50_ms": percentile(client.latencies, 0.5) * 1000,
            "p99_ms": percentile(client.latencies, 0.99) * 1000,
            "failures": client.failures,
            "requests": len(client.latencies),
        }
    finally:
        server.stop()


def summary(values: list[float]) -> str:
    return f"{min(values):9.2f} {statistics.median(values):9.2f} {max(values):9.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default=BEFORE, help=f"git revision (default {BEFORE})")
    parser.add_argument("--heads", type=int, default=40)
    parser.add_argument("--hostile", type=int, default=3000)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=300, help="the client's, under attack")
    args = parse_args(
        parser, smoke={"runs": 1, "heads": 2, "hostile": 6, "burst": 4, "requests": 6}
    )
    print_versions()
    print(f"before: sdk/arenabot/server.py at {args.before}", flush=True)
    raise_open_files()
    old = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{args.before}:sdk/arenabot/server.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(old)
    servers = {"before": f.name, "after": None}
    figures: dict[tuple[str, str, str], list[float]] = {}
    try:
        for run in range(1, args.runs + 1):
            for kind, module_file in servers.items():
                started = time.monotonic()
                results = {
                    "heads": heads(kind, module_file, args.heads),
                    "hostile": hostile(kind, module_file, args.hostile, args.requests),
                    "release": releasing(kind, module_file, args.hostile),
                    "burst": bursting(kind, module_file, args.burst),
                }
                took = time.monotonic() - started
                print(f"run {run} {kind} ({took:.0f} s): {json.dumps(results)}", flush=True)
                for phase, values in results.items():
                    for name, value in values.items():
                        figures.setdefault((phase, name, kind), []).append(float(value))
    finally:
        os.unlink(f.name)
    print(
        f"\n{args.runs} runs; before = sdk/arenabot/server.py at {args.before}, after = "
        "this checkout's"
    )
    print(f"{'figure':<34}{'':>8}{'min':>10}{'median':>10}{'max':>10}")
    for phase, name in dict.fromkeys((p, n) for p, n, _ in figures):
        for kind in servers:
            print(f"{phase + ' ' + name:<34}{kind:>8} {summary(figures[phase, name, kind])}")
    for phase in ("hostile", "release", "burst"):
        ratios = [
            b / a
            for a, b in zip(
                figures["hostile", "quiet_p50_ms", "after"],
                figures[phase, "p50_ms", "after"],
                strict=True,
            )
        ]
        print(f"{phase} p50 / quiet p50, after: {summary(ratios)}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[4] if len(sys.argv) > 4 else None)
    elif len(sys.argv) > 2 and sys.argv[1] == "--attack":
        attacker(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
