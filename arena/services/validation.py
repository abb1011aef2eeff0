"""Validation matches: the short unrated match a bot plays against the house bots when it
is new or has a new version, and its verdict.

Every transport gets one (``docs/hosted.md``, "Validation"):

- **webhook**: at registration; when its endpoint changes; when a check of its ``GET /``
  (a ``PATCH`` with its endpoint, even the same one) finds another ``version``, or finds
  it again after a failed validation;
- **connect**: nothing can be played before it connects, so when it opens a session for
  the first time, and when a session declares another version than the last one
  validated (or any version after a failed validation);
- **hosted**: each new version of its uploaded code (``arena.services.hosted``), which
  plays for real only once it passed.

The match (``kind`` ``validation``: unrated, in no tournament and no leaderboard, its
forfeits never counted toward a pause) seats the bot in the first game it plays, against
the house ``random`` bot, with as few seats as the game allows, for one round
(``SHORT``).  It ``passed`` when the
bot's seat had no fault; else it ``failed``, with the reason in words, and the bot's
account gets a notice.  The verdict of a bot's latest validation is kept on the bot
(``Bot.validation_status``, ``validation_reason``, ``validation_match_id``) for every
transport; a hosted bot's versions keep theirs in ``BotCode`` too.  A failed validation
stops no bot but a hosted version from playing: it is information, given before a
tournament is.  No Flask here; the caller sends the match to the workers after its
commit.
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.games import GAMES
from arena.match.faults import fault_reason
from arena.models import Bot, BotCode, Match, MatchSeat, utcnow
from arena.services.errors import MAX_SEED, ServiceError
from arena.services.notices import notify_bot

VALIDATION = "validation"  # the kind of a validation match
VALIDATION_OPPONENT = "random"  # the house policy it plays against
# a short match: one round (a Cactus Game to two points), which asks a bot every kind of
# decision its game has while costing a fifth of a default match or less (median steps
# with random bots: Cactus 101 → 15, Cactus Game 74 → 29, Président 361 → 70)
SHORT = {"cactus": {"rounds": 1}, "cactus-game": {"target": 2}, "president": {"rounds": 1}}
REASON_CAP = 500


def validation_match(session: Session, bot: Bot, version: str | None) -> Match:
    """A queued validation match of ``bot`` (seat 0, at ``version``) against the house
    bot, in the first game it plays; 409 if it plays no game of this arena."""
    # imported here: they import the worker's lifecycle, which imports this module
    from arena.services.people import house_bot
    from arena.services.tournaments import resolve_options

    game = next((g for g in bot.games if g in GAMES), None)
    if game is None:
        raise ServiceError(409, f"bot {bot.id} plays no game of this arena")
    engine = GAMES[game]
    opponent = house_bot(session, VALIDATION_OPPONENT)
    match = Match(
        kind=VALIDATION,
        game=game,
        options=resolve_options(engine, SHORT.get(game)),
        seed=random.SystemRandom().randrange(MAX_SEED + 1),
        status="queued",
        rated=False,
        event_id=bot.event_id,
        created_at=utcnow(),
    )
    session.add(match)
    session.flush()
    session.add(MatchSeat(match_id=match.id, seat=0, bot_id=bot.id, version=version))
    for seat in range(1, engine.min_players):
        session.add(MatchSeat(match_id=match.id, seat=seat, bot_id=opponent.id))
    session.flush()
    return match


def begin(session: Session, bot: Bot, version: str | None) -> Match:
    """Start validating ``bot`` at ``version``: its match, and the bot ``validating``
    until the match is recorded.  Send the match to the workers after the commit."""
    match = validation_match(session, bot, version)
    bot.validation_status, bot.validation_reason = "validating", None
    bot.validation_match_id = match.id
    return match


def forget(bot: Bot) -> None:
    """The bot moved to a transport on which it was never validated (it connects out
    now): it is validated again as it first opens a session."""
    bot.validation_status = bot.validation_reason = bot.validation_match_id = None


def validated_version(session: Session, bot: Bot) -> str | None:
    """The version the bot's latest validation match seated (None: none, or undeclared)."""
    if bot.validation_match_id is None:
        return None
    return session.scalar(
        select(MatchSeat.version).where(
            MatchSeat.match_id == bot.validation_match_id, MatchSeat.bot_id == bot.id
        )
    )


def new_version(session: Session, bot: Bot, version: str | None) -> bool:
    """Whether a webhook or connect bot declaring ``version`` now is to be validated: it
    never was; or it declares another version than the one last validated; or its last
    validation failed (its author fixed something without changing the version).  Not
    while a validation of the same version is still to be played."""
    if bot.kind != "bot" or bot.hosted or bot.status == "deleted":
        return False
    if bot.validation_status is None:
        return True
    if version != validated_version(session, bot):
        return True
    return bot.validation_status == "failed"


def validated(session: Session, match: Match, logs: dict[int, list[dict[str, Any]]]) -> None:
    """A validation match's verdict (called as its result is written): on the hosted
    version it tried, and on the bot when it is the bot's latest validation; a failure
    is told to the bot's account."""
    seat = next((s for s in match.seats if s.seat == 0), None)
    if seat is None:
        return
    bot = session.get(Bot, seat.bot_id)
    if bot is None:
        return
    passed = not seat.faults and not seat.forfeited
    # the reason anyone sees, and with the end of its private log (a hosted bot's stderr)
    # for those who manage it: the version's own reason and the notice
    reason = logged = None if passed else _reason(match, seat)
    if reason is not None:
        logged = (reason + _log_end(logs.get(0, [])))[:REASON_CAP]
    code = None
    if bot.hosted:
        # hosted.py builds on this module: imported here, as a verdict is recorded
        from arena.services.hosted import activate_version, find_code

        code = find_code(session, bot.id, seat.version) if seat.version else None
        if code is None or code.status != "validating":
            return
        code.status, code.reason = ("passed", None) if passed else ("failed", logged)
        if passed:
            activate_version(bot, code)
        elif reason is not None and logged is not None:
            reason = f"version {code.version}: {reason}"[:REASON_CAP]
            logged = f"version {code.version}: {logged}"[:REASON_CAP]
    if bot.validation_match_id in (None, match.id):
        bot.validation_status = "passed" if passed else "failed"
        bot.validation_reason = reason
        bot.validation_match_id = match.id
    if logged is not None:
        notify_bot(session, bot, "validation_failed", _notice(bot, code, logged), match_id=match.id)


def _reason(match: Match, seat: MatchSeat) -> str:
    """Why a validation failed: its faults, the first in words."""
    faults = seat.faults or {}
    first = faults.get("first") or {"kind": "forfeited"}
    said = f"its validation match {match.id} had {faults.get('count', 0)} "
    said += f"fault(s); the first: {fault_reason(first)}"
    return said[:REASON_CAP]


def _log_end(entries: list[dict[str, Any]]) -> str:
    """How the seat's private log ends (what a hosted bot wrote to stderr), if it wrote."""
    lines = "".join(e.get("stderr") or "" for e in entries).strip().splitlines()
    if not lines:
        return ""
    return ". Its log ends: " + " | ".join(line.strip() for line in lines[-3:])


def _notice(bot: Bot, code: BotCode | None, reason: str) -> str:
    if code is not None:
        return (
            f"{bot.name}: a new version of its code failed its validation, and the version "
            f"before goes on playing. {reason}"
        )
    return (
        f"{bot.name} failed its validation match: fix it before its next tournament "
        f"(it still plays). {reason}"
    )


def verdict(bot: Bot) -> dict[str, Any] | None:
    """The bot's latest validation as the API and the pages show it (None: never)."""
    if bot.validation_status is None:
        return None
    return {
        "status": bot.validation_status,
        "reason": bot.validation_reason,
        "match_id": bot.validation_match_id,
    }
