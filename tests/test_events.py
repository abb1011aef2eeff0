"""Events through the API: the freeze (no new bots, no endpoint or transport change, a
connect bot's version pinned; its organisers still may), the registration window, the
bots one account may have in an event, events that never mix (tournaments, the ladder),
an endpoint unique within an event, attaching a bot registered before its owner had an
account, and the bot list's filters (``mine``, ``q``, ``owner``, ``event_id``).

Who may call which write is tests/test_authorization.py's; this module is what the
rules do once the caller is allowed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from arena.api import connect as connect_api
from arena.models import Bot, Match
from arena.relay.internal import SIGNATURE, TIMESTAMP, signature
from arena.services import accounts
from arena.worker import ladder
from tests.support.api import auth, error, tournament_body

ADMIN = "the-organiser-token"
PASSWORD = "a long enough password"


@pytest.fixture(autouse=True)
def _cheap_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    # the rules of events are the question, not what guessing a password costs
    monkeypatch.setattr(
        accounts, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.5)


@dataclass
class Arena:
    app: Flask
    client: FlaskClient
    organiser: str  # the event's organiser's API token
    event: dict[str, Any]

    def account(self, name: str, join: bool = True) -> str:
        """A contestant's API token (a member of the event unless ``join`` is false)."""
        body: dict[str, Any] = {"name": name, "password": PASSWORD}
        if join:
            body["join_code"] = self.event["join_code"]
        answer = self.client.post("/api/accounts", json=body)
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()["token"]

    def change_event(self, **fields: Any) -> dict[str, Any]:
        answer = self.client.patch(
            f"/api/events/{self.event['id']}", json=fields, headers=auth(self.organiser)
        )
        assert answer.status_code == 200, answer.get_json()
        return answer.get_json()

    def bot(self, token: str, name: str, in_event: bool = True, **fields: Any) -> Any:
        """POST /api/bots (a connect bot unless an endpoint is given): the answer."""
        body: dict[str, Any] = {"name": name, **fields}
        if "endpoint" not in body:
            body = {"connect": True, "games": ["cactus"], **body}
        # a contestant's bot enters their only event unless told: the open arena is null
        body["event_id"] = self.event["id"] if in_event else None
        return self.client.post("/api/bots", json=body, headers=auth(token))

    def made(self, token: str, name: str, in_event: bool = True, **fields: Any) -> dict:
        answer = self.bot(token, name, in_event, **fields)
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()


def _when(**delta: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(**delta)).isoformat()


@pytest.fixture
def arena(make_app: Callable[..., Flask]) -> Arena:
    """An event (public, cactus) and its organiser, on an app with an organiser token."""
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
        json={"name": "class", "games": ["cactus"], "visibility": "public"},
        headers=auth(organiser),
    )
    assert event.status_code == 201, event.get_json()
    return Arena(app, client, organiser, event.get_json())


# -- the freeze ---------------------------------------------------------------------------
def test_after_the_freeze_a_contestant_changes_nothing_that_plays(arena, info_bot) -> None:
    carla = arena.account("carla")
    url = info_bot(games=["cactus"])
    bot = arena.made(carla, "c-bot", endpoint=url)
    before = arena.change_event(freeze_at=_when(minutes=1))
    assert before["frozen"] is False
    arena.change_event(freeze_at=_when(seconds=-1))
    assert arena.client.get(f"/api/events/{arena.event['id']}").get_json()["frozen"] is True
    path = f"/api/bots/{bot['id']}"
    error(arena.bot(carla, "late-bot"), 409, "frozen")
    error(
        arena.client.patch(path, json={"endpoint": info_bot()}, headers=auth(carla)),
        409,
        "frozen",
    )
    error(
        arena.client.patch(path, json={"connect": True}, headers=auth(carla)),
        409,
        "frozen",
    )
    # what does not change how it plays still may
    kept = arena.client.patch(path, json={"description": "v1"}, headers=auth(carla))
    assert kept.status_code == 200, kept.get_json()
    detail = arena.client.get(path, headers=auth(carla)).get_json()
    assert detail["endpoint"] == url and detail["connect"] is False


def test_after_the_freeze_a_hosted_bots_code_is_frozen_too(arena, enqueued) -> None:
    """A hosted bot's code plays as an endpoint does: after the freeze its owner uploads
    and rolls back nothing; its organiser still may (and an account's bot is its own)."""
    import arenabot.starters

    starter = (Path(arenabot.starters.__file__).parent / "cactus.py").read_bytes()
    carla = arena.account("carla")
    bot = arena.made(carla, "c-hosted", hosted=True, connect=False)
    path = f"/api/bots/{bot['id']}/code"
    python = {"Content-Type": "text/x-python"}
    first = arena.client.put(path, data=starter, headers={**python, **auth(carla)})
    assert first.status_code == 202, first.get_json()
    arena.change_event(freeze_at=_when(seconds=-1))
    late = arena.client.put(path, data=starter + b"\n", headers={**python, **auth(carla)})
    error(late, 409, "frozen")
    rollback = arena.client.post(
        f"{path}/{first.get_json()['version']}/activate", headers=auth(carla)
    )
    error(rollback, 409, "frozen")
    by_organiser = arena.client.put(
        path, data=starter + b"\n", headers={**python, **auth(arena.organiser)}
    )
    assert by_organiser.status_code == 202, by_organiser.get_json()


def test_after_the_freeze_its_organiser_still_may(arena, info_bot) -> None:
    carla = arena.account("carla")
    bot = arena.made(carla, "c-bot", endpoint=info_bot(games=["cactus"]))
    arena.change_event(freeze_at=_when(seconds=-1))
    moved = info_bot(games=["cactus"])
    answer = arena.client.patch(
        f"/api/bots/{bot['id']}", json={"endpoint": moved}, headers=auth(arena.organiser)
    )
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["endpoint"] == moved
    reference = arena.bot(arena.organiser, "reference")  # a reference bot, frozen or not
    assert reference.status_code == 201, reference.get_json()


def _open_session(client: FlaskClient, bot: dict[str, Any], version: str) -> Any:
    """The bot opens its connect session declaring ``version`` (signed as the SDK signs)."""
    info = {"apiversion": "1", "name": bot["name"], "version": version, "games": ["cactus"]}
    body = {"request_id": os.urandom(16).hex(), "bot_id": bot["id"], "info": info}
    raw = json.dumps(body).encode()
    stamp = str(int(time.time()))
    headers = {TIMESTAMP: stamp, SIGNATURE: signature(bot["signing_secret"], stamp, raw)}
    return client.post(
        "/api/connect/session", data=raw, headers=headers, content_type="application/json"
    )


def test_after_the_freeze_a_connect_bot_plays_the_version_it_had(arena) -> None:
    carla = arena.account("carla")
    bot = arena.made(carla, "c-bot")
    assert _open_session(arena.client, bot, "2").status_code == 200
    arena.change_event(freeze_at=_when(seconds=-1))
    refused = _open_session(arena.client, bot, "3")
    error(refused, 409, "frozen", "'2'", "'3'")
    again = _open_session(arena.client, bot, "2")
    assert again.status_code == 200, again.get_json()
    # before the freeze a new version is simply taken
    arena.change_event(freeze_at=_when(hours=1))
    assert _open_session(arena.client, bot, "3").status_code == 200


def test_a_connect_bot_that_never_connected_before_the_freeze_is_pinned_by_its_first(
    arena,
) -> None:
    carla = arena.account("carla")
    bot = arena.made(carla, "c-bot")
    arena.change_event(freeze_at=_when(seconds=-1))
    first = _open_session(arena.client, bot, "5")
    assert first.status_code == 200, first.get_json()
    error(_open_session(arena.client, bot, "6"), 409, "frozen")


def test_the_open_arena_has_no_freeze(arena) -> None:
    carla = arena.account("carla")
    bot = arena.made(carla, "free-bot", in_event=False)
    arena.change_event(freeze_at=_when(seconds=-1))
    assert _open_session(arena.client, bot, "1").status_code == 200
    assert _open_session(arena.client, bot, "2").status_code == 200


# -- the registration window ------------------------------------------------------------------
def test_registration_before_it_opens_and_after_it_closes(arena) -> None:
    carla = arena.account("carla")
    arena.change_event(registration_opens_at=_when(hours=1))
    error(arena.bot(carla, "early"), 409, "opens at")
    assert arena.bot(arena.organiser, "reference-1").status_code == 201
    arena.change_event(
        registration_opens_at=_when(hours=-2), registration_closes_at=_when(hours=-1)
    )
    error(arena.bot(carla, "late"), 409, "closed at")
    assert arena.bot(arena.organiser, "reference-2").status_code == 201
    arena.change_event(registration_closes_at=_when(hours=1))
    assert arena.bot(carla, "in-time").status_code == 201
    event = arena.client.get(f"/api/events/{arena.event['id']}").get_json()
    assert event["registration_open"] is True


def test_a_window_that_closes_before_it_opens_is_refused(arena) -> None:
    answer = arena.client.patch(
        f"/api/events/{arena.event['id']}",
        json={"registration_opens_at": _when(hours=2), "registration_closes_at": _when(hours=1)},
        headers=auth(arena.organiser),
    )
    error(answer, 400, "close after it opens")


# -- the bots one account may have --------------------------------------------------------------
def test_the_limit_per_account_and_a_deleted_bot_frees_its_place(arena) -> None:
    carla, dmitri = arena.account("carla"), arena.account("dmitri")
    first = arena.made(carla, "c-1")
    error(arena.bot(carla, "c-2"), 409, "1 bot(s) per account", "you have 1")
    assert arena.bot(dmitri, "d-1").status_code == 201  # the limit is per account
    assert arena.bot(carla, "c-open", in_event=False).status_code == 201  # not the event's
    gone = arena.client.delete(f"/api/bots/{first['id']}", headers=auth(carla))
    assert gone.status_code == 204
    assert arena.bot(carla, "c-2").status_code == 201
    arena.change_event(bots_per_account=2)
    assert arena.bot(carla, "c-3").status_code == 201
    error(arena.bot(carla, "c-4"), 409, "2 bot(s) per account")


def test_organisers_have_no_limit(arena) -> None:
    for n in range(3):
        assert arena.bot(arena.organiser, f"reference-{n}").status_code == 201


def test_a_bot_enters_only_an_event_its_account_joined(arena) -> None:
    stranger = arena.account("sam", join=False)
    error(arena.bot(stranger, "s-bot"), 403, "join event")
    error(arena.bot(arena.account("carla"), "c-bot", games=["president"]), 400, "plays cactus")


# -- events never mix -------------------------------------------------------------------------
def test_a_tournament_enters_only_its_events_bots(arena, enqueued) -> None:
    carla, dmitri = arena.account("carla"), arena.account("dmitri")
    c, d = arena.made(carla, "c-bot"), arena.made(dmitri, "d-bot")
    other = arena.client.post(
        "/api/events", json={"name": "B", "games": ["cactus"]}, headers=auth(arena.organiser)
    ).get_json()
    b_bot = arena.client.post(
        "/api/bots",
        json={"name": "b-bot", "connect": True, "games": ["cactus"], "event_id": other["id"]},
        headers=auth(arena.organiser),
    ).get_json()
    open_bot = arena.made(carla, "open-bot", in_event=False)
    event_id = arena.event["id"]
    for stranger in (b_bot, open_bot):
        body = tournament_body([c["id"], d["id"], stranger["id"]], event_id=event_id)
        answer = arena.client.post("/api/tournaments", json=body, headers=auth(arena.organiser))
        error(answer, 400, f"bot(s) {stranger['id']} do not play in event {event_id}")
    body = tournament_body([c["id"], open_bot["id"]])
    answer = arena.client.post("/api/tournaments", json=body, headers=auth(ADMIN))
    error(answer, 400, f"bot(s) {c['id']} do not play in the open arena")
    assert enqueued == []
    body = tournament_body([c["id"], d["id"]], event_id=event_id)
    made = arena.client.post("/api/tournaments", json=body, headers=auth(arena.organiser))
    assert made.status_code == 201, made.get_json()
    with arena.app.extensions["arena.db"].session() as session:
        events = {m.event_id for m in session.scalars(select(Match).where(Match.id.in_(enqueued)))}
    assert events == {event_id}  # its matches are the event's


def test_the_ladder_round_of_an_event_seats_only_its_bots(arena, info_bot, enqueued) -> None:
    url = info_bot(games=["cactus"])
    arena.change_event(bots_per_account=5)
    carla = arena.account("carla")
    in_event = {arena.made(carla, f"e-{n}", endpoint=f"{url}/e{n}")["id"] for n in range(4)}
    in_open = {arena.made(carla, f"o-{n}", in_event=False, endpoint=url)["id"] for n in range(4)}
    event_id = arena.event["id"]
    answer = arena.client.put(
        f"/api/events/{event_id}/ladders/cactus",
        json={"enabled": True, "seats_per_match": 2},
        headers=auth(arena.organiser),
    )
    assert answer.status_code == 200, answer.get_json()
    opened = arena.client.put(
        "/api/ladders/cactus", json={"enabled": True, "seats_per_match": 2}, headers=auth(ADMIN)
    )
    assert opened.status_code == 200, opened.get_json()
    config = arena.app.extensions["arena.config"]
    del enqueued[:]  # the bots' validation matches
    created = ladder.schedule_ladder(arena.app.extensions["arena.db"], config, seed=3)
    assert sorted(created) == sorted(enqueued) and len(created) == 4
    with arena.app.extensions["arena.db"].session() as session:
        for match in session.scalars(select(Match).where(Match.id.in_(created))):
            seated = {seat.bot_id for seat in match.seats}
            assert seated <= (in_event if match.event_id == event_id else in_open), match.id
            assert match.event_id in (event_id, None) and match.kind == "ladder"
        counted = {
            e: sum(
                1
                for m in session.scalars(select(Match).where(Match.kind == "ladder"))
                if m.event_id == e
            )
            for e in (event_id, None)
        }
    assert counted == {event_id: 2, None: 2}


# -- an endpoint is one bot's within an event ------------------------------------------------
def test_an_endpoint_is_unique_within_an_event(arena, info_bot) -> None:
    url = info_bot(games=["cactus"])
    carla, dmitri = arena.account("carla"), arena.account("dmitri")
    first = arena.made(carla, "c-bot", endpoint=url)
    error(arena.bot(dmitri, "copy", endpoint=url), 409, f"bot {first['id']}", "this endpoint")
    # outside the event it is no one's business
    assert arena.bot(dmitri, "open-copy", in_event=False, endpoint=url).status_code == 201
    other = arena.made(dmitri, "d-bot", endpoint=info_bot(games=["cactus"]))
    moved = arena.client.patch(
        f"/api/bots/{other['id']}", json={"endpoint": url}, headers=auth(dmitri)
    )
    error(moved, 409, "this endpoint")
    # a bot given its own endpoint again is no conflict
    same = arena.client.patch(
        f"/api/bots/{first['id']}", json={"endpoint": url}, headers=auth(carla)
    )
    assert same.status_code == 200, same.get_json()
    # a deleted bot's endpoint is free again
    arena.client.delete(f"/api/bots/{first['id']}", headers=auth(carla))
    assert arena.bot(dmitri, "d-2", endpoint=url).status_code == 409  # one bot per account
    arena.change_event(bots_per_account=2)
    assert arena.bot(dmitri, "d-2", endpoint=url).status_code == 201


# -- attaching a bot registered before its owner had an account --------------------------
def test_attach_an_old_bot_with_its_owner_token(arena) -> None:
    old = arena.client.post(
        "/api/bots", json={"name": "old", "owner": "ann", "connect": True, "games": ["cactus"]}
    )
    assert old.status_code == 201, old.get_json()  # open registration (the local profile)
    old = old.get_json()
    other = arena.client.post(
        "/api/bots", json={"name": "other", "owner": "bob", "connect": True, "games": ["cactus"]}
    ).get_json()
    ann, bob = arena.account("ann", join=False), arena.account("bob", join=False)
    path = f"/api/bots/{old['id']}/attach"
    error(
        arena.client.post(path, json={"owner_token": other["owner_token"]}, headers=auth(ann)),
        403,
        "not bot",
    )
    error(arena.client.post(path, json={"owner_token": old["owner_token"]}), 401, "account")
    attached = arena.client.post(path, json={"owner_token": old["owner_token"]}, headers=auth(ann))
    assert attached.status_code == 200, attached.get_json()
    mine = arena.client.get("/api/bots?mine=true", headers=auth(ann)).get_json()
    assert [b["id"] for b in mine] == [old["id"]]
    # the account manages it now; the owner token still does
    renamed = arena.client.patch(
        f"/api/bots/{old['id']}", json={"description": "mine"}, headers=auth(ann)
    )
    assert renamed.status_code == 200
    kept = arena.client.patch(
        f"/api/bots/{old['id']}", json={"description": "still"}, headers=auth(old["owner_token"])
    )
    assert kept.status_code == 200
    taken = arena.client.post(path, json={"owner_token": old["owner_token"]}, headers=auth(bob))
    error(taken, 409, "another account")
    assert arena.client.get("/api/bots?mine=true", headers=auth(bob)).get_json() == []


# -- the bot list's filters --------------------------------------------------------------------
def test_mine_needs_an_account(arena) -> None:
    error(arena.client.get("/api/bots?mine=true"), 401, "account")
    owned = arena.client.post(
        "/api/bots", json={"name": "x", "owner": "x", "connect": True, "games": ["cactus"]}
    ).get_json()
    error(arena.client.get("/api/bots?mine=true", headers=auth(owned["owner_token"])), 403)
    error(arena.client.get("/api/bots?mine=true", headers=auth("made-up")), 401, "not valid")


def test_the_bot_lists_filters(arena) -> None:
    carla, dmitri = arena.account("carla"), arena.account("dmitri")
    arena.change_event(bots_per_account=3)
    alpha = arena.made(carla, "Alpha-One")
    beta = arena.made(carla, "beta-one", in_event=False)
    gamma = arena.made(dmitri, "Gamma")

    def names(query: str, token: str | None = None) -> list[str]:
        answer = arena.client.get(f"/api/bots?{query}", headers=auth(token) if token else {})
        assert answer.status_code == 200, answer.get_json()
        return [b["name"] for b in answer.get_json()]

    assert names("mine=true", carla) == ["Alpha-One", "beta-one"]
    assert names("mine=true", dmitri) == ["Gamma"]
    assert names("q=ONE") == ["Alpha-One", "beta-one"]  # a part of the name, any case
    assert names("q=ha-o") == ["Alpha-One"]
    assert names("owner=CARLA") == ["Alpha-One", "beta-one"]  # the owner, any case
    assert names("owner=carl") == []  # the whole owner, not a part
    assert names(f"event_id={arena.event['id']}") == ["Alpha-One", "Gamma"]
    assert names(f"event_id={arena.event['id']}&mine=true", carla) == ["Alpha-One"]
    assert names("q=one&mine=true", dmitri) == []
    assert {alpha["id"], beta["id"], gamma["id"]} <= {
        b["id"] for b in arena.client.get("/api/bots").get_json()
    }
    with arena.app.extensions["arena.db"].session() as session:
        assert session.get(Bot, beta["id"]).event_id is None
