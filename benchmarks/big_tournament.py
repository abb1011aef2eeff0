"""Creating a tournament of 100,000 matches, and what the other requests see meanwhile.

    python benchmarks/big_tournament.py [--database sqlite|postgresql|both] [--repeat 3]
        [--bots 1000] [--seats 2] [--matches-per-bot 200] [--clients 4] [--build-inline N]
        [--build-batch N] [--smoke]
    python benchmarks/big_tournament.py --schedule [--baseline REV] [--repeat 3]
        [--schedule-bots 1000] [--schedule-matches 400] [--smoke]

The web app is served over HTTP by a threaded server in this process; ``--clients``
threads ask it ``GET /api/games`` and ``GET /api/bots`` in turn (0.2 s apart), from before
the creation until it is over, each request given 30 seconds (the deployment's gunicorn
timeout: a request that takes longer is counted as an error, as are 5xx answers).

- before (the baseline, the same run): the synchronous path, ``POST /api/tournaments``
  answered once every match is scheduled and written in the request's one transaction
  (``BUILD_INLINE`` set above the size: how every tournament was created before);
- after: ``POST`` answers 202 at once and a worker process builds it
  (``arena.services.tournaments.build_tournament``, what the ``arena.build_tournament``
  task runs), in batches of ``BUILD_BATCH`` matches per transaction (``--build-batch``),
  once it has more than ``BUILD_INLINE`` matches (``--build-inline``).

``--schedule``: only the scheduler, at its slowest size (1,000 bots at four seats, 400
matches each, ``--schedule-bots`` and ``--schedule-matches``: 100,000 tables whose late
rounds must repeat meetings), with the balance report: CPU seconds in this checkout, and
with ``--baseline REV`` in the ``arena`` package of that git revision (``git archive``,
in a subprocess) measured in the same run, with a digest of the schedule each built: the
same digest is the same schedule.

Creation time: from the ``POST`` until the tournament is running with every match
written (a failed request: until its answer, its status shown).  Latency: p50 and p99 of
the other requests, and how many failed.  A fresh database of 1,000 bots per run; every
figure min / median / max over ``--repeat`` runs.  Sending the matches to the broker is
left out of both (a no-op here).  A creation that failed, or left matches unwritten, makes
the script exit with an error once the figures are printed.

``--smoke``: SQLite, one run of 8 bots x 4 matches, one reader, the tournament built by
the worker in batches of 5; with ``--schedule``, 12 bots x 8 matches.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from sqlalchemy import func, select
from werkzeug.serving import make_server

from arena import sealing, services
from arena.app import create_app
from arena.config import from_env
from arena.db import Database
from arena.models import Match, Tournament
from arena.services import tournaments
from arena.worker import building, queue
from tests.support.web import add_many_bots

REQUEST_TIMEOUT = 30.0  # the deployment's gunicorn kills a worker past this
READER_PAUSE = 0.2  # each reader's pause between two requests: people, not a load test


@contextlib.contextmanager
def database_url(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        return
    from tests.support.lanes import postgres_url

    with postgres_url() as url:
        yield url


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Readers:
    """Client threads asking the other pages in turn until stopped."""

    def __init__(self, base: str, n: int):
        self.base = base
        self.latencies: list[float] = []
        self.errors = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(n)]

    def _run(self, i: int) -> None:
        paths = ("/api/games", "/api/bots?page_size=50")
        k = i
        while not self._stop.is_set():
            url = self.base + paths[k % 2]
            k += 1
            began = time.perf_counter()
            try:
                with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT) as response:
                    response.read()
                    ok = response.status < 500
            except (urllib.error.URLError, TimeoutError, OSError):
                ok = False
            self.latencies.append(time.perf_counter() - began)
            self.errors += not ok
            time.sleep(READER_PAUSE)

    def __enter__(self) -> Readers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


def _worker(env: dict[str, str], inbox: Any, batch: int) -> None:
    """A worker process, started (and its imports done) before the creation: it builds
    the tournament whose id it is sent, with the web app's configuration (its keys, as
    a worker's ``configure`` sets them)."""
    config = from_env(env)
    sealing.use(config)
    database = Database(config.database_url)
    tournament_id = inbox.get()
    tournaments.build_tournament(
        database, tournament_id, rated=True, enqueue=lambda ids: None, batch=batch
    )
    database.dispose()


def one_run(kind: str, mode: str, args: argparse.Namespace) -> dict[str, float]:
    with database_url(kind) as url, tempfile.TemporaryDirectory() as data_dir:
        Database(url).upgrade()
        env = {"ARENA_DATA_DIR": data_dir, "ARENA_DATABASE_URL": url}
        app = create_app(from_env(env))
        database: Database = app.extensions["arena.db"]
        ids = add_many_bots(database, args.bots)
        queue.enqueue_matches = lambda config, match_ids: None  # no broker here
        spawn = multiprocessing.get_context("spawn")
        inbox = spawn.Queue()
        worker = spawn.Process(target=_worker, args=(env, inbox, args.build_batch), daemon=True)
        worker.start()
        building.send_build = lambda config, tournament_id, rated: inbox.put(tournament_id)
        services.BUILD_INLINE = 10**9 if mode == "before" else args.build_inline
        body = {
            "name": "big",
            "game": "cactus",
            "format": "balanced",
            "bot_ids": ids,
            "seats_per_match": args.seats,
            "matches_per_bot": args.matches_per_bot,
            "seed": 1,
        }
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_port}"
        try:
            with Readers(base, args.clients) as readers:
                time.sleep(1.0)  # the pages' latency before the creation is in the figures too
                began = time.perf_counter()
                request = urllib.request.Request(
                    base + "/api/tournaments",
                    data=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                    method="POST",
                )
                tournament_id = None
                try:
                    with urllib.request.urlopen(request, timeout=3600) as response:
                        status = response.status
                        tournament_id = json.loads(response.read())["id"]
                except urllib.error.HTTPError as exc:  # the synchronous path may fail: counted
                    status = exc.code
                answered = time.perf_counter() - began
                while tournament_id is not None:
                    with database.session() as session:
                        row = session.get(Tournament, tournament_id)
                        if row.status != "building":
                            break
                    time.sleep(0.2)
                created = time.perf_counter() - began
            with database.session() as session:
                written = session.scalar(
                    select(func.count())
                    .select_from(Match)
                    .where(Match.tournament_id == tournament_id)
                )  # 0 when the request failed
                row = None if tournament_id is None else session.get(Tournament, tournament_id)
                total = 0 if row is None else tournaments.stored_plan(row).matches
        finally:
            inbox.put(0)  # no such tournament: a worker sent nothing has nothing to build
            worker.join()
            server.shutdown()
            server.server_close()
            database.dispose()
        if worker.exitcode:
            raise RuntimeError(f"the worker process failed (exit code {worker.exitcode})")
        return {
            "status": status,
            "answered": answered,
            "created": created,
            "matches": written,
            "total": total,
            "p50": percentile(readers.latencies, 0.5),
            "p99": percentile(readers.latencies, 0.99),
            "max": max(readers.latencies),
            "requests": len(readers.latencies),
            "errors": readers.errors,
        }


# run as ``python -c SCHEDULE bots matches_per_bot``
SCHEDULE = """
import hashlib, json, sys, time
from arena.competition import formats
bots = list(range(1, int(sys.argv[1]) + 1))
began, cpu = time.perf_counter(), time.process_time()
tables = formats.balanced(bots, 4, int(sys.argv[2]), seed=11)
achieved = formats.balance(tables, bots, 4)
h = hashlib.sha256()
for t in tables:
    h.update(repr((t.seats, t.seed, t.deal, t.round)).encode())
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - began,
                  "digest": h.hexdigest()[:16], "balance": achieved.to_json(),
                  "code": formats.__file__}))
"""


def time_schedule(package_root: Path, bots: int, matches_per_bot: int) -> dict[str, Any]:
    # run from the package's own directory: ``-c`` puts the current directory first
    out = subprocess.run(
        [sys.executable, "-c", SCHEDULE, str(bots), str(matches_per_bot)],
        cwd=package_root,
        env={**os.environ, "PYTHONPATH": str(package_root)},
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def schedule_figures(args: argparse.Namespace) -> None:
    root = Path(__file__).resolve().parent.parent
    roots = {"after": root}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            archive = subprocess.run(
                ["git", "archive", args.baseline, "arena"],
                cwd=root,
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            roots = {"before": Path(tmp), **roots}
        results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in roots}
        for run in range(args.repeat):
            for mode, package_root in roots.items():
                result = time_schedule(package_root, args.schedule_bots, args.schedule_matches)
                results[mode].append(result)
                print(f"  run {run + 1} {mode}: {result}", flush=True)
    print(
        f"\n== scheduling {args.schedule_bots:,} bots x {args.schedule_matches} four-seat "
        "matches, with the balance report"
    )
    for mode, runs in results.items():
        print(
            f"  {mode:6}  cpu {spread([r['cpu'] for r in runs])} s, wall "
            f"{spread([r['wall'] for r in runs])} s, digests {sorted({r['digest'] for r in runs})}"
        )
    if "before" in results:
        ratio = statistics.median(r["cpu"] for r in results["before"]) / statistics.median(
            r["cpu"] for r in results["after"]
        )
        same = {r["digest"] for r in results["before"]} == {r["digest"] for r in results["after"]}
        print(f"  cpu before / after (medians): {ratio:.1f}x; the same schedule: {same}")


def spread(values: list[float], scale: float = 1.0, digits: int = 3) -> str:
    return " / ".join(
        f"{v * scale:.{digits}f}" for v in (min(values), statistics.median(values), max(values))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--matches-per-bot", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument(
        "--build-inline",
        type=int,
        default=tournaments.BUILD_INLINE,
        help="after: the most matches built in the request (default: the arena's)",
    )
    parser.add_argument(
        "--build-batch",
        type=int,
        default=tournaments.BUILD_BATCH,
        help="after: matches per transaction of the worker (default: the arena's)",
    )
    parser.add_argument("--schedule", action="store_true", help="only the scheduler")
    parser.add_argument("--baseline", help="with --schedule: a git revision to compare with")
    parser.add_argument("--schedule-bots", type=int, default=1000, help="with --schedule")
    parser.add_argument("--schedule-matches", type=int, default=400, help="with --schedule")
    args = parse_args(
        parser,
        smoke={
            "database": "sqlite",
            "repeat": 1,
            "bots": 8,
            "matches_per_bot": 4,
            "clients": 1,
            "build_inline": 0,
            "build_batch": 5,
            "schedule_bots": 12,
            "schedule_matches": 8,
        },
    )
    print_versions("sqlalchemy", "werkzeug", "sqlite", "psycopg")
    if args.schedule:
        schedule_figures(args)
        return
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    kinds = ("sqlite", "postgresql") if args.database == "both" else (args.database,)
    failed = []
    print(
        f"{args.bots} bots x {args.matches_per_bot} matches at {args.seats} seats; "
        f"{args.clients} readers; min / median / max of {args.repeat} runs"
    )
    for kind in kinds:
        results: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for run in range(args.repeat):
            for mode in ("before", "after"):
                result = one_run(kind, mode, args)
                results[mode].append(result)
                if result["status"] >= 400 or result["matches"] != result["total"]:
                    failed.append(f"{kind} run {run + 1} {mode}")
                print(f"  {kind} run {run + 1} {mode}: {result}", flush=True)
        print(f"\n== {kind}")
        for mode, runs in results.items():
            print(
                f"  {mode:6}  answered {spread([r['answered'] for r in runs])} s (HTTP "
                f"{sorted({int(r['status']) for r in runs})}), created "
                f"{spread([r['created'] for r in runs])} s; other requests p50 "
                f"{spread([r['p50'] for r in runs], 1000, 1)} ms, p99 "
                f"{spread([r['p99'] for r in runs], 1000, 1)} ms, max "
                f"{spread([r['max'] for r in runs], 1, 2)} s, errors "
                f"{[int(r['errors']) for r in runs]} of {[int(r['requests']) for r in runs]}"
            )
        before, after = results["before"], results["after"]
        p99 = statistics.median(r["p99"] for r in before) / statistics.median(
            r["p99"] for r in after
        )
        print(f"  p99 of the other requests, before / after (medians): {p99:.1f}x", flush=True)
    if failed:
        sys.exit(f"a tournament not created with all its matches: {', '.join(failed)}")


if __name__ == "__main__":
    main()
