"""A final run: ``POST /api/tournaments/<id>/final`` starts the same tournament (entrants,
game, options, format, deal, event, stop rule, pass rule) with more matches, named
"<name> (final)" and cloned from it, its matches queued after the commit; only those who
may start the original may start its final."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from arena.models import Match, Tournament
from tests.support.api import auth, error, register, tournament_body

ORGANISER = "organiser-token-of-the-finals"
PASSWORD = "a long enough password 1"
SAME = (
    "game", "options", "format", "deal", "seats_per_match", "bot_ids", "challenger_ids",
    "event_id", "sprt", "pass_rule", "live_view",
)  # fmt: skip


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(organiser_token=ORGANISER, rate_limits=False)


def start(client: Any, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    response = client.post("/api/tournaments", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_a_final_is_the_tournament_again_with_more_matches(app, info_bot, enqueued):
    client, admin = app.test_client(), auth(ORGANISER)
    ids = [register(client, info_bot(), name, games=["cactus"])["id"] for name in "abc"]
    body = tournament_body(ids, preset="pagat", options={"penalty_cards": 3}, seed=5)
    original = start(client, body, admin)
    queued_before = list(enqueued)

    response = client.post(
        f"/api/tournaments/{original['id']}/final", json={"matches_factor": 3}, headers=admin
    )
    assert response.status_code == 201, response.get_json()
    final = response.get_json()
    assert {k: final[k] for k in SAME} == {k: original[k] for k in SAME}
    assert final["name"] == "spring cup (final)" and final["cloned_from"] == original["id"]
    assert final["games_per_pairing"] == 3 * original["games_per_pairing"] == 6
    assert final["progress"]["total"] == 3 * original["progress"]["total"] == 18
    # its matches were queued after the commit, as a new tournament's
    assert enqueued[: len(queued_before)] == queued_before
    with app.extensions["arena.db"].session() as session:
        new_ids = sorted(
            m.id for m in session.query(Match).filter(Match.tournament_id == final["id"])
        )
        seeds = {t.id: t.seed for t in session.query(Tournament)}
    assert enqueued[len(queued_before) :] == new_ids
    assert seeds[final["id"]] != seeds[original["id"]]  # new deals

    # or the count itself: more than the original's, in a field of its format
    response = client.post(
        f"/api/tournaments/{original['id']}/final", json={"games_per_pairing": 4}, headers=admin
    )
    assert response.status_code == 201 and response.get_json()["progress"]["total"] == 12
    final_url = f"/api/tournaments/{original['id']}/final"
    error(client.post(final_url, json={"games_per_pairing": 2}, headers=admin), 400, "above 2")
    error(
        client.post(final_url, json={"matches_per_bot": 9}, headers=admin),
        400,
        "not a field of the round_robin format",
    )
    for wrong in ({}, {"matches_factor": 2, "games_per_pairing": 4}):
        error(client.post(final_url, json=wrong, headers=admin), 422, "Give one of")
    for factor in (1, 101, 2.5):
        error(client.post(final_url, json={"matches_factor": factor}, headers=admin), 422)
    error(client.post(final_url, json={"matches_factor": 2}), 401)
    error(client.post("/api/tournaments/999/final", json={"matches_factor": 2}, headers=admin), 404)


def test_an_event_s_qualifier_final_is_its_organisers_not_a_contestant_s(app, info_bot, enqueued):
    client = app.test_client()
    response = client.post(
        "/api/accounts",
        json={"name": "olga", "password": PASSWORD, "role": "organiser"},
        headers=auth(ORGANISER),
    )
    olga = auth(response.get_json()["token"])
    event = client.post(
        "/api/events", json={"name": "class", "games": ["cactus"]}, headers=olga
    ).get_json()
    response = client.post(
        "/api/accounts",
        json={"name": "dee", "password": PASSWORD, "join_code": event["join_code"]},
    )
    dee = auth(response.get_json()["token"])
    ids = []
    for who, name in ((olga, "ref"), (dee, "ace")):
        response = client.post(
            "/api/bots",
            json={
                "name": name,
                "endpoint": info_bot(),
                "event_id": event["id"],
                "games": ["cactus"],
            },
            headers=who,
        )
        assert response.status_code == 201, response.get_json()
        ids.append(response.get_json()["id"])
    body = {
        "name": "qualifier",
        "game": "cactus",
        "event_id": event["id"],
        "format": "qualifier",
        "bot_ids": ids,
        "challenger_ids": [ids[1]],
        "seats_per_match": 2,
        "matches_per_bot": 10,
        "pass_rule": {"kind": "stop_rule"},
        "sprt": {"elo0": 0, "elo1": 50},
    }
    original = start(client, body, olga)
    url = f"/api/tournaments/{original['id']}/final"
    error(client.post(url, json={"matches_factor": 2}, headers=dee), 403, "organisers")

    final = client.post(url, json={"matches_factor": 2}, headers=olga)
    assert final.status_code == 201, final.get_json()
    final = final.get_json()
    assert {k: final[k] for k in SAME} == {k: original[k] for k in SAME}
    assert final["pass_rule"] == {"kind": "stop_rule"} and final["event_id"] == event["id"]
    assert final["matches_per_bot"] == 20 and final["progress"]["total"] == 20
    assert client.get(f"/api/tournaments/{final['id']}/grades").get_json()[0]["grade"] == "pending"
