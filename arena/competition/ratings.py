"""Ratings: pure functions over match results (no database, web or task queue).

A match result is the bot id in each seat and each seat's final rank (1 = best, equal ranks
are a tie). Multiplayer matches are rated by pairwise decomposition: every pair of seats is
one two-player comparison.

Two models:

- Live Elo (`apply_match`, `replay_elo`): the rating shown on the leaderboard, changed by each
  match as it finishes. `replay_elo` rebuilds it from the history with the very same
  arithmetic, so a rebuild equals what is stored, float for float.
- A maximum-likelihood fit (`fit_ratings`): Bradley-Terry on the whole history, independent
  of the order of the matches, on the Elo scale with a 95% interval.

And how far a fit can be read: a fit on too little evidence is provisional
(`is_provisional`), and neighbours on a leaderboard whose fitted ratings are not told apart
at 95% are tied (`tie_groups`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

BotId = TypeVar("BotId", bound=Hashable)

Z_95 = 1.96


@dataclass(frozen=True)
class EloConfig:
    """Elo constants: K factor, a new bot's rating, and the 10x-odds distance."""

    k: float = 32.0
    initial: float = 1500.0
    scale: float = 400.0


DEFAULT_ELO = EloConfig()


@dataclass(frozen=True)
class FittedRating:
    """A fitted rating on the Elo scale, its 95% interval, and the matches behind it."""

    rating: float
    low: float
    high: float
    games: int


def expected(ra: float, rb: float, scale: float) -> float:
    """Expected score of a player rated `ra` against one rated `rb` (a win counts 1)."""
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / scale))


def _check_match(n_seats: int, n_ranks: int) -> None:
    if n_seats != n_ranks:
        raise ValueError(f"{n_seats} seats but {n_ranks} ranks")
    if n_seats < 2:
        raise ValueError("a rated match needs at least two seats")


def _score(rank_i: int, rank_j: int) -> float:
    """Seat i's result against seat j: a lower rank is better, equal ranks are a draw."""
    if rank_i < rank_j:
        return 1.0
    if rank_i == rank_j:
        return 0.5
    return 0.0


def elo_deltas(
    ratings: Sequence[float], ranks: Sequence[int], config: EloConfig = DEFAULT_ELO
) -> list[float]:
    """Each seat's Elo change for one match, every pair scored against pre-match ratings.

    The K factor is shared out over the n - 1 opponents so that a multiplayer match moves a
    rating about as much as one two-player game. Every pair uses the ratings from before
    the match (a simultaneous update), so seat order does not matter and the changes sum to
    zero (up to rounding).
    """
    n = len(ratings)
    _check_match(n, len(ranks))
    totals = [0.0] * n
    for i in range(n):
        for j in range(i + 1, n):
            # One number per pair, added to i and subtracted from j, so the pair is zero-sum.
            d = _score(ranks[i], ranks[j]) - expected(ratings[i], ratings[j], config.scale)
            totals[i] += d
            totals[j] -= d
    factor = config.k / (n - 1)
    return [factor * t for t in totals]


def apply_match(
    table: dict[BotId, float],
    seats: Sequence[BotId],
    ranks: Sequence[int],
    config: EloConfig = DEFAULT_ELO,
) -> dict[BotId, tuple[float, float]]:
    """Each bot's (before, after) rating for one match; `table` is not modified.

    Bots missing from `table` start at `config.initial`. A bot holding several seats is
    rated as that many distinct players (each seat against every other seat, including its
    own other seats, all from its one pre-match rating), and the deltas of its seats are
    summed, in seat order, into its single change.
    """
    _check_match(len(seats), len(ranks))
    before = {bot: table.get(bot, config.initial) for bot in seats}
    deltas = elo_deltas([before[bot] for bot in seats], ranks, config)
    change = dict.fromkeys(before, 0.0)
    for bot, delta in zip(seats, deltas, strict=True):
        change[bot] += delta
    return {bot: (before[bot], before[bot] + change[bot]) for bot in before}


def replay_elo(
    matches: Iterable[tuple[Sequence[BotId], Sequence[int]]],
    config: EloConfig = DEFAULT_ELO,
) -> dict[BotId, float]:
    """Live Elo rebuilt from the history, in the given order (`arena ratings rebuild`).

    It folds `apply_match` itself, so the result equals, bit for bit, ratings stored one
    match at a time in the same order.
    """
    table: dict[BotId, float] = {}
    for seats, ranks in matches:
        for bot, (_, after) in apply_match(table, seats, ranks, config).items():
            table[bot] = after
    return table


# A chunk of matches holds at most this many seat pairs: the arrays built from one chunk
# stay a few megabytes whatever the history, and the n-by-n tables are the only ones that
# grow with the number of bots (8 MB each for 1,000 bots).
_CHUNK_PAIRS = 1 << 18


@dataclass(frozen=True)
class _Table:
    """The matches of one table size: the bot index (into the sorted bots) and the rank
    of each seat, one row per match, and the seat pairs (i < j) as index arrays."""

    seats: np.ndarray  # (matches, k) int
    ranks: np.ndarray  # (matches, k)
    first: np.ndarray  # (k(k-1)/2,) seat i of each pair
    second: np.ndarray  # (k(k-1)/2,) seat j of each pair

    def chunks(self, per_match: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(seats, ranks) in slices of rows whose `per_match` entries each stay bounded."""
        step = max(1, _CHUNK_PAIRS // max(1, per_match))
        for start in range(0, len(self.seats), step):
            yield self.seats[start : start + step], self.ranks[start : start + step]


def _tables(
    matches: Sequence[tuple[Sequence[BotId], Sequence[int]]],
) -> tuple[list[BotId], list[_Table]]:
    """Every bot seated, sorted, and the matches grouped by their number of seats."""
    by_size: dict[int, list[tuple[Sequence[BotId], Sequence[int]]]] = {}
    for seats, ranks in matches:
        _check_match(len(seats), len(ranks))
        by_size.setdefault(len(seats), []).append((seats, ranks))
    bots = sorted({bot for seats, _ in matches for bot in seats})
    index = {bot: i for i, bot in enumerate(bots)}
    tables = []
    for k, group in sorted(by_size.items()):
        seats = np.array([index[bot] for s, _ in group for bot in s], dtype=np.intp)
        ranks = np.array([rank for _, r in group for rank in r])
        first, second = np.triu_indices(k, 1)
        tables.append(_Table(seats.reshape(-1, k), ranks.reshape(-1, k), first, second))
    return bots, tables


def _comparisons(tables: Sequence[_Table], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise comparisons, counted in half-wins (an n-by-n integer matrix), and matches
    per bot.

    The count of (a, b) is twice a's wins over b: a win adds 2 to (winner, loser), a tie
    adds 1 each way. Integers keep the totals exact whatever the match order. A bot meeting
    itself (two seats) tells nothing about strength and is skipped; a bot has played a
    match in which it met at least one other bot.
    """
    half_wins = np.zeros(n * n, dtype=np.int64)
    games = np.zeros(n, dtype=np.int64)
    for table in tables:
        for seats, ranks in table.chunks(len(table.first)):
            a, b = seats[:, table.first].ravel(), seats[:, table.second].ravel()
            ra, rb = ranks[:, table.first].ravel(), ranks[:, table.second].ravel()
            other = a != b
            decided = other & (ra != rb)
            a_won = ra[decided] < rb[decided]
            winner = np.where(a_won, a[decided], b[decided])
            loser = np.where(a_won, b[decided], a[decided])
            tied = other & (ra == rb)
            ta, tb = a[tied], b[tied]
            half_wins += 2 * np.bincount(winner * n + loser, minlength=n * n)
            half_wins += np.bincount(np.concatenate((ta * n + tb, tb * n + ta)), minlength=n * n)
            # each distinct bot of a match with at least two distinct bots has played it
            ordered = np.sort(seats, axis=1)
            distinct = np.ones(ordered.shape, dtype=bool)
            distinct[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
            contested = distinct[:, 1:].any(axis=1)
            games += np.bincount(ordered[distinct & contested[:, None]], minlength=n)
    return half_wins.reshape(n, n), games


def _win_chance(theta: np.ndarray) -> np.ndarray:
    """p[a, b] = 1/(1 + e^(θb - θa)), written with tanh so that no exponential overflows."""
    return 0.5 + 0.5 * np.tanh(0.5 * (theta[:, None] - theta[None, :]))


def _fit_theta(weights: np.ndarray, alpha: float) -> np.ndarray:
    """θ minimising Σ_ab weights[a, b]·-log p_ab + alpha/2·|θ|², by Newton's method.

    The objective is strictly convex (alpha > 0), its gradient and Hessian dense n-by-n sums:
    with N = W + Wᵀ the comparisons between a and b,

        gradient_a = Σ_b N_ab·p_ab - Σ_b W_ab + alpha·θa
        Hessian    = diag(Σ_b c_ab) - c + alpha·I,   c_ab = N_ab·p_ab·(1 - p_ab).

    Far from the optimum (Newton decrement λ² = gradientᵀ·H⁻¹·gradient above 1e-2, as in
    the first steps for an unbeaten bot, whose θ lies far from 0), a step that does not
    lower the objective enough is halved (Armijo backtracking).  Closer, the full step is
    taken without looking at the objective, whose changes soon fall below its rounding:
    convergence is quadratic, and stops once a step is below 1e-10 (2e-8 Elo), the next
    one would be about 1e-20.
    """
    n = len(weights)
    meetings = weights + weights.T
    wins = weights.sum(axis=1)
    has_weight = weights > 0

    def objective(theta: np.ndarray) -> float:
        margins = (theta[:, None] - theta[None, :])[has_weight]
        return float(weights[has_weight] @ np.logaddexp(0.0, -margins)) + 0.5 * alpha * float(
            theta @ theta
        )

    theta = np.zeros(n)
    for _ in range(100):
        p = _win_chance(theta)
        gradient = (meetings * p).sum(axis=1) - wins + alpha * theta
        curvature = meetings * p * (1.0 - p)
        hessian = -curvature
        hessian[np.diag_indices(n)] += curvature.sum(axis=1) + alpha
        step = np.linalg.solve(hessian, gradient)
        decrement = float(gradient @ step)  # λ², >= 0: H is positive definite
        if decrement < 1e-2:
            theta = theta - step
            if np.max(np.abs(step)) < 1e-10:
                break
            continue
        value, size = objective(theta), 1.0
        while objective(theta - size * step) > value - 1e-4 * size * decrement and size > 1e-10:
            size *= 0.5
        theta = theta - size * step
    return theta


def _score_products(tables: Sequence[_Table], n: int, theta: np.ndarray) -> np.ndarray:
    """J = Σ over matches of g·gᵀ, g the gradient of the match's pairwise negative
    log-likelihood at theta: for each pair, -(y - p) on the first bot and +(y - p) on the
    second, y its result (1, 1/2, 0) and p its modelled chance of beating the second.

    Each match's g is built per seat (s, one row of k numbers, the pair surprises times
    the pair-by-seat incidence matrix); a bot in two seats has the sum of both as its
    component, so g·gᵀ = Σ over seat pairs (u, v) of s_u·s_v at (bot_u, bot_v), which is
    summed into J with one bincount per chunk of matches: GᵀG without the n columns of G.
    """
    products = np.zeros(n * n)
    for table in tables:
        k = table.seats.shape[1]
        incidence = np.zeros((len(table.first), k))
        pairs = np.arange(len(table.first))
        incidence[pairs, table.first] = -1.0
        incidence[pairs, table.second] = 1.0
        for seats, ranks in table.chunks(k * k + len(table.first)):
            a, b = seats[:, table.first], seats[:, table.second]
            ra, rb = ranks[:, table.first], ranks[:, table.second]
            result = np.where(ra < rb, 1.0, np.where(ra > rb, 0.0, 0.5))
            chance = 0.5 + 0.5 * np.tanh(0.5 * (theta[a] - theta[b]))
            surprise = np.where(a != b, result - chance, 0.0)
            by_seat = surprise @ incidence  # (matches, k): each seat's part of g
            keys = seats[:, :, None] * n + seats[:, None, :]
            weights = by_seat[:, :, None] * by_seat[:, None, :]
            products += np.bincount(keys.ravel(), weights=weights.ravel(), minlength=n * n)
    return products.reshape(n, n)


def fit_ratings(
    matches: Iterable[tuple[Sequence[BotId], Sequence[int]]],
    *,
    center: float = 1500.0,
    scale: float = 400.0,
    alpha: float = 0.01,
) -> dict[BotId, FittedRating]:
    """Order-independent Bradley-Terry ratings on the Elo scale, with a 95% interval.

    Unlike live Elo, this uses the whole history at once, so an early upset weighs no more
    than a late one. Bot ids must be mutually orderable (all ints or all strings): the
    bots are numbered in sorted order, so the result does not depend on the order of
    `matches`. Bots with no comparison are absent.

    Model (weights w: 1 for a win, 1/2 each way for a tie), with p_ab = 1/(1 + e^(θb - θa)):

        minimise  Σ w · -log p_winner,loser  +  alpha/2 · |θ|²

    alpha is a Gaussian prior of variance 1/alpha on θ; it keeps an unbeaten or winless bot
    finite. The comparisons are first summed into an n-by-n matrix of weights (exact half-win
    counts: ties are exact, never rounded to a coin flip), so each Newton step costs the
    same whatever the number of matches: at most n(n-1) distinct pairs (`_fit_theta`).

    Interval: a match of n seats gives n(n-1)/2 comparisons that are not independent (one
    shuffle of the table decides them all), so the inverse Hessian alone, which treats
    them as independent, is too narrow for more than two seats (95% nominal intervals
    covered 88% of true ratings with four seats, 85% with six, in simulation).  The
    pairwise fit is a composite likelihood, and its covariance is the sandwich
    cov = H⁻¹·J·H⁻¹ (Godambe information): H = Σ w·p(1-p)·(e_a - e_b)(e_a - e_b)ᵀ + alpha·I
    is the Hessian of the objective at the optimum, written out here, and J = Σ g·gᵀ sums,
    over matches, the outer product of each match's own gradient g (so comparisons of one
    match count together).  For two-seat matches J and H - alpha·I agree in expectation;
    with a handful of matches J can be near zero by chance (two draws between equals), so
    the variance is never taken below the inverse Hessian's, which is the variance if the
    comparisons were independent.
    The rating is θ minus the mean θ, so its variance is that of the centred θ, P·cov·P with
    P = I - 11ᵀ/n; without the projection the prior's 1/alpha variance along the all-ones
    direction (a shift of every θ, which the ratings cannot see) would swamp the interval.
    """
    if not alpha > 0:
        raise ValueError("alpha must be positive: without it an unbeaten bot has no finite fit")
    matches = matches if isinstance(matches, Sequence) else list(matches)
    everyone, tables = _tables(matches)
    half_wins, games = _comparisons(tables, len(everyone))
    # a bot that only ever met itself has no comparison: it is left out of the fit
    kept = np.flatnonzero(games)
    if not len(kept):
        return {}
    n = len(kept)
    theta = _fit_theta(half_wins[np.ix_(kept, kept)] / 2.0, alpha)
    theta = theta - theta.mean()

    p = _win_chance(theta)
    meetings = (half_wins + half_wins.T)[np.ix_(kept, kept)] / 2.0
    curvature = meetings * p * (1.0 - p)
    hessian = -curvature
    hessian[np.diag_indices(n)] += curvature.sum(axis=1) + alpha
    inverse = np.linalg.inv(hessian)  # positive definite: alpha·I is part of it
    everyone_theta = np.zeros(len(everyone))
    everyone_theta[kept] = theta
    scores = _score_products(tables, len(everyone), everyone_theta)[np.ix_(kept, kept)]
    # only the diagonals of P·H⁻¹·J·H⁻¹·P and P·H⁻¹·P are needed: with A = P·H⁻¹ (H⁻¹ and
    # P symmetric) they are the row sums of (A·J)∘A and the diagonal of A·P
    centred = inverse - inverse.mean(axis=0)
    sandwich = np.einsum("ij,ij->i", centred @ scores, centred)
    naive = np.diag(centred) - centred.mean(axis=1)
    se = np.sqrt(np.clip(np.maximum(sandwich, naive), 0.0, None))

    to_elo = scale / math.log(10.0)
    fitted = {}
    for i, row in enumerate(kept):
        rating = center + to_elo * float(theta[i])
        half_width = Z_95 * to_elo * float(se[i])
        fitted[everyone[row]] = FittedRating(
            rating, rating - half_width, rating + half_width, int(games[row])
        )
    return fitted


# -- how far a fit can be read ----------------------------------------------------------------
# A fit is provisional, not yet a rating to compare, below this many rated matches or while
# its 95% interval is wider than this many points.  A bot with one or two matches has an
# interval thousands of points wide, its low end below zero; one with ten matches all lost
# (or all won) is held near the others only by the prior, its interval still over 2,000
# points.  The width allowed is generous because every interval also carries the
# uncertainty of the common centre (the mean rating), which on a small leaderboard with a
# newcomer widens the intervals of well-measured bots to several hundred points.
PROVISIONAL_MATCHES = 10
PROVISIONAL_WIDTH = 1000.0


def is_provisional(matches: int | None, low: float | None, high: float | None) -> bool:
    """Whether a fit of `matches` rated matches, 95% interval `low`..`high`, is provisional
    (None: no fit yet, which is provisional too)."""
    if matches is None or low is None or high is None:
        return True
    return matches < PROVISIONAL_MATCHES or high - low > PROVISIONAL_WIDTH


def tied(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    """Whether two fitted ratings (rating, low, high) are not told apart at 95%: their
    difference is within 1.96 standard errors of the difference, sqrt(ha² + hb²) with h
    each interval's half width (the two fits taken as independent).  Sharper than asking
    whether the intervals overlap: two intervals of one width may overlap by almost 30% of
    it and the ratings still differ."""
    half_a, half_b = (a[2] - a[1]) / 2.0, (b[2] - b[1]) / 2.0
    return abs(a[0] - b[0]) < math.hypot(half_a, half_b)


def tie_groups(fits: Sequence[tuple[float, float, float] | None]) -> list[int | None]:
    """The tie group of each row of a leaderboard, in its order: `fits` holds each row's
    fitted (rating, low, high), None for a provisional row.

    Walking down the rows, a row joins the group of the row above when it is tied
    (`tied`) with that group's first row, else it starts a group of its own; a
    provisional row belongs to none and ends the group above it.  Groups are numbered
    1, 2, ... from the top, counting only those of two rows or more; a row alone is None.
    Comparing with the group's first row, not the row just above, keeps a chain of small
    steps from tying the top of a long leaderboard with its bottom.
    """
    starts: list[int | None] = []  # the row index of each row's group's first row
    first: tuple[float, float, float] | None = None  # the fit of that first row
    for i, fit in enumerate(fits):
        if fit is None:
            starts.append(None)
            first = None
        elif first is not None and tied(first, fit):
            starts.append(starts[-1])  # first is set: the row above is in a group
        else:
            starts.append(i)
            first = fit
    sizes: dict[int, int] = {}
    for start in starts:
        if start is not None:
            sizes[start] = sizes.get(start, 0) + 1
    numbers: dict[int, int] = {}
    for start in starts:
        if start is not None and sizes[start] > 1 and start not in numbers:
            numbers[start] = len(numbers) + 1
    return [None if start is None else numbers.get(start) for start in starts]
