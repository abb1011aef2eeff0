"""Frames (``arena.match.frames``): the table at every step from one perspective, as the replay
viewer draws it; live matches (``arena.worker.live``) and their API; ``arena view``.

A seat's frames are that seat's own views (``Game.view``) and the events it received,
compared here with a re-simulation that does not go through ``arena.match.frames``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from arena import models
from arena.cli import main as arena_main
from arena.games import GAMES, get_game, make_policy
from arena.match.frames import (
    Frames,
    PerspectiveError,
    compact,
    expand,
    live_frames,
    parse_perspective,
    record_frames,
)
from arena.match.records import answers, seat_decisions, seat_events
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import LiveSteps, Match, MatchSeat, Tournament
from arena.worker import play
from arena.worker.live import LiveWriter, steps_so_far
from tests.support.api import error
from tests.support.web import add_bot


def a_record(game: str, seed: int = 3, players: int | None = None) -> dict[str, Any]:
    n = players or GAMES[game].min_players + 1
    clients = [PolicyClient(make_policy(game, "random", policy_rng(seed, s))) for s in range(n)]
    return Referee().run(game, clients, seed).to_json()


# -- frames of a finished match --------------------------------------------------------------
@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_seat_frames_are_its_own_views_and_events(game_id: str) -> None:
    record = a_record(game_id)
    game = get_game(game_id)
    for seat in range(len(record["players"])):
        frames = record_frames(record, seat)
        assert frames is not None and len(frames) == len(record["steps"]) + 1
        state = game.new_state(len(record["players"]), record["seed"], record["options"])
        for i, frame in enumerate(frames):
            assert frame["step"] == i
            view = game.view(state, seat)
            del view["events"]
            assert frame["view"] == json.loads(json.dumps(view))
            if i < len(record["steps"]):
                game.apply(state, answers(record["steps"][i]))
        assert [e for f in frames for e in f["events"]] == seat_events(record, seat)
        own = [d for f in frames for d in f["decisions"]]
        assert [{k: d[k] for k in ("seat", "action")} for d in own] == [
            {k: d[k] for k in ("seat", "action")} for d in seat_decisions(record, seat)
        ]
        assert "outcome" in frames[-1] and "outcome" not in frames[-2]


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_everyone_sees_every_card_and_the_public_none(game_id: str) -> None:
    record = a_record(game_id)
    everything = record_frames(record, "all")
    public = record_frames(record, "public")
    assert everything is not None and public is not None
    assert [e for f in everything for e in f["events"]] == record["events"]
    assert [e for f in public for e in f["events"]] == [
        e for e in record["events"] if e["to"] == "public"
    ]
    for frame in public:  # who answered, how fast and any fault; never the answer
        for decision in frame["decisions"]:
            assert set(decision) <= {"seat", "kind", "latency_ms", "fault", "reason"}
    game = get_game(game_id)
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    middle = len(record["steps"]) // 2
    for step in record["steps"][:middle]:
        game.apply(state, answers(step))
    shown = everything[middle]["view"]
    truth = sorted(map(str, _hands(game_id, state, shown)))
    assert truth and all(card != "None" for card in truth)  # every card face up


def _hands(game_id: str, state: Any, view: dict[str, Any]) -> list[Any]:
    if game_id == "cactus":
        assert [[c["card"] for c in row] for row in view["layouts"]] == [
            [state.names[card] for card in layout.values()] for layout in state.layouts
        ]
        return [c["card"] for row in view["layouts"] for c in row]
    assert view["hands"] is not None
    return [card for hand in view["hands"] for card in hand]


def test_a_record_that_does_not_replay_has_no_frames() -> None:
    record = a_record("cactus", seed=1)
    assert record_frames(record, "all") is not None
    assert record_frames({**record, "seed": 2}, "all") is None
    assert record_frames({**record, "game": "chess"}, "all") is None
    fly = [[{"seat": 0, "kind": "turn", "action": {"type": "fly"}}]]
    assert record_frames({**record, "steps": fly}, 0) is None


def test_compact_frames_expand_to_the_same_frames() -> None:
    frames = record_frames(a_record("president"), "all")
    assert frames is not None
    slim = compact(frames)
    assert "view" in slim[0] and all("view" not in f for f in slim[1:])
    assert expand(slim) == frames
    # a handful of keys change from one step to the next, not the whole view
    assert sum(len(f["changes"]) for f in slim[1:]) < len(frames[0]["view"]) * len(frames) / 3


def test_live_frames_continue_where_a_viewer_stopped() -> None:
    record = a_record("cactus-game")
    everything = record_frames(record, "public")
    assert everything is not None
    so_far = record["steps"][:20]
    args = (record["game"], len(record["players"]), record["seed"], record["options"])
    assert expand(compact(live_frames(*args, so_far, "public"))) == everything[:21]
    rest = live_frames(*args, so_far, "public", since=12)
    assert [f["step"] for f in rest] == list(range(12, 21))
    assert rest == everything[12:21]
    assert live_frames(*args, so_far, "public", since=21) == []
    frames = Frames(*args, 0)
    assert frames.first()["step"] == 0


def test_a_perspective_is_all_public_or_a_seat_of_the_match() -> None:
    assert parse_perspective("all", 3) == "all"
    assert parse_perspective("public", 3) == "public"
    assert parse_perspective("2", 3) == 2
    with pytest.raises(PerspectiveError, match=r"seat 3 is out of range: .* seats 0 to 2"):
        parse_perspective("3", 3)
    with pytest.raises(PerspectiveError, match="all, public or a seat number, not 'me'"):
        parse_perspective("me", 3)


# -- the frames API --------------------------------------------------------------------------
def frames_of(client: FlaskClient, match_id: int, perspective: str = "all", since: int = 0) -> Any:
    return client.get(f"/api/matches/{match_id}/frames?perspective={perspective}&since={since}")


def store_finished(app: Flask, game: str = "cactus") -> int:
    from tests.support.web import play_match

    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, f"{game}-{i}", [game]) for i in range(2)]
        return play_match(session, game, bots, 9).id


def running_match(app: Flask, live_view: str | None = None, attempts: int = 1) -> int:
    """A match being played (no worker: the test writes its steps)."""
    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, f"live-{i}-{live_view}-{attempts}", ["cactus"]) for i in range(2)]
        tournament = None
        if live_view is not None:
            tournament = Tournament(
                name="cup",
                game="cactus",
                options={},
                seats_per_match=2,
                seed=1,
                games_per_pairing=1,
                status="running",
                live_view=live_view,
            )
            session.add(tournament)
        match = Match(
            tournament=tournament,
            kind="tournament" if tournament else "ladder",
            game="cactus",
            options={},
            seed=21,
            status="running",
            attempts=attempts,
            rated=False,
        )
        match.seats = [MatchSeat(seat=s, bot_id=b.id) for s, b in enumerate(bots)]
        session.add(match)
        session.flush()
        return match.id


def test_a_finished_match_has_every_perspective(app: Flask, client: FlaskClient) -> None:
    match_id = store_finished(app)
    response = frames_of(client, match_id, "1")
    assert response.status_code == 200
    body = response.get_json()
    assert body["complete"] and body["status"] == "finished" and body["perspective"] == 1
    assert body["perspectives"] == ["all", "public", 0, 1]
    assert body["frames"][0]["step"] == 0 and "view" in body["frames"][0]
    assert all("changes" in f for f in body["frames"][1:])
    # a second ask is served from the kept, compressed answer: the same bytes
    again = client.get(
        f"/api/matches/{match_id}/frames?perspective=1", headers={"Accept-Encoding": "gzip"}
    )
    assert again.headers["Content-Encoding"] == "gzip"
    assert orjson.loads(gzip.decompress(again.data)) == body
    later = frames_of(client, match_id, "1", since=5).get_json()
    assert [f["step"] for f in later["frames"]][:2] == [5, 6] and "view" in later["frames"][0]
    error(frames_of(client, match_id, "2"), 400, "seat 2 is out of range")
    error(frames_of(client, match_id, "everyone"), 400, "all, public or a seat number")
    error(frames_of(client, 999), 404)


def test_a_live_match_shows_the_public_table_only(app: Flask, client: FlaskClient) -> None:
    match_id = running_match(app)
    database = app.extensions["arena.db"]
    before = frames_of(client, match_id, "public").get_json()
    assert before["frames"] == [] or before["frames"][0]["step"] == 0
    assert not before["complete"] and before["perspectives"] == ["public"]
    record = a_record("cactus", seed=21, players=2)
    writer = LiveWriter(database, interval=3600)  # written when the test says
    feed = writer.feed(match_id, attempt=1)
    for step in record["steps"][:30]:
        feed(step)
    writer.flush()
    writer.close()
    body = frames_of(client, match_id, "public").get_json()
    assert [f["step"] for f in body["frames"]] == list(range(31))
    assert expand(body["frames"]) == (record_frames(record, "public") or [])[:31]
    error(frames_of(client, match_id, "0"), 403, "only the public table is shown until it ends")
    error(frames_of(client, match_id, "all"), 403, "being played")
    # the seed would give the deal: hidden while the match is played
    assert client.get(f"/api/matches/{match_id}").get_json()["seed"] is None
    # a new attempt starts again from its seed: the old attempt's steps are dropped
    with database.session() as session:
        match = session.get(Match, match_id)
        match.status, match.lease_expires_at = "queued", None
        play.claim(session, match, "other", models.utcnow(), models.utcnow())
        assert match.attempts == 2
    assert frames_of(client, match_id, "public").get_json()["frames"][1:] == []


def test_an_organiser_may_open_every_perspective_live(app: Flask, client: FlaskClient) -> None:
    match_id = running_match(app, live_view="everyone")
    record = a_record("cactus", seed=21, players=2)
    writer = LiveWriter(app.extensions["arena.db"], interval=3600)
    feed = writer.feed(match_id, attempt=1)
    for step in record["steps"][:10]:
        feed(step)
    writer.flush()
    writer.close()
    body = frames_of(client, match_id, "0").get_json()
    assert body["perspectives"] == ["all", "public", 0, 1]
    assert expand(body["frames"]) == (record_frames(record, 0) or [])[:11]


def test_live_steps_are_written_together_and_dropped_with_the_result(app: Flask) -> None:
    database = app.extensions["arena.db"]
    first, second = running_match(app), running_match(app, attempts=2)
    writer = LiveWriter(database, interval=3600)  # written when the test says
    feeds = {first: writer.feed(first, 1), second: writer.feed(second, 2)}
    records = {}
    for match_id, feed in feeds.items():
        clients = [
            PolicyClient(make_policy("cactus", "random", policy_rng(21, s))) for s in range(2)
        ]
        records[match_id] = Referee().run("cactus", clients, 21, {}, str(match_id), on_step=feed)
    with database.session() as session:
        assert steps_so_far(session, first, 1) == []  # nothing written before the flush
    writer.flush()  # both matches' steps in one transaction
    with database.session() as session:
        assert steps_so_far(session, first, 1) == records[first].steps
        assert steps_so_far(session, second, 2) == records[second].steps
        assert steps_so_far(session, second, 1) == []
    feeds[first](records[first].steps[0])  # another chunk follows the first
    writer.flush()
    with database.session() as session:
        assert steps_so_far(session, first, 1) == [*records[first].steps, records[first].steps[0]]
    assert play.save_result(database, first, records[first])
    feeds[first](records[first].steps[0])  # late: the match is recorded, nothing is written
    writer.flush()
    writer.close()
    with database.session() as session:
        assert session.scalars(select(LiveSteps).where(LiveSteps.match_id == first)).all() == []
        assert steps_so_far(session, second, 2) == records[second].steps


def test_a_tournament_says_who_may_watch_its_matches(
    client: FlaskClient, info_bot: Any, enqueued: list[int]
) -> None:
    from tests.support.api import register_many, tournament_body

    ids = register_many(client, info_bot(), 2)
    created = client.post("/api/tournaments", json=tournament_body(ids, live_view="everyone"))
    assert created.status_code == 201 and created.get_json()["live_view"] == "everyone"
    default = client.post("/api/tournaments", json=tournament_body(ids)).get_json()
    assert default["live_view"] == "public"
    error(client.post("/api/tournaments", json=tournament_body(ids, live_view="all")), 422)


# -- arena view ------------------------------------------------------------------------------
@pytest.fixture
def replay_file(tmp_path: Path) -> Path:
    path = tmp_path / "games.json"
    code = arena_main(
        ["play", "cactus", "--bots", "heuristic,random", "--matches", "2", "--replay", str(path)]
    )
    assert code == 0
    return path


def test_arena_view_writes_a_page_next_to_the_replay(
    replay_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert arena_main(["view", str(replay_file), "--match", "2", "--seat", "0", "--html"]) == 0
    written = replay_file.with_name("games-match2-seat0.html")
    assert capsys.readouterr().out == f"replay page written to {written}\n"
    text = written.read_text()
    assert "<script>" in text and "replay-data" in text and "src=" not in text  # on its own
    data = json.loads(text.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
    record = json.loads(replay_file.read_text())["matches"][1]
    assert list(data["perspectives"]) == ["0"]
    assert expand(data["perspectives"]["0"]["frames"]) == record_frames(record, 0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["view", "{dir}/missing.json"], "arena: {dir}/missing.json: no such file"),
        (
            ["view", "{dir}/text.json"],
            "arena: {dir}/text.json: not JSON (Expecting value at line 1)",
        ),
        (
            ["view", "{dir}/other.json"],
            "arena: {dir}/other.json: not a replay file (arena play --replay writes one: an "
            'object with "matches")',
        ),
        (["view", "{dir}/empty.json"], "arena: {dir}/empty.json: holds no match"),
        (
            ["view", "{dir}/games.json", "--match", "3"],
            "arena: --match 3: {dir}/games.json holds matches 1 to 2",
        ),
        (
            ["view", "{dir}/games.json", "--match", "0"],
            "arena: --match 0: {dir}/games.json holds matches 1 to 2",
        ),
        (["view", "{dir}/games.json", "--seat", "2"], "arena: --seat 2: match 1 has seats 0 to 1"),
    ],
)
def test_arena_view_mistakes_get_one_line(
    replay_file: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    folder = replay_file.parent
    (folder / "text.json").write_text("not json")
    (folder / "other.json").write_text('{"players": []}')
    (folder / "empty.json").write_text('{"matches": []}')
    capsys.readouterr()
    assert arena_main([a.format(dir=folder) for a in argv]) == 2
    assert capsys.readouterr().err == message.format(dir=folder) + "\n"


def test_arena_view_without_a_display_says_where_the_page_is(
    replay_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr(webbrowser, "open", lambda url: pytest.fail("no browser to open"))
    capsys.readouterr()
    assert arena_main(["view", str(replay_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("replay page written to ") and out.endswith(": open it in a browser\n")
    page = Path(out.removeprefix("replay page written to ").split(": open it")[0])
    assert page.exists() and 'id="replay-data"' in page.read_text()
    page.unlink()


def test_a_match_ending_while_its_steps_are_written_costs_the_other_matches_nothing(
    app: Flask, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A match forgotten between the writer taking its steps and writing them (it ended
    here; its result is not committed yet, so its row still says running) used to be
    written again from its first step: the write failed on the key already there, and so
    did every later write of the process, for every match, until that result committed."""
    database = app.extensions["arena.db"]
    ending, going_on = running_match(app), running_match(app, attempts=2)
    record = a_record("cactus", seed=21, players=2)
    writer = LiveWriter(database, interval=3600)  # written when the test says
    ending_feed, going_on_feed = writer.feed(ending, 1), writer.feed(going_on, 2)
    for feed in (ending_feed, going_on_feed):
        feed(record["steps"][0])
    writer.flush()
    for feed in (ending_feed, going_on_feed):
        feed(record["steps"][1])
    opened = database.session

    @contextlib.contextmanager
    def the_match_ends_meanwhile() -> Iterator[Any]:
        ending_feed.close()  # the referee is done with it: the writer forgets it
        with opened() as session:
            yield session

    monkeypatch.setattr(database, "session", the_match_ends_meanwhile)
    with caplog.at_level(logging.WARNING, logger="arena.worker.live"):
        writer.flush()
        monkeypatch.setattr(database, "session", opened)
        going_on_feed(record["steps"][2])
        writer.flush()
    writer.close()
    assert [r.getMessage() for r in caplog.records] == []  # no write failed
    with database.session() as session:
        assert steps_so_far(session, going_on, 2) == record["steps"][:3]
        assert steps_so_far(session, ending, 1) == record["steps"][:1]
