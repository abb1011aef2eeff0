"""People at an event's tables: an organiser starts an event's tournament with seats for
people (``people`` with ``event_id``), and each seat is the event's, as its bots are.  A
private event's seats are hidden with the rest of the event from those not in it (the
API's reads and lists, the roster, the open arena's leaderboard), while the person who
holds a seat's link still sits down with it, whoever they are: through the API here, and
against a real ``arena serve`` process at the end."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
import requests
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from arena.models import Match, Rating
from arena.relay.internal import SIGNATURE, TIMESTAMP, signature
from arena.services import accounts
from arena.worker import ladder
from tests.support.api import auth, error, tournament_body
from tests.test_connect_replays import serve

ADMIN = "the-organiser-token"
PASSWORD = "a long enough password"
# what a person's page sends when it opens its seat's session (static/play.js)
SEAT_INFO = {"apiversion": "1", "name": "", "author": "person", "version": "1",
             "games": ["cactus"], "capacity": 1, "sdk": "browser"}  # fmt: skip


@pytest.fixture(autouse=True)
def _cheap_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    # who sees what is the question, not what guessing a password costs
    monkeypatch.setattr(
        accounts, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


@dataclass
class Scene:
    app: Flask
    client: FlaskClient
    organiser: str  # the private event's organiser's API token
    member: str  # a contestant of the event
    stranger: str  # an account in no event
    event_id: int
    bot_id: int  # the member's bot, in the event

    def get(self, path: str, token: str | None = None) -> Any:
        return self.client.get(path, headers=auth(token) if token else {})


def _account(client: FlaskClient, name: str, **fields: Any) -> str:
    answer = client.post("/api/accounts", json={"name": name, "password": PASSWORD, **fields})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()["token"]


@pytest.fixture
def scene(make_app: Callable[..., Flask]) -> Scene:
    """A private event (cactus), its organiser, a member with a bot in it, a stranger."""
    app = make_app(organiser_token=ADMIN)
    client = app.test_client()
    made = client.post(
        "/api/accounts",
        json={"name": "olga", "password": PASSWORD, "role": "organiser"},
        headers=auth(ADMIN),
    )
    organiser = made.get_json()["token"]
    event = client.post(
        "/api/events",
        json={"name": "class", "games": ["cactus"], "visibility": "private"},
        headers=auth(organiser),
    ).get_json()
    member = _account(client, "carla", join_code=event["join_code"])
    bot = client.post(
        "/api/bots",
        json={"name": "c-bot", "connect": True, "games": ["cactus"], "event_id": event["id"]},
        headers=auth(member),
    )
    assert bot.status_code == 201, bot.get_json()
    stranger = _account(client, "sam")
    return Scene(app, client, organiser, member, stranger, event["id"], bot.get_json()["id"])


def _start(scene: Scene, **fields: Any) -> Any:
    body = tournament_body(
        [scene.bot_id], event_id=scene.event_id, people=["Ada Lovelace"], **fields
    )
    return scene.client.post("/api/tournaments", json=body, headers=auth(scene.organiser))


def test_an_event_tournament_seats_its_people_in_the_event(scene: Scene, enqueued) -> None:
    answer = _start(scene)

    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    assert body["event_id"] == scene.event_id
    [link] = body["seat_links"]
    seat = link["bot_id"]
    assert link["name"].startswith("Ada Lovelace")
    assert set(body["bot_ids"]) == {scene.bot_id, seat}
    read = scene.get(f"/api/bots/{seat}", scene.organiser).get_json()
    assert (read["kind"], read["event_id"]) == ("person", scene.event_id)
    matches = scene.get(f"/api/matches?tournament_id={body['id']}", scene.organiser).get_json()
    assert len(matches) == 2 and not any(m["rated"] for m in matches)  # unrated by default
    with scene.app.extensions["arena.db"].session() as session:
        assert {m.event_id for m in session.scalars(select(Match))} == {scene.event_id}
    assert sorted(enqueued) == sorted(m["id"] for m in matches)
    # events still never mix: a bot of the open arena does not sit beside the event's people
    other = scene.client.post(
        "/api/bots",
        json={"name": "open-bot", "connect": True, "games": ["cactus"], "event_id": None},
        headers=auth(scene.member),
    ).get_json()
    mixed = tournament_body([scene.bot_id, other["id"]], event_id=scene.event_id, people=["Bo"])
    refused = scene.client.post("/api/tournaments", json=mixed, headers=auth(scene.organiser))
    error(refused, 400, f"bot(s) {other['id']} do not play in event {scene.event_id}")


def test_a_private_events_person_seat_is_hidden_from_strangers(scene: Scene, enqueued) -> None:
    body = _start(scene).get_json()
    seat, tournament = body["seat_links"][0]["bot_id"], body["id"]
    for token in (None, scene.stranger):
        assert scene.get(f"/api/bots/{seat}", token).status_code == 404
        assert scene.get(f"/bots/{seat}", token).status_code == 404
        assert scene.get(f"/api/tournaments/{tournament}", token).status_code == 404
        listed = scene.get("/api/bots?kind=person", token).get_json()
        assert seat not in {b["id"] for b in listed}
        assert "Ada" not in scene.get("/tournaments", token).get_data(as_text=True)
    # the event's members see it with the event, never among the bots by default
    for token in (scene.member, scene.organiser):
        assert scene.get(f"/api/bots/{seat}", token).status_code == 200
        assert seat in {b["id"] for b in scene.get("/api/bots?kind=person", token).get_json()}
        assert seat not in {b["id"] for b in scene.get("/api/bots", token).get_json()}
    # a seat is no member's bot: not on the event's roster
    roster = scene.get(f"/api/events/{scene.event_id}/roster", scene.organiser).get_json()
    assert {row["bot_id"] for row in roster} == {scene.bot_id, None}


def test_a_private_events_seat_page_tells_a_stranger_nothing_of_the_event(
    scene: Scene, enqueued
) -> None:
    """Its key is in the link's fragment, which no server sees: the page serves whoever
    holds the link, and to someone not in the event it names neither the person nor the
    event's matches."""
    body = _start(scene).get_json()
    path = body["seat_links"][0]["url"].split("#")[0]
    listed = scene.get(f"/api/matches?tournament_id={body['id']}", scene.organiser).get_json()
    match_ids = [m["id"] for m in listed]
    member_page = scene.get(path, scene.member).get_data(as_text=True)
    assert "Ada Lovelace" in member_page
    assert all(f"/matches/{i}" in member_page for i in match_ids)
    for token in (None, scene.stranger):
        page = scene.get(path, token)
        assert page.status_code == 200  # the person may be in no event at all
        text = page.get_data(as_text=True)
        assert "Ada" not in text and "/matches/" not in text
        assert 'data-game="cactus"' in text  # what the page needs to draw the table


def test_a_rated_event_seat_is_on_its_events_board_not_the_open_arenas(
    scene: Scene, enqueued
) -> None:
    body = _start(scene, rated=True).get_json()
    seat = body["seat_links"][0]["bot_id"]
    matches = scene.get(f"/api/matches?tournament_id={body['id']}", scene.organiser).get_json()
    assert all(m["rated"] for m in matches)
    with scene.app.extensions["arena.db"].session() as session:
        # as its rated matches leave it once played (arena.competition.ratings)
        session.add(Rating(bot_id=seat, game="cactus", elo=1530.0, matches=2))
    for token in (None, scene.member, ADMIN):
        open_board = scene.get("/api/ratings/cactus", token).get_json()
        assert seat not in {row["bot_id"] for row in open_board}
        assert "Ada" not in scene.get("/leaderboard/cactus", token).get_data(as_text=True)
    board = scene.get(f"/api/events/{scene.event_id}/leaderboard", scene.member).get_json()
    assert seat in {row["bot_id"] for row in board}
    hidden = scene.get(f"/api/events/{scene.event_id}/leaderboard", scene.stranger)
    assert hidden.status_code == 404


def test_the_events_ladder_seats_no_person(scene: Scene, enqueued, info_bot) -> None:
    """Not even a seat whose person is at the page (connected), as a bot would be."""
    link = _start(scene).get_json()["seat_links"][0]
    key = link["url"].split("#")[1]
    raw, headers = _signed(key, {"bot_id": link["bot_id"], "info": SEAT_INFO})
    sat = scene.client.post("/api/connect/session", data=raw, headers=headers)
    assert sat.status_code == 200, sat.get_json()
    url = info_bot(games=["cactus"])
    refs = set()
    for n in range(2):
        made = scene.client.post(
            "/api/bots",
            json={"name": f"ref-{n}", "endpoint": f"{url}/r{n}", "event_id": scene.event_id},
            headers=auth(scene.organiser),
        )
        assert made.status_code == 201, made.get_json()
        refs.add(made.get_json()["id"])
    switched = scene.client.put(
        f"/api/events/{scene.event_id}/ladders/cactus",
        json={"enabled": True, "seats_per_match": 2},
        headers=auth(scene.organiser),
    )
    assert switched.status_code == 200, switched.get_json()
    config = scene.app.extensions["arena.config"]
    created = ladder.schedule_ladder(scene.app.extensions["arena.db"], config, seed=3)
    assert created
    with scene.app.extensions["arena.db"].session() as session:
        for match in session.scalars(select(Match).where(Match.id.in_(created))):
            assert {s.bot_id for s in match.seats} <= refs


def test_the_open_arenas_tournament_with_people_stays_in_the_open_arena(client, enqueued) -> None:
    house = client.post(
        "/api/play", json={"game": "cactus", "seats": [{"person": "x"}, {"house": "random"}]}
    ).get_json()["seats"][1]["bot_id"]
    answer = client.post("/api/tournaments", json=tournament_body([house], people=["Bo"]))
    assert answer.status_code == 201, answer.get_json()
    seat = answer.get_json()["seat_links"][0]["bot_id"]
    assert client.get(f"/api/bots/{seat}").get_json()["event_id"] is None


# -- against a real server ------------------------------------------------------------------
def _signed(secret: str, body: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """A body as a person's page signs it with the seat's key (static/hmac.js)."""
    raw = orjson.dumps({**body, "request_id": os.urandom(16).hex()})
    stamp = str(int(time.time()))
    headers = {"Content-Type": "application/json", TIMESTAMP: stamp,
               SIGNATURE: signature(secret, stamp, raw)}  # fmt: skip
    return raw, headers


def test_an_organiser_seats_people_in_a_private_event_over_http(tmp_path) -> None:
    env = {"ARENA_DATA_DIR": str(tmp_path), "ARENA_ORGANISER_TOKEN": ADMIN}
    with ExitStack() as stack:
        url = serve(stack, env)
        session = stack.enter_context(requests.Session())
        organiser = session.post(
            f"{url}/api/accounts",
            json={"name": "olga", "password": PASSWORD, "role": "organiser"},
            headers=auth(ADMIN),
            timeout=30,
        ).json()["token"]
        event = session.post(
            f"{url}/api/events",
            json={"name": "class", "games": ["cactus"], "visibility": "private"},
            headers=auth(organiser),
            timeout=10,
        ).json()
        bot = session.post(
            f"{url}/api/bots",
            json={"name": "ref", "connect": True, "games": ["cactus"], "event_id": event["id"]},
            headers=auth(organiser),
            timeout=10,
        ).json()
        started = session.post(
            f"{url}/api/tournaments",
            json=tournament_body([bot["id"]], event_id=event["id"], people=["Ada"]),
            headers=auth(organiser),
            timeout=10,
        )
        assert started.status_code == 201, started.text
        [link] = started.json()["seat_links"]
        path, key = link["url"].split("#")

        # a stranger learns nothing of the seat but that its page is there
        assert session.get(f"{url}/api/bots/{link['bot_id']}", timeout=10).status_code == 404
        persons = session.get(f"{url}/api/bots?kind=person", timeout=10).json()
        assert persons == []
        page = session.get(f"{url}{path}", timeout=10)
        assert page.status_code == 200 and "Ada" not in page.text and key not in page.text
        # the person holding the link sits down with its key, in no event of their own
        raw, headers = _signed(key, {"bot_id": link["bot_id"], "info": SEAT_INFO})
        opened = session.post(f"{url}/api/connect/session", data=raw, headers=headers, timeout=10)
        assert opened.status_code == 200, opened.text
        seen = session.get(f"{url}/api/bots/{link['bot_id']}", headers=auth(organiser), timeout=10)
        assert seen.json()["event_id"] == event["id"]
        assert seen.json()["connection"]["connected"] is True
