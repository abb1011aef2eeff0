"""Running matches, as they are played: the worker writes each match's steps in chunks
(``LiveFeed``), and the match's page reads them back (``steps_so_far``) to draw the table
with ``arena.frames``.

A chunk is written at most every ``interval`` seconds per match (one small INSERT, not a
rewrite of the whole list), the first one right after the first step so that a page
shows the deal at once.  The rows are keyed by the attempt: a match taken over by
another worker starts again from its seed, and the page follows the new attempt only.
They are deleted when the match is recorded (its replay then says everything).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from arena.db import Database
from arena.models import LiveSteps

log = logging.getLogger(__name__)


class LiveFeed:
    """Called with each step's decisions by the referee (``Referee.run(on_step=...)``);
    writes them in chunks.  A failed write is logged and retried with the next chunk:
    the audience of a match must never stop the match."""

    def __init__(self, database: Database, match_id: int, attempt: int, interval: float):
        self.database = database
        self.match_id = match_id
        self.attempt = attempt
        self.interval = interval
        self.written = 0  # steps already in the database
        self.pending: list[list[dict[str, Any]]] = []
        self.last_write = -float("inf")

    def __call__(self, decisions: list[dict[str, Any]]) -> None:
        self.pending.append(decisions)
        if time.monotonic() - self.last_write >= self.interval:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        self.last_write = time.monotonic()
        chunk = LiveSteps(
            match_id=self.match_id, attempt=self.attempt, first=self.written, steps=self.pending
        )
        try:
            with self.database.session() as session:
                session.add(chunk)
        except Exception:  # the database is busy or away: the next chunk takes these too
            log.warning("match %s: could not write its live steps", self.match_id, exc_info=True)
            return
        self.written += len(self.pending)
        self.pending = []


def steps_so_far(session: Session, match_id: int, attempt: int) -> list[list[dict[str, Any]]]:
    """The steps of the match's current attempt written so far, in order."""
    chunks = session.scalars(
        select(LiveSteps.steps)
        .where(LiveSteps.match_id == match_id, LiveSteps.attempt == attempt)
        .order_by(LiveSteps.first)
    )
    return [step for chunk in chunks for step in chunk]


def forget(session: Session, match_id: int, keep_attempt: int | None = None) -> None:
    """Delete the match's live steps (but those of ``keep_attempt``)."""
    query = delete(LiveSteps).where(LiveSteps.match_id == match_id)
    if keep_attempt is not None:
        query = query.where(LiveSteps.attempt != keep_attempt)
    session.execute(query)
