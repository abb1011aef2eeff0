"""An event's roster: every member with each of their bots in the event, and where
each bot stands (status, who paused it, connected or not, healthy, the version it
declares, matches played) and its grade in the event's latest qualifier (to the event's
organisers for every row, to a contestant for their own rows only).  Rows are flat
(scalars only) so that the JSON answer and its CSV export are the same table.

The reference bots every event is offered (house bots, bots marked ``reference``) are
no contestants: they are left out of the members' rows (and of grades) and listed apart
(``reference_bots``).  No Flask here."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.games import POLICIES
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
from arena.services import grading, people
from arena.services.access import Caller
from arena.services.validation import VALIDATION
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
    # people's seats of the event's tournaments are no member's bots, and reference bots
    # are opponents, not contestants: neither is on the members' rows
    bots = list(
        session.scalars(
            select(Bot)
            .where(
                Bot.event_id == event.id,
                Bot.status != "deleted",
                Bot.kind == "bot",
                Bot.reference.is_not(True),
            )
            .order_by(Bot.name)
        )
    )
    connected = sessions.online(session, (b.id for b in bots if b.endpoint is None))
    played = _played_here(session, event.id, [b.id for b in bots])
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


# the reference bots' table (``reference_bots``), in order
REFERENCE_COLUMNS = ("bot_id", "bot", "owner", "kind", "event_id", "status", "games", "matches")


def reference_bots(session: Session, event: Event) -> list[dict[str, Any]]:
    """The reference bots the event is offered for its tournaments and qualifiers, apart
    from its contestants: each house policy's bot (made here if no match used it yet)
    and every bot marked ``reference`` (whatever its own event), not deleted and playing
    one of the event's games; house bots first, then by name.  ``kind``: house or
    reference; ``event_id``: the bot's own event (None: the open arena); ``games``: the
    event's games it plays, space-separated; ``matches``: played in this event."""
    policies = sorted({p for g in event.games for p in POLICIES.get(g, ())})
    house = [people.house_bot(session, policy) for policy in policies]
    marked = list(
        session.scalars(
            select(Bot)
            .where(Bot.reference.is_(True), Bot.kind == "bot", Bot.status != "deleted")
            .order_by(Bot.name_key)
        )
    )
    offered = [b for b in [*house, *marked] if set(b.games or ()) & set(event.games)]
    played = _played_here(session, event.id, [b.id for b in offered])
    return [
        {
            "bot_id": bot.id,
            "bot": bot.name,
            "owner": bot.owner,
            "kind": "house" if bot.kind == "house" else "reference",
            "event_id": bot.event_id,
            "status": bot.status,
            "games": " ".join(g for g in event.games if g in (bot.games or ())),
            "matches": played.get(bot.id, 0),
        }
        for bot in offered
    ]


def _played_here(session: Session, event_id: int, bot_ids: list[int]) -> dict[int, int]:
    """How many matches of the event each of ``bot_ids`` played (absent: none), its
    validation matches aside (a check of the bot, not a match of the event's)."""
    return dict(
        session.execute(
            select(MatchSeat.bot_id, func.count())
            .join(Match, Match.id == MatchSeat.match_id)
            .where(
                Match.event_id == event_id,
                Match.status == MATCH_PLAYED,
                Match.kind != VALIDATION,
                MatchSeat.bot_id.in_(bot_ids),
            )
            .group_by(MatchSeat.bot_id)
        ).all()
    )
