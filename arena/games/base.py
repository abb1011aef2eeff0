"""The engine contract every game implements: the referee, the pages and the tests know
a game only through it, so a new game needs no change to the core.

A game is an object with no per-match state; a match lives in a state object that the
game creates with ``new_state`` and then only reads (``pending``, ``view``, ``outcome``)
or advances (``apply``).  All randomness of a match comes from ``state.rng``, one
``random.Random(seed)`` owned by that state.

Actions and views are plain JSON values (dicts, lists, strings, numbers, booleans and
None), so the referee can send them to bots without any conversion.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

Action = dict[str, Any]
JSON = Any

# An event of this type starts a new deal: every card is gathered and shuffled again, so
# what a seat saw before it says nothing about where a card lies now.
DEAL_EVENT = "deal"


class IllegalAction(Exception):
    """An answer the engine refuses: wrong seat, malformed, or not in the legal list.

    Raised before anything is changed: a state that raised this is exactly as it was.
    """

    def __init__(self, message: str, seat: int | None = None):
        super().__init__(message)
        self.seat = seat


class OptionsError(ValueError):
    """Options that a game cannot start with (unknown, wrong type, contradictory)."""


@dataclass(slots=True)
class Request:
    """One seat that must answer now, with what it may answer.

    ``default_action`` is one of ``legal_actions``: what the referee plays for a seat that
    did not answer in time or answered badly.  Read-only by convention: one is made per
    seat and step, and a frozen dataclass costs twice as much to make.
    """

    seat: int
    kind: str
    legal_actions: list[Action]
    default_action: Action


@dataclass(slots=True)
class Event:
    """Something that happened, and who may see it: everyone (``to is None``) or the seats
    in ``to``."""

    data: dict[str, JSON]
    to: frozenset[int] | None = None

    def visible_to(self, seat: int) -> bool:
        return self.to is None or seat in self.to

    def to_json(self) -> dict[str, JSON]:
        return {"to": "public" if self.to is None else sorted(self.to), **self.data}


@dataclass(slots=True)
class Outcome:
    """The result of a finished match.

    ``ranks[seat]`` is 1 for the best; equal results share a rank (1, 1, 3).  ``scores``
    are the game's own final scores, ``rounds`` the per-round results.
    """

    ranks: list[int]
    scores: list[float]
    rounds: list[dict[str, JSON]] = field(default_factory=list)

    def to_json(self) -> dict[str, JSON]:
        return {"ranks": list(self.ranks), "scores": list(self.scores), "rounds": self.rounds}


def first_in_priority(
    requests: list[Request], answers: Mapping[int, Action], action_type: str
) -> int | None:
    """The first seat, in the order of ``requests``, that answered ``action_type``.

    A reaction window lists its requests in the game's priority order; this is how the
    engine keeps one answer out of several given at once."""
    for request in requests:
        if answers[request.seat]["type"] == action_type:
            return request.seat
    return None


def competition_ranks(keys: list[Any]) -> list[int]:
    """Ranks 1..n from sort keys where a smaller key is better; equal keys share a rank."""
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    ranks = [0] * len(keys)
    for position, seat in enumerate(order):
        if position and keys[seat] == keys[order[position - 1]]:
            ranks[seat] = ranks[order[position - 1]]
        else:
            ranks[seat] = position + 1
    return ranks


def find_legal(action: object, legal_actions: list[Action]) -> Action | None:
    """The element of ``legal_actions`` equal to ``action``, or None.

    Equal means the same JSON value of the same JSON types: ``True`` or ``1.0`` does not
    stand for the slot ``1``.  The caller goes on with the engine's own element."""
    if type(action) is dict:
        for legal in legal_actions:
            if legal is action or (legal == action and _same_types(legal, action)):
                return legal
    return None


def _same_types(a: dict[str, JSON] | list[JSON], b: dict[str, JSON] | list[JSON]) -> bool:
    """Two equal dicts (or lists) whose values are also of the same JSON types."""
    # equal dicts may list their keys in another order: pair values by key
    pairs = ((x, b[k]) for k, x in a.items()) if type(a) is dict else zip(a, b, strict=True)
    for x, y in pairs:
        kind = type(x)
        if kind is not type(y):
            return False
        if (kind is dict or kind is list) and not _same_types(x, y):
            return False
    return True


class State:
    """What every game's state has: players, options, the match's generator and the event
    log with, per seat, the index of the first event it has not been shown yet."""

    def __init__(self, n_players: int, seed: int, options: Any):
        self.n_players = n_players
        self.seed = seed
        self.options = options
        self.rng = random.Random(seed)
        self.events: list[Event] = []
        # events[shown_upto[s]:] are what seat s observed since it last answered
        self.shown_upto = [0] * n_players
        self.steps = 0
        self.result: Outcome | None = None
        self._pending: list[Request] | None = None  # cache, cleared by every apply

    def emit(self, data: dict[str, JSON], to: Iterable[int] | None = None) -> None:
        # "to" is the visibility tag of an event's JSON form: data may not use the key
        assert "to" not in data, "an event's data may not have a 'to' key"
        self.events.append(Event(data, None if to is None else frozenset(to)))

    def events_for(self, seat: int, start: int = 0) -> list[dict[str, JSON]]:
        return [e.data for e in self.events[start:] if e.to is None or seat in e.to]


class Game:
    """Base of every game.  Subclasses set the class attributes and implement the
    abstract methods; ``apply`` validates here, then calls ``_apply`` on valid answers."""

    id: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    presets: ClassVar[Mapping[str, Mapping[str, JSON]]] = {}
    # one line per preset: what playing it is like (the API and the tournament form show it)
    preset_docs: ClassVar[Mapping[str, str]] = {}
    # Every string that names a card identity in this game's views and events, so a leak
    # oracle can find a card wherever a view puts it.  Empty: cards are found only under
    # the keys ``card`` and ``cards`` (for games whose card names are common words).
    card_vocabulary: ClassVar[frozenset[str]] = frozenset()

    # -- options -----------------------------------------------------------------------
    def resolve_options(self, options: Mapping[str, JSON] | None) -> Any:
        """Turn user options (optionally with a ``preset`` key) into the game's options
        object; raises OptionsError with a message naming the problem."""
        raise NotImplementedError

    def options_json(self, options: Any) -> dict[str, JSON]:
        """The complete options as JSON: feeding them back to ``resolve_options`` gives
        the same options (what a replay stores).  Options are a dataclass by default."""
        from arena.games.options import to_json

        return to_json(options)

    def default_options(self) -> dict[str, JSON]:
        """The complete options of a match started without any."""
        return self.options_json(self.resolve_options({}))

    def options_schema(self) -> dict[str, JSON]:
        """The JSON Schema of what ``resolve_options`` takes: each option's type, allowed
        values, default and description, and the presets (``options.json_schema``).  The
        options dataclass is the type of the default options."""
        from arena.games.options import json_schema

        return json_schema(
            type(self.resolve_options({})),
            self.presets,
            self.preset_docs,
            title=f"{self.title} options",
            defaults=self.default_options(),
        )

    def option_list(self) -> list[dict[str, JSON]]:
        """The options as a form builds its fields from them (``options.describe``)."""
        from arena.games.options import describe

        return describe(type(self.resolve_options({})), self.default_options())

    def preset_list(self) -> list[dict[str, JSON]]:
        """Each preset: its name, its one-line description and the options it sets."""
        return [
            {
                "name": name,
                "description": self.preset_docs.get(name, ""),
                "options": copy.deepcopy(dict(values)),  # the caller may change it
            }
            for name, values in self.presets.items()
        ]

    # -- the contract ------------------------------------------------------------------
    def new_state(
        self, n_players: int, seed: int, options: Mapping[str, JSON] | None = None
    ) -> State:
        raise NotImplementedError

    def pending(self, state: State) -> list[Request]:
        """Who must answer now (empty once the match is over).  Reading it changes
        nothing; it is computed once per step."""
        if state._pending is None:
            state._pending = [] if state.result is not None else self._requests(state)
        return state._pending

    def _requests(self, state: State) -> list[Request]:
        raise NotImplementedError

    def apply(self, state: State, answers: Mapping[int, Action]) -> None:
        """Validate ``answers`` (one per pending seat, each in its legal list) and apply
        them.  Raises IllegalAction and leaves the state unchanged on any bad answer."""
        requests = self.pending(state)
        if not requests:
            raise IllegalAction("the match is over: no answer is expected")
        if not isinstance(answers, Mapping):
            raise IllegalAction("answers must map seats to actions")
        expected = {r.seat for r in requests}
        for seat in answers:
            if seat not in expected:
                raise IllegalAction(f"seat {seat!r} is not asked to act now", seat)
        canonical: dict[int, Action] = {}
        for request in requests:
            if request.seat not in answers:
                raise IllegalAction(f"seat {request.seat} must answer", request.seat)
            action = answers[request.seat]
            legal = find_legal(action, request.legal_actions)
            if legal is None:
                raise IllegalAction(
                    f"seat {request.seat}: {action!r} is not a legal {request.kind} action",
                    request.seat,
                )
            canonical[request.seat] = legal
        for seat in expected:
            state.shown_upto[seat] = len(state.events)
        state.steps += 1
        state._pending = None
        self._apply(state, requests, canonical)

    def _apply(self, state: State, requests: list[Request], answers: Mapping[int, Action]) -> None:
        raise NotImplementedError

    def view(self, state: State, seat: int) -> dict[str, JSON]:
        raise NotImplementedError

    def spectator_view(self, state: State, reveal: bool = False) -> dict[str, JSON]:
        """The table for someone at no seat, shaped like a view with ``"seat": None`` and
        no ``events``: with ``reveal`` False exactly the public information (what every
        seat may know: a live match's audience); with ``reveal`` True every card face up,
        each seat's hand under ``hands`` (a finished match's replay, seen by everyone).
        Never sent to a bot."""
        raise NotImplementedError

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    # -- for tests and tools -----------------------------------------------------------
    def all_cards(self, state: State) -> list[Any]:
        """Every physical card of the match wherever it lies (conservation checks)."""
        raise NotImplementedError

    def check_players(self, n_players: int) -> None:
        if not isinstance(n_players, int) or not (
            self.min_players <= n_players <= self.max_players
        ):
            raise OptionsError(
                f"{self.id} is played by {self.min_players} to {self.max_players} players, "
                f"not {n_players!r}"
            )
