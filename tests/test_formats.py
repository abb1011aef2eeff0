"""Tournament formats as pure functions: the balance each schedule promises for 4 to 300
bots at 2 to 8 seats, old round robins reproduced seed for seed, duplicate deals giving
every hand to every bot (checked through the engines), and the gauntlet's stop rule
deciding at its error rates over simulated records."""

from __future__ import annotations

import collections
import itertools
import math
import random
from collections.abc import Callable

import numpy as np
import pytest

from arena.competition import formats
from arena.competition.formats import FormatError, Sprt, Table, sprt_decision, sprt_llr
from arena.competition.grading import PassRule
from arena.games import get_game

BOTS = (4, 5, 7, 12, 30, 61, 300)
SEATS = (2, 3, 4, 6, 8)
SIZES = [(n, k) for n in BOTS for k in SEATS if n >= k]

# Pair meetings (most minus fewest) the balanced schedule keeps to, measured over these
# sizes and several seeds.  Small fields at big tables cannot do better: 12 bots at two
# 6-seat tables a round are 12 words of 6 bits, and no 12 such words are all 3 apart.
PAIR_SPREAD = {2: 2, 3: 2, 4: 3, 6: 4, 8: 4}


def per_bot(tables: list[Table]) -> collections.Counter[int]:
    return collections.Counter(bot for table in tables for bot in table.seats)


def seat_counts(tables: list[Table], seats: int) -> dict[int, list[int]]:
    counts: dict[int, list[int]] = collections.defaultdict(lambda: [0] * seats)
    for table in tables:
        for seat, bot in enumerate(table.seats):
            counts[bot][seat] += 1
    return counts


def meetings(tables: list[Table], bots: list[int]) -> list[int]:
    met = collections.Counter(
        frozenset(pair) for table in tables for pair in itertools.combinations(table.seats, 2)
    )
    return [met[frozenset(pair)] for pair in itertools.combinations(bots, 2)]


# -- round robin ----------------------------------------------------------------------------
def v1_round_robin_seatings(
    bot_ids: list[int], seats_per_match: int, games_per_pairing: int
) -> list[tuple[int, ...]]:
    """``arena.services.round_robin_seatings`` as v1 shipped it (commit 74c6547), kept
    here verbatim since services now calls ``formats.round_robin``."""
    combos = list(itertools.combinations(sorted(set(bot_ids)), seats_per_match))
    return [
        combo[r % seats_per_match :] + combo[: r % seats_per_match]
        for r in range(games_per_pairing)
        for combo in combos
    ]


@pytest.mark.parametrize(
    ("bots", "seats", "games", "seed"),
    [([4, 1, 3, 2], 2, 4, 9), ([5, 3, 9, 1, 7], 3, 6, 11), (list(range(1, 9)), 4, 4, 0)],
)
def test_round_robin_reproduces_v1_seatings_and_seeds(bots, seats, games, seed):
    """Tournaments created before the formats existed replay: same seatings, same order,
    seeds drawn as v1 drew them (``random.Random(seed).randint(0, MAX_SEED)`` each)."""
    tables = formats.round_robin(bots, seats, games, seed=seed)
    expected = v1_round_robin_seatings(bots, seats, games)
    assert [t.seats for t in tables] == expected
    rng = random.Random(seed)
    assert [t.seed for t in tables] == [rng.randint(0, 2**53 - 1) for _ in expected]
    assert formats.MAX_SEED == 2**53 - 1
    assert {t.deal for t in tables} == {None}
    combos = math.comb(len(bots), seats)
    assert [t.round for t in tables] == [i // combos for i in range(len(tables))]
    assert formats.match_count("round_robin", len(bots), seats, games_per_pairing=games) == len(
        tables
    )


def test_round_robin_refuses_a_pairing_count_that_unbalances_seats():
    message = "games_per_pairing must be a positive multiple of seats_per_match"
    with pytest.raises(FormatError, match=message):
        formats.round_robin([1, 2, 3], 3, 4, seed=1)
    with pytest.raises(FormatError, match=message):
        formats.match_count("round_robin", 3, 3, games_per_pairing=4)


# -- balanced -------------------------------------------------------------------------------
def _matches(n: int, k: int) -> list[int]:
    # a count the seats divide, one they do not, and a long one (shorter at 300 bots)
    return [k, 2 * k + 1] if n == 300 else [k, 2 * k + 1, 20]


@pytest.mark.parametrize(("n", "k"), SIZES)
def test_balanced_gives_matches_seats_and_opponents_evenly(n, k):
    bots = list(range(100, 100 + n))
    for m in _matches(n, k):
        tables = formats.balanced(bots, k, m, seed=n * 10 + k)
        assert len(tables) == math.ceil(n * m / k)
        assert formats.match_count("balanced", n, k, matches_per_bot=m) == len(tables)
        # every bot its matches; the seats the total leaves over go to bots playing one more
        played = per_bot(tables)
        extra = len(tables) * k - n * m
        assert sorted(played[b] for b in bots) == [m] * (n - extra) + [m + 1] * extra
        for table in tables:
            assert len(set(table.seats)) == k  # never a bot twice at a table
        for bot, counts in seat_counts(tables, k).items():
            assert max(counts) - min(counts) <= 1, (bot, counts)
        pairs = meetings(tables, bots)
        mean = m * (k - 1) / (n - 1)
        assert max(pairs) - min(pairs) <= PAIR_SPREAD[k], (m, min(pairs), max(pairs), mean)
        if n >= 30 and k <= 6 and mean < 0.5:
            assert max(pairs) == 1  # strangers are plenty: no pair meets twice
        report = formats.balance(tables, bots, k)
        assert report.matches_per_bot == (min(played.values()), max(played.values()))
        assert report.seat_spread <= 1
        assert report.pair_meetings == (min(pairs), max(pairs))


@pytest.mark.parametrize(("n", "k", "m"), [(30, 4, 20), (7, 3, 9), (61, 8, 8), (12, 6, 13)])
def test_balanced_plays_round_by_round(n, k, m):
    """A bot plays at most once a round, and after any round no bot has played two
    matches more than another: a tournament stopped half way was fair so far."""
    tables = formats.balanced(list(range(n)), k, m, seed=2)
    rounds = [t.round for t in tables]
    assert rounds == sorted(rounds)
    assert sorted(set(rounds)) == list(range(rounds[-1] + 1))
    played = collections.Counter({b: 0 for b in range(n)})
    for r in range(rounds[-1] + 1):
        seated = [b for t in tables if t.round == r for b in t.seats]
        assert len(seated) == len(set(seated))
        played.update(seated)
        assert max(played.values()) - min(played.values()) <= 1


def test_balanced_is_deterministic_from_its_seed():
    one = formats.balanced(list(range(40)), 4, 8, seed=5)
    assert one == formats.balanced(list(range(40)), 4, 8, seed=5)
    assert one == formats.balanced(list(reversed(range(40))), 4, 8, seed=5)  # order: no matter
    other = formats.balanced(list(range(40)), 4, 8, seed=6)
    assert [t.seats for t in one] != [t.seats for t in other]
    assert len({t.seed for t in one}) == len(one)  # independent deals: one seed each


def test_balanced_is_fast_enough_for_a_big_class():
    """300 bots at 4 seats, 40 matches each: 3,000 tables, every one with its seat and
    opponents balanced (the time is the benchmark's business, not this test's)."""
    tables = formats.balanced(range(300), 4, 40, seed=1)
    report = formats.balance(tables, range(300), 4)
    assert report.matches_per_bot == (40, 40)
    assert report.seat_spread == 0
    assert report.pair_meetings[1] <= 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: formats.balanced([1, 2, 3], 4, 4, seed=1), "at least 4 bots"),
        (lambda: formats.balanced([1, 2, 2, 3], 2, 4, seed=1), "more than once"),
        (lambda: formats.balanced([1, 2, 3], 9, 4, seed=1), "2 to 8"),
        (lambda: formats.balanced([1, 2, 3], 1, 4, seed=1), "2 to 8"),
        (lambda: formats.balanced([1, 2, 3], 2, 0, seed=1), "at least 1"),
        (lambda: formats.balanced([1, 2, 3], 2, 4, seed=1, deal="shuffled"), "deal"),
        (lambda: formats.balanced([1, 2, 3], 3, 4, seed=1, deal="duplicate"), "multiple of"),
        (lambda: formats.gauntlet([1], [2, 3], 4, 4, seed=1), "field"),
        (lambda: formats.gauntlet([1], [1, 2, 3], 3, 4, seed=1), "also listed in the field"),
        (lambda: formats.gauntlet([], [1, 2, 3], 3, 4, seed=1), "at least one challenger"),
        (lambda: formats.match_count("swiss", 8, 2, matches_per_bot=4), "format"),
        (lambda: formats.match_count("balanced", 3, 4, matches_per_bot=4), "at least 4 bots"),
        (
            lambda: formats.match_count("gauntlet", 2, 4, matches_per_bot=4, n_challengers=1),
            "field",
        ),
    ],
)
def test_impossible_parameters_are_refused_with_a_reason(call, message):
    with pytest.raises(FormatError, match=message):
        call()


# -- gauntlet -------------------------------------------------------------------------------
@pytest.mark.parametrize("n_challengers", [1, 3])
@pytest.mark.parametrize(
    ("field", "k"),
    [(3, 2), (3, 4), (4, 3), (7, 4), (7, 8), (12, 6), (40, 8), (300, 3), (300, 8)],
)
def test_gauntlet_balances_the_challengers_seats_and_the_field(n_challengers, field, k):
    m = 3 * k + 1  # not a multiple of the seats
    chosen = list(range(1000, 1000 + n_challengers))
    others = list(range(1, field + 1))
    tables = formats.gauntlet(chosen, others, k, m, seed=3)
    assert len(tables) == n_challengers * m
    assert formats.match_count(
        "gauntlet", field, k, matches_per_bot=m, n_challengers=n_challengers
    ) == len(tables)
    for table in tables:
        assert len(set(table.seats) & set(chosen)) == 1  # challengers never meet
        assert len(set(table.seats)) == k
    played = per_bot(tables)
    assert all(played[c] == m for c in chosen)
    counts = seat_counts(tables, k)
    for bot in chosen + [b for b in others if played[b]]:
        assert max(counts[bot]) - min(counts[bot]) <= 1, (bot, counts[bot])
    for c in chosen:
        faced = collections.Counter(b for t in tables if c in t.seats for b in t.seats)
        spread = [faced[b] for b in others]
        assert max(spread) - min(spread) <= 1  # the field used evenly against each
    # round i holds every challenger's i-th table: stopping one starves no other
    assert [t.round for t in tables] == [i // n_challengers for i in range(len(tables))]
    report = formats.balance(tables, chosen + others, k, challenger_ids=chosen)
    assert report.matches_per_bot == (m, m)
    assert report.seat_spread <= 1
    assert report.pair_meetings[1] - report.pair_meetings[0] <= 1 + (n_challengers > 1)


# -- duplicate deals ------------------------------------------------------------------------
BUILDERS: list[Callable[[], list[Table]]] = [
    lambda: formats.round_robin(range(1, 6), 3, 6, seed=4, deal="duplicate"),
    lambda: formats.balanced(range(1, 14), 4, 8, seed=4, deal="duplicate"),
    lambda: formats.balanced(range(1, 30), 3, 9, seed=4, deal="duplicate"),
    lambda: formats.gauntlet([99, 98], range(1, 8), 4, 12, seed=4, deal="duplicate"),
]


def deals_of(tables: list[Table]) -> dict[int, list[Table]]:
    deals: dict[int, list[Table]] = collections.defaultdict(list)
    for table in tables:
        assert table.deal is not None
        deals[table.deal].append(table)
    return deals


@pytest.mark.parametrize("build", BUILDERS)
def test_duplicate_deals_give_every_hand_to_every_bot(build):
    tables = build()
    k = len(tables[0].seats)
    deals = deals_of(tables)
    assert sorted(deals) == list(range(len(tables) // k))  # numbered in order
    for rotations in deals.values():
        assert len(rotations) == k
        assert len({t.seed for t in rotations}) == 1  # one deal
        players = sorted(rotations[0].seats)
        for seat in range(k):  # every bot holds this seat's hand once
            assert sorted(t.seats[seat] for t in rotations) == players
    assert len({rotations[0].seed for rotations in deals.values()}) == len(deals)
    counts = seat_counts(tables, k)
    assert all(len(set(c)) == 1 for c in counts.values())  # seats exactly even


def test_duplicate_counts_the_matches_played():
    tables = formats.balanced(range(1, 9), 4, 8, seed=1, deal="duplicate")
    assert set(per_bot(tables).values()) == {8}
    assert formats.match_count("balanced", 8, 4, matches_per_bot=8, deal="duplicate") == len(tables)
    robin = formats.round_robin(range(1, 6), 3, 6, seed=1, deal="duplicate")
    assert len(robin) == math.comb(5, 3) * 6
    assert formats.match_count("round_robin", 5, 3, games_per_pairing=6, deal="duplicate") == 60
    assert formats.match_count(
        "gauntlet", 7, 4, matches_per_bot=12, n_challengers=2, deal="duplicate"
    ) == len(formats.gauntlet([99, 98], range(1, 8), 4, 12, seed=1, deal="duplicate"))


def _dealt(game_id: str, seats: int, seed: int) -> list[object]:
    """What each seat is dealt, from the full state (a Cactus seat does not see its own
    cards), with the options a tournament stores (``services.resolve_options``)."""
    game = get_game(game_id)
    options = game.options_json(game.resolve_options({}))
    state = game.new_state(seats, seed, options)
    hands = state.layouts if game_id == "cactus" else state.hands
    return [repr(hands[seat]) for seat in range(seats)]


@pytest.mark.parametrize("game_id", ["cactus", "president"])
def test_a_duplicate_deal_puts_every_dealt_hand_before_every_bot(game_id):
    """Played through the engine: within one deal each rotation deals seat s the same
    cards, so over the rotations every bot holds each of the hands exactly once."""
    tables = formats.balanced(range(1, 9), 4, 8, seed=8, deal="duplicate")
    for rotations in list(deals_of(tables).values())[:3]:
        held: dict[int, list[object]] = collections.defaultdict(list)
        dealt = [_dealt(game_id, 4, t.seed) for t in rotations]
        assert all(hands == dealt[0] for hands in dealt)  # one deal, whoever sits there
        assert len(set(dealt[0])) == 4  # four different hands
        for table, hands in zip(rotations, dealt, strict=True):
            for seat, bot in enumerate(table.seats):
                held[bot].append(hands[seat])
        assert all(sorted(h) == sorted(dealt[0]) for h in held.values())
    seeds = [rotations[0].seed for rotations in deals_of(tables).values()]
    assert _dealt(game_id, 4, seeds[0]) != _dealt(game_id, 4, seeds[1])


# -- the stop rule --------------------------------------------------------------------------
def test_sprt_bounds_and_checks():
    lower, upper = Sprt(alpha=0.05, beta=0.05).bounds()
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    with pytest.raises(FormatError, match="elo1"):
        Sprt(elo0=5, elo1=5).bounds()
    with pytest.raises(FormatError, match="alpha"):
        Sprt(alpha=0.7).bounds()
    with pytest.raises(FormatError, match="alpha"):
        Sprt(beta=0.0).bounds()
    assert sprt_llr(0, 0.0, 0.0, Sprt()) == 0.0  # nothing played
    assert sprt_llr(1, 1.0, 1.0, Sprt()) == 0.0  # one score says nothing yet
    assert sprt_decision(0.0, Sprt()) is None
    # a handful of straight wins has no spread, yet it is no proof
    assert sprt_decision(sprt_llr(5, 5.0, 5.0, Sprt(elo1=20)), Sprt(elo1=20)) is None
    assert sprt_llr(100, 60.0, 60.0, Sprt()) > 0 > sprt_llr(100, 40.0, 40.0, Sprt())


def two_player_scores(rng: np.random.Generator, elo: float, size: tuple[int, int]) -> np.ndarray:
    """Win / draw / loss of a challenger ``elo`` better than its opponent, 20% draws."""
    win = 1 / (1 + 10 ** (-elo / 400))
    draw = 0.2
    return rng.choice([1.0, 0.5, 0.0], size=size, p=[win - draw / 2, draw, 1 - win - draw / 2])


def four_seat_scores(rng: np.random.Generator, elo: float, size: tuple[int, int]) -> np.ndarray:
    """The challenger's share of its three field opponents finishing below it, orders
    drawn from Plackett-Luce strengths (an exponential race): pairwise Bradley-Terry at
    ``elo``, the scale the SPRT's bounds are on for more than two seats."""
    strengths = np.array([10 ** (elo / 400), 1.0, 1.0, 1.0])
    times = rng.exponential(1 / strengths, size=(*size, 4))
    return (times[..., 1:] > times[..., :1]).mean(axis=-1)


def run_sprt(records: np.ndarray, sprt: Sprt) -> list[tuple[str | None, int]]:
    """Each record fed to the stop rule one score at a time, as the standings do: the
    decision and the number of scores it took (the budget when none)."""
    totals, squares = records.cumsum(axis=1), (records * records).cumsum(axis=1)
    outcomes = []
    for total, square in zip(totals, squares, strict=True):
        for i in range(len(total)):
            decision = sprt_decision(sprt_llr(i + 1, total[i], square[i], sprt), sprt)
            if decision:
                outcomes.append((decision, i + 1))
                break
        else:
            outcomes.append((None, len(total)))
    return outcomes


SCORES = [two_player_scores, four_seat_scores]


@pytest.mark.parametrize("scores", SCORES)
def test_sprt_passes_a_clearly_better_challenger_and_fails_a_worse_one_early(scores):
    sprt = Sprt(elo0=0, elo1=20, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(1)
    budget = 3000
    for elo, wanted in ((100, "H1"), (-100, "H0")):
        runs = run_sprt(scores(rng, elo, (200, budget)), sprt)
        right = sum(decision == wanted for decision, _ in runs)
        assert right / len(runs) >= 1 - 0.05 - 0.02, (elo, right)
        assert np.median([n for _, n in runs]) < budget / 5  # long before the budget


@pytest.mark.slow
@pytest.mark.parametrize("scores", SCORES)
def test_sprt_errs_at_about_its_rates_on_challengers_at_the_bounds(scores):
    """At elo0 the challenger should fail: passing it is the alpha error; at elo1 it
    should pass: failing it is the beta error.  300 runs each: 5% plus a sampling margin
    (the binomial standard error is 1.3%)."""
    sprt = Sprt(elo0=0, elo1=40, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(2)
    for elo, error in ((0, "H1"), (40, "H0")):
        runs = run_sprt(scores(rng, elo, (300, 4000)), sprt)
        assert sum(decision is None for decision, _ in runs) <= 3  # it does end
        wrong = sum(decision == error for decision, _ in runs)
        assert wrong / len(runs) <= 0.05 + 0.03, (elo, wrong)


# -- the registry ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(formats.FORMATS))
@pytest.mark.parametrize("deal", formats.DEALS)
def test_each_registered_format_counts_what_it_builds(name, deal):
    """``Format.count`` (the size limit, checked before any work) is the length of what
    ``Format.build`` schedules, for the entry the format's own fields describe."""
    fmt = formats.FORMATS[name]
    entry = formats.Entry(
        bot_ids=tuple(range(1, 10)),
        seats_per_match=3,
        deal=deal,
        games_per_pairing=6 if fmt.takes("games_per_pairing") else None,
        matches_per_bot=6 if fmt.takes("matches_per_bot") else None,
        challenger_ids=(1, 2) if fmt.takes("challenger_ids") else (),
        pass_rule=PassRule("score", min_score=0.5) if fmt.takes("pass_rule") else None,
    )
    fmt.check(entry)
    tables = fmt.build(entry, seed=5)
    assert fmt.count(entry) == len(tables) > 0
    assert {b for t in tables for b in t.seats} == set(entry.bot_ids)
    assert fmt.describe(entry).startswith(f"{fmt.title}: ")
    stored = fmt.stored(entry)
    assert set(stored) == {"games_per_pairing", "matches_per_bot"}
    assert {k for k, v in stored.items() if v is not None} == {
        f.name for f in fmt.fields if f.name in stored
    }


def test_a_format_refuses_the_fields_of_another():
    robin, balanced, gauntlet = (
        formats.FORMATS[n] for n in ("round_robin", "balanced", "gauntlet")
    )
    given = formats.Entry(bot_ids=(1, 2, 3), seats_per_match=2, challenger_ids=(1,))
    for fmt in (robin, balanced):
        with pytest.raises(FormatError, match="belong to the gauntlet"):
            fmt.check(given)
    gauntlet.check(given)
    with pytest.raises(FormatError, match="needs challenger_ids"):
        gauntlet.check(formats.Entry(bot_ids=(1, 2, 3), seats_per_match=2))
    with pytest.raises(FormatError, match="4 are not in bot_ids"):
        gauntlet.check(formats.Entry(bot_ids=(1, 2, 3), seats_per_match=2, challenger_ids=(4,)))
    with pytest.raises(FormatError, match="format must be one of round_robin, balanced"):
        formats.get_format("swiss")
