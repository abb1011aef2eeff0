"""An event's roster: every member with each of their bots in the event, and where
each bot stands (status, who paused it, connected or not, healthy, the version it
declares, matches played) and its grade in the event's latest qualifier (to the event's
organisers for every row, to a contestant for their own rows only).  Rows are flat
(scalars only) so that the JSON answer and its CSV export are the same table.  No Flask
here."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.models import (
    MATCH_PLAYED,
    Account,
    Bot,
    Event,
    EventMember,
    Match,
    MatchSeat,
)
from arena.relay import sessions
from arena.services import grading
from arena.services.access import Caller
from arena.worker.lifecycle import declared_version

# the roster's columns, in order (the CSV's header)
COLUMNS = (
    "account_id",
    "account",
    "role",
    "bot_id",
    "bot",
    "status",
    "paused_by",
    "transport",
    "online",
    "healthy",
    "version",
    "matches",
    "qualifier_id",
    "grade",
    "grade_matches",
    "grade_score",
)


def event_roster(session: Session, event: Event, who: Caller | None = None) -> list[dict[str, Any]]:
    """One row per bot of the event (its owner's account), and one per member with no
    bot there; organisers first, then by account name and bot name.  ``online``: a bot
    that connects out is connected now (null for a webhook bot, which the arena calls);
    ``healthy``: active and not forfeiting its recent matches.  The grade columns are
    filled for the rows ``who`` may see a grade of (``_sees_grade``; None: none)."""
    members = session.execute(
        select(EventMember.role, Account)
        .join(Account, Account.id == EventMember.account_id)
        .where(EventMember.event_id == event.id)
    ).all()
    # people's seats of the event's tournaments are no member's bots: not on the roster
    bots = list(
        session.scalars(
            select(Bot)
            .where(Bot.event_id == event.id, Bot.status != "deleted", Bot.kind != "person")
            .order_by(Bot.name)
        )
    )
    connected = sessions.online(session, (b.id for b in bots if b.endpoint is None))
    played = dict(
        session.execute(
            select(MatchSeat.bot_id, func.count())
            .join(Match, Match.id == MatchSeat.match_id)
            .where(
                Match.event_id == event.id,
                Match.status == MATCH_PLAYED,
                MatchSeat.bot_id.in_([b.id for b in bots]),
            )
            .group_by(MatchSeat.bot_id)
        ).all()
    )
    by_account: dict[int | None, list[Bot]] = {}
    for bot in bots:
        by_account.setdefault(bot.account_id, []).append(bot)
    rows: list[dict[str, Any]] = []
    order = sorted(members, key=lambda m: (m[0] != "organiser", m[1].name_key))
    for role, account in order:
        own = by_account.pop(account.id, [])
        for bot in own or [None]:
            rows.append(_row(account, role, bot, connected, played))
    for stray in by_account.values():  # an admin's bot, or an account that left
        for bot in stray:
            rows.append(_row(None, None, bot, connected, played))
    if who is not None:
        _add_grades(session, event, who, rows, {b.id: b for b in bots})
    return rows


def _add_grades(
    session: Session, event: Event, who: Caller, rows: list[dict[str, Any]], bots: dict[int, Bot]
) -> None:
    """The latest qualifier's grade of each bot row the caller may see it of: every row
    for the event's organisers, a contestant's own rows (their account's, or a bot they
    own) for them."""
    organiser = who.organises_event(event.id)
    if not organiser and who.account_id is None and who.bot_id is None:
        return
    qualifier_id, grades = grading.event_grades(session, event.id)
    if qualifier_id is None:
        return
    for row in rows:
        bot = bots.get(row["bot_id"]) if row["bot_id"] is not None else None
        if bot is None:
            continue
        own = who.owns(bot) or (who.account_id is not None and row["account_id"] == who.account_id)
        if not (organiser or own):
            continue
        graded = grades.get(bot.id)
        row.update(
            qualifier_id=qualifier_id,
            grade=graded["grade"] if graded else None,
            grade_matches=graded["matches"] if graded else None,
            grade_score=graded["score"] if graded else None,
        )


def _row(
    account: Account | None,
    role: str | None,
    bot: Bot | None,
    connected: set[int],
    played: dict[int, int],
) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        account_id=account.id if account else None,
        account=account.name if account else None,
        role=role,
    )
    if bot is not None:
        row.update(
            bot_id=bot.id,
            bot=bot.name,
            status=bot.status,
            paused_by=bot.paused_by,
            transport="connect" if bot.endpoint is None else "webhook",
            online=(bot.id in connected) if bot.endpoint is None else None,
            healthy=bot.status == "active" and bot.forfeit_streak == 0,
            version=declared_version(bot),
            matches=played.get(bot.id, 0),
        )
    return row
