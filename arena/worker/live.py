"""Running matches, as they are played: a worker process writes its matches' steps as
they come (``LiveWriter``), and a match's page reads them back (``steps_so_far``) to draw
the table with ``arena.match.frames``.

One writer per process gathers the new steps of all its matches and writes them every
``interval`` seconds in one transaction: a worker with a hundred matches in flight makes
one commit a second, not a hundred (on SQLite, a commit per match and second cost a
quarter more worker CPU per decision; ``benchmarks/tournament.py``).  Rows are keyed by
match, attempt and first step: a match taken over by another worker starts again from its
seed, and its page follows the new attempt only.  Steps are written only for a match
still running under that attempt and still played here, and deleted when the match is
recorded (its replay then says everything).  A write that overlaps the end of a match
(its steps taken for writing, then the match forgotten) writes nothing for it: it used to
write its first steps again, and every later write of the process failed on the same key
until the result was committed.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from arena.db import Database
from arena.models import LiveSteps, Match

log = logging.getLogger(__name__)

Key = tuple[int, int]  # match id, attempt


class LiveWriter:
    """Gathers the steps of this process's matches; a thread of its own writes them."""

    def __init__(self, database: Database, interval: float):
        self.database = database
        self.interval = interval
        self._lock = threading.Lock()
        self._pending: dict[Key, list[list[dict[str, Any]]]] = {}
        self._written: dict[Key, int] = {}  # steps of each match already in the database
        self._playing: set[Key] = set()  # the matches fed and not yet forgotten
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def feed(self, match_id: int, attempt: int) -> LiveFeed:
        """What the referee calls with each step of this match (``on_step``)."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's thread is not here
                self._pid, self._thread = os.getpid(), None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="live-writer", daemon=True)
                self._thread.start()
            self._playing.add((match_id, attempt))
        return LiveFeed(self, (match_id, attempt))

    def add(self, key: Key, decisions: list[dict[str, Any]]) -> None:
        with self._lock:
            self._pending.setdefault(key, []).append(decisions)

    def forget(self, key: Key) -> None:
        """The match is over here: what is not written yet never will be."""
        with self._lock:
            self._playing.discard(key)
            self._pending.pop(key, None)
            self._written.pop(key, None)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush()

    def close(self) -> None:
        self._stop.set()

    def flush(self) -> None:
        """Write every match's new steps in one transaction (those of matches no longer
        running under their attempt are dropped).  On failure they wait for the next."""
        with self._lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return
        try:
            with self.database.session() as session:
                running = {
                    (match_id, attempt)
                    for match_id, attempt in session.execute(
                        select(Match.id, Match.attempts).where(
                            Match.id.in_({match_id for match_id, _ in batch}),
                            Match.status == "running",
                        )
                    )
                }
                rows = []
                with self._lock:
                    for key, steps in batch.items():
                        if key in running and key in self._playing:
                            first = self._written.get(key, 0)
                            rows.append(
                                {
                                    "match_id": key[0],
                                    "attempt": key[1],
                                    "first": first,
                                    "steps": steps,
                                }
                            )
                if rows:
                    # a row already there is one this process wrote (the same steps)
                    postgres = session.get_bind().dialect.name == "postgresql"
                    insert = pg_insert if postgres else sqlite_insert
                    session.execute(insert(LiveSteps).values(rows).on_conflict_do_nothing())
        except Exception:  # the database is busy or away: these steps go with the next write
            log.warning("could not write the live steps of %d matches", len(batch), exc_info=True)
            with self._lock:
                for key, steps in batch.items():
                    if key in self._playing:
                        self._pending[key] = steps + self._pending.get(key, [])
            return
        with self._lock:
            for row in rows:
                key = (row["match_id"], row["attempt"])
                if key in self._playing:
                    self._written[key] = row["first"] + len(row["steps"])


class LiveFeed:
    """The referee's ``on_step`` for one match: hands each step to the writer."""

    def __init__(self, writer: LiveWriter, key: Key):
        self.writer = writer
        self.key = key

    def __call__(self, decisions: list[dict[str, Any]]) -> None:
        self.writer.add(self.key, decisions)

    def close(self) -> None:
        self.writer.forget(self.key)


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
