"""The schema's migrations: processes started together on a new database (a web server
and its workers, say) migrate it once between them, and none of them fails."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from arena.db import Database, alembic_config
from tests.support.lanes import postgres_url

ROOT = Path(__file__).resolve().parents[1]
TOGETHER = 4


@pytest.fixture(params=["sqlite", "postgresql"])
def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.sqlite3'}"
        return
    with postgres_url() as url:
        yield url


def test_processes_started_together_on_a_new_database_migrate_it_once(new_database):
    upgrade = "import sys; from arena.db import Database; Database(sys.argv[1]).upgrade()"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", upgrade, new_database],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")])},
            stderr=subprocess.PIPE,
        )
        for _ in range(TOGETHER)
    ]
    errors = [proc.communicate(timeout=120)[1].decode()[-1500:] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * TOGETHER, errors
    database = Database(new_database)
    try:
        with database.session() as session:
            version = session.scalar(text("SELECT version_num FROM alembic_version"))
    finally:
        database.dispose()
    assert version == ScriptDirectory.from_config(alembic_config(new_database)).get_current_head()
