"""Every new bot and every new version plays a validation match against the house bot
before any tournament: a webhook bot at registration and when its ``GET /`` tells of a
new version, a bot that connects out as it first connects and when its session declares
a new version, a hosted bot's new code.  The verdict is on the bot (API and page), a
failure is told to its account, and its forfeits never count toward a pause."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from arenabot import make_server
from sqlalchemy import select

from arena.match.pools import Pools
from arena.models import Account, Bot, Match, Notice
from arena.worker import play as play_module
from sample_bots.policy_bot import PolicyBot
from tests.support.api import auth
from tests.test_connect_api import open_session

SECRET = "the-secret-the-bot-was-given-0123"


@pytest.fixture
def arena(make_app, enqueued, monkeypatch) -> Iterator[dict[str, Any]]:
    app = make_app()
    pools = Pools()
    monkeypatch.setattr(play_module, "_pools", lambda: pools)
    with ExitStack() as stack:

        def serve(secret: str, version: str = "1") -> tuple[Any, Any]:
            bot = PolicyBot("cactus", "random")
            bot.version = version
            server = make_server(bot, "127.0.0.1", 0, secret=secret)
            server.serve_in_background()
            stack.callback(server.close)
            return bot, server

        yield {"app": app, "client": app.test_client(), "enqueued": enqueued, "serve": serve}
    pools.close()


def register(client, url: str, name: str = "ada") -> dict[str, Any]:
    body = {"name": name, "endpoint": url, "owner": "ada", "signing_secret": SECRET}
    answer = client.post("/api/bots", json=body)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def play(app, match_id: int) -> None:
    database = app.extensions["arena.db"]
    assert play_module.play_match(database, app.extensions["arena.config"], match_id) == "recorded"


def test_a_webhook_bot_plays_its_validation_match_at_registration_and_passes(arena):
    app, client, enqueued = arena["app"], arena["client"], arena["enqueued"]
    _, server = arena["serve"](SECRET)
    bot = register(client, server.url)
    assert len(enqueued) == 1
    assert bot["validation"] == {"status": "validating", "reason": None, "match_id": enqueued[0]}
    with app.extensions["arena.db"].session() as session:
        match = session.get(Match, enqueued[0])
        assert (match.kind, match.rated, match.tournament_id) == ("validation", False, None)
        assert match.seats[0].bot_id == bot["id"]

    play(app, enqueued[0])
    shown = client.get(f"/api/bots/{bot['id']}").get_json()
    assert shown["validation"] == {"status": "passed", "reason": None, "match_id": enqueued[0]}
    page = client.get(f"/bots/{bot['id']}").get_data(as_text=True)
    assert "Validation" in page and f'href="/matches/{enqueued[0]}"' in page


def test_a_bot_with_the_wrong_secret_fails_is_told_and_its_next_version_is_validated(arena):
    app, client, enqueued = arena["app"], arena["client"], arena["enqueued"]
    policy, server = arena["serve"]("a-secret-the-student-mistyped-0123")
    bot = register(client, server.url)
    database = app.extensions["arena.db"]
    with database.session() as session:  # the bot belongs to an account, which is told
        account = Account(name="ada", password_hash="-", role="contestant")
        session.add(account)
        session.flush()
        session.get(Bot, bot["id"]).account_id = account.id

    play(app, enqueued[0])
    shown = client.get(f"/api/bots/{bot['id']}").get_json()
    assert shown["validation"]["status"] == "failed"
    assert shown["validation"]["match_id"] == enqueued[0]
    assert "HTTP 401: the bot refused the arena's signature" in shown["validation"]["reason"]
    # information, not a sanction: it still plays, and the forfeit is not counted
    assert shown["status"] == "active" and shown["forfeit_streak"] == 0
    with database.session() as session:
        notices = session.scalars(select(Notice).where(Notice.bot_id == bot["id"])).all()
        assert [(n.kind, n.match_id, n.account_id) for n in notices] == [
            ("validation_failed", enqueued[0], account.id)
        ]
        assert "HTTP 401" in notices[0].text
    page = client.get(f"/bots/{bot['id']}").get_data(as_text=True)
    assert "failed" in page and "refused the arena&#39;s signature" in page

    # fixed and started again with a new version: the check of its GET / validates it
    server.secret, policy.version = SECRET, "2"
    answer = client.patch(
        f"/api/bots/{bot['id']}", json={"endpoint": server.url}, headers=auth(bot["owner_token"])
    )
    assert answer.status_code == 200, answer.get_json()
    assert len(enqueued) == 2
    assert answer.get_json()["validation"]["status"] == "validating"
    play(app, enqueued[1])
    shown = client.get(f"/api/bots/{bot['id']}").get_json()
    assert shown["validation"] == {"status": "passed", "reason": None, "match_id": enqueued[1]}

    # the same endpoint and version again, after it passed: nothing new to validate
    answer = client.patch(
        f"/api/bots/{bot['id']}", json={"endpoint": server.url}, headers=auth(bot["owner_token"])
    )
    assert answer.status_code == 200 and len(enqueued) == 2


def test_a_bot_that_connects_out_is_validated_as_it_first_connects_and_per_version(arena):
    client, enqueued = arena["client"], arena["enqueued"]
    made = client.post(
        "/api/bots", json={"name": "bo", "owner": "bo", "games": ["cactus"], "connect": True}
    )
    bot = made.get_json()
    assert bot["validation"] is None and enqueued == []  # nothing to play before it connects

    info = {"apiversion": "1", "name": "bo", "version": "1", "games": ["cactus"]}
    open_session(client, bot, info)
    assert len(enqueued) == 1
    shown = client.get(f"/api/bots/{bot['id']}").get_json()
    assert shown["validation"] == {"status": "validating", "reason": None, "match_id": enqueued[0]}
    open_session(client, bot, info)  # connected again with the same version
    assert len(enqueued) == 1
    open_session(client, bot, {**info, "version": "2"})
    assert len(enqueued) == 2
    shown = client.get(f"/api/bots/{bot['id']}").get_json()
    assert shown["validation"]["match_id"] == enqueued[1]


def test_a_hosted_bot_s_new_version_shows_on_the_bot_as_for_every_bot(arena):
    client, enqueued = arena["client"], arena["enqueued"]
    made = client.post(
        "/api/bots", json={"name": "cy", "owner": "cy", "games": ["cactus"], "hosted": True}
    )
    bot = made.get_json()
    assert bot["validation"] is None and enqueued == []
    code = b"def act(view, legal_actions):\n    return legal_actions[0]\n"
    answer = client.put(
        f"/api/bots/{bot['id']}/code",
        data=code,
        content_type="text/x-python",
        headers=auth(bot["owner_token"]),
    )
    assert answer.status_code == 202, answer.get_json()
    shown = client.get(f"/api/bots/{bot['id']}").get_json()
    assert shown["validation"] == {"status": "validating", "reason": None, "match_id": enqueued[0]}
    assert answer.get_json()["match_id"] == enqueued[0]
