"""What the gauntlet's stop rule costs a worker storing results.

    python benchmarks/stop_rule.py [--database sqlite|postgresql] [--repeat 3]
        [--challengers 4] [--matches 300] [--smoke]

Two gauntlets with the same schedule (``--challengers`` challengers against twelve field
bots at two seats, ``--matches`` matches each): one with a stop rule that never decides
(elo0 -10, elo1 10, a challenger that wins every other match: its ratio stays near 0),
one without (the baseline).  Every result is stored through ``play.save_result`` as a
worker stores it, the two tournaments' results interleaved, in a finishing order that
is not the schedule's: each block of 50 matches finishes last to first, so on a
checkout that counts results in schedule order 49 of every 50 wait and are then let in
together.  Printed: milliseconds per stored result, min / median / max over
``--repeat`` runs, and the ratio of the gauntlet with the stop rule to the baseline.
``--smoke``: SQLite, one run, one challenger of 4 matches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions
from sqlalchemy import func, select

from arena.match.referee import MatchRecord
from arena.models import Match, TournamentEntry
from arena.worker import play, queue, refits
from benchmarks.tournament_scale import database_url, make_app
from tests.support.web import add_many_bots

NEVER_DECIDES = {"elo0": -10, "elo1": 10, "alpha": 0.001, "beta": 0.001}
BLOCK = 50  # matches that finish last to first


def gauntlet(client: Any, ids: list[int], challengers: int, matches: int, sprt: Any) -> int:
    body = {
        "name": "bench",
        "game": "cactus",
        "bot_ids": ids,
        "seats_per_match": 2,
        "format": "gauntlet",
        "challenger_ids": ids[:challengers],
        "matches_per_bot": matches,
        "seed": 1,
    }
    if sprt is not None:
        body["sprt"] = sprt
    answer = client.post("/api/tournaments", json=body)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()["id"]


def finishing_order(app: Any, tournament_id: int) -> list[tuple[int, list[int]]]:
    """(match id, ranks) in finishing order: schedule order, each block reversed; each
    challenger (the lowest bot id at its table) wins every other one of its matches."""
    with app.extensions["arena.db"].session() as session:
        matches = session.scalars(
            select(Match).where(Match.tournament_id == tournament_id).order_by(Match.id)
        ).all()
        rows = [(m.id, [s.bot_id for s in m.seats]) for m in matches]
    results = []
    played: dict[int, int] = {}
    for match_id, seats in rows:
        hero = min(seats)  # challengers were registered first
        played[hero] = played.get(hero, 0) + 1
        wins = played[hero] % 2 == 0
        results.append((match_id, [1 if (b == hero) == wins else 2 for b in seats]))
    blocks = [results[i : i + BLOCK] for i in range(0, len(results), BLOCK)]
    return [result for block in blocks for result in reversed(block)]


def store(app: Any, match_id: int, ranks: list[int]) -> float:
    database = app.extensions["arena.db"]
    with database.session() as session:
        session.get(Match, match_id).status = "running"
    record = MatchRecord(
        match_id=str(match_id),
        game="cactus",
        seed=1,
        options={},
        players=["a", "b"],
        outcome={"ranks": ranks, "scores": [0, 0], "rounds": []},
        strikes=[0, 0],
    )
    start = time.perf_counter()
    assert play.save_result(database, match_id, record)
    return time.perf_counter() - start


def summary(values: list[float]) -> str:
    return f"{min(values):7.3f} {statistics.median(values):7.3f} {max(values):7.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--challengers", type=int, default=4)
    parser.add_argument("--matches", type=int, default=300)
    args = parse_args(
        parser, smoke={"database": "sqlite", "repeat": 1, "challengers": 1, "matches": 4}
    )
    print_versions("sqlalchemy", "sqlite" if args.database == "sqlite" else "psycopg")
    os.environ.setdefault("ARENA_PROFILE", "local")
    queue.enqueue_matches = lambda config, match_ids: None  # no worker here
    refits.refit_ratings.delay = lambda game: None
    per_result: dict[str, list[float]] = {"stop rule": [], "baseline": []}
    n = args.challengers * args.matches
    print(f"== storing {n} gauntlet results ({args.database}) — ms per result: min median max")
    for _ in range(args.repeat):
        with database_url(args.database) as url, tempfile.TemporaryDirectory() as data_dir:
            app = make_app(url, data_dir)
            client = app.test_client()
            ids = add_many_bots(app.extensions["arena.db"], args.challengers + 12)
            orders = {
                name: finishing_order(
                    app, gauntlet(client, ids, args.challengers, args.matches, sprt)
                )
                for name, sprt in (("stop rule", NEVER_DECIDES), ("baseline", None))
            }
            spent = dict.fromkeys(orders, 0.0)
            for pair in zip(*orders.values(), strict=True):
                for name, (match_id, ranks) in zip(orders, pair, strict=True):
                    spent[name] += store(app, match_id, ranks)
            for name, seconds in spent.items():
                per_result[name].append(seconds / n * 1000)
            with app.extensions["arena.db"].session() as session:
                decided = session.scalar(
                    select(func.count()).where(TournamentEntry.sprt_decision.is_not(None))
                )
            assert not decided, "the stop rule decided: the figures would not compare"
            app.extensions["arena.db"].dispose()
    ratios = [a / b for a, b in zip(per_result["stop rule"], per_result["baseline"], strict=True)]
    for name, values in per_result.items():
        print(f"  {name:10s} {summary(values)} ms")
    print(f"  {'ratio':10s} {summary(ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
