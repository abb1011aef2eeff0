"""What the probes, the status and a tournament's warnings cost a request.

    python benchmarks/health.py [--repeat 3] [--requests 200] [--smoke]

One app on a fresh SQLite database (in process, Flask's test client: no network) with
three bots and a round robin of 240 matches, 120 of them finished with faults, the rest
queued, made a minute ago.  Timed, per request:

- ``healthz``: ``GET /healthz`` (nothing touched);
- ``readyz``: ``GET /readyz`` (``SELECT 1`` and the embedded broker's folders);
- ``status``: ``GET /api/status`` (the counts, the rates over 5 and 15 minutes, the
  broker's count of waiting messages);
- ``tournament, no warnings``: ``GET /api/tournaments/{id}`` with the warnings left out
  (what the answer cost before them: the baseline);
- ``tournament, no worker``: the same with its warning (no worker alive);
- ``tournament, worker alive``: the same with a live worker (no warning).

Printed: milliseconds per request, min / median / max over ``--repeat`` runs, and each
one's ratio to the baseline's median.  ``--smoke``: one run of 3 requests each.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from sqlalchemy import select, update

from arena.app import create_app
from arena.config import Config
from arena.db import Database
from arena.models import Match, MatchSeat, Tournament, utcnow
from arena.services import workers
from arena.worker import queue


def scene(folder: Path) -> tuple[Any, int]:
    """The app and its tournament's id."""
    path = folder / "arena.sqlite3"
    Database(f"sqlite:///{path}").upgrade()
    app = create_app(
        Config(
            database_url=f"sqlite:///{path}",
            broker_url="filesystem://",
            secret_key="bench",
            data_dir=folder,
            rate_limits=False,
        )
    )
    client = app.test_client()
    ids = []
    for i in range(3):
        answer = client.post(
            "/api/bots",
            json={"name": f"bench-{i}", "connect": True, "games": ["cactus"], "owner": "bench"},
        )
        assert answer.status_code == 201, answer.get_json()
        ids.append(answer.get_json()["id"])
    body = {"name": "bench", "game": "cactus", "bot_ids": ids, "seats_per_match": 2,
            "games_per_pairing": 40}  # fmt: skip
    with mock.patch.object(queue, "enqueue_matches", lambda config, match_ids: None):
        created = client.post("/api/tournaments", json=body).get_json()
    minute_ago = utcnow() - dt.timedelta(minutes=1)
    with app.extensions["arena.db"].session() as session:
        session.execute(
            update(Tournament).where(Tournament.id == created["id"]).values(created_at=minute_ago)
        )
        matches = list(session.scalars(select(Match.id).order_by(Match.id)))
        done = matches[: len(matches) // 2]
        session.execute(
            update(Match)
            .where(Match.id.in_(done))
            .values(status="finished", finished_at=minute_ago)
        )
        session.execute(
            update(MatchSeat)
            .where(MatchSeat.match_id.in_(done))
            .values(faults={"count": 2, "kinds": {"timeout": 2}})
        )
    return app, created["id"]


def per_request(call: Callable[[], Any], n: int) -> float:
    began = time.perf_counter()
    for _ in range(n):
        answer = call()
        assert answer.status_code == 200, answer.get_json()
    return (time.perf_counter() - began) / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    args = parse_args(parser, smoke={"repeat": 1, "requests": 3})
    print_versions("flask", "sqlalchemy", "sqlite")
    folder = Path(tempfile.mkdtemp(prefix="bench-health-"))
    try:
        app, tid = scene(folder)
        client = app.test_client()
        database = app.extensions["arena.db"]
        detail = f"/api/tournaments/{tid}?crosstable=false"

        def with_worker() -> Any:
            with database.session() as session:
                workers.beat(session, "bench-worker", capacity=100)
            return client.get(detail)

        cases: dict[str, Callable[[], Any]] = {
            "healthz": lambda: client.get("/healthz"),
            "readyz": lambda: client.get("/readyz"),
            "status": lambda: client.get("/api/status"),
            "tournament, no warnings": lambda: client.get(detail),
            "tournament, no worker": lambda: client.get(detail),
        }
        assert client.get(detail).get_json()["warnings"], "the scene has no warning"
        names = [*cases, "tournament, worker alive"]
        results: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.repeat):
            for name, call in cases.items():
                # the baseline: the answer as it was before its warnings
                baseline = name == "tournament, no warnings"
                with mock.patch.object(
                    workers,
                    "stall_warnings",
                    (lambda *a, **k: []) if baseline else workers.stall_warnings,
                ):
                    results[name].append(per_request(call, args.requests))
        with_worker()
        for _ in range(args.repeat):  # the worker's row is written once, then read
            results["tournament, worker alive"].append(
                per_request(lambda: client.get(detail), args.requests)
            )
        base = statistics.median(results["tournament, no warnings"])
        print(f"{'request':<26} {'min':>8} {'median':>8} {'max':>8}  ratio to the baseline")
        for name, times in results.items():
            print(
                f"{name:<26} {min(times):8.2f} {statistics.median(times):8.2f} "
                f"{max(times):8.2f}  {statistics.median(times) / base:6.2f}x   (ms per request)"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
