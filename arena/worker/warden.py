"""The warden of a worker process: the leases of the matches it plays, and recovery.

A worker claims a match by writing a lease on its row: the owner (this process) and an
expiry ``lease_seconds`` ahead.  While the process plays, its warden renews the leases
of all its matches in one UPDATE every third of a lease.  When a worker dies (``kill -9``
of its process, a machine gone), its leases lapse, and the warden of any other worker
takes the matches over: it claims each one and plays it again from its seed in a thread
of its own, without the broker, so the match does not wait behind the queue's backlog.
Whatever the broker does with the dead worker's unacknowledged message (Redis hands it
out again after the visibility timeout, RabbitMQ at once, the file-system broker never)
then no longer matters: that delivery finds the match finished, or running under a live
lease, and does nothing.  A warden that sees its own lease taken over (its database
connection was down longer than a lease, say) tells its match to stop.

A warden also sends again the message of a match that is queued but that no worker has
received: a broker restarted without persistence, a worker killed with messages
prefetched, an enqueue that failed after the commit.  It does so only when its own
process had a free slot and received no message for a whole round (so the broker has
nothing for it: a slow broker still delivering a backlog does not count as empty), and
only for matches queued (or last sent) more than a lease ago.

Every worker process has a warden; nothing here needs ``arena beat``.  Renewing and
adopting use the database's row locks (``SKIP LOCKED`` on PostgreSQL, the database lock
on SQLite), so two wardens never adopt the same match.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import func, or_, select, update

from arena.db import Database
from arena.models import Match, utcnow
from arena.worker import lifecycle

log = logging.getLogger(__name__)

RESEND_BATCH = 500  # messages sent again in one round at most


def new_owner() -> str:
    """A name for this process's leases: the host, the process and a nonce (a process id
    can be reused after a restart)."""
    return f"{socket.gethostname()[:100]}:{os.getpid()}:{secrets.token_hex(4)}"


class Warden:
    """Leases and recovery for the matches of one process (see the module docstring).

    ``capacity`` is how many matches the process plays at once (its pool); the warden
    adopts at most that many more.  ``claim(session, match, owner, until, now)`` claims
    a locked match (None when claimed, else why not); ``play(match_id)`` plays a match
    this warden claimed; ``enqueue(match_ids)`` sends ``run_match`` messages."""

    def __init__(
        self,
        database: Database,
        *,
        lease_seconds: float,
        capacity: int,
        claim: Callable[..., str | None],
        play: Callable[[int], Any],
        enqueue: Callable[[list[int]], None],
    ):
        self.database = database
        self.owner = new_owner()
        self.lease = dt.timedelta(seconds=lease_seconds)
        self.interval = lease_seconds / 3
        self.capacity = capacity
        self._claim = claim
        self._play = play
        self._enqueue = enqueue
        self._held: dict[int, threading.Event] = {}
        self._adopted: set[int] = set()
        self._lock = threading.Lock()
        # until a round has passed, assume a full pool and a broker delivering
        self._full_at = self._delivered_at = time.monotonic()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._postgres = database.engine.dialect.name == "postgresql"

    # -- the matches of this process ------------------------------------------------------
    def lease_until(self, now: dt.datetime) -> dt.datetime:
        return now + self.lease

    def hold(self, match_id: int) -> threading.Event:
        """This process plays ``match_id`` (claimed under its lease): renew it until
        ``release``.  The event is set when the lease is lost: stop playing."""
        stop = threading.Event()
        with self._lock:
            self._held[match_id] = stop
            if len(self._held) - len(self._adopted) >= self.capacity:
                self._full_at = time.monotonic()
        return stop

    def delivered(self) -> None:
        """The broker handed this process a message (``run_match`` started)."""
        self._delivered_at = time.monotonic()

    def release(self, match_id: int) -> None:
        with self._lock:
            self._held.pop(match_id, None)
            self._adopted.discard(match_id)

    # -- the thread ---------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="arena-warden", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                self.round()
            except Exception:  # the database or the broker is away: try next round
                log.exception("the warden's round failed")

    def round(self) -> dict[str, list[int]]:
        """Renew, adopt, send again; returns what it did (for logs and tests)."""
        lost = self.renew()
        adopted = self.adopt()
        resent = self.resend()
        if lost or adopted or resent:
            log.warning(
                "warden %s: lost %s, adopted %s, sent again %s", self.owner, lost, adopted, resent
            )
        return {"lost": lost, "adopted": adopted, "resent": resent}

    # -- the three duties ---------------------------------------------------------------
    def renew(self) -> list[int]:
        """Push the lease of every held match, and this process's pins of bots
        (``arena.worker.lifecycle.pin_bots``), a lease ahead; the matches whose lease is no longer
        this process's are told to stop.  Returns those."""
        with self._lock:
            held = dict(self._held)
        if not held:
            return []
        with self.database.session() as session:
            until = self.lease_until(utcnow())
            kept = set(
                session.scalars(
                    update(Match)
                    .where(
                        Match.id.in_(held),
                        Match.lease_owner == self.owner,
                        Match.status == "running",
                    )
                    .values(lease_expires_at=until)
                    .returning(Match.id)
                )
            )
            lifecycle.renew_pins(session, self.owner, until)
        lost = sorted(set(held) - kept)
        for match_id in lost:
            held[match_id].set()
        return lost

    def adopt(self) -> list[int]:
        """Claim the running matches whose lease lapsed, up to this warden's capacity,
        and play each in a thread of its own."""
        with self._lock:
            room = self.capacity - len(self._adopted)
        if room <= 0:
            return []
        now = utcnow()
        adopted = []
        with self.database.session() as session:
            query = (
                select(Match)
                .where(
                    Match.status == "running",
                    or_(Match.lease_expires_at.is_(None), Match.lease_expires_at < now),
                )
                .order_by(Match.id)
                .limit(room)
            )
            if self._postgres:
                query = query.with_for_update(skip_locked=True)
            for match in session.scalars(query):
                if self._claim(session, match, self.owner, self.lease_until(now), now) is None:
                    adopted.append(match.id)
        for match_id in adopted:
            with self._lock:
                self._adopted.add(match_id)
            threading.Thread(
                target=self._play_adopted,
                args=(match_id,),
                name=f"arena-adopted-{match_id}",
                daemon=True,
            ).start()
        return adopted

    def _play_adopted(self, match_id: int) -> None:
        try:
            self._play(match_id)
        except Exception:  # the match is queued again (or failed) by play_claimed
            log.exception("adopted match %s could not be played", match_id)
        finally:
            self.release(match_id)

    def resend(self) -> list[int]:
        """When this process had a free slot and received nothing all round, send again
        the messages of matches queued (or last sent) more than a lease ago: nothing is
        waiting for them in the broker, or this process would have received it."""
        with self._lock:
            now_mono = time.monotonic()
            if len(self._held) - len(self._adopted) >= self.capacity:
                self._full_at = now_mono
            if min(now_mono - self._full_at, now_mono - self._delivered_at) < self.interval:
                return []
        now = utcnow()
        with self.database.session() as session:
            query = (
                select(Match.id)
                .where(
                    Match.status == "queued",
                    func.coalesce(Match.enqueued_at, Match.created_at) < now - self.lease,
                )
                .order_by(Match.id)
                .limit(RESEND_BATCH)
            )
            if self._postgres:
                query = query.with_for_update(skip_locked=True)
            stale = list(session.scalars(query))
            if stale:
                session.execute(update(Match).where(Match.id.in_(stale)).values(enqueued_at=now))
        if stale:
            self._enqueue(stale)
        return stale
