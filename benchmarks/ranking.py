"""How well a tournament ranks bots of known strength, and how much luck duplicate deals
remove: balanced tournaments played in process by house policies.

    python benchmarks/ranking.py [--games cactus,cactus-game,president] [--bots 12]
        [--seats 4] [--checkpoints 4,8,16,32] [--repeat 3] [--variance-matches 400]
        [--field-rate 0.5] [--skip-ranking] [--skip-variance] [--smoke]

Ranking: ``--bots`` bots of graded strength, bot i playing the game's heuristic policy
but a uniformly random legal action with probability i / (bots - 1) (bot 0 is the pure
heuristic, the last bot pure random play), so the true order is known.  A balanced
schedule (``arena.competition.formats.balanced``) is played in process; after the first k
matches per bot, for each checkpoint k, the ratings are fitted
(``arena.competition.ratings.fit_ratings``) and Kendall's tau between the fitted order
and the true order is printed (1: exact), for independent and duplicate deals, min /
median / max over ``--repeat`` tournament seeds.

Variance: the heuristic against ``seats - 1`` players that play at random half the time
(``--field-rate``; close enough in strength that the cards decide much).  Independent: its score
against the table (the share of opponents ranked below it, ties half) over
``--variance-matches`` matches, each with its own deal.  Duplicate: the same number of
matches as deals played once per rotation; one observation is the mean over a deal's
rotations, and its variance times the number of rotations is the variance per match
played.  The ratio duplicate / independent is the share of the variance that is left (the
baseline, independent deals, is measured in the same run).

``--smoke``: one seed, 4 bots to the first checkpoint (4 matches each), 8 matches of
variance.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena.competition import formats
from arena.competition.ratings import fit_ratings
from arena.games import get_game, make_policy
from arena.games.policy import Policy
from arena.match.referee import PolicyClient, Referee


class Diluted(Policy):
    """The heuristic, except a random legal action with probability ``rate``."""

    def __init__(self, game: str, rate: float, rng: random.Random):
        super().__init__(rng)
        self.rate = rate
        self.heuristic = make_policy(game, "heuristic", rng)
        self.name = f"heuristic+{rate:.0%} random"

    def start(self, info: dict[str, Any]) -> None:
        self.heuristic.start(info)

    def act(self, view: dict[str, Any], legal_actions: list[Any]) -> Any:
        if self.rng.random() < self.rate:
            return self.rng.choice(legal_actions)
        return self.heuristic.act(view, legal_actions)

    def end(self, info: dict[str, Any]) -> None:
        self.heuristic.end(info)


def play(game: str, seats: list[int], seed: int, rates: dict[int, float], salt: int) -> list[int]:
    """Ranks by seat of one match; each bot's own randomness depends on the bot and the
    match, not on the seat (a real bot's does not follow the hand it holds)."""
    clients = [
        PolicyClient(Diluted(game, rates[bot], random.Random(f"{salt}:{bot}")), f"bot{bot}")
        for bot in seats
    ]
    record = Referee().run(game, clients, seed)
    return list(record.outcome["ranks"])


def kendall_tau(order: list[int], truth: list[int]) -> float:
    """Kendall's tau between two orders of the same items (no ties)."""
    position = {item: i for i, item in enumerate(truth)}
    ranked = [position[item] for item in order]
    n = len(ranked)
    concordant = sum(1 if ranked[i] < ranked[j] else -1 for i in range(n) for j in range(i + 1, n))
    return concordant / (n * (n - 1) / 2)


def spread(values: list[float]) -> str:
    return f"{min(values):6.3f} {statistics.median(values):6.3f} {max(values):6.3f}"


def ranking(game: str, n_bots: int, seats: int, checkpoints: list[int], repeat: int) -> None:
    bots = list(range(1, n_bots + 1))
    rates = {bot: i / (n_bots - 1) for i, bot in enumerate(bots)}
    truth = sorted(bots, key=lambda b: rates[b])
    most = max(checkpoints)
    taus: dict[tuple[str, int], list[float]] = {}
    started = time.perf_counter()
    for deal in formats.DEALS:
        for r in range(repeat):
            tables = formats.balanced(bots, seats, most, seed=1000 + r, deal=deal)
            results = [
                (list(t.seats), play(game, list(t.seats), t.seed, rates, i))
                for i, t in enumerate(tables)
            ]
            for k in checkpoints:
                taken = results[: len(tables) * k // most]
                fitted = fit_ratings(taken)
                order = sorted(fitted, key=lambda b: -fitted[b].rating)
                taus.setdefault((deal, k), []).append(kendall_tau(order, truth))
    elapsed = time.perf_counter() - started
    print(
        f"\n== {game}: {n_bots} bots at {seats} seats — Kendall tau, min median max "
        f"over {repeat} seeds ({elapsed:.0f} s)"
    )
    print(f"  {'matches/bot':>11} {'matches':>8}   {'independent':^20}   {'duplicate':^20}")
    for k in checkpoints:
        total = n_bots * k // seats
        print(
            f"  {k:11d} {total:8d}   {spread(taus['independent', k]):20}   "
            f"{spread(taus['duplicate', k]):20}"
        )


def score(seats: list[int], ranks: list[int], bot: int) -> float:
    """``bot``'s share of the other seats ranked below it, ties half."""
    mine = ranks[seats.index(bot)]
    others = [rank for b, rank in zip(seats, ranks, strict=True) if b != bot]
    return sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for r in others) / len(others)


def variance(game: str, seats: int, n_matches: int, repeat: int, field_rate: float) -> None:
    hero = 1
    rates = {hero: 0.0, **{b: field_rate for b in range(2, seats + 1)}}
    table = list(rates)
    rows = []
    for r in range(repeat):
        rng = random.Random(r)
        independent = []
        for i in range(n_matches):
            seating = table[i % seats :] + table[: i % seats]
            seed = rng.getrandbits(53)
            independent.append(score(seating, play(game, seating, seed, rates, i), hero))
        deals = []
        for d in range(n_matches // seats):
            seed = rng.getrandbits(53)
            rotations = [table[k:] + table[:k] for k in range(seats)]
            deals.append(
                statistics.fmean(
                    score(s, play(game, s, seed, rates, d * seats + k), hero)
                    for k, s in enumerate(rotations)
                )
            )
        v_independent = statistics.pvariance(independent)
        v_duplicate = statistics.pvariance(deals) * seats  # per match played
        rows.append((statistics.fmean(independent), v_independent, v_duplicate))
    print(
        f"\n== {game}: heuristic against {seats - 1} heuristic+{field_rate:.0%} random, "
        f"variance of its score per match played ({n_matches} matches, min median max "
        f"over {repeat} seeds)"
    )
    print(f"  mean score           {spread([m for m, _, _ in rows])}")
    print(f"  independent (base)   {spread([v for _, v, _ in rows])}")
    print(f"  duplicate            {spread([d for _, _, d in rows])}")
    ratios = [d / v if v else float("nan") for _, v, d in rows]  # v = 0: every match alike
    print(f"  ratio dup / indep    {spread(ratios)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="cactus,cactus-game,president")
    parser.add_argument("--bots", type=int, default=12)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--checkpoints", default="4,8,16,32")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variance-matches", type=int, default=400)
    parser.add_argument("--field-rate", type=float, default=0.5)
    parser.add_argument("--skip-ranking", action="store_true")
    parser.add_argument("--skip-variance", action="store_true")
    args = parse_args(
        parser, smoke={"bots": 4, "checkpoints": "4", "repeat": 1, "variance_matches": 8}
    )
    print_versions("numpy")
    checkpoints = sorted({int(k) for k in args.checkpoints.split(",")})
    if any(k % args.seats for k in checkpoints):
        parser.error("every checkpoint must be a multiple of --seats (duplicate deals)")
    for game in args.games.split(","):
        engine = get_game(game)
        if not engine.min_players <= args.seats <= engine.max_players:
            print(f"{game}: {args.seats} seats is not a table of this game; skipped")
            continue
        if not args.skip_variance:
            variance(game, args.seats, args.variance_matches, args.repeat, args.field_rate)
        if not args.skip_ranking:
            ranking(game, args.bots, args.seats, checkpoints, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
