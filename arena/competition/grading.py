"""Grading a qualifier's challengers: pass rules, and the grade one challenger's results
earn under a rule (pass, fail or pending) with the evidence for it.

Pure: no database, web or task queue.  ``arena.services.grading`` reads a tournament's
matches into ``Result`` rows (in schedule order: match ids) and writes the grades out.

Three rules (``PassRule``):

- ``score``: the mean score against the reference bots is at least ``min_score``; a
  match's score is the standings' (1 per opponent ranked below, 1/2 per tie) divided by
  the opponents, a forfeit counting as played and lost (0);
- ``consecutive``: at least ``wins`` wins in some ``of`` consecutive matches, in
  schedule order (MIT Battlecode's qualifying rule: 8 of 10); a win is first place
  alone, as the standings count it, and a forfeit is a loss;
- ``stop_rule``: the gauntlet's sequential test decides (H1 accepted: pass, H0: fail);
  the tournament needs ``sprt``.

A grade is pending while the rule can still go either way and matches remain; it is
decided as soon as the remaining matches cannot change it (a consecutive rule already
met passes at once; a score that every remaining loss or every remaining win leaves on
the same side of ``min_score`` is decided).  When nothing remains the rule is judged on
what was played: a challenger that played nothing, or whose stop rule never decided,
fails.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RULE_KINDS = ("score", "consecutive", "stop_rule")
GRADES = ("pass", "fail", "pending")
# sums of thirds and the like are not exact: a mean this close to the bar meets it
TOLERANCE = 1e-9


class GradingError(ValueError):
    """A pass rule that cannot be applied; the message is for the organiser."""


@dataclass(frozen=True)
class PassRule:
    """What a challenger must do to pass (see the module's docstring)."""

    kind: str
    min_score: float | None = None  # score
    wins: int | None = None  # consecutive
    of: int | None = None  # consecutive

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PassRule:
        """The rule as stored (``to_json``) or asked for, checked."""
        kind = data.get("kind")
        if kind == "score":
            rule = cls(kind, min_score=data.get("min_score"))
        elif kind == "consecutive":
            rule = cls(kind, wins=data.get("wins"), of=data.get("of"))
        elif kind == "stop_rule":
            rule = cls(kind)
        else:
            raise GradingError(f"a pass rule's kind is one of {', '.join(RULE_KINDS)}")
        rule.check()
        return rule

    def check(self) -> None:
        if self.kind == "score":
            score = self.min_score
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise GradingError("the score rule needs min_score, a number from 0 to 1")
            if not 0 <= score <= 1 or math.isnan(score):
                raise GradingError("min_score must be from 0 to 1")
        elif self.kind == "consecutive":
            for name, value in (("wins", self.wins), ("of", self.of)):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise GradingError(f"the consecutive rule needs {name}, a whole number >= 1")
            assert self.wins is not None and self.of is not None
            if self.wins > self.of:
                raise GradingError(f"wins ({self.wins}) cannot exceed of ({self.of})")
        elif self.kind != "stop_rule":
            raise GradingError(f"a pass rule's kind is one of {', '.join(RULE_KINDS)}")

    def to_json(self) -> dict[str, Any]:
        if self.kind == "score":
            return {"kind": "score", "min_score": self.min_score}
        if self.kind == "consecutive":
            return {"kind": "consecutive", "wins": self.wins, "of": self.of}
        return {"kind": self.kind}

    def text(self) -> str:
        """The rule in words, for the pages and the grades' ``rule`` column."""
        if self.kind == "score":
            return f"mean score at least {self.min_score:g}"
        if self.kind == "consecutive":
            return f"at least {self.wins} wins in {self.of} consecutive matches"
        return "the stop rule accepts H1"


@dataclass(frozen=True)
class Result:
    """One of the challenger's matches, in schedule order.  ``score`` None: not played
    yet (queued or running); a match that ended without a result is left out."""

    match_id: int
    score: float | None = None  # its points over its opponents, in [0, 1]
    win: bool = False  # first place alone
    forfeited: bool = False  # no usable answer: played and lost, whatever its rank

    @property
    def played(self) -> bool:
        return self.score is not None

    @property
    def counted_score(self) -> float:
        return 0.0 if self.forfeited or self.score is None else self.score

    @property
    def counted_win(self) -> bool:
        return self.played and self.win and not self.forfeited


@dataclass(frozen=True)
class Window:
    """The consecutive rule's best run: the most wins in at most ``of`` consecutive
    matches in schedule order (the first such run); a match not played yet in it counts
    as no win (a run with it may only pass once its wins are there whatever it does)."""

    wins: int
    matches: int
    match_ids: tuple[int, ...]


@dataclass(frozen=True)
class Grade:
    """A challenger's grade with its evidence: the matches played (and still to play),
    wins, mean score, the best window (consecutive rule) and the match ids that decide
    it (the window for the consecutive rule, else every match played)."""

    grade: str  # GRADES
    matches: int
    wins: int
    score: float | None  # mean; None before the first match
    remaining: int
    evidence: tuple[int, ...]
    window: Window | None = None
    decision: str | None = None  # stop_rule: H1, H0 or None

    def reason(self, rule: PassRule) -> str:
        """Why, in words."""
        if self.grade == "pending":
            return f"{self.remaining} match(es) to play"
        if rule.kind == "consecutive" and self.window is not None:
            return f"best run: {self.window.wins} wins in {self.window.matches} matches"
        if rule.kind == "stop_rule":
            said = {"H1": "H1 accepted", "H0": "H0 accepted"}.get(self.decision or "")
            return said or "the stop rule did not decide"
        if self.score is None:
            return "no match played"
        return f"mean score {self.score:.3f}"


def match_score(seats: Sequence[tuple[int, int]], bot_id: int) -> tuple[float, bool]:
    """``bot_id``'s score in one match from (bot id, rank) by seat: 1 per opponent ranked
    below, 1/2 per opponent ranked equal, over its opponents; and whether it won (first
    alone)."""
    own = [rank for bot, rank in seats if bot == bot_id]
    others = [rank for bot, rank in seats if bot != bot_id]
    if not own or not others:
        raise GradingError(f"bot {bot_id} has no opponent in this match")
    rank = own[0]
    points = sum(1.0 if rank < r else 0.5 if rank == r else 0.0 for r in others)
    return points / len(others), rank == 1 and all(r > 1 for r in others)


def grade(rule: PassRule, results: Sequence[Result], sprt_decision: str | None = None) -> Grade:
    """The grade ``results`` (the challenger's matches in schedule order, played or not)
    earn under ``rule``; ``sprt_decision`` is the stop rule's (``stop_rule`` only)."""
    played = [r for r in results if r.played]
    remaining = len(results) - len(played)
    total = sum(r.counted_score for r in played)
    wins = sum(r.counted_win for r in played)
    mean = total / len(played) if played else None
    ids = tuple(r.match_id for r in played)
    if rule.kind == "score":
        verdict = _score_verdict(rule, total, len(played), remaining)
        return Grade(verdict, len(played), wins, mean, remaining, ids)
    if rule.kind == "consecutive":
        window = best_window(results, rule.of or 1)
        verdict = _consecutive_verdict(rule, results, window, remaining)
        evidence = window.match_ids if window is not None else ()
        return Grade(verdict, len(played), wins, mean, remaining, evidence, window)
    if rule.kind == "stop_rule":
        verdict = {"H1": "pass", "H0": "fail"}.get(sprt_decision or "")
        if verdict is None:
            verdict = "pending" if remaining else "fail"
        return Grade(verdict, len(played), wins, mean, remaining, ids, decision=sprt_decision)
    raise GradingError(f"unknown pass rule {rule.kind!r}")


def _score_verdict(rule: PassRule, total: float, played: int, remaining: int) -> str:
    bar = rule.min_score or 0.0
    planned = played + remaining
    if not planned:
        return "fail"  # nothing played, nothing to play
    # the worst the challenger can end with (every remaining match lost) and the best
    if total / planned >= bar - TOLERANCE:
        return "pass"
    if (total + remaining) / planned < bar - TOLERANCE:
        return "fail"
    return "pending"


def best_window(results: Sequence[Result], of: int) -> Window | None:
    """The first run of at most ``of`` consecutive matches (schedule order, open ones
    counting as no win) with the most wins; None before the first match is played."""
    if not any(r.played for r in results):
        return None
    best: Window | None = None
    for start in range(max(1, len(results) - of + 1)):
        run = results[start : start + of]
        wins = sum(r.counted_win for r in run)
        if best is None or wins > best.wins:
            best = Window(wins, len(run), tuple(r.match_id for r in run))
    return best


def _consecutive_verdict(
    rule: PassRule, results: Sequence[Result], window: Window | None, remaining: int
) -> str:
    need, of = rule.wins or 0, rule.of or 0
    if window is not None and window.wins >= need:
        return "pass"
    if not remaining:
        return "fail"
    # could any run of ``of`` matches (in schedule order, the unplayed ones among them)
    # still hold ``need`` wins if every unplayed match were won?
    for start in range(max(1, len(results) - of + 1)):
        run = results[start : start + of]
        if sum(r.counted_win or not r.played for r in run) >= need:
            return "pending"
    return "fail"
