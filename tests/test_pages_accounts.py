"""The account and event pages through the Flask test client: logging in (a wrong password,
a form without its CSRF token, a ``next`` that would leave the site), signing up with and
without a join code, logging out, a one-time reset link, the admin's accounts page, a
private event's page, "My bots", the bot list's search and a bot page's buttons."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.support.api import auth
from tests.support.web import page_text

ADMIN = "organiser-secret"
PASSWORD = "correct horse battery"


def csrf(client: FlaskClient, path: str = "/login") -> str:
    """The CSRF token a page of this client's session carries."""
    found = re.search(r'name="csrf-token" content="([^"]+)"', client.get(path).text)
    assert found, path
    return found.group(1)


def signup_api(client: FlaskClient, name: str, **fields: Any) -> dict[str, Any]:
    """An account made through the API (an organiser or an admin by the admin's token)."""
    headers = auth(ADMIN) if fields.get("role", "contestant") != "contestant" else {}
    body = {"name": name, "password": PASSWORD, **fields}
    response = client.post("/api/accounts", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def log_in(client: FlaskClient, name: str, password: str = PASSWORD, next: str = "") -> Any:
    token = csrf(client)
    path = f"/login?next={next}" if next else "/login"
    return client.post(path, data={"name": name, "password": password, "csrf_token": token})


def new_event(client: FlaskClient, **fields: Any) -> dict[str, Any]:
    body = {"name": "Algorithms 2", "games": ["cactus"], **fields}
    response = client.post("/api/events", json=body, headers=auth(ADMIN))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def connect_bot(client: FlaskClient, token: str, name: str, **fields: Any) -> dict[str, Any]:
    body = {"name": name, "connect": True, "games": ["cactus"], **fields}
    response = client.post("/api/bots", json=body, headers=auth(token))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(organiser_token=ADMIN)


def signed_in(client: FlaskClient) -> bool:
    return client.get("/my/bots").status_code == 200


# -- logging in ------------------------------------------------------------------------------
def test_the_login_page_logs_in_and_goes_to_my_bots(client):
    signup_api(client, "ada")
    page = client.get("/login")
    assert page.status_code == 200
    assert 'name="password"' in page.text and 'name="csrf_token"' in page.text
    response = log_in(client, " ADA ")  # names are found without case and spaces
    assert response.status_code == 302
    assert response.headers["Location"] == "/my/bots"
    mine = client.get("/my/bots")
    assert mine.status_code == 200
    assert "ada" in page_text(mine.text)  # the top bar names the account
    assert "Log out" in mine.text


def test_a_wrong_password_shows_the_form_again_with_a_message(client):
    signup_api(client, "ada")
    response = log_in(client, "ada", "not the password at all")
    assert response.status_code == 401  # as the API answers it: scripts see a refusal
    assert "wrong name or password" in page_text(response.text)
    assert 'id="login-form"' in response.text
    assert not signed_in(client)
    # an unknown name says the same, not which one was wrong
    other = log_in(client, "nobody", PASSWORD)
    assert other.status_code == 401
    assert "wrong name or password" in page_text(other.text)


def test_a_page_form_without_its_csrf_token_is_refused(client):
    signup_api(client, "ada")
    refused = client.post("/login", data={"name": "ada", "password": PASSWORD})
    assert refused.status_code == 400
    assert "CSRF" in refused.text
    assert not signed_in(client)
    token = csrf(client)
    wrong = client.post("/login", data={"name": "ada", "password": PASSWORD, "csrf_token": "x"})
    assert wrong.status_code == 400
    accepted = client.post(
        "/login", data={"name": "ada", "password": PASSWORD, "csrf_token": token}
    )
    assert accepted.status_code == 302
    assert signed_in(client)


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "javascript:alert(1)",
        "evil.example",
    ],
)
def test_next_never_leaves_the_site(client, target):
    signup_api(client, "ada")
    response = log_in(client, "ada", next=target)
    assert response.status_code == 302
    assert response.headers["Location"] == "/my/bots"


def test_next_returns_to_a_page_of_the_site(client):
    signup_api(client, "ada")
    assert client.get("/account").headers["Location"] == "/login?next=/account"
    response = log_in(client, "ada", next="/account")
    assert response.headers["Location"] == "/account"


# -- signing up --------------------------------------------------------------------------------
def test_signing_up_with_a_join_code_joins_the_event(client):
    event = new_event(client)
    token = csrf(client, "/signup")
    response = client.post(
        "/signup",
        data={
            "name": "bob",
            "password": PASSWORD,
            "join_code": event["join_code"],
            "csrf_token": token,
        },
    )
    assert response.status_code == 302
    assert response.headers["Location"] == f"/events/{event['id']}"
    page = client.get(f"/events/{event['id']}")
    assert "you joined Algorithms 2" in page_text(page.text)
    roster = client.get(f"/api/events/{event['id']}/roster").get_json()
    assert [(r["account"], r["role"]) for r in roster] == [("bob", "contestant")]


def test_a_closed_signup_needs_the_join_code(make_app):
    app = make_app(organiser_token=ADMIN, open_signup=False)
    client = app.test_client()
    event = new_event(client)
    page = client.get("/signup")
    assert "You need your event's join code" in page_text(page.text)
    assert re.search(r'name="join_code"[^>]*required', page.text)
    # the sign-up link an organiser hands out fills the code in
    assert f'value="{event["join_code"]}"' in client.get(f"/signup?code={event['join_code']}").text
    without = client.post(
        "/signup", data={"name": "bob", "password": PASSWORD, "csrf_token": csrf(client)}
    )
    assert without.status_code == 400
    assert "join code" in page_text(without.text)
    assert not signed_in(client)
    with_code = client.post(
        "/signup",
        data={
            "name": "bob",
            "password": PASSWORD,
            "join_code": event["join_code"],
            "csrf_token": csrf(client),
        },
    )
    assert with_code.status_code == 302
    assert signed_in(client)


def test_a_refused_signup_says_why_and_keeps_the_name(client):
    signup_api(client, "ada")
    response = client.post(
        "/signup", data={"name": "Ada", "password": PASSWORD, "csrf_token": csrf(client)}
    )
    assert response.status_code == 400
    assert "already exists" in page_text(response.text)
    short = client.post(
        "/signup", data={"name": "cleo", "password": "short", "csrf_token": csrf(client)}
    )
    assert "10 to 200 characters" in page_text(short.text)
    assert 'value="cleo"' in short.text


# -- logging out and resetting a password ---------------------------------------------------
def test_logging_out_ends_the_session(client):
    signup_api(client, "ada")
    log_in(client, "ada")
    assert signed_in(client)
    assert client.post("/logout").status_code == 400  # a stranger's page cannot log you out
    assert signed_in(client)
    response = client.post("/logout", data={"csrf_token": csrf(client, "/account")})
    assert response.status_code == 302
    assert not signed_in(client)
    assert "Log in" in client.get("/").text


def test_a_reset_link_sets_a_new_password_once(client):
    account = signup_api(client, "ada")
    link = client.post(f"/api/accounts/{account['id']}/reset", headers=auth(ADMIN)).get_json()
    path = link["reset_path"]
    assert path.startswith("/reset/")
    page = client.get(path)
    assert page.status_code == 200 and "A new password for ada" in page_text(page.text)
    new = "a brand new password"
    response = client.post(path, data={"password": new, "csrf_token": csrf(client, path)})
    assert response.status_code == 302
    assert signed_in(client)
    # the link is spent; the old password no longer works, the new one does
    assert client.get(path).status_code == 404
    again = client.post(path, data={"password": "yet another one!", "csrf_token": csrf(client)})
    assert again.status_code == 404
    other = client.application.test_client()
    assert "wrong name or password" in page_text(log_in(other, "ada", PASSWORD).text)
    assert log_in(other, "ada", new).status_code == 302


def test_a_reset_link_refuses_a_bad_password_and_stays_valid(client):
    account = signup_api(client, "ada")
    path = client.post(f"/api/accounts/{account['id']}/reset", headers=auth(ADMIN)).get_json()[
        "reset_path"
    ]
    response = client.post(path, data={"password": "ada", "csrf_token": csrf(client, path)})
    assert response.status_code == 400
    assert "10 to 200 characters" in page_text(response.text)
    assert client.get(path).status_code == 200


# -- who sees what --------------------------------------------------------------------------
def test_the_accounts_page_is_the_admins(client):
    signup_api(client, "ada")
    signup_api(client, "root", role="admin")
    assert client.get("/accounts").headers["Location"] == "/login?next=/accounts"
    log_in(client, "ada")
    refused = client.get("/accounts")
    assert refused.status_code == 403
    assert "ada" not in re.sub(r"<header.*?</header>", "", refused.text, flags=re.S)
    client.post("/logout", data={"csrf_token": csrf(client, "/account")})
    log_in(client, "root")
    page = client.get("/accounts")
    assert page.status_code == 200
    assert {"ada", "root"} <= set(
        re.findall(r"<tr data-account-id=\"\d+\">\s*<td>(\w+)", page.text)
    )
    assert 'id="organiser-form"' in page.text


def test_a_private_event_page_is_for_its_members(client):
    event = new_event(client, visibility="private")
    signup_api(client, "ada", join_code=event["join_code"])
    signup_api(client, "eve")
    path = f"/events/{event['id']}"
    assert client.get(path).status_code == 404
    assert "Algorithms 2" not in client.get("/events").text
    log_in(client, "eve")
    assert client.get(path).status_code == 404
    assert "Algorithms 2" not in client.get("/events").text
    client.post("/logout", data={"csrf_token": csrf(client, "/account")})
    log_in(client, "ada")
    page = client.get(path)
    assert page.status_code == 200
    text = page_text(page.text)
    assert "Algorithms 2" in text and "Roster" in text
    assert event["join_code"] not in page.text  # the join code is the organisers'
    assert "Algorithms 2" in client.get("/events").text


def test_an_organiser_sees_the_join_code_and_the_roster_buttons(client):
    organiser = signup_api(client, "teach", role="organiser")
    response = client.post(
        "/api/events",
        json={"name": "Hack day", "games": ["cactus"]},
        headers=auth(organiser["token"]),
    )
    event = response.get_json()
    student = signup_api(client, "ada", join_code=event["join_code"])
    bot = connect_bot(client, student["token"], "ada-bot", event_id=event["id"])
    log_in(client, "teach")
    page = client.get(f"/events/{event['id']}").text
    assert event["join_code"] in page
    assert f"/api/accounts/{student['id']}/reset" in page  # the reset button of the contestant
    assert f'data-url="/api/bots/{bot["id"]}"' in page  # its pause button
    assert f"/api/events/{event['id']}/roster.csv" in page


def test_my_bots_lists_exactly_the_accounts_bots(client, info_bot):
    ada = signup_api(client, "ada")
    bob = signup_api(client, "bob")
    mine = {connect_bot(client, ada["token"], n)["id"] for n in ("ada-one", "ada-two")}
    connect_bot(client, bob["token"], "bob-one")
    client.post(
        "/api/bots",
        json={"name": "nobodys", "connect": True, "games": ["cactus"], "owner": "x"},
    )
    log_in(client, "ada")
    page = client.get("/my/bots").text
    listed = {int(i) for i in re.findall(r'<tr data-bot-id="(\d+)"', page)}
    assert listed == mine
    assert "bob-one" not in page and "nobodys" not in page


def test_the_bot_list_searches_by_name_owner_game_and_status(client):
    for name, owner, games in (
        ("alpha", "ann", ["cactus"]),
        ("alphonse", "bob", ["president"]),
        ("zed", "ann", ["cactus", "president"]),
    ):
        response = client.post(
            "/api/bots",
            json={"name": name, "connect": True, "games": games, "owner": owner},
        )
        assert response.status_code == 201, response.get_json()

    def listed(query: str) -> set[str]:
        page = client.get(f"/bots?{query}").text
        return set(re.findall(r'<td><a href="/bots/\d+">([^<]+)</a>', page))

    assert listed("") == {"alpha", "alphonse", "zed"}
    assert listed("q=ALPH") == {"alpha", "alphonse"}
    assert listed("owner=An") == {"alpha", "zed"}
    assert listed("game=president") == {"alphonse", "zed"}
    assert listed("q=alph&game=president") == {"alphonse"}
    assert listed("status=paused") == set()
    assert listed("q=%25") == set()  # a wildcard is a character like any other
    # the search is kept in the form (and so from page to page)
    assert 'name="q" value="alph"' in client.get("/bots?q=alph").text


def test_the_bot_page_offers_its_buttons_to_those_who_manage_it(client):
    ada = signup_api(client, "ada")
    signup_api(client, "eve")
    bot = connect_bot(client, ada["token"], "ada-bot")
    path = f"/bots/{bot['id']}"
    assert 'id="manage"' not in client.get(path).text
    log_in(client, "eve")
    assert 'id="manage"' not in client.get(path).text
    client.post("/logout", data={"csrf_token": csrf(client, "/account")})
    log_in(client, "ada")
    page = client.get(path).text
    assert 'id="manage"' in page and 'id="rotate-form"' in page and 'id="rename-form"' in page
    assert 'value="paused"' not in page  # pausing is an organiser's


def test_a_session_write_to_the_api_needs_the_csrf_header(client):
    ada = signup_api(client, "ada")
    bot = connect_bot(client, ada["token"], "ada-bot")
    log_in(client, "ada")
    body = {"name": "ada-renamed"}
    assert client.patch(f"/api/bots/{bot['id']}", json=body).status_code == 400
    token = csrf(client, "/my/bots")
    response = client.patch(f"/api/bots/{bot['id']}", json=body, headers={"X-CSRFToken": token})
    assert response.status_code == 200, response.get_json()
    assert "ada-renamed" in client.get("/my/bots").text
