"""``arena demo``, the README's main command, on the embedded default."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.xdist_group("server")


def test_the_demo_plays_a_round_robin_and_prints_the_leaderboard(tmp_path):
    # nothing configured: no database server, no broker server
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run(
        [sys.executable, "-m", "arena", "demo", "--exit-when-done", "--port", "0",
         "--games", "cactus,president", "--data-dir", str(tmp_path / "demo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a bound on the process, not a timed assertion
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "sample bots registered" in out
    for game in ("cactus", "president"):  # the last progress bar of each tournament
        assert re.search(rf"{game} +\[#{{30}}\] (\d+)/\1  finished", out), out
    for game in ("cactus", "president"):
        board = out.split(f"Leaderboard — {game}\n")[1].split("\n\n")[0]
        rows = board.splitlines()[1:]
        assert len(rows) == 3 and all("(" in row for row in rows), board  # Elo and fit
    assert "Browse the rankings, tournaments and replays at http://127.0.0.1:" in out
    assert (tmp_path / "demo" / "arena.sqlite3").exists()
    assert not (tmp_path / "control").exists()  # the broker keeps to its data folder
