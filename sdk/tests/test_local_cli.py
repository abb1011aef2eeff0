"""``python -m arenabot.local`` as a user runs it: every mistake is one line on stderr and
exit status 2, never a traceback; the defaults play every game."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from arenabot import Bot, make_server

pytest.importorskip("arena")

from arena.games import GAMES
from arena.games.base import OptionsError

PROG = "python -m arenabot.local"
FILES = {
    "mybot.py": (
        "from arenabot import Bot\n"
        "LIMIT = 3\n"
        "def act(view, legal_actions):\n"
        "    return legal_actions[0]\n"
        "class MyBot(Bot):\n"
        "    name, games = 'mine', ['cactus']\n"
        "    def act(self, view, legal_actions):\n"
        "        return legal_actions[-1]\n"
    ),
    "broken.py": "def act(view, legal_actions:\n    return legal_actions[0]\n",
    "crash.py": "LIMIT = 1 / 0\n",
    "needs.py": "import no_such_dependency\n",
    "slow.py": (
        "import time\n"
        "from arenabot import Bot\n"
        "class Slow(Bot):\n"
        "    # 0.6 s for each of its first two decisions in a match; not thread-safe\n"
        "    name, games = 'slow', ['cactus']\n"
        "    def __init__(self):\n"
        "        self.decisions = {}\n"
        "    def on_act(self, request):\n"
        "        seen = self.decisions.get(request['match_id'], 0)\n"
        "        self.decisions[request['match_id']] = seen + 1\n"
        "        if seen < 2:\n"
        "            time.sleep(0.6)\n"
        "        return request['legal_actions'][0]\n"
    ),
    "needy.py": (
        "from arenabot import Bot\n"
        "class Needy(Bot):\n"
        "    def __init__(self, level):\n"
        "        self.level = level\n"
    ),
}


@pytest.fixture
def here(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def local(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SECRET"}
    return subprocess.run(
        [sys.executable, "-m", "arenabot.local", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def arena_says(call: object) -> str:
    """The arena's own words for a mistake (the runner passes them on)."""
    try:
        call()  # type: ignore[operator]
    except OptionsError as exc:
        return str(exc)
    raise AssertionError("no mistake")


MISTAKES = [
    ([], "the following arguments are required: bot (see --help)"),
    (["mybot"], "name the bot as module:name or file.py:name (e.g. mybot:act or bot.py:MyBot), "
     "or give its URL, not 'mybot'"),
    (["ftp://bots.example:act"],
     "a bot URL starts with http:// or https://, not 'ftp://bots.example:act'"),
    (["nosuch:act"], "no module named 'nosuch' here or on the Python path (run from the bot's "
     "directory, or give its file: path/to/bot.py:act)"),
    (["missing.py:act"], "no such file: missing.py"),
    (["broken.py:act"], "broken.py, line 1: '(' was never closed (the bot's code does not parse)"),
    (["crash.py:act"],
     "importing crash.py failed: ZeroDivisionError: division by zero (crash.py, line 1)"),
    (["needs:act"], "importing needs failed: ModuleNotFoundError: No module named "
     "'no_such_dependency' (needs.py, line 1)"),
    (["mybot:Nope"], "mybot has no 'Nope'; bots in it: act, MyBot"),
    (["mybot:LIMIT"], "mybot:LIMIT is not a bot: a bot is a Bot subclass, a Bot or a function "
     "act(view, legal_actions), not int"),
    (["needy.py:Needy"], "needy.py:Needy could not be made: TypeError: Needy.__init__() missing 1 "
     "required positional argument: 'level'"),
    (["mybot:act"], "name the game with --game (mybot declares no games)"),
    (["mybot:act", "--game", "chess"],
     "unknown game 'chess'; games: cactus, cactus-game, president"),
    (["mybot:MyBot", "--opponents", "clever"],
     "cactus has no in-process policy 'clever'; policies: random, heuristic"),
    (["mybot:act", "--game", "president", "--opponents", "random"],
     "president is played by 3 to 8 players, not 2 (the bot and 1 opponent(s): name one per "
     "other seat)"),
    (["mybot:MyBot", "--opponents", ","],
     "--opponents names no policy (e.g. --opponents random,heuristic) (see --help)"),
    (["mybot:MyBot", "--options", '{"no_such_option": 1}'],
     lambda: GAMES["cactus"].resolve_options({"no_such_option": 1})),
    (["mybot:MyBot", "--preset", "nope"],
     lambda: GAMES["cactus"].resolve_options({"preset": "nope"})),
    (["mybot:MyBot", "--options", "rounds=3"],
     "--options is not JSON: Expecting value: line 1 column 1 (char 0) (see --help)"),
    (["mybot:MyBot", "--options", "[1]"],
     '--options must be a JSON object, e.g. {"rounds": 3} (see --help)'),
    (["mybot:MyBot", "--matches", "0"], "--matches must be at least 1, not 0 (see --help)"),
    (["mybot:MyBot", "--matches", "ten"],
     "argument --matches: invalid int value: 'ten' (see --help)"),
    (["mybot:MyBot", "--seed", "1.5"], "argument --seed: invalid int value: '1.5' (see --help)"),
    (["mybot:MyBot", "--concurrent", "0"], "--concurrent must be at least 1, not 0 (see --help)"),
    (["mybot:MyBot", "--concurrent", "-1"], "--concurrent must be at least 1, not -1 (see --help)"),
    (["mybot:MyBot", "--concurrent", "four"],
     "argument --concurrent: invalid int value: 'four' (see --help)"),
    (["mybot:MyBot", "--rounds", "3"], "unrecognized arguments: --rounds 3 (see --help)"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), MISTAKES)
def test_a_mistake_is_one_line_and_status_2(here: Path, args: list[str], message: object) -> None:
    expected = message if isinstance(message, str) else arena_says(message)
    result = local(*args, cwd=here)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"{PROG}: error: {expected}\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_bot_url_that_is_down(here: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = local(url, "--game", "cactus", cwd=here)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"{PROG}: error: nothing answers at {url}: is the bot running, on that port?\n"
    )


class FirstLegal(Bot):
    name, games = "first-legal", ["cactus"]

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        return legal_actions[0]


@pytest.fixture
def served() -> Iterator[str]:
    server = make_server(FirstLegal(), "127.0.0.1", 0, secret="local-runner-secret")
    server.serve_in_background()
    yield server.url
    server.close()


def test_a_running_bot_by_its_url(here: Path, served: str) -> None:
    wrong_game = local(served, "--game", "president", cwd=here)
    assert wrong_game.returncode == 2
    assert wrong_game.stderr == (
        f"{PROG}: error: bot {served} does not play president (it plays cactus)\n"
    )
    played = local(served, "--matches", "2", "--secret", "local-runner-secret", cwd=here)
    assert played.returncode == 0, played.stderr
    assert "cactus: 2 players, 2 matches" in played.stdout
    row = next(line.split() for line in played.stdout.splitlines() if line.startswith("first"))
    assert row[-2] == "0"  # no fault: signed with the right secret
    unsigned = local(served, "--matches", "1", cwd=here)
    assert unsigned.returncode == 0
    row = next(line.split() for line in unsigned.stdout.splitlines() if line.startswith("first"))
    assert row[-2] != "0"  # every request refused (401): faults, not a crash


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_defaults_play_every_game(here: Path, game: str) -> None:
    result = local("mybot:act", "--game", game, "--matches", "1", cwd=here)
    assert result.returncode == 0, result.stderr
    players = GAMES[game].min_players
    assert f"{game}: {players} players, 1 matches" in result.stdout


def test_a_slow_bot_plays_concurrent_matches_without_a_timeout(here: Path) -> None:
    """Four matches at once against a bot that is not thread-safe and takes 0.6 s a
    decision: its requests would queue inside it, the last one past the 2 s deadline;
    sent one at a time, as it declares, the wait is not counted and no decision is late."""
    played = local(
        "slow.py:Slow", "--matches", "4", "--concurrent", "4", "--options", '{"rounds": 1}',
        cwd=here,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert "cactus: 2 players, 4 matches" in played.stdout
    row = next(line.split() for line in played.stdout.splitlines() if line.startswith("slow"))
    assert row[1] == "4" and row[-2] == "0"  # matches, faults
    assert "4 matches at once; slow takes 1 request(s) at a time" in played.stdout


def test_concurrent_matches_against_a_running_bot(here: Path, served: str) -> None:
    played = local(
        served, "--matches", "3", "--concurrent", "3", "--secret", "local-runner-secret",
        cwd=here,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    row = next(line.split() for line in played.stdout.splitlines() if line.startswith("first"))
    assert row[1] == "3" and row[-2] == "0"
    assert "takes 1 request(s) at a time" in played.stdout
