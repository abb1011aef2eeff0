"""A bot that connects out plays a whole tournament against webhook bots, in every lane
with real processes: the web server (in this process, over HTTP on loopback), real
``arena worker`` processes, and the sample bot started as a contestant would start it on
a laptop, ``python -m sample_bots.cactus_random --connect URL --bot-id ID --secret S``,
which opens no listening socket."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from arenabot import make_server

from arena.app import create_app
from arena.processes import make_web_server
from sample_bots.policy_bot import PolicyBot
from tests.lanes import Lane, lane, wait_for

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=pytest.mark.xdist_group(f"connect-{name}"))
        for name in ("embedded", "services", "rabbitmq")
    ],
)
def server(request, tmp_path_factory) -> Iterator[Lane]:
    with lane(request.param, tmp_path_factory.mktemp(request.param), workers=1) as the_lane:
        yield the_lane


@pytest.fixture(scope="module")
def web(server: Lane) -> Iterator[tuple[str, Any]]:
    """The web server, over HTTP: its address and a test client of the same app."""
    app = create_app(server.config)
    httpd = make_web_server("127.0.0.1", 0, app)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{httpd.port}", app.test_client()
    httpd.shutdown()
    httpd.server_close()
    app.extensions["arena.db"].dispose()


def listening_sockets(pid: int) -> int:
    """TCP sockets in LISTEN state that the process holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        target = os.readlink(f"/proc/{pid}/fd/{fd}") if os.path.exists(f"/proc/{pid}/fd/{fd}") else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    count += 1
    return count


def test_a_connect_bot_plays_a_tournament_against_webhook_bots(server: Lane, web) -> None:
    url, api = web
    answer = api.post(
        "/api/bots",
        json={"name": f"{server.name}-laptop", "connect": True, "owner": "student",
              "games": ["cactus"]},  # fmt: skip
    )
    assert answer.status_code == 201, answer.json
    laptop, secret = answer.json["id"], answer.json["signing_secret"]
    assert "endpoint" not in answer.json or answer.json["endpoint"] is None
    with ExitStack() as stack:
        ids = [laptop]
        for i in range(2):
            bot = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=None)
            bot.serve_in_background()
            stack.callback(bot.close)
            made = api.post(
                "/api/bots",
                json={"name": f"{server.name}-hook-{i}", "endpoint": bot.url, "owner": "tests"},
            )
            assert made.status_code == 201, made.json
            bot.secret = made.json["signing_secret"]
            ids.append(made.json["id"])
        student = subprocess.Popen(
            [sys.executable, "-m", "sample_bots.cactus_random", "--connect", url,
             "--bot-id", str(laptop), "--secret", secret],  # fmt: skip
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")])},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        stack.callback(student.stdout.close)
        stack.callback(student.wait)
        stack.callback(student.kill)

        def connected() -> bool:
            presence = api.get(f"/api/bots/{laptop}").json.get("connection") or {}
            return bool(presence.get("connected"))

        wait_for(connected, timeout=30, what="the connect bot's session")
        assert listening_sockets(student.pid) == 0  # it only dials out
        started = api.post(
            "/api/tournaments",
            json={"name": f"{server.name}-connect", "game": "cactus", "bot_ids": ids,
                  "seats_per_match": 2, "games_per_pairing": 2, "seed": 5},  # fmt: skip
        )
        assert started.status_code == 201, started.json
        tid = started.json["id"]

        def finished() -> bool:
            return api.get(f"/api/tournaments/{tid}").json["status"] == "finished"

        wait_for(finished, timeout=240, what="the tournament with a connect bot")
        matches = api.get(f"/api/matches?tournament_id={tid}&bot_id={laptop}").json
        played = matches["items"] if isinstance(matches, dict) else matches
        assert len(played) == 4  # two games against each of the two webhook bots
        bot = api.get(f"/api/bots/{laptop}").json
        assert bot["recent_faults"] == []
        student.terminate()  # Ctrl-C's signal: it drains and leaves
        assert student.wait(timeout=30) == 0, student.stdout.read().decode()[-2000:]
