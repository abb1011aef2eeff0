"""Engine and sessions; migrations with alembic.

SQLite (the embedded default) runs in WAL mode and starts every transaction with
``BEGIN IMMEDIATE``: writers queue on the database lock instead of failing half-way, which
is what the PostgreSQL row locks give the services profile.

On PostgreSQL every connection is bounded on both sides, so that a process that stops
(``SIGSTOP``, a debugger) or a host cut off from the database mid-transaction cannot hold
its row locks for long: the server ends a session idle inside a transaction after
``IDLE_IN_TRANSACTION`` and notices a vanished client through TCP keepalives and a user
timeout; the client gives up connecting after ``CONNECT_TIMEOUT`` and on a dead link
after ``TCP_USER_TIMEOUT``.  Without them one cut-off worker inside a result transaction
froze every other worker's results (its locks were kept for PostgreSQL's default
keepalive, over two hours, for a host gone without a FIN).  Each connection carries an
``application_name`` (the process's kind and id) so that an operator sees in
``pg_stat_activity`` who holds what.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
MIGRATION_LOCK = 0x6172656E61  # the advisory lock's key on PostgreSQL ("arena")

# PostgreSQL's bounds on one connection (see the module docstring), in seconds
IDLE_IN_TRANSACTION = 10  # a transaction waiting on its client longer than this is ended
LOCK_TIMEOUT = 30  # a statement waiting on a row lock longer than this fails (and is retried)
CONNECT_TIMEOUT = 5
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3
TCP_USER_TIMEOUT = 15  # unacknowledged data on the link for this long: the link is dead
POOL_TIMEOUT = 10  # a thread waits this long for a pooled connection, then fails (retried)


def process_name() -> str:
    """What this process is, for ``pg_stat_activity``: ``arena-worker-1234``."""
    argv = [os.path.basename(a) for a in sys.argv[:3]]
    kind = next((a for a in ("worker", "beat", "serve") if a in argv), "web")
    return f"arena-{kind}-{os.getpid()}"[:63]


def postgres_connect_args() -> dict[str, object]:
    """libpq's parameters for one bounded connection (client and server side)."""
    settings = {
        "idle_in_transaction_session_timeout": IDLE_IN_TRANSACTION * 1000,
        "lock_timeout": LOCK_TIMEOUT * 1000,
        # the server's side of the same link: it notices a client gone without a FIN
        "tcp_keepalives_idle": KEEPALIVE_IDLE,
        "tcp_keepalives_interval": KEEPALIVE_INTERVAL,
        "tcp_keepalives_count": KEEPALIVE_COUNT,
        "tcp_user_timeout": TCP_USER_TIMEOUT * 1000,
    }
    return {
        "connect_timeout": CONNECT_TIMEOUT,
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE,
        "keepalives_interval": KEEPALIVE_INTERVAL,
        "keepalives_count": KEEPALIVE_COUNT,
        "tcp_user_timeout": TCP_USER_TIMEOUT * 1000,
        "options": " ".join(f"-c {name}={value}" for name, value in settings.items()),
    }


def make_engine(url: str, pool_size: int = 5) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            # SQLite's advice for WAL: a commit is not flushed to the disk (a checkpoint
            # is); an application's crash loses nothing, a power loss at most the last
            # transactions, never the database's consistency.  Flushing each commit was
            # most of a short transaction's cost (3 ms of 3.5, measured)
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection) -> None:  # type: ignore[no-untyped-def]
            connection.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    connect_args = postgres_connect_args() if url.startswith("postgresql") else {}

    engine = create_engine(
        url,
        pool_pre_ping=True,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_timeout=POOL_TIMEOUT,
        connect_args=connect_args,
    )
    if url.startswith("postgresql"):

        @event.listens_for(engine, "connect")
        def _name(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            # set per connection: a forked process's connections carry its own id
            with dbapi_connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('application_name', %s, false)", (process_name(),)
                )
            dbapi_connection.commit()

    return engine


class Database:
    def __init__(self, url: str, pool_size: int = 5):
        """``pool_size``: connections kept open, as many again opened at a peak (the
        threads of a worker or a web process that use the database at once)."""
        self.url = url
        self.engine = make_engine(url, pool_size)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        with self.sessions() as session, session.begin():
            yield session

    @contextmanager
    def long_session(self) -> Iterator[Session]:
        """A transaction allowed to think between its statements longer than
        ``IDLE_IN_TRANSACTION`` (an operator's rebuild that must read and write one
        snapshot); it still takes no lock it waits on for long."""
        with self.session() as session:
            if self.engine.dialect.name == "postgresql":
                session.execute(text("SET LOCAL idle_in_transaction_session_timeout = 0"))
            yield session

    def upgrade(self) -> None:
        """Bring the schema to the newest migration: one process at a time, so that a web
        server and workers started together on a new database do not run the same
        migration twice (the second would fail on a column the first has added)."""
        with self._migration_lock():
            command.upgrade(alembic_config(self.url), "head")

    @contextmanager
    def _migration_lock(self) -> Iterator[None]:
        """A lock that processes sharing the database take in turn: a lock file beside a
        SQLite database, an advisory lock on PostgreSQL."""
        if self.engine.dialect.name == "postgresql":
            # Outside a transaction: a session idle in one while alembic migrates on its
            # own connection would be ended after IDLE_IN_TRANSACTION, and its lock with
            # it (a second process then migrated alongside). No lock_timeout: the others
            # wait as long as the migration takes, however long that is.
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as lock:
                lock.exec_driver_sql("SET lock_timeout = 0")
                lock.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK})")
                try:
                    yield
                finally:
                    lock.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})")
                    lock.exec_driver_sql("RESET lock_timeout")
            return
        database = self.engine.url.database
        if self.engine.dialect.name != "sqlite" or not database or database == ":memory:":
            yield
            return
        with open(f"{database}.migrate-lock", "ab") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def dispose(self) -> None:
        self.engine.dispose()


def alembic_config(url: str) -> AlembicConfig:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config
