"""The local runner: the bot plays through the referee with the protocol's JSON shapes."""

from __future__ import annotations

import io
import random
import sys
from typing import Any

import pytest
from arenabot import Bot
from arenabot.local import ARENA_MISSING, BotClient, UsageError, load_bot, main, play

pytest.importorskip("arena")


class Recorder(Bot):
    """Random legal actions; keeps what it was given."""

    name = "recorder"

    def __init__(self) -> None:
        self.rng = random.Random(7)
        self.starts: list[dict[str, Any]] = []
        self.ends: list[dict[str, Any]] = []
        self.decisions = 0

    def start(self, info: dict[str, Any]) -> None:
        self.starts.append(info)

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        self.decisions += 1
        assert type(view) is dict and type(legal_actions) is list
        return self.rng.choice(legal_actions), f"decision {self.decisions}"

    def end(self, info: dict[str, Any]) -> None:
        self.ends.append(info)


@pytest.mark.parametrize(
    ("game", "opponents"),
    [
        ("cactus", ["random", "heuristic"]),
        ("cactus-game", ["heuristic"]),
        ("president", ["random", "random"]),
    ],
)
def test_play_runs_matches_with_the_protocol_shapes(game: str, opponents: list[str]) -> None:
    bot = Recorder()
    out = io.StringIO()
    result = play(bot, game, opponents, matches=3, seed=5, options=_short(game), out=out)
    assert len(result.records) == 3
    assert result.standings[0].name == "recorder"
    me = result.standings[0]
    assert me.matches == 3 and me.faults == 0 and me.decisions == bot.decisions > 0
    assert len(bot.starts) == len(bot.ends) == 3
    assert set(bot.starts[0]) == {"match_id", "game", "options", "seat", "players"}
    assert set(bot.ends[0]) == {"match_id", "game", "seat", "outcome", "view"}
    memos = [d.get("memo") for r in result.records for step in r["steps"] for d in step]
    assert "decision 1" in memos
    assert f"{game}: {1 + len(opponents)} players, 3 matches" in out.getvalue()


def test_seats_rotate_between_matches() -> None:
    bot = Recorder()
    play(bot, "cactus", ["random", "random"], matches=3, quiet=True, options=_short("cactus"))
    assert sorted(s["seat"] for s in bot.starts) == [0, 1, 2]


def test_the_same_seed_plays_the_same_matches() -> None:
    a = play(Recorder(), "cactus", ["heuristic"], matches=2, seed=3, quiet=True)
    b = play(Recorder(), "cactus", ["heuristic"], matches=2, seed=3, quiet=True)
    for ra, rb in zip(a.records, b.records, strict=True):  # latencies aside
        assert ra["outcome"] == rb["outcome"]
        actions = [[(d["seat"], d["action"]) for d in step] for step in ra["steps"]]
        assert actions == [[(d["seat"], d["action"]) for d in step] for step in rb["steps"]]


def test_a_bot_that_raises_gets_faults_and_the_traceback_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    class Broken(Bot):
        name = "broken"

        def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
            raise ValueError("my bug")

    result = play(Broken(), "cactus", ["random"], matches=1, quiet=True)
    assert result.standings[0].faults == 3  # then struck out: no longer asked
    assert result.records[0]["outcome"]["struck_out"] == [0]
    assert "ValueError: my bug" in capsys.readouterr().err


def test_an_answer_that_is_not_json_is_a_fault() -> None:
    class Sets(Bot):
        def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
            return {"type": {1}}

    client = BotClient(Sets(), "sets")
    with pytest.raises(TypeError):
        client.act({"view": {}, "legal_actions": [{"type": "draw"}]})


def test_the_bot_gets_copies_it_may_change() -> None:
    class Vandal(Bot):
        def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
            choice = dict(legal_actions[0])
            view.clear()
            legal_actions.clear()
            return choice

    result = play(Vandal(), "president", ["random", "random"], matches=1, quiet=True)
    assert result.standings[0].faults == 0


def test_opponents_may_be_bots_and_names_are_told_apart() -> None:
    result = play(Recorder(), "cactus", [Recorder(), "random", "random"], matches=1, quiet=True)
    names = [s.name for s in result.standings]
    assert names == ["recorder#1", "recorder#2", "random#1", "random#2"]


def test_bad_arguments_fail_before_any_match() -> None:
    with pytest.raises(UsageError, match="unknown game 'no-such-game'"):
        play(Recorder(), "no-such-game", quiet=True)
    with pytest.raises(UsageError, match="3 to 8 players, not 2"):
        play(Recorder(), "president", ["random"], quiet=True)  # 3 players at least
    with pytest.raises(UsageError, match="no_such_option"):
        play(Recorder(), "cactus", options={"no_such_option": 1}, quiet=True)
    with pytest.raises(UsageError, match="no in-process policy 'clever'"):
        play(Recorder(), "cactus", ["clever"], quiet=True)
    with pytest.raises(UsageError, match="at least 1, not 0"):
        play(Recorder(), "cactus", matches=0, quiet=True)
    with pytest.raises(UsageError, match="not int"):
        play(42, "cactus", quiet=True)  # type: ignore[arg-type]


def test_a_plain_function_is_a_bot() -> None:
    seen: list[int] = []

    def act(view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        seen.append(view["seat"])
        return legal_actions[-1]

    result = play(
        act, "cactus-game", ["heuristic"], matches=2, quiet=True, options=_short("cactus-game")
    )
    assert result.standings[0].name == "test_local"  # the function's module
    assert result.standings[0].faults == 0 and seen


@pytest.mark.parametrize(("game", "players"), [("cactus", 2), ("cactus-game", 2), ("president", 3)])
def test_the_defaults_are_valid_for_every_game(game: str, players: int) -> None:
    class OneGame(Recorder):
        games = [game]

    result = play(OneGame(), matches=1, quiet=True, options=_short(game))
    assert result.game == game  # the one game the bot declares
    assert [s.name for s in result.standings[1:]] == (
        ["random"] if players == 2 else ["random#1", "random#2"]
    )


def test_the_game_must_be_named_when_the_bot_declares_none() -> None:
    class Several(Recorder):
        games = ["president", "cactus"]

    with pytest.raises(UsageError, match=r"--game \(recorder declares no games\)"):
        play(Recorder(), quiet=True)
    # several: the first it declares
    assert play(Several(), matches=1, quiet=True, options=_short("president")).game == "president"


def test_a_missing_arena_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "arena" or m.startswith("arena.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "arena", None)
    with pytest.raises(ModuleNotFoundError, match="pip install"):
        play(Recorder(), "cactus", quiet=True)
    assert ARENA_MISSING.startswith("arenabot.local")


def test_the_command_line(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_cli_bot.py").write_text(
        "from arenabot import Bot\n"
        "class MyBot(Bot):\n"
        "    name = 'mine'\n"
        "    def act(self, view, legal_actions):\n"
        "        return legal_actions[0]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert isinstance(load_bot("my_cli_bot:MyBot"), Bot)
    code = main(
        ["my_cli_bot:MyBot", "--game", "cactus", "--matches", "2", "--preset", "pagat",
         "--opponents", "random,heuristic", "--options", '{"target": 20}']
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "cactus: 3 players, 2 matches" in out and "mine" in out
    assert main(["my_cli_bot:MyBot", "--game", "nope"]) == 2
    assert main(["my_cli_bot", "--game", "cactus"]) == 2


def _short(game: str) -> dict[str, Any]:
    """Options that keep a test match short."""
    return {"cactus": {"rounds": 1}, "cactus-game": {"target": 2}, "president": {"rounds": 1}}[game]


# -- the starter of ``python -m arenabot new``, as its author first runs it ------------------
@pytest.fixture
def starter(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    from arenabot.starters import write

    write("cactus", str(tmp_path / "mybot"), None)
    monkeypatch.chdir(tmp_path / "mybot")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "bot", None)  # each test imports its own bot.py
    return tmp_path / "mybot"


def test_the_starter_plays_the_game_its_module_declares_without_game(
    starter: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bot.py:act", "--matches", "1", "--options", '{"rounds": 1}']) == 0
    out, err = capsys.readouterr()
    assert out.startswith("cactus: 2 players, 1 matches") and "\nmybot " in out  # its NAME
    assert err == ""


def test_a_game_the_starter_does_not_play_is_one_line_and_status_2(
    starter: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bot.py:act", "--game", "president", "--opponents", "random,random"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "python -m arenabot.local: error: mybot does not play president (it declares "
        "cactus): give --game cactus, or add president to its games\n"
    )


def test_only_bots_are_listed_not_the_helpers_they_call(
    starter: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bot.py:MyBot"]) == 2  # the starter's helpers take (view, legal_actions)
    assert capsys.readouterr().err.endswith("bot.py has no 'MyBot'; bots in it: act\n")


def test_an_exception_in_act_is_one_traceback_and_a_count(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "raising.py").write_text(
        "GAMES = ['cactus']\n"
        "def act(view, legal_actions):\n"
        "    raise KeyError('the key I forgot')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["raising.py:act", "--matches", "3", "--options", '{"rounds": 1}']) == 0
    err = capsys.readouterr().err
    assert err.count("Traceback") == 1 and "KeyError: 'the key I forgot'" in err
    assert err.endswith("raising raised 9 exceptions in all (the first one's traceback is above)\n")
