"""Tournament formats: pure functions from bots and parameters to tables and seeds, and
``FORMATS``, the registry every other part reads (the API's schema and ``/api/formats``,
``arena.services``, the pages and, through the API, the tournament form): one ``Format``
per format, with its fields, ``check``, ``count``, ``build`` and ``describe``.

No database, web or task queue: ``arena.services`` writes what these return.  Every
schedule is deterministic from its seed (``random.Random``, never the global one), is
built round by round (a tournament stopped half way has played every bot about equally),
and says what it achieved (``balance``).  The balanced schedule's optimiser is
``arena.competition.seating``.

- ``round_robin``: every combination of ``seats`` bots, ``games_per_pairing`` times, the
  r-th game of a combination with its seating rotated by r.
- ``balanced``: every bot plays ``matches_per_bot`` matches (a few one more when the seats
  do not divide the total), each seat equally often (±1), every pair of bots meeting as
  evenly as the numbers allow; a bot plays at most once per round.
- ``gauntlet``: each challenger against the field, never two challengers at a table.
- ``qualifier``: a gauntlet whose challengers are the contestants and whose field is the
  organiser's reference bot(s), each challenger graded by a pass rule
  (``arena.competition.grading``).

``deal="duplicate"``: each table of the base schedule becomes ``seats`` matches with one
seed, the r-th with the seating rotated by r: every bot at the table holds every hand.

The gauntlet's stop rule is a sequential probability ratio test (``Sprt``), the
generalised (normal approximation) form engine testing uses, on any score in [0, 1].
"""

from __future__ import annotations

import itertools
import math
import numbers
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.competition.grading import GradingError, PassRule
from arena.competition.seating import balanced_groups, even_seats, seat

MAX_SEED = 2**53 - 1  # a seed survives a trip through JSON in a browser
DEALS = ("independent", "duplicate")
MIN_SEATS, MAX_SEATS = 2, 8


class FormatError(ValueError):
    """Parameters no schedule can satisfy; the message is for the organiser."""


@dataclass(frozen=True)
class Table:
    """One match: who sits where, its deal, and when it is queued."""

    seats: tuple[int, ...]  # bot id in each seat
    seed: int  # the deal
    deal: int | None  # duplicate deal group (None: an independent deal)
    round: int  # scheduling round, 0-based


@dataclass(frozen=True)
class Balance:
    """What a schedule achieved, for the organiser to see before the first match."""

    matches_per_bot: tuple[int, int]  # (fewest, most); a gauntlet's challengers
    seat_spread: int  # the most a bot's count in one seat exceeds its count in another
    pair_meetings: tuple[int, int]  # (fewest, most) over the pairs that may meet

    def to_json(self) -> dict[str, object]:
        return {
            "matches_per_bot": list(self.matches_per_bot),
            "seat_spread": self.seat_spread,
            "pair_meetings": list(self.pair_meetings),
        }


# -- checks: shared by the builders and match_count, so both refuse the same things -----
def _whole(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_seats(seats: int, deal: str) -> None:
    if deal not in DEALS:
        raise FormatError(f"deal must be one of {', '.join(DEALS)}, not {deal!r}")
    if not _whole(seats):
        raise FormatError("seats_per_match must be a whole number")
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise FormatError(f"seats_per_match must be {MIN_SEATS} to {MAX_SEATS}")


def _check_ids(ids: Iterable[int]) -> list[int]:
    bots = list(ids)
    if not all(_whole(b) for b in bots):
        raise FormatError("bot ids must be whole numbers")
    bots = [int(b) for b in bots]
    if len(set(bots)) != len(bots):
        raise FormatError("a bot is listed more than once")
    return bots


def _check_enough(n_bots: int, seats: int) -> None:
    if n_bots < seats:
        raise FormatError(f"{seats} seats per match need at least {seats} bots")


def _base_count(count: int | None, name: str, seats: int, deal: str) -> int:
    """A per-bot count of matches played, as the base schedule counts it (duplicate:
    deals, each played once per seat)."""
    if not _whole(count) or count < 1:
        raise FormatError(f"{name} must be at least 1")
    if deal == "duplicate":
        if count % seats:
            raise FormatError(
                f"with duplicate deals {name} must be a multiple of seats_per_match "
                f"({seats}): each deal is played once per rotation of its table"
            )
        return count // seats
    return count


def _check_round_robin(n_bots: int, seats: int, games: int | None, deal: str) -> int:
    _check_seats(seats, deal)
    _check_enough(n_bots, seats)
    if not _whole(games) or games < 1 or games % seats:
        # the wording v1 used: organisers and the API tests know it
        raise FormatError(
            f"games_per_pairing must be a positive multiple of seats_per_match "
            f"({seats}) so that every bot plays every seat equally often"
        )
    return games


def _check_gauntlet(n_challengers: int, n_field: int, seats: int) -> None:
    if n_challengers < 1:
        raise FormatError("a gauntlet needs at least one challenger")
    if n_field < seats - 1:
        raise FormatError(
            f"the field (the bots that are not challengers) needs at least "
            f"{seats - 1} bots for {seats} seats per match"
        )


# -- seeds --------------------------------------------------------------------------------
def _deal(base: list[tuple[tuple[int, ...], int]], seats: int, seed: int, deal: str) -> list[Table]:
    """Seeds drawn in schedule order from ``random.Random(seed)`` (v1's round robin drew
    them so); a duplicate base table becomes its ``seats`` rotations, one seed."""
    rng = random.Random(seed)
    if deal == "independent":
        return [Table(s, rng.randint(0, MAX_SEED), None, r) for s, r in base]
    tables = []
    for number, (s, r) in enumerate(base):
        shared = rng.randint(0, MAX_SEED)
        tables.extend(Table(s[k:] + s[:k], shared, number, r) for k in range(seats))
    return tables


# -- round robin ----------------------------------------------------------------------------
def round_robin(
    bot_ids: Iterable[int],
    seats_per_match: int,
    games_per_pairing: int,
    *,
    seed: int,
    deal: str = "independent",
) -> list[Table]:
    """Every combination of ``seats_per_match`` bots ``games_per_pairing`` times, round by
    round; round r seats every combination rotated by r, so each bot sits in each seat
    equally often.  Independent deals reproduce v1's schedules seed for seed.  With
    duplicate deals each combination gets ``games_per_pairing / seats`` deals."""
    bots = sorted(_check_ids(bot_ids))
    k = seats_per_match
    games = _check_round_robin(len(bots), k, games_per_pairing, deal)
    combos = list(itertools.combinations(bots, k))
    if deal == "duplicate":
        base = [(combo, r) for r in range(games // k) for combo in combos]
    else:
        base = [(c[r % k :] + c[: r % k], r) for r in range(games) for c in combos]
    return _deal(base, k, seed, deal)


# -- balanced -------------------------------------------------------------------------------


def balanced(
    bot_ids: Iterable[int],
    seats_per_match: int,
    matches_per_bot: int,
    *,
    seed: int,
    deal: str = "independent",
) -> list[Table]:
    """Every bot plays ``matches_per_bot`` matches, in ``ceil(n * m / seats)`` tables:
    when the seats do not divide ``n * m`` the seats left over go to bots that have
    played least, who play ``m + 1``.  Each bot sits in each seat equally often (±1;
    exactly, with duplicate deals), pairs meet as evenly as a greedy search finds, and
    no bot plays twice in a round (with duplicate deals a round holds each base table's
    rotations, so there a bot plays ``seats`` matches per round)."""
    bots = sorted(_check_ids(bot_ids))
    k = seats_per_match
    _check_seats(k, deal)
    _check_enough(len(bots), k)
    per_bot = _base_count(matches_per_bot, "matches_per_bot", k, deal)
    rng = random.Random(f"balanced:{seed}")  # the seeds' own generator stays v1's
    groups, rounds = balanced_groups(len(bots), k, per_bot, rng)
    if deal == "independent":
        in_seat = np.zeros((len(bots), k), dtype=np.int64)
        seatings = []
        for group in groups:
            seating = seat(group, in_seat, rng)
            in_seat[seating, np.arange(k)] += 1
            seatings.append(seating)
        even_seats(seatings, len(bots), k)
        groups = seatings
    base = [(tuple(bots[i] for i in g), r) for g, r in zip(groups, rounds, strict=True)]
    return _deal(base, k, seed, deal)


# -- gauntlet -------------------------------------------------------------------------------
def gauntlet(
    challenger_ids: Iterable[int],
    field_ids: Iterable[int],
    seats_per_match: int,
    matches_per_bot: int,
    *,
    seed: int,
    deal: str = "independent",
) -> list[Table]:
    """Each challenger plays ``matches_per_bot`` matches against ``seats - 1`` bots of
    the field, never two challengers at one table.  A challenger takes the seats in turn
    (spread ≤ 1), meets the field bots it has met least (each within ±1 of the others),
    then those least used in the round and overall; round i holds every challenger's
    i-th table, so stopping one challenger early holds no other back."""
    challengers = sorted(_check_ids(challenger_ids))
    field = sorted(_check_ids(field_ids))
    k = seats_per_match
    _check_seats(k, deal)
    if set(challengers) & set(field):
        raise FormatError("a challenger is also listed in the field")
    _check_gauntlet(len(challengers), len(field), k)
    per_bot = _base_count(matches_per_bot, "matches_per_bot", k, deal)
    rng = random.Random(f"gauntlet:{seed}")
    ids = challengers + field  # bot indices: challengers first, then the field
    nc, nf = len(challengers), len(field)
    faced = np.zeros((nc, nf), dtype=np.int64)
    used = np.zeros(nf, dtype=np.int64)
    in_seat = np.zeros((nc + nf, k), dtype=np.int64)
    first_seat = [rng.randrange(k) for _ in challengers]
    seatings: list[list[int]] = []
    rounds: list[int] = []
    for round_number in range(per_bot):
        this_round = np.zeros(nf, dtype=np.int64)
        ties = np.array(rng.sample(range(nf), nf))
        for c in range(nc):
            picked = np.lexsort((ties, used, this_round, faced[c]))[: k - 1]
            faced[c, picked] += 1
            used[picked] += 1
            this_round[picked] += 1
            own = (first_seat[c] + round_number) % k
            others = [s for s in range(k) if s != own]
            # the field bots take the other seats, each where it has sat least
            placed = seat([nc + int(f) for f in picked], in_seat[:, others], rng)
            seating = [c] * k
            for s, bot in zip(others, placed, strict=True):
                seating[s] = bot
                in_seat[bot, s] += 1
            seatings.append(seating)
            rounds.append(round_number)
    if deal == "independent":
        even_seats(seatings, nc + nf, k)  # the field's seats too, within one
    base = [(tuple(ids[i] for i in s), r) for s, r in zip(seatings, rounds, strict=True)]
    return _deal(base, k, seed, deal)


# -- the registry ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """A parameter a format takes besides the entrants, seats and deal: what the API's
    schema requires or refuses per format, and what the tournament form shows."""

    name: str  # the key in the API's JSON (and the form's field)
    label: str  # its words on the form, for this format
    description: str  # what it means, for this format
    required: bool = True


@dataclass(frozen=True)
class Entry:
    """What an organiser asks a format for: the entrants (``bot_ids``: every one; a
    gauntlet's ``challenger_ids`` are among them, the others are its field), the seats,
    the deal and the format's own parameters (None: not given)."""

    bot_ids: tuple[int, ...]
    seats_per_match: int
    deal: str = "independent"
    games_per_pairing: int | None = None
    matches_per_bot: int | None = None
    challenger_ids: tuple[int, ...] = ()
    sprt: Sprt | None = None
    pass_rule: PassRule | None = None  # the qualifier's

    @property
    def field(self) -> list[int]:
        """The entrants that are not challengers, sorted."""
        return sorted(set(self.bot_ids) - set(self.challenger_ids))


class Format:
    """One tournament format: its name and words, its fields, and what it does with an
    ``Entry``: ``check`` it (what the entrants must be), ``count`` its matches without
    building them, ``build`` the schedule, ``describe`` it in words.  ``stored`` is what
    a tournament row keeps of the entry's parameters (the others are None)."""

    name: str
    title: str
    summary: str  # what it schedules, in the API's words
    hint: str  # when to choose it, in the form's words
    fields: tuple[Field, ...]

    def takes(self, name: str) -> bool:
        """Whether ``name`` is one of its fields."""
        return any(f.name == name for f in self.fields)

    def check(self, entry: Entry) -> None:
        if entry.challenger_ids or entry.sprt is not None:
            raise FormatError(
                "challenger_ids and sprt belong to the gauntlet and qualifier formats"
            )
        if entry.pass_rule is not None:
            raise FormatError("pass_rule belongs to the qualifier format")

    def count(self, entry: Entry) -> int:
        raise NotImplementedError

    def build(self, entry: Entry, seed: int) -> list[Table]:
        raise NotImplementedError

    def parameter_text(self, entry: Entry) -> str:
        raise NotImplementedError

    def describe(self, entry: Entry) -> str:
        """The format and its parameters in words: "Balanced: 40 matches per bot, 2 seats
        per match, independent deals"."""
        seats = f"{entry.seats_per_match} seats per match"
        deals = "duplicate deals" if entry.deal == "duplicate" else "independent deals"
        return f"{self.title}: {self.parameter_text(entry)}, {seats}, {deals}"

    def stored(self, entry: Entry) -> dict[str, int | None]:
        return {"games_per_pairing": None, "matches_per_bot": entry.matches_per_bot}

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "hint": self.hint,
            "fields": [
                {
                    "name": f.name,
                    "label": f.label,
                    "description": f.description,
                    "required": f.required,
                }
                for f in self.fields
            ],
        }


def _plural(n: int | None, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


class RoundRobin(Format):
    name = "round_robin"
    title = "Round robin"
    summary = "every combination of seats_per_match bots, games_per_pairing times"
    hint = (
        "every group of bots (as many as the seats) plays; for a few bots, as the number "
        "of groups grows fast with more."
    )
    fields = (
        Field(
            "games_per_pairing",
            "Games per pairing",
            "how many times each combination plays: a multiple of seats_per_match, so "
            "that every bot plays every seat equally often",
        ),
    )

    def count(self, entry: Entry) -> int:
        k = entry.seats_per_match
        _check_seats(k, entry.deal)
        n = len(entry.bot_ids)
        return math.comb(n, k) * _check_round_robin(n, k, entry.games_per_pairing, entry.deal)

    def build(self, entry: Entry, seed: int) -> list[Table]:
        return round_robin(
            entry.bot_ids,
            entry.seats_per_match,
            entry.games_per_pairing or 0,
            seed=seed,
            deal=entry.deal,
        )

    def parameter_text(self, entry: Entry) -> str:
        return f"{_plural(entry.games_per_pairing, 'game')} per pairing"

    def stored(self, entry: Entry) -> dict[str, int | None]:
        return {"games_per_pairing": entry.games_per_pairing, "matches_per_bot": None}


class Balanced(Format):
    name = "balanced"
    title = "Balanced"
    summary = "matches_per_bot matches for each bot, seats and opponents spread evenly"
    hint = (
        "every bot plays the same number of matches, each seat equally often, against "
        "opponents spread evenly: for 30 to 1,000 bots."
    )
    fields = (
        Field(
            "matches_per_bot",
            "Matches per bot",
            "how many matches each bot plays (a few play one more when the seats do not "
            "divide the total)",
        ),
    )

    def count(self, entry: Entry) -> int:
        k, deal = entry.seats_per_match, entry.deal
        _check_seats(k, deal)
        _check_enough(len(entry.bot_ids), k)
        per_bot = _base_count(entry.matches_per_bot, "matches_per_bot", k, deal)
        rotations = k if deal == "duplicate" else 1
        return math.ceil(len(entry.bot_ids) * per_bot / k) * rotations

    def build(self, entry: Entry, seed: int) -> list[Table]:
        return balanced(
            entry.bot_ids,
            entry.seats_per_match,
            entry.matches_per_bot or 0,
            seed=seed,
            deal=entry.deal,
        )

    def parameter_text(self, entry: Entry) -> str:
        return f"{_plural(entry.matches_per_bot, 'match', 'matches')} per bot"


class Gauntlet(Format):
    name = "gauntlet"
    title = "Gauntlet"
    summary = "challenger_ids against the other bots"
    hint = (
        "the challengers you tick below play against the other bots (the field), not "
        "against each other."
    )
    fields = (
        Field(
            "matches_per_bot",
            "Matches per challenger",
            "how many matches each challenger plays at most",
        ),
        Field("challenger_ids", "Challengers", "the bots tried against the field"),
        Field("sprt", "Stop rule", "stop each challenger once decided", required=False),
    )

    def check(self, entry: Entry) -> None:
        if entry.pass_rule is not None:
            raise FormatError("pass_rule belongs to the qualifier format")
        self._check_challengers(entry)

    def _check_challengers(self, entry: Entry) -> None:
        if not entry.challenger_ids:
            raise FormatError("a gauntlet needs challenger_ids (one or more)")
        strangers = sorted(set(entry.challenger_ids) - set(entry.bot_ids))
        if strangers:
            raise FormatError(f"challenger(s) {', '.join(map(str, strangers))} are not in bot_ids")

    def count(self, entry: Entry) -> int:
        k, deal = entry.seats_per_match, entry.deal
        _check_seats(k, deal)
        _check_gauntlet(len(set(entry.challenger_ids)), len(entry.field), k)
        per_bot = _base_count(entry.matches_per_bot, "matches_per_bot", k, deal)
        rotations = k if deal == "duplicate" else 1
        return len(set(entry.challenger_ids)) * per_bot * rotations

    def build(self, entry: Entry, seed: int) -> list[Table]:
        return gauntlet(
            sorted(set(entry.challenger_ids)),
            entry.field,
            entry.seats_per_match,
            entry.matches_per_bot or 0,
            seed=seed,
            deal=entry.deal,
        )

    def parameter_text(self, entry: Entry) -> str:
        budget = _plural(entry.matches_per_bot, "match", "matches")
        if entry.sprt is not None:
            return f"up to {budget} per challenger (the stop rule ends it sooner)"
        return f"{budget} per challenger"


class Qualifier(Gauntlet):
    """A gauntlet graded by a pass rule: the challengers are the contestants, the field
    the organiser's reference bot(s); each challenger passes, fails or is pending
    (``arena.competition.grading``).  A ``stop_rule`` pass rule needs ``sprt``."""

    name = "qualifier"
    title = "Qualifier"
    summary = "challenger_ids against reference bots, each graded pass or fail by pass_rule"
    hint = (
        "the contestants you tick below as challengers play against your reference bots "
        "(the others), and each one passes or fails by the pass rule."
    )
    fields = (
        Field(
            "matches_per_bot",
            "Matches per contestant",
            "how many matches each contestant plays against the reference bots at most",
        ),
        Field("challenger_ids", "Contestants", "the bots graded against the reference bots"),
        Field(
            "pass_rule",
            "Pass rule",
            'how a contestant passes: {"kind": "score", "min_score": 0.8} (mean score), '
            '{"kind": "consecutive", "wins": 8, "of": 10} (wins in consecutive matches) or '
            '{"kind": "stop_rule"} (the stop rule accepts H1; needs sprt)',
        ),
        Field("sprt", "Stop rule", "stop each contestant once decided", required=False),
    )

    def check(self, entry: Entry) -> None:
        if entry.pass_rule is None:
            raise FormatError("a qualifier needs a pass_rule")
        try:
            entry.pass_rule.check()
        except GradingError as exc:
            raise FormatError(f"pass_rule: {exc}") from None
        if entry.pass_rule.kind == "stop_rule" and entry.sprt is None:
            raise FormatError("the stop_rule pass rule needs sprt, the stop rule it follows")
        self._check_challengers(entry)

    def parameter_text(self, entry: Entry) -> str:
        text = super().parameter_text(entry).replace("challenger", "contestant")
        if entry.pass_rule is None:
            return text
        return f"{text}, pass: {entry.pass_rule.text()}"


# every format, by name, in the order they are offered
FORMATS: dict[str, Format] = {
    f.name: f for f in (RoundRobin(), Balanced(), Gauntlet(), Qualifier())
}
DEFAULT_FORMAT = "round_robin"
# every parameter some format takes, by name
FORMAT_FIELDS = tuple(dict.fromkeys(f.name for fmt in FORMATS.values() for f in fmt.fields))


def get_format(name: str) -> Format:
    """The registered format, else a ``FormatError`` listing them."""
    found = FORMATS.get(name) if isinstance(name, str) else None
    if found is None:
        raise FormatError(f"format must be one of {', '.join(FORMATS)}, not {name!r}")
    return found


# -- size and balance -----------------------------------------------------------------------
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
    """How many matches a format will schedule, without building it, for a size limit
    checked before any work (``n_bots`` is the field of a gauntlet).  Refuses what the
    builder would refuse, with the same messages."""
    fmt = get_format(format)
    # stand-in ids: only their numbers count (challengers first, then the field)
    challengers = tuple(range(-n_challengers, 0))
    entry = Entry(
        bot_ids=challengers + tuple(range(1, n_bots + 1)),
        seats_per_match=seats_per_match,
        deal=deal,
        games_per_pairing=games_per_pairing,
        matches_per_bot=matches_per_bot,
        challenger_ids=challengers,
    )
    return fmt.count(entry)


def balance(
    tables: Sequence[Table],
    bot_ids: Iterable[int],
    seats_per_match: int,
    *,
    challenger_ids: Iterable[int] = (),
) -> Balance:
    """Matches per bot, seat spread and pair meetings of a schedule.  For a gauntlet the
    first two are its challengers' (what it promises them) and the pairs are its
    challenger-field pairs."""
    bots = sorted(set(bot_ids) | set(challenger_ids))
    index = {bot: i for i, bot in enumerate(bots)}
    n = len(bots)
    if not n:
        return Balance((0, 0), 0, (0, 0))
    k = seats_per_match
    # one row of bot indices per table; counted with bincount (a hundred thousand tables
    # in a fraction of a second, where a loop over them took seconds)
    seated = np.array([[index[b] for b in table.seats] for table in tables], dtype=np.int64)
    seated = seated.reshape(len(tables), k)
    in_seat = np.bincount((seated * k + np.arange(k)).ravel(), minlength=n * k).reshape(n, k)
    met = np.bincount(
        (seated[:, :, None] * n + seated[:, None, :]).ravel(), minlength=n * n
    ).reshape(n, n)
    challengers = sorted({index[b] for b in challenger_ids})
    rows = challengers or list(range(n))
    played = in_seat[rows].sum(axis=1)
    spread = int((in_seat[rows].max(axis=1) - in_seat[rows].min(axis=1)).max())
    if challengers:
        chosen = set(challengers)
        field = [i for i in range(n) if i not in chosen]
        pairs = met[np.ix_(challengers, field)].ravel()
    else:
        pairs = met[np.triu_indices(n, 1)]
    return Balance(
        (int(played.min()), int(played.max())),
        spread,
        (int(pairs.min()), int(pairs.max())) if len(pairs) else (0, 0),
    )


# -- the stop rule --------------------------------------------------------------------------
@dataclass(frozen=True)
class Sprt:
    """H0: the challenger is at most ``elo0`` better than the field; H1: at least
    ``elo1``.  alpha = P(accept H1 | H0), beta = P(accept H0 | H1).  With more than two
    seats the Elo is pairwise (Bradley-Terry): the score is the share of the field
    opponents at the table that the challenger finished above."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def bounds(self) -> tuple[float, float]:
        """(lower, upper) log-likelihood-ratio bounds; refuses an impossible test."""
        if not (0 < self.alpha <= 0.5 and 0 < self.beta <= 0.5):
            raise FormatError("alpha and beta must be above 0 and at most 0.5")
        if not self.elo1 > self.elo0:
            raise FormatError("elo1 must be greater than elo0")
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)


def expected_score(elo: float) -> float:
    """The score expected against an opponent ``elo`` points weaker."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


# The observed variance is pulled towards that of a fair coin (the largest a score in
# [0, 1] can have) by this many pseudo-observations: two wins in a row have no variance,
# yet they are no proof.  A plain floor (say 1e-6) would pass a challenger after its
# first few wins, whatever alpha says.
PRIOR_OBSERVATIONS = 4
PRIOR_VARIANCE = 0.25


def sprt_llr(n: int, total: float, total_sq: float, sprt: Sprt) -> float:
    """The generalised log-likelihood ratio of H1 against H0 after ``n`` scores in [0, 1]
    with this sum and sum of squares (Van den Bergh's normal approximation, as fishtest
    uses): ``n (s1 - s0) (2 mean - s0 - s1) / (2 var)``, s0 and s1 the scores expected
    at elo0 and elo1.  Fewer than two scores say nothing (0.0)."""
    if n < 2:
        return 0.0
    mean = total / n
    observed = max(total_sq / n - mean * mean, 0.0)
    var = (n * observed + PRIOR_OBSERVATIONS * PRIOR_VARIANCE) / (n + PRIOR_OBSERVATIONS)
    s0, s1 = expected_score(sprt.elo0), expected_score(sprt.elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def sprt_decision(llr: float, sprt: Sprt) -> str | None:
    """ "H1" (better by elo1 or more: the challenger passed), "H0" (it failed) or None
    (play on)."""
    lower, upper = sprt.bounds()
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None
