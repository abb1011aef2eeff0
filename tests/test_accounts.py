"""Accounts: rotating a bot's owner token and signing secret, a signing secret its owner
chooses, and bot names that are unique without case and surrounding spaces (migration
0004 included)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from arenabot import make_server
from flask import Flask
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from arena.db import alembic_config
from arena.match.pools import Pools
from arena.models import Bot, Match, MatchSeat
from arena.services import hash_token
from arena.worker import play
from sample_bots.policy_bot import PolicyBot
from tests.support.api import auth, counts, error, register

OWN_SECRET = "my-own-secret-0123456789"


def stored(app: Flask, bot_id: int) -> Bot:
    with app.extensions["arena.db"].session() as session:
        return session.get(Bot, bot_id)


def rotate(client: Any, bot_id: int, token: str | None, body: Any = None) -> Any:
    headers = auth(token) if token else {}
    if body is None:
        return client.post(f"/api/bots/{bot_id}/rotate", headers=headers)
    return client.post(f"/api/bots/{bot_id}/rotate", json=body, headers=headers)


# -- rotation ----------------------------------------------------------------------------
def test_a_rotated_owner_token_replaces_the_old_one_at_once(app, client, info_bot):
    bot = register(client, info_bot())
    old = bot["owner_token"]
    response = rotate(client, bot["id"], old, {"rotate": ["owner_token"]})
    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    assert answer["rotated"] == ["owner_token"] and answer["id"] == bot["id"]
    assert "signing_secret" not in answer  # not rotated: not shown
    new = answer["owner_token"]
    assert new != old
    # the old token is refused everywhere, the new one works
    patch = {"description": "x"}
    error(client.patch(f"/api/bots/{bot['id']}", json=patch, headers=auth(old)), 401, "not valid")
    error(rotate(client, bot["id"], old, {"rotate": ["owner_token"]}), 401, "not valid")
    response = client.patch(f"/api/bots/{bot['id']}", json=patch, headers=auth(new))
    assert response.status_code == 200, response.get_json()
    row = stored(app, bot["id"])
    assert row.owner_token_hash == hash_token(new)
    assert row.signing_secret == bot["signing_secret"]  # unchanged
    assert "owner_token" not in client.get(f"/api/bots/{bot['id']}").get_json()


def test_without_a_body_both_are_rotated(app, client, info_bot):
    bot = register(client, info_bot())
    response = rotate(client, bot["id"], bot["owner_token"])
    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    assert answer["rotated"] == ["owner_token", "signing_secret"]
    assert answer["owner_token"] != bot["owner_token"]
    assert answer["signing_secret"] != bot["signing_secret"]
    row = stored(app, bot["id"])
    assert row.owner_token_hash == hash_token(answer["owner_token"])
    assert row.signing_secret == answer["signing_secret"]


def test_the_owner_may_choose_the_new_secret(app, client, info_bot):
    bot = register(client, info_bot())
    body = {"rotate": ["signing_secret"], "signing_secret": OWN_SECRET}
    response = rotate(client, bot["id"], bot["owner_token"], body)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["signing_secret"] == OWN_SECRET
    assert "owner_token" not in response.get_json()
    row = stored(app, bot["id"])
    assert row.signing_secret == OWN_SECRET
    assert row.owner_token_hash == hash_token(bot["owner_token"])  # unchanged


def test_only_the_owner_rotates(make_app, info_bot):
    app = make_app(organiser_token="the-organiser")
    client = app.test_client()
    url = info_bot()
    mine, theirs = register(client, url), register(client, url, "other")
    before = stored(app, mine["id"])
    response = rotate(client, mine["id"], None, {})
    assert response.headers["WWW-Authenticate"] == "Bearer"
    error(response, 401, "owner token")
    error(rotate(client, mine["id"], "nope", {}), 401, "not valid")
    error(rotate(client, mine["id"], theirs["owner_token"], {}), 403, "another owner")
    error(rotate(client, 999, mine["owner_token"], {}), 404)
    after = stored(app, mine["id"])
    assert (after.owner_token_hash, after.signing_secret) == (
        before.owner_token_hash,
        before.signing_secret,
    )
    # the admin (the organiser token) resets a lost owner token and hands it over
    reset = rotate(client, mine["id"], "the-organiser", {"rotate": ["owner_token"]})
    assert reset.status_code == 200, reset.get_json()
    assert stored(app, mine["id"]).owner_token_hash == hash_token(reset.get_json()["owner_token"])


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"rotate": []}, 422, "rotate"),
        ({"rotate": ["password"]}, 422, "rotate"),
        ({"rotate": "owner_token"}, 422, "rotate"),
        ({"rotate": ["owner_token"], "signing_secret": OWN_SECRET}, 422, "does not list"),
        ({"signing_secret": "short"}, 422, "16 to 128"),
        ({"signing_secret": "with a space in the middle"}, 422, "printable ASCII"),
        ({"signing_secret": 12345678901234567}, 422, "signing_secret"),
        ({"colour": "red"}, 422, "colour"),
        ({"signing_secret": "CURRENT"}, 400, "differ"),
    ],
)
def test_rotate_rejects_bad_input(app, client, info_bot, body, status, fragment):
    bot = register(client, info_bot())
    if body.get("signing_secret") == "CURRENT":
        body = {"signing_secret": bot["signing_secret"]}
    before = stored(app, bot["id"])
    error(rotate(client, bot["id"], bot["owner_token"], body), status, fragment)
    after = stored(app, bot["id"])
    assert (after.owner_token_hash, after.signing_secret) == (
        before.owner_token_hash,
        before.signing_secret,
    )


def test_a_deleted_bot_is_not_rotated(client, info_bot):
    bot = register(client, info_bot())
    assert client.delete(f"/api/bots/{bot['id']}", headers=auth(bot["owner_token"])).status_code
    error(rotate(client, bot["id"], bot["owner_token"], {}), 409, "deleted")


def test_rotate_is_in_the_openapi_document(client):
    spec = client.get("/api/openapi.json").get_json()
    operation = spec["paths"]["/api/bots/{bot_id}/rotate"]["post"]
    assert operation["security"] == [{"bearerAuth": []}]
    assert "requestBody" in operation and "200" in operation["responses"]
    assert "signing_secret" in spec["components"]["schemas"]["BotCreate"]["properties"]


# -- signing with the secret, as a worker plays a match ------------------------------------
@pytest.fixture
def arena(make_app, monkeypatch) -> Iterator[dict[str, Any]]:
    """An app and two SDK bots on loopback: ``given`` runs with the secret the arena made
    at registration, ``own`` was started with its own secret before it was registered."""
    app = make_app()
    pools = Pools()
    monkeypatch.setattr(play, "_pools", lambda: pools)
    client = app.test_client()
    with ExitStack() as stack:
        bots = {}
        for name, secret in (("given", None), ("own", OWN_SECRET)):
            server = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=secret)
            server.serve_in_background()
            stack.callback(server.close)
            body = {"name": name, "endpoint": server.url, "owner": "tests"}
            if secret:
                body["signing_secret"] = secret
            answer = client.post("/api/bots", json=body)
            assert answer.status_code == 201, answer.get_json()
            server.secret = answer.get_json()["signing_secret"]
            bots[name] = {**answer.get_json(), "server": server}
        yield {"app": app, "client": client, "bots": bots}
    pools.close()


def strikes(arena: dict[str, Any], seed: int) -> dict[str, int]:
    """Play a match between the two bots as a worker plays it: each bot's strikes."""
    app = arena["app"]
    database = app.extensions["arena.db"]
    given, own = arena["bots"]["given"]["id"], arena["bots"]["own"]["id"]
    with database.session() as session:
        match = Match(kind="ladder", game="cactus", seed=seed, rated=False)
        match.seats = [MatchSeat(seat=0, bot_id=given), MatchSeat(seat=1, bot_id=own)]
        session.add(match)
        session.flush()
        match_id = match.id
    assert play.play_match(database, app.extensions["arena.config"], match_id) == "recorded"
    with database.session() as session:
        seats = session.scalars(select(MatchSeat).where(MatchSeat.match_id == match_id))
        by_bot = {seat.bot_id: seat.strikes for seat in seats}
    return {"given": by_bot[given], "own": by_bot[own]}


def test_an_own_secret_is_stored_and_signs_the_matches(arena):
    own = arena["bots"]["own"]
    assert own["signing_secret"] == OWN_SECRET
    assert stored(arena["app"], own["id"]).signing_secret == OWN_SECRET
    assert strikes(arena, seed=1) == {"given": 0, "own": 0}


def test_after_a_rotation_the_arena_signs_with_the_new_secret(arena):
    client, given = arena["client"], arena["bots"]["given"]
    response = rotate(client, given["id"], given["owner_token"], {"rotate": ["signing_secret"]})
    assert response.status_code == 200, response.get_json()
    new_secret = response.get_json()["signing_secret"]
    # the bot still checks the old secret: it refuses (401) every request of the arena
    refused = strikes(arena, seed=2)
    assert refused["given"] > 0 and refused["own"] == 0
    given["server"].secret = new_secret  # the owner restarts the bot with the new one
    assert strikes(arena, seed=3) == {"given": 0, "own": 0}


# -- a secret chosen at registration -------------------------------------------------------
@pytest.mark.parametrize(
    ("secret", "fragment"),
    [
        ("fifteen-chars!!", "16 to 128"),
        ("s" * 129, "16 to 128"),
        ("sixteen and more chars", "printable ASCII"),
        ("tab\tinside-the-secret", "printable ASCII"),
        ("é" * 20, "printable ASCII"),
        (1234567890123456789, "Not a valid string"),
    ],
)
def test_register_refuses_a_bad_own_secret(app, client, info_bot, secret, fragment):
    body = {"name": "alpha", "owner": "ann", "endpoint": info_bot(), "signing_secret": secret}
    response = client.post("/api/bots", json=body)
    answer = error(response, 422, "signing_secret", fragment)
    assert "signing_secret" in answer["errors"]["json"]
    assert counts(app)["bots"] == 0


def test_the_shortest_and_longest_own_secrets_are_accepted(client, info_bot):
    url = info_bot()
    for name, secret in (("short", "!" + "a" * 14 + "~"), ("long", "x" * 128)):
        assert register(client, url, name, signing_secret=secret)["signing_secret"] == secret
    # null is no secret of one's own: the arena makes one
    made = register(client, url, "made", signing_secret=None)["signing_secret"]
    assert len(made) >= 40 and made != "None"


def test_the_registration_page_offers_an_own_secret_and_says_how(client):
    page = client.get("/bots/register").get_data(as_text=True)
    assert 'name="signing_secret"' in page
    assert "start your bot without a secret, register it here, then restart it" in page
    assert "/rotate" in page
    with client.get("/static/forms.js") as response:
        assert "payload.signing_secret" in response.get_data(as_text=True)


def test_the_bot_page_names_the_rotate_route(client, info_bot):
    bot = register(client, info_bot())
    page = client.get(f"/bots/{bot['id']}").get_data(as_text=True)
    assert f"POST /api/bots/{bot['id']}/rotate" in page
    assert bot["signing_secret"] not in page


# -- names ---------------------------------------------------------------------------------
def test_names_differing_only_in_case_or_spaces_are_the_same_bot(app, client, info_bot):
    url = info_bot()
    alpha = register(client, url, "alpha")
    before = counts(app)
    for name in (" Alpha ", "ALPHA", "alpha  ", "aLpHa"):
        body = {"name": name, "owner": "eve", "endpoint": url}
        error(client.post("/api/bots", json=body), 409, "already exists", "'alpha'")
    assert counts(app) == before
    # stored trimmed, with one space inside
    spaced = register(client, url, "  Big   Bot ")
    assert spaced["name"] == "Big Bot"
    assert stored(app, spaced["id"]).name == "Big Bot"
    body = {"name": "big bot", "owner": "eve", "endpoint": url}
    error(client.post("/api/bots", json=body), 409, "'Big Bot' already exists")
    # a rename to a taken name is refused; a bot may change the case of its own name
    path = f"/api/bots/{spaced['id']}"
    headers = auth(spaced["owner_token"])
    error(client.patch(path, json={"name": " ALPHA"}, headers=headers), 409, "'alpha'")
    assert client.get(path).get_json()["name"] == "Big Bot"
    response = client.patch(path, json={"name": "BIG bot "}, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["name"] == "BIG bot"
    # a deleted bot's name is free again (its matches keep showing it)
    client.delete(f"/api/bots/{alpha['id']}", headers=auth(alpha["owner_token"]))
    again = client.post("/api/bots", json={**body, "name": "Alpha"})
    assert again.status_code == 201, again.get_json()
    assert stored(app, alpha["id"]).name == "alpha"


def test_the_database_refuses_two_names_with_one_key(app):
    """What a lost race meets: the unique key, whatever the code checked before."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        session.add(
            Bot(
                name="delta",
                endpoint="http://b",
                owner="o",
                owner_token_hash="h",
                signing_secret="s",
                games=[],
            )
        )
    with pytest.raises(IntegrityError), database.session() as session:
        session.add(
            Bot(
                name=" DELTA",
                endpoint="http://b",
                owner="o",
                owner_token_hash="h",
                signing_secret="s",
                games=[],
            )
        )


# -- migration 0004 ------------------------------------------------------------------------
# (id, name, status) at revision 0003, and each name after 0004
OLD_BOTS = [
    (1, "alpha", "deleted", "alpha #1"),  # a deleted bot gives way, however old
    (2, "Alpha", "active", "Alpha"),  # the oldest bot of its key not deleted keeps it
    (3, "ALPHA ", "disabled", "ALPHA #3-2"),  # "ALPHA #3" is taken by bot 5
    (4, "beta ", "active", "beta"),  # trimmed
    (5, "Alpha #3", "active", "Alpha #3"),
    (6, "x" * 64, "deleted", "x" * 64),  # all deleted: the oldest keeps it
    (7, "X" * 64, "deleted", "X" * 61 + " #7"),  # shortened to stay within 64
    (8, "gamma", "active", "gamma"),
]


def test_the_migration_renames_colliding_names_as_documented(database_url: str):
    config = alembic_config(database_url)
    command.upgrade(config, "0003")
    engine = sa.create_engine(database_url)
    bots = sa.table(
        "bots", sa.column("id"), sa.column("name"), sa.column("name_key"), sa.column("status")
    )
    try:
        with engine.begin() as connection:
            for bot_id, name, status, _ in OLD_BOTS:
                connection.execute(
                    sa.text(
                        "INSERT INTO bots (id, name, endpoint, owner, owner_token_hash, "
                        "signing_secret, games, status, description, info, created_at, "
                        "updated_at) VALUES (:id, :name, 'http://b', 'o', 'h', 's', '[]', "
                        ":status, '', '{}', '2026-01-01', '2026-01-01')"
                    ),
                    {"id": bot_id, "name": name, "status": status},
                )
        command.upgrade(config, "0004")
        with engine.connect() as connection:
            rows = connection.execute(
                sa.select(bots.c.id, bots.c.name, bots.c.name_key).order_by(bots.c.id)
            ).all()
        assert [(i, n) for i, n, _ in rows] == [(i, new) for i, _, _, new in OLD_BOTS]
        assert all(key == name.casefold() for _, name, key in rows)
        with pytest.raises(IntegrityError), engine.begin() as connection:
            connection.execute(
                sa.text("UPDATE bots SET name = 'GAMMA', name_key = 'gamma' WHERE id = 4")
            )
        # the downgrade drops the key and keeps the names; upgrading again changes nothing
        command.downgrade(config, "0003")
        with engine.connect() as connection:
            columns = {c["name"] for c in sa.inspect(connection).get_columns("bots")}
            names = connection.scalars(sa.select(bots.c.name).order_by(bots.c.id)).all()
        assert "name_key" not in columns
        assert names == [new for _, _, _, new in OLD_BOTS]
        command.upgrade(config, "0004")
        with engine.connect() as connection:
            again = connection.execute(
                sa.select(bots.c.id, bots.c.name, bots.c.name_key).order_by(bots.c.id)
            ).all()
        assert again == rows
    finally:
        engine.dispose()
