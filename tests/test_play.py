"""People at the table, without a browser: starting a match with people (``POST
/api/play``) and a tournament with people, what the arena checks, house bots played in
the worker, a person's own deadline, matches that wait for their people, and the page's
signatures (its HMAC is the protocol's).  The browser plays in tests/test_browser_play.py.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee
from arena.models import Bot, BotSession, Ladder, Match, MatchSeat
from arena.worker import ladder, lifecycle
from arena.worker import play as play_module
from tests.support.web import add_bot

ROOT = Path(__file__).resolve().parents[1]
HOUSE = [{"house": "heuristic"}, {"house": "random"}]


def start(client, **body: Any):
    return client.post("/api/play", json={"game": "cactus", **body})


# -- starting a match with people ----------------------------------------------------------
def test_a_person_sits_down_against_house_bots_and_gets_one_link(client, enqueued) -> None:
    answer = start(client, seats=[{"person": "Ada"}, *HOUSE])
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    assert [s["kind"] for s in body["seats"]] == ["person", "house", "house"]
    assert body["rated"] is False and body["deadline_s"] == 60
    [link] = body["links"]
    assert link["seat"] == 0 and link["name"].startswith("Ada")
    path, key = link["url"].split("#")
    assert path == f"/play/seat/{link['bot_id']}" and len(key) >= 32
    assert enqueued == [body["match_id"]]
    match = client.get(f"/api/matches/{body['match_id']}").get_json()
    assert match["kind"] == "play" and match["status"] == "queued"
    assert [s["bot_kind"] for s in match["seats"]] == ["person", "house", "house"]
    # the seat's page is there; its key is never in the page (it travels in the fragment)
    page = client.get(path)
    assert page.status_code == 200 and key not in page.get_data(as_text=True)


def test_the_house_bots_are_made_once_and_play_every_game_with_their_policy(client) -> None:
    first = start(client, seats=[{"person": "a"}, *HOUSE]).get_json()["seats"]
    again = client.post(
        "/api/play",
        json={"game": "president", "seats": [{"person": "b"}, *HOUSE, {"house": "random"}]},
    ).get_json()["seats"]
    assert [s["bot_id"] for s in again[1:]] == [
        first[1]["bot_id"],
        first[2]["bot_id"],
        first[2]["bot_id"],
    ]
    house = client.get(f"/api/bots/{first[1]['bot_id']}").get_json()
    assert house["kind"] == "house" and set(house["games"]) == {
        "cactus",
        "cactus-game",
        "president",
    }


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"seats": [{"person": "a", "house": "random"}, *HOUSE]}, 422, "exactly one"),
        ({"seats": [{"person": "a"}, {"house": "genius"}]}, 422, "house"),
        ({"seats": [{"person": "a"}] * 9}, 422, "seats"),
        ({"seats": [{"person": "a"}]}, 422, "seats"),
        ({"game": "chess", "seats": [{"person": "a"}, *HOUSE]}, 422, "game"),
        ({"seats": [{"person": "a"}, *HOUSE], "deadline_s": 1}, 422, "deadline_s"),
        ({"seats": [{"person": "a"}, *HOUSE], "preset": "nope"}, 400, "preset"),
        ({"game": "president", "seats": [{"person": "a"}, {"house": "random"}]}, 400, "3 to 8"),
        ({"seats": [{"person": "a"}, {"bot_id": 999}]}, 400, "no bot 999"),
    ],
)
def test_a_wrong_match_is_refused_with_a_message_and_nothing_is_stored(
    client, enqueued, body: dict[str, Any], status: int, words: str
) -> None:
    answer = client.post("/api/play", json={"game": "cactus", **body})
    assert answer.status_code == status
    assert words in json.dumps(answer.get_json())
    assert enqueued == []
    assert client.get("/api/matches").get_json() == []


def test_people_pick_only_the_bots_whose_owners_allow_it(make_app) -> None:
    closed = make_app(organiser_token="t" * 32)  # an organiser exists: others are not one
    client = closed.test_client()
    with closed.extensions["arena.db"].session() as session:
        offered = add_bot(session, "offered", ["cactus"])
        offered.playable = True
        kept = add_bot(session, "kept", ["cactus"]).id
        offered_id = offered.id
    listed = client.get("/api/play/cactus/opponents").get_json()
    assert [o["name"] for o in listed] == ["house random", "house heuristic", "offered"]
    refused = start(client, seats=[{"person": "a"}, {"bot_id": kept}])
    assert refused.status_code == 403 and "does not let people" in refused.get_json()["message"]
    assert start(client, seats=[{"person": "a"}, {"bot_id": offered_id}]).status_code == 201
    # the organiser seats any bot, and may rate the match; nobody else may
    rated = {"seats": [{"person": "a"}, {"bot_id": kept}], "rated": True}
    refused = start(client, **rated)
    assert refused.status_code == 403 and "only the organiser" in refused.get_json()["message"]
    organiser = {"Authorization": "Bearer " + "t" * 32}
    made = client.post("/api/play", json={"game": "cactus", **rated}, headers=organiser)
    assert made.status_code == 201 and made.get_json()["rated"] is True


def test_where_play_is_closed_only_the_organiser_starts_a_match(make_app) -> None:
    client = make_app(organiser_token="t" * 32, open_play=False).test_client()
    answer = start(client, seats=[{"person": "a"}, *HOUSE])
    assert answer.status_code == 401 and "organiser token" in answer.get_json()["message"]


def test_people_s_seats_are_not_listed_as_bots_unless_asked(client) -> None:
    start(client, seats=[{"person": "Ada"}, *HOUSE])
    listed = client.get("/api/bots").get_json()
    assert {b["kind"] for b in listed} == {"house"}
    people = client.get("/api/bots?kind=person").get_json()
    assert [b["kind"] for b in people] == ["person"] and "signing_secret" not in people[0]
    assert "Ada" not in client.get("/bots").get_data(as_text=True)
    assert client.get("/api/bots?kind=robot").status_code == 422


def test_an_owner_offers_a_bot_to_people_and_takes_it_back(client, info_bot) -> None:
    url = info_bot(games=["cactus"])
    made = client.post(
        "/api/bots", json={"name": "mine", "endpoint": url, "owner": "me", "playable": True}
    ).get_json()
    assert made["playable"] is True
    names = [o["name"] for o in client.get("/api/play/cactus/opponents").get_json()]
    assert "mine" in names
    token = {"Authorization": f"Bearer {made['owner_token']}"}
    changed = client.patch(f"/api/bots/{made['id']}", json={"playable": False}, headers=token)
    assert changed.status_code == 200 and changed.get_json()["playable"] is False
    names = [o["name"] for o in client.get("/api/play/cactus/opponents").get_json()]
    assert "mine" not in names


# -- organised: a tournament with people ---------------------------------------------------
def test_a_tournament_with_people_gives_one_link_each_and_is_unrated(client, enqueued) -> None:
    house = start(client, seats=[{"person": "x"}, *HOUSE]).get_json()["seats"][1]["bot_id"]
    enqueued.clear()
    answer = client.post(
        "/api/tournaments",
        json={
            "name": "class",
            "game": "cactus",
            "bot_ids": [house],
            "people": ["Teacher", "Student"],
            "seats_per_match": 3,
            "games_per_pairing": 3,
            "person_deadline_s": 30,
        },
    )
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    links = body["seat_links"]
    assert [link["name"].split(" ·")[0] for link in links] == ["Teacher", "Student"]
    assert set(body["bot_ids"]) == {house, *(link["bot_id"] for link in links)}
    matches = client.get(f"/api/matches?tournament_id={body['id']}").get_json()
    assert len(matches) == 3 and not any(m["rated"] for m in matches)
    people = client.get(f"/api/bots/{links[0]['bot_id']}").get_json()
    assert people["kind"] == "person"
    # shown once: reading the tournament again gives no link
    assert client.get(f"/api/tournaments/{body['id']}").get_json()["seat_links"] is None
    rated = client.post(
        "/api/tournaments",
        json={"name": "r", "game": "cactus", "bot_ids": [house], "people": ["a", "b"],
              "seats_per_match": 3, "games_per_pairing": 3, "rated": True},
    )  # fmt: skip
    assert all(m["rated"] for m in client.get(
        f"/api/matches?tournament_id={rated.get_json()['id']}").get_json())  # fmt: skip
    alone = client.post(
        "/api/tournaments",
        json={"name": "x", "game": "cactus", "bot_ids": [], "people": ["a"], "seats_per_match": 2},
    )
    assert alone.status_code == 422 and "at least 2 entrants" in json.dumps(alone.get_json())


# -- the worker ----------------------------------------------------------------------------
def _play_match(app, seats: list[dict[str, Any]], game: str = "cactus", **kw: Any) -> int:
    from arena.services import people

    with app.extensions["arena.db"].session() as session:
        made = people.create_play_match(session, game=game, seats=seats, organiser=True, **kw)
        return made.match.id


def test_house_bots_are_played_in_the_worker_as_the_match_seed_says(app) -> None:
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    ids = [_play_match(app, [*HOUSE, {"house": "heuristic"}], seed=7) for _ in range(2)]
    for match_id in ids:
        assert play_module.play_match(database, config, match_id) == "recorded"
    client = app.test_client()
    records = [client.get(f"/api/matches/{i}/replay").get_json() for i in ids]
    assert records[0]["players"] == ["house heuristic", "house random", "house heuristic"]

    # the same seed and the same policies: the same match (deterministic house bots)
    def actions(record: dict[str, Any]) -> list[list[Any]]:
        return [[d["action"] for d in step] for step in record["steps"]]

    assert actions(records[0]) == actions(records[1])
    assert all(s["strikes"] == 0 for s in client.get(f"/api/matches/{ids[0]}").get_json()["seats"])


def test_the_referee_gives_each_seat_its_own_deadline() -> None:
    asked: dict[int, list[int]] = {0: [], 1: []}

    class Recording(PolicyClient):
        def __init__(self, seat: int):
            import random

            super().__init__(make_policy("cactus", "random", random.Random(seat)))
            self.seat = seat

        def act(self, payload: dict[str, Any]) -> Any:
            asked[self.seat].append(payload["deadline_ms"])
            return super().act(payload)

    Referee(deadline_ms=2000).run(
        "cactus", [Recording(0), Recording(1)], 3, deadlines_ms=[None, 60_000]
    )
    assert set(asked[0]) == {2000} and set(asked[1]) == {60_000}


def test_a_match_waits_until_its_people_sit_down_and_one_match_at_a_time(app) -> None:
    """A person's link not followed yet holds the match (the claim is refused for now,
    as for a bot playing elsewhere); once the person has a session it is played; a
    person playing one match holds their other matches."""
    database = app.extensions["arena.db"]
    match_id = _play_match(app, [{"person": "p"}, *HOUSE])
    other_id = _play_match(app, [*HOUSE, {"person": "q"}])
    now = dt.datetime.now(dt.UTC)
    until = now + dt.timedelta(seconds=15)

    def claim(i: int) -> str | None:
        with database.session() as session:
            match = session.get(Match, i)
            return lifecycle.claim(session, match, "w", until, now)

    assert claim(match_id) == lifecycle.BUSY
    with database.session() as session:
        person = session.scalar(
            select(MatchSeat.bot_id).where(MatchSeat.match_id == match_id, MatchSeat.seat == 0)
        )
        session.add(BotSession(bot_id=person, token="t", home="h", info={}))
        # the same person in the other match too
        session.get(MatchSeat, (other_id, 2)).bot_id = person
    assert claim(match_id) is None
    assert claim(other_id) == lifecycle.BUSY  # the person is at another table


def test_a_play_match_nobody_sat_down_at_is_cancelled(app) -> None:
    database = app.extensions["arena.db"]
    match_id = _play_match(app, [{"person": "p"}, *HOUSE])
    later = dt.datetime.now(dt.UTC) + lifecycle.PLAY_WAIT + dt.timedelta(minutes=1)
    with database.session() as session:
        match = session.get(Match, match_id)
        refused = lifecycle.claim(session, match, "w", later, later)
    assert refused is not None and "sat down" in refused
    detail = app.test_client().get(f"/api/matches/{match_id}").get_json()
    assert detail["status"] == "cancelled"


def test_the_ladder_seats_neither_people_nor_house_bots(app) -> None:
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    _play_match(app, [{"person": "p"}, *HOUSE])  # a person and both house bots exist
    with database.session() as session:
        session.add(Ladder(game="cactus", enabled=True, seats_per_match=2))
        add_bot(session, "only", ["cactus"])
    assert ladder.schedule_ladder(database, config, seed=1) == []  # one real bot: no table
    with database.session() as session:
        add_bot(session, "second", ["cactus"])
    [created] = ladder.schedule_ladder(database, config, seed=1)
    with database.session() as session:
        kinds = {session.get(Bot, s.bot_id).kind for s in session.get(Match, created).seats}
    assert kinds == {"bot"}


# -- the page's signatures -----------------------------------------------------------------
def test_the_page_signs_as_the_protocol_does() -> None:
    """static/hmac.js computes exactly Python's HMAC-SHA256 (UTF-8, long keys, empty and
    multi-block messages): the page's polls are accepted like any bot's."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is not installed (apt-get install -y nodejs)")
        pytest.skip("node is not installed")
    cases = [
        ("k" * 43, '1700000000.{"bot_id":1}'),
        ("x" * 100, ""),
        (
            "clé",
            "1700000000." + json.dumps({"name": "Zoé 😀", "pad": "y" * 300}, ensure_ascii=False),
        ),
    ]
    script = (
        "const h = require(process.argv[1]); const cases = JSON.parse(process.argv[2]);"
        "console.log(JSON.stringify(cases.map(([k, m]) => h.hex(k, m))));"
    )
    done = subprocess.run(
        [node, "-e", script, str(ROOT / "arena/web/static/hmac.js"), json.dumps(cases)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    expected = [hmac.new(k.encode(), m.encode(), hashlib.sha256).hexdigest() for k, m in cases]
    assert json.loads(done.stdout) == expected
