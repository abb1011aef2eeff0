"""How long the maximum-likelihood ratings take to fit and to refit, against the choix fit
they replaced, measured in the same run.

    python benchmarks/ratings.py [--sizes 1000,10000,50000] [--bots 32] [--seats 4]
        [--baseline-max 10000] [--db-matches 50000] [--repeat 3] [--seed 1] [--smoke]

Fit: for each size, a synthetic history of ``--seats``-seat matches among ``--bots`` bots
of known strengths (Plackett-Luce finishing orders, ``simulate`` of the tests) is fitted
by ``arena.competition.ratings.fit_ratings`` and by the choix fit it replaced (``choix_fit`` of the
tests: choix's Newton-CG over every comparison, the interval summed match by match).
Printed: both times (min / median / max over ``--repeat`` runs), their ratio (baseline /
new, medians) and the largest difference between the two fits on the Elo scale, for the
rating and for the interval bounds.  Above ``--baseline-max`` matches the baseline is not
run (it takes minutes; about 27 s at 10,000 and 233 s at 50,000 were measured).

Database: a SQLite database (in a temporary directory) is brought to the newest schema
and filled with ``--db-matches`` rated matches by bulk inserts (the fill is timed on its
own); then timed: ``rated_history`` (one query), the loader it replaced (one query per
match, the baseline), ``rebuild_ratings`` (what ``arena ratings rebuild`` runs: the
history, the Elo replay, the fit, storing it), a refit that fits (``refit_game`` after the
stored fit is marked out of date) and one that finds the history unchanged.

``--smoke``: 200 matches among 8 bots, fitted both ways and in the database, once.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena import sealing
from arena.competition.ratings import fit_ratings
from arena.config import Config
from arena.db import Database
from arena.models import Bot, Match, MatchSeat, RatingFit, bot_name_key
from arena.worker.refits import rated_history, rebuild_ratings, refit_game
from tests.support.ratings import choix_fit, simulate

GAME = "cactus"


def timed(run: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    """Seconds of each of ``repeat`` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return times, result


def spread(times: list[float]) -> str:
    if len(times) == 1:
        return f"{times[0]:8.3f} s"
    return f"{min(times):.3f} / {statistics.median(times):.3f} / {max(times):.3f} s"


def ladder(n_bots: int, rng: random.Random) -> dict[str, float]:
    strengths = [rng.gauss(0.0, 200.0) for _ in range(n_bots)]
    mean = sum(strengths) / n_bots
    return {f"bot{i:03d}": 1500.0 + s - mean for i, s in enumerate(strengths)}


def difference(new: dict[Any, Any], old: dict[Any, Any], fields: tuple[str, ...]) -> float:
    return max(abs(getattr(new[b], f) - getattr(old[b], f)) for b in old for f in fields)


def bench_fit(args: argparse.Namespace) -> None:
    print(f"fit: {args.seats}-seat matches among {args.bots} bots; times min / median / max")
    try:
        import choix  # noqa: F401
    except ImportError:
        print("  choix is not installed (the test extra): no baseline")
        args.baseline_max = -1
    rng = random.Random(args.seed)
    strengths = ladder(args.bots, rng)
    for size in args.sizes:
        history = simulate(rng, strengths, size, args.seats)
        new_times, new = timed(lambda h=history: fit_ratings(h), args.repeat)
        print(f"  {size:>7,} matches  numpy fit      {spread(new_times)}")
        if size > args.baseline_max:
            print(f"  {'':>7}          choix baseline skipped (above --baseline-max)")
            continue
        old_times, old = timed(lambda h=history: choix_fit(h), args.repeat)
        ratio = statistics.median(old_times) / statistics.median(new_times)
        print(f"  {'':>7}          choix baseline {spread(old_times)}   ratio {ratio:,.0f}x")
        print(
            f"  {'':>7}          max difference: rating {difference(new, old, ('rating',)):.1e}"
            f" Elo, interval {difference(new, old, ('low', 'high')):.1e} Elo"
        )


def fill(database: Database, history: list[tuple[list[str], list[int]]]) -> None:
    """Bots, and one finished rated match per entry of ``history`` (bulk inserts)."""
    names = sorted({bot for seats, _ in history for bot in seats})
    with database.session() as session:
        session.execute(
            insert(Bot),
            [
                {
                    "id": i + 1,
                    "name": name,
                    "name_key": bot_name_key(name),
                    "endpoint": f"http://127.0.0.1:9/{name}",
                    "owner": "bench",
                    "owner_token_hash": "-",
                    "signing_secret": "-",
                    "games": [GAME],
                }
                for i, name in enumerate(names)
            ],
        )
        ids = {name: i + 1 for i, name in enumerate(names)}
        session.execute(
            insert(Match),
            [
                {
                    "id": seq,
                    "kind": "ladder",
                    "game": GAME,
                    "seed": seq,
                    "status": "finished",
                    "rated": True,
                    "rating_seq": seq,
                }
                for seq in range(1, len(history) + 1)
            ],
        )
        session.execute(
            insert(MatchSeat),
            [
                {"match_id": seq, "seat": seat, "bot_id": ids[bot], "rank": rank}
                for seq, (seats, ranks) in enumerate(history, start=1)
                for seat, (bot, rank) in enumerate(zip(seats, ranks, strict=True))
            ],
        )


def history_per_match(database: Database) -> list[tuple[list[int], list[int]]]:
    """The loader ``rated_history`` replaced: the matches, then each one's seats."""
    with database.session() as session:
        matches = session.scalars(
            select(Match)
            .where(Match.game == GAME, Match.rating_seq.is_not(None))
            .order_by(Match.rating_seq)
        )
        return [([s.bot_id for s in m.seats], [s.rank for s in m.seats]) for m in matches]


def bench_database(args: argparse.Namespace) -> None:
    size = args.db_matches
    print(f"database: SQLite, {size:,} rated {args.seats}-seat matches among {args.bots} bots")
    rng = random.Random(args.seed + 1)
    history = simulate(rng, ladder(args.bots, rng), size, args.seats)
    with tempfile.TemporaryDirectory() as folder:
        config = Config(database_url=f"sqlite:///{Path(folder) / 'arena.sqlite3'}",
                        data_dir=Path(folder))  # fmt: skip
        sealing.use(config)  # the bots' secrets sealed with a key of this database's own
        database = Database(config.database_url)
        try:
            database.upgrade()
            fill_times, _ = timed(lambda: fill(database, history), 1)
            print(f"  {'fill (bulk inserts; in no figure below)':<42}{spread(fill_times)}")

            def load() -> list[tuple[list[int], list[int]]]:
                with database.session() as session:
                    return rated_history(session, GAME)

            new_times, loaded = timed(load, args.repeat)
            old_times, old_loaded = timed(lambda: history_per_match(database), args.repeat)
            assert loaded == old_loaded and len(loaded) == size
            ratio = statistics.median(old_times) / statistics.median(new_times)
            print(f"  {'rated_history (one query)':<42}{spread(new_times)}")
            label = "baseline: one query per match"
            print(f"  {label:<42}{spread(old_times)}   ratio {ratio:,.0f}x")
            rebuild_times, report = timed(lambda: rebuild_ratings(database, GAME), args.repeat)
            assert report["matches"] == size
            print(f"  {'rebuild_ratings (arena ratings rebuild)':<42}{spread(rebuild_times)}")

            def refit() -> str:
                with database.session() as session:  # the stored fit is out of date
                    session.execute(update(RatingFit).values(rating_seq=None))
                return refit_game(database, GAME).status

            refit_times, status = timed(refit, args.repeat)
            assert status == "fitted", status
            print(f"  {'refit_game, history changed (fits)':<42}{spread(refit_times)}")
            same_times, status = timed(lambda: refit_game(database, GAME).status, args.repeat)
            assert status == "unchanged", status
            print(f"  {'refit_game, history unchanged':<42}{spread(same_times)}")
        finally:
            database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--bots", type=int, default=32)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--baseline-max", type=int, default=10_000)
    parser.add_argument("--db-matches", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parse_args(parser, smoke={"sizes": "200", "bots": 8, "db_matches": 200, "repeat": 1})
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    print_versions("choix", "numpy", "scipy", "sqlite")
    print(f"{platform.machine()}, repeat {args.repeat}")
    bench_fit(args)
    if args.db_matches:
        bench_database(args)


if __name__ == "__main__":
    main()
