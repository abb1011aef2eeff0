"""Notices: what an account should hear of (``NOTICE_KINDS``: a bot paused, a bot's faults
past a threshold, a failed validation, a tournament finished, a grade decided).  Each is a
row the account reads in the app (``GET /api/accounts/me/notices``, the pages' badge and
``/notices``); a notice for an account with a webhook (``notify_url``) or an e-mail
address is also handed, after the commit that wrote it, to a worker that delivers it
(``arena.worker.notices``).  No Flask here: the callers are services and the worker,
inside their own transaction; the network is the worker's.

When each kind is raised (``docs/notices.md``):

- ``bot_paused``: the arena paused a bot after forfeits in a row (``arena.worker.lifecycle``),
  or an organiser paused it (``arena.services.bots``);
- ``bot_faults``: a bot forfeited a match, or had ``FAULTS_NOTICE_AT`` faults or more in
  one, other than a validation match (which has ``validation_failed``) or one it sat out
  paused; at most one a bot per ``FAULTS_NOTICE_EVERY`` (a pause of the bot in that time
  counts as one), so that a broken bot in a tournament of hundreds of matches is one
  notice, not hundreds;
- ``tournament_finished``: to the account that started it and to the owners of the bots
  entered (one notice an account, naming its bots; house and reference bots are the
  organisers' opponents, not entrants anyone waits on);
- ``grade_decided``: a qualifier's challenger's grade under its pass rule stops being
  pending (checked as each of its matches is settled, and for every challenger as the
  tournament finishes), once per bot and tournament.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session

from arena.config import Config
from arena.models import (
    NOTICE_KINDS,
    Account,
    Bot,
    Match,
    Notice,
    Tournament,
    TournamentEntry,
    utcnow,
)
from arena.services.errors import ServiceError

log = logging.getLogger(__name__)

TEXT_CAP = 500
# a match in which a bot had this many faults of its own (or forfeited) is worth a notice
FAULTS_NOTICE_AT = 3
# at most one bot_faults notice a bot in this time (a bot_paused one counts too)
FAULTS_NOTICE_EVERY = dt.timedelta(hours=1)
_PENDING = "arena.notices.pending"  # session.info: notices to deliver after the commit
Sender = Callable[[list[int]], None]


def notify(
    session: Session,
    account_id: int | None,
    kind: str,
    text: str,
    *,
    bot_id: int | None = None,
    tournament_id: int | None = None,
    match_id: int | None = None,
) -> Notice | None:
    """A notice for ``account_id`` (None: a bot or tournament no account owns, which has
    nobody to tell), added to ``session``; the caller commits.  When the account has a
    webhook or an e-mail address, the notice is sent to a worker once the commit is done
    (never before: a rolled back notice is never delivered)."""
    if kind not in NOTICE_KINDS:
        raise ValueError(f"unknown notice kind {kind!r}")
    if account_id is None:
        return None
    notice = Notice(
        account_id=account_id,
        kind=kind,
        text=text[:TEXT_CAP],
        bot_id=bot_id,
        tournament_id=tournament_id,
        match_id=match_id,
        deliveries={},
        created_at=utcnow(),
    )
    session.add(notice)
    account = session.get(Account, account_id)
    if account is not None and (account.notify_url or account.email):
        session.info.setdefault(_PENDING, []).append(notice)
    return notice


def notify_bot(
    session: Session, bot: Bot, kind: str, text: str, *, match_id: int | None = None
) -> Notice | None:
    """A notice about ``bot`` for the account it belongs to."""
    return notify(session, bot.account_id, kind, text, bot_id=bot.id, match_id=match_id)


# -- after the commit: to the worker that delivers them ------------------------------------------
_delivery: dict[str, Any] = {"config": None, "sender": None}


def use_config(config: Config) -> None:
    """The configuration a web process sends deliveries with (``create_app``; a worker
    sends with its own)."""
    _delivery["config"] = config


def use_sender(sender: Sender | None) -> None:
    """Who is handed the ids of committed notices to deliver (None: the worker's task,
    ``arena.worker.notices.send``); for tests that deliver in process."""
    _delivery["sender"] = sender


def _send(notice_ids: list[int]) -> None:
    sender = _delivery["sender"]
    if sender is not None:
        sender(notice_ids)
        return
    # imported here: the worker's module imports the broker's, which the services need not
    from arena.worker import notices as delivery

    delivery.send(_delivery["config"], notice_ids)


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    pending = session.info.pop(_PENDING, None)
    if not pending:
        return
    ids = [n.id for n in pending if n.id is not None]
    if not ids:
        return
    try:
        _send(ids)
    except Exception:  # the broker is away: the notices stay in the app, undelivered
        log.exception("notices %s were not sent to be delivered", ids)


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)


# -- where they are raised -------------------------------------------------------------------
def bot_paused(
    session: Session,
    account_id: int | None,
    bot_id: int,
    bot_name: str,
    reason: str,
    *,
    match_id: int | None = None,
) -> Notice | None:
    """A bot was paused (by the arena or an organiser): why, and what its owner does."""
    return notify(
        session,
        account_id,
        "bot_paused",
        f"Your bot {bot_name} was {reason}. It plays no match until it is set active "
        "again (on its page, once the cause is fixed; an organiser's pause is theirs to end).",
        bot_id=bot_id,
        match_id=match_id,
    )


def _recently_told(session: Session, bot_id: int, now: dt.datetime) -> bool:
    return (
        session.scalar(
            select(Notice.id)
            .where(
                Notice.bot_id == bot_id,
                Notice.kind.in_(("bot_faults", "bot_paused")),
                Notice.created_at > now - FAULTS_NOTICE_EVERY,
            )
            .limit(1)
        )
        is not None
    )


def match_faults(session: Session, match: Match) -> list[Notice]:
    """``bot_faults`` notices for the seats of a just-recorded match whose bot forfeited
    or had ``FAULTS_NOTICE_AT`` faults or more (see the module's docstring)."""
    from arena.match.faults import describe_fault
    from arena.services.validation import VALIDATION

    if match.kind == VALIDATION:
        return []
    made: list[Notice] = []
    now = utcnow()
    told: set[int] = set()
    for seat in sorted(match.seats, key=lambda s: s.seat):
        faults = seat.faults or {}
        kinds = set(faults.get("kinds") or ())
        if kinds == {"paused"}:  # it sat the match out paused: its pause was the notice
            continue
        count = int(faults.get("count") or 0)
        if not (seat.forfeited or count >= FAULTS_NOTICE_AT) or seat.bot_id in told:
            continue
        bot = seat.bot
        if bot is None or bot.kind != "bot" or bot.account_id is None:
            continue
        told.add(seat.bot_id)
        if _recently_told(session, seat.bot_id, now):
            continue
        first = faults.get("first")
        why = f" The first: {describe_fault(first)}." if first else ""
        lost = " It struck out and forfeited the match." if seat.forfeited else ""
        text = (
            f"Your bot {bot.name} had {count} fault{'s' if count != 1 else ''} in match "
            f"{match.id} ({match.game}).{why}{lost} The match's page shows each one."
        )
        notice = notify(
            session, bot.account_id, "bot_faults", text, bot_id=bot.id, match_id=match.id
        )
        if notice is not None:
            made.append(notice)
            session.flush()  # the next seat's check sees it (the same bot in two seats)
    return made


def _challengers(session: Session, tournament_id: int, bot_ids: Iterable[int] | None) -> list[Any]:
    query = (
        select(TournamentEntry.bot_id, TournamentEntry.sprt_decision, Bot.name, Bot.account_id)
        .join(Bot, Bot.id == TournamentEntry.bot_id)
        .where(
            TournamentEntry.tournament_id == tournament_id,
            TournamentEntry.challenger,
            Bot.kind != "house",
            Bot.reference.is_not(True),
            Bot.account_id.is_not(None),
        )
        .order_by(TournamentEntry.bot_id)
    )
    if bot_ids is not None:
        query = query.where(TournamentEntry.bot_id.in_(sorted(set(bot_ids))))
    return list(session.execute(query).all())


def grades_decided(
    session: Session, tournament: Tournament, bot_ids: Iterable[int] | None = None
) -> list[Notice]:
    """``grade_decided`` notices for the challengers of a qualifier (those of ``bot_ids``,
    or all) whose grade is decided now and who were not told yet."""
    from arena.competition import grading
    from arena.services.grading import challenger_results

    if not tournament.pass_rule:
        return []
    candidates = _challengers(session, tournament.id, bot_ids)
    if not candidates:
        return []
    told = set(
        session.scalars(
            select(Notice.bot_id).where(
                Notice.kind == "grade_decided",
                Notice.tournament_id == tournament.id,
                Notice.bot_id.in_([c.bot_id for c in candidates]),
            )
        )
    )
    candidates = [c for c in candidates if c.bot_id not in told]
    if not candidates:
        return []
    rule = grading.PassRule.from_json(tournament.pass_rule)
    results = challenger_results(session, tournament.id, [c.bot_id for c in candidates])
    made = []
    for bot_id, decision, name, account_id in candidates:
        graded = grading.grade(rule, results[bot_id], decision)
        if graded.grade == "pending":
            continue
        verdict = "passed" if graded.grade == "pass" else "did not pass"
        text = (
            f"Your bot {name} {verdict} the qualifier {tournament.name} "
            f"(tournament {tournament.id}; rule: {rule.text()}): {graded.reason(rule)}, "
            f"{graded.matches} match{'es' if graded.matches != 1 else ''} played."
        )
        notice = notify(
            session, account_id, "grade_decided", text, bot_id=bot_id, tournament_id=tournament.id
        )
        if notice is not None:
            made.append(notice)
    return made


def match_settled(session: Session, match: Match) -> list[Notice]:
    """What a settled match of a tournament may decide: its challengers' grades."""
    if match.tournament_id is None:
        return []
    tournament = session.get(Tournament, match.tournament_id)
    if tournament is None or not tournament.pass_rule:
        return []
    return grades_decided(session, tournament, [s.bot_id for s in match.seats])


def tournament_finished(session: Session, tournament: Tournament) -> list[Notice]:
    """A tournament just finished: its starter and its entrants' owners are told (one
    notice an account, naming its bots), and a qualifier's last grades are decided."""
    made = grades_decided(session, tournament)
    rows = session.execute(
        select(Bot.id, Bot.name, Bot.account_id, TournamentEntry.matches, TournamentEntry.points)
        .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
        .where(
            TournamentEntry.tournament_id == tournament.id,
            Bot.kind == "bot",
            Bot.reference.is_not(True),
            Bot.account_id.is_not(None),
        )
        .order_by(Bot.account_id, Bot.id)
    ).all()
    owned: dict[int, list[Any]] = {}
    for row in rows:
        owned.setdefault(row.account_id, []).append(row)
    accounts = set(owned) | ({tournament.created_by} if tournament.created_by else set())
    # one query for them all: notify() finds each in the session
    list(session.scalars(select(Account).where(Account.id.in_(sorted(accounts)))))
    head = (
        f"The tournament {tournament.name} (tournament {tournament.id}, {tournament.game}) "
        "finished."
    )
    for account_id in sorted(accounts):
        bots = owned.get(account_id, [])
        said = "; ".join(
            f"{b.name}: {b.points:g} points in {b.matches} match{'es' if b.matches != 1 else ''}"
            for b in bots[:10]
        )
        more = f" (and {len(bots) - 10} more)" if len(bots) > 10 else ""
        text = (
            head + (f" Your bots: {said}{more}." if bots else "") + " Its page has the standings."
        )
        notice = notify(
            session,
            account_id,
            "tournament_finished",
            text,
            bot_id=bots[0].id if len(bots) == 1 else None,
            tournament_id=tournament.id,
        )
        if notice is not None:
            made.append(notice)
    return made


# -- where they go --------------------------------------------------------------------------
def set_destinations(
    session: Session, config: Config, account: Account, changes: dict[str, str | None]
) -> str | None:
    """Set the account's ``notify_url`` and/or ``email`` (None or "": removed).  A webhook
    must pass the address policy bots' endpoints do (400 if not); setting one makes a new
    signing secret, returned to be shown this once (None when no webhook was set)."""
    secret = None
    if "notify_url" in changes:
        url = (changes["notify_url"] or "").strip() or None
        if url is not None:
            try:
                config.address_policy.check_endpoint(url)
            except ValueError as exc:  # AddressRefused never says which check failed
                raise ServiceError(400, f"notify_url refused: {exc}") from None
            secret = secrets.token_urlsafe(32)
        account.notify_url = url
        account.notify_secret = secret
    if "email" in changes:
        account.email = (changes["email"] or "").strip() or None
    return secret


def destinations_json(account: Account) -> dict[str, Any]:
    return {"notify_url": account.notify_url, "email": account.email}


# -- reading them ----------------------------------------------------------------------------
def notice_json(notice: Notice) -> dict[str, Any]:
    return {
        "id": notice.id,
        "kind": notice.kind,
        "text": notice.text,
        "bot_id": notice.bot_id,
        "tournament_id": notice.tournament_id,
        "match_id": notice.match_id,
        "created_at": notice.created_at,
        "read": notice.read_at is not None,
        "read_at": notice.read_at,
    }


def account_notices(
    session: Session, account_id: int, *, page: int = 1, page_size: int = 20, unread: bool = False
) -> tuple[list[Notice], int]:
    """A page of the account's notices, newest first, and how many there are."""
    where = [Notice.account_id == account_id]
    if unread:
        where.append(Notice.read_at.is_(None))
    total = session.scalar(select(func.count(Notice.id)).where(*where)) or 0
    rows = session.scalars(
        select(Notice)
        .where(*where)
        .order_by(Notice.created_at.desc(), Notice.id.desc())
        .offset((page - 1) * page_size)
        .limit(page_size)
    )
    return list(rows), total


def unread_count(session: Session, account_id: int) -> int:
    """How many of the account's notices are unread (the pages' badge)."""
    return (
        session.scalar(
            select(func.count(Notice.id)).where(
                Notice.account_id == account_id, Notice.read_at.is_(None)
            )
        )
        or 0
    )


def mark_read(session: Session, account_id: int, ids: Sequence[int] | None = None) -> int:
    """Mark the account's notices ``ids`` read (None: all of them); how many were unread.
    Ids of other accounts' notices are ignored, as unknown ones are."""
    where = [Notice.account_id == account_id, Notice.read_at.is_(None)]
    if ids is not None:
        if not ids:
            return 0
        where.append(Notice.id.in_(sorted(set(ids))))
    result = session.execute(
        update(Notice)
        .where(*where)
        .values(read_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0
