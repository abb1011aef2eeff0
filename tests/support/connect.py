"""What the connect transport's end-to-end tests share: the sample bot started as a
student starts it on a laptop, connecting out (``connect_bot``), webhook bots to play
against (``webhook_bot``) and a tournament among them (``start_tournament``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arenabot import make_server

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def connect_bot(
    url: str, bot_id: int, secret: str, wrap: Callable[..., list[str]] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m sample_bots.cactus_random --connect URL --bot-id ID --secret S``, its
    output (stdout and stderr) in a pipe; ``wrap(*argv)`` gives the command that runs it
    elsewhere (in a network namespace, say).  Killed at the end if still running."""
    argv = [sys.executable, "-m", "sample_bots.cactus_random", "--connect", url,
            "--bot-id", str(bot_id), "--secret", secret]  # fmt: skip
    student = subprocess.Popen(
        wrap(*argv) if wrap is not None else argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")])},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        yield student
    finally:
        if student.poll() is None:
            student.kill()
        student.wait()
        assert student.stdout is not None
        student.stdout.close()


def webhook_bot(stack: contextlib.ExitStack, api: Any, name: str, bot: Any) -> int:
    """``bot`` served on loopback for the rest of ``stack`` and registered with ``api``
    under ``name``, signing with the secret registration gave it; its id."""
    server = make_server(bot, "127.0.0.1", 0, secret=None)
    server.serve_in_background()
    stack.callback(server.close)
    made = api.post("/api/bots", json={"name": name, "endpoint": server.url, "owner": "tests"})
    assert made.status_code == 201, made.json
    server.secret = made.json["signing_secret"]
    return made.json["id"]


def start_tournament(api: Any, name: str, bot_ids: list[int], seed: int, games: int = 2) -> int:
    """A Cactus round robin of two-seat matches, ``games`` per pairing; its id."""
    started = api.post(
        "/api/tournaments",
        json={
            "name": name,
            "game": "cactus",
            "bot_ids": bot_ids,
            "seats_per_match": 2,
            "games_per_pairing": games,
            "seed": seed,
        },
    )
    assert started.status_code == 201, started.json
    return started.json["id"]
