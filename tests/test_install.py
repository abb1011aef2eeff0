"""What a fresh install runs and what it tells its operator: the base install (no extras)
starts every process of the embedded default without importing an optional package; a
configured service whose package is missing is one line naming what to install; a key
that does not open a bot's secret is the operator's error, never a secret sealed with a
key no arena has, nor a traceback for the caller."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet
from flask import Flask

from arena.api import connect as connect_api

ROOT = Path(__file__).resolve().parents[1]
# what the extras install (pyproject.toml): the learn and bench extras, a service's driver
OPTIONAL = ("redis", "psycopg", "gunicorn", "pettingzoo", "gymnasium", "open_spiel", "pyspiel")


def run_without(code: str, *, missing: tuple[str, ...] = OPTIONAL, cwd: Path, **env: str):
    """``code`` in a fresh interpreter where the ``missing`` packages cannot be imported,
    as on a machine that installed none of the extras."""
    prelude = f"import sys\nfor name in {missing!r}:\n    sys.modules[name] = None\n"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_base_install_starts_every_process_of_the_embedded_default(tmp_path: Path) -> None:
    # the web app, the worker's Celery app with its tasks and the CLI: what `arena demo`
    # starts, with none of the extras importable (kombu >= 5.7's Redis module fails to
    # import without the redis package; nothing may import it unless a broker is Redis)
    done = run_without(
        """
        import arena.cli, arena.wsgi
        from arena.worker import celery_app
        from arena.config import from_env
        celery_app.load_tasks()
        app = celery_app.configure(from_env())
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1)
        print("started")
        """,
        cwd=tmp_path,
        ARENA_DATA_DIR=str(tmp_path / "data"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "started"


@pytest.mark.parametrize(
    ("variable", "value", "package", "extra"),
    [
        ("ARENA_BROKER_URL", "redis://127.0.0.1:1/0", "redis", "redis"),
        ("ARENA_RATELIMIT_STORAGE", "redis://127.0.0.1:1/0", "redis", "redis"),
        (
            "ARENA_DATABASE_URL",
            "postgresql+psycopg://arena@127.0.0.1:1/arena",
            "psycopg",
            "postgres",
        ),
    ],
)
@pytest.mark.parametrize("command", [["worker"], ["serve", "--port", "0"], ["db", "upgrade"]])
def test_a_configured_service_without_its_package_is_one_line_naming_the_extra(
    tmp_path: Path, command: list[str], variable: str, value: str, package: str, extra: str
) -> None:
    done = run_without(
        f"from arena.cli import main\nsys.exit(main({command!r}))",
        cwd=tmp_path,
        ARENA_DATA_DIR=str(tmp_path / "data"),
        **{variable: value},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # one line, no traceback
    assert done.stderr.startswith(f"arena: {variable} ")
    assert f"needs the {package} package" in done.stderr
    assert f"'.[{extra}]'" in done.stderr


def test_the_wsgi_entry_point_stops_gunicorn_with_one_line(tmp_path: Path) -> None:
    done = run_without(
        "import arena.wsgi",
        cwd=tmp_path,
        ARENA_BROKER_URL="redis://127.0.0.1:1/0",
        ARENA_DATA_DIR=str(tmp_path / "data"),
    )
    assert done.returncode == 4, done.stderr  # gunicorn: "App failed to load", it stops
    assert done.stderr.count("\n") == 1 and "needs the redis package" in done.stderr


def test_a_script_that_never_configured_a_key_cannot_seal_a_secret(tmp_path: Path) -> None:
    # a script that registers bots in its own process (as a benchmark did) must not make
    # a key of its own: the secrets it sealed could be opened by no arena process
    done = run_without(
        """
        from arena import sealing
        try:
            sealing.keyring().seal("a bot's signing secret")
        except sealing.SealingError as exc:
            print(exc)
        """,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "ARENA_SECRETS_KEY" in done.stdout and "secrets.key" in done.stdout
    assert not list(tmp_path.rglob("secrets.key"))  # no key was made in the working dir


def test_a_script_seals_with_the_key_of_the_arena_it_names(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    key = Fernet.generate_key().decode()
    (data / "secrets.key").write_text(key + "\n")
    done = run_without(
        """
        from arena import sealing
        print(sealing.keyring().seal("s3cret-of-a-bot"))
        """,
        cwd=tmp_path,
        ARENA_DATA_DIR=str(data),
    )
    assert done.returncode == 0, done.stderr
    assert Fernet(key).decrypt(done.stdout.strip().encode()) == b"s3cret-of-a-bot"


def seal_with_a_stranger_key(app: Flask, bot_id: int) -> None:
    """The bot's secret as a copy of the database sealed under a key this arena lacks."""
    stranger = Fernet(Fernet.generate_key()).encrypt(b"a-secret-nobody-here-can-read")
    with app.extensions["arena.db"].engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE bots SET signing_secret = :sealed WHERE id = :id"),
            {"sealed": stranger.decode(), "id": bot_id},
        )


def test_a_secret_no_key_opens_is_a_503_for_the_caller_and_one_line_for_the_operator(
    client: Any, app: Flask, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.5)
    body = {"name": "ada", "owner": "ada", "games": ["cactus"], "connect": True}
    bot = client.post("/api/bots", json=body).get_json()
    seal_with_a_stranger_key(app, bot["id"])
    raw = json.dumps({"request_id": "a" * 32, "bot_id": bot["id"], "info": {}}).encode()
    with caplog.at_level(logging.ERROR):
        answer = client.post("/api/connect/session", data=raw, content_type="application/json")
    assert answer.status_code == 503
    assert "signing secret" in answer.get_json()["message"]
    assert answer.headers["Retry-After"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None  # a line, not a traceback
    assert "ARENA_SECRETS_KEY" in errors[0].getMessage()


@pytest.mark.parametrize("module", ["train", "evaluate"])
def test_training_without_the_learn_extra_says_what_to_install(tmp_path: Path, module: str):
    argv = ["--out", str(tmp_path / "w.npz")] if module == "train" else []
    done = run_without(
        f"import runpy\nsys.argv = ['{module}', *{argv!r}]\n"
        f"runpy.run_module('sample_bots.learned.{module}', run_name='__main__')",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    hint = 'pip install -c constraints.txt -e ".[learn]"'
    assert done.stderr.splitlines()[-1].endswith(hint)
