"""The connect transport's replay guard is shared by every web process: a signed request
captured once and played again against another ``arena serve`` process of the same arena
is refused there (401 "replayed request"), with the database as the store (SQLite,
PostgreSQL) and with Redis (``ARENA_RATELIMIT_STORAGE``).  The stores themselves
(``arena.relay.replays``): an id is forgotten once it is older than the window, one of
several processes racing with the same id wins, and a Redis that does not answer is a
503 with a message, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
from sqlalchemy import func, select

from arena.api import connect as connect_api
from arena.cli.processes import stop_processes
from arena.db import Database
from arena.models import SeenRequest
from arena.relay import replays
from arena.relay.internal import MAX_SKEW, SIGNATURE, TIMESTAMP, signature
from tests.support.lanes import _missing, _redis_server, free_port, postgres_url, wait_for

INFO = {"apiversion": "1", "name": "ada", "version": "2", "games": ["cactus"], "capacity": 1}


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of this module's own on a free port (never the machine's)."""
    import shutil

    if shutil.which("redis-server") is None:
        _missing("the redis-server program")
    with _redis_server(tmp_path_factory.mktemp("redis")) as (url, _restart):
        yield url


# -- two web processes, one arena ---------------------------------------------------------
def serve(stack: ExitStack, env: dict[str, str]) -> str:
    """One ``arena serve`` process with ``env``; its address once it answers."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stack.callback(stop_processes, [proc], 10)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{url}/api/games", timeout=2).raise_for_status()
            return url
        except requests.RequestException:
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail("arena serve did not answer within 60 s")
            time.sleep(0.1)


def signed_request(secret: str, body: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """A body with a fresh request_id and its headers, as a bot sends it: what an
    attacker on the path captures and plays again."""
    raw = orjson.dumps({**body, "request_id": os.urandom(16).hex()})
    stamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        TIMESTAMP: stamp,
        SIGNATURE: signature(secret, stamp, raw),
    }
    return raw, headers


@pytest.fixture(params=["sqlite", "postgresql", "redis"])
def arena_env(request, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of one arena's web processes: the database store on SQLite or on
    PostgreSQL, or PostgreSQL with Redis as the rate limits' (and the guard's) store."""
    env = {"ARENA_DATA_DIR": str(tmp_path)}
    if request.param == "sqlite":
        yield env
        return
    with postgres_url() as url:
        env["ARENA_DATABASE_URL"] = url
        if request.param == "redis":
            env["ARENA_RATELIMIT_STORAGE"] = request.getfixturevalue("redis_url")
        yield env


def test_a_captured_request_is_refused_by_another_web_process(arena_env) -> None:
    with ExitStack() as stack:
        first, second = serve(stack, arena_env), serve(stack, arena_env)
        made = requests.post(
            f"{first}/api/bots",
            json={"name": "ada", "owner": "ada", "games": ["cactus"], "connect": True},
            timeout=10,
        )
        assert made.status_code == 201, made.text
        bot_id, secret = made.json()["id"], made.json()["signing_secret"]

        # the bot opens its session with the first process...
        raw, headers = signed_request(secret, {"bot_id": bot_id, "info": INFO})
        opened = requests.post(f"{first}/api/connect/session", data=raw, headers=headers)
        assert opened.status_code == 200, opened.text
        token = opened.json()["session"]
        # ... and the same bytes, played again at the second, replace nothing
        replayed = requests.post(f"{second}/api/connect/session", data=raw, headers=headers)
        assert replayed.status_code == 401, replayed.text
        assert replayed.json()["message"].startswith("replayed request")
        again = requests.post(f"{first}/api/connect/session", data=raw, headers=headers)
        assert again.status_code == 401 and "replayed" in again.json()["message"]
        connection = requests.get(f"{first}/api/bots/{bot_id}").json()["connection"]
        assert connection["connected"] is True and connection["sessions_replaced"] == 0

        # a poll (draining: answered at once, the bot has no match) taken by the second
        # process, played again at the first
        body = {"bot_id": bot_id, "session": token, "answers": [], "draining": True}
        raw, headers = signed_request(secret, body)
        polled = requests.post(f"{second}/api/connect/poll", data=raw, headers=headers)
        assert polled.status_code == 200, polled.text
        assert polled.json() == {"requests": [], "playing": 0}
        replayed = requests.post(f"{first}/api/connect/poll", data=raw, headers=headers)
        assert replayed.status_code == 401, replayed.text
        assert replayed.json()["message"].startswith("replayed request")

        # the bot's own next request, with a new id, is taken by either
        raw, headers = signed_request(secret, body)
        assert requests.post(f"{first}/api/connect/poll", data=raw, headers=headers).ok


# -- the stores ------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """A migrated database of each kind (SQLite, PostgreSQL)."""
    db = Database(database_url)
    db.upgrade()
    yield db
    db.dispose()


def rows(db: Database) -> int:
    with db.session() as session:
        return session.scalar(select(func.count()).select_from(SeenRequest))


def test_the_database_store_forgets_an_id_older_than_the_window(database: Database) -> None:
    clock = Clock()
    store = replays.DatabaseReplays(database, clock=clock)
    assert store.window == 2 * MAX_SKEW
    assert store.new("a" * 32) and not store.new("a" * 32)
    clock.now += store.window - 1  # its timestamp could still be accepted: a replay
    assert not store.new("a" * 32)
    assert store.new("b" * 32)
    clock.now += 2  # "a" is older than the window now, "b" is not
    assert not store.new("b" * 32)
    assert store.new("a" * 32)  # forgotten: taken again, and remembered from now
    assert not store.new("a" * 32)
    # rows older than the window are deleted every so often, by any process
    other = replays.DatabaseReplays(database, clock=clock)
    clock.now += store.window + 1
    assert rows(database) == 2
    assert other.new("c" * 32)
    assert rows(database) == 1
    if database.engine.dialect.name == "sqlite":  # every connection's commits are quick
        with database.engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert raw.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_one_of_many_processes_racing_with_one_id_wins(database: Database) -> None:
    stores = [replays.DatabaseReplays(database) for _ in range(8)]  # a process's each
    results: list[bool] = []
    start = threading.Barrier(len(stores))

    def race(store: replays.DatabaseReplays) -> None:
        start.wait()
        results.append(store.new("d" * 32))

    threads = [threading.Thread(target=race, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]


def test_the_redis_store_forgets_an_id_older_than_the_window(redis_url: str) -> None:
    prefix = f"test:{uuid.uuid4().hex}:"
    store = replays.RedisReplays(redis_url, prefix=prefix)
    short = replays.RedisReplays(redis_url, prefix=prefix + "short:", window=1)
    try:
        assert store.new("a" * 32) and not store.new("a" * 32)
        assert not replays.RedisReplays(redis_url, prefix=prefix).new("a" * 32)
        # Redis forgets it once the window is over (600 s), and the short store's sooner
        assert 0 < store.client.ttl(prefix + "a" * 32) <= 2 * MAX_SKEW
        assert short.new("a" * 32)
        wait_for(lambda: short.new("a" * 32), timeout=10, what="the id to be forgotten")
    finally:
        store.client.delete(prefix + "a" * 32)
        store.close()
        short.close()


def test_the_store_follows_the_rate_limits_storage(make_app, redis_url: str) -> None:
    app = make_app()
    with app.app_context():
        assert isinstance(connect_api.replay_store(), replays.DatabaseReplays)
    app = make_app(ratelimit_storage=redis_url)
    with app.app_context():
        assert isinstance(connect_api.replay_store(), replays.RedisReplays)


def test_a_redis_that_does_not_answer_is_a_503_with_a_message(make_app, monkeypatch) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    app = make_app(ratelimit_storage=down, rate_limits=False)
    client = app.test_client()
    made = client.post(
        "/api/bots", json={"name": "ada", "owner": "ada", "games": ["cactus"], "connect": True}
    )
    assert made.status_code == 201, made.get_json()
    bot_id, secret = made.get_json()["id"], made.get_json()["signing_secret"]
    for path, body in (
        ("/api/connect/session", {"bot_id": bot_id, "info": INFO}),
        ("/api/connect/poll", {"bot_id": bot_id, "session": "s", "answers": []}),
    ):
        raw, headers = signed_request(secret, body)
        answer = client.post(path, data=raw, headers=headers)
        assert answer.status_code == 503, answer.get_json()
        assert "Redis" in answer.get_json()["message"]
        assert answer.headers["Retry-After"].isdigit()
    # the guard did not let the request through: nothing was opened
    assert client.get(f"/api/bots/{bot_id}").get_json()["connection"]["connected"] is False
