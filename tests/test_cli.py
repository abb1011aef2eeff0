"""``arena play`` and ``arena replay``, and the one line every command answers a mistake
with (the commands against a running server: tests/test_remote.py)."""

from __future__ import annotations

import json

import pytest

from arena.cli import main
from arena.cli.local import parse_options
from arena.games import get_game
from arena.games.base import IllegalAction
from arena.match.records import answers
from tests.support.replays import format_1


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
    are read as the current format (arena.match.records.upgrade)."""
    path = tmp_path / "replay.json"
    run(capsys, "play", "cactus", "--matches", "2", "--replay", str(path))
    data = json.loads(path.read_text())
    data["matches"] = [format_1(record) for record in data["matches"]]
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 0 and out.count(": ok") == 2


def test_a_tampered_event_is_reported_with_its_match_and_step(capsys, tmp_path):
    path = tmp_path / "replay.json"
    run(capsys, "play", "cactus", "--matches", "2", "--replay", str(path))
    data = json.loads(path.read_text())
    events = data["matches"][0]["events"]
    kind, player = events[3]["type"], events[3]["player"]
    events[3]["player"] = 99
    path.write_text(json.dumps(data))
    code, out, err = run(capsys, "replay", str(path))
    assert (code, err) == (1, "")  # the check ran, and failed
    assert out == (
        f"match 1 differs at step 0: event 3 ({kind}): player is recorded as 99, "
        f"re-simulated {player}\nmatch 2: ok\n"
    )


def test_a_tampered_answer_is_reported_with_its_match_and_step(capsys, tmp_path):
    """An answer the engine refuses is a difference at its step, not an IllegalAction
    traceback."""
    path = tmp_path / "replay.json"
    run(capsys, "play", "cactus", "--matches", "2", "--seed", "3", "--replay", str(path))
    data = json.loads(path.read_text())
    record = data["matches"][1]
    k = next(i for i, step in enumerate(record["steps"]) if i > 2 and len(step) == 1)
    record["steps"][k][0]["action"] = {"type": "no-such-action"}
    path.write_text(json.dumps(data))
    game = get_game("cactus")  # the engine's own words for the refusal
    state = game.new_state(2, record["seed"], record["options"])
    for step in record["steps"][:k]:
        game.apply(state, answers(step))
    with pytest.raises(IllegalAction) as refused:
        game.apply(state, answers(record["steps"][k]))
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 1
    assert out == (
        f"match 1: ok\nmatch 2 differs at step {k + 1}: the recorded answer is refused "
        f"({refused.value})\n"
    )


def test_president_plays_with_the_default_bots(capsys):
    """The default bots fill the game's smallest table: three for Président."""
    code, out, err = run(capsys, "play", "president")
    assert (code, err) == (0, "")
    assert "president 3 players, 1 matches" in out
    assert [line.split()[0] for line in out.splitlines()[-3:]] == [
        "heuristic", "random#1", "random#2"
    ]  # fmt: skip


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


MISTAKES = [
    # (argv, the one line on stderr); {dir} is the test's folder
    (["replay", "{dir}/missing.json"], "{dir}/missing.json: no such file"),
    (
        ["replay", "{dir}/other.json"],
        "{dir}/other.json: not a replay file (arena play --replay writes one: an object with "
        '"matches")',
    ),
    (["replay", "{dir}/text.json"], "{dir}/text.json: not JSON (Expecting value at line 1)"),
    (["replay", "{dir}/broken.json"], "{dir}/broken.json: match 1 is not a match record"),
    (
        ["demo", "--games", "poker"],
        "the demo has no line-up for 'poker'; games: cactus, cactus-game, president",
    ),
    (["demo", "--workers", "0"], "--workers must be at least 1, not 0"),
    (
        ["demo", "--games", "president", "--games-per-pairing", "4"],
        "--games-per-pairing 4: president is played at 3 seats here, so give a multiple of 3 "
        "(each bot plays each seat)",
    ),
    (["demo", "--port", "70000"], "--port must be a port from 0 to 65535, not 70000"),
    (
        ["demo", "--games", "cactus", "--bot-port", "65535"],
        "--bot-port must be from 1 to 65533 (3 bots from it on), not 65535",
    ),
    (["demo", "--data-dir", "{dir}/text.json"], "--data-dir {dir}/text.json: not a folder"),
    (
        ["ratings", "rebuild"],
        "no database at {dir}/arena-data/arena.sqlite3: run this where the arena keeps its "
        "data, or point ARENA_DATA_DIR (or ARENA_DATABASE_URL) at it",
    ),
    (
        ["ratings", "rebuild", "--game", "poker"],
        "unknown game 'poker'; games: cactus, cactus-game, president",
    ),
    (["play", "poker"], "unknown game 'poker'; games: cactus, cactus-game, president"),
    (["play", "cactus", "--matches", "-3"], "--matches must be at least 1, not -3"),
    (["play", "cactus", "--matches", "0"], "--matches must be at least 1, not 0"),
    (["play", "cactus", "--players", "0"], "cactus is played by 2 to 8 players, not 0"),
    (["play", "president", "--players", "2"], "president is played by 3 to 8 players, not 2"),
    (
        ["play", "cactus", "--players", "3", "--bots", "random,random"],
        "--bots and --bot name 2 bot(s) but --players is 3: name one per seat",
    ),
    (["play", "cactus", "--deadline-ms", "0"], "--deadline-ms must be at least 1, not 0"),
    (["play", "cactus", "--max-strikes", "0"], "--max-strikes must be at least 1, not 0"),
    (["play", "cactus", "--seed", "-1"], "--seed must be at least 0, not -1"),
    (
        ["play", "cactus", "--bots", "heuristic,genius"],
        "cactus has no in-process policy 'genius'; policies: random, heuristic",
    ),
    (
        ["play", "cactus", "--preset", "vegas"],
        "cactus has no preset 'vegas'; presets: classic, pagat",
    ),
    (
        ["play", "cactus", "--replay", "{dir}/no/such/r.json"],
        "{dir}/no/such/r.json: cannot be written (no folder {dir}/no/such)",
    ),
    (
        ["play", "cactus", "--bots", "random", "--bot", "bots.example:9001"],
        "--bot 'bots.example:9001' is not a bot's address: give http://host:port",
    ),
    (  # a bot that is down
        ["play", "cactus", "--bots", "random", "--bot", "http://127.0.0.1:9/"],
        "bot http://127.0.0.1:9/ does not answer GET /: connection_refused: "
        "[Errno 111] Connection refused",
    ),
    (["serve", "--port", "70000"], "--port must be a port from 0 to 65535, not 70000"),
    (["worker", "--concurrency", "0"], "--concurrency must be at least 1, not 0"),
    (
        ["tournaments", "start", "cactus", "--bots", "1,x"],
        "--bots '1,x': give bot ids separated by commas, e.g. 1,2,3",
    ),
    (
        ["tournaments", "start", "cactus", "--bots", "1,2", "--seats", "1"],
        "--seats must be at least 2, not 1",
    ),
    (
        ["tournaments", "start", "cactus", "--bots", "1,2", "--pass-rule", "score:1.5"],
        "--pass-rule 'score:1.5': min_score must be from 0 to 1 (give score:0.8, "
        "consecutive:8/10, stop_rule, or the JSON object)",
    ),
    (
        ["tournaments", "start", "cactus", "--bots", "1,2", "--pass-rule", "top:3"],
        "--pass-rule 'top:3' is not a pass rule (give score:0.8, consecutive:8/10, "
        "stop_rule, or the JSON object)",
    ),
    (  # the braces doubled for str.format
        ["tournaments", "start", "cactus", "--bots", "1,2", "--sprt", "{{elo1: 20}}"],
        "--sprt '{{elo1: 20}}' is not JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)",
    ),
    (
        ["tournaments", "start", "cactus", "--bots", "1,2", "--matches-per-bot", "ten"],
        "--matches-per-bot 'ten': give a whole number",
    ),
    (
        ["tournaments", "start", "cactus", "--bots", "1,2", "--time-bank-ms", "-1"],
        "--time-bank-ms must be at least 0, not -1",
    ),
    (
        ["bots", "list", "--server", "localhost:8000"],
        "'localhost:8000' is not an arena's address: give http://host:port "
        "(--server or $ARENA_SERVER)",
    ),
    (["bots", "list", "--timeout", "0"], "--timeout must be more than 0 seconds, not 0"),
    (
        ["matches", "replay", "7", "-o", "{dir}/no/such/m.json"],
        "{dir}/no/such/m.json: cannot be written (no folder {dir}/no/such)",
    ),
]


@pytest.mark.parametrize(("argv", "message"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_a_mistake_is_one_line_and_exit_status_2(capsys, monkeypatch, tmp_path, argv, message):
    """The mistakes of issue 14, and every command's bad arguments: one line on stderr,
    nothing on stdout, exit status 2, and nothing created (no database, no folder)."""
    monkeypatch.chdir(tmp_path)
    for name in ("ARENA_DATA_DIR", "ARENA_DATABASE_URL", "ARENA_SERVER", "TMPDIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where a demo would make its folder
    (tmp_path / "text.json").write_text("not json")
    (tmp_path / "other.json").write_text('{"players": []}')
    (tmp_path / "broken.json").write_text('{"matches": [{"game": "cactus", "steps": []}]}')
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, *[a.format(dir=tmp_path) for a in argv])
    assert (code, out) == (2, "")
    assert err == f"arena: {message.format(dir=tmp_path)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_bad_database_url_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ARENA_DATABASE_URL", "not a url")
    code, out, err = run(capsys, "db", "upgrade")
    assert (code, out) == (2, "")
    assert err == (
        "arena: ARENA_DATABASE_URL is not a database URL (e.g. "
        "postgresql+psycopg://arena@db/arena, or unset for SQLite in the data dir)\n"
    )


def test_ratings_rebuild_in_a_data_folder_still_works(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path))
    assert run(capsys, "db", "upgrade")[0] == 0
    code, out, err = run(capsys, "ratings", "rebuild", "--game", "cactus")
    assert (code, err) == (0, "")
    assert out == "cactus: 0 rated matches replayed; Elo equal to what is stored\n"


def test_options_syntax():
    assert parse_options('revolution,rounds=3,values={"K": -1, "A": 2},name=x') == {
        "revolution": True,
        "rounds": 3,
        "values": {"K": -1, "A": 2},
        "name": "x",
    }


def test_arena_serve_logs_requests_but_not_the_connected_bots_polls(caplog):
    """A connected bot polls once or more per decision: its successful polls stay out of
    ``arena serve``'s access log, every other request (and a refused poll) is in it."""
    import threading
    import urllib.error
    import urllib.request

    from arena.cli.processes import make_web_server

    def app(environ, start_response):  # type: ignore[no-untyped-def]
        refused = environ.get("QUERY_STRING") == "refuse"
        start_response("401 UNAUTHORIZED" if refused else "200 OK", [("Content-Length", "2")])
        return [b"{}"]

    server = make_web_server("127.0.0.1", 0, app)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        with caplog.at_level("INFO", logger="werkzeug"):
            for path in ("/api/connect/poll", "/api/bots", "/api/connect/poll?refuse"):
                request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", b"{}")
                try:
                    urllib.request.urlopen(request, timeout=10).close()
                except urllib.error.HTTPError as refused:
                    refused.close()
    finally:
        server.shutdown()
        server.server_close()
    logged = [r.getMessage() for r in caplog.records if r.name == "werkzeug"]
    assert len(logged) == 2
    assert "POST /api/bots HTTP/1.1" in logged[0] and " 200 " in logged[0]
    assert "POST /api/connect/poll?refuse HTTP/1.1" in logged[1] and " 401 " in logged[1]
