"""The server lanes, each with real Celery worker processes and no eager mode: embedded
(SQLite, file-system broker), services (PostgreSQL, Redis) and rabbitmq (PostgreSQL,
RabbitMQ, the other broker the configuration accepts).

Each lane has brokers and a database of its own, so a test may restart them: the
services lane starts its own ``redis-server`` on a free port, the rabbitmq lane has its
own virtual host, and each gets its own PostgreSQL database.  They need PostgreSQL on
127.0.0.1:5432, RabbitMQ on 127.0.0.1:5672 and the ``redis-server`` program: on CI
(``CI`` set) a missing one fails the lane; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.app import create_app
from arena.cli.processes import make_web_server, stop_processes, worker_command
from arena.config import Config, from_env
from arena.db import Database
from arena.worker.celery_app import configure

PG = ("127.0.0.1", 5432)
RABBITMQ = ("127.0.0.1", 5672)
RABBITMQCTL = ["rabbitmqctl", "--quiet"]


@dataclass
class Lane:
    name: str
    config: Config
    db: Database
    env: dict[str, str]
    restart_broker: Callable[[], None]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(
        self, *options: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """One more ``arena worker`` process (default flags unless ``options``; the lane's
        environment with ``env`` on top)."""
        name = f"{self.name}{len(self.workers)}-{uuid.uuid4().hex[:6]}@%h"
        proc = subprocess.Popen(
            worker_command(name, *options), env={**os.environ, **self.env, **(env or {})}
        )
        self.workers.append(proc)
        return proc

    def stop_workers(self) -> None:
        stop_processes(self.workers, timeout=20)
        self.workers.clear()


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    with _services(name, data_dir) as (urls, restart_broker):
        env.update(urls)
        config = from_env(env)
        database = Database(config.database_url)
        database.upgrade()
        configure(config)
        the_lane = Lane(name, config, database, env, restart_broker)
        try:
            for _ in range(workers):
                the_lane.start_worker()
            yield the_lane
        finally:
            the_lane.stop_workers()
            database.dispose()


@contextmanager
def _services(name: str, data_dir: Path) -> Iterator[tuple[dict[str, str], Callable[[], None]]]:
    if name == "embedded":
        yield {}, lambda: _lose_embedded_messages(data_dir)
        return
    if name == "rabbitmq":
        if not _reachable(RABBITMQ):
            _missing("RabbitMQ on 127.0.0.1:5672")
        with postgres_url() as url, _rabbitmq_vhost() as (broker_url, restart):
            yield {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker_url}, restart
        return
    if shutil.which("redis-server") is None:
        _missing("the redis-server program")
    with postgres_url() as url, _redis_server(data_dir) as (broker_url, restart):
        yield {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker_url}, restart


def _lose_embedded_messages(data_dir: Path) -> None:
    """What a broker restart without persistence does to the embedded broker: every
    message waiting in its folder is gone."""
    for message in (data_dir / "broker" / "queue").glob("*.msg"):
        message.unlink(missing_ok=True)


@contextmanager
def _redis_server(data_dir: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    """A redis-server of the lane's own on a free port, keeping nothing on disk (as the
    machine's does): a restart loses every message."""
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(data_dir)]  # fmt: skip
    server = {"proc": subprocess.Popen(argv, stdout=subprocess.DEVNULL)}

    def wait_up() -> None:
        deadline = time.monotonic() + 20
        while not _reachable(("127.0.0.1", port)):
            if time.monotonic() > deadline:
                pytest.fail("the lane's redis-server did not start")
            time.sleep(0.05)

    def restart() -> None:
        server["proc"].send_signal(signal.SIGKILL)
        server["proc"].wait()
        time.sleep(2)  # the workers notice, and retry
        server["proc"] = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        wait_up()

    wait_up()
    try:
        yield f"redis://127.0.0.1:{port}/0", restart
    finally:
        server["proc"].kill()
        server["proc"].wait()


@contextmanager
def _rabbitmq_vhost() -> Iterator[tuple[str, Callable[[], None]]]:
    """A virtual host of its own (runs side by side do not share a queue), through
    ``rabbitmqctl`` on the broker's machine; the default guest user is given it.  Its
    restart deletes it, which closes every connection to it and drops its queues and
    messages, and makes it again."""
    name = f"arena_test_{uuid.uuid4().hex[:12]}"

    def create() -> None:
        subprocess.run([*RABBITMQCTL, "add_vhost", name], check=True, capture_output=True)
        subprocess.run([*RABBITMQCTL, "set_permissions", "-p", name, "guest", ".*", ".*", ".*"],
                       check=True, capture_output=True)  # fmt: skip

    def restart() -> None:
        subprocess.run([*RABBITMQCTL, "delete_vhost", name], check=True, capture_output=True)
        time.sleep(2)
        create()

    create()
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{name}", restart
    finally:
        subprocess.run([*RABBITMQCTL, "delete_vhost", name], capture_output=True)


@contextmanager
def web_server(config: Config) -> Iterator[tuple[str, Any]]:
    """A lane's web server, over HTTP on loopback: its address, and a test client of the
    same app (what a test reads and changes directly)."""
    app = create_app(config)
    httpd = make_web_server("127.0.0.1", 0, app)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.port}", app.test_client()
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
        app.extensions["arena.db"].dispose()


def wait_for(predicate, timeout: float = 90.0, what: str = "the workers", state=None) -> None:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until it holds; past ``timeout``, fail, with what ``state()``
    returns then (the thing waited on, as it was when the wait gave up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    seen = f"; at the end: {state()!r}" if state is not None else ""
    pytest.fail(f"{what} did not finish within {timeout:.0f}s{seen}")
