"""Tournament formats as pure functions: the balance every schedule promises, for 4 to 300
bots and 2 to 8 seats; duplicate deals giving every hand to every bot (checked through the
engines); the gauntlet's stop rule deciding at its error rates over simulated records."""

from __future__ import annotations

import collections
import itertools
import math
import random

import numpy as np
import pytest

from arena import formats
from arena.formats import FormatError, Sprt, Table, sprt_decision, sprt_llr
from arena.games import get_game

SIZES = [
    (bots, seats)
    for bots in (4, 5, 7, 12, 30, 61, 300)
    for seats in (2, 3, 4, 6, 8)
    if bots >= seats
]


def per_bot(tables: list[Table]) -> collections.Counter[int]:
    return collections.Counter(bot for table in tables for bot in table.seats)


def seat_counts(tables: list[Table]) -> dict[int, collections.Counter[int]]:
    counts: dict[int, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for table in tables:
        for seat, bot in enumerate(table.seats):
            counts[bot][seat] += 1
    return counts


def meetings(tables: list[Table]) -> collections.Counter[frozenset[int]]:
    return collections.Counter(
        frozenset(pair) for table in tables for pair in itertools.combinations(table.seats, 2)
    )


# -- round robin ------------------------------------------------------------------------
def test_round_robin_is_every_combination_rotated_with_seeds_drawn_in_order():
    """The schedule v1 wrote: the same seatings and seeds, so old tournaments replay."""
    tables = formats.round_robin([4, 1, 3, 2], 2, 4, seed=9)
    combos = list(itertools.combinations([1, 2, 3, 4], 2))
    expected = [c[r % 2 :] + c[: r % 2] for r in range(4) for c in combos]
    assert [t.seats for t in tables] == expected
    rng = random.Random(9)
    assert [t.seed for t in tables] == [rng.randint(0, formats.MAX_SEED) for _ in expected]
    assert {t.deal for t in tables} == {None}
    assert formats.match_count("round_robin", 4, 2, games_per_pairing=4) == len(tables)


def test_round_robin_refuses_a_pairing_count_that_unbalances_seats():
    with pytest.raises(FormatError, match="multiple of seats_per_match"):
        formats.round_robin([1, 2, 3], 3, 4, seed=1)


# -- balanced ---------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "seats"), SIZES)
def test_balanced_gives_matches_seats_and_opponents_evenly(n, seats):
    matches = 2 * seats + 1 if n <= 61 else 12  # not a multiple of the seats: an odd count
    bots = list(range(100, 100 + n))
    tables = formats.balanced(bots, seats, matches, seed=n * 10 + seats)
    assert len(tables) == math.ceil(n * matches / seats)
    assert formats.match_count("balanced", n, seats, matches_per_bot=matches) == len(tables)
    played = per_bot(tables)
    extra = len(tables) * seats - n * matches
    # every bot its matches; the seats left over go to bots that play one more
    assert set(played) == set(bots)
    assert sorted(played.values()) == [matches] * (n - extra) + [matches + 1] * extra
    for table in tables:
        assert len(set(table.seats)) == seats  # never a bot twice at a table
    for bot, counts in seat_counts(tables).items():
        full = [counts[s] for s in range(seats)]
        assert max(full) - min(full) <= 1, (bot, full)
    met = meetings(tables)
    pairs = [met[frozenset(p)] for p in itertools.combinations(bots, 2)]
    mean = matches * (seats - 1) / (n - 1)
    # as even as the greedy tables make them (measured: a spread of 0 to 2 at 2 to 4
    # seats, up to 4 at 6 to 8 seats among few bots)
    assert max(pairs) - min(pairs) <= (2 if seats <= 4 else 4), (min(pairs), max(pairs), mean)
    assert max(pairs) <= math.ceil(mean) + 2
    report = formats.balance(tables, bots, seats)
    assert report.matches_per_bot == (min(played.values()), max(played.values()))
    assert report.seat_spread <= 1
    assert report.pair_meetings == (min(pairs), max(pairs))


def test_balanced_plays_round_by_round():
    """Stopped after any round, no bot has played two matches more than another."""
    tables = formats.balanced(list(range(30)), 4, 20, seed=2)
    rounds = sorted({t.round for t in tables})
    assert rounds == list(range(len(rounds)))
    for last in rounds:
        played = per_bot([t for t in tables if t.round <= last])
        assert max(played.values()) - min(played.get(b, 0) for b in range(30)) <= 2


def test_balanced_is_deterministic_from_its_seed():
    one = formats.balanced(list(range(40)), 4, 8, seed=5)
    assert one == formats.balanced(list(range(40)), 4, 8, seed=5)
    other = formats.balanced(list(range(40)), 4, 8, seed=6)
    assert [t.seats for t in one] != [t.seats for t in other]
    assert len({t.seed for t in one}) == len(one)  # independent deals: one seed each


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1, 2, 3], 4, 4), "at least 4 bots"),
        (([1, 2, 2, 3], 2, 4), "more than once"),
        (([1, 2, 3], 9, 4), "2 to 8"),
        (([1, 2, 3], 2, 0), "at least 1"),
    ],
)
def test_balanced_refuses_impossible_parameters(args, message):
    with pytest.raises(FormatError, match=message):
        formats.balanced(*args, seed=1)


# -- gauntlet ---------------------------------------------------------------------------
@pytest.mark.parametrize("challengers", [1, 3])
@pytest.mark.parametrize(("field", "seats"), [(3, 2), (3, 4), (7, 4), (12, 6), (40, 8), (300, 4)])
def test_gauntlet_balances_the_field_and_the_challengers_seats(challengers, field, seats):
    matches = 3 * seats
    chosen = list(range(1000, 1000 + challengers))
    others = list(range(1, field + 1))
    tables = formats.gauntlet(chosen, others, seats, matches, seed=3)
    assert len(tables) == challengers * matches
    assert formats.match_count(
        "gauntlet", field, seats, matches_per_bot=matches, n_challengers=challengers
    ) == len(tables)
    for table in tables:
        assert len(set(table.seats) & set(chosen)) == 1  # challengers never meet
        assert len(set(table.seats)) == seats
    played = per_bot(tables)
    assert all(played[c] == matches for c in chosen)
    counts = seat_counts(tables)
    for c in chosen:
        full = [counts[c][s] for s in range(seats)]
        assert max(full) - min(full) <= 1
        faced = collections.Counter(b for t in tables if c in t.seats for b in t.seats if b != c)
        spread = [faced.get(b, 0) for b in others]
        assert max(spread) - min(spread) <= 1  # the field used evenly against each
    # round i holds every challenger's i-th table: stopping one starves no other
    for i, table in enumerate(tables):
        assert table.round == i // challengers


def test_gauntlet_needs_a_field_big_enough_for_the_table():
    with pytest.raises(FormatError, match="field"):
        formats.gauntlet([1], [2, 3], 4, 4, seed=1)


# -- duplicate deals --------------------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda: formats.round_robin(range(1, 6), 3, 6, seed=4, deal="duplicate"),
        lambda: formats.balanced(range(1, 14), 4, 8, seed=4, deal="duplicate"),
        lambda: formats.gauntlet([99], range(1, 8), 4, 12, seed=4, deal="duplicate"),
    ],
)
def test_duplicate_deals_give_every_hand_to_every_bot(build):
    tables = build()
    seats = len(tables[0].seats)
    deals: dict[int, list[Table]] = collections.defaultdict(list)
    for table in tables:
        deals[table.deal].append(table)
    assert None not in deals
    assert len(deals) == len(tables) // seats
    for rotations in deals.values():
        assert len(rotations) == seats
        assert len({t.seed for t in rotations}) == 1  # one deal
        players = sorted(rotations[0].seats)
        for seat in range(seats):  # every bot holds this seat's hand once
            assert sorted(t.seats[seat] for t in rotations) == players
    assert len({rotations[0].seed for rotations in deals.values()}) == len(deals)


def test_duplicate_counts_matches_played_and_needs_whole_rotations():
    tables = formats.balanced(range(1, 9), 4, 8, seed=1, deal="duplicate")
    assert set(per_bot(tables).values()) == {8}
    assert formats.match_count("balanced", 8, 4, matches_per_bot=8, deal="duplicate") == len(tables)
    with pytest.raises(FormatError, match="multiple of seats_per_match"):
        formats.balanced(range(1, 9), 4, 6, seed=1, deal="duplicate")


def _hands(game_id: str, seats: int, seed: int) -> list[object]:
    """What each seat knows when play starts (its own cards among them)."""
    game = get_game(game_id)
    state = game.new_state(seats, seed, {})
    return [game.view(state, seat) for seat in range(seats)]


@pytest.mark.parametrize(("game_id", "hand"), [("cactus", "layouts"), ("president", "cards")])
def test_a_duplicate_deal_deals_the_same_hands_to_the_seats_of_every_rotation(game_id, hand):
    """Same seed, same options: seat s is dealt the same cards whoever sits there, so
    the rotations of a deal put every hand in front of every bot (the engine contract's
    determinism is what duplicate deals rest on)."""
    tables = formats.balanced(range(1, 5), 4, 4, seed=8, deal="duplicate")
    seed = tables[0].seed
    first = _hands(game_id, 4, seed)
    assert _hands(game_id, 4, seed) == first
    other = _hands(game_id, 4, seed + 1)
    assert [view[hand] for view in other] != [view[hand] for view in first]


# -- the stop rule ----------------------------------------------------------------------
def test_sprt_bounds_and_checks():
    lower, upper = Sprt(alpha=0.05, beta=0.05).bounds()
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    with pytest.raises(FormatError, match="elo1"):
        Sprt(elo0=5, elo1=5).bounds()
    with pytest.raises(FormatError, match="alpha"):
        Sprt(alpha=0.7).bounds()
    assert sprt_llr(1, 1.0, 1.0, Sprt()) == 0.0  # one score says nothing yet


def _two_player_scores(rng: np.random.Generator, elo: float, n: int) -> np.ndarray:
    """Win / draw / loss of a challenger ``elo`` better, draws 20% of the time."""
    win = 1 / (1 + 10 ** (-elo / 400))
    draw = 0.2
    p = [win - draw / 2, draw, 1 - win - draw / 2]
    return rng.choice([1.0, 0.5, 0.0], size=n, p=p)


def _four_seat_scores(rng: np.random.Generator, elo: float, n: int) -> np.ndarray:
    """The challenger's share of three field opponents ranked below it, finishing
    orders drawn from Plackett-Luce strengths (pairwise Bradley-Terry at ``elo``)."""
    strengths = np.array([10 ** (elo / 400), 1.0, 1.0, 1.0])
    times = rng.exponential(1 / strengths, size=(n, 4))
    return (times[:, 1:] > times[:, :1]).mean(axis=1)


def _run(scores: np.ndarray, sprt: Sprt) -> tuple[str | None, int]:
    total = total_sq = 0.0
    for i, s in enumerate(scores, start=1):
        total += s
        total_sq += s * s
        decision = sprt_decision(sprt_llr(i, total, total_sq, sprt), sprt)
        if decision:
            return decision, i
    return None, len(scores)


@pytest.mark.parametrize("draw_scores", [_two_player_scores, _four_seat_scores])
def test_sprt_stops_early_and_right_on_clearly_better_and_worse_challengers(draw_scores):
    sprt = Sprt(elo0=0, elo1=20, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(1)
    for elo, wanted in ((150, "H1"), (-150, "H0")):
        runs = [_run(draw_scores(rng, elo, 3000), sprt) for _ in range(100)]
        right = sum(decision == wanted for decision, _ in runs)
        assert right >= 98
        assert np.median([n for _, n in runs]) < 300  # far from the 3,000 budget


@pytest.mark.parametrize("draw_scores", [_two_player_scores, _four_seat_scores])
def test_sprt_errs_at_about_its_rates_on_challengers_at_the_bounds(draw_scores):
    """At elo0 the challenger should fail: passing it is the alpha error; at elo1 it
    should pass: failing it is the beta error.  300 runs each: 5% ± a sampling margin."""
    sprt = Sprt(elo0=0, elo1=40, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(2)
    for elo, error in ((0, "H1"), (40, "H0")):
        runs = [_run(draw_scores(rng, elo, 20000), sprt) for _ in range(300)]
        undecided = sum(decision is None for decision, _ in runs)
        wrong = sum(decision == error for decision, _ in runs)
        assert undecided <= 3
        assert wrong / len(runs) <= 0.05 + 0.035, (elo, wrong)


def test_sprt_does_not_stop_equal_challengers_with_wide_bounds_early():
    """Between symmetric bounds an equal challenger needs a long record to be called."""
    sprt = Sprt(elo0=-20, elo1=20)
    rng = np.random.default_rng(3)
    runs = [_run(_two_player_scores(rng, 0, 100), sprt) for _ in range(200)]
    assert sum(decision is not None for decision, _ in runs) <= 10
