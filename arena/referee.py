"""The referee: drives one match of any registered game with a list of bot clients.

It knows games only through the engine contract (``arena.games.base``).  For every
request it asks that seat's client, checks the answer against the legal list itself, and
on any fault plays the request's default action and counts a strike.  A bot that reaches
``max_strikes`` plays the rest of the match on default actions and ranks below every bot
that did not; a bot that forfeited (not one usable answer in the match) ranks below
those, tied with any other that forfeited.  A fault never stops the match.

The match record holds everything needed to re-simulate the match (seed, options,
players, every applied answer) plus what happened (events with their visibility, each
decision's latency and fault, the outcome).  It is compact (format 2): a step is the
list of its decisions, each ``{"seat", "kind", "action", "latency_ms"}`` plus ``"fault"``
and its ``"cause"`` (``BotFault.cause``) when the default action was played, and
``"memo"`` when the bot left one; the answers applied at a step are the decisions'
actions, stored once.  A seat that struck out is no longer asked: its decisions have a
fault and no latency.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.games import get_game
from arena.games.base import (
    Action,
    Game,
    Outcome,
    Request,
    State,
    competition_ranks,
    find_legal,
)
from arena.games.policy import Policy

RECORD_FORMAT = 2
MEMO_CAP = 256  # characters of a bot's memo kept in the replay


EXCERPT_CAP = 200  # characters of a refused answer kept with its fault


def excerpt(data: Any) -> str:
    """What a bot said, as text of at most EXCERPT_CAP characters: bytes decoded with
    replacement, anything else written as JSON (so ``5`` and ``"5"`` differ)."""
    if isinstance(data, bytes | bytearray):
        text = bytes(data[: EXCERPT_CAP * 4]).decode("utf-8", "replace")
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, default=repr)[: EXCERPT_CAP + 1]
        except (TypeError, ValueError, RecursionError):
            text = repr(data)[: EXCERPT_CAP + 1]
    return text if len(text) <= EXCERPT_CAP else text[: EXCERPT_CAP - 1] + "\u2026"


class BotFault(Exception):
    """A bot that did not give a usable answer; ``kind`` names the fault, the other
    fields say what caused it: ``detail`` in words, the HTTP ``status`` of the answer,
    the bytes ``received`` of it, an ``excerpt`` of what was refused and the ``error``
    (the exception class) that ended the exchange, as far as each is known."""

    def __init__(
        self,
        kind: str,
        detail: str = "",
        *,
        status: int | None = None,
        received: int | None = None,
        excerpt: str | None = None,
        error: str | None = None,
    ):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        self.status = status
        self.received = received
        self.excerpt = excerpt
        self.error = error

    def cause(self) -> dict[str, Any]:
        """The record of the cause: the fields that are known (``detail`` always)."""
        cause: dict[str, Any] = {"detail": self.detail or self.kind}
        for key in ("status", "received", "excerpt", "error"):
            value = getattr(self, key)
            if value is not None:
                cause[key] = value
        return cause


class MatchAbandoned(Exception):
    """The match was told to stop (its worker lost the lease on it): nothing to record."""


class MatchTimeLimit(Exception):
    """The match took longer than the referee's time limit (a backstop)."""


class Client(Protocol):
    name: str

    def start(self, info: dict[str, Any]) -> None: ...

    def act(self, payload: dict[str, Any]) -> Any: ...

    def end(self, info: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class PolicyClient:
    """An in-process policy behind the client interface (house bots, tests)."""

    def __init__(self, policy: Policy, name: str | None = None):
        self.policy = policy
        self.name = name or policy.name

    def start(self, info: dict[str, Any]) -> None:
        self.policy.start(info)

    def act(self, payload: dict[str, Any]) -> Any:
        return {"action": self.policy.act(payload["view"], payload["legal_actions"])}

    def end(self, info: dict[str, Any]) -> None:
        self.policy.end(info)

    def close(self) -> None:
        pass


def policy_rng(seed: int, seat: int) -> random.Random:
    """The generator of an in-process policy: fixed by the match seed and the seat."""
    return random.Random(f"policy:{seed}:{seat}")


@dataclass
class MatchRecord:
    match_id: str
    game: str
    seed: int
    options: dict[str, Any]
    players: list[str]
    steps: list[list[dict[str, Any]]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    strikes: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "match_id": self.match_id,
            "game": self.game,
            "seed": self.seed,
            "options": self.options,
            "players": self.players,
            "steps": self.steps,
            "events": self.events,
            "outcome": self.outcome,
            "strikes": self.strikes,
        }


class Referee:
    def __init__(
        self, max_strikes: int = 3, deadline_ms: int = 2000, time_limit: float | None = None
    ):
        self.max_strikes = max_strikes
        self.deadline_ms = deadline_ms
        self.time_limit = time_limit  # seconds a match may take; None: no limit

    def run(
        self,
        game_id: str,
        clients: Sequence[Client],
        seed: int,
        options: Mapping[str, Any] | None = None,
        match_id: str = "local",
        stop: threading.Event | None = None,
        on_step: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> MatchRecord:
        """Play a match to its end; ``stop``, once set, abandons it (``MatchAbandoned``)
        before the next step; ``on_step`` is given each step's decisions once applied
        (what a live match's audience follows)."""
        game = get_game(game_id)
        give_up_at = None if self.time_limit is None else time.monotonic() + self.time_limit
        state = game.new_state(len(clients), seed, options)
        options_json = game.options_json(state.options)
        record = MatchRecord(
            match_id=match_id,
            game=game.id,
            seed=seed,
            options=options_json,
            players=[c.name for c in clients],
            strikes=[0] * len(clients),
        )
        for seat, client in enumerate(clients):
            _quietly(
                client.start,
                {
                    "match_id": match_id,
                    "game": game.id,
                    "options": options_json,
                    "seat": seat,
                    "players": record.players,
                },
            )
        while (requests := game.pending(state)) != []:
            if stop is not None and stop.is_set():
                raise MatchAbandoned(match_id)
            if give_up_at is not None and time.monotonic() > give_up_at:
                raise MatchTimeLimit(f"the match took longer than {self.time_limit:g} s")
            self._step(game, state, clients, requests, record)
            if on_step is not None:
                on_step(record.steps[-1])
        outcome = game.outcome(state)
        assert outcome is not None
        record.outcome = self._final_outcome(outcome, record)
        record.events = [e.to_json() for e in state.events]
        for seat, client in enumerate(clients):
            _quietly(
                client.end,
                {
                    "match_id": match_id,
                    "game": game.id,
                    "seat": seat,
                    "outcome": record.outcome,
                    "view": game.view(state, seat),
                },
            )
        return record

    def _step(
        self,
        game: Game,
        state: State,
        clients: Sequence[Client],
        requests: list[Request],
        record: MatchRecord,
    ) -> None:
        step = len(record.steps)
        asked = [r for r in requests if record.strikes[r.seat] < self.max_strikes]
        payloads = {
            r.seat: {
                "match_id": record.match_id,
                "decision_id": f"{step}:{r.seat}",
                "game": game.id,
                "seat": r.seat,
                "view": game.view(state, r.seat),
                "legal_actions": r.legal_actions,
                "deadline_ms": self.deadline_ms,
            }
            for r in asked
        }
        # Over HTTP every request is sent before any answer is read, so the bots of a
        # reaction window think at the same time without a thread per request; in the
        # clients' order, so that two matches never wait on each other's connections.
        # Other clients (house bots) are asked in turn meanwhile.
        remote = sorted(
            (r for r in asked if hasattr(clients[r.seat], "begin_act")),
            key=lambda r: getattr(clients[r.seat], "order", 0),
        )
        begun = [(r, _begin(clients[r.seat], payloads[r.seat])) for r in remote]
        replies = {
            r.seat: _ask(clients[r.seat], payloads[r.seat], r)
            for r in asked
            if not hasattr(clients[r.seat], "begin_act")
        }
        for r, (finish, started) in begun:
            replies[r.seat] = _judge(finish, r, started)
        answers: dict[int, Action] = {}
        decisions = []
        for r in requests:
            reply = replies.get(r.seat)
            if reply is None:
                decision = {
                    "seat": r.seat,
                    "kind": r.kind,
                    "action": r.default_action,
                    "fault": "struck_out",
                }
            else:
                action, latency_ms, fault, memo = reply
                decision = {
                    "seat": r.seat,
                    "kind": r.kind,
                    "action": action,
                    "latency_ms": round(latency_ms, 3),
                }
                if fault is not None:
                    record.strikes[r.seat] += 1
                    decision["action"] = r.default_action
                    decision["fault"] = fault.kind
                    decision["cause"] = fault.cause()
                if memo is not None:
                    decision["memo"] = memo
            answers[r.seat] = decision["action"]
            decisions.append(decision)
        game.apply(state, answers)
        record.steps.append(decisions)

    def _final_outcome(self, outcome: Outcome, record: MatchRecord) -> dict[str, Any]:
        """The match's ranks, faults first: every seat that answered as asked ranks above
        every struck-out seat (``max_strikes`` reached), and those above every seat that
        forfeited (asked, and not one usable answer).  The first two keep the game's
        order among themselves; forfeited seats tie for last, since the default actions
        played for them are not their play.  ``game_ranks`` keeps what the game said."""
        result = outcome.to_json()
        seats = range(len(record.strikes))
        asked, answered = [False] * len(seats), [False] * len(seats)
        for step in record.steps:
            for decision in step:
                asked[decision["seat"]] = True
                if "fault" not in decision:
                    answered[decision["seat"]] = True
        forfeited = [asked[seat] and not answered[seat] for seat in seats]
        struck_out = [record.strikes[seat] >= self.max_strikes for seat in seats]
        if any(forfeited) or any(struck_out):
            result["game_ranks"] = list(outcome.ranks)
            result["ranks"] = competition_ranks(
                [
                    (2, 0) if forfeited[seat] else (int(struck_out[seat]), outcome.ranks[seat])
                    for seat in seats
                ]
            )
        result["struck_out"] = [seat for seat in seats if struck_out[seat]]
        result["forfeited"] = [seat for seat in seats if forfeited[seat]]
        return result


def _ask(
    client: Client, payload: dict[str, Any], request: Request
) -> tuple[Action, float, BotFault | None, str | None]:
    return _judge(lambda: client.act(payload), request, time.perf_counter())


def _begin(client: Any, payload: dict[str, Any]) -> tuple[Callable[[], Any], float]:
    """Send the request now; returns the call that reads the answer (or raises what
    failed) and when the request left (``perf_counter``): the bot's time starts there."""
    started = time.perf_counter()
    try:
        exchange = client.begin_act(payload)
    except Exception as exc:  # judged like any failure of the exchange

        def failed(error: Exception = exc) -> Any:
            raise error

        return failed, started
    return (lambda: client.finish_act(exchange)), getattr(exchange, "started", started)


def _judge(
    answer: Any, request: Request, started: float
) -> tuple[Action, float, BotFault | None, str | None]:
    """Call ``answer()`` and judge what the bot said: (action, latency in ms, fault or
    None, memo or None).  Never raises."""
    fault: BotFault | None = None
    action: Action = request.default_action
    memo: str | None = None
    try:
        reply = answer()
        if not isinstance(reply, dict) or "action" not in reply:
            raise BotFault(
                "bad_answer",
                "the answer must be an object with an 'action'",
                excerpt=excerpt(reply),
            )
        legal = find_legal(reply["action"], request.legal_actions)
        if legal is None:
            raise BotFault(
                "illegal_action",
                "the action is not in legal_actions",
                excerpt=excerpt(reply["action"]),
            )
        action = legal
        if isinstance(reply.get("memo"), str):
            memo = reply["memo"][:MEMO_CAP]
    except BotFault as exc:
        fault = exc
    except Exception as exc:  # a house bot's bug is a fault like any other
        name = type(exc).__name__
        fault = BotFault(f"error: {name}", str(exc)[:EXCERPT_CAP], error=name)
    return action, (time.perf_counter() - started) * 1000.0, fault, memo


def _quietly(call: Any, info: dict[str, Any]) -> None:
    """/start and /end: their answers are ignored and their failures are not strikes."""
    with contextlib.suppress(Exception):
        call(info)
