"""Which worker and beat processes are alive: their heartbeats (``WorkerBeat``).

A process writes its row when it starts (``beat``) and every ``BEAT_SECONDS`` while it
lives; a row not written for ``LIVE_SECONDS`` is a process that is gone (killed, cut off,
stopped).  Pure reads and small writes, no Flask and no Celery.
"""

from __future__ import annotations

import datetime as dt
import os
import socket

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.models import WorkerBeat, utcnow

BEAT_SECONDS = 5.0  # how often a live process writes its heartbeat
LIVE_SECONDS = 20.0  # a heartbeat older than this is a process that is gone


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


def live(
    session: Session, kind: str = "worker", now: dt.datetime | None = None
) -> list[WorkerBeat]:
    """The processes of ``kind`` seen in the last ``LIVE_SECONDS`` and not stopped."""
    since = (now or utcnow()) - dt.timedelta(seconds=LIVE_SECONDS)
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
