"""Which worker and beat processes are alive: their heartbeats (``WorkerBeat``).

A process writes its row when it starts (``beat``) and every ``BEAT_SECONDS`` while it
lives; a row not written for ``LIVE_SECONDS`` is a process that is gone (killed, cut off,
stopped).  From those rows and the matches' table it also tells what an organiser
needs to know: a tournament's matches that no worker will play (``stall_warnings``)
and the arena's state (``status``).  Pure reads and small writes, no Flask and no Celery.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from arena.models import MATCH_OPEN, MATCH_PLAYED, Match, MatchSeat, WorkerBeat, aware, utcnow

if TYPE_CHECKING:
    from arena.services.access import Caller

BEAT_SECONDS = 5.0  # how often a live process writes its heartbeat
LIVE_SECONDS = 20.0  # a heartbeat older than this is a process that is gone
# matches waiting this long with no live worker are told (arena.api.tournaments, /status)
STALL_GRACE = dt.timedelta(seconds=LIVE_SECONDS)


def beat(
    session: Session,
    name: str,
    *,
    kind: str = "worker",
    capacity: int = 0,
    in_flight: int = 0,
    metrics_port: int | None = None,
    now: dt.datetime | None = None,
) -> WorkerBeat:
    """Write the heartbeat of the process ``name`` (created on its first beat)."""
    now = now or utcnow()
    row = session.get(WorkerBeat, name)
    if row is None:
        row = WorkerBeat(
            name=name,
            kind=kind,
            host=socket.gethostname()[:100],
            pid=os.getpid(),
            started_at=now,
        )
        session.add(row)
    row.last_seen = now
    row.capacity = capacity
    row.in_flight = in_flight
    row.metrics_port = metrics_port
    row.stopped_at = None
    return row


def stopped(session: Session, name: str, now: dt.datetime | None = None) -> None:
    """The process ``name`` stops cleanly: it is no longer counted as alive."""
    row = session.get(WorkerBeat, name)
    if row is not None:
        row.stopped_at = now or utcnow()


def _alive_since(now: dt.datetime) -> dt.datetime:
    """A process last seen before this is gone."""
    return now - dt.timedelta(seconds=LIVE_SECONDS)


def live(
    session: Session, kind: str = "worker", now: dt.datetime | None = None
) -> list[WorkerBeat]:
    """The processes of ``kind`` seen in the last ``LIVE_SECONDS`` and not stopped."""
    since = _alive_since(now or utcnow())
    return list(
        session.scalars(
            select(WorkerBeat)
            .where(
                WorkerBeat.kind == kind,
                WorkerBeat.last_seen >= since,
                WorkerBeat.stopped_at.is_(None),
            )
            .order_by(WorkerBeat.name)
        )
    )


def last_seen(session: Session, kind: str = "worker") -> dt.datetime | None:
    """When a process of ``kind`` was last seen (None: never)."""
    return session.scalar(
        select(WorkerBeat.last_seen)
        .where(WorkerBeat.kind == kind)
        .order_by(WorkerBeat.last_seen.desc())
        .limit(1)
    )


# -- what an organiser is told ------------------------------------------------------------
def _ago(now: dt.datetime, then: dt.datetime) -> int:
    return max(0, round((now - aware(then)).total_seconds()))


def no_worker_warning(
    session: Session,
    waiting: int,
    waiting_since: dt.datetime | None,
    now: dt.datetime | None = None,
    what: str | None = None,
) -> dict[str, str] | None:
    """The warning of ``waiting`` matches (queued or running, since ``waiting_since``)
    that no live worker will play, or None: a worker is alive, nothing waits, or it has
    waited less than ``STALL_GRACE`` (a worker started with the matches beats within
    that: no false alarm while the arena starts up).  ``what`` waits, in words
    (default: "N matches wait to be played")."""
    if waiting <= 0:
        return None
    now = now or utcnow()
    if waiting_since is not None and now - aware(waiting_since) < STALL_GRACE:
        return None
    # one query: the last beat of a process still running, and the last of any
    running, seen = session.execute(
        select(
            func.max(case((WorkerBeat.stopped_at.is_(None), WorkerBeat.last_seen))),
            func.max(WorkerBeat.last_seen),
        ).where(WorkerBeat.kind == "worker")
    ).one()
    if running is not None and aware(running) >= _alive_since(now):
        return None
    if what is None:
        what = "1 match waits" if waiting == 1 else f"{waiting} matches wait"
        what += " to be played"
    if seen is None:
        since = "no worker has ever been seen"
    else:
        when = aware(seen).replace(microsecond=0).isoformat().replace("+00:00", " UTC")
        since = f"no worker has been seen for {_ago(now, seen)} s (last seen at {when})"
    return {
        "code": "no_worker",
        "message": f"{what}, but {since}: start one with `arena worker`",
    }


def stall_warnings(
    session: Session,
    progress: Mapping[str, int],
    waiting_since: dt.datetime | None,
    now: dt.datetime | None = None,
    building: bool = False,
) -> list[dict[str, str]]:
    """What stops matches with these counts by status (a tournament's
    ``tournament_progress``, or the whole arena's), waiting since ``waiting_since`` (a
    tournament's creation, the oldest match's), from being played: each
    ``{"code", "message"}``; empty when nothing does.  ``building``: a tournament whose
    matches a worker has still to write, which waits on a worker too."""
    waiting = progress.get("queued", 0) + progress.get("running", 0)
    what = "its matches wait to be written" if building else None
    found = no_worker_warning(session, max(waiting, building), waiting_since, now, what)
    return [found] if found is not None else []


RATE_WINDOWS = (5, 15)  # minutes over which the status page gives its rates


def status(session: Session, now: dt.datetime | None = None) -> dict[str, Any]:
    """What the organisers' status page shows, from the database alone: the live
    workers, when beat was last seen, the matches queued and running, and the matches
    finished and the bots' faults per minute over the last ``RATE_WINDOWS`` minutes."""
    now = now or utcnow()
    counts = dict(
        session.execute(
            select(Match.status, func.count())
            .where(Match.status.in_(MATCH_OPEN))
            .group_by(Match.status)
        ).all()
    )
    oldest = session.scalar(select(func.min(Match.created_at)).where(Match.status.in_(MATCH_OPEN)))
    workers = live(session, "worker", now)
    beat_seen = last_seen(session, "beat")
    worker_seen = last_seen(session, "worker")
    rates = {}
    for minutes in RATE_WINDOWS:
        since = now - dt.timedelta(minutes=minutes)
        finished = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.status == MATCH_PLAYED, Match.finished_at >= since)
        )
        faults = sum(
            int((f or {}).get("count") or 0)
            for f in session.scalars(
                select(MatchSeat.faults)
                .join(Match, Match.id == MatchSeat.match_id)
                .where(Match.finished_at >= since, MatchSeat.faults.is_not(None))
            )
        )
        rates[f"{minutes}m"] = {
            "finished_per_minute": round((finished or 0) / minutes, 2),
            "faults_per_minute": round(faults / minutes, 2),
        }
    return {
        "now": now,
        "workers": [
            {
                "name": w.name,
                "host": w.host,
                "pid": w.pid,
                "started_at": w.started_at,
                "last_seen": w.last_seen,
                "seen_seconds_ago": _ago(now, w.last_seen),
                "capacity": w.capacity,
                "in_flight": w.in_flight,
                "metrics_port": w.metrics_port,
            }
            for w in workers
        ],
        "worker_last_seen": worker_seen,
        "beat": {
            "alive": bool(live(session, "beat", now)),
            "last_seen": beat_seen,
        },
        "matches": {"queued": counts.get("queued", 0), "running": counts.get("running", 0)},
        "rates": rates,
        "warnings": stall_warnings(session, counts, oldest, now),
    }


def may_read_status(profile: str, who: Caller) -> bool:
    """The status is the organisers': the admin, an organiser account, an account that
    organises an event.  In the local profile anyone reads it, as everything else."""
    return profile == "local" or who.organiser or bool(who.organises)
