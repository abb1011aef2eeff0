"""Reaction windows next to a silent bot: does a fast bot's answer count, and when?

    python benchmarks/windows.py [--windows 10] [--deadline-ms 30] [--grace 0.25] [--smoke]

Each window asks two HTTP bots at once, as a snap window does: one never answers, the
other answers after about 1.5 ms.  The referee must judge each answer on its own
deadline, so the fast bot should never get a fault, and its recorded latency should be
its own, a small fraction of the silent bot's wait.  Printed for both orders of the two
bots' connection pools (the order the referee once read the answers in): the fast bot's
faults out of the windows, and its median recorded latency against the time the referee
waited for the silent one (the baseline of this run).  ``--smoke``: 2 windows.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena.games.base import Request
from arena.match import http_client
from arena.match.http_client import HttpClient
from arena.match.referee import MatchRecord, Referee


@contextmanager
def bot(answer_after: float | None) -> Iterator[str]:
    """A loopback bot answering every request after ``answer_after`` seconds, or never
    (None): it reads the request and keeps the connection open."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stopping = threading.Event()

    def serve(conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        with conn, reader:
            while not stopping.is_set():
                try:
                    if not reader.readline():
                        return
                    length = 0
                    while (line := reader.readline()) not in (b"\r\n", b""):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    reader.read(length)
                except OSError:
                    return
                if answer_after is None:
                    stopping.wait()
                    return
                time.sleep(answer_after)
                body = b'{"action": {"type": "snap"}}'
                head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
                try:
                    conn.sendall(head + body)
                except OSError:
                    return

    def accept() -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stopping.set()
        thread.join()
        listener.close()


class Window:
    """The engine of a game that is nothing but two-seat reaction windows."""

    id = "windows"

    def view(self, state: object, seat: int) -> dict:
        return {"seat": seat}

    def apply(self, state: object, answers: dict) -> None:
        pass


def windows(n: int, deadline_ms: int, silent_first: bool) -> tuple[int, list[float], float]:
    """The fast seat's faults in ``n`` windows, its recorded latencies (ms), and the
    median time the silent seat's decision took (ms)."""
    with bot(None) as silent_url, bot(0.0015) as fast_url:
        # a pool's place in the order is when it was made
        first, second = (silent_url, fast_url) if silent_first else (fast_url, silent_url)
        made = {url: HttpClient(url, None, url) for url in (first, second)}
        seats = [made[silent_url], made[fast_url]]
        referee = Referee(max_strikes=10**9, deadline_ms=deadline_ms)
        record = MatchRecord(
            "windows", "windows", 0, {}, ["silent", "fast"], strikes=[0, 0], banks=[0, 0]
        )
        legal = [{"type": "pass"}, {"type": "snap"}]
        requests = [Request(seat, "snap", legal, legal[0]) for seat in (0, 1)]
        try:
            for _ in range(n):
                referee._step(Window(), None, seats, requests, record)  # type: ignore[arg-type]
        finally:
            for client in seats:
                client.close()
    fast = [d for step in record.steps for d in step if d["seat"] == 1]
    silent = [d["latency_ms"] for step in record.steps for d in step if d["seat"] == 0]
    return (
        sum("fault" in d for d in fast),
        [d["latency_ms"] for d in fast],
        statistics.median(silent),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=10)
    parser.add_argument("--deadline-ms", type=int, default=30)
    parser.add_argument("--grace", type=float, default=http_client.DEADLINE_GRACE)
    args = parse_args(parser, smoke={"windows": 2})
    print_versions()
    http_client.DEADLINE_GRACE = args.grace
    print(
        f"{'silent seat':<14}{'fast faults':>12}{'fast ms (median)':>18}"
        f"{'silent waited ms':>18}{'ratio':>8}"
    )
    for silent_first in (True, False):
        faults, latencies, waited = windows(args.windows, args.deadline_ms, silent_first)
        fast = statistics.median(latencies)
        place = "first" if silent_first else "second"
        print(
            f"{place:<14}{faults:>6}/{args.windows:<5}{fast:>18.2f}{waited:>18.1f}"
            f"{fast / waited:>8.3f}"
        )


if __name__ == "__main__":
    main()
