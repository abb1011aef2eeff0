"""What the pages ask of whom, through the Flask test client: the organiser token is asked
only of a visitor without an account who may hold it (folded away behind "Use an
organiser token"), never of a signed-in organiser, who starts and cancels tournaments
with their login; a contestant is offered no cancel button; and a signed-in person sits
down to play under their account's name, shown without the seat's tag."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from tests.support.api import auth

ADMIN = "organiser-secret"
PASSWORD = "correct horse battery"
TOKEN_FIELD = re.compile(r'<input name="token"')


def account(client: FlaskClient, name: str, admin: str | None = ADMIN, **fields: Any) -> dict:
    """An account made through the API (``admin``: the organiser token, if one is set)."""
    body = {"name": name, "password": PASSWORD, **fields}
    answer = client.post("/api/accounts", json=body, headers=auth(admin) if admin else {})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def log_in(client: FlaskClient, name: str) -> None:
    page = client.get("/login").text
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    answer = client.post("/login", data={"name": name, "password": PASSWORD, "csrf_token": token})
    assert answer.status_code == 302


def class_tournament(client: FlaskClient, admin: str | None = ADMIN) -> dict[str, Any]:
    """A teacher's event with two students' bots and its running tournament (no worker
    plays it)."""
    teacher = account(client, "teacher", admin, role="organiser")
    event = client.post(
        "/api/events", json={"name": "Class", "games": ["cactus"]}, headers=auth(teacher["token"])
    ).get_json()
    bots = []
    for name in ("ann", "bob"):
        student = account(client, name, admin, join_code=event["join_code"])
        body = {
            "name": f"{name}-bot",
            "connect": True,
            "games": ["cactus"],
            "event_id": event["id"],
        }
        bots.append(client.post("/api/bots", json=body, headers=auth(student["token"])).get_json())
    body = {"name": "Cup", "game": "cactus", "event_id": event["id"], "format": "round_robin",
            "bot_ids": [b["id"] for b in bots], "seats_per_match": 2,
            "games_per_pairing": 2}  # fmt: skip
    made = client.post("/api/tournaments", json=body, headers=auth(teacher["token"]))
    assert made.status_code == 201, made.get_json()
    return {"event": event, "tournament": made.get_json()}


def test_a_signed_in_organiser_is_not_asked_for_the_organiser_token(
    make_app: Callable[..., Flask],
) -> None:
    client = make_app(organiser_token=ADMIN).test_client()
    made = class_tournament(client)
    log_in(client, "teacher")
    page = client.get(f"/tournaments/{made['tournament']['id']}").text
    assert 'id="cancel-form"' in page and not TOKEN_FIELD.search(page)
    assert "Use an organiser token" not in page
    form = client.get(f"/tournaments/new?event_id={made['event']['id']}").text
    assert 'id="tournament-form"' in form and not TOKEN_FIELD.search(form)


def test_a_visitor_may_use_a_token_folded_away_and_a_contestant_is_offered_nothing(
    make_app: Callable[..., Flask],
) -> None:
    client = make_app(organiser_token=ADMIN).test_client()
    made = class_tournament(client)
    path = f"/tournaments/{made['tournament']['id']}"
    page = client.get(path).text
    folded = re.search(r'<details class="token-use".*?</details>', page, re.DOTALL)
    assert folded and "Use an organiser token" in folded.group()
    assert TOKEN_FIELD.search(folded.group()) and 'id="cancel-form"' in folded.group()
    form = client.get("/tournaments/new").text
    folded = re.search(r'<details class="token-use".*?</details>', form, re.DOTALL)
    assert folded and TOKEN_FIELD.search(folded.group())
    log_in(client, "ann")  # a contestant: may not cancel, and holds no organiser token
    page = client.get(path).text
    assert 'id="cancel-form"' not in page and not TOKEN_FIELD.search(page)


def test_without_an_organiser_token_anyone_cancels_an_open_arena_tournament_with_a_button(
    make_app: Callable[..., Flask],
) -> None:
    """No organiser token configured (the local default): the admin's operations are
    anyone's, so nothing asks for a token; an event's tournament stays its organisers'."""
    client = make_app().test_client()
    made = class_tournament(client, admin=None)
    bots = [
        client.post(
            "/api/bots", json={"name": n, "connect": True, "games": ["cactus"], "owner": "x"}
        ).get_json()["id"]
        for n in ("cy", "di")
    ]
    body = {"name": "Open", "game": "cactus", "format": "round_robin", "bot_ids": bots,
            "seats_per_match": 2, "games_per_pairing": 2}  # fmt: skip
    opened = client.post("/api/tournaments", json=body).get_json()
    page = client.get(f"/tournaments/{opened['id']}").text
    assert 'id="cancel-form"' in page and not TOKEN_FIELD.search(page)
    assert not TOKEN_FIELD.search(client.get("/tournaments/new").text)
    page = client.get(f"/tournaments/{made['tournament']['id']}").text
    assert 'id="cancel-form"' not in page


def test_a_signed_in_person_plays_under_their_account_name(
    make_app: Callable[..., Flask],
) -> None:
    client = make_app(organiser_token=ADMIN).test_client()
    account(client, "Grace Hopper")
    assert (
        'value="'
        not in re.search(r'<input name="person"[^>]*>', client.get("/play/cactus").text).group()
    )
    log_in(client, "Grace Hopper")
    field = re.search(r'<input name="person"[^>]*>', client.get("/play/cactus").text).group()
    assert 'value="Grace Hopper"' in field
    made = client.post(
        "/api/play",
        json={"game": "cactus", "seats": [{"person": "Grace Hopper"}, {"house": "random"}]},
        headers=auth(ADMIN),
    ).get_json()
    seat = made["links"][0]
    assert re.fullmatch(r"Grace Hopper · person [0-9a-f]{6}", seat["name"])
    page = client.get(seat["url"].split("#")[0]).text
    assert 'data-name="Grace Hopper"' in page and "· person" not in page
