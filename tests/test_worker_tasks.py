"""The worker's tasks: a worker (and beat) registers every task under its name, and
the module the web process sends matches with loads no code that plays one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.config import Config
from arena.worker.celery_app import worker_app

ROOT = Path(__file__).resolve().parent.parent
TASKS = {
    "arena.run_match",
    "arena.send_matches",
    "arena.refit_ratings",
    "arena.ladder_round",
    "arena.housekeeping",
}


def test_the_worker_app_has_every_task_by_its_name(tmp_path: Path) -> None:
    config = Config(
        profile="local",
        data_dir=tmp_path,
        database_url=f"sqlite:///{tmp_path / 'arena.sqlite3'}",
        broker_url="filesystem://",
        secret_key="test-secret",
        testing=True,
    )
    app = worker_app(config)
    assert set(app.tasks) >= TASKS
    assert app.conf.task_routes == {"arena.run_match": {"queue": "arena.matches"}}


def _loaded_after(*modules: str) -> set[str]:
    """The arena modules a fresh interpreter has loaded after importing ``modules``."""
    script = "".join(f"import {m}\n" for m in modules) + (
        "import sys\nprint(' '.join(m for m in sys.modules if m.startswith('arena')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def test_sending_matches_loads_no_referee_no_transport_and_no_task_that_plays() -> None:
    loaded = _loaded_after("arena.worker.queue")
    assert "arena.worker.queue" in loaded
    playing = {"arena.match.referee", "arena.match.http_client", "arena.worker.play"}
    assert not loaded & playing


def test_the_api_does_not_load_the_worker_s_tasks() -> None:
    loaded = _loaded_after("arena.api.tournaments")
    assert "arena.worker.queue" in loaded
    tasks = {f"arena.worker.{m}" for m in ("play", "refits", "ladder", "housekeeping")}
    assert not loaded & tasks
