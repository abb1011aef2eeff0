"""The referee: drives one match of any registered game with a list of bot clients.

It knows games only through the engine contract (``arena.games.base``).  For every
request it asks that seat's client, checks the answer against the legal list itself, and
on any fault plays the request's default action and counts a strike.  A bot that reaches
``max_strikes`` plays the rest of the match on default actions and ranks below every bot
that did not; a bot that forfeited (not one usable answer in the match) ranks below
those, tied with any other that forfeited.  A fault never stops the match.

The seats of a step are asked at once (``settle``): each request is an ``Exchange`` with a
deadline of its own, counted from when it was sent, and its answer is taken, and its
latency stamped, when it arrives, so that in a reaction window one seat's silence or
slowness never costs another seat a strike or changes its latency.

The match record holds everything needed to re-simulate the match (seed, options,
players, every applied answer) plus what happened (events with their visibility, each
decision's latency and fault, the outcome).  It is compact (format 3): a step is the
list of its decisions, each ``{"seat", "kind", "action", "latency_ms"}`` plus ``"fault"``
and its ``"cause"`` (``BotFault.cause``) when the default action was played, ``"memo"``
when the bot left one, and ``"bank_ms"`` when the decision drew on its seat's time bank;
the answers applied at a step are the decisions' actions, stored once.  A seat that
struck out is no longer asked: its decisions have a fault and no latency.  Format 3 adds
the time bank to format 2: ``"time_bank_ms"``, each seat's bank, absent for none.

The time bank (a tournament's ``time_bank_ms``) is each seat's time, per match, to draw
on past its decisions' deadlines.  Every ``/act`` tells the bot what is left of it
(``"time_bank_ms"``, 0 without a bank) and the transports wait ``deadline_ms`` plus that
(plus their network grace) before calling a decision a timeout.  A decision answered past
``deadline_ms`` draws the overage from the bank, in whole milliseconds rounded up, and is
no fault; a timeout empties what was left.  The bank never changes what is played: a
record re-simulates from its answers alone.
"""

from __future__ import annotations

import contextlib
import math
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
from arena.match.exchanges import Call, Client, Exchange, settle
from arena.match.faults import EXCERPT_CAP, ArenaError, BotFault, excerpt

RECORD_FORMAT = 3
MEMO_CAP = 256  # characters of a bot's memo kept in the replay
DEBUG_CAP = 2048  # characters of a bot's private debug text kept per decision
LOG_CAP = 65536  # characters of a seat's private log kept per match


class MatchAbandoned(Exception):
    """The match was told to stop (its worker lost the lease on it): nothing to record."""


class MatchTimeLimit(Exception):
    """The match took longer than the referee's time limit (a backstop)."""


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


class WithheldClient:
    """A seat whose bot the arena does not ask (it was paused when the match started):
    each request is the fault ``paused`` at once, so the seat plays on default actions,
    forfeits, and the others play their match as against any bot that forfeits."""

    def __init__(self, name: str, detail: str = "the bot is paused"):
        self.name = name
        self.detail = detail

    def start(self, info: dict[str, Any]) -> None:
        pass

    def act(self, payload: dict[str, Any]) -> Any:
        raise BotFault("paused", self.detail)

    def end(self, info: dict[str, Any]) -> None:
        pass

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
    # the time bank each seat started with (None: no bank), and what each has left
    time_bank_ms: int | None = None
    banks: list[int] = field(default_factory=list)
    # each seat's private log (not in the replay: only its owner and the organisers see
    # it): entries {"step", "decision_id", "debug", "stderr"}, "step" null for what the
    # bot wrote as it started or ended
    logs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # characters each seat's log holds (so that LOG_CAP is checked without a sum)
    log_used: dict[int, int] = field(default_factory=dict, init=False, repr=False)

    def log(self, seat: int, step: int | None, debug: str | None, stderr: str) -> None:
        """Keep what a seat's bot said privately at ``step``, within ``LOG_CAP``: one
        entry per decision (its debug text and its stderr together)."""
        used = self.log_used.get(seat, 0)
        if (not debug and not stderr) or used >= LOG_CAP:
            return
        entries = self.logs.setdefault(seat, [])
        if step is not None and entries and entries[-1]["step"] == step:
            entry = entries[-1]  # the decision's debug text is there: its stderr joins it
        else:
            entry = {"step": step}
            if step is not None:
                entry["decision_id"] = f"{step}:{seat}"
            entries.append(entry)
        for key, text in (("debug", debug), ("stderr", stderr)):
            if text:
                entry[key] = text[: LOG_CAP - used]
                used += len(entry[key])
        self.log_used[seat] = used

    def to_json(self) -> dict[str, Any]:
        record = {
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
        if self.time_bank_ms:
            record["time_bank_ms"] = self.time_bank_ms
        return record


class Referee:
    def __init__(
        self,
        max_strikes: int = 3,
        deadline_ms: int = 2000,
        time_limit: float | None = None,
        time_bank_ms: int | None = None,
    ):
        self.max_strikes = max_strikes
        self.deadline_ms = deadline_ms
        self.time_limit = time_limit  # seconds a match may take; None: no limit
        # each seat's time per match past its deadlines (None or 0: no bank)
        self.time_bank_ms = time_bank_ms or None

    def run(
        self,
        game_id: str,
        clients: Sequence[Client],
        seed: int,
        options: Mapping[str, Any] | None = None,
        match_id: str = "local",
        stop: threading.Event | None = None,
        on_step: Callable[[list[dict[str, Any]]], None] | None = None,
        deadlines_ms: Sequence[int | None] | None = None,
    ) -> MatchRecord:
        """Play a match to its end; ``stop``, once set, abandons it (``MatchAbandoned``)
        before the next step; ``on_step`` is given each step's decisions once applied
        (what a live match's audience follows); ``deadlines_ms``: a seat's own deadline
        per decision where not None (else the referee's)."""
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
            time_bank_ms=self.time_bank_ms,
            banks=[self.time_bank_ms or 0] * len(clients),
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
            _take_log(record, seat, client, None)
        while (requests := game.pending(state)) != []:
            if stop is not None and stop.is_set():
                raise MatchAbandoned(match_id)
            if give_up_at is not None and time.monotonic() > give_up_at:
                raise MatchTimeLimit(f"the match took longer than {self.time_limit:g} s")
            self._step(game, state, clients, requests, record, deadlines_ms)
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
            _take_log(record, seat, client, None)
        return record

    def _step(
        self,
        game: Game,
        state: State,
        clients: Sequence[Client],
        requests: list[Request],
        record: MatchRecord,
        deadlines_ms: Sequence[int | None] | None = None,
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
                "deadline_ms": (deadlines_ms and deadlines_ms[r.seat]) or self.deadline_ms,
                "time_bank_ms": record.banks[r.seat],
            }
            for r in asked
        }
        # every seat asked at once; those that only send go first, so that remote bots
        # think while house bots compute
        exchanges = [
            (r, _exchange(clients[r.seat], payloads[r.seat]))
            for r in sorted(asked, key=lambda r: not hasattr(clients[r.seat], "begin_act"))
        ]
        settle([exchange for _, exchange in exchanges])
        replies = {r.seat: _judge(exchange, r) for r, exchange in exchanges}
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
                action, latency_ms, fault, memo, debug = reply
                record.log(r.seat, step, debug, "")
                decision = {
                    "seat": r.seat,
                    "kind": r.kind,
                    "action": action,
                    "latency_ms": round(latency_ms, 3),
                }
                drawn = _draw(record, r.seat, payloads[r.seat]["deadline_ms"], latency_ms, fault)
                if drawn:
                    decision["bank_ms"] = drawn
                if fault is not None:
                    record.strikes[r.seat] += 1
                    decision["action"] = r.default_action
                    decision["fault"] = fault.kind
                    decision["cause"] = fault.cause()
                if memo is not None:
                    decision["memo"] = memo
            answers[r.seat] = decision["action"]
            decisions.append(decision)
        for r in asked:
            _take_log(record, r.seat, clients[r.seat], step)
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


def _draw(
    record: MatchRecord, seat: int, deadline_ms: int, latency_ms: float, fault: BotFault | None
) -> int:
    """What a decision draws on its seat's bank (taken from it): the time past its
    deadline, rounded up to the millisecond, as far as the bank goes; all that is left
    for a timeout (the transport waited the whole bank)."""
    left = record.banks[seat]
    if not left:
        return 0
    if fault is not None and fault.kind == "timeout":
        drawn = left
    else:
        drawn = min(left, max(0, math.ceil(latency_ms - deadline_ms)))
    record.banks[seat] = left - drawn
    return drawn


def _exchange(client: Client, payload: dict[str, Any]) -> Exchange:
    """The exchange that asks ``client``: its own (``begin_act``), or its ``act`` called
    in the window's thread."""
    begin = getattr(client, "begin_act", None)
    if begin is None:
        return Call(client.act, payload)
    try:
        return begin(payload)
    except Exception as exc:  # judged like any failure of the exchange
        return Call(_raise, exc)  # type: ignore[arg-type]


def _raise(error: Exception) -> Any:
    raise error


def _take_log(record: MatchRecord, seat: int, client: Client, step: int | None) -> None:
    """What a client that keeps its bot's output (a hosted bot's stderr) has of it now."""
    take = getattr(client, "take_log", None)
    if take is not None:
        with contextlib.suppress(Exception):
            record.log(seat, step, None, take())


def _judge(
    exchange: Exchange, request: Request
) -> tuple[Action, float, BotFault | None, str | None, str | None]:
    """Judge what the bot said in a settled exchange: (action, latency in ms, fault or
    None, memo or None, its private debug text or None).  Never raises."""
    fault: BotFault | None = None
    action: Action = request.default_action
    memo: str | None = None
    debug: str | None = None
    try:
        reply = exchange.result()
        if not isinstance(reply, dict) or "action" not in reply:
            raise BotFault(
                "bad_answer",
                "the answer must be an object with an 'action'",
                excerpt=excerpt(reply),
            )
        if isinstance(reply.get("debug"), str):
            debug = reply["debug"][:DEBUG_CAP]
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
    return action, (exchange.finished - exchange.started) * 1000.0, fault, memo, debug


def _quietly(call: Any, info: dict[str, Any]) -> None:
    """/start and /end: their answers are ignored and their failures are not strikes; a
    failure of the arena's own (``ArenaError``) ends the match unrecorded."""
    try:
        call(info)
    except ArenaError:
        raise
    except Exception:
        pass
