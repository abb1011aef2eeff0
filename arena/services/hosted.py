"""Hosted bots' code: uploads and their versions, the validation match each new version
plays before it may play for real, rolling back, and the private logs of matches.

A version is an upload checked by ``arena.hosted.bundles`` and named by its hash.  It is
``validating`` until its validation match (``arena.services.validation``: unrated, the
bot at that version against the house ``random`` bot) is recorded: ``passed`` when the
bot's seat had no fault, and then it becomes the bot's ``code_version``; else
``failed``, with the reason in words and the bot's own log, and the version that played
before goes on playing.  The bot's own ``validation_*`` columns mirror the latest
verdict, as for every other bot.  The owner may make any version that passed the one
that plays (a roll-back).  No Flask here.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.hosted import bundles
from arena.models import Bot, BotCode, Match, MatchLog, utcnow
from arena.services import validation
from arena.services.access import Caller, check_manages
from arena.services.errors import ServiceError
from arena.services.events import check_not_frozen


def upload(
    session: Session, who: Caller, bot: Bot, data: bytes, content_type: str | None
) -> tuple[BotCode, list[int]]:
    """A new version of a hosted bot's code, and the validation match to enqueue (after
    the commit).  The same bytes again are the same version: it is validated again only
    if it failed before."""
    check_manages(who, bot)
    if not bot.hosted:
        raise ServiceError(
            409, f"bot {bot.id} is not hosted: the arena runs code only for a bot registered "
            'with "hosted": true'
        )  # fmt: skip
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    check_not_frozen(session, who, bot, "code")
    try:
        bundle = bundles.check(data, content_type)
    except bundles.BundleError as exc:
        raise ServiceError(400, str(exc)) from None
    code = find_code(session, bot.id, bundle.version)
    if code is not None and code.status != "failed":
        return code, []
    if code is None:
        code = BotCode(
            bot_id=bot.id,
            version=bundle.version,
            sha256=bundle.sha256,
            media_type=bundle.media_type,
            size=len(bundle.data),
            files=bundle.files,
            data=bundle.data,
        )
        session.add(code)
    code.status, code.reason, code.uploaded_at = "validating", None, utcnow()
    session.flush()
    match = validation.begin(session, bot, code.version)
    code.match_id = match.id
    return code, [match.id]


def activate_version(bot: Bot, code: BotCode) -> None:
    """Make ``code`` (a version that passed) the one that plays."""
    bot.code_version = code.version
    bot.info = {**(bot.info or {}), "version": code.version}


def activate(session: Session, who: Caller, bot: Bot, version: str) -> BotCode:
    """Make a version that passed its validation the one that plays (a roll-back)."""
    check_manages(who, bot)
    check_not_frozen(session, who, bot, "code")
    code = get_code(session, bot, version)
    if code.status != "passed":
        raise ServiceError(
            409, f"version {code.version} has not passed its validation ({code.status})"
        )
    activate_version(bot, code)
    return code


def find_code(session: Session, bot_id: int, version: str) -> BotCode | None:
    """A version of a bot's code, if it has it."""
    return session.scalar(
        select(BotCode).where(BotCode.bot_id == bot_id, BotCode.version == version)
    )


def get_code(session: Session, bot: Bot, version: str) -> BotCode:
    """A version of the bot's code (its digits in any case), else 404."""
    code = find_code(session, bot.id, version.lower())
    if code is None:
        raise ServiceError(404, f"bot {bot.id} has no version {version}")
    return code


def versions(session: Session, bot: Bot) -> list[dict[str, Any]]:
    """The bot's code versions, newest first, with which one plays."""
    rows = session.scalars(
        select(BotCode)
        .where(BotCode.bot_id == bot.id)
        .order_by(BotCode.uploaded_at.desc(), BotCode.id.desc())
    )
    return [version_row(bot, code) for code in rows]


def version_row(bot: Bot, code: BotCode) -> dict[str, Any]:
    """One version of the bot's code as the API and the pages list it."""
    return {
        "version": code.version,
        "sha256": code.sha256,
        "media_type": code.media_type,
        "size": code.size,
        "files": code.files,
        "uploaded_at": code.uploaded_at,
        "status": code.status,
        "reason": code.reason,
        "match_id": code.match_id,
        "active": code.version == bot.code_version,
    }


def check_reads_log(session: Session, who: Caller, match: Match, seat: int) -> Bot:
    """The bot of ``seat`` if ``who`` may read its private log (its owner, its account,
    an organiser of its event, the admin); else the error any other bot's manager gets."""
    row = next((s for s in match.seats if s.seat == seat), None)
    if row is None:
        raise ServiceError(404, f"match {match.id} has no seat {seat}")
    bot = session.get(Bot, row.bot_id)
    assert bot is not None
    check_manages(who, bot)
    return bot


def log_entries(session: Session, match: Match, seat: int) -> list[dict[str, Any]]:
    """A seat's private log: entries ``step`` (null: as it started or ended),
    ``decision_id``, ``debug``, ``stderr``."""
    row = session.get(MatchLog, (match.id, seat))
    return list(row.entries) if row is not None else []


def log_text(session: Session, match: Match, seat: int) -> str:
    """A seat's private log as text: each decision's debug and stderr, in order."""
    lines = []
    for entry in log_entries(session, match, seat):
        where = f"decision {entry['decision_id']}" if entry.get("step") is not None else "start/end"
        if entry.get("debug"):
            lines.append(f"--- {where}: debug\n{entry['debug'].rstrip()}\n")
        if entry.get("stderr"):
            lines.append(f"--- {where}: stderr\n{entry['stderr'].rstrip()}\n")
    return "".join(lines)
