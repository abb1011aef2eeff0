"""Président positions for the rule tests, built directly rather than reached by random
play: a table whose seats hold exactly the named hands (``table``), a later round after a
round 1 finished in a known order (``later_round``), moves in the short form of
tests/support/president.py (``step``, ``play``), and one row of a rule table (``Case``)
with what must hold after its moves (``check``).  Read by tests/test_president_rules.py
and the variant-pair tables (tests/test_president_pairs*.py)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from arena.games.president import GAME
from arena.games.president.engine import PresidentState
from tests.support.president import StackedDeck, events, short


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
    order, the others pass.  (No 8, which PV-11 makes cut, and not the strongest rank.)"""
    assert state.top_rank is None and all(state.active), "call it between tricks, all in"
    spec = state.spec
    ranks = [spec.rank_names[r] for r in spec.order[state.reversed][:-1] if r != spec.eight]
    hands: list[list[str]] = [[] for _ in range(state.n_players)]
    for place, seat in enumerate(order):
        hands[seat] = [ranks[place] + "C"]
    state.set_hands(hands, turn=order[0])
    round_, going = state.round, 0
    while state.round == round_ and GAME.outcome(state) is None:
        [request] = GAME.pending(state)
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
    # ``wizz`` (the seats each wizz skipped), ``played`` (the cards of each play),
    # ``hand`` (some seats' hands), ``view`` (some keys of some seats' views), ``phase``,
    # ``round``, ``scores`` and ``roles`` (by seat), ``results`` (some keys of the last
    # round's result)
    expect: dict[str, Any]
    lead: int = 1


def check(state: PresidentState, expect: dict[str, Any]) -> None:
    for key, want in expect.items():
        if key == "turn":
            got: Any = turn(state)
        elif key == "legal":
            got = legal(state)
        elif key == "asked":
            got = asked(state)
        elif key == "tricks":
            got = tricks(state)
        elif key == "outs":
            got = outs(state)
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
            got = [e["skipped"] for e in events(state, "wizz")]
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

    The position is round 1 with ``hands`` and ``lead`` (as :func:`table`), or, with
    ``order``, round 2 of a match whose round 1 ended in that order, dealt ``deal`` (as
    :func:`later_round`); ``hands`` then replaces the hands after that deal (and its
    exchange, when ``moves`` hold none)."""

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

    def __str__(self) -> str:
        return f"{'+'.join(self.pair)}: {self.case}"


def P(pair: str, rules: str, moment: str, case: str, options: dict[str, Any],
      hands: list[list[str]] | None, moves: list[str], *, lead: int = 1,
      order: list[int] | None = None, deal: dict[int, list[str]] | None = None,
      rounds: int = 2, **expect: Any) -> PairCase:  # fmt: skip
    """One row (short name: the tables are long): ``pair`` "a+b", ``rules`` "PV-7 PV-11"."""
    a, b = pair.split("+")
    assert moment in MOMENTS, moment
    return PairCase((a, b), tuple(rules.split()), moment, case, options, hands, moves,
                    expect, lead, order, deal, rounds)  # fmt: skip


def run_pair(row: PairCase) -> None:
    """Build the row's position, play its moves and check what it expects."""
    if row.order is None:
        assert row.hands is not None, row
        state = table(row.hands, row.options, lead=row.lead, rounds=row.rounds)
    else:
        state = later_round(row.order, row.options, rounds=row.rounds, deal=row.deal)
        if row.hands is not None:
            if state.phase == "exchange":
                exchange_defaults(state)
            state.set_hands(row.hands, turn=row.lead)
    play(state, *row.moves)
    check(state, row.expect)
