"""The server lanes, each with real Celery worker processes and no eager mode: embedded
(SQLite, file-system broker), services (PostgreSQL, Redis) and rabbitmq (PostgreSQL,
RabbitMQ, the other broker the configuration accepts).

The services lanes need PostgreSQL on 127.0.0.1:5432, Redis on 127.0.0.1:6379 and
RabbitMQ on 127.0.0.1:5672: on CI (``CI`` set) a missing service fails the lane;
elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.cli import stop_processes, worker_command
from arena.config import Config, from_env
from arena.db import Database
from arena.tasks import configure

PG = ("127.0.0.1", 5432)
REDIS = ("127.0.0.1", 6379)
RABBITMQ = ("127.0.0.1", 5672)


@dataclass
class Lane:
    name: str
    config: Config
    db: Database
    env: dict[str, str]


def _reachable(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
        return True
    except OSError:
        return False


def _missing(what: str) -> None:
    reason = f"{what} is not reachable: the services lane needs it"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@contextmanager
def _postgres_database() -> Iterator[str]:
    import psycopg

    name = f"arena_test_{uuid.uuid4().hex[:12]}"
    admin = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def postgres_url() -> Iterator[str]:
    """A database of its own on the machine's PostgreSQL (a failure on CI if there is
    none, else a skip)."""
    if not _reachable(PG):
        _missing("PostgreSQL on 127.0.0.1:5432")
    with _postgres_database() as url:
        yield url


@contextmanager
def lane(name: str, data_dir: Path, workers: int = 2) -> Iterator[Lane]:
    env = {"ARENA_DATA_DIR": str(data_dir), "ARENA_DEADLINE_MS": "3000"}
    with _services(name) as urls:
        env.update(urls)
        config = from_env(env)
        database = Database(config.database_url)
        database.upgrade()
        configure(config)
        procs = [
            subprocess.Popen(
                worker_command(f"{name}{i}-{uuid.uuid4().hex[:6]}@%h"),
                env={**os.environ, **env},
            )
            for i in range(workers)
        ]
        try:
            yield Lane(name, config, database, env)
        finally:
            stop_processes(procs, timeout=20)
            database.dispose()


@contextmanager
def _services(name: str) -> Iterator[dict[str, str]]:
    if name == "embedded":
        yield {}
        return
    if not _reachable(PG):
        _missing("PostgreSQL on 127.0.0.1:5432")
    if name == "rabbitmq":
        if not _reachable(RABBITMQ):
            _missing("RabbitMQ on 127.0.0.1:5672")
        with _rabbitmq_vhost() as broker_url, _postgres_database() as url:
            yield {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker_url}
        return
    if not _reachable(REDIS):
        _missing("Redis on 127.0.0.1:6379")
    import redis

    # a database number of its own, emptied first: runs side by side do not share a queue
    number = 1 + uuid.uuid4().int % 15
    redis.Redis(host=REDIS[0], port=REDIS[1], db=number).flushdb()
    with _postgres_database() as url:
        yield {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": f"redis://127.0.0.1:6379/{number}"}


@contextmanager
def _rabbitmq_vhost() -> Iterator[str]:
    """A virtual host of its own (runs side by side do not share a queue), through
    ``rabbitmqctl`` on the broker's machine; the default guest user is given it."""
    name = f"arena_test_{uuid.uuid4().hex[:12]}"
    ctl = ["rabbitmqctl", "--quiet"]
    subprocess.run([*ctl, "add_vhost", name], check=True, capture_output=True)
    try:
        subprocess.run([*ctl, "set_permissions", "-p", name, "guest", ".*", ".*", ".*"],
                       check=True, capture_output=True)  # fmt: skip
        yield f"amqp://guest:guest@127.0.0.1:5672/{name}"
    finally:
        subprocess.run([*ctl, "delete_vhost", name], capture_output=True)


def wait_for(predicate, timeout: float = 90.0, what: str = "the workers") -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not finish within {timeout:.0f}s")
