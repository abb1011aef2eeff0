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
on SQLite), so two wardens never adopt the same match.  A renewal skips the rows that its
own process has locked to record their results (that transaction holds the match: nobody
can adopt it meanwhile) instead of waiting behind them; on PostgreSQL those waits were
the renewals of over a second, up to 14 s against a 15 s lease, in fault-free runs.

A warden that could not renew its leases for a whole lease (its database link is cut,
its host frozen) fences itself: it tells all its matches to stop, so a worker cut off
records nothing and charges no bot for the requests its own partition failed; its
matches are another worker's by then.  Until it renews again, ``fenced`` is true and the
process claims no new match.

It sends messages again only when the broker's match queue is empty: a worker cut off
from the broker alone received nothing for a while, but the broker still held every one
of those messages.
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

from sqlalchemy import func, or_, select, text, update

from arena.db import Database
from arena.models import Match, utcnow
from arena.worker import lifecycle

log = logging.getLogger(__name__)

RESEND_BATCH = 500  # messages sent again in one round at most
SLOW_RENEWAL = 1.0  # seconds: a renewal slower than this is logged (it waited on something)


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
        messages_waiting: Callable[[], int] | None = None,
    ):
        self.database = database
        self.owner = new_owner()
        self.lease = dt.timedelta(seconds=lease_seconds)
        self.interval = lease_seconds / 3
        self.capacity = capacity
        self._claim = claim
        self._play = play
        self._enqueue = enqueue
        self._messages_waiting = messages_waiting
        self._held: dict[int, threading.Event] = {}
        self._adopted: set[int] = set()
        self._lock = threading.Lock()
        # until a round has passed, assume a full pool and a broker delivering
        self._full_at = self._delivered_at = time.monotonic()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self._postgres = database.engine.dialect.name == "postgresql"
        # when the last renewal that reached the database began: every lease this process
        # holds runs at least a lease from then
        self._renewed_at = time.monotonic()
        self._fenced = False

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

    @property
    def in_flight(self) -> int:
        """The matches this process plays now, its own and those it adopted."""
        with self._lock:
            return len(self._held)

    def release(self, match_id: int) -> None:
        with self._lock:
            self._held.pop(match_id, None)
            self._adopted.discard(match_id)

    # -- the thread ---------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._renewed_at = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="arena-warden", daemon=True)
            self._thread.start()
            self._watchdog = threading.Thread(
                target=self._watch, name="arena-warden-watchdog", daemon=True
            )
            self._watchdog.start()

    @property
    def fenced(self) -> bool:
        """No renewal reached the database for a lease: this process's leases may be
        others' now (see the module docstring)."""
        return self._fenced

    def _watch(self) -> None:
        """Fence this process when its renewals stop reaching the database, whatever the
        renewing thread is stuck on (a dead link, a lock)."""
        step = min(1.0, self.interval / 5)
        while not self._stopped.wait(step):
            self.check_fence()

    def check_fence(self, now: float | None = None) -> list[int]:
        """Stop every held match if the last renewal began nine tenths of a lease ago or
        more (its leases lapse soon after, whatever the clocks); returns the matches told
        to stop."""
        now = time.monotonic() if now is None else now
        if now - self._renewed_at < 0.9 * self.lease.total_seconds():
            return []
        with self._lock:
            held = dict(self._held)
        if not self._fenced:
            self._fenced = True
            log.error(
                "warden %s: no lease renewed for %.0f s; stopping its %d matches, which "
                "other workers take over",
                self.owner,
                now - self._renewed_at,
                len(held),
            )
        for stop in held.values():
            stop.set()
        return sorted(held)

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
        began = time.monotonic()
        lost = self.renew()
        took = time.monotonic() - began
        if took > SLOW_RENEWAL:
            log.warning("warden %s: renewing took %.1f s", self.owner, took)
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
        this process's are told to stop.  Returns those.

        A held match whose row is locked (its result is being recorded, by this process:
        no other can lock a row under this process's live lease but to adopt it once it
        lapsed) is skipped, not waited for."""
        began = time.monotonic()
        with self._lock:
            held = dict(self._held)
        if not held:
            if self._fenced:  # nothing to renew: reaching the database ends the fence
                with self.database.session() as session:
                    session.execute(text("SELECT 1"))
            self._renewed(began)
            return []
        with self.database.session() as session:
            if self._postgres:
                # a backstop: the pins' rows are locked only briefly by claims
                session.execute(text("SET LOCAL lock_timeout = '2s'"))
            until = self.lease_until(utcnow())
            mine = (
                Match.id.in_(held),
                Match.lease_owner == self.owner,
                Match.status == "running",
            )
            free = select(Match.id).where(*mine)
            if self._postgres:
                free = free.with_for_update(skip_locked=True)
            kept = set(
                session.scalars(
                    update(Match)
                    .where(Match.id.in_(free.scalar_subquery()))
                    .values(lease_expires_at=until)
                    .returning(Match.id)
                    .execution_options(synchronize_session=False)
                )
            )
            if self._postgres and len(kept) < len(held):
                # the skipped rows: still this process's (being recorded) or lost
                kept |= set(session.scalars(select(Match.id).where(*mine)))
            lifecycle.renew_pins(session, self.owner, until)
        self._renewed(began)
        lost = sorted(set(held) - kept)
        for match_id in lost:
            held[match_id].set()
        return lost

    def _renewed(self, began: float) -> None:
        self._renewed_at = began
        if self._fenced:
            self._fenced = False
            log.warning("warden %s: renewing again", self.owner)

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
            log.exception(
                "adopted match %s could not be played", match_id, extra={"match_id": match_id}
            )
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
        if self._messages_waiting is not None and self._messages_waiting() > 0:
            return []  # the broker still has messages for the workers: none was lost
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
