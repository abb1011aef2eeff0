"""Scrimmages as a contestant uses them: ask for unrated matches of one's own bot against
the house bots or bots that accept challenges, see them played as a worker plays them
(and kept out of ratings and out of the forfeit count that pauses a bot), and every
request the arena must refuse refused with a message: someone else's bot, an opponent
that does not accept challenges or plays in another event, past the hourly allowance,
and bad input.  The bot page offers the same through its Challenge form."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from arenabot import make_server
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from arena.match.pools import Pools
from arena.models import Bot, Match
from arena.services import accounts
from arena.worker import play as play_module
from sample_bots.policy_bot import PolicyBot
from tests.support.api import auth, error

ADMIN = "the-organiser-token"
PASSWORD = "a long enough password"


@pytest.fixture(autouse=True)
def _cheap_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        accounts, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


@pytest.fixture(autouse=True)
def _pools(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The matches played here connect through pools of the test's own, closed after it."""
    pools = Pools()
    monkeypatch.setattr(play_module, "_pools", lambda: pools)
    yield
    pools.close()


def _register(client: FlaskClient, endpoint: str, name: str, **fields: Any) -> dict[str, Any]:
    body = {"name": name, "endpoint": endpoint, "owner": "tests", "event_id": None, **fields}
    made = client.post("/api/bots", json=body)
    assert made.status_code == 201, made.get_json()
    return made.get_json()


def _ask(client: FlaskClient, token: str | None, **body: Any) -> Any:
    return client.post("/api/scrimmages", json=body, headers=auth(token) if token else {})


@pytest.fixture
def player(client: FlaskClient) -> Iterator[dict[str, Any]]:
    """A real bot (the random policy, over HTTP on loopback), registered in the open arena."""
    server = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=None)
    server.serve_in_background()
    try:
        bot = _register(client, server.url, "sparring", games=["cactus"])
        server.secret = bot["signing_secret"]
        yield bot
    finally:
        server.close()


def test_an_owner_plays_unrated_scrimmages_against_a_house_bot(
    app: Flask, client: FlaskClient, player: dict[str, Any], enqueued: list[int]
) -> None:
    answer = _ask(
        client, player["owner_token"], bot_id=player["id"], opponents=["heuristic"], matches=4
    )

    assert answer.status_code == 201, answer.get_json()
    ids = answer.get_json()["match_ids"]
    assert len(ids) == 4 and answer.get_json()["game"] == "cactus"
    assert set(ids) <= set(enqueued)  # sent to the workers after the commit
    matches = [client.get(f"/api/matches/{i}").get_json() for i in ids]
    for match in matches:
        assert (match["kind"], match["rated"], match["status"]) == ("scrimmage", False, "queued")
        assert match["tournament_id"] is None and match["seed"] is None  # no deal shown yet
        assert {s["bot_name"] for s in match["seats"]} == {"sparring", "house heuristic"}
    # the seats rotate: the bot does not always sit first
    seat_of_bot = [
        next(s["seat"] for s in m["seats"] if s["bot_id"] == player["id"]) for m in matches
    ]
    assert seat_of_bot == [0, 1, 0, 1]

    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    for match_id in ids:
        assert play_module.play_match(database, config, match_id) == "recorded"
    played = [client.get(f"/api/matches/{i}").get_json() for i in ids]
    assert all(m["status"] == "finished" and m["seed"] is not None for m in played)
    assert len({m["seed"] for m in played}) == 4  # a fresh deal each
    # on the bot's list of matches, in no rating
    listed = client.get(f"/api/matches?bot_id={player['id']}&page_size=50").get_json()
    assert set(ids) <= {m["id"] for m in listed}
    assert client.get(f"/api/bots/{player['id']}").get_json()["ratings"] == []
    page = client.get(f"/bots/{player['id']}").get_data(as_text=True)
    assert all(f"/matches/{i}" in page for i in ids)


def test_forfeited_scrimmages_never_pause_a_bot(
    make_app: Callable[..., Flask], info_bot: Callable[..., str], enqueued: list[int]
) -> None:
    app = make_app(pause_after_forfeits=2)
    client = app.test_client()
    mute = _register(client, info_bot(games=["cactus"]), "mute")  # answers GET / only
    answer = _ask(client, mute["owner_token"], bot_id=mute["id"], opponents=["random"], matches=3)
    assert answer.status_code == 201, answer.get_json()
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    for match_id in answer.get_json()["match_ids"]:
        assert play_module.play_match(database, config, match_id) == "recorded"
    seats = [
        next(
            s
            for s in client.get(f"/api/matches/{i}").get_json()["seats"]
            if s["bot_id"] == mute["id"]
        )
        for i in answer.get_json()["match_ids"]
    ]
    assert all(s["forfeited"] for s in seats)  # three forfeits in a row, past the limit of 2
    shown = client.get(f"/api/bots/{mute['id']}").get_json()
    assert (shown["status"], shown["forfeit_streak"]) == ("active", 0)


def test_only_the_owner_asks(client: FlaskClient, info_bot: Callable[..., str]) -> None:
    mine = _register(client, info_bot(games=["cactus"]), "mine")
    theirs = _register(client, info_bot(games=["cactus"]), "theirs")
    body = {"bot_id": mine["id"], "opponents": ["heuristic"]}
    error(_ask(client, theirs["owner_token"], **body), 403, f"only the owner of bot {mine['id']}")
    error(_ask(client, None, **body), 401)
    assert _ask(client, mine["owner_token"], **body).status_code == 201


def test_an_opponent_must_accept_challenges(
    client: FlaskClient, info_bot: Callable[..., str]
) -> None:
    mine = _register(client, info_bot(games=["cactus"]), "challenger")
    theirs = _register(client, info_bot(games=["cactus"]), "champion")
    body = {"bot_id": mine["id"], "opponents": [theirs["id"]], "matches": 2}
    error(_ask(client, mine["owner_token"], **body), 403, "does not accept challenges")

    switched = client.patch(
        f"/api/bots/{theirs['id']}",
        json={"accepts_challenges": True},
        headers=auth(theirs["owner_token"]),
    )
    assert switched.status_code == 200 and switched.get_json()["accepts_challenges"] is True
    made = _ask(client, mine["owner_token"], **body)
    assert made.status_code == 201, made.get_json()
    seated = client.get(f"/api/matches/{made.get_json()['match_ids'][0]}").get_json()["seats"]
    assert {s["bot_id"] for s in seated} == {mine["id"], theirs["id"]}
    # its owner switches it off again; someone else may not switch it
    error(
        client.patch(
            f"/api/bots/{theirs['id']}",
            json={"accepts_challenges": False},
            headers=auth(mine["owner_token"]),
        ),
        403,
    )


def test_bots_of_another_event_are_refused(
    make_app: Callable[..., Flask], info_bot: Callable[..., str]
) -> None:
    app = make_app(organiser_token=ADMIN)
    client = app.test_client()
    organiser = client.post(
        "/api/accounts",
        json={"name": "olga", "password": PASSWORD, "role": "organiser"},
        headers=auth(ADMIN),
    ).get_json()["token"]
    event = client.post(
        "/api/events", json={"name": "class", "games": ["cactus"]}, headers=auth(organiser)
    ).get_json()
    member = client.post(
        "/api/accounts",
        json={"name": "carla", "password": PASSWORD, "join_code": event["join_code"]},
    ).get_json()["token"]
    inside = client.post(
        "/api/bots",
        json={"name": "in-class", "endpoint": info_bot(games=["cactus"]), "event_id": event["id"]},
        headers=auth(member),
    )
    assert inside.status_code == 201, inside.get_json()
    inside = inside.get_json()
    client.patch(
        f"/api/bots/{inside['id']}", json={"accepts_challenges": True}, headers=auth(member)
    )
    outside = client.post(
        "/api/bots",
        json={
            "name": "open-bot",
            "endpoint": info_bot(games=["cactus"]),
            "owner": "o",
            "event_id": None,
        },
        headers=auth(ADMIN),
    ).get_json()
    client.patch(
        f"/api/bots/{outside['id']}", json={"accepts_challenges": True}, headers=auth(ADMIN)
    )

    error(
        _ask(client, member, bot_id=inside["id"], opponents=[outside["id"]]),
        403,
        f"plays in the open arena and bot {inside['id']} in event {event['id']}",
    )
    error(
        _ask(client, outside["owner_token"], bot_id=outside["id"], opponents=[inside["id"]]),
        403,
        f"plays in event {event['id']}",
    )
    # the house bots play everywhere: the member asks from the account that owns the bot
    assert _ask(client, member, bot_id=inside["id"], opponents=["random"]).status_code == 201


def test_past_the_hourly_allowance_is_a_429(
    make_app: Callable[..., Flask], info_bot: Callable[..., str]
) -> None:
    app = make_app(scrimmages_per_hour=5)
    client = app.test_client()
    bot = _register(client, info_bot(games=["cactus"]), "eager")
    rival = _register(client, info_bot(games=["cactus"]), "rival")
    client.patch(
        f"/api/bots/{rival['id']}",
        json={"accepts_challenges": True},
        headers=auth(rival["owner_token"]),
    )
    token = bot["owner_token"]

    assert (
        _ask(client, token, bot_id=bot["id"], opponents=["heuristic"], matches=3).status_code == 201
    )
    refused = _ask(client, token, bot_id=bot["id"], opponents=["heuristic"], matches=3)
    body = error(refused, 429, "has played 3 of its 5 scrimmage matches an hour", "2 left now")
    assert 0 < int(refused.headers["Retry-After"]) <= 3600 and body["retry_after"] > 0
    assert (
        _ask(client, token, bot_id=bot["id"], opponents=["heuristic"], matches=2).status_code == 201
    )
    error(_ask(client, token, bot_id=bot["id"], opponents=["random"]), 429, "5 of its 5")
    # a challenged bot's allowance counts the challenges it got: it is not flooded either
    assert (
        _ask(
            client, rival["owner_token"], bot_id=rival["id"], opponents=["random"], matches=5
        ).status_code
        == 201
    )
    third = _register(client, info_bot(games=["cactus"]), "third")
    error(
        _ask(client, third["owner_token"], bot_id=third["id"], opponents=[rival["id"]]),
        429,
        f"opponent {rival['id']}",
    )
    # more than an hour's allowance at once can never be granted: bad input, not "later"
    error(
        _ask(client, third["owner_token"], bot_id=third["id"], opponents=["random"], matches=6),
        422,
        "1 to 5",
    )


def test_bad_requests_are_422_with_a_message(
    app: Flask, client: FlaskClient, info_bot: Callable[..., str]
) -> None:
    both = _register(client, info_bot(games=["cactus", "president"]), "both-games")
    token, bot_id = both["owner_token"], both["id"]

    def refused(status: int, *fragments: str, **body: Any) -> None:
        error(
            _ask(client, token, **{"bot_id": bot_id, "opponents": ["heuristic"], **body}),
            status,
            *fragments,
        )

    refused(422, "No house policy 'grandmaster'", opponents=["grandmaster"])
    refused(422, "president is played by 3 to 8 players", game="president")  # one opponent
    refused(422, "cactus is played by 2 to 8 players", opponents=["random"] * 8)
    refused(422, "matches", matches=0)
    refused(422, "matches", matches=10**9)
    refused(422, "matches", matches=True)
    refused(422, "opponents", opponents=[])
    refused(422, "opponents", opponents=[0])
    refused(422, "no bot 999999", opponents=[999999])
    refused(422, "cannot be its own opponent", opponents=[bot_id])
    refused(422, "game", game="chess")
    # president with two house opponents is three players: fine
    made = _ask(client, token, bot_id=bot_id, opponents=["heuristic", "random"], game="president")
    assert made.status_code == 201, made.get_json()
    with app.extensions["arena.db"].session() as session:
        match = session.get(Match, made.get_json()["match_ids"][0])
        assert match.game == "president" and len(match.seats) == 3


def test_bots_that_cannot_play_are_refused(
    client: FlaskClient, info_bot: Callable[..., str]
) -> None:
    idle = _register(client, info_bot(games=["cactus"]), "idle")
    hosted = client.post(
        "/api/bots",
        json={
            "name": "codeless",
            "hosted": True,
            "games": ["cactus"],
            "owner": "t",
            "event_id": None,
        },
    ).get_json()
    error(
        _ask(client, hosted["owner_token"], bot_id=hosted["id"], opponents=["random"]),
        409,
        "no version of its code has passed its validation",
    )
    client.patch(
        f"/api/bots/{idle['id']}", json={"status": "disabled"}, headers=auth(idle["owner_token"])
    )
    error(
        _ask(client, idle["owner_token"], bot_id=idle["id"], opponents=["random"]), 409, "disabled"
    )


def test_the_bot_page_offers_a_challenge_form(
    client: FlaskClient, info_bot: Callable[..., str]
) -> None:
    mine = _register(client, info_bot(games=["cactus"]), "my-bot")
    other = _register(client, info_bot(games=["cactus"]), "other-bot")
    client.patch(
        f"/api/bots/{other['id']}",
        json={"accepts_challenges": True},
        headers=auth(other["owner_token"]),
    )

    page = client.get(f"/bots/{mine['id']}", headers=auth(mine["owner_token"])).get_data(
        as_text=True
    )
    assert 'id="challenge-form"' in page and "/api/scrimmages" in page
    assert f'name="bot_id" value="{mine["id"]}"' in page
    assert (
        'value="heuristic"' in page and f'<option value="{other["id"]}">other-bot</option>' in page
    )
    assert 'name="accepts_challenges"' in page  # its owner's switch
    assert "forms.js" in page
    # to anyone else: no form on a bot that does not accept challenges
    stranger = client.get(f"/bots/{mine['id']}").get_data(as_text=True)
    assert 'id="challenge-form"' not in stranger and 'name="accepts_challenges"' not in stranger
    # on a bot that accepts challenges, its reader challenges it with one of their bots
    theirs = client.get(f"/bots/{other['id']}", headers=auth(mine["owner_token"])).get_data(
        as_text=True
    )
    assert 'id="challenge-form"' in theirs and "Challenge with my bot" in theirs
    assert f'<option value="{mine["id"]}">my-bot</option>' in theirs
    assert f'name="opponents" value="{other["id"]}"' in theirs
    with client.application.extensions["arena.db"].session() as session:
        assert session.scalar(select(Bot.accepts_challenges).where(Bot.id == other["id"])) is True
