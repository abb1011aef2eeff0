"""Tournaments at the size of a real competition: creating one, and reading its pages.

    python benchmarks/tournament_scale.py [--database sqlite|postgresql] [--repeat 3]
        [--skip-pages] [--skip-create] [--bots 32] [--games-per-pairing 10]
        [--balanced-bots 300] [--matches-per-bot 40] [--requests 20] [--smoke]

Creation: ``POST /api/tournaments`` through the app (in process, the embedded file-system
broker receiving the messages: on a checkout before ``send_matches`` one ``run_match``
per match, since then one message a worker fans out) for a round robin of 32 bots
(``--bots``) at two seats, ten games per pairing (``--games-per-pairing``; 4,960 matches:
the size the old 5,000-match cap allowed) and, where the checkout has formats, a balanced
tournament of 300 bots (``--balanced-bots``) at four seats with 40 matches each
(``--matches-per-bot``; 3,000 matches).  The baseline, measured in the same run on the
same database, is the same rows written one ORM object at a time (how a tournament was
written before bulk inserts); the ratio is creation / baseline.  A creation that fails is
shown, and makes the script exit with an error once the figures are printed.

Pages: the same round robin of 4,960 matches among 32 bots, every result stored through
``play.save_result`` as a worker stores it; then ``GET /api/tournaments/<id>`` and the
HTML page ``/tournaments/<id>``, each timed over 20 requests (``--requests``).  The
baseline is ``GET /api/games`` (a request that reads no tournament) in the same run.

Every figure is repeated ``--repeat`` times: min / median / max.  ``--smoke``: SQLite,
once, a round robin of 4 bots playing each pairing twice and a balanced tournament of 8
bots at 4 matches each, 2 requests per page.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
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


def round_robin_matches(bots: int, games_per_pairing: int) -> int:
    return bots * (bots - 1) // 2 * games_per_pairing


def create_figures(args: argparse.Namespace) -> bool:
    """The creation figures; whether every tournament was created."""
    kind, repeat = args.database, args.repeat
    bots, games = args.bots, args.games_per_pairing
    cases = [
        (
            f"round robin, {bots} bots x 2 seats x {games}",
            bots,
            2,
            {"games_per_pairing": games},
            round_robin_matches(bots, games),
        )
    ]
    if HAS_FORMATS:
        bots, per_bot = args.balanced_bots, args.matches_per_bot
        cases.append(
            (
                f"balanced, {bots} bots x 4 seats x {per_bot}",
                bots,
                4,
                {"format": "balanced", "matches_per_bot": per_bot},
                -(-bots * per_bot // 4),
            )
        )
    print(f"\n== creating a tournament ({kind}) — seconds: min median max; ratio to baseline")
    created_all = True
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
                    created_all = False
                    break
                baseline.append(orm_baseline(app, ids, seats, n_matches))
                app.extensions["arena.db"].dispose()
        ratios = [c / b for c, b in zip(created, baseline, strict=False)]
        print(f"  {title:40s} create {summary(created)}   one-by-one ORM {summary(baseline)}")
        print(f"  {'':40s} ratio  {summary(ratios)}")
    return created_all


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


def page_figures(args: argparse.Namespace) -> None:
    kind, repeat, requests = args.database, args.repeat, args.requests
    n_matches = round_robin_matches(args.bots, args.games_per_pairing)
    print(
        f"\n== reading a {n_matches:,}-match tournament ({kind}) — ms per request: min median max"
    )
    with database_url(kind) as url, tempfile.TemporaryDirectory() as data_dir:
        app = make_app(url, data_dir)
        queue.enqueue_matches = lambda config, match_ids: None  # no worker here
        refits.refit_ratings.delay = lambda game: None
        ids = add_many_bots(app.extensions["arena.db"], args.bots)
        client = app.test_client()
        body = {
            "name": "pages",
            "game": "cactus",
            "bot_ids": ids,
            "seats_per_match": 2,
            "games_per_pairing": args.games_per_pairing,
        }
        tournament_id = client.post("/api/tournaments", json=body).get_json()["id"]
        fill = timed(lambda: fill_results(app, tournament_id))
        print(f"  ({n_matches:,} results stored through save_result in {fill:.1f} s)")
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
                for _ in range(requests):
                    response = client.get(path)
                    assert response.status_code == 200, (path, response.status_code)
                figures[name].append((time.perf_counter() - start) / requests * 1000)
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
    parser.add_argument("--bots", type=int, default=32, help="of the round robin")
    parser.add_argument("--games-per-pairing", type=int, default=10, help="of the round robin")
    parser.add_argument("--balanced-bots", type=int, default=300)
    parser.add_argument("--matches-per-bot", type=int, default=40, help="of the balanced one")
    parser.add_argument("--requests", type=int, default=20, help="timed per page")
    args = parse_args(
        parser,
        smoke={
            "database": "sqlite",
            "repeat": 1,
            "bots": 4,
            "games_per_pairing": 2,
            "balanced_bots": 8,
            "matches_per_bot": 4,
            "requests": 2,
        },
    )
    print_versions("sqlalchemy", "flask", "sqlite" if args.database == "sqlite" else "psycopg")
    os.environ.setdefault("ARENA_PROFILE", "local")
    created = True
    if not args.skip_create:
        created = create_figures(args)
    if not args.skip_pages:
        page_figures(args)
    return 0 if created else 1


if __name__ == "__main__":
    sys.exit(main())
