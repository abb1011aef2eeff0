"""The table at every step of a match, from one perspective: what the replay viewer draws.

A perspective is a seat (``0``, ``1``...: exactly what that seat knew, its own
``view``), ``"public"`` (what someone at no seat may know: a live match's audience) or
``"all"`` (every card face up: a finished match seen by everyone).  Frame ``i`` is the
table once ``i`` steps have been applied (frame 0: the deal, before the first answer),
with the events the perspective observed during that step and the step's decisions as
the perspective may see them:

- ``"all"``: every event (with its ``to`` tag) and every decision as recorded;
- a seat: the events it received and its own decisions (memo and fault cause included);
- ``"public"``: the public events, and who was asked, how long it took and any fault,
  never what was answered (an answer can name a card only its seat holds).

Consecutive views share most of their keys (the rules' values, the rank order...), so a
frame carries the whole view only when it is the first of a list (``"view"``), and else
only the keys that changed (``"changes"``, applied over the previous frame's view).

Frames are computed by re-simulating the answers from the seed (games are pure), never
read from the record's events: a record that does not re-simulate to its own events has
no frames (``record_frames`` gives None), and the viewer shows its events alone.  A
decision with a fault carries its ``reason`` in the words of the match and bot pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from arena.games import get_game
from arena.match.faults import describe_fault
from arena.match.records import answers, seat_events
from arena.models import MATCH_OPEN

Perspective = int | str
ALL = "all"
PUBLIC = "public"
PUBLIC_DECISION_KEYS = ("seat", "kind", "latency_ms", "fault")


class PerspectiveError(ValueError):
    """A perspective the match has not: a seat out of range, or an unknown word."""


def parse_perspective(text: str | int, n_players: int) -> Perspective:
    """``"all"``, ``"public"`` or a seat number (as text or int) within the match."""
    if text in (ALL, PUBLIC):
        return str(text)
    try:
        seat = int(text)
    except (TypeError, ValueError):
        raise PerspectiveError(
            f"perspective must be all, public or a seat number, not {text!r}"
        ) from None
    if not 0 <= seat < n_players:
        raise PerspectiveError(
            f"seat {seat} is out of range: the match has seats 0 to {n_players - 1}"
        )
    return seat


class Frames:
    """Builds a match's frames for one perspective, step by step, as the answers come
    (a live match) or all at once (a finished one)."""

    def __init__(
        self,
        game_id: str,
        n_players: int,
        seed: int,
        options: Any,
        perspective: Perspective,
    ):
        self.game = get_game(game_id)
        self.state = self.game.new_state(n_players, seed, options)
        self.perspective = perspective
        self.steps = 0  # answers applied so far
        self._read = 0  # events already given to a frame

    def _view(self) -> dict[str, Any]:
        game, state, perspective = self.game, self.state, self.perspective
        if perspective == ALL:
            view = game.spectator_view(state, reveal=True)
        elif perspective == PUBLIC:
            view = game.spectator_view(state)
        else:
            view = game.view(state, perspective)
            view.pop("events", None)  # the frames list what the seat observed, over the match
        # a copy: a view may share lists with the state, which later steps change
        return orjson.loads(orjson.dumps(view))

    def _events(self) -> list[dict[str, Any]]:
        new = self.state.events[self._read :]
        self._read = len(self.state.events)
        perspective = self.perspective
        if perspective == ALL:
            return [e.to_json() for e in new]
        if perspective == PUBLIC:
            return [e.to_json() for e in new if e.to is None]
        return [e.to_json() for e in new if e.visible_to(perspective)]

    def _decisions(self, step: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        perspective = self.perspective
        if perspective == PUBLIC:
            shown = [{k: d[k] for k in PUBLIC_DECISION_KEYS if k in d} for d in step]
        elif perspective == ALL:
            shown = [dict(d) for d in step]
        else:
            shown = [dict(d) for d in step if d["seat"] == perspective]
        for decision in shown:
            if decision.get("fault") not in (None, "struck_out"):
                # the same words as the match and bot pages (the cause, when shown)
                cause = decision.get("cause") or {}
                decision["reason"] = describe_fault(
                    {"kind": decision["fault"], **cause, "latency_ms": decision.get("latency_ms")}
                )
        return shown

    def first(self) -> dict[str, Any]:
        """Frame 0: the table as dealt, before any answer."""
        return self._frame([])

    def advance(self, step: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Apply one step's decisions (as recorded) and return the frame after it."""
        self.game.apply(self.state, answers(list(step)))
        self.steps += 1
        return self._frame(step)

    def _frame(self, step: Sequence[dict[str, Any]]) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "step": self.steps,
            "view": self._view(),
            "events": self._events(),
            "decisions": self._decisions(step),
        }
        outcome = self.game.outcome(self.state)
        if outcome is not None:
            frame["outcome"] = outcome.to_json()
        return frame

    def skip(self, steps: Iterable[Sequence[dict[str, Any]]]) -> None:
        """Apply steps without making their frames (a later ``since``)."""
        for step in steps:
            self.game.apply(self.state, answers(list(step)))
            self.steps += 1
        self._read = len(self.state.events)


def compact(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The frames with each view after the first replaced by its ``changes``."""
    out: list[dict[str, Any]] = []
    previous: dict[str, Any] | None = None
    for frame in frames:
        view = frame["view"]
        if previous is None:
            out.append(frame)
        else:
            changes = {k: v for k, v in view.items() if k not in previous or previous[k] != v}
            gone = [k for k in previous if k not in view]
            slim = {k: v for k, v in frame.items() if k != "view"}
            slim["changes"] = changes
            if gone:
                slim["gone"] = gone
            out.append(slim)
        previous = view
    return out


def expand(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``compact`` undone: every frame with its whole ``view`` (what the viewer does)."""
    out: list[dict[str, Any]] = []
    view: dict[str, Any] = {}
    for frame in frames:
        if "view" in frame:
            view = dict(frame["view"])
        else:
            view = {**view, **frame["changes"]}
            for key in frame.get("gone", ()):
                view.pop(key, None)
        out.append(
            {**{k: v for k, v in frame.items() if k not in ("changes", "gone")}, "view": view}
        )
    return out


def record_frames(record: dict[str, Any], perspective: Perspective) -> list[dict[str, Any]] | None:
    """Every frame of a finished match's record, or None when the record does not
    re-simulate to its own events (a record of another engine version)."""
    try:
        frames = Frames(
            record["game"], len(record["players"]), record["seed"], record["options"], perspective
        )
        out = [frames.first()]
        for step in record["steps"]:
            out.append(frames.advance(step))
        events = [e.to_json() for e in frames.state.events]
    except Exception:  # the events alone are shown for a record this code cannot replay
        return None
    if events != record["events"] or frames.game.outcome(frames.state) is None:
        return None
    return out


def live_frames(
    game_id: str,
    n_players: int,
    seed: int,
    options: Any,
    steps: list[list[dict[str, Any]]],
    perspective: Perspective,
    since: int = 0,
) -> list[dict[str, Any]]:
    """The frames of a match being played (its steps so far) from frame ``since`` on:
    a viewer that holds frames 0 to ``since - 1`` asks for the rest."""
    frames = Frames(game_id, n_players, seed, options, perspective)
    if since <= 0:
        out = [frames.first()]
        rest = steps
    else:
        since = min(since, len(steps) + 1)
        frames.skip(steps[: since - 1])
        out = []
        rest = steps[since - 1 :]
    for step in rest:
        out.append(frames.advance(step))
    return out


def answer_frames(
    match: Any, record: dict[str, Any] | None, live_steps: list[Any] | None, text: str, since: int
) -> dict[str, Any]:
    """The frames answer of ``GET /api/matches/<id>/frames`` for a match (a model with
    ``status``, ``game``, ``seed``, ``options``, ``seats`` and its tournament's
    ``live_view``): a finished match's from its ``record``, a running one's from its
    ``live_steps``.  Raises PerspectiveError (a seat out of range, a word unknown) and
    HiddenWhileLive (a perspective not open while the match is played)."""
    n_players = len(match.seats)
    perspective = parse_perspective(text, n_players)
    finished = record is not None
    everyone = match.tournament is not None and match.tournament.live_view == "everyone"
    open_now = [ALL, PUBLIC, *range(n_players)] if finished or everyone else [PUBLIC]
    if perspective not in open_now:
        raise HiddenWhileLive(
            f"match {match.id} is being played: only the public table is shown until it "
            "ends (a tournament started with live_view everyone shows every perspective)"
        )
    body: dict[str, Any] = {
        "match_id": match.id,
        "game": match.game,
        "status": match.status,
        "perspective": perspective,
        "perspectives": open_now,
        "complete": finished or match.status not in MATCH_OPEN,
    }
    if record is not None:
        frames = record_frames(record, perspective)
        if frames is None:
            body["frames"] = None
            body["events"] = record_events(record, perspective)
        else:
            body["frames"] = compact(frames[since:])
        return body
    if match.status != "running" or live_steps is None:
        body["frames"] = []
        return body
    body["frames"] = compact(
        live_frames(
            match.game, n_players, match.seed, match.options, live_steps, perspective, since
        )
    )
    return body


class HiddenWhileLive(Exception):
    """A perspective that shows hidden cards, asked of a match still being played."""


def record_events(record: dict[str, Any], perspective: Perspective) -> list[dict[str, Any]]:
    """The recorded events the perspective observed (a seat's: ``replay.seat_events``)."""
    events = record["events"]
    if perspective == ALL:
        return list(events)
    if perspective == PUBLIC:
        return [e for e in events if e["to"] == "public"]
    return seat_events(record, int(perspective))
