"""The starter, uploaded as ``python -m arenabot new cactus`` makes it, plays a round robin
against a webhook bot and a bot that connects out, with real processes: the web server
over HTTP on loopback, an ``arena worker`` process that runs the hosted seat in its
sandbox, and the connect bot started as a student starts it.  No fault anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from sample_bots.policy_bot import PolicyBot
from tests.support.connect import connect_bot, start_tournament, webhook_bot
from tests.support.lanes import Lane, lane, wait_for, web_server
from tests.support.sandbox import needs_sandbox


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    needs_sandbox()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Lane]:
    with lane("embedded", tmp_path_factory.mktemp("hosted"), workers=1) as the_lane:
        yield the_lane


@pytest.fixture(scope="module")
def web(server: Lane) -> Iterator[tuple[str, Any]]:
    """The web server, over HTTP: its address and a test client of the same app."""
    with web_server(server.config) as served:
        yield served


def new_starter(folder: Path) -> bytes:
    """The bot a student makes with ``python -m arenabot new cactus <dir>``: its bot.py."""
    made = subprocess.run(
        [sys.executable, "-m", "arenabot", "new", "cactus", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    return (folder / "bot.py").read_bytes()


def test_the_uploaded_starter_plays_webhook_and_connect_bots_without_a_fault(
    server: Lane, web, tmp_path
) -> None:
    url, api = web
    hosted = api.post(
        "/api/bots",
        json={"name": "hosted-starter", "hosted": True, "owner": "student", "games": ["cactus"]},
    ).json
    owner = {"Authorization": f"Bearer {hosted['owner_token']}"}
    put = api.put(
        f"/api/bots/{hosted['id']}/code",
        data=new_starter(tmp_path / "mybot"),
        headers={"Content-Type": "text/x-python", **owner},
    )
    assert put.status_code == 202, put.json

    def validated() -> bool:
        return (
            api.get(f"/api/bots/{hosted['id']}/code", headers=owner).json[0]["status"]
            != "validating"
        )

    wait_for(validated, timeout=120, what="the validation match")
    [version] = api.get(f"/api/bots/{hosted['id']}/code", headers=owner).json
    assert version["status"] == "passed", version
    laptop = api.post(
        "/api/bots",
        json={"name": "laptop", "connect": True, "owner": "student", "games": ["cactus"]},
    ).json
    with ExitStack() as stack:
        hook = webhook_bot(stack, api, "hook", PolicyBot("cactus", "random"))
        stack.enter_context(connect_bot(url, laptop["id"], laptop["signing_secret"]))
        wait_for(
            lambda: (api.get(f"/api/bots/{laptop['id']}").json.get("connection") or {}).get(
                "connected"
            ),
            timeout=30,
            what="the connect bot's session",
        )
        ids = [hosted["id"], hook, laptop["id"]]
        tid = start_tournament(api, "hosted-round-robin", ids, seed=11, games=2)
        wait_for(
            lambda: api.get(f"/api/tournaments/{tid}").json["status"] == "finished",
            timeout=240,
            what="the round robin",
        )
    matches = api.get(f"/api/matches?tournament_id={tid}&page_size=100").json
    played = matches["items"] if isinstance(matches, dict) else matches
    assert len(played) == 6 and all(m["status"] == "finished" for m in played)
    for bot_id in ids:
        assert api.get(f"/api/bots/{bot_id}").json["recent_faults"] == [], bot_id
    for match in played:
        replay = api.get(f"/api/matches/{match['id']}/replay").json
        faults = [d for step in replay["steps"] for d in step if "fault" in d]
        assert faults == [], (match["id"], faults[:3])
    # what the hosted bot played with: its version, per match
    versions = api.get(f"/api/bots/{hosted['id']}/versions").json
    assert [v["version"] for v in versions] == [version["version"]]


def arena_cli(url: str, *argv: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_SERVER"] = url
    if token:
        env["ARENA_OWNER_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "arena", *argv], capture_output=True, text=True, env=env, timeout=60
    )


def test_a_student_registers_and_uploads_from_the_command_line(server: Lane, web, tmp_path) -> None:
    url, api = web
    made = arena_cli(url, "bots", "register", "cli-hosted", "--hosted", "--games", "cactus",
                     "--owner", "student", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    bot = json.loads(made.stdout)
    folder = tmp_path / "mybot"
    new_starter(folder)
    (folder / "helpers.py").write_text("LOW = 2\n")
    sent = arena_cli(url, "bots", "upload", str(bot["id"]), str(folder), token=bot["owner_token"])
    assert sent.returncode == 0, sent.stderr
    assert "validating" in sent.stdout and "validation match" in sent.stdout
    [version] = api.get(
        f"/api/bots/{bot['id']}/code", headers={"Authorization": f"Bearer {bot['owner_token']}"}
    ).json
    assert version["media_type"] == "application/zip" and version["files"] == 3  # + README.md
    owner = {"Authorization": f"Bearer {bot['owner_token']}"}
    wait_for(
        lambda: api.get(f"/api/bots/{bot['id']}/code", headers=owner).json[0]["status"] == "passed",
        timeout=120,
        what="the validation match",
    )
    shown = arena_cli(url, "bots", "show", str(bot["id"]))
    assert shown.returncode == 0
    assert f"hosted       version {version['version']} plays" in shown.stdout
    # the mistakes a student makes: each one line, no traceback
    for argv, said in [
        (["upload", str(bot["id"]), str(tmp_path / "nothing.py")], "no such file"),
        (["upload", str(bot["id"]), str(tmp_path)], "has no bot.py"),
        (["register", "x", "--hosted"], "--games"),
        (
            ["register", "x", "http://127.0.0.1:1", "--hosted", "--games", "cactus"],
            "one of the three",
        ),
    ]:
        wrong = arena_cli(url, "bots", *argv, token=bot["owner_token"])
        assert wrong.returncode != 0 and said in wrong.stderr, (argv, wrong.stderr)
        assert "Traceback" not in wrong.stderr
    refused = arena_cli(url, "bots", "upload", str(bot["id"]), str(folder), token="not-a-token")
    assert refused.returncode != 0 and "401" in refused.stderr and "Traceback" not in refused.stderr
