"""The heartbeat of a worker or beat process: its ``WorkerBeat`` row, written by a
daemon thread every ``BEAT_SECONDS`` (``arena.services.workers``).

A worker process beats under its warden's owner name, with the warden's capacity and the
matches it holds; ``arena beat`` beats from Celery's ``beat_init`` signal under a name of
its own.  The web reads the rows to tell which processes are alive; nothing here plays,
claims or schedules anything.  A beat that fails (the database away) is logged and
tried again at the next one: the process goes on working.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from celery.signals import beat_init

from arena.db import Database
from arena.metrics import worker as worker_metrics
from arena.services import workers

if TYPE_CHECKING:
    from arena.worker.warden import Warden

log = logging.getLogger(__name__)


class Heartbeat:
    """Writes the row ``name`` of ``kind`` now and every ``interval`` seconds until
    ``stop``, which marks it stopped.  ``load()`` gives (capacity, in flight)."""

    def __init__(
        self,
        database: Database,
        name: str,
        *,
        kind: str = "worker",
        load: Callable[[], tuple[int, int]] = lambda: (0, 0),
        interval: float = workers.BEAT_SECONDS,
    ):
        self.database = database
        self.name = name
        self.kind = kind
        self.load = load
        self.interval = interval
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self) -> bool:
        """Write the row once; False when the database did not take it."""
        try:
            capacity, in_flight = self.load()
            with self.database.session() as session:
                workers.beat(
                    session,
                    self.name,
                    kind=self.kind,
                    capacity=capacity,
                    in_flight=in_flight,
                    # where its /metrics is served (None: nowhere); read at each beat,
                    # the port being served from worker_ready, maybe after this started
                    metrics_port=worker_metrics.served_port(),
                )
            return True
        except Exception:  # the database is away: the next beat tries again
            log.warning("the heartbeat of %s could not be written", self.name, exc_info=True)
            return False

    def start(self) -> Heartbeat:
        if self._thread is None:
            self.beat()  # at once: the process is seen as soon as it is ready
            self._thread = threading.Thread(
                target=self._run, name=f"arena-heartbeat-{self.kind}", daemon=True
            )
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            self.beat()

    def stop(self) -> None:
        """Stop beating and mark the row stopped (a clean exit is not a dead process)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        try:
            with self.database.session() as session:
                workers.stopped(session, self.name)
        except Exception:
            log.warning("the stop of %s could not be written", self.name, exc_info=True)


def beat_name() -> str:
    """The name of an ``arena beat`` process's row: its host and process id."""
    return f"beat@{socket.gethostname()[:100]}:{os.getpid()}"


@beat_init.connect
def _beat_started(**_: Any) -> None:
    """``arena beat`` started: it beats until it exits."""
    from arena.worker import celery_app

    heart = Heartbeat(celery_app._db(), beat_name(), kind="beat")
    celery_app._state["beat_heartbeat"] = heart.start()
    atexit.register(heart.stop)


def start_for(warden: Warden) -> Heartbeat:
    """The heartbeat of a worker process, under its warden's owner name, with its
    capacity and the matches it holds (one per process: a second call returns it)."""
    from arena.worker.celery_app import _state, _state_lock

    with _state_lock:
        heart = _state.get("heartbeat")
        if heart is None:
            heart = Heartbeat(
                warden.database,
                warden.owner,
                load=lambda: (warden.capacity, warden.in_flight),
            )
            _state["heartbeat"] = heart
    return heart.start()


def stop() -> None:
    """Stop this worker process's heartbeat, marking its row stopped."""
    from arena.worker.celery_app import _state

    heart = _state.pop("heartbeat", None)
    if heart is not None:
        heart.stop()
