"""When the bots connected to this web process were last heard from, written in batches.

A connected bot is *online* (offered matches, shown connected) while its session's
``seen_at`` is recent (``arena.relay.sessions.ONLINE_FOR``).  Writing it at every poll
cost a transaction per poll: with thousands of bots whose polls come back together (after
a restart of the web tier, every ``poll_seconds``), those transactions queued for the
process's few database connections, and the polls, pages and logins behind them waited.
Here a poll only notes the bot in memory; every ``every`` seconds one statement per
thousand bots writes ``seen_at`` for each bot that polled since the last write or holds a
poll open now (a poll held for 25 s is a bot heard from all along).

Opening, taking over and draining a session are still written at once, by their own
transactions (``arena.relay.sessions``): they change more than the time.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

BATCH = 1000  # bots per statement


IDLE_ROUNDS = 6  # the writer's thread ends after this many rounds with nothing to write


class Presence:
    """The bots heard from since the last write, and the writer that runs every
    ``every`` seconds in a thread of this process: started by a ``heard`` when none runs
    (the first, one in a forked child, one after the thread ended), ended after
    ``IDLE_ROUNDS`` rounds with no bot to write (an app no bot polls any more)."""

    def __init__(
        self,
        write: Callable[[dict[int, str], dt.datetime], None],
        holding: Callable[[], dict[int, str]],
        every: float,
        now: Callable[[], dt.datetime],
    ) -> None:
        """``write(tokens, at)``: ``seen_at = at`` for each bot's session whose token
        is ``tokens[bot_id]`` (a session replaced since is left alone); ``holding()``:
        the bots with a poll open here now, and their tokens."""
        self._write = write
        self._holding = holding
        self.every = every
        self._now = now
        self._heard: dict[int, str] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pid: int | None = None
        self.thread: threading.Thread | None = None  # the writer's, once started

    def heard(self, bot_id: int, token: str) -> None:
        """The bot polled with session ``token``: it is written with the next batch."""
        with self._lock:
            self._heard[bot_id] = token
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self.thread = threading.Thread(target=self._run, name="arena-presence", daemon=True)
                self.thread.start()

    def _done(self) -> bool:
        """End the thread (True) when nothing waits to be written; a ``heard`` after it
        starts another."""
        with self._lock:
            if self._heard:
                return False
            self._pid = None
            return True

    def flush(self) -> int:
        """Write the bots heard from and those holding a poll now; how many."""
        with self._lock:
            heard, self._heard = self._heard, {}
        tokens = {**self._holding(), **heard}
        if not tokens:
            return 0
        at = self._now()
        ids = list(tokens)
        try:
            for start in range(0, len(ids), BATCH):
                self._write({i: tokens[i] for i in ids[start : start + BATCH]}, at)
        except Exception:
            with self._lock:  # kept for the next write (a newer poll's token wins)
                self._heard = {**heard, **self._heard}
            raise
        return len(tokens)

    def _run(self) -> None:
        idle = 0
        while not self._wake.wait(self.every):
            try:
                idle = 0 if self.flush() else idle + 1
            except Exception as exc:  # the database away: the next write tries again
                log.warning("could not write when connected bots were heard from: %s", exc)
            if idle >= IDLE_ROUNDS and self._done():
                return

    def stop(self) -> None:
        self._wake.set()
