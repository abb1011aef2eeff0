"""Engine and sessions; migrations with alembic.

SQLite (the embedded default) runs in WAL mode and starts every transaction with
``BEGIN IMMEDIATE``: writers queue on the database lock instead of failing half-way, which
is what the PostgreSQL row locks give the services profile.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
MIGRATION_LOCK = 0x6172656E61  # the advisory lock's key on PostgreSQL ("arena")


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection) -> None:  # type: ignore[no-untyped-def]
            connection.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(url, pool_pre_ping=True)


class Database:
    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        with self.sessions() as session, session.begin():
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
            with self.engine.connect() as connection:
                connection.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK})")
                try:
                    yield
                finally:
                    connection.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})")
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
