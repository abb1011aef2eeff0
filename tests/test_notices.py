"""Notices: each kind raised where it happens (a qualifier played as the workers record
it: faults, a pause after forfeits, grades, the end; an organiser's pause), the list and
its read marks through the API, the badge and the list on the pages, where notices go
(``PATCH /api/accounts/me``), a signed delivery to a loopback webhook in the shape Slack
and Discord take, the address policy on a webhook, and a mail to a local SMTP server."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from unittest import mock

import pytest
from aiosmtpd.controller import Controller
from arenabot.protocol import verify
from flask import Flask
from sqlalchemy import select

from arena.config import ConfigError, from_env
from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Account, Match, Notice, Tournament
from arena.services import notices
from arena.worker import notices as delivery
from arena.worker import play, refits
from tests.support.api import auth, error
from tests.support.faults import Down

ORGANISER = "organiser-token-of-the-notices"
PASSWORD = "a long enough password 1"


def sign_up(client: Any, name: str, **body: Any) -> dict[str, str]:
    response = client.post("/api/accounts", json={"name": name, "password": PASSWORD, **body})
    assert response.status_code == 201, response.get_json()
    return auth(response.get_json()["token"])


def listed(client: Any, who: dict[str, str], **query: Any) -> list[dict[str, Any]]:
    response = client.get("/api/accounts/me/notices", query_string=query, headers=who)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def qualifier(make_app: Callable[..., Flask], info_bot: Callable[..., str], enqueued: list[int]):
    """olga's event: her bot "ref" (down: it forfeits) against dee's "ace" (plays) and
    eve's "dud" (down), in a qualifier olga starts (4 matches each, mean score 0.8)."""
    app = make_app(organiser_token=ORGANISER, rate_limits=False)
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
    dee = sign_up(client, "dee", join_code=event["join_code"])
    eve = sign_up(client, "eve", join_code=event["join_code"])
    ids = {}
    for name, who in (("ref", olga), ("ace", dee), ("dud", eve)):
        body = {"name": name, "endpoint": info_bot(), "event_id": event["id"], "games": ["cactus"]}
        response = client.post("/api/bots", json=body, headers=who)
        assert response.status_code == 201, response.get_json()
        ids[name] = response.get_json()["id"]
    enqueued.clear()
    body = {
        "name": "qualifier",
        "game": "cactus",
        "event_id": event["id"],
        "format": "qualifier",
        "bot_ids": list(ids.values()),
        "challenger_ids": [ids["ace"], ids["dud"]],
        "seats_per_match": 2,
        "matches_per_bot": 4,
        "pass_rule": {"kind": "score", "min_score": 0.8},
    }
    response = client.post("/api/tournaments", json=body, headers=olga)
    assert response.status_code == 201, response.get_json()
    return {
        "app": app,
        "client": client,
        "ids": ids,
        "who": {"olga": olga, "dee": dee, "eve": eve},
        "tournament": response.get_json(),
        "match_ids": list(enqueued),
    }


def play_all(app: Flask, match_ids: list[int], names: dict[int, str]) -> None:
    """Each match played with in-process clients ("ace" plays, the others are down) and
    saved as a worker saves it."""
    database = app.extensions["arena.db"]
    for match_id in match_ids:
        with database.session() as session:
            match = session.get(Match, match_id)
            match.status = "running"
            seated, seed = [names[s.bot_id] for s in match.seats], match.seed
        clients = [
            PolicyClient(make_policy("cactus", "random", policy_rng(seed, seat)), name)
            if name == "ace"
            else Down(name)
            for seat, name in enumerate(seated)
        ]
        record = Referee(max_strikes=3).run("cactus", clients, seed)
        with mock.patch.object(refits.refit_ratings, "delay"):
            assert play.save_result(database, match_id, record)


def kinds(items: list[dict[str, Any]]) -> dict[str, int]:
    counted: dict[str, int] = {}
    for item in items:
        counted[item["kind"]] = counted.get(item["kind"], 0) + 1
    return counted


def test_a_qualifier_tells_each_account_what_happened_where_it_happened(qualifier):
    app, client, ids, who = (qualifier[k] for k in ("app", "client", "ids", "who"))
    tournament_id = qualifier["tournament"]["id"]
    with app.extensions["arena.db"].session() as session:
        olga_id = session.scalar(select(Account.id).where(Account.name == "olga"))
        assert session.get(Tournament, tournament_id).created_by == olga_id
    assert all(listed(client, w) == [] for w in who.values())

    play_all(app, qualifier["match_ids"], {v: k for k, v in ids.items()})

    eve = listed(client, who["eve"])
    # one faults notice despite four bad matches (at most one an hour, a pause counts),
    # the pause after three forfeits in a row, the failed grade, the end
    assert kinds(eve) == {
        "bot_faults": 1,
        "bot_paused": 1,
        "grade_decided": 1,
        "tournament_finished": 1,
    }
    assert [n["created_at"] for n in eve] == sorted((n["created_at"] for n in eve), reverse=True)
    by_kind = {n["kind"]: n for n in eve}
    faults = by_kind["bot_faults"]
    assert faults["bot_id"] == ids["dud"] and faults["match_id"] in qualifier["match_ids"]
    assert "dud" in faults["text"] and "forfeited" in faults["text"]
    paused = by_kind["bot_paused"]
    assert paused["bot_id"] == ids["dud"] and "3 forfeits in a row" in paused["text"]
    grade = by_kind["grade_decided"]
    assert grade["bot_id"] == ids["dud"] and grade["tournament_id"] == tournament_id
    assert "did not pass" in grade["text"]
    assert by_kind["tournament_finished"]["tournament_id"] == tournament_id
    assert "dud" in by_kind["tournament_finished"]["text"]
    assert not any(n["read"] for n in eve)

    dee = listed(client, who["dee"])
    assert kinds(dee) == {"grade_decided": 1, "tournament_finished": 1}
    assert "ace passed" in next(n["text"] for n in dee if n["kind"] == "grade_decided")
    # olga started it and owns "ref": one notice of its end; ref is no challenger
    olga = listed(client, who["olga"])
    assert kinds(olga)["tournament_finished"] == 1 and "grade_decided" not in kinds(olga)


def test_an_organiser_s_pause_is_a_notice_to_the_bot_s_owner(qualifier):
    client, ids, who = qualifier["client"], qualifier["ids"], qualifier["who"]
    response = client.patch(
        f"/api/bots/{ids['ace']}", json={"status": "paused"}, headers=who["olga"]
    )
    assert response.status_code == 200, response.get_json()
    [notice] = listed(client, who["dee"])
    assert notice["kind"] == "bot_paused" and notice["bot_id"] == ids["ace"]
    assert "paused by an organiser" in notice["text"]
    # a refused change leaves nothing behind
    refused = client.patch(f"/api/bots/{ids['dud']}", json={"status": "paused"}, headers=who["eve"])
    assert refused.status_code == 403
    assert listed(client, who["eve"]) == []


def add_notices(app: Flask, name: str, n: int) -> list[int]:
    with app.extensions["arena.db"].session() as session:
        account_id = session.scalar(select(Account.id).where(Account.name == name))
        made = [notices.notify(session, account_id, "bot_faults", f"notice {i}") for i in range(n)]
        session.flush()
        return [m.id for m in made]


def test_the_notices_are_listed_newest_first_by_page_and_marked_read(app: Flask):
    client = app.test_client()
    ann, bob = sign_up(client, "ann"), sign_up(client, "bob")
    mine, theirs = add_notices(app, "ann", 3), add_notices(app, "bob", 1)

    response = client.get("/api/accounts/me/notices?page_size=2", headers=ann)
    assert [n["id"] for n in response.get_json()] == [mine[2], mine[1]]
    assert json.loads(response.headers["X-Pagination"])["total"] == 3
    first = response.get_json()[0]
    assert first["kind"] == "bot_faults" and first["text"] == "notice 2" and not first["read"]
    assert {"bot_id", "created_at", "tournament_id", "match_id"} <= set(first)

    # bob's id is ignored: each marks only their own
    marked = client.post(
        "/api/accounts/me/notices/read", json={"ids": [mine[0], theirs[0]]}, headers=ann
    )
    assert marked.get_json() == {"marked": 1, "unread": 2}
    assert [n["id"] for n in listed(client, ann, unread="true")] == [mine[2], mine[1]]
    assert not listed(client, bob)[0]["read"]
    everything = client.post("/api/accounts/me/notices/read", json={"all": True}, headers=ann)
    assert everything.get_json() == {"marked": 2, "unread": 0}

    for body in ({}, {"ids": [1], "all": True}, {"ids": []}, {"ids": ["x"]}):
        error(client.post("/api/accounts/me/notices/read", json=body, headers=ann), 422)
    error(client.get("/api/accounts/me/notices"), 401)


def test_the_badge_counts_unread_notices_and_the_list_page_marks_them_read(app: Flask):
    client = app.test_client()
    sign_up(client, "ann")
    add_notices(app, "ann", 2)
    token = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/login").text)
    assert token
    client.post("/login", data={"name": "ann", "password": PASSWORD, "csrf_token": token[1]})

    for path in ("/", "/bots", "/account"):
        page = client.get(path).text
        assert re.search(r'id="unread-notices"[^>]*>2</span>', page), path
    listing = client.get("/notices").text
    assert "notice 0" in listing and "notice 1" in listing and listing.count(">new</span>") == 2
    assert 'id="unread-notices"' not in client.get("/").text
    assert ">new</span>" not in client.get("/notices").text
    assert 'id="unread-notices"' not in app.test_client().get("/").text  # nobody signed in


class Receiver(BaseHTTPRequestHandler):
    """A webhook: keeps each request (headers, body) and answers ``status``."""

    protocol_version = "HTTP/1.1"
    status = 204
    got: list[tuple[dict[str, str], bytes]]

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.got.append((dict(self.headers), body))
        self.send_response(self.status)
        if self.status in (301, 302):
            self.send_header("Location", "/elsewhere")
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def receiver() -> Iterator[Callable[[int], tuple[str, list]]]:
    servers = []

    def start(status: int = 204) -> tuple[str, list]:
        got: list[tuple[dict[str, str], bytes]] = []
        handler = type("Handler", (Receiver,), {"status": status, "got": got})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/hook?x=1", got

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def delivered(monkeypatch) -> list[int]:
    """The ids handed over after each commit (to the workers' task in a deployment)."""
    ids: list[int] = []
    notices.use_sender(ids.extend)
    yield ids
    notices.use_sender(None)


def deliveries(app: Flask, notice_id: int) -> dict[str, Any]:
    with app.extensions["arena.db"].session() as session:
        return session.get(Notice, notice_id).deliveries


def test_where_notices_go_is_set_by_the_account_and_the_secret_shown_once(app: Flask):
    client = app.test_client()
    ann = sign_up(client, "ann")
    url = "http://127.0.0.1:9/hook"
    answer = client.patch("/api/accounts/me", json={"notify_url": url}, headers=ann)
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["notify_url"] == url and len(body["notify_secret"]) >= 32
    again = client.patch("/api/accounts/me", json={"email": "ann@example.org"}, headers=ann)
    assert "notify_secret" not in again.get_json()
    me = client.get("/api/accounts/me", headers=ann).get_json()
    assert (me["notify_url"], me["email"]) == (url, "ann@example.org")
    assert "notify_secret" not in me
    for bad in ({}, {"email": "not an address"}, {"notify_url": "ftp://x.org/"}):
        error(client.patch("/api/accounts/me", json=bad, headers=ann), 422)
    cleared = client.patch("/api/accounts/me", json={"notify_url": None, "email": ""}, headers=ann)
    assert (cleared.get_json()["notify_url"], cleared.get_json()["email"]) == (None, None)


def test_a_webhook_gets_each_notice_signed_in_the_shape_slack_and_discord_take(
    app: Flask, receiver, delivered
):
    client = app.test_client()
    ann = sign_up(client, "ann")
    url, got = receiver(204)
    secret = client.patch("/api/accounts/me", json={"notify_url": url}, headers=ann).get_json()[
        "notify_secret"
    ]
    with pytest.raises(RuntimeError), app.extensions["arena.db"].session() as session:
        account_id = session.scalar(select(Account.id).where(Account.name == "ann"))
        notices.notify(session, account_id, "bot_paused", "Your bot x was paused.", bot_id=7)
        session.flush()
        raise RuntimeError("rolled back: never written, never sent")
    assert delivered == []
    [notice_id] = add_notices(app, "ann", 1)
    assert delivered == [notice_id]  # handed over once committed

    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    assert delivery.deliver(database, config, notice_id) is False  # nothing to try again
    [(headers, body)] = got
    verify(secret, headers["X-Arena-Timestamp"], headers["X-Arena-Signature"], body)
    sent = json.loads(body)
    assert sent["content"] == sent["text"] == "notice 0"  # Discord's field, Slack's
    assert sent["kind"] == "bot_faults" and sent["id"] == notice_id and "bot_id" in sent
    assert headers["Content-Type"] == "application/json"
    outcome = deliveries(app, notice_id)["webhook"]
    assert outcome["ok"] and outcome["status"] == 204 and outcome["attempts"] == 1
    delivery.deliver(database, config, notice_id)  # done already: not sent twice
    assert len(got) == 1

    # a redirect is not followed, a failing server is tried again later
    for status, retry in ((302, False), (503, True)):
        url, got = receiver(status)
        client.patch("/api/accounts/me", json={"notify_url": url}, headers=ann)
        [notice_id] = add_notices(app, "ann", 1)
        assert delivery.deliver(database, config, notice_id) is retry
        assert len(got) == 1
        outcome = deliveries(app, notice_id)["webhook"]
        assert not outcome["ok"] and outcome["status"] == status and outcome["retry"] is retry


def test_a_webhook_the_address_policy_refuses_is_refused_and_never_called(
    make_app: Callable[..., Flask], receiver, delivered
):
    app = make_app(profile="production")  # loopback refused, as any private address
    client = app.test_client()
    ann = sign_up(client, "ann")
    url, got = receiver(204)
    for refused in (url, "http://10.1.2.3/hook", "http://169.254.169.254/latest"):
        answer = client.patch("/api/accounts/me", json={"notify_url": refused}, headers=ann)
        error(answer, 400, "not allowed")
    # set before the policy changed (or a name that now resolves elsewhere): checked again
    with app.extensions["arena.db"].session() as session:
        account = session.scalar(select(Account).where(Account.name == "ann"))
        account.notify_url, account.notify_secret = url, "s" * 32
    [notice_id] = add_notices(app, "ann", 1)
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    assert delivery.deliver(database, config, notice_id) is False
    assert got == []
    outcome = deliveries(app, notice_id)["webhook"]
    assert not outcome["ok"] and "not allowed" in outcome["error"]


class Mailbox:
    def __init__(self) -> None:
        self.envelopes: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.envelopes.append(envelope)
        return "250 OK"


@pytest.fixture
def smtp_server() -> Iterator[tuple[int, Mailbox]]:
    with socket.socket() as probe:  # aiosmtpd checks the port it is given: a free one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield port, mailbox
    controller.stop()


def test_a_notice_is_mailed_through_the_operator_s_smtp_server(
    make_app: Callable[..., Flask], smtp_server, delivered
):
    port, mailbox = smtp_server
    app = make_app(
        smtp_url=f"smtp://127.0.0.1:{port}", smtp_starttls=False, mail_from="arena@example.org"
    )
    client = app.test_client()
    ann = sign_up(client, "ann")
    client.patch("/api/accounts/me", json={"email": "ann@example.org"}, headers=ann)
    [notice_id] = add_notices(app, "ann", 1)
    assert delivered == [notice_id]
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    assert delivery.deliver(database, config, notice_id) is False
    [envelope] = mailbox.envelopes
    assert envelope.mail_from == "arena@example.org" and envelope.rcpt_tos == ["ann@example.org"]
    mail = envelope.content.decode()
    assert "Subject: Card-bot arena: a bot of yours had faults" in mail and "notice 0" in mail
    assert deliveries(app, notice_id)["email"]["ok"]

    # without a mail server, an address is kept and the notice says why nothing went
    plain = make_app()
    client = plain.test_client()
    bob = sign_up(client, "bob")
    client.patch("/api/accounts/me", json={"email": "bob@example.org"}, headers=bob)
    [notice_id] = add_notices(plain, "bob", 1)
    delivery.deliver(plain.extensions["arena.db"], plain.extensions["arena.config"], notice_id)
    assert deliveries(plain, notice_id)["email"] == {
        "ok": False,
        "retry": False,
        "error": "no SMTP server set up",
        "attempts": 1,
        "at": deliveries(plain, notice_id)["email"]["at"],
    }
    assert len(mailbox.envelopes) == 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ARENA_SMTP_URL": "mail.example.org"}, "must be smtp://"),
        ({"ARENA_SMTP_URL": "smtp://mail.example.org:587"}, "needs ARENA_MAIL_FROM"),
        (
            {
                "ARENA_SMTP_URL": "smtp://m.example.org",
                "ARENA_MAIL_FROM": "a@b.org",
                "ARENA_SMTP_STARTTLS": "maybe",
            },
            "ARENA_SMTP_STARTTLS",
        ),
    ],
)
def test_the_mail_settings_are_checked_at_start_up(env, message, tmp_path):
    with pytest.raises(ConfigError, match=message):
        from_env({"ARENA_DATA_DIR": str(tmp_path), **env})
    config = from_env(
        {
            "ARENA_DATA_DIR": str(tmp_path),
            "ARENA_SMTP_URL": "smtp://u:p%40ss@mail.example.org:587",
            "ARENA_MAIL_FROM": "arena@example.org",
        }
    )
    assert config.smtp_url.endswith(":587") and config.smtp_starttls
