"""``python -m arenabot new GAME DIR``: a starter bot that runs and plays at once."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from arenabot.starters import STARTERS, StarterError, write

OPPONENTS = {"cactus": "heuristic", "cactus-game": "heuristic", "president": "heuristic,random"}


def sdk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m arenabot ...`` as a user runs it, without the caller's secret."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SECRET"}
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_every_game_of_the_views_has_a_starter() -> None:
    assert set(STARTERS) == {"cactus", "cactus-game", "president"}


@pytest.mark.parametrize("game", sorted(STARTERS))
def test_the_starter_plays_a_local_match_with_no_fault(game: str, tmp_path: Path) -> None:
    pytest.importorskip("arena", reason="the local runner needs the arena package")
    made = sdk("arenabot", "new", game, "mybot", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "mybot"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "bot.py"]
    source = (folder / "bot.py").read_text()
    assert 'NAME = "mybot"' in source and "from arenabot.views import" in source
    assert f"bot.py:act --game {game}" in (folder / "README.md").read_text()
    played = sdk(
        "arenabot.local", "bot.py:act", "--game", game, "--matches", "3",
        "--opponents", OPPONENTS[game], cwd=folder,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert played.stderr == ""  # no traceback, no warning
    rows = {line.split()[0]: line.split() for line in played.stdout.splitlines()[2:]}
    # the bot is named by its module's NAME, as when it is served
    assert rows["mybot"][1] == "3" and rows["mybot"][-2] == "0", played.stdout  # matches, faults


def test_the_starter_serves_itself_with_its_name_and_game(tmp_path: Path) -> None:
    write("president", tmp_path / "p", name="shed-low")
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SECRET"}
    bot = subprocess.Popen(
        [sys.executable, "bot.py", "--port", "0"],
        cwd=tmp_path / "p",
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert bot.stderr is not None
        warning = bot.stderr.readline()
        assert "signatures are NOT checked" in warning
        listening = bot.stderr.readline()
        assert "shed-low 0 listening on http://127.0.0.1:" in listening
        port = int(listening.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        info = json.loads(conn.getresponse().read())
        conn.close()
        assert info["name"] == "shed-low" and info["games"] == ["president"]
    finally:
        bot.terminate()
        bot.communicate(timeout=10)  # and close the pipe


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "x"], "unknown game 'nope'; games: cactus, cactus-game, president"),
        (["cactus", "full"], "full is not empty: give a new directory"),
        (["cactus", "full/a.txt"], "full/a.txt is a file, not a directory"),
        (["cactus", "x", "--name", "a b"], "a bot name is 1 to 64 letters, digits, '.', '_' "
         "and '-', not 'a b'"),
        (["cactus"], "the following arguments are required: dir (see --help)"),
    ],
)  # fmt: skip
def test_a_mistake_is_one_line_and_status_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "a.txt").write_text("mine")
    result = sdk("arenabot", "new", *args, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"python -m arenabot new: error: {message}\n"
    assert (tmp_path / "full" / "a.txt").read_text() == "mine"
    assert not (tmp_path / "x").exists()


def test_write_refuses_without_touching_anything(tmp_path: Path) -> None:
    with pytest.raises(StarterError, match="unknown game"):
        write("chess", tmp_path / "new")
    assert not (tmp_path / "new").exists()
    written = write("cactus", tmp_path / "empty-dir-is-fine")
    assert [p.name for p in written] == ["bot.py", "README.md"]
    assert 'NAME = "empty-dir-is-fine"' in written[0].read_text()
