"""Sending matches to the workers: ``enqueue_matches``, what the web process needs.

It imports no referee and no transport: a ``run_match`` message is sent by its task
name, so the web process never loads the code that plays a match.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arena.config import Config
from arena.worker.celery_app import MATCH_QUEUE, _state, celery, configure

ENQUEUE_INLINE = 100  # more matches than this are sent by a worker (``send_matches``)


def enqueue_matches(config: Config, match_ids: Iterable[int]) -> None:
    """Send ``run_match`` for each id.  Call only after the commit that wrote them.

    A few are sent at once; more (a tournament of thousands) go in one ``send_matches``
    message that a worker fans out, so the request that created them does not wait for
    thousands of broker writes (about a millisecond each on the file-system broker)."""
    if _state.get("config") is not config:
        configure(config)
    ids = list(match_ids)
    if len(ids) > ENQUEUE_INLINE:
        send_matches.delay(ids)
    else:
        _send(ids)


def _send(match_ids: Iterable[int]) -> int:
    # one producer (one broker connection and channel) for all of them: half the time
    # per message of ``delay``, which acquires one each time
    sent = 0
    with celery.producer_or_acquire() as producer:
        for match_id in match_ids:
            # by name: the task is the worker's (``arena.worker.play``), not imported here
            celery.send_task("arena.run_match", (match_id,), producer=producer, ignore_result=True)
            sent += 1
    return sent


@celery.task(name="arena.send_matches", acks_late=True, reject_on_worker_lost=True)
def send_matches(match_ids: list[int]) -> int:
    """``run_match`` for each id, in order.  Sent again after a crash, a match gets two
    messages, which ``run_match`` tolerates (the second finds it claimed or finished)."""
    return _send(match_ids)


def messages_waiting() -> int:
    """How many ``run_match`` messages the broker holds, not yet handed to a worker.
    Raises when the broker cannot be reached."""
    with celery.connection_for_read() as connection:
        connection.ensure_connection(max_retries=1)
        return queue_length(connection)


def queue_length(connection: Any) -> int:
    """The messages waiting in the match queue, on a broker ``connection`` (a kombu
    connection, connected); a queue never declared holds none."""
    try:
        return connection.default_channel.queue_declare(MATCH_QUEUE, passive=True).message_count
    except connection.channel_errors:
        return 0
