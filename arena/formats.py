"""Tournament formats: pure functions from bots and parameters to tables and seeds.

No database, web or task queue: ``arena.services`` writes what these return.  Every
schedule is deterministic from its seed (one ``random.Random(seed)``), built round by
round (a tournament stopped half way has played every bot about equally), and reports
what it achieved (``balance``).

- ``round_robin``: every combination of ``seats`` bots, ``games_per_pairing`` times, the
  r-th game of a combination with its seating rotated by r.
- ``balanced``: every bot plays ``matches_per_bot`` matches (a few one more when the seats
  do not divide the total), each seat equally often (±1), every pair of bots meeting as
  evenly as the numbers allow.
- ``gauntlet``: each challenger against the field, never two challengers at a table.

``deal="duplicate"``: each table of the base schedule becomes ``seats`` matches with one
seed, the r-th with the seating rotated by r: every bot at the table holds every hand.

The gauntlet's stop rule is a sequential probability ratio test (``Sprt``), the
generalised (normal approximation) form engine testing uses, on any score in [0, 1].
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

MAX_SEED = 2**53 - 1  # a seed survives a trip through JSON in a browser
DEALS = ("independent", "duplicate")
MIN_SEATS, MAX_SEATS = 2, 8
MAX_ATTEMPTS = 8  # builds of a small balanced schedule, the most even one kept
ATTEMPT_TABLES = 1500  # ... as long as all the builds together stay about this many tables


class FormatError(ValueError):
    """Parameters no schedule can satisfy; the message is for the organiser."""


@dataclass(frozen=True)
class Table:
    seats: tuple[int, ...]  # bot id in each seat
    seed: int  # the deal
    deal: int | None  # duplicate deal group (None: an independent deal)
    round: int  # scheduling round, 0-based


@dataclass(frozen=True)
class Balance:
    """What a schedule achieved."""

    matches_per_bot: tuple[int, int]  # (fewest, most)
    seat_spread: int  # the most a bot's count in one seat exceeds its count in another
    pair_meetings: tuple[int, int]  # (fewest, most) over the pairs that may meet

    def to_json(self) -> dict[str, object]:
        return {
            "matches_per_bot": list(self.matches_per_bot),
            "seat_spread": self.seat_spread,
            "pair_meetings": list(self.pair_meetings),
        }


# -- checks -----------------------------------------------------------------------------
def _check_common(bot_ids: Sequence[int], seats: int, deal: str) -> None:
    if deal not in DEALS:
        raise FormatError(f"deal must be one of {', '.join(DEALS)}, not {deal!r}")
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise FormatError(f"seats_per_match must be {MIN_SEATS} to {MAX_SEATS}")
    if len(set(bot_ids)) != len(bot_ids):
        raise FormatError("a bot is listed more than once")


def _base_count(count: int, name: str, seats: int, deal: str) -> int:
    """A per-bot count of matches as the base schedule counts it (duplicate: deals)."""
    if count < 1:
        raise FormatError(f"{name} must be at least 1")
    if deal == "duplicate":
        if count % seats:
            raise FormatError(
                f"with duplicate deals {name} must be a multiple of seats_per_match "
                f"({seats}): each deal is played once per rotation of its table"
            )
        return count // seats
    return count


# -- schedules ---------------------------------------------------------------------------
def _deal(base: list[tuple[tuple[int, ...], int]], seats: int, seed: int, deal: str) -> list[Table]:
    """Seeds for the base tables (in order); duplicate deals rotate each base table."""
    rng = random.Random(seed)
    if deal == "independent":
        return [Table(s, rng.randint(0, MAX_SEED), None, r) for s, r in base]
    tables = []
    for number, (s, r) in enumerate(base):
        shared = rng.randint(0, MAX_SEED)
        tables.extend(Table(s[k:] + s[:k], shared, number, r) for k in range(seats))
    return tables


def round_robin(
    bot_ids: Iterable[int],
    seats_per_match: int,
    games_per_pairing: int,
    *,
    seed: int,
    deal: str = "independent",
) -> list[Table]:
    """Every combination of ``seats_per_match`` bots ``games_per_pairing`` times, round by
    round (the r-th game of a combination rotated by r: each bot sits in each seat
    equally often); with duplicate deals, ``games_per_pairing / seats`` deals each."""
    ids = list(bot_ids)
    _check_common(ids, seats_per_match, deal)
    bots = sorted(ids)
    if len(bots) < seats_per_match:
        raise FormatError(f"{seats_per_match} seats per match need at least {seats_per_match} bots")
    if games_per_pairing < 1 or games_per_pairing % seats_per_match:
        raise FormatError(
            f"games_per_pairing must be a positive multiple of seats_per_match "
            f"({seats_per_match}) so that every bot plays every seat equally often"
        )
    combos = list(itertools.combinations(bots, seats_per_match))
    if deal == "duplicate":
        games = games_per_pairing // seats_per_match
        base = [(combo, r) for r in range(games) for combo in combos]
        return _deal(base, seats_per_match, seed, deal)
    base = [
        (combo[r % seats_per_match :] + combo[: r % seats_per_match], r)
        for r in range(games_per_pairing)
        for combo in combos
    ]
    return _deal(base, seats_per_match, seed, deal)


class _Planner:
    """Tables one at a time, keeping the counts that make them even: matches and seat
    counts per bot, meetings per pair."""

    def __init__(self, n: int, seats: int, rng: random.Random):
        self.seats = seats
        self.rng = rng
        self.played = np.zeros(n, dtype=np.int64)
        self.in_seat = np.zeros((n, seats), dtype=np.int64)
        self.met = np.zeros((n, n), dtype=np.int64)
        self.noise = np.random.default_rng(rng.getrandbits(64))

    def table(self) -> list[int]:
        """The next table's bots: those who have played least must play (a bot never
        gets two matches ahead of another); among the candidates, the table whose bots
        have met each other least, built greedily from a few starting bots."""
        level = int(self.played.min())
        lowest = np.flatnonzero(self.played == level)
        if len(lowest) >= self.seats:
            forced, pool = [], lowest
        else:
            forced, pool = [int(b) for b in lowest], np.flatnonzero(self.played == level + 1)
        if forced:
            starts = [forced]
        else:
            order = pool[np.argsort(self.noise.random(len(pool)))]
            tries = 8 if len(order) <= 64 else 1  # more starts where choices are few
            starts = [[int(b)] for b in order[:tries]]
        best, best_cost = None, None
        for first in starts:
            table = self._fill(first, pool)
            rows = np.array(table)
            cost = float(self.met[np.ix_(rows, rows)].sum())
            if best_cost is None or cost < best_cost:
                best, best_cost = table, cost
        return best

    def _fill(self, first: list[int], pool: np.ndarray) -> list[int]:
        table = list(first)
        seated = np.zeros(len(self.played), dtype=bool)
        seated[table] = True
        candidates = pool[~seated[pool]]
        met = self.met[table].sum(axis=0) + self.noise.random(len(self.played)) * 0.5
        while len(table) < self.seats:
            pick = int(candidates[int(np.argmin(met[candidates]))])
            table.append(pick)
            met += self.met[pick]
            candidates = candidates[candidates != pick]
        return table

    def seat(self, table: list[int]) -> tuple[int, ...]:
        """Seats by a minimum-cost assignment: a bot goes where it has sat least, a seat
        above its fewest costs much more than one at it (seat spread stays at 1)."""
        counts = self.in_seat[table]
        excess = counts - counts.min(axis=1, keepdims=True)
        cost = excess * excess * 16 + counts + self.noise.random(counts.shape) * 0.1
        rows, cols = linear_sum_assignment(cost)
        seating = [0] * self.seats
        for row, col in zip(rows, cols, strict=True):
            seating[col] = table[row]
        return tuple(seating)

    def add(self, seating: tuple[int, ...]) -> None:
        idx = list(seating)
        self.played[idx] += 1
        self.in_seat[idx, list(range(self.seats))] += 1
        self.met[np.ix_(idx, idx)] += 1
        self.met[idx, idx] -= 1


def _even_seats(
    base: list[tuple[tuple[int, ...], int]], n: int, k: int
) -> list[tuple[tuple[int, ...], int]]:
    """Seats made equitable: every bot in every seat equally often, ±1 (de Werra's
    equitable edge colouring of the bipartite graph of tables and bots).

    For two seats a and b, each table is an edge between its bot at a and its bot at b;
    giving every edge a direction (tail: seat a) along Euler circuits makes every bot's
    counts at a and b differ by at most one.  Doing so for a pair whose counts differ by
    two or more lowers the sum of squared counts, so repeating it over the pairs ends,
    with every bot's spread at most one."""
    tables = [list(seating) for seating, _ in base]
    in_seat = np.zeros((n, k), dtype=np.int64)
    for seating in tables:
        in_seat[seating, list(range(k))] += 1
    while True:
        spread = in_seat.max(axis=1) - in_seat.min(axis=1)
        uneven = np.flatnonzero(spread >= 2)
        if not len(uneven):
            break
        bot = int(uneven[0])
        a, b = int(np.argmax(in_seat[bot])), int(np.argmin(in_seat[bot]))
        edges = [(t, seating[a], seating[b]) for t, seating in enumerate(tables)]
        for t, tail, head in _balanced_orientation(edges, n):
            tables[t][a], tables[t][b] = tail, head
        in_seat[:, a] = 0
        in_seat[:, b] = 0
        for seating in tables:
            in_seat[seating[a], a] += 1
            in_seat[seating[b], b] += 1
    return [(tuple(seating), r) for seating, (_, r) in zip(tables, base, strict=True)]


def _balanced_orientation(edges: list[tuple[int, int, int]], n: int) -> list[tuple[int, int, int]]:
    """Each edge (id, u, v) given a direction (id, tail, head) so that every vertex's
    tails and heads differ by at most one: odd vertices are joined to a dummy vertex,
    then every edge is walked along Euler circuits (Hierholzer)."""
    dummy = n
    ends = [(u, v) for _, u, v in edges]
    degree = np.zeros(n + 1, dtype=np.int64)
    for u, v in ends:
        degree[u] += 1
        degree[v] += 1
    ends += [(int(x), dummy) for x in np.flatnonzero(degree[:n] % 2)]
    incident: list[list[int]] = [[] for _ in range(n + 1)]
    for e, (u, v) in enumerate(ends):
        incident[u].append(e)
        incident[v].append(e)
    used = [False] * len(ends)
    position = [0] * (n + 1)
    direction: dict[int, tuple[int, int]] = {}
    for start in range(n + 1):
        stack = [(start, -1)]
        while stack:
            vertex, _ = stack[-1]
            edges_here = incident[vertex]
            while position[vertex] < len(edges_here) and used[edges_here[position[vertex]]]:
                position[vertex] += 1
            if position[vertex] == len(edges_here):
                stack.pop()
                continue
            e = edges_here[position[vertex]]
            used[e] = True
            u, v = ends[e]
            other = v if u == vertex else u
            direction[e] = (vertex, other)
            stack.append((other, e))
    return [(t, *direction[e]) for e, (t, _, _) in enumerate(edges)]


def balanced(
    bot_ids: Iterable[int],
    seats_per_match: int,
    matches_per_bot: int,
    *,
    seed: int,
    deal: str = "independent",
) -> list[Table]:
    """Every bot ``matches_per_bot`` matches: ``ceil(n * m / seats)`` tables, the seats
    left over going to the bots that have played least (they play ``m + 1``); each seat
    equally often (±1); every pair of bots meeting as evenly as the numbers allow.  Round
    by round: in each round a bot plays at most once, those who have played least first."""
    ids = list(bot_ids)
    _check_common(ids, seats_per_match, deal)
    if len(ids) < seats_per_match:
        raise FormatError(f"{seats_per_match} seats per match need at least {seats_per_match} bots")
    per_bot = _base_count(matches_per_bot, "matches_per_bot", seats_per_match, deal)
    bots = sorted(ids)
    n, k = len(bots), seats_per_match
    total = math.ceil(n * per_bot / k)
    rng = random.Random(f"balanced:{seed}")
    # the greedy tables depend on its random tie-breaks: small schedules are built a
    # few times and the one whose pairs meet most evenly is kept
    attempts = max(1, min(MAX_ATTEMPTS, ATTEMPT_TABLES // total))
    best, best_key = [], None
    for _ in range(attempts):
        plan = _Planner(n, k, rng)
        base: list[tuple[tuple[int, ...], int]] = []
        for _ in range(total):
            round_number = int(plan.played.min())
            table = plan.table()
            seating = tuple(table) if deal == "duplicate" else plan.seat(table)
            plan.add(seating)
            base.append((seating, round_number))
        pairs = plan.met[np.triu_indices(n, 1)]
        key = (int(pairs.max() - pairs.min()), int((pairs * pairs).sum()))
        if best_key is None or key < best_key:
            best, best_key = base, key
    base = best
    if deal == "independent":
        base = _even_seats(base, n, k)
    named = [(tuple(bots[i] for i in seating), r) for seating, r in base]
    return _deal(named, k, seed, deal)


def gauntlet(
    challenger_ids: Iterable[int],
    field_ids: Iterable[int],
    seats_per_match: int,
    matches_per_bot: int,
    *,
    seed: int,
    deal: str = "independent",
) -> list[Table]:
    """Each challenger ``matches_per_bot`` matches against ``seats - 1`` bots of the
    field (never two challengers at one table), its seats balanced, the field used
    evenly against it; round i holds every challenger's i-th table, so stopping one
    challenger early does not hold the others back."""
    challengers, field = list(challenger_ids), list(field_ids)
    _check_common(challengers + field, seats_per_match, deal)
    if not challengers:
        raise FormatError("a gauntlet needs at least one challenger")
    if len(field) < seats_per_match - 1:
        raise FormatError(
            f"the field (the bots that are not challengers) needs at least "
            f"{seats_per_match - 1} bots for {seats_per_match} seats per match"
        )
    per_bot = _base_count(matches_per_bot, "matches_per_bot", seats_per_match, deal)
    k = seats_per_match
    everyone = sorted(challengers) + sorted(field)
    index = {bot: i for i, bot in enumerate(everyone)}
    rng = random.Random(f"gauntlet:{seed}")
    plan = _Planner(len(everyone), k, rng)
    field_rows = np.array([index[b] for b in sorted(field)], dtype=np.int64)
    faced = {c: np.zeros(len(field_rows), dtype=np.int64) for c in sorted(challengers)}
    base: list[tuple[tuple[int, ...], int]] = []
    for round_number in range(per_bot):
        for challenger in sorted(challengers):
            # the field bots this challenger has faced least, then least used overall
            counts = faced[challenger]
            order = np.lexsort(
                (plan.noise.random(len(field_rows)), plan.played[field_rows], counts)
            )
            picked = field_rows[order[: k - 1]]
            faced[challenger][order[: k - 1]] += 1
            seating = plan.seat([index[challenger], *map(int, picked)])
            plan.add(seating)
            base.append((seating, round_number))
    named = [(tuple(everyone[i] for i in seating), r) for seating, r in base]
    return _deal(named, k, seed, deal)


def match_count(
    format: str,
    n_bots: int,
    seats_per_match: int,
    *,
    games_per_pairing: int | None = None,
    matches_per_bot: int | None = None,
    n_challengers: int = 0,
    deal: str = "independent",
) -> int:
    """How many matches a format will schedule, without building it (``n_bots`` is the
    field of a gauntlet).  Checks the parameters the way the builders do."""
    if deal not in DEALS:
        raise FormatError(f"deal must be one of {', '.join(DEALS)}, not {deal!r}")
    if format == "round_robin":
        if games_per_pairing is None or games_per_pairing < 1:
            raise FormatError("games_per_pairing must be at least 1")
        if games_per_pairing % seats_per_match:
            raise FormatError(
                f"games_per_pairing must be a positive multiple of seats_per_match "
                f"({seats_per_match}) so that every bot plays every seat equally often"
            )
        return math.comb(n_bots, seats_per_match) * games_per_pairing
    if matches_per_bot is None:
        raise FormatError(f"the {format} format needs matches_per_bot")
    base = _base_count(matches_per_bot, "matches_per_bot", seats_per_match, deal)
    rotations = seats_per_match if deal == "duplicate" else 1
    if format == "balanced":
        return math.ceil(n_bots * base / seats_per_match) * rotations
    if format == "gauntlet":
        return n_challengers * base * rotations
    raise FormatError(f"unknown format {format!r}")


def balance(
    tables: Sequence[Table],
    bot_ids: Iterable[int],
    seats_per_match: int,
    *,
    challenger_ids: Iterable[int] = (),
) -> Balance:
    """Matches per bot, seat spread and pair meetings of a schedule.  For a gauntlet the
    first two are its challengers' and the pairs are its challenger-field pairs."""
    bots = sorted(set(bot_ids))
    challengers = set(challenger_ids)
    index = {bot: i for i, bot in enumerate(bots)}
    n = len(bots)
    in_seat = np.zeros((n, seats_per_match), dtype=np.int64)
    met = np.zeros((n, n), dtype=np.int64)
    for table in tables:
        rows = [index[b] for b in table.seats]
        in_seat[rows, list(range(len(rows)))] += 1
        met[np.ix_(rows, rows)] += 1
    # a gauntlet promises its challengers their matches and seats; the field is used
    # as evenly as the challengers' matches allow (its pairs below)
    rows = [index[b] for b in bots if b in challengers] if challengers else list(range(n))
    played = in_seat[rows].sum(axis=1)
    spread = int((in_seat[rows].max(axis=1) - in_seat[rows].min(axis=1)).max()) if n else 0
    if challengers:
        c = [index[b] for b in bots if b in challengers]
        f = [index[b] for b in bots if b not in challengers]
        pairs = met[np.ix_(c, f)].ravel()
    else:
        pairs = met[np.triu_indices(n, 1)]
    return Balance(
        (int(played.min()), int(played.max())) if n else (0, 0),
        spread,
        (int(pairs.min()), int(pairs.max())) if len(pairs) else (0, 0),
    )


# -- the stop rule -----------------------------------------------------------------------
@dataclass(frozen=True)
class Sprt:
    """H0: the challenger is ``elo0`` better than the field (or less); H1: ``elo1`` or
    more; alpha = P(accept H1 | H0), beta = P(accept H0 | H1)."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def bounds(self) -> tuple[float, float]:
        if not (0 < self.alpha <= 0.5 and 0 < self.beta <= 0.5):
            raise FormatError("alpha and beta must be above 0 and at most 0.5")
        if not self.elo1 > self.elo0:
            raise FormatError("elo1 must be greater than elo0")
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)


def expected_score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


# The observed variance is pulled towards that of a fair coin (the largest a score in
# [0, 1] can have) by this many pseudo-observations: two wins in a row have no variance,
# yet they are no proof.
PRIOR_OBSERVATIONS = 4
PRIOR_VARIANCE = 0.25


def sprt_llr(n: int, total: float, total_sq: float, sprt: Sprt) -> float:
    """The generalised log-likelihood ratio of H1 against H0 after ``n`` scores in [0, 1]
    with this sum and sum of squares: a normal approximation with the observed variance,
    ``n (s1 - s0) (2 mean - s0 - s1) / (2 var)`` (s0, s1 the scores expected at elo0 and
    elo1).  The variance is shrunk towards 1/4 by a few pseudo-observations, which only
    matters while the record is short; fewer than two scores say nothing."""
    if n < 2:
        return 0.0
    mean = total / n
    observed = max(total_sq / n - mean * mean, 0.0)
    var = (n * observed + PRIOR_OBSERVATIONS * PRIOR_VARIANCE) / (n + PRIOR_OBSERVATIONS)
    s0, s1 = expected_score(sprt.elo0), expected_score(sprt.elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def sprt_decision(llr: float, sprt: Sprt) -> str | None:
    """ "H1" (the challenger passed), "H0" (it failed) or None (play on)."""
    lower, upper = sprt.bounds()
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None
