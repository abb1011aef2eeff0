"""Shared fixtures.

API fixtures: ``make_app`` (an app on its own SQLite database, config overridable),
``app`` and ``client`` (the default local profile), ``enqueued`` (match ids the app
asked to enqueue; no broker, no worker) and ``info_bot`` (real loopback bots answering
``GET /``).  ``database_url``: an empty SQLite and PostgreSQL database each, for the
tests of the migrations themselves.

Every module's garbage is collected when the module ends, so that an open connection it
leaks fails that module (a ResourceWarning is an error here) and not whichever later
test the collector happened to run in.
"""

from __future__ import annotations

import gc
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.app import create_app
from arena.config import Config
from arena.db import Database
from arena.services.tournaments import build_tournament
from arena.worker import building, queue
from tests.support.lanes import postgres_url

ALL_GAMES = ["cactus", "cactus-game", "president"]


@pytest.fixture(autouse=True, scope="module")
def _collect_what_the_module_left() -> Iterator[None]:
    yield
    gc.collect()


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database brought to the newest schema by alembic, once per test session;
    each app gets a copy (a migration run costs about 0.4 s)."""
    path = tmp_path_factory.mktemp("schema") / "arena.sqlite3"
    database = Database(f"sqlite:///{path}")
    database.upgrade()
    database.dispose()
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind, for tests of the migrations themselves."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.sqlite3'}"
    else:
        with postgres_url() as url:
            yield url


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The match ids passed to ``arena.worker.queue.enqueue_matches``, in order; a big
    tournament sent to be built (``arena.worker.building.send_build``) is built at once,
    here, as a worker would, its matches enqueued the same way."""
    ids: list[int] = []
    monkeypatch.setattr(queue, "enqueue_matches", lambda config, match_ids: ids.extend(match_ids))

    def build_now(config: Config, tournament_id: int, rated: bool) -> None:
        database = Database(config.database_url)
        try:
            build_tournament(database, tournament_id, rated=rated, enqueue=ids.extend)
        finally:
            database.dispose()

    monkeypatch.setattr(building, "send_build", build_now)
    return ids


@pytest.fixture
def make_app(
    tmp_path: Path, migrated_database: Path, enqueued: list[int]
) -> Iterator[Callable[..., Flask]]:
    """``make_app(**config_overrides)``: an app on a fresh copy of the migrated database."""
    apps: list[Flask] = []

    def make(**overrides: Any) -> Flask:
        path = tmp_path / f"arena-{len(apps)}.sqlite3"
        shutil.copyfile(migrated_database, path)
        config = Config(
            profile="local",
            data_dir=tmp_path,
            database_url=f"sqlite:///{path}",
            broker_url="filesystem://",
            secret_key="test-secret",
            testing=True,
        )
        app = create_app(replace(config, **overrides))
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["arena.db"].dispose()


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


class _InfoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    answer: dict[str, Any] = {}
    status = 200

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        body = json.dumps(self.answer).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def info_bot() -> Iterator[Callable[..., str]]:
    """``info_bot(games=..., apiversion="1", status=200, **info)``: a loopback bot that
    answers ``GET /`` with that info; returns its URL."""
    servers: list[ThreadingHTTPServer] = []

    def start(
        games: list[str] | None = None, apiversion: str = "1", status: int = 200, **info: Any
    ) -> str:
        answer = {
            "apiversion": apiversion,
            "name": "test-bot",
            "author": "tests",
            "version": "1.0",
            "games": ALL_GAMES if games is None else games,
            **info,
        }
        handler = type("Handler", (_InfoHandler,), {"answer": answer, "status": status})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
