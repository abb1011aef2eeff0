"""Ratings helpers shared by the rating tests and ``benchmarks/ratings.py``: simulated
match histories, and the reference fit (choix) the numpy fit is checked against."""

from __future__ import annotations

import math
import random

import numpy as np

from arena.competition.ratings import Z_95, FittedRating


def simulate(rng: random.Random, ladder: dict[str, float], n_matches: int, n_seats: int) -> list:
    """Finishing orders drawn from known Elo strengths.

    An exponential race (each seat finishes after an exponential time with rate
    10^(rating / 400); lower time ranks better) is Plackett-Luce, whose every pair is won
    with exactly the Elo/Bradley-Terry probability.
    """
    history = []
    for _ in range(n_matches):
        seats = rng.sample(sorted(ladder), n_seats)
        times = [rng.expovariate(10 ** (ladder[bot] / 400)) for bot in seats]
        order = sorted(range(n_seats), key=times.__getitem__)
        ranks = [0] * n_seats
        for rank, seat in enumerate(order, start=1):
            ranks[seat] = rank
        history.append((seats, ranks))
    return history


def choix_fit(matches, *, center=1500.0, scale=400.0, alpha=0.01):
    """`fit_ratings` as it was with choix, kept as the reference (and the benchmark's
    baseline): comparisons counted one by one, each pair's half-win count expanded
    count // gcd times for ``choix.opt_pairwise`` (alpha / gcd, Newton-CG, tol 1e-8), and the
    sandwich interval summed match by match."""
    import choix

    matches = list(matches)
    half_wins: dict = {}
    games: dict = {}
    for seats, ranks in matches:
        played = set()
        for i in range(len(seats)):
            for j in range(i + 1, len(seats)):
                a, b = seats[i], seats[j]
                if a == b:
                    continue
                played.update((a, b))
                if ranks[i] < ranks[j]:
                    half_wins[a, b] = half_wins.get((a, b), 0) + 2
                elif ranks[i] > ranks[j]:
                    half_wins[b, a] = half_wins.get((b, a), 0) + 2
                else:
                    half_wins[a, b] = half_wins.get((a, b), 0) + 1
                    half_wins[b, a] = half_wins.get((b, a), 0) + 1
        for bot in played:
            games[bot] = games.get(bot, 0) + 1
    bots = sorted(games)
    if not bots:
        return {}
    index = {bot: i for i, bot in enumerate(bots)}
    pairs = sorted((index[a], index[b], count) for (a, b), count in half_wins.items())
    common = math.gcd(*(count for _, _, count in pairs))
    data = [(a, b) for a, b, count in pairs for _ in range(count // common)]
    n = len(bots)
    theta = choix.opt_pairwise(n, data, alpha=alpha / common, method="Newton-CG", tol=1e-8)
    theta = theta - theta.mean()

    hessian = alpha * np.identity(n)
    for a, b, count in pairs:
        p = 1.0 / (1.0 + math.exp(theta[b] - theta[a]))
        w = count / 2.0 * p * (1.0 - p)
        hessian[a, a] += w
        hessian[b, b] += w
        hessian[a, b] -= w
        hessian[b, a] -= w
    inverse = np.linalg.pinv(hessian, hermitian=True)
    scores = np.zeros((n, n))
    for seats, ranks in matches:
        rows = sorted({index[bot] for bot in seats if bot in index})
        position = {row: k for k, row in enumerate(rows)}
        gradient = np.zeros(len(rows))
        for i in range(len(seats)):
            for j in range(i + 1, len(seats)):
                if seats[i] == seats[j]:
                    continue
                a, b = index[seats[i]], index[seats[j]]
                result = 1.0 if ranks[i] < ranks[j] else 0.0 if ranks[i] > ranks[j] else 0.5
                surprise = result - 1.0 / (1.0 + math.exp(theta[b] - theta[a]))
                gradient[position[a]] -= surprise
                gradient[position[b]] += surprise
        scores[np.ix_(rows, rows)] += np.outer(gradient, gradient)
    centring = np.identity(n) - np.full((n, n), 1.0 / n)
    sandwich = np.diag(centring @ inverse @ scores @ inverse @ centring)
    naive = np.diag(centring @ inverse @ centring)
    se = np.sqrt(np.clip(np.maximum(sandwich, naive), 0.0, None))
    to_elo = scale / math.log(10.0)
    fitted = {}
    for bot, i in index.items():
        rating = center + to_elo * float(theta[i])
        half_width = Z_95 * to_elo * float(se[i])
        fitted[bot] = FittedRating(rating, rating - half_width, rating + half_width, games[bot])
    return fitted
