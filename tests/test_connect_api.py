"""The bot's side of the connect transport (``/api/connect``) through the app: signed
sessions and polls, what is refused, sessions replaced and closed, draining; requests
handed to the web process's hub as a worker hands them (``arena.relay``)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.api import connect as connect_api
from arena.models import Bot, BotSession
from arena.relay.hub import Delivery
from arena.relay.internal import SIGNATURE, TIMESTAMP, signature

INFO = {"apiversion": "1", "name": "ada", "version": "2", "games": ["cactus"], "capacity": 1}


def register(client: FlaskClient, **fields: Any) -> dict[str, Any]:
    body = {"name": "ada", "owner": "ada", "games": ["cactus"], "connect": True, **fields}
    answer = client.post("/api/bots", json=body)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def signed(client: FlaskClient, path: str, secret: str, body: dict[str, Any], **kw: Any):
    """POST ``body`` signed with ``secret`` (a fresh request_id unless it has one)."""
    body = {"request_id": os.urandom(16).hex(), **body}
    raw = json.dumps(body).encode()
    ts = kw.pop("timestamp", str(int(time.time())))
    headers = {TIMESTAMP: ts, SIGNATURE: signature(secret, ts, raw)}
    return client.post(path, data=raw, headers=headers, content_type="application/json", **kw)


def open_session(client: FlaskClient, bot: dict[str, Any], info: dict | None = None) -> str:
    answer = signed(
        client,
        "/api/connect/session",
        bot["signing_secret"],
        {"bot_id": bot["id"], "info": info or INFO},
    )
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()["session"]


def poll(client: FlaskClient, bot: dict[str, Any], session: str, **fields: Any):
    body = {"bot_id": bot["id"], "session": session, "answers": [], **fields}
    return signed(client, "/api/connect/poll", bot["signing_secret"], body)


def hand(app: Flask, bot_id: int, request_id: str, seconds: float = 5.0) -> Delivery:
    """A request as a worker hands it to the bot's home (here, this app's relay)."""
    return Delivery(
        bot_id=bot_id,
        request_id=request_id,
        path="/act",
        body=json.dumps({"request_id": request_id, "view": {}}).encode(),
        timestamp="1700000000",
        signature="sha256=signed-by-the-worker",
        deadline=time.monotonic() + seconds,
    )


def in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()), daemon=True)
    thread.start()
    return thread, out


@pytest.fixture
def bot(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.5)  # an empty poll is not held long
    return register(client)


def test_a_bot_registered_to_connect_has_no_endpoint_and_is_told_what_it_needs(client, bot):
    assert set(bot) >= {"id", "signing_secret", "owner_token"} and bot["connect"] is True
    detail = client.get(f"/api/bots/{bot['id']}").get_json()
    assert detail["connection"]["connected"] is False and "endpoint" not in detail
    answer = client.post("/api/bots", json={"name": "b", "owner": "b", "connect": True})
    assert answer.status_code == 422 and "games" in answer.get_json()["errors"]["json"]
    both = {
        "name": "c",
        "owner": "c",
        "games": ["cactus"],
        "connect": True,
        "endpoint": "http://127.0.0.1:9",
    }
    assert client.post("/api/bots", json=both).status_code == 422


def test_a_request_goes_out_in_a_poll_and_its_answer_comes_back_in_the_next(app, client, bot):
    session = open_session(client, bot)
    detail = client.get(f"/api/bots/{bot['id']}").get_json()
    assert detail["connection"]["connected"] is True
    assert detail["connection"]["capacity"] == 1 and detail["info"]["capacity"] == 1
    request = hand(app, bot["id"], "a" * 32)
    hub = app.extensions["arena.relay"].hub
    worker, _ = in_thread(lambda: hub.deliver(request))
    answer = poll(client, bot, session)
    assert answer.status_code == 200, answer.get_json()
    [wire] = answer.get_json()["requests"]
    assert wire == request.wire()  # the webhook request, its own signature with it
    answer = poll(
        client,
        bot,
        session,
        answers=[{"request_id": "a" * 32, "status": 200, "body": {"action": {"type": "draw"}}}],
    )
    worker.join(5)
    assert request.outcome == "answer" and json.loads(request.answer) == {
        "action": {"type": "draw"}
    }


def test_what_is_not_the_bot_is_refused(client, bot):
    secret = bot["signing_secret"]
    body = {"bot_id": bot["id"], "info": INFO}
    assert signed(client, "/api/connect/session", "x" * 32, body).status_code == 401
    old = str(int(time.time()) - 3600)
    assert signed(client, "/api/connect/session", secret, body, timestamp=old).status_code == 401
    unsigned = client.post("/api/connect/session", json={**body, "request_id": "b" * 32})
    assert unsigned.status_code == 401
    once = {**body, "request_id": "c" * 32}
    assert signed(client, "/api/connect/session", secret, once).status_code == 200
    replayed = signed(client, "/api/connect/session", secret, once)
    assert replayed.status_code == 401 and "replayed" in replayed.get_json()["message"]
    nobody = {"bot_id": 99999, "info": INFO}
    assert signed(client, "/api/connect/session", secret, nobody).status_code == 404
    wrong = signed(client, "/api/connect/session", secret, {**body, "info": {**INFO, "games": []}})
    assert wrong.status_code == 400


def test_a_webhook_bot_cannot_open_a_session(client, info_bot):
    webhook = client.post(
        "/api/bots", json={"name": "web", "owner": "o", "endpoint": info_bot()}
    ).get_json()
    answer = signed(
        client,
        "/api/connect/session",
        webhook["signing_secret"],
        {"bot_id": webhook["id"], "info": INFO},
    )
    assert answer.status_code == 409 and '"connect": true' in answer.get_json()["message"]


def test_a_second_session_replaces_the_first_whose_polls_are_told_why(app, client, bot):
    first = open_session(client, bot)
    second = open_session(client, bot)
    answer = poll(client, bot, first)
    assert answer.status_code == 409 and answer.get_json()["reason"] == "replaced"
    with app.extensions["arena.db"].session() as session:
        row = session.get(BotSession, bot["id"])
        assert row.token == second and row.replaced == 1
    detail = client.get(f"/api/bots/{bot['id']}").get_json()
    assert detail["connection"]["sessions_replaced"] == 1
    closed = signed(
        client,
        "/api/connect/close",
        bot["signing_secret"],
        {"bot_id": bot["id"], "session": second},
    )
    assert closed.status_code == 204
    answer = poll(client, bot, second)
    assert answer.status_code == 409 and answer.get_json()["reason"] == "closed"
    assert client.get(f"/api/bots/{bot['id']}").get_json()["connection"]["connected"] is False


def test_a_draining_bot_is_told_at_once_when_nothing_is_left(client, bot):
    session = open_session(client, bot)
    started = time.monotonic()
    answer = poll(client, bot, session, draining=True)
    assert answer.get_json() == {"requests": [], "playing": 0}
    assert time.monotonic() - started < 5  # not held for poll_seconds


def test_a_bot_moves_between_the_transports(app, client, bot, info_bot):
    token = {"Authorization": f"Bearer {bot['owner_token']}"}
    moved = client.patch(f"/api/bots/{bot['id']}", json={"endpoint": info_bot()}, headers=token)
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["connect"] is False
    back = client.patch(f"/api/bots/{bot['id']}", json={"connect": True}, headers=token)
    assert back.status_code == 200 and back.get_json()["connect"] is True
    with app.extensions["arena.db"].session() as session:
        assert session.get(Bot, bot["id"]).endpoint is None


def test_organisers_see_which_connect_bots_are_offline_and_bot_pages_show_presence(
    client, bot, info_bot, enqueued
):
    """The tournament API and form say which chosen connect bots are not connected; the
    bot page says whether it is connected, with what SDK and capacity."""
    web = client.post(
        "/api/bots", json={"name": "web", "owner": "o", "endpoint": info_bot(games=["cactus"])}
    ).get_json()
    form = client.get("/tournaments/new").get_data(as_text=True)
    assert form.count('class="badge warn offline"') == 1  # ada, never connected
    page = client.get(f"/bots/{bot['id']}").get_data(as_text=True)
    assert "connects out to the arena" in page and "not connected" in page
    assert "connects out" not in client.get(f"/bots/{web['id']}").get_data(as_text=True)

    created = client.post(
        "/api/tournaments",
        json={
            "name": "t",
            "game": "cactus",
            "bot_ids": [web["id"], bot["id"]],
            "seats_per_match": 2,
            "games_per_pairing": 2,
        },
    ).get_json()
    assert created["offline_bot_ids"] == [bot["id"]]
    page = client.get(f"/tournaments/{created['id']}").get_data(as_text=True)
    assert "Not connected now" in page and f"/bots/{bot['id']}" in page

    open_session(client, bot, {**INFO, "capacity": 3})
    assert client.get(f"/api/tournaments/{created['id']}").get_json()["offline_bot_ids"] == []
    assert "Not connected now" not in client.get(f"/tournaments/{created['id']}").get_data(
        as_text=True
    )
    assert 'class="badge warn offline"' not in client.get("/tournaments/new").get_data(as_text=True)
    page = client.get(f"/bots/{bot['id']}").get_data(as_text=True)
    assert ">connected</span>" in page and "takes 3 requests at once" in page


def test_a_bot_spinning_polls_is_told_to_slow_down_but_never_while_it_answers(
    client, bot, monkeypatch
):
    """Polls that carry no answer are limited per bot and minute (429, which the SDK waits
    on); a poll carrying answers is always taken, and so is a draining one."""
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(connect_api, "IDLE_POLLS_PER_MINUTE", 3)
    session = open_session(client, bot)  # capacity 1: 3 + 2 a minute
    assert [poll(client, bot, session).status_code for _ in range(5)] == [200] * 5
    refused = poll(client, bot, session)
    assert refused.status_code == 429
    assert "at most 5 a minute" in refused.get_json()["message"]
    answer = {"request_id": "c" * 32, "status": 200, "body": {"action": 1}}
    assert poll(client, bot, session, answers=[answer]).status_code == 200
    assert poll(client, bot, session, draining=True).status_code == 200


def test_each_request_handed_forgives_one_idle_poll(app, client, bot, monkeypatch) -> None:
    """A client that keeps a poll open while it thinks (a person's page) polls once with
    no answer after each request it takes: those polls do not count against the limit."""
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(connect_api, "IDLE_POLLS_PER_MINUTE", 3)
    session = open_session(client, bot)  # capacity 1: 3 + 2 a minute
    hub = app.extensions["arena.relay"].hub
    for i in range(8):  # far more polls without answers than the limit, each taking a request
        request = hand(app, bot["id"], f"{i:032x}")
        worker, _ = in_thread(lambda request=request: hub.deliver(request))
        taken = poll(client, bot, session)
        assert taken.status_code == 200 and len(taken.get_json()["requests"]) == 1
        answer = {"request_id": f"{i:032x}", "status": 200, "body": {"action": 1}}
        assert poll(client, bot, session, answers=[answer]).status_code == 200
        worker.join(5)
    # the forgiveness is only for requests taken: a client spinning is still told to wait
    assert [poll(client, bot, session).status_code for _ in range(6)][-1] == 429


POLL_CASES = [
    {"bot_id": 3, "request_id": "a" * 32, "session": "s"},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s", "answers": [], "draining": True},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s" * 64,
     "answers": [{"request_id": "b" * 32, "status": 200, "body": {"action": {"type": "draw"}}}]},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s",
     "answers": [{"request_id": "b" * 32, "status": 599, "body": 0}] * 64},
    # what the fast check leaves to the schema: wrong, or unusual but accepted
    {"bot_id": True, "request_id": "a" * 32, "session": "s"},
    {"bot_id": 0, "request_id": "a" * 32, "session": "s"},
    {"bot_id": 3, "request_id": "A" * 32, "session": "s"},
    {"bot_id": 3, "request_id": "a" * 31, "session": "s"},
    {"bot_id": 3, "request_id": "a" * 32, "session": ""},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s" * 65},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s", "draining": "true"},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s", "extra": 1},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s",
     "answers": [{"request_id": "b" * 32, "status": 99, "body": {}}]},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s",
     "answers": [{"request_id": "b" * 32, "status": 200, "body": None}]},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s",
     "answers": [{"request_id": "b" * 32, "status": 200}]},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s",
     "answers": [{"request_id": "b" * 32, "status": 200, "body": 1, "more": 2}]},
    {"bot_id": 3, "request_id": "a" * 32, "session": "s",
     "answers": [{"request_id": "b" * 32, "status": 200, "body": 1}] * 65},
    {"bot_id": 3, "request_id": "a" * 32},
    [],
]  # fmt: skip


@pytest.mark.parametrize("data", POLL_CASES)
def test_a_poll_s_fast_check_accepts_only_what_its_schema_loads_the_same(data: Any) -> None:
    """The poll skips marshmallow when its fast check accepts the body: whatever it
    accepts, the schema loads to the same value; whatever else is judged by the schema."""
    from marshmallow import ValidationError

    fast = connect_api.Poll.fast_load(data)
    try:
        loaded = connect_api.Poll().load(data)
    except ValidationError:
        loaded = None
    if fast is not None:
        assert fast == loaded
    assert (fast is None) == (POLL_CASES.index(data) >= 4)


def test_a_poll_the_fast_check_leaves_is_judged_by_its_schema(client, bot) -> None:
    """A malformed poll is refused with the schema's message, field by field."""
    session = open_session(client, bot)
    wrong = poll(client, bot, session, answers=[{"request_id": "b" * 32, "status": 99, "body": 1}])
    assert wrong.status_code == 422
    assert "answers" in wrong.get_json()["errors"]["json"]
    late = poll(client, bot, session, draining="maybe")  # not a boolean marshmallow takes
    assert late.status_code == 422 and "draining" in late.get_json()["message"]
    assert poll(client, bot, session, draining="true").status_code == 200  # one it takes
