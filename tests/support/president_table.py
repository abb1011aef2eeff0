"""Président positions for the rule tests, built directly rather than reached by random
play: a table whose seats hold exactly the named hands (``table``), a later round after a
round 1 finished in a known order (``later_round``), moves in the short form of
tests/support/president.py (``step``, ``play``), and one row of a rule table (``Case``)
with what must hold after its moves (``check``).  Read by tests/test_president_rules.py
and the variant-pair tables (tests/test_president_pairs*.py)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from arena.games.president import GAME
from arena.games.president.engine import PresidentState, spec_for
from tests.support.president import PAIRS, VARIANT_RULES, VARIANTS, StackedDeck, events, short


def table(hands: list[list[str]], options: dict[str, Any] | None = None, lead: int = 1,
          rounds: int = 1) -> PresidentState:  # fmt: skip
    """Round 1 of a match of ``rounds`` rounds whose seats hold exactly ``hands``; ``lead``
    plays first.  The cards nobody holds are set aside (PR-3)."""
    state = GAME.new_state(len(hands), 0, {"rounds": rounds, **(options or {})})
    state.set_hands(hands, turn=lead)
    return state


def step(state: PresidentState, move: str) -> None:
    """One move: ``move`` by the one seat asked, or ``move@seat`` in a window (the others
    answer their default, a pass)."""
    move, _, at = move.partition("@")
    requests = GAME.pending(state)
    if at:
        chosen = [r for r in requests if r.seat == int(at)]
    else:
        chosen = [r for r in requests if move in {short(a) for a in r.legal_actions}][:1]
    offered = [(r.seat, r.kind, [short(a) for a in r.legal_actions]) for r in requests]
    assert chosen, f"{move} is not offered: {offered}"
    [request] = chosen
    actions = {short(a): a for a in request.legal_actions}
    assert move in actions, f"seat {request.seat}: {move} is not offered: {offered}"
    answers = {r.seat: r.default_action for r in requests}
    answers[request.seat] = actions[move]
    GAME.apply(state, answers)


def play(state: PresidentState, *moves: str) -> None:
    for move in moves:
        step(state, move)


def asked(state: PresidentState) -> list[tuple[int, str]]:
    return [(r.seat, r.kind) for r in GAME.pending(state)]


def legal(state: PresidentState, seat: int | None = None) -> list[str]:
    requests = GAME.pending(state)
    request = requests[0] if seat is None else next(r for r in requests if r.seat == seat)
    return [short(a) for a in request.legal_actions]


def turn(state: PresidentState) -> int:
    [request] = GAME.pending(state)
    return request.seat


def tricks(state: PresidentState) -> list[tuple[str, int]]:
    """Each trick over so far: why, and who leads the next."""
    return [(e["why"], e["leader"]) for e in events(state, "trick_over")]


def outs(state: PresidentState) -> list[tuple[int, int, bool]]:
    return [(e["seat"], e["place"], e["forbidden"]) for e in events(state, "out")]


def finish_round(state: PresidentState, order: list[int]) -> None:
    """End the round in progress in the finishing ``order``: each seat is left one card,
    stronger by its place, and ``order[0]`` leads; each plays its card on its turn in that
    order, the others pass (PV-15: each card announced as it is, and nobody calls).  (No 8,
    which PV-11 makes cut, and not the strongest rank.)"""
    assert state.top_rank is None and all(state.active), "call it between tricks, all in"
    spec = state.spec
    ranks = [spec.rank_names[r] for r in spec.order[state.reversed][:-1] if r != spec.eight]
    hands: list[list[str]] = [[] for _ in range(state.n_players)]
    for place, seat in enumerate(order):
        hands[seat] = [ranks[place] + "C"]
    state.set_hands(hands, turn=order[0])
    round_, going = state.round, 0
    while state.round == round_ and GAME.outcome(state) is None:
        requests = GAME.pending(state)
        if state.phase in ("lay", "call"):  # PV-15: the cards laid as announced, no call
            GAME.apply(state, {r.seat: r.default_action for r in requests})
            continue
        [request] = requests
        if request.seat == order[going]:
            step(state, f"{ranks[going]}x1")
            going += 1
        else:
            step(state, "pass")


def later_round(order: list[int], options: dict[str, Any] | None = None,
                rounds: int | None = 2, deal: dict[int, list[str]] | None = None
                ) -> PresidentState:  # fmt: skip
    """Round 2 of a match whose round 1 ended in ``order`` (so ``order`` is the seating of
    PR-11, Président first), dealt ``deal`` (a stacked deck) if given; ``rounds`` None
    for a ``target`` match."""
    length = {} if rounds is None else {"rounds": rounds}
    state = GAME.new_state(len(order), 0, {**length, **(options or {})})
    if deal is not None:
        state.rng = StackedDeck(state, deal)  # type: ignore[assignment]
    finish_round(state, order)
    assert state.round == 2 and state.table == order
    return state


def exchange_defaults(state: PresidentState) -> None:
    """PR-10: every seat that gives back gives its default (its weakest cards)."""
    assert state.phase == "exchange"
    GAME.apply(state, {r.seat: r.default_action for r in GAME.pending(state)})


class StackedOnce(StackedDeck):
    """A stacked deck for the next deal only; the deals after it are shuffled."""

    def shuffle(self, deck: list[int]) -> None:
        super().shuffle(deck)
        self.state.rng = random.Random(0)


class Unshuffled:
    """Stands in for a state's generator: the next deal is of the deck in its fixed order."""

    def shuffle(self, deck: list[int]) -> None:
        pass


@dataclass(frozen=True)
class Case:
    rule: str
    case: str
    options: dict[str, Any]
    hands: list[list[str]]
    moves: list[str]
    # after the moves: ``turn`` (the seat asked to play), ``legal`` (its legal actions),
    # ``asked`` (every (seat, decision) asked), ``tricks`` (every trick over: why, next
    # leader), ``outs`` (every player out: seat, place, forbidden), ``order`` and
    # ``ended_by`` (the round's result), ``reversed`` (PV-7), ``trick`` (rank, count, by),
    # (``tricks``, ``outs`` and ``wizz``: of the round the moves start in)
    # ``wizz`` (the seats each wizz skipped), ``played`` (the cards of each play),
    # ``hand`` (some seats' hands), ``view`` (some keys of some seats' views), ``phase``,
    # ``round``, ``scores`` and ``roles`` (by seat), ``results`` (some keys of the last
    # round's result)
    expect: dict[str, Any]
    lead: int = 1


def check(state: PresidentState, expect: dict[str, Any], since: int = 0) -> None:
    """What must hold (the keys of :class:`Case`); ``outs``, ``tricks`` and ``wizz`` are
    those of the round in play at event ``since`` (where the moves started) and after."""
    deal = max(i for i, e in enumerate(state.events[: since + 1]) if e.data["type"] == "deal")
    recent = [e.data for e in state.events[deal:]]

    def of(kind: str) -> list[dict[str, Any]]:
        return [e for e in recent if e["type"] == kind]

    for key, want in expect.items():
        if key == "turn":
            got: Any = turn(state)
        elif key == "legal":
            got = legal(state)
        elif key == "asked":
            got = asked(state)
        elif key == "tricks":
            got = [(e["why"], e["leader"]) for e in of("trick_over")]
        elif key == "outs":
            got = [(e["seat"], e["place"], e["forbidden"]) for e in of("out")]
        elif key == "order":
            got = state.round_results[-1]["order"] if state.round_results else None
        elif key == "ended_by":
            got = state.round_results[-1].get("ended_by") if state.round_results else None
        elif key == "reversed":
            got = state.reversed
        elif key == "trick":
            trick = GAME.view(state, 0)["trick"]
            got = (trick["rank"], trick["count"], trick["by"])
        elif key == "wizz":
            got = [e["skipped"] for e in of("wizz")]
        elif key == "played":
            got = [e["cards"] for e in events(state, "play")]
        elif key == "phase":
            got = state.phase
        elif key == "round":
            got = state.round
        elif key == "scores":  # the match's totals so far, by seat
            got = list(GAME.view(state, 0)["scores"])
        elif key == "roles":  # by seat, as the view shows them
            got = list(GAME.view(state, 0)["roles"])
        elif key == "results":  # the last finished round's result, some of its keys
            last = state.round_results[-1] if state.round_results else {}
            got = {k: last.get(k) for k in want}
        elif key == "hand":
            got = {seat: state.hand_view[seat] for seat in want}
        elif key == "view":  # {seat: {key: value}}; for "trick", some of its keys
            got = {}
            for seat, fields in want.items():
                view = GAME.view(state, seat)
                got[seat] = {
                    k: {t: view[k][t] for t in v} if k == "trick" else view[k]
                    for k, v in fields.items()
                }
        else:
            raise AssertionError(f"unknown expectation {key}")
        assert got == want, f"{key}: {got} != {want}"


def C(rule: str, case: str, options: dict[str, Any], hands: list[list[str]], moves: list[str],
      lead: int = 1, **expect: Any) -> Case:  # fmt: skip
    """One row of the table (a short name: the table has a hundred of them)."""
    return Case(rule, case, options, hands, moves, expect, lead)


# where two variants act in one play (a row's ``moment``): the play that ends a hand
# (PR-8), a play on each kind of trick (led, on a single, on a set, on a run, on a forced
# rank, on a Joker), a window out of turn, and the round: round 1, or a later round (after
# an exchange)
MOMENTS = ("finish", "lead", "single", "set", "run", "forced", "joker", "window", "round1",
           "later")  # fmt: skip


@dataclass(frozen=True)
class PairCase:
    """One row of a variant pair table: two variants of tests/support/president.VARIANTS
    on together (``pair``, and every option of both in ``options``), the rule ids it
    exercises (both variants', and any base rule the same play acts under), the moment
    where they meet (MOMENTS), a position and moves, and what must hold after them (the
    keys of :func:`check`), written from docs/rules/president.md.

    The position is one of:
    - round 1 with ``hands`` and ``lead`` (as :func:`table`);
    - round 1 as the engine deals it to ``players`` seats, the listed seats dealt exactly
      ``deal`` (``hands`` None; as :func:`dealt_round_one`): what the deal decides;
    - with ``order``, round 2 of a match whose round 1 ended in that order, dealt ``deal``
      (as :func:`later_round`);
    - with ``first`` (hands and moves), round 2 after a round 1 played out from those,
      dealt ``deal`` if given: a round 2 that starts as round 1 left it (PV-7
      ``revolution_lasts``).
    In a round 2, ``hands`` (if given) replaces the hands after the deal and its exchange."""

    pair: tuple[str, str]
    rules: tuple[str, ...]
    moment: str
    case: str
    options: dict[str, Any]
    hands: list[list[str]] | None
    moves: list[str]
    expect: dict[str, Any]
    lead: int = 1
    order: list[int] | None = None
    deal: dict[int, list[str]] | None = None
    rounds: int = 2
    first: tuple[list[list[str]], list[str]] | None = None
    players: int | None = None

    def __str__(self) -> str:
        return f"{'+'.join(self.pair)}: {self.case}"


def P(pair: str, rules: str, moment: str, case: str, options: dict[str, Any],
      hands: list[list[str]] | None, moves: list[str], *, lead: int = 1,
      order: list[int] | None = None, deal: dict[int, list[str]] | None = None,
      rounds: int = 2, first: tuple[list[list[str]], list[str]] | None = None,
      players: int | None = None, **expect: Any) -> PairCase:  # fmt: skip
    """One row (short name: the tables are long): ``pair`` "a+b", ``rules`` "PV-7 PV-11".
    (``order`` builds a round 2: the finishing order a row expects is ``results``.)"""
    a, b = pair.split("+")
    assert moment in MOMENTS, moment
    return PairCase((a, b), tuple(rules.split()), moment, case, options, hands, moves,
                    expect, lead, order, deal, rounds, first, players)  # fmt: skip


def R(pair: str, rules: str, moment: str, case: str, hands: list[list[str]] | None,
      moves: list[str], **kw: Any) -> PairCase:  # fmt: skip
    """A row of :func:`P` whose options are exactly both variants' of ``pair``."""
    a, b = pair.split("+")
    return P(pair, rules, moment, case, {**VARIANTS[a], **VARIANTS[b]}, hands, moves, **kw)


def run_pair(row: PairCase) -> None:
    """Build the row's position, play its moves and check what it expects."""
    if row.first is not None:
        hands, moves = row.first
        state = table(hands, row.options, rounds=row.rounds)
        if row.deal is not None:
            state.rng = StackedDeck(state, row.deal)  # type: ignore[assignment]
        play(state, *moves)
        assert state.round == 2, "round 1 is over"
    elif row.order is not None:
        state = later_round(row.order, row.options, rounds=row.rounds, deal=row.deal)
    elif row.deal is not None:
        assert row.hands is None, row
        players = row.players or max(row.deal) + 1
        state = dealt_round_one(players, row.options, row.deal, rounds=row.rounds)
    else:
        assert row.hands is not None, row
        state = table(row.hands, row.options, lead=row.lead, rounds=row.rounds)
    if row.hands is not None and state.round == 2:
        if state.phase == "exchange":
            exchange_defaults(state)
        state.set_hands(row.hands, turn=row.lead)
    start = len(state.events)
    play(state, *row.moves)
    check(state, row.expect, since=start)


def dealt_round_one(
    n_players: int, options: dict[str, Any], deal: dict[int, list[str]], rounds: int = 2
) -> PresidentState:
    """Round 1 as the engine deals it (PR-3, PR-4), from a deck stacked so that the listed
    seats are dealt exactly ``deal``: what the deal itself decides (a jeu blanc, PV-10; a
    putsch, PV-9; an exchange, PR-10) is judged on these hands, which ``table`` cannot do
    (it replaces the hands after the deal)."""
    o = GAME.resolve_options({"rounds": rounds, **options})
    state = PresidentState(n_players, 0, o, spec_for(o))
    state.rng = StackedDeck(state, deal)  # type: ignore[assignment]
    GAME._start_round(state)
    return state


# the variant pair tables, one file each (tests/test_president_pairs_<group>.py), by the
# first variant of their pairs (in the order of tests/support/president.VARIANTS)
PAIR_GROUPS: dict[str, tuple[str, ...]] = {
    "ranks": ("deck32", "raise_count"),
    "jokers": ("passe", "jokers"),
    "cuts": ("joker_wild", "no_twos_cut", "quitte_ou_double"),
    "finishes": ("no_finish_on_two", "revolution", "eight_clears"),
    "power": ("decks2", "tabula_rasa", "coup_d_etat", "guillotine", "putsch", "jeu_blanc",
              "wizz", "suites"),
}  # fmt: skip


def check_group(rows: list[PairCase], group: str) -> None:
    """A pair table covers every pair of its group (tests/support/president.PAIRS whose
    first variant is one of PAIR_GROUPS[group]) and no other; every row cites both of its
    variants' rule ids, plays under both variants' options, names a moment of MOMENTS, and
    is filed once."""
    mine = {k for k in PAIRS if k.split("+")[0] in PAIR_GROUPS[group]}
    assert sorted({"+".join(row.pair) for row in rows} ^ mine) == []
    for row in rows:
        a, b = row.pair
        assert {VARIANT_RULES[a], VARIANT_RULES[b]} <= set(row.rules), str(row)
        for name in (a, b):
            for option, value in VARIANTS[name].items():
                assert row.options.get(option) == value, f"{row}: {option} is not {value!r}"
        assert row.moment in MOMENTS, str(row)
    names = Counter(str(row) for row in rows)
    assert [name for name, n in names.items() if n > 1] == []
