"""The web tier as the image runs it: its ``CMD`` (read from deploy/Dockerfile, only the
bind address changed), on an embedded database.  Connections held open, by bots' long
polls or by slow clients, must not take the process's capacity from everyone else, and
password checks must work on the server's event loop."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.image import image_web, workers_of
from tests.support.lanes import postgres_url

HELD = 300  # connections held open at once: more than the old command had threads (256)


def _get(url: str, timeout: float = 10.0) -> int:  # a bound, not a timed assertion
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except TimeoutError:
        pytest.fail(f"{url} did not answer within {timeout} s")


def _post(url: str, body: dict, timeout: float = 30.0) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen]]:
    data = tmp_path_factory.mktemp("web-tier")
    env = {
        **os.environ,
        "ARENA_PROFILE": "local",
        "ARENA_DATA_DIR": str(data),
        "ARENA_RELAY_HOST": "127.0.0.1",
    }
    for name in ("ARENA_DATABASE_URL", "ARENA_BROKER_URL", "ARENA_RATELIMIT_STORAGE"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-m", "arena", "db", "upgrade"], env=env, check=True)
    with image_web(env, data / "gunicorn.log") as running:
        yield running


def test_slow_clients_and_idle_connections_leave_the_pages_answering(web) -> None:
    """300 connections that send half a request and then a byte a second (a slow
    client, or an attack on one), more than the old command's 4 x 64 threads: the health
    check and the pages still answer (gevent's workers drop a connection whose request
    head is not whole within 2 s), and no process holds a thread per connection."""
    url, proc = web
    port = int(url.rsplit(":", 1)[1])
    held: list[socket.socket] = []
    stop = threading.Event()

    def trickle() -> None:  # a byte of a header every second, never the end of it
        while not stop.wait(1.0):
            for sock in held:
                with contextlib.suppress(OSError):
                    sock.sendall(b"x")

    with ExitStack() as stack:
        for i in range(HELD):
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: arena\r\nX-Slow-%d: " % i)
            held.append(sock)
        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        stack.callback(sender.join)
        stack.callback(stop.set)
        time.sleep(3.0)  # let the processes take every one
        for path in ("/healthz", "/api/games", "/leaderboard/cactus"):
            assert _get(url + path) == 200, path
        workers = workers_of(proc.pid)
        threads = sum(_threads(pid) for pid in workers)
        assert threads < HELD // 4, f"{threads} threads in {len(workers)} processes"


def test_sign_up_and_log_in_on_the_servers_event_loop(web) -> None:
    """A password is hashed and checked off the request's greenlet (argon2 blocks in C):
    accounts work on the image's server, and a wrong password is still refused."""
    url, _proc = web
    name = "tier-student"
    status, created = _post(f"{url}/api/accounts", {"name": name, "password": "correct horse"})
    assert status == 201, created
    status, token = _post(
        f"{url}/api/accounts/tokens", {"name": name, "password": "correct horse", "label": "t"}
    )
    assert status == 201 and token["token"], token
    status, refused = _post(
        f"{url}/api/accounts/tokens", {"name": name, "password": "wrong horse!", "label": "t"}
    )
    assert status == 401, refused


def test_a_crowd_that_takes_every_database_connection_is_told_to_come_back(
    make_app, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Every pooled connection of the process taken (thousands of polls arriving at once
    on a handful of connections): a request waits the pool's bound, then gets a 503 with
    Retry-After, which clients retry, and the operator one line, not a traceback."""
    import logging

    from arena import db as arena_db

    monkeypatch.setattr(arena_db, "POOL_TIMEOUT", 0.2)
    with postgres_url() as url:
        subprocess.run(
            [sys.executable, "-m", "arena", "db", "upgrade"],
            env={**os.environ, "ARENA_DATABASE_URL": url, "ARENA_PROFILE": "local"},
            check=True,
            capture_output=True,
        )
        app = make_app(database_url=url, database_pool=1)
        database = app.extensions["arena.db"]
        held = [database.engine.connect() for _ in range(2)]  # the pool's 1, and 1 more
        try:
            with caplog.at_level(logging.WARNING):
                answer = app.test_client().get("/api/bots")
        finally:
            for connection in held:
                connection.close()
        assert answer.status_code == 503, answer.get_data(as_text=True)
        assert "busy" in answer.get_json()["message"] and answer.headers["Retry-After"]
        said = [r for r in caplog.records if "pool is exhausted" in r.getMessage()]
        assert len(said) == 1 and said[0].exc_info is None
        assert app.test_client().get("/api/bots").status_code == 200  # and it passes
        database.dispose()


def test_the_access_log_leaves_out_successful_polls_only(tmp_path: Path) -> None:
    """The image's --logger-class: a line per request but a connected bot's successful
    poll (one or more per decision); a refused poll is still logged."""
    from gunicorn.config import Config

    from arena.serving import AccessLog

    config = Config()
    config.set("accesslog", str(tmp_path / "access.log"))
    log = AccessLog(config)

    class Request:
        def __init__(self, path: str) -> None:
            self.path, self.query, self.method, self.version = path, "", "POST", (1, 1)
            self.headers: list[tuple[str, str]] = []

    class Answer:
        def __init__(self, status: int) -> None:
            self.status, self.status_code, self.sent, self.headers = f"{status} X", status, 2, []

    for path, status in [
        ("/api/connect/poll", 200),
        ("/api/connect/poll", 401),
        ("/api/connect/session", 200),
        ("/healthz", 200),
    ]:
        environ = {"REQUEST_METHOD": "POST", "RAW_URI": path, "SERVER_PROTOCOL": "HTTP/1.1"}
        log.access(Answer(status), Request(path), environ, dt.timedelta(milliseconds=1))
    for handler in log.access_log.handlers:
        handler.flush()
    lines = (tmp_path / "access.log").read_text().splitlines()
    assert [(re.search(r'"POST (\S+)', line)[1], line.split('" ')[1][:3]) for line in lines] == [
        ("/api/connect/poll", "401"),
        ("/api/connect/session", "200"),
        ("/healthz", "200"),
    ]


def test_a_web_process_freezes_its_loaded_app_out_of_the_collector(tmp_path: Path) -> None:
    """The image's entry point (``arena.wsgi``) leaves the loaded app out of Python's
    cyclic collector and collects its young objects in larger batches: full collections
    over the app's objects and thousands of held polls stopped a process for up to 0.9 s
    at 5,000 connected bots (benchmarks/crowd.py with a gc.callbacks probe)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ARENA_")},
        "ARENA_PROFILE": "local",
        "ARENA_DATA_DIR": str(tmp_path),
    }
    probe = (
        "import gc, json, arena.wsgi as w; "
        "print(json.dumps([gc.get_threshold(), w.COLLECT_EVERY, gc.get_freeze_count()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    threshold, wanted, frozen = json.loads(done.stdout)
    assert threshold == wanted and wanted[0] > 700  # larger batches than Python's default
    assert frozen > 50_000  # the app, its libraries and their objects
