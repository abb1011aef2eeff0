"""A bot that gives no usable answer forfeits: its faults are kept with their cause and
shown to its owner, and after several forfeits in a row the ladder pauses it until its
owner turns it on again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from arenabot import make_server
from sqlalchemy import select

from arena.match.faults import silenced
from arena.match.pools import Pools
from arena.models import Bot, Ladder, Match, MatchSeat, RatingChange
from arena.worker import ladder
from arena.worker import play as play_module
from sample_bots.policy_bot import PolicyBot


@pytest.fixture
def arena(make_app, monkeypatch) -> Iterator[dict]:
    """An app pausing after two forfeits, two registered SDK bots on loopback: ``good``
    runs with the secret the arena gave it, ``wrong`` with a secret of its own."""
    app = make_app(pause_after_forfeits=2)
    pools = Pools()
    monkeypatch.setattr(play_module, "_pools", lambda: pools)
    client = app.test_client()
    with ExitStack() as stack:
        bots = {}
        for name in ("good", "wrong"):
            server = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=None)
            server.serve_in_background()
            stack.callback(server.close)
            answer = client.post(
                "/api/bots",
                json={"name": name, "endpoint": server.url, "owner": "tests"},
            )
            assert answer.status_code == 201, answer.get_json()
            body = answer.get_json()
            server.secret = body["signing_secret"] if name == "good" else "not-what-it-was-given"
            bots[name] = {"id": body["id"], "token": body["owner_token"]}
        yield {"app": app, "client": client, "bots": bots}
    pools.close()


def play(arena: dict, seed: int) -> int:
    """A rated ladder match between the two bots, played as a worker plays it."""
    app = arena["app"]
    database = app.extensions["arena.db"]
    with database.session() as session:
        match = Match(kind="ladder", game="cactus", seed=seed, rated=True)
        match.seats = [
            MatchSeat(seat=0, bot_id=arena["bots"]["wrong"]["id"]),
            MatchSeat(seat=1, bot_id=arena["bots"]["good"]["id"]),
        ]
        session.add(match)
        session.flush()
        match_id = match.id
    assert play_module.play_match(database, app.extensions["arena.config"], match_id) == "recorded"
    return match_id


def test_a_bot_refused_for_its_secret_forfeits_with_the_cause_and_is_paused(arena):
    client, wrong, good = arena["client"], arena["bots"]["wrong"], arena["bots"]["good"]
    first = play(arena, seed=1)

    match = client.get(f"/api/matches/{first}").get_json()
    seats = {s["bot_id"]: s for s in match["seats"]}
    assert seats[wrong["id"]]["forfeited"] and not seats[good["id"]]["forfeited"]
    assert seats[wrong["id"]]["rank"] == 2 and seats[good["id"]]["faults"] is None
    faults = seats[wrong["id"]]["faults"]
    assert faults["kinds"] == {"http_status": faults["count"]}
    assert faults["first"]["status"] == 401 and "wrong signature" in faults["first"]["excerpt"]
    assert client.get(f"/api/bots/{wrong['id']}").get_json()["status"] == "active"

    second = play(arena, seed=2)
    bot = client.get(f"/api/bots/{wrong['id']}").get_json()
    assert bot["status"] == "paused" and bot["forfeit_streak"] == 2
    assert "2 forfeits in a row" in bot["paused_reason"] and "HTTP 401" in bot["paused_reason"]
    assert [f["match_id"] for f in bot["recent_faults"]] == [second, first]
    assert all(f["forfeited"] and f["first"]["status"] == 401 for f in bot["recent_faults"])
    assert client.get(f"/api/bots/{good['id']}").get_json()["status"] == "active"

    # the pages say it too
    page = client.get(f"/bots/{wrong['id']}").get_data(as_text=True)
    assert "Paused by the arena" in page and "HTTP 401" in page and "wrong signature" in page
    page = client.get(f"/matches/{first}").get_data(as_text=True)
    assert "forfeit" in page and "wrong signature" in page

    # forfeits are rated like any last place (a bot must not dodge opponents by silence)
    database = arena["app"].extensions["arena.db"]
    with database.session() as session:
        changes = session.scalars(
            select(RatingChange).where(RatingChange.bot_id == wrong["id"])
        ).all()
        assert len(changes) == 2 and all(c.after < c.before for c in changes)
        # the ladder no longer seats a paused bot
        session.add(Ladder(game="cactus", enabled=True, seats_per_match=2))
    config = arena["app"].extensions["arena.config"]
    assert ladder.schedule_ladder(database, config, seed=5) == []

    # its owner fixes the secret and turns it on again: the count starts over
    answer = client.patch(
        f"/api/bots/{wrong['id']}",
        json={"status": "active"},
        headers={"Authorization": f"Bearer {wrong['token']}"},
    )
    assert answer.status_code == 200, answer.get_json()
    bot = client.get(f"/api/bots/{wrong['id']}").get_json()
    assert bot["status"] == "active" and bot["paused_reason"] is None
    assert bot["forfeit_streak"] == 0
    with database.session() as session:
        assert session.get(Bot, wrong["id"]).status == "active"
    assert len(ladder.schedule_ladder(database, config, seed=5)) == 1


def test_bots_silent_all_at_once_are_not_charged_until_it_happens_three_times(
    make_app, monkeypatch
):
    """Every bot of a match going silent at once (no byte of an answer from any of them
    until the end) is, far more often, the worker cut off from them: the attempt is not
    recorded but played again later, and no bot is charged; only a third such attempt
    is recorded, with its forfeits (the bots really are away)."""
    app = make_app()
    pools = Pools()
    monkeypatch.setattr(play_module, "_pools", lambda: pools)
    client, database, config = (
        app.test_client(),
        app.extensions["arena.db"],
        app.extensions["arena.config"],
    )
    ids = []
    for name in ("left", "right"):
        server = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=None)
        server.serve_in_background()
        answer = client.post(
            "/api/bots", json={"name": name, "endpoint": server.url, "owner": "tests"}
        )
        assert answer.status_code == 201, answer.get_json()
        ids.append(answer.get_json()["id"])
        server.close()  # gone before the match: every request is refused
    with database.session() as session:
        match = Match(kind="ladder", game="cactus", seed=3, rated=True)
        match.seats = [MatchSeat(seat=k, bot_id=b) for k, b in enumerate(ids)]
        session.add(match)
        session.flush()
        match_id = match.id
    try:
        for attempt in (1, 2):
            played = play_module.play_match(database, config, match_id)
            assert played.startswith("played again")
            with database.session() as session:
                match = session.get(Match, match_id)
                assert (match.status, match.failures) == ("queued", attempt)
                assert session.scalars(select(RatingChange)).all() == []
                assert {b.forfeit_streak for b in session.scalars(select(Bot))} == {0}
        assert play_module.play_match(database, config, match_id) == "recorded"
        with database.session() as session:
            seats = session.scalars(select(MatchSeat).where(MatchSeat.match_id == match_id))
            assert all(seat.forfeited for seat in seats)
    finally:
        pools.close()


def step(*decisions: tuple[int, str | None]) -> list[dict]:
    return [{"seat": seat, **({"fault": kind} if kind else {})} for seat, kind in decisions]


@pytest.mark.parametrize(
    ("steps", "silent"),
    [
        # both seats refused from some point to the end: the arena's silence
        ([step((0, None)), step((1, "timeout")), step((0, "connection_refused"))], True),
        # a seat struck out earlier is not asked: one silent seat is not a silence
        ([step((0, "timeout")), step((1, "struck_out")), step((0, "timeout"))], False),
        ([step((0, "timeout")), step((1, "connection_error")), step((0, "struck_out"))], True),
        # one bot away, the other answering after: that bot's own fault
        ([step((0, "timeout")), step((1, "timeout")), step((0, None))], False),
        # an answer that is wrong is still an answer
        ([step((0, "timeout")), step((1, "illegal_action")), step((0, "timeout"))], False),
        ([step((0, "timeout")), step((0, "timeout"))], False),  # one seat only
        ([], False),
    ],
)
def test_a_silence_is_every_asked_seat_unheard_to_the_end(steps, silent) -> None:
    assert silenced({"steps": steps}) is silent
