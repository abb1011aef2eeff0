"""Generic checks of the engine contract: run for every registered game by
tests/test_contract.py, and reused by each game's own tests.

- ``random_matches``: random play; cards conserved at every step, every request has a
  legal action and a legal default, every view is JSON and passes the leak oracle, the
  outcome is well formed, the match ends.
- ``LeakOracle``: the rule that no seat (and no spectator) is ever shown a card the game's
  rules keep from it, checked by an oracle that does not trust the engine.  Each game has
  a ``LeakTable`` of its own in tests/support/leak_tables.py, written from the rule
  documents: which event types exist and who may see their cards (an unlisted type, a
  private-by-rule event tagged for more seats, or a card under a key the entry does not
  allow all fail), where the cards lie in the true state, which locations are public or a
  seat's own, what each action lets a seat see, and where a view may show a card.  The
  oracle tracks knowledge per location: a seat knows the cards a rule showed it at a
  location only while the same physical cards lie there (a blind swap, a reshuffle or a
  new deal makes them unknown).  Every string anywhere in a view or an event, keys too, is
  matched against the game's card identities: in a view each one must stand where the
  table locates a card, and name a card that lies there and that the seat may know.
- ``check_determinism``: a recorded match replays to the same events, and the global
  ``random`` module has no say.
- ``check_bad_input``: wrong seat, malformed or unlisted actions raise IllegalAction and
  leave the state exactly as it was.
"""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from arena.games.base import Event, Game, IllegalAction, State

MAX_STEPS = 200_000


def card_names(obj: Any) -> set[str]:
    """Every card identity named under the keys ``card`` and ``cards`` of a JSON value (for
    a game-specific oracle that knows its events put cards there)."""
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


# -- the leak oracle ------------------------------------------------------------------------

Location = Hashable
Path = tuple[Any, ...]
# from an event's data, the whole log and the event's index in it: the seats that may see
# the cards the event names
Audience = Callable[[Mapping[str, Any], Sequence[Event], int], Collection[int]]
WORD = "a word of the game"  # what ``LeakTable.locate`` returns for a string that is no card


class Leak(AssertionError):
    """The leak oracle's failure: a seat is shown a card the rules do not let it see there,
    or an event or a view holds a card where the test's table classifies none."""


@dataclass(frozen=True)
class Seen:
    """Who the rules let see the cards of one event type (an entry of a LeakTable).

    ``card_keys``: the event's top-level keys under which it may name cards (at any depth);
    a card anywhere else in the event fails.  ``audience``: None when the rules make the
    event's cards public; else the seats that may see them, and a copy of the event that
    names a card may go to those seats only (a copy that names none, such as the public
    half of a split event, may go to anyone)."""

    rule: str
    card_keys: frozenset[str] = frozenset()
    audience: Audience | None = None


def public(rule: str, *card_keys: str) -> Seen:
    return Seen(rule, frozenset(card_keys))


def private(rule: str, audience: Audience, *card_keys: str) -> Seen:
    return Seen(rule, frozenset(card_keys), audience)


@dataclass(slots=True)
class Step:
    """What the oracle hands ``LeakTable.learned`` after each step of a match."""

    requests: Sequence[Any]  # the requests answered (in the game's priority order)
    answers: Mapping[int, Any] | None  # None before the first answer
    before: Mapping[Location, tuple[Any, ...]]  # the truth at the previous update
    after: Mapping[Location, tuple[Any, ...]]  # the truth now
    new_deal: bool
    knew: Callable[[int, Location], bool]  # seat knew the location's cards before the step


class LeakTable:
    """One game's rules of visibility, owned by the tests (tests/support/leak_tables.py), never
    taken from the engine.  A game's table says:

    - ``identities``: every string that names a card of the game (all decks);
    - ``events``: event type -> ``Seen``; a type missing here fails, so that a new event
      type is classified by a person;
    - ``truth``: where every card that matters lies now, read from the state: location ->
      the cards there (physical tokens, compared to tell a moved card);
    - ``open_to``: whether a location is public or the seat's own (always known to it);
    - ``learned``: which seats saw which locations in a step, by the rules (the actions
      answered and the truth, never the engine's visibility tags or its bookkeeping of
      what seats know);
    - ``locate``: which location a card string at a view path claims to show, ``WORD``
      for a game word that is no card (Cactus Game's phase ``stop``), None when the table
      knows no card there (all the strings of one list share the location of the first);
      ``embedded``: the view paths holding copies of public events.
    """

    game_id: str = ""
    identities: frozenset[str] = frozenset()
    events: Mapping[str, Seen] = {}
    embedded: frozenset[Path] = frozenset()

    def truth(self, state: Any, memo: dict[Any, Any]) -> dict[Location, tuple[Any, ...]]:
        raise NotImplementedError

    def names(self, state: Any, tokens: tuple[Any, ...]) -> Counter[str]:
        """The card identities of the physical ``tokens`` (here, tokens are names)."""
        return Counter(tokens)

    def deal(self, state: Any) -> Hashable:
        """Changes at each new deal: every card is gathered and shuffled again."""
        return 0

    def open_to(self, state: Any, seat: int, location: Location) -> bool:
        raise NotImplementedError

    def witness(self, state: Any, events: list[dict[str, Any]], memo: dict[Any, Any]) -> None:
        """Record in ``memo`` what the new events' data (never their tags) say happened,
        after checking it against the truth."""

    def learned(self, state: Any, step: Step) -> Iterable[tuple[int, Location]]:
        return ()

    def locate(self, view: Mapping[str, Any], seat: int, path: Path) -> Location | None:
        raise NotImplementedError


def leak_table(game: Game) -> LeakTable:
    from tests.support.leak_tables import TABLES  # the per-game tables import this module

    if game.id not in TABLES:
        raise Leak(f"leak: no leak table for game {game.id!r} in tests/support/leak_tables.py")
    return TABLES[game.id]


class LeakOracle:
    """What each seat may be shown, decided by the test's ``LeakTable`` from the true
    state, never from the engine's visibility tags or ``view()``.

    ``update`` (after every step) audits each new event against the table, then tracks
    knowledge per location: a seat knows a location's cards when a rule showed them to it
    (``learned``) and only while the same cards lie there; a new deal forgets everything.
    ``leaks`` then checks a view: every card string anywhere in it (keys too) must stand
    where the table locates a card, and at each location a view may name only the cards
    that lie there and that the seat may know (public, its own, or seen and unmoved).
    The view's events must be exactly the (audited) events the seat observed."""

    def __init__(self, game: Game, n_players: int, table: LeakTable | None = None):
        self.table = table or leak_table(game)
        self.identities = self.table.identities
        # one more than the seats: the spectator, who holds no card and learns nothing
        self.spectator = n_players
        self.known: list[dict[Location, tuple[Any, ...]]] = [{} for _ in range(n_players + 1)]
        self.memo: dict[Any, Any] = {}
        self.truth: dict[Location, tuple[Any, ...]] = {}
        self.deal: Hashable = None
        self.answered_at = [0] * (n_players + 1)
        self.read = 0
        self._names: dict[Location, tuple[tuple[Any, ...], Counter[str]]] = {}
        self._public_ids: set[int] = set()  # ids of logged events fit to show to anyone
        self._state: Any = None

    # -- after every step ------------------------------------------------------------------
    def update(
        self,
        state: State,
        requests: Sequence[Any] = (),
        answers: Mapping[int, Any] | None = None,
    ) -> None:
        table, log = self.table, state.events
        new = range(self.read, len(log))
        for i in new:
            self._audit(log, i)
        deal = table.deal(state)
        new_deal = deal != self.deal
        if new_deal:
            self.deal = deal
            self.memo.clear()
            for known in self.known:
                known.clear()
        table.witness(state, [log[i].data for i in new], self.memo)
        after = table.truth(state, self.memo)
        step = Step(requests, answers, self.truth, after, new_deal, self._knew)
        gains = list(table.learned(state, step))
        for known in self.known:  # a card moved: where it was says nothing now
            for location in [loc for loc, cards in known.items() if after.get(loc) != cards]:
                del known[location]
        for seat, location in gains:
            if location in after:
                self.known[seat][location] = after[location]
        self.truth = after
        self.read = len(log)
        if new_deal:
            self._names = {}
        self._state = state

    def _knew(self, seat: int, location: Location) -> bool:
        return location in self.known[seat] or (
            location in self.truth and self.table.open_to(self._state, seat, location)
        )

    def answered(self, state: State, seats: Iterable[int]) -> None:
        for seat in seats:
            self.answered_at[seat] = len(state.events)

    # -- events ------------------------------------------------------------------------------
    def _event_cards(self, data: Mapping[str, Any], rule: Seen, kind: Any) -> list[str]:
        names: list[str] = []
        identities = self.identities
        for key, value in data.items():
            if key == "type":
                continue  # the table's key, classified by the table itself
            if key in identities:
                raise Leak(f"leak: {kind} event has the card {key!r} as a key")
            found = _card_strings(value, identities)
            if found and key not in rule.card_keys:
                raise Leak(
                    f"leak: {kind} event names {sorted(found)} under {key!r}; its table "
                    f"entry ({rule.rule}) allows cards only under {sorted(rule.card_keys)}"
                )
            names += found
        return names

    def _rule(self, kind: Any) -> Seen:
        rule = self.table.events.get(kind)
        if rule is None:
            raise Leak(
                f"leak: event type {kind!r} is not in the {self.table.game_id} leak table: "
                "classify it (who may see it, which keys name cards)"
            )
        return rule

    def _audit(self, log: Sequence[Event], i: int) -> None:
        event = log[i]
        kind = event.data.get("type")
        rule = self._rule(kind)
        names = self._event_cards(event.data, rule, kind)
        if not names or rule.audience is None:
            # a view may copy it as a public record (the log keeps it, so its id is its own)
            self._public_ids.add(id(event.data))
        else:
            allowed = frozenset(rule.audience(event.data, log, i))
            if event.to is None or not event.to <= allowed:
                shown = "everyone" if event.to is None else f"seats {sorted(event.to)}"
                raise Leak(
                    f"leak: {kind} event {i} naming {sorted(names)} is shown to {shown}, but "
                    f"only seats {sorted(allowed)} may see it ({rule.rule})"
                )

    def _audit_copy(self, seat: int, data: Any, path: Path) -> None:
        """A view's copy of a public event (a play of this trick...) shown to ``seat``."""
        if id(data) in self._public_ids:
            return  # the very event audited in the log
        if type(data) is not dict:
            raise Leak(f"leak: seat {seat} is shown {data!r} at {_where(path)} as an event")
        kind = data.get("type")
        rule = self._rule(kind)
        names = self._event_cards(data, rule, kind)
        if names and rule.audience is not None:
            raise Leak(
                f"leak: seat {seat} is shown the {kind} event naming {sorted(names)} at "
                f"{_where(path)} as public; {rule.rule} makes its cards private"
            )

    # -- views -------------------------------------------------------------------------------
    def _entitled(self, seat: int, location: Location) -> Counter[str]:
        cards = self.truth.get(location)
        if cards is None:
            return Counter()
        if not (
            self.known[seat].get(location) == cards
            or self.table.open_to(self._state, seat, location)
        ):
            return Counter()
        cached = self._names.get(location)  # kept while the same cards lie there
        if cached is not None and cached[0] == cards:
            return cached[1]
        names = self.table.names(self._state, cards)
        self._names[location] = (cards, names)
        return names

    def leaks(
        self, state: State, seat: int, view: Mapping[str, Any], *, events: bool = True
    ) -> list[str]:
        """What is wrong with ``view`` for ``seat`` (empty when nothing leaks); call
        ``update`` first, on the same state.  ``events=False`` skips the check that the
        view's events are exactly those the seat observed (for what holds no events, such
        as an observation's explanation)."""
        assert state is self._state and self.read == len(state.events), "update first"
        problems: list[str] = []
        identities, table = self.identities, self.table
        embedded = table.embedded
        claims: dict[tuple[Location, Path], list[str]] = {}
        problems += [f"seat {seat} is shown {key!r} as a key" for key in view if key in identities]
        stack: list[tuple[Any, Path]] = [
            (value, (key,))
            for key, value in view.items()
            if key != "events" and type(value) in (str, dict, list)
        ]

        def claim(names: list[str], path: Path) -> None:
            where = table.locate(view, seat, path)
            if where is None:
                problems.append(
                    f"seat {seat} is shown {names} at {_where(path)}, where the "
                    f"{table.game_id} leak table shows no card"
                )
            elif where is not WORD:
                group = (where, path[:-1])
                if group in claims:
                    claims[group] += names
                else:
                    claims[group] = names

        while stack:
            item, path = stack.pop()
            kind = type(item)
            if kind is str:
                if item in identities:
                    claim([item], path)
            elif kind is dict:
                if embedded and path in embedded:
                    self._audit_copy(seat, item, path)
                    continue
                for key, value in item.items():
                    if key in identities:
                        problems.append(f"seat {seat} is shown {key!r} as a key at {path}")
                    inner = type(value)
                    if inner is str:
                        if value in identities:
                            claim([value], (*path, key))
                    elif inner is dict or inner is list:
                        stack.append((value, (*path, key)))
            elif kind is list and item:
                if embedded and path in embedded:
                    for data in item:
                        self._audit_copy(seat, data, path)
                    continue
                # the strings of one list claim one location: the table locates the list's
                # first card string for all of them
                names: list[str] = []
                if type(item[0]) not in (dict, list):
                    try:  # a list of scalars, the common case
                        names = [value for value in item if value in identities]
                    except TypeError:  # it holds dicts or lists after all
                        names = []
                    else:
                        if names:
                            claim(names, (*path, item.index(names[0])))
                        continue
                for index, value in enumerate(item):
                    inner = type(value)
                    if inner is str:
                        if value in identities:
                            if not names:
                                first = index
                            names.append(value)
                    elif inner is dict:  # walked here: a list of small dicts is common
                        for key, scalar in value.items():
                            if key in identities:
                                problems.append(
                                    f"seat {seat} is shown {key!r} as a key at {(*path, index)}"
                                )
                            inner = type(scalar)
                            if inner is str:
                                if scalar in identities:
                                    claim([scalar], (*path, index, key))
                            elif inner is dict or inner is list:
                                stack.append((scalar, (*path, index, key)))
                    elif inner is list:
                        stack.append((value, (*path, index)))
                if names:
                    claim(names, (*path, first))
        for (location, where), named in claims.items():
            entitled = self._entitled(seat, location)
            if len(named) == 1:
                if entitled[named[0]]:
                    continue
                extra = named
            elif len(distinct := set(named)) == len(named) and entitled.keys() >= distinct:
                continue  # no name twice, each one entitled: the common case
            else:
                counted = Counter(named)
                extra = sorted(
                    Counter(
                        {n: c - entitled[n] for n, c in counted.items() if c > entitled[n]}
                    ).elements()
                )
            if extra:
                problems.append(
                    f"seat {seat} is shown {extra} at {_where(where)} "
                    f"({location}): cards it may not know there"
                )
        if not events:
            return problems
        if seat == self.spectator:
            if "events" in view:
                problems.append("a spectator view carries events")
            return problems
        observed = [e.data for e in state.events[self.answered_at[seat] :] if e.visible_to(seat)]
        if view.get("events") != observed:
            problems.append(f"the events of seat {seat} are not exactly those it observed")
        return problems

    def check(self, state: State, seat: int, view: Mapping[str, Any]) -> None:
        problems = self.leaks(state, seat, view)
        if problems:
            raise Leak("leak: " + "; ".join(problems))


def _card_strings(value: Any, identities: frozenset[str]) -> list[str]:
    """The card identities among every string of a JSON value, keys included."""
    kind = type(value)
    if kind is str:
        return [value] if value in identities else []
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            if item in identities:
                found.append(item)
        elif kind is dict:
            for key, inner in item.items():
                if key in identities:
                    found.append(key)
                stack.append(inner)
        elif kind is list:
            stack.extend(item)
    return found


def _where(path: Path) -> str:
    return "/".join(map(str, path)) or "the top"


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
    on_view: Callable[[LeakOracle, State, int, dict[str, Any]], None] | None = None,
) -> tuple[State, list[dict[int, Any]]]:
    """One random match with every generic check; returns the state and the answers.
    ``on_view(oracle, state, seat, view)`` is called with every seat's view that passed
    the oracle (needs ``oracle``)."""
    state = game.new_state(n_players, seed, options)
    chooser = random.Random(f"chooser:{seed}")
    initial = sorted(game.all_cards(state))
    leak = LeakOracle(game, n_players) if oracle else None
    history: list[dict[int, Any]] = []
    requests: list[Any] = []
    answers: dict[int, Any] | None = None
    for _ in range(MAX_STEPS):
        if leak is not None:
            leak.update(state, requests, answers)
        if game.outcome(state) is not None:
            assert game.pending(state) == []
            check_outcome(game, state)
            if leak is not None:  # the final views every seat gets with the outcome
                for seat in range(n_players):
                    view = game.view(state, seat)
                    json.dumps(view)
                    leak.check(state, seat, view)
                    if on_view is not None:
                        on_view(leak, state, seat, view)
            return state, history
        check_requests(game, state)
        requests = game.pending(state)
        assert requests, "the match is not over but nobody is asked to act"
        for r in requests:
            view = game.view(state, r.seat)
            json.dumps(view)
            if leak is not None:
                leak.check(state, r.seat, view)
                if on_view is not None:
                    on_view(leak, state, r.seat, view)
        if leak is not None:  # what a live match's audience is shown
            view = game.spectator_view(state)
            json.dumps(view)
            leak.check(state, leak.spectator, view)
        answers = {r.seat: chooser.choice(r.legal_actions) for r in requests}
        if leak is not None:
            leak.answered(state, answers)
        game.apply(state, answers)
        history.append(answers)
        assert sorted(game.all_cards(state)) == initial, f"cards changed at step {state.steps}"
        if on_step is not None:
            on_step(state)
    pytest.fail(f"the match did not end within {MAX_STEPS} steps")


def check_encoding(
    game: Game,
    encoding: Any,
    n_players: int,
    seed: int,
    options: Mapping[str, Any] | None,
    *,
    agrees: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    unnamed: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
) -> int:
    """One random match under the leak oracle, where every view a seat is given is also
    encoded (``arena.games.encoding.Encoding``) and the observation, explained back into
    view-shaped JSON, must pass the same oracle: an encoding may name a card only where
    that seat may know it.  Also checks that values lie in [0, 1], that every legal action
    of every request has an index of its own (:func:`check_indices`; ``unnamed(view,
    action)`` says which actions the game documents as having none), and, given
    ``agrees(view, explained)``, that the explanation says what the view says.  Returns
    the observations checked."""
    checked = 0

    def on_view(leak: LeakOracle, state: State, seat: int, view: dict[str, Any]) -> None:
        nonlocal checked
        values = [0.0] * encoding.size
        encoding.encode(view, values)
        assert min(values) >= 0.0 and max(values) <= 1.0, f"a value outside [0, 1] for {seat}"
        explained = encoding.explain(values)
        problems = leak.leaks(state, seat, explained, events=False)
        if problems:
            raise Leak("leak: the observation of " + "; ".join(problems))
        if agrees is not None:
            agrees(view, explained)
        for request in game.pending(state):
            if request.seat == seat:
                check_indices(encoding, view, request.legal_actions, unnamed)
        checked += 1

    play_random(game, n_players, seed, options, on_view=on_view)
    return checked


def check_indices(
    encoding: Any,
    view: dict[str, Any],
    legal_actions: list[dict[str, Any]],
    unnamed: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
) -> dict[int, dict[str, Any]]:
    """Every legal action of a request has an index (but those ``unnamed(view, action)``
    excuses, which the game's learning document lists), no two share one, each lies in
    the action space, and ``legal_indices`` maps each index back to its action.  Returns
    that map."""
    named: dict[int, dict[str, Any]] = {}
    for action in legal_actions:
        i = encoding.action_index(view, action)
        if i is None:
            assert unnamed is not None and unnamed(view, action), f"{action} has no index"
            continue
        assert 0 <= i < len(encoding.actions), f"{action}: index {i} outside the space"
        assert i not in named, f"{action} and {named[i]} share index {i}"
        named[i] = action
    assert named, "no legal action has an index"
    assert encoding.legal_indices(view, legal_actions) == named
    return named


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
