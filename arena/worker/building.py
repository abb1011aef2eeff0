"""Building a big tournament on a worker: ``build_tournament``, a task of the control
queue (in the local profile the embedded worker runs it), and ``send_build``, what the
web process calls after the commit that wrote the tournament "building".

The work itself is ``arena.services.tournaments.build_tournament``: schedule, then write
the matches in short transactions and send each batch to the match queue.  A delivery
made again (a worker killed mid-build) resumes after the matches already written.
"""

from __future__ import annotations

from arena.config import Config
from arena.services import tournaments
from arena.worker import celery_app
from arena.worker.celery_app import _state, celery, configure
from arena.worker.queue import _send


@celery.task(name="arena.build_tournament", acks_late=True, reject_on_worker_lost=True)
def build_tournament(tournament_id: int, rated: bool) -> int:
    """Write the matches of a "building" tournament and send them; the matches written."""
    return tournaments.build_tournament(
        celery_app._db(),
        tournament_id,
        rated=rated,
        enqueue=_send,
        pause_after=celery_app._config().pause_after_forfeits,
    )


def send_build(config: Config, tournament_id: int, rated: bool) -> None:
    """Send ``build_tournament`` to the control queue.  Call only after the commit."""
    if _state.get("config") is not config:
        configure(config)
    build_tournament.delay(tournament_id, rated)
