"""Bots and events through the API and the pages: a bot registered from an account lands
in the account's event (the registration page preselects it; ``"event_id": null`` is the
open arena), a bot moves between events (its owner before the freeze and within the
event's rules, an organiser at any time), a deleted bot's name is free again, and the
reference bots (house bots, and bots an organiser marks) enter every event's tournaments
and qualifiers, listed apart from the contestants on the roster and never graded."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient

from arena.services import accounts
from tests.support.api import auth, error, tournament_body

ADMIN = "the-organiser-token"
PASSWORD = "a long enough password"


@pytest.fixture(autouse=True)
def _cheap_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    # where a bot lands is the question, not what guessing a password costs
    monkeypatch.setattr(
        accounts, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


@dataclass
class Class:
    app: Flask
    client: FlaskClient
    organiser: str  # olga's API token: she organises the event
    event: dict[str, Any]

    def account(self, name: str, *codes: str) -> str:
        """A contestant's API token, signed up with the event's join code (or ``codes``)."""
        body: dict[str, Any] = {"name": name, "password": PASSWORD}
        codes = codes or (self.event["join_code"],)
        body["join_code"] = codes[0]
        answer = self.client.post("/api/accounts", json=body)
        assert answer.status_code == 201, answer.get_json()
        token = answer.get_json()["token"]
        for code in codes[1:]:
            joined = self.join(token, code)
            assert joined.status_code == 200, joined.get_json()
        return token

    def join(self, token: str, code: str) -> Any:
        """Join the event (one olga organises) whose join code is ``code``."""
        listed = self.client.get("/api/events", headers=auth(self.organiser)).get_json()
        event = next(e for e in listed if e.get("join_code") == code)
        return self.client.post(
            f"/api/events/{event['id']}/join", json={"join_code": code}, headers=auth(token)
        )

    def new_event(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "other class", "games": ["cactus"], "visibility": "public", **fields}
        answer = self.client.post("/api/events", json=body, headers=auth(self.organiser))
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()

    def change_event(self, **fields: Any) -> None:
        answer = self.client.patch(
            f"/api/events/{self.event['id']}", json=fields, headers=auth(self.organiser)
        )
        assert answer.status_code == 200, answer.get_json()

    def bot(self, token: str | None, name: str, **fields: Any) -> Any:
        """POST /api/bots of a bot that connects out (cactus), as given."""
        body = {"name": name, "connect": True, "games": ["cactus"], **fields}
        return self.client.post("/api/bots", json=body, headers=auth(token) if token else {})

    def made(self, token: str | None, name: str, **fields: Any) -> dict[str, Any]:
        answer = self.bot(token, name, **fields)
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()

    def patch(self, bot_id: int, token: str, **fields: Any) -> Any:
        return self.client.patch(f"/api/bots/{bot_id}", json=fields, headers=auth(token))

    def roster_bots(self) -> list[int]:
        rows = self.client.get(
            f"/api/events/{self.event['id']}/roster", headers=auth(self.organiser)
        ).get_json()
        return [r["bot_id"] for r in rows if r["bot_id"] is not None]


def _when(**delta: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(**delta)).isoformat()


@pytest.fixture
def school(make_app: Callable[..., Flask]) -> Class:
    """A public event (cactus) organised by olga, on an app with an organiser token."""
    app = make_app(organiser_token=ADMIN, rate_limits=False)
    client = app.test_client()
    made = client.post(
        "/api/accounts",
        json={"name": "olga", "password": PASSWORD, "role": "organiser"},
        headers=auth(ADMIN),
    )
    organiser = made.get_json()["token"]
    event = client.post(
        "/api/events",
        json={"name": "class", "games": ["cactus"], "visibility": "public"},
        headers=auth(organiser),
    )
    assert event.status_code == 201, event.get_json()
    return Class(app, client, organiser, event.get_json())


# -- registering into the right event ---------------------------------------------------------
def test_an_account_in_one_event_registers_its_bot_into_it(school: Class) -> None:
    carla = school.account("carla")
    bot = school.made(carla, "c-bot")  # "Then register a bot": no event named
    assert bot["event_id"] == school.event["id"]
    assert school.roster_bots() == [bot["id"]]  # not "no bot yet"
    # its event's tournaments take it
    school.change_event(bots_per_account=5)
    body = tournament_body([bot["id"], school.made(carla, "c-two")["id"]])
    started = school.client.post(
        "/api/tournaments",
        json={**body, "event_id": school.event["id"]},
        headers=auth(school.organiser),
    )
    assert started.status_code == 201, started.get_json()
    # an explicit null is the open arena
    outside = school.made(carla, "c-open", event_id=None)
    assert outside["event_id"] is None
    # the event refusing a bot entered by default says how to reach the open arena
    school.change_event(freeze_at=_when(seconds=-1))
    refused = error(school.bot(carla, "c-late"), 409, "frozen", '"event_id": null')
    assert str(school.event["id"]) in refused["message"]


def test_two_events_or_none_register_in_the_open_arena_by_default(school: Class) -> None:
    other = school.new_event()
    dora = school.account("dora", school.event["join_code"], other["join_code"])
    assert school.made(dora, "d-bot")["event_id"] is None  # two events: no default
    chosen = school.made(dora, "d-class", event_id=other["id"])
    assert chosen["event_id"] == other["id"]
    # without an account (the local profile's free-text owner) nothing changes
    anonymous = school.made(None, "anon-bot", owner="a script")
    assert (anonymous["event_id"], anonymous["owner"]) == (None, "a script")
    # nor with a bot's owner token, whose bot is in the event
    carla = school.account("carla")
    own = school.made(carla, "c-bot")
    assert own["event_id"] == school.event["id"]
    by_token = school.made(own["owner_token"], "c-token", owner="carla")
    assert by_token["event_id"] is None


def test_the_registration_page_preselects_the_event(school: Class) -> None:
    def selected(token: str, query: str = "") -> str:
        page = school.client.get(f"/bots/register{query}", headers=auth(token)).text
        found = re.findall(r'<option value="(\d*)"\s*selected', page)
        assert len(found) == 1, found
        return found[0]

    carla = school.account("carla")
    assert selected(carla) == str(school.event["id"])  # her only event
    other = school.new_event()
    dora = school.account("dora", school.event["join_code"], other["join_code"])
    assert selected(dora) == ""  # two events: the open arena, and the hint says to choose
    page = school.client.get("/bots/register", headers=auth(dora)).text
    assert "You are in 2 events" in page
    # the event page's "register a bot" link names the event it came from
    assert selected(dora, f"?event_id={other['id']}") == str(other["id"])
    assert selected(dora, f"?event={school.event['id']}") == str(school.event["id"])
    assert (
        f"/bots/register?event_id={other['id']}"
        in school.client.get(f"/events/{other['id']}", headers=auth(dora)).text
    )


# -- moving a bot ---------------------------------------------------------------------------
def test_an_owner_moves_a_bot_before_the_freeze_an_organiser_any_time(school: Class) -> None:
    carla = school.account("carla")
    bot = school.made(carla, "c-bot", event_id=None)  # landed outside the class
    moved = school.patch(bot["id"], carla, event_id=school.event["id"])
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["event_id"] == school.event["id"]
    assert school.roster_bots() == [bot["id"]]
    # and back out, into an event she is not in, past the event's limit: each refused
    out = school.patch(bot["id"], carla, event_id=None)
    assert out.status_code == 200 and out.get_json()["event_id"] is None
    stranger = school.new_event(name="not hers")
    error(school.patch(bot["id"], carla, event_id=stranger["id"]), 403, "join event")
    school.made(carla, "c-two")  # into her event by default: its one bot per account
    error(school.patch(bot["id"], carla, event_id=school.event["id"]), 409, "1 bot(s) per account")
    school.change_event(bots_per_account=3)
    # a game the event does not play
    wide = school.made(carla, "c-wide", event_id=None, games=["cactus", "president"])
    error(school.patch(wide["id"], carla, event_id=school.event["id"]), 400, "not president")
    both = school.patch(wide["id"], carla, event_id=school.event["id"], games=["cactus"])
    assert both.status_code == 200, both.get_json()
    # after the freeze she moves nothing in or out; olga still does
    school.change_event(freeze_at=_when(seconds=-1))
    error(school.patch(bot["id"], carla, event_id=school.event["id"]), 409, "frozen")
    error(school.patch(wide["id"], carla, event_id=None), 409, "frozen", "stays")
    pulled = school.patch(bot["id"], school.organiser, event_id=school.event["id"])
    assert pulled.status_code == 200, pulled.get_json()
    assert pulled.get_json()["event_id"] == school.event["id"]
    removed = school.patch(wide["id"], school.organiser, event_id=None)
    assert removed.status_code == 200 and removed.get_json()["event_id"] is None
    # an organiser brings in only a bot of an account in the event
    outsider = school.made(None, "walk-in", owner="someone")
    error(school.patch(outsider["id"], school.organiser, event_id=school.event["id"]), 403, "join")
    # nobody else moves it, and without a credential it is a 401
    dora = school.account("dora")
    error(school.patch(bot["id"], dora, event_id=None), 403, "owner")
    anonymous = school.client.patch(f"/api/bots/{bot['id']}", json={"event_id": None})
    assert anonymous.status_code == 401


def test_the_bot_page_offers_the_move(school: Class) -> None:
    carla = school.account("carla")
    bot = school.made(carla, "c-bot", event_id=None)
    page = school.client.get(f"/bots/{bot['id']}", headers=auth(carla)).text
    assert 'id="move-form"' in page and f'<option value="{school.event["id"]}"' in page
    assert 'id="move-form"' not in school.client.get(f"/bots/{bot['id']}").text


# -- names ----------------------------------------------------------------------------------
def test_a_deleted_bots_name_is_free_again(school: Class, enqueued: list[int]) -> None:
    first = school.made(None, "alpha", owner="ann")
    other = school.made(None, "beta", owner="ann")
    started = school.client.post(
        "/api/tournaments", json=tournament_body([first["id"], other["id"]]), headers=auth(ADMIN)
    )
    assert started.status_code == 201, started.get_json()
    error(school.bot(None, " ALPHA ", owner="bob"), 409, "already exists")
    gone = school.client.delete(f"/api/bots/{first['id']}", headers=auth(first["owner_token"]))
    assert gone.status_code == 204
    again = school.made(None, "Alpha", owner="bob")
    assert again["id"] != first["id"]
    # a rename to a deleted bot's name goes too, to a live one's does not
    school.client.delete(f"/api/bots/{again['id']}", headers=auth(again["owner_token"]))
    renamed = school.patch(other["id"], other["owner_token"], name="alpha")
    assert renamed.status_code == 200, renamed.get_json()
    error(school.bot(None, "alpha", owner="bob"), 409, "already exists")
    # the old matches still show the deleted bot's name
    match = school.client.get(f"/api/matches/{enqueued[0]}").get_json()
    names = {seat["bot_id"]: seat["bot_name"] for seat in match["seats"]}
    assert names[first["id"]] == "alpha"


# -- reference bots -------------------------------------------------------------------------
def test_reference_and_house_bots_enter_every_events_qualifier_ungraded(
    school: Class, enqueued: list[int]
) -> None:
    carla = school.account("carla")
    student = school.made(carla, "c-bot")
    # olga's sample bot, in the open arena, offered to every event
    sample = school.made(school.organiser, "sample", event_id=None)
    error(school.patch(sample["id"], carla, reference=True), 403, "reference")
    error(school.patch(student["id"], carla, reference=True), 403, "organiser of event")
    marked = school.patch(sample["id"], school.organiser, reference=True)
    assert marked.status_code == 200 and marked.get_json()["reference"] is True
    # the form offers them with the event's bots (the house bots made on first use)
    form = school.client.get("/tournaments/new", headers=auth(school.organiser)).text
    offered = re.findall(r'data-reference="1"[^>]*>\s*<label class="check"><input '
                         r'type="checkbox" name="bot_ids" value="(\d+)"', form)  # fmt: skip
    houses = school.client.get("/api/bots?kind=house").get_json()
    assert {b["name"] for b in houses} >= {"house random"}
    assert all(b["reference"] for b in houses)
    house = next(b["id"] for b in houses if b["name"] == "house random")
    assert {sample["id"], house} <= {int(i) for i in offered}
    listed = school.client.get("/api/bots?reference=true").get_json()
    assert {sample["id"], house} <= {b["id"] for b in listed}
    assert student["id"] not in {b["id"] for b in listed}
    # a qualifier of the event takes them without registering anything into it
    body = {
        "name": "qualifier",
        "game": "cactus",
        "event_id": school.event["id"],
        "format": "qualifier",
        "bot_ids": [student["id"], sample["id"], house],
        "challenger_ids": [student["id"], sample["id"]],  # a reference ticked by mistake
        "seats_per_match": 2,
        "matches_per_bot": 2,
        "pass_rule": {"kind": "score", "min_score": 0.8},
    }
    started = school.client.post("/api/tournaments", json=body, headers=auth(school.organiser))
    assert started.status_code == 201, started.get_json()
    robin = tournament_body([student["id"], house], event_id=school.event["id"])
    assert (
        school.client.post("/api/tournaments", json=robin, headers=auth(school.organiser))
    ).status_code == 201
    for bot_id in (sample["id"], house):
        assert school.client.get(f"/api/bots/{bot_id}").get_json()["event_id"] is None
    # graded: the student only
    grades = school.client.get(f"/api/tournaments/{started.get_json()['id']}/grades").get_json()
    assert [g["bot_id"] for g in grades] == [student["id"]]
    # the roster's rows are the students'; the event page lists the references apart
    school.patch(sample["id"], school.organiser, event_id=school.event["id"])
    assert school.roster_bots() == [student["id"]]
    page = school.client.get(f"/events/{school.event['id']}", headers=auth(carla)).text
    references = page[page.index('id="reference-bots"') : page.index('id="leaderboard"')]
    assert "sample" in references and "house random" in references
    assert "c-bot" not in references
    # a bot not marked still stays out of another event's tournament
    other = school.made(school.organiser, "plain", event_id=None)
    mixed = tournament_body([student["id"], other["id"]], event_id=school.event["id"])
    error(
        school.client.post("/api/tournaments", json=mixed, headers=auth(school.organiser)),
        400,
        "do not play in event",
    )
