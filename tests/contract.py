"""Generic checks of the engine contract, reused by every game's tests.

- ``random_matches``: random play; cards conserved at every step, every request has a
  legal action and a legal default, every view is JSON and passes the leak oracle, the
  outcome is well formed, the match ends.
- ``LeakOracle``: the card identities a seat is entitled to know, built only from the
  visibility tags of the events it received, never from ``view()``.
- ``check_determinism``: a recorded match replays to the same events, and the global
  ``random`` module has no say.
- ``check_bad_input``: wrong seat, malformed or unlisted actions raise IllegalAction and
  leave the state exactly as it was.

Card identities: a value under a key ``card`` (a string) or ``cards`` (a list of strings)
anywhere in an event or a view names a card; so does, in a game with a
``card_vocabulary``, any string of that vocabulary wherever it stands (a key or a value).
"""

from __future__ import annotations

import json
import pickle
import random
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest

from arena.games.base import DEAL_EVENT, Game, IllegalAction, State

MAX_STEPS = 200_000


def card_names(obj: Any) -> set[str]:
    """Every card identity named anywhere in a JSON value (keys ``card`` and ``cards``)."""
    found: set[str] = set()
    stack = [obj]
    push, pop = stack.append, stack.pop
    while stack:
        item = pop()
        if type(item) is dict:
            for key, value in item.items():
                kind = type(value)
                if kind is str:
                    if key == "card":
                        found.add(value)
                elif kind is list:
                    if key == "cards":
                        found.update(c for c in value if type(c) is str)
                    push(value)
                elif kind is dict:
                    push(value)
        else:
            for value in item:
                kind = type(value)
                if kind is dict or kind is list:
                    push(value)
    return found


_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def named_cards(obj: Any, vocabulary: frozenset[str]) -> set[str]:
    """Card identities in a JSON value (which must serialise): every string of the game's
    vocabulary, keys included, wherever it stands; without one, by the key convention."""
    text = json.dumps(obj)
    if vocabulary:
        return set(_JSON_STRING.findall(text)) & vocabulary
    return card_names(obj)


class LeakOracle:
    """What each seat is entitled to see, built only from the visibility tags of the
    events, never from ``view()``:

    - the card identities revealed to the seat by the events it received since the last
      deal (a ``deal`` event gathers and reshuffles every card, so older sightings say
      nothing about where a card lies now);
    - the events the seat observed since it last answered, exactly.
    """

    def __init__(self, n_players: int, vocabulary: frozenset[str] = frozenset()):
        self.vocabulary = vocabulary
        self.entitled: list[set[str]] = [set() for _ in range(n_players)]
        self.answered_at = [0] * n_players
        self.read = 0

    def update(self, state: State) -> None:
        for event in state.events[self.read :]:
            if event.data.get("type") == DEAL_EVENT:
                for known in self.entitled:
                    known.clear()
            names = named_cards(event.data, self.vocabulary)
            if not names:
                continue
            seats = range(len(self.entitled)) if event.to is None else event.to
            for seat in seats:
                self.entitled[seat] |= names
        self.read = len(state.events)

    def answered(self, state: State, seats: Iterable[int]) -> None:
        for seat in seats:
            self.answered_at[seat] = len(state.events)

    def leaks(self, state: State, seat: int, view: Mapping[str, Any]) -> list[str]:
        """What is wrong with ``view`` for ``seat`` (empty when nothing leaks)."""
        problems = []
        rest = {k: v for k, v in view.items() if k != "events"}
        extra = named_cards(rest, self.vocabulary) - self.entitled[seat]
        if extra:
            problems.append(f"cards {sorted(extra)} never shown to seat {seat} since the deal")
        observed = [e.data for e in state.events[self.answered_at[seat] :] if e.visible_to(seat)]
        if view.get("events") != observed:
            problems.append(f"the events of seat {seat} are not exactly those it observed")
        return problems


def snapshot(state: State) -> bytes:
    """The whole state as bytes, without its caches (attributes named ``_...``, which
    reading the state may fill)."""
    data = {k: v for k, v in vars(state).items() if not k.startswith("_")}
    return pickle.dumps(data)


def check_outcome(game: Game, state: State) -> None:
    outcome = game.outcome(state)
    assert outcome is not None, "the match ended without an outcome"
    n = state.n_players
    assert len(outcome.ranks) == n and len(outcome.scores) == n
    for seat, rank in enumerate(outcome.ranks):
        better = sum(r < rank for r in outcome.ranks)
        assert rank == better + 1, f"ranks {outcome.ranks} are not competition ranks"
        assert isinstance(outcome.scores[seat], int | float)
    json.dumps(outcome.to_json())


def check_requests(game: Game, state: State) -> None:
    requests = game.pending(state)
    seats = [r.seat for r in requests]
    assert len(seats) == len(set(seats)), "a seat is asked twice in one step"
    for r in requests:
        assert 0 <= r.seat < state.n_players
        assert r.legal_actions, f"{r.kind} request of seat {r.seat} has no legal action"
        assert r.default_action in r.legal_actions
        assert json.loads(json.dumps(r.legal_actions)) == r.legal_actions


def play_random(
    game: Game,
    n_players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    *,
    oracle: bool = True,
    on_step: Any = None,
) -> tuple[State, list[dict[int, Any]]]:
    """One random match with every generic check; returns the state and the answers."""
    state = game.new_state(n_players, seed, options)
    chooser = random.Random(f"chooser:{seed}")
    initial = sorted(game.all_cards(state))
    leak = LeakOracle(n_players, game.card_vocabulary)
    history: list[dict[int, Any]] = []
    for _ in range(MAX_STEPS):
        if game.outcome(state) is not None:
            assert game.pending(state) == []
            check_outcome(game, state)
            if oracle:  # the final views every seat gets with the outcome
                leak.update(state)
                for seat in range(n_players):
                    problems = leak.leaks(state, seat, game.view(state, seat))
                    assert not problems, f"final view: {'; '.join(problems)}"
            return state, history
        check_requests(game, state)
        requests = game.pending(state)
        assert requests, "the match is not over but nobody is asked to act"
        if oracle:
            leak.update(state)
        for r in requests:
            view = game.view(state, r.seat)
            if not oracle:
                json.dumps(view)
            else:  # the oracle serialises the view too
                problems = leak.leaks(state, r.seat, view)
                assert not problems, f"step {state.steps}: {'; '.join(problems)}"
        answers = {r.seat: chooser.choice(r.legal_actions) for r in requests}
        leak.answered(state, answers)
        game.apply(state, answers)
        history.append(answers)
        assert sorted(game.all_cards(state)) == initial, f"cards changed at step {state.steps}"
        if on_step is not None:
            on_step(state)
    pytest.fail(f"the match did not end within {MAX_STEPS} steps")


def random_matches(
    game: Game, n_players: int, options: Mapping[str, Any] | None, seeds: range
) -> list[State]:
    return [play_random(game, n_players, seed, options)[0] for seed in seeds]


def events_json(state: State) -> list[dict[str, Any]]:
    return [e.to_json() for e in state.events]


def check_determinism(
    game: Game, n_players: int, options: Mapping[str, Any] | None, seed: int
) -> None:
    first, history = play_random(game, n_players, seed, options, oracle=False)
    replayed = game.new_state(n_players, seed, options)
    for answers in history:
        random.seed(random.random())  # the global generator must have no say
        random.random()
        game.apply(replayed, answers)
    assert events_json(replayed) == events_json(first)
    assert game.outcome(replayed).to_json() == game.outcome(first).to_json()
    assert snapshot(replayed) == snapshot(first)


def _bad_answers(game: Game, state: State) -> Iterator[tuple[str, dict[Any, Any]]]:
    requests = game.pending(state)
    good = {r.seat: r.legal_actions[0] for r in requests}
    first = requests[0]
    some = first.legal_actions[-1]
    outsider = next((s for s in range(state.n_players) if s not in good), None)
    if outsider is not None:
        yield "a seat that is not asked", {**good, outsider: some}
    yield "a missing seat", {s: a for s, a in good.items() if s != first.seat}
    yield "a seat out of range", {**good, state.n_players: some}
    yield "a seat given as a string", {**{str(s): a for s, a in good.items()}}
    yield "not an object", {**good, first.seat: "draw"}
    yield "null", {**good, first.seat: None}
    yield "an unknown type", {**good, first.seat: {"type": "no_such_action"}}
    yield "an extra key", {**good, first.seat: {**some, "extra": 1}}
    yield "a missing key", {**good, first.seat: dict(list(some.items())[:-1])}
    for action in first.legal_actions:
        for key, value in action.items():
            if isinstance(value, int) and not isinstance(value, bool):
                for what, bad in (
                    ("a float for an int", float(value)),
                    ("a bool for an int", value == 1),
                    ("a string for an int", str(value)),
                    ("a number out of range", value + 1000),
                    ("a negative number", -1 - value),
                ):
                    if {**action, key: bad} not in first.legal_actions or what in (
                        "a float for an int",
                        "a bool for an int",
                    ):
                        yield what, {**good, first.seat: {**action, key: bad}}


def check_bad_input(
    game: Game, n_players: int, options: Mapping[str, Any] | None, seed: int, every: int = 7
) -> int:
    """At every ``every``-th step of a random match, each bad answer is refused with
    IllegalAction and the state is unchanged.  Returns how many were tried."""
    tried = 0

    def probe(state: State) -> None:
        nonlocal tried
        if state.steps % every or game.outcome(state) is not None:
            return
        before = snapshot(state)
        for what, answers in _bad_answers(game, state):
            with pytest.raises(IllegalAction):
                game.apply(state, answers)
            game.pending(state)
            assert snapshot(state) == before, f"{what} changed the state"
            tried += 1

    play_random(game, n_players, seed, options, oracle=False, on_step=probe)
    return tried
