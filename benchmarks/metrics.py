"""What the metrics cost: a worker counting a played match, and the web's /metrics scrape.

    python benchmarks/metrics.py [--repeat 3] [--matches 200] [--rows 100000] [--smoke]

- ``count a match``: ``arena.metrics.worker.match_played`` on the records of ``--matches``
  four-seat Cactus matches, against the baseline of playing those matches with in-process
  policies (the referee alone, no network): the share the metrics add to a match that
  costs nothing but the engine and the referee.  Over the network a match lasts 1000x
  longer, so the real share is far smaller.
- ``scrape``: ``GET /metrics`` (Flask's test client, SQLite) on a database of ``--rows``
  matches (and a bot per 100 of them), against the baseline of the same scrape on an
  empty database.

Printed: milliseconds, min / median / max over ``--repeat`` runs, and each one's ratio
to its baseline's median.  ``--smoke``: one run, 2 matches, a database of 200 matches.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from sqlalchemy import insert

from arena import sealing
from arena.app import create_app
from arena.config import Config
from arena.db import Database
from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee
from arena.metrics import worker as worker_metrics
from arena.models import MATCH_STATUSES, Bot, Match


def timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def report(name: str, times: list[float], baseline: float) -> None:
    low, mid, high = min(times), statistics.median(times), max(times)
    print(
        f"{name:<28} {low:9.2f} {mid:9.2f} {high:9.2f} ms"
        f"   ratio {low / baseline:7.4f} {mid / baseline:7.4f} {high / baseline:7.4f}"
    )


def matches(n: int) -> Callable[[], list]:
    def play() -> list:
        records = []
        for seed in range(n):
            clients = [
                PolicyClient(make_policy("cactus", "random", random.Random(seed * 4 + k)))
                for k in range(4)
            ]
            records.append(Referee().run("cactus", clients, seed=seed))
        return records

    return play


def database_with(rows: int, folder: Path) -> Config:
    path = folder / f"arena-{rows}.sqlite3"
    config = Config(database_url=f"sqlite:///{path}", data_dir=folder, secret_key="x", testing=True)
    sealing.use(config)  # the bots' secrets sealed with the key the app opens them with
    database = Database(config.database_url)
    database.upgrade()
    with database.session() as s:
        bots = [
            {"name": f"b{i}", "name_key": f"b{i}", "owner": "o", "owner_token_hash": "x",
             "signing_secret": "s", "endpoint": None if i % 3 else "http://127.0.0.1:9/"}
            for i in range(rows // 100)
        ]  # fmt: skip
        if bots:
            s.execute(insert(Bot), bots)
        if rows:
            s.execute(
                insert(Match),
                [
                    {"game": "cactus", "seed": i, "status": MATCH_STATUSES[i % 5]}
                    for i in range(rows)
                ],
            )
    database.dispose()
    return config


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parse_args(parser, smoke={"repeat": 1, "matches": 2, "rows": 200})
    print_versions("prometheus-client", "flask", "sqlalchemy", "sqlite")

    print(f"{'':<28} {'min':>9} {'median':>9} {'max':>9}")
    play = matches(args.matches)
    records = play()
    seats = [True] * 4
    played = timed(play, args.repeat)
    counted = timed(
        lambda: [worker_metrics.match_played("cactus", r.steps, 1.0, seats) for r in records],
        args.repeat,
    )
    baseline = statistics.median(played)
    report(f"play {args.matches} matches", played, baseline)
    report(f"count {args.matches} matches", counted, baseline)

    with tempfile.TemporaryDirectory() as folder:
        scrapes = []
        for rows in (0, args.rows):
            app = create_app(database_with(rows, Path(folder)))
            client = app.test_client()
            assert client.get("/metrics").status_code == 200  # warm up
            scrapes.append(timed(lambda client=client: client.get("/metrics"), args.repeat))
            app.extensions["arena.db"].dispose()
        baseline = statistics.median(scrapes[0])
        report("scrape, empty database", scrapes[0], baseline)
        report(f"scrape, {args.rows} matches", scrapes[1], baseline)


if __name__ == "__main__":
    main()
