"""Notices: what an account should hear of (``NOTICE_KINDS``: a bot paused, a bot's faults
past a threshold, a failed validation, a tournament finished, a grade decided).  Each is a
row an account reads in the app; delivery to the account's ``notify_url`` and e-mail is
added to it.  No Flask here: the callers are services and the worker, inside their own
transaction.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from arena.models import NOTICE_KINDS, Bot, Notice

TEXT_CAP = 500


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
    nobody to tell), added to ``session``; the caller commits."""
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
    )
    session.add(notice)
    return notice


def notify_bot(
    session: Session, bot: Bot, kind: str, text: str, *, match_id: int | None = None
) -> Notice | None:
    """A notice about ``bot`` for the account it belongs to."""
    return notify(session, bot.account_id, kind, text, bot_id=bot.id, match_id=match_id)
