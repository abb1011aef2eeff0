"""``arena play`` and ``arena replay``."""

from __future__ import annotations

import json

import pytest

from arena.cli import main, parse_options
from tests.test_replays import format_1


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_same_seed_same_output(capsys):
    args = ("play", "cactus", "--preset", "pagat", "--bots", "heuristic,random,random",
            "--matches", "4", "--seed", "5")  # fmt: skip
    first = run(capsys, *args)
    assert first[0] == 0
    assert run(capsys, *args) == first
    assert "match    4  seed 8" in first[1]
    assert "heuristic" in first[1].splitlines()[-3]  # the summary table


def test_the_replay_file_re_simulates(capsys, tmp_path):
    path = tmp_path / "replay.json"
    code, out, _ = run(capsys, "play", "cactus", "--matches", "2", "--replay", str(path))
    assert code == 0
    data = json.loads(path.read_text())
    record = data["matches"][0]
    assert {"seed", "options", "players", "steps", "events", "outcome"} <= set(record)
    assert record["options"]["scoring"] == "wins"  # the complete options, preset expanded
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 0 and out.count(": ok") == 2


def test_a_replay_file_of_the_first_format_still_re_simulates(capsys, tmp_path):
    """Files written by the first release keep every action twice and null fields; they
    are read as the current format (arena.replay.upgrade)."""
    path = tmp_path / "replay.json"
    run(capsys, "play", "cactus", "--matches", "2", "--replay", str(path))
    data = json.loads(path.read_text())
    data["matches"] = [format_1(record) for record in data["matches"]]
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 0 and out.count(": ok") == 2


def test_a_tampered_replay_is_reported(capsys, tmp_path):
    path = tmp_path / "replay.json"
    run(capsys, "play", "cactus", "--replay", str(path))
    data = json.loads(path.read_text())
    data["matches"][0]["events"][3]["player"] = 99
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 1 and "events differ from event 3" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("play", "poker"), "unknown game"),
        (("play", "cactus", "--bots", "heuristic,genius"), "no in-process policy"),
        (("play", "cactus", "--players", "3", "--bots", "random,random"), "name one per seat"),
        (("play", "cactus", "--options", "scoring=golf"), "must be one of"),
        (("play", "cactus", "--preset", "vegas"), "no preset"),
        (("play", "cactus", "--bots", "random", "--bot", "http://127.0.0.1:9/"), "does not answer"),
    ],
)
def test_bad_arguments_get_a_message_and_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err


def test_options_syntax():
    assert parse_options('revolution,rounds=3,values={"K": -1, "A": 2},name=x') == {
        "revolution": True,
        "rounds": 3,
        "values": {"K": -1, "A": 2},
        "name": "x",
    }
