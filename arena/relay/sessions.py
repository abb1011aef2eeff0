"""The sessions of bots that connect out, in the database: which web process holds a
bot's session (its *home*), and what the bot's page shows of it.

Every function works in its caller's transaction.  A web process opens or takes over a
session here before it holds it in its hub (``arena.relay.hub``); a worker reads the
home of a bot here before it hands it a request (``locate``).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Iterable
from typing import Any, NamedTuple

from sqlalchemy import select, tuple_, update
from sqlalchemy.orm import Session

from arena.models import Bot, BotSession, aware, utcnow

SEEN_EVERY = dt.timedelta(seconds=10)  # "last heard from" is written this often (presence)
ONLINE_FOR = dt.timedelta(seconds=60)  # heard from this recently: connected


class Opened(NamedTuple):
    """A new session: its token, and the home of the session it replaced (None: none was
    live, or it was held in this same process)."""

    token: str
    replaced: bool
    old_home: str | None


def open_session(
    session: Session, bot_id: int, home: str, info: dict[str, Any], token: str | None = None
) -> Opened:
    """Open a new session of the bot, held at ``home``; a live one it had is replaced.
    ``token``: the new session's (at most 64 characters), one the caller can recognise
    later; a random one by default."""
    row = session.get(BotSession, bot_id, with_for_update=True)
    now = utcnow()
    token = token or secrets.token_urlsafe(32)
    if row is None:
        row = BotSession(bot_id=bot_id, token=token, home=home, replaced=0)
        session.add(row)
        replaced, old_home = False, None
    else:
        replaced = row.closed_at is None
        old_home = row.home if replaced and row.home != home else None
        if replaced:
            row.replaced += 1
            row.replaced_at = now
        row.token, row.home = token, home
    row.opened_at = row.seen_at = now
    row.closed_at = None
    row.info = info
    row.draining = False
    session.flush()
    return Opened(token, replaced, old_home)


def take_over(session: Session, bot_id: int, token: str, home: str) -> str | None:
    """The bot polled ``home`` with its live session ``token``: the session is held there
    from now on.  Returns the home it leaves (None: it was there already); raises
    ``LookupError`` when ``token`` is not the bot's live session."""
    row = session.get(BotSession, bot_id, with_for_update=True)
    if row is None or row.closed_at is not None or row.token != token:
        raise LookupError("not the bot's live session")
    old = row.home
    row.home = home
    row.seen_at = utcnow()
    return None if old == home else old


def locate(session: Session, bot_id: int) -> str | None:
    """The home of the bot's live session, or None: the bot is not connected."""
    return session.scalar(
        select(BotSession.home).where(BotSession.bot_id == bot_id, BotSession.closed_at.is_(None))
    )


def online(session: Session, bot_ids: Iterable[int]) -> set[int]:
    """Those of ``bot_ids`` connected now, taking new matches: a live session heard from
    within ``ONLINE_FOR``, not draining."""
    ids = list(bot_ids)
    if not ids:
        return set()
    since = utcnow() - ONLINE_FOR
    rows = session.execute(
        select(BotSession.bot_id, BotSession.seen_at).where(
            BotSession.bot_id.in_(ids),
            BotSession.closed_at.is_(None),
            BotSession.draining.is_(False),
        )
    )
    return {bot_id for bot_id, seen_at in rows if aware(seen_at) >= since}


def offline(session: Session, bot_ids: Iterable[int]) -> list[int]:
    """Those of ``bot_ids`` that connect out and are not connected now (their requests
    would be ``disconnected`` faults), in order.  A house bot (played in the worker) and
    a hosted one (run by the arena) have no endpoint either, and are never offline."""
    ids = list(bot_ids)
    connect = set(
        session.scalars(
            select(Bot.id).where(
                Bot.id.in_(ids),
                Bot.endpoint.is_(None),
                Bot.kind != "house",
                Bot.hosted.is_(False),
            )
        )
    ) if ids else set()  # fmt: skip
    here = online(session, connect)
    return [bot_id for bot_id in ids if bot_id in connect and bot_id not in here]


def seen(session: Session, bot_id: int, token: str, draining: bool) -> None:
    """The bot polled: when it was last heard from, and whether it is draining."""
    row = session.get(BotSession, bot_id)
    if row is not None and row.token == token:
        row.seen_at = utcnow()
        row.draining = draining


def seen_many(session: Session, tokens: dict[int, str], at: dt.datetime) -> None:
    """Bots heard from (``arena.relay.presence``): ``seen_at = at`` for each bot whose
    live session's token is ``tokens[bot_id]``, in one statement."""
    if tokens:
        session.execute(
            update(BotSession)
            .where(tuple_(BotSession.bot_id, BotSession.token).in_(list(tokens.items())))
            .values(seen_at=at)
            .execution_options(synchronize_session=False)
        )


def close(session: Session, bot_id: int, token: str) -> bool:
    """The bot ended its session; False when it was not the live one."""
    row = session.get(BotSession, bot_id, with_for_update=True)
    if row is None or row.token != token or row.closed_at is not None:
        return False
    row.closed_at = utcnow()
    return True


def presence(row: BotSession | None, now: dt.datetime | None = None) -> dict[str, Any]:
    """What a bot's page and ``GET /api/bots/<id>`` show of its connection."""
    if row is None:
        return {"connected": False, "since": None, "last_seen": None}
    now = now or utcnow()
    seen_at = aware(row.seen_at)
    live = row.closed_at is None and now - seen_at <= ONLINE_FOR
    info = row.info or {}
    return {
        "connected": live,
        "since": aware(row.opened_at) if live else None,
        "last_seen": seen_at,
        "draining": bool(row.draining) if live else False,
        "sdk": info.get("sdk"),
        "version": info.get("version"),
        "capacity": info.get("capacity"),
        "sessions_replaced": row.replaced,
        "replaced_at": aware(row.replaced_at) if row.replaced_at else None,
    }
