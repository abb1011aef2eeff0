"""The balanced schedule's optimiser: bots into tables round by round so that every pair
meets about equally often and no bot plays twice in a round, then each bot's seats
evened out (``arena.competition.formats`` builds the ``balanced`` and ``gauntlet``
schedules with it).  Pure, deterministic from the ``random.Random`` it is given.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

ROUND_ATTEMPTS = 4  # builds of a round that repeats meetings, the cheapest kept
POLISH_SWEEPS = 4  # passes of the schedule-wide swap search, when one is needed
POLISH_WORK = 250_000  # ... and only while its cost, bots squared times matches per bot, is below


def _greedy_round(
    cost: np.ndarray, n_tables: int, k: int, n_must: int, ties: np.ndarray
) -> np.ndarray:
    """Tables for one round's candidates (``cost``: what each pair meeting again costs):
    each table starts from the first unseated candidate and adds the one that costs
    least with those already there.  The first ``n_must`` candidates must play; the
    others left over sit the round out (table ``n_tables``).  Equal costs go by
    ``ties`` (distinct, below 1), not by position: the bots who must play would
    otherwise all start at one table, round after round."""
    r = len(cost)
    table = np.full(r, n_tables)
    seated = np.zeros(r)  # inf once seated: never the cheapest again
    must_left, first = n_must, 0
    for t in range(n_tables):
        while table[first] != n_tables:
            first += 1
        pick = first
        added = ties + seated
        for step in range(k):
            table[pick], seated[pick], added[pick] = t, np.inf, np.inf
            must_left -= pick < n_must
            if step == k - 1:
                break
            added += cost[pick]
            if must_left >= (n_tables - t) * k - 1 - step:
                pick = int(np.argmin(added[:n_must]))  # the seats left are theirs
            else:
                pick = int(np.argmin(added))
    return table


def _improve_round(cost: np.ndarray, table: np.ndarray, n_tables: int, n_must: int) -> float:
    """Swap two candidates (different tables, or a table and the bench) while a swap
    lowers the round's cost; only candidates that cost something are moved, so a round
    of strangers costs nothing to check.  Changes ``table`` in place; returns what the
    round still costs (the meetings it repeats, weighted as ``cost`` says).

    Each step takes the first best swap in (candidate, partner) order.  Costs are whole
    numbers, so the sums are exact in any order and in single precision: what decides a
    schedule is which swap is best, and that does not depend on how it is computed (the
    tests pin schedules built before this was made faster)."""
    r = len(table)
    bench = n_tables
    order = np.argsort(table, kind="stable")  # table by table, the bench last
    seated = order[: int((table < bench).sum())]
    k = len(seated) // n_tables
    groups = seated.reshape(n_tables, k).copy()  # who sits at each table, kept up to date
    if not cost[groups[:, :, None], groups[:, None, :]].any():
        return 0.0  # strangers at every table: the usual case among many bots
    cost32 = np.asarray(cost, dtype=np.float32)  # no copy: balanced_groups gives float32
    # at[t, i]: what i costs at table t (as it is now); the bench (row n_tables) costs nothing
    at = np.zeros((n_tables + 1, r), dtype=np.float32)
    at[:bench] = cost32[groups].sum(axis=1)
    everyone = np.arange(r)
    must = everyone < n_must

    def joining(columns: np.ndarray) -> np.ndarray:
        """For each bot x (row) and each of ``columns`` c: what x costs at c's table, less
        what meeting c costs (once where c is on the bench: x has no one to leave behind
        there; twice at a table, where c leaves x's table for it)."""
        weight = np.where(table[columns] == bench, np.float32(1), np.float32(2))
        return at[table[columns]].T - cost32[:, columns] * weight

    join = np.ascontiguousarray(joining(everyone))  # kept up to date, column by column
    for _ in range(4 * r + 16):  # each swap lowers an integer cost: this is a backstop
        own = at[table, everyone]
        rows = np.flatnonzero(own > 0)  # never a benched one: the bench costs nothing
        if not len(rows):
            return 0.0
        benched = table == bench
        tables = table[rows]
        # i goes to j's table without j, and j to i's table without i
        delta = join[rows]
        delta += at[tables]
        delta -= own[rows, None]
        delta -= own[None, :]
        delta[np.arange(len(rows))[:, None], groups[tables]] = np.inf  # the same table
        if benched.any():
            held = must[rows]
            if held.any():  # who must play cannot sit out
                delta[np.ix_(held, benched)] = np.inf
        best = int(np.argmin(delta))
        a, j = divmod(best, r)
        if delta[a, j] >= -0.5:
            break
        i = int(rows[a])
        ti, tj = table[i], table[j]
        moved = cost32[j] - cost32[i]  # cost is symmetric: its rows are its columns
        at[ti] += moved
        groups[ti][groups[ti] == i] = j
        changed = [groups[ti], [i, j]]
        if tj != bench:
            at[tj] -= moved
            groups[tj][groups[tj] == j] = i
            changed.append(groups[tj])
        table[i], table[j] = tj, ti
        columns = np.concatenate(changed)  # the bots of the two tables: their columns moved
        join[:, columns] = joining(columns)
    return float(at[table, everyone].sum()) / 2  # each repeat counted from both ends


def _meetings_target_met(met: np.ndarray) -> bool:
    """Strangers where the mean is at most one meeting, else within two of each other."""
    pairs = met[np.triu_indices(len(met), 1)]
    low, high = int(pairs.min()), int(pairs.max())
    return high <= 1 if pairs.mean() <= 1 else high - low <= 2


def _polish(groups: list[list[int]], rounds: list[int], met: np.ndarray) -> None:
    """Schedule-wide: swap two bots at different tables of one round while that makes
    pair meetings more even (sum of meetings to the fourth power: the extremes cost
    most).  Rounds and matches per bot stay as they are; seats come later.  In place."""
    by_round: dict[int, list[int]] = {}
    for t, r in enumerate(rounds):
        by_round.setdefault(r, []).append(t)
    k = len(groups[0])
    for _ in range(POLISH_SWEEPS):
        swapped = False
        for tables in by_round.values():
            if len(tables) < 2:
                continue
            owner = np.repeat(np.arange(len(tables)), k)
            while True:
                members = np.array([b for t in tables for b in groups[t]])
                m = met[np.ix_(members, members)].astype(np.float64)
                up = (m + 1) ** 4 - m**4  # one meeting more
                down = np.where(m > 0, (m - 1) ** 4 - m**4, 0.0)  # one fewer
                np.fill_diagonal(up, 0.0)
                np.fill_diagonal(down, 0.0)
                one_hot = np.zeros((len(members), len(tables)))
                one_hot[np.arange(len(members)), owner] = 1.0
                join, leave = up @ one_hot, down @ one_hot
                gone = leave[np.arange(len(members)), owner]
                moving = join[:, owner] - up  # i joins j's table, which j leaves
                delta = moving + moving.T + gone[:, None] + gone[None, :]
                delta[owner[:, None] == owner[None, :]] = np.inf
                best = int(np.argmin(delta))
                i, j = divmod(best, len(members))
                if delta[i, j] >= -0.5:
                    break
                ti, tj = tables[owner[i]], tables[owner[j]]
                x, y = int(members[i]), int(members[j])
                rest_i = [b for b in groups[ti] if b != x]
                rest_j = [b for b in groups[tj] if b != y]
                for bot, old, new in ((x, rest_i, rest_j), (y, rest_j, rest_i)):
                    met[bot, old] -= 1
                    met[old, bot] -= 1
                    met[bot, new] += 1
                    met[new, bot] += 1
                groups[ti][groups[ti].index(x)] = y
                groups[tj][groups[tj].index(y)] = x
                swapped = True
        if not swapped:
            return


def balanced_groups(
    n: int, k: int, per_bot: int, rng: random.Random
) -> tuple[list[list[int]], list[int]]:
    """Who plays together, round by round: ``(bots, round)`` per table, unseated.

    A round seats those who have played least (ties at random), so matches per bot never
    differ by more than one at any point; its tables are chosen to repeat as few
    meetings as possible (greedy, then improving swaps, the bench included)."""
    total = math.ceil(n * per_bot / k)
    played = np.zeros(n, dtype=np.int64)
    met = np.zeros((n, n), dtype=np.int64)
    groups: list[list[int]] = []
    rounds: list[int] = []
    round_number = 0
    while len(groups) < total:
        n_tables = min(n // k, total - len(groups))
        shuffle = np.array(rng.sample(range(n), n))
        order = np.lexsort((shuffle, played))
        level = played[order[n_tables * k - 1]]
        must = order[played[order] < level]
        members = np.concatenate([must, order[played[order] == level]])
        # whole numbers: exact in single precision, half the memory to sweep
        cost = met[np.ix_(members, members)].astype(np.float32)
        best, best_cost = None, math.inf
        for _ in range(ROUND_ATTEMPTS):  # a round that repeats meetings is tried again
            ties = np.array(rng.sample(range(len(members)), len(members))) / len(members)
            table = _greedy_round(cost, n_tables, k, len(must), ties)
            repeated = _improve_round(cost, table, n_tables, len(must))
            if repeated < best_cost:
                best, best_cost = table, repeated
            if not repeated:
                break
        table = best
        for t in range(n_tables):
            bots = members[table == t]
            played[bots] += 1
            met[np.ix_(bots, bots)] += 1
            met[bots, bots] -= 1
            groups.append([int(b) for b in bots])
            rounds.append(round_number)
        round_number += 1
    if total > 1 and n * n * per_bot <= POLISH_WORK and not _meetings_target_met(met):
        _polish(groups, rounds, met)
    return groups, rounds


def seat(bots: Sequence[int], in_seat: np.ndarray, rng: random.Random) -> list[int]:
    """A seating (bot per seat) giving each bot a seat it has sat in least, found by
    augmenting paths (Kuhn); a bot no such seating can serve takes a free seat, and
    ``_even_seats`` settles it later."""
    k = len(bots)
    counts = in_seat[list(bots)].tolist()
    seats = list(range(k))
    rng.shuffle(seats)
    wanted = [[s for s in seats if row[s] == min(row)] for row in counts]
    holder: list[int] = [-1] * k

    def place(i: int, seen: set[int]) -> bool:
        for s in wanted[i]:
            if s not in seen:
                seen.add(s)
                if holder[s] < 0 or place(holder[s], seen):
                    holder[s] = i
                    return True
        return False

    for i in sorted(range(k), key=lambda i: len(wanted[i])):
        if not place(i, set()):
            empty = [s for s in seats if holder[s] < 0]
            holder[min(empty, key=lambda s: counts[i][s])] = i
    return [bots[i] for i in holder]


def _balanced_orientation(ends: list[tuple[int, int]], n: int) -> list[bool]:
    """Each edge (u, v) of a multigraph on ``n`` vertices given a direction (True: u to
    v) so that every vertex's out and in degrees differ by at most one: odd vertices
    are joined to a dummy, then every edge is walked along closed trails (Hierholzer)."""
    degree = [0] * n
    for u, v in ends:
        degree[u] += 1
        degree[v] += 1
    edges = list(ends) + [(x, n) for x in range(n) if degree[x] % 2]
    incident: list[list[int]] = [[] for _ in range(n + 1)]
    for e, (u, v) in enumerate(edges):
        incident[u].append(e)
        incident[v].append(e)
    used = [False] * len(edges)
    forward = [False] * len(edges)
    position = [0] * (n + 1)
    for start in range(n + 1):
        stack = [start]
        while stack:
            vertex = stack[-1]
            here = incident[vertex]
            while position[vertex] < len(here) and used[here[position[vertex]]]:
                position[vertex] += 1
            if position[vertex] == len(here):
                stack.pop()
                continue
            e = here[position[vertex]]
            used[e] = True
            u, v = edges[e]
            forward[e] = u == vertex
            stack.append(v if u == vertex else u)
    return forward[: len(ends)]


def _trade_seats(
    x: int,
    a: int,
    b: int,
    seatings: list[list[int]],
    in_seat: list[list[int]],
    tables_of: list[list[int]],
) -> bool:
    """Move ``x`` from seat ``a`` to seat ``b`` at one of its tables along a chain of
    table mates (found breadth first), each taking the ``a`` seat of the one before it,
    ending at a bot for whom one more ``a`` and one fewer ``b`` evens its counts; the
    bots in between keep their counts.  False when no chain exists."""
    parent: dict[int, tuple[int, int]] = {x: (-1, -1)}
    queue = [x]
    for u in queue:
        for t in tables_of[u]:
            seating = seatings[t]
            v = seating[b]
            if seating[a] != u or v in parent:
                continue
            parent[v] = (u, t)
            counts = in_seat[v]
            if counts[a] == min(counts) < counts[b] == max(counts):
                in_seat[v][a] += 1
                in_seat[v][b] -= 1
                in_seat[x][a] -= 1
                in_seat[x][b] += 1
                while v != x:
                    u, t = parent[v]
                    seatings[t][a], seatings[t][b] = v, u
                    v = u
                return True
            queue.append(v)
    return False


def even_seats(seatings: list[list[int]], n: int, k: int) -> None:
    """Make every bot's seat counts differ by at most one, where the greedy seating left
    a bot two apart: first by a chain of seat trades (``_trade_seats``); failing that by
    de Werra's equitable colouring step, in which the tables are edges (bot at a, bot at
    b) and a balanced orientation puts each edge's tail at a, leaving every bot's a and b
    counts within one.  Each step lowers the sum of squared counts, so the loop ends."""
    in_seat = [[0] * k for _ in range(n)]
    tables_of: list[list[int]] = [[] for _ in range(n)]
    for t, seating in enumerate(seatings):
        for s, bot in enumerate(seating):
            in_seat[bot][s] += 1
            tables_of[bot].append(t)
    uneven = [x for x in range(n) if max(in_seat[x]) - min(in_seat[x]) >= 2]
    while uneven:
        x = uneven.pop()
        counts = in_seat[x]
        if max(counts) - min(counts) < 2:
            continue
        a, b = counts.index(max(counts)), counts.index(min(counts))
        if not _trade_seats(x, a, b, seatings, in_seat, tables_of):
            forward = _balanced_orientation([(s[a], s[b]) for s in seatings], n)
            for seating, keep in zip(seatings, forward, strict=True):
                if not keep:
                    seating[a], seating[b] = seating[b], seating[a]
            for row in in_seat:
                row[a] = row[b] = 0
            for seating in seatings:
                in_seat[seating[a]][a] += 1
                in_seat[seating[b]][b] += 1
            uneven = [y for y in range(n) if max(in_seat[y]) - min(in_seat[y]) >= 2]
            continue
        uneven.append(x)  # it may still be two apart between other seats
