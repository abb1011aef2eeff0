"""Tournaments at the size of a real competition: creating one, and reading its pages.

    python benchmarks/tournament_scale.py [--database sqlite|postgresql] [--repeat 3]
        [--skip-pages] [--skip-create]

Creation: ``POST /api/tournaments`` through the app (in process, the embedded file-system
broker receiving the messages: on a checkout before ``send_matches`` one ``run_match``
per match, since then one message a worker fans out) for a round robin of 32 bots at two seats,
ten games per pairing (4,960 matches: the size the old 5,000-match cap allowed) and, where
the checkout has formats, a balanced tournament of 300 bots at four seats with 40 matches
each (3,000 matches).  The baseline, measured in the same run on the same database, is
the same rows written one ORM object at a time (how a tournament was written before bulk
inserts); the ratio is creation / baseline.

Pages: a round robin of 4,960 matches among 32 bots, every result stored through
``play.save_result`` as a worker stores it; then ``GET /api/tournaments/<id>`` and the
HTML page ``/tournaments/<id>``, each timed over 20 requests.  The baseline is
``GET /api/games`` (a request that reads no tournament) in the same run.

Every figure is repeated ``--repeat`` times: min / median / max.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select

from arena.app import create_app
from arena.config import from_env
from arena.db import Database
from arena.match.referee import MatchRecord
from arena.models import Match, MatchSeat
from arena.worker import play, queue, refits
from tests.support.web import add_many_bots

try:
    from arena.competition import formats  # noqa: F401

    HAS_FORMATS = True
except ImportError:  # a checkout from before the formats
    HAS_FORMATS = False


@contextlib.contextmanager
def database_url(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.support.lanes import postgres_url

    with postgres_url() as url:
        yield url


def make_app(url: str, data_dir: str) -> Any:
    from arena import services

    # these figures time writing a tournament in the request, as it was before big ones
    # were built by a worker (benchmarks/big_tournament.py times that)
    services.BUILD_INLINE = 10**9
    Database(url).upgrade()
    env = {"ARENA_DATA_DIR": data_dir, "ARENA_DATABASE_URL": url}
    return create_app(from_env(env))


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def summary(values: list[float]) -> str:
    return (
        f"{min(values):8.3f} {statistics.median(values):8.3f} {max(values):8.3f}"
        if values
        else "       -"
    )


def orm_baseline(app: Any, ids: list[int], seats: int, n_matches: int) -> float:
    """The same number of matches and seats, one ORM object at a time."""
    rng = random.Random(1)

    def write() -> None:
        with app.extensions["arena.db"].session() as session:
            for _ in range(n_matches):
                match = Match(kind="ladder", game="cactus", seed=rng.randint(0, 2**53 - 1))
                match.seats = [
                    MatchSeat(seat=s, bot_id=b) for s, b in enumerate(rng.sample(ids, seats))
                ]
                session.add(match)
            session.flush()
            session.rollback()

    return timed(write)


def create_figures(kind: str, repeat: int) -> None:
    cases = [("round robin, 32 bots x 2 seats x 10", 32, 2, {"games_per_pairing": 10}, 4960)]
    if HAS_FORMATS:
        cases.append(
            (
                "balanced, 300 bots x 4 seats x 40",
                300,
                4,
                {"format": "balanced", "matches_per_bot": 40},
                3000,
            )
        )
    print(f"\n== creating a tournament ({kind}) — seconds: min median max; ratio to baseline")
    for title, n_bots, seats, fields, n_matches in cases:
        created, baseline = [], []
        for _ in range(repeat):
            with database_url(kind) as url, tempfile.TemporaryDirectory() as data_dir:
                app = make_app(url, data_dir)
                ids = add_many_bots(app.extensions["arena.db"], n_bots)
                client = app.test_client()
                body = {
                    "name": "scale",
                    "game": "cactus",
                    "bot_ids": ids,
                    "seats_per_match": seats,
                    **fields,
                }
                start = time.perf_counter()
                answer = client.post("/api/tournaments", json=body)
                created.append(time.perf_counter() - start)
                if answer.status_code != 201:
                    print(f"  {title}: {answer.status_code} {answer.get_json()}")
                    break
                baseline.append(orm_baseline(app, ids, seats, n_matches))
                app.extensions["arena.db"].dispose()
        ratios = [c / b for c, b in zip(created, baseline, strict=False)]
        print(f"  {title:40s} create {summary(created)}   one-by-one ORM {summary(baseline)}")
        print(f"  {'':40s} ratio  {summary(ratios)}")


def fill_results(app: Any, tournament_id: int) -> None:
    database = app.extensions["arena.db"]
    rng = random.Random(7)
    with database.session() as session:
        rows = session.execute(
            select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)
        ).all()
    for (match_id,) in rows:
        with database.session() as session:
            match = session.get(Match, match_id)
            match.status = "running"
            seats = len(match.seats)
        ranks = [rng.randint(1, seats) for _ in range(seats)]
        record = MatchRecord(
            match_id=str(match_id),
            game="cactus",
            seed=1,
            options={},
            players=["a"] * seats,
            outcome={"ranks": ranks, "scores": [0] * seats, "rounds": []},
            strikes=[0] * seats,
        )
        play.save_result(database, match_id, record)


def page_figures(kind: str, repeat: int) -> None:
    print(f"\n== reading a 4,960-match tournament ({kind}) — ms per request: min median max")
    with database_url(kind) as url, tempfile.TemporaryDirectory() as data_dir:
        app = make_app(url, data_dir)
        queue.enqueue_matches = lambda config, match_ids: None  # no worker here
        refits.refit_ratings.delay = lambda game: None
        ids = add_many_bots(app.extensions["arena.db"], 32)
        client = app.test_client()
        body = {
            "name": "pages",
            "game": "cactus",
            "bot_ids": ids,
            "seats_per_match": 2,
            "games_per_pairing": 10,
        }
        tournament_id = client.post("/api/tournaments", json=body).get_json()["id"]
        fill = timed(lambda: fill_results(app, tournament_id))
        print(f"  (4,960 results stored through save_result in {fill:.1f} s)")
        paths = {
            "baseline GET /api/games": "/api/games",
            "GET /api/tournaments/<id>": f"/api/tournaments/{tournament_id}",
            "GET /tournaments/<id> (HTML)": f"/tournaments/{tournament_id}",
        }
        figures: dict[str, list[float]] = {name: [] for name in paths}
        for _ in range(repeat):
            for name, path in paths.items():
                client.get(path)  # warm
                start = time.perf_counter()
                for _ in range(20):
                    response = client.get(path)
                    assert response.status_code == 200, (path, response.status_code)
                figures[name].append((time.perf_counter() - start) / 20 * 1000)
        base = figures["baseline GET /api/games"]
        for name, values in figures.items():
            ratios = [v / b for v, b in zip(values, base, strict=True)]
            print(f"  {name:32s} {summary(values)} ms   ratio {summary(ratios)}")
        app.extensions["arena.db"].dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-create", action="store_true")
    parser.add_argument("--skip-pages", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("ARENA_PROFILE", "local")
    if not args.skip_create:
        create_figures(args.database, args.repeat)
    if not args.skip_pages:
        page_figures(args.database, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
