"""The embedded broker hands every message over whole, however the processes interleave.

kombu's own file-system transport lets a consumer read a message file the producer has
created but not yet written; the worker then dies on an empty JSON document.  These tests
race a producer against a consumer on one folder and fail if any message arrives empty,
truncated or twice, or if any goes missing."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from queue import Empty

import pytest
from celery import Celery
from kombu import Connection

from arena.config import from_env
from arena.worker import broker
from arena.worker.celery_app import MATCH_QUEUE, celery, celery_settings, configure
from tests.support.lanes import _redis_server

MESSAGES = 300
BODY = "x" * 200_000  # a write large enough to take several system calls


def _connection(folder: Path, transport: str) -> Connection:
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder),
               "control_folder": str(folder / "control")}  # fmt: skip
    return Connection("filesystem://", transport=transport, transport_options=options)


def _race(folder: Path, transport: str) -> list[object]:
    producer = _connection(folder, transport).default_channel
    consumer = _connection(folder, transport).default_channel
    received: list[object] = []
    done = threading.Event()

    def produce() -> None:
        try:
            for n in range(MESSAGES):
                producer._put("jobs", {"n": n, "body": BODY})
        finally:
            done.set()

    thread = threading.Thread(target=produce)
    thread.start()
    try:
        while not done.is_set() or consumer._size("jobs"):
            try:
                message = consumer._get("jobs")
            except Empty:
                continue
            received.append(message)
    finally:
        thread.join()
    return received


def test_a_consumer_racing_a_producer_receives_every_message_whole(tmp_path: Path) -> None:
    received = _race(tmp_path, broker.TRANSPORT)
    assert sorted(m["n"] for m in received) == list(range(MESSAGES))  # type: ignore[index]
    assert all(m["body"] == BODY for m in received)  # type: ignore[index]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _bind_race(folder: Path, transport: str, seats: int = 8) -> tuple[set[str], list[str]]:
    """Workers starting together bind their queues to one fanout exchange while others
    read its table; returns the final table's queues and any read that failed."""
    errors: list[str] = []
    start = threading.Barrier(seats)

    def bind(n: int) -> None:
        channel = _connection(folder, transport).default_channel
        start.wait()
        try:
            channel._queue_bind("broadcast", "", "", f"worker{n}")
            channel.get_table("broadcast")
        except ValueError as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=bind, args=(n,)) for n in range(seats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    table = _connection(folder, transport).default_channel.get_table("broadcast")
    return {q.queue for q in table}, errors


def test_workers_binding_at_once_all_land_in_the_exchange_table(tmp_path: Path) -> None:
    for attempt in range(20):
        queues, errors = _bind_race(tmp_path / str(attempt), broker.TRANSPORT)
        assert errors == []
        assert queues == {f"worker{n}" for n in range(8)}


def test_the_embedded_profile_runs_on_this_transport(tmp_path: Path) -> None:
    app = Celery(set_as_current=False)
    app.conf.update(celery_settings(from_env({"ARENA_DATA_DIR": str(tmp_path)})))
    with app.connection_for_write() as connection:
        assert isinstance(connection.transport, broker.Transport)
    services = from_env({"ARENA_DATA_DIR": str(tmp_path), "ARENA_BROKER_URL": "redis://x"})
    assert celery_settings(services)["broker_transport"] == broker.REDIS_TRANSPORT
    rabbit = from_env({"ARENA_DATA_DIR": str(tmp_path), "ARENA_BROKER_URL": "amqp://x"})
    assert celery_settings(rabbit)["broker_transport"] is None  # kombu's, by the scheme


def test_a_redis_channel_of_a_closed_connection_fails_as_a_lost_connection(
    tmp_path: Path,
) -> None:
    """When the Redis server goes away the consumer closes its connection while a channel
    of it may still be used: that must raise one of the transport's connection errors
    (Celery connects again) and not AttributeError (Celery ends the worker)."""
    if shutil.which("redis-server") is None:
        pytest.skip("the redis-server program is not installed")
    with _redis_server(tmp_path) as (url, _restart):
        connection = Connection(url, transport=broker.REDIS_TRANSPORT)
        channel = connection.default_channel
        assert channel.client.ping()
        transport = connection.transport
        connection._do_close_transport()  # what closing the connection does to it
        with pytest.raises(transport.connection_errors):
            channel._connparams()
        channel.close()


def test_an_unreadable_message_file_is_dropped_not_fatal(tmp_path: Path) -> None:
    channel = _connection(tmp_path, broker.TRANSPORT).default_channel
    (tmp_path / "0_a.jobs.msg").write_bytes(b"")  # what a full disk leaves behind
    channel._put("jobs", {"n": 1})
    with pytest.raises(Empty):  # the broken file sorts first: dropped, the worker goes on
        channel._get("jobs")
    assert channel._get("jobs") == {"n": 1}


def test_a_process_configured_again_for_the_same_broker_still_sends(tmp_path: Path) -> None:
    # configure() closes the connections pooled for the previous broker; kombu keeps its
    # pools in a registry keyed by the broker, so a closed pool left there was handed
    # back for the same broker ("Acquire on closed pool" at the next send)
    config = from_env({"ARENA_DATA_DIR": str(tmp_path)})
    for _ in range(2):
        configure(config)
        with celery.producer_or_acquire() as producer:
            producer.publish({"hello": 1}, routing_key=MATCH_QUEUE, exchange=MATCH_QUEUE)
