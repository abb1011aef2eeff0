"""Processes started together on a new database migrate it one at a time, whatever the
migration's length: ``arena serve``, ``arena worker`` and ``arena db upgrade`` each bring
the schema to the newest migration before they start (``Database.upgrade``)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from arena import db as arena_db
from arena.db import MIGRATION_LOCK, Database
from tests.support.lanes import postgres_url

ROOT = Path(__file__).resolve().parent.parent


def _libpq(url: str) -> str:
    parsed = make_url(url)
    return f"host={parsed.host} port={parsed.port} user={parsed.username} dbname={parsed.database}"


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_processes_started_together_on_a_new_database_all_start(kind: str, tmp_path: Path):
    """Three ``arena db upgrade`` at the same instant: the lock makes two of them find the
    schema up to date, instead of failing on a column or a type the first one added."""

    def run_together(url: str | None) -> list[subprocess.CompletedProcess[str]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        env["ARENA_DATA_DIR"] = str(tmp_path / "data")  # not there yet: made at start-up
        if url:
            env["ARENA_DATABASE_URL"] = url
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "arena", "db", "upgrade"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        return [subprocess.CompletedProcess(p.args, p.wait(120), *p.communicate()) for p in procs]

    if kind == "sqlite":
        done = run_together(None)
    else:
        with postgres_url() as url:
            done = run_together(url)
    for proc in done:
        assert proc.returncode == 0, proc.stderr
        assert "the database schema is up to date" in proc.stdout


@pytest.fixture
def short_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL's per-connection bounds (``arena.db``) at one second, so that a migration
    of two seconds outlasts them."""
    monkeypatch.setattr(arena_db, "IDLE_IN_TRANSACTION", 1)
    monkeypatch.setattr(arena_db, "LOCK_TIMEOUT", 1)


def test_the_migration_lock_is_held_for_a_migration_longer_than_the_idle_timeout(short_bounds):
    with postgres_url() as url:
        database = Database(url)
        try:
            with database._migration_lock():
                threading.Event().wait(2.5)  # alembic migrating on a connection of its own
                with psycopg.connect(_libpq(url), autocommit=True) as other:
                    taken = other.execute(
                        "SELECT pg_try_advisory_lock(%s)", (MIGRATION_LOCK,)
                    ).fetchone()
                assert taken == (False,)  # a second process would have migrated alongside
            # the lock's connection goes back to the pool with the usual bounds
            with database.engine.connect() as connection:
                assert connection.exec_driver_sql("SHOW lock_timeout").scalar() == "1s"
        finally:
            database.dispose()


def test_a_process_waits_for_a_migration_longer_than_the_lock_timeout(short_bounds):
    with postgres_url() as url, psycopg.connect(_libpq(url), autocommit=True) as first:
        first.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))  # migrating
        released = threading.Timer(2.5, first.execute, ("SELECT pg_advisory_unlock_all()",))
        released.start()
        database = Database(url)
        try:
            with database._migration_lock():  # waits, instead of failing after a second
                pass
        finally:
            released.join()
            database.dispose()
