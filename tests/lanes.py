"""The two server lanes: embedded (SQLite, file-system broker) and services (PostgreSQL,
Redis), each with real Celery worker processes.  No eager mode in either.

The services lane needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379: on CI
(``CI`` set) a missing service fails the lane; elsewhere it is skipped with the reason.
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
    if not _reachable(REDIS):
        _missing("Redis on 127.0.0.1:6379")
    import redis

    # a database number of its own, emptied first: runs side by side do not share a queue
    number = 1 + uuid.uuid4().int % 15
    redis.Redis(host=REDIS[0], port=REDIS[1], db=number).flushdb()
    with _postgres_database() as url:
        yield {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": f"redis://127.0.0.1:6379/{number}"}


def wait_for(predicate, timeout: float = 90.0, what: str = "the workers") -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not finish within {timeout:.0f}s")
