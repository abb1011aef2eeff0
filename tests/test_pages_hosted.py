"""A hosted bot's pages through the Flask test client, signed in as a student would be: the
registration form's third transport, the bot page's upload form and versions table (a
new version shown validating, then passed or failed with its reason, a roll-back), what a
visitor sees of it (its transport and the version that plays, nothing more), and the
match page, which holds a seat's private log for that seat's manager only.

The pages' scripts (``static/forms.js``) send these forms to the API; here each request
is made as the script makes it, to the address the page's form names, with the page's
CSRF token.  The scripts themselves run in Chromium in ``test_browser_hosted``."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.worker import play as play_module
from tests.support.api import auth
from tests.support.sandbox import CHATTY, needs_sandbox
from tests.support.web import page_text

ADMIN = "organiser-secret"
PASSWORD = "correct horse battery"
BROKEN = b"""def act(view, legal_actions):
    return legal_actions[0]["no such key"]
"""


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    needs_sandbox()


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(organiser_token=ADMIN)


def csrf(client: FlaskClient, path: str = "/login") -> str:
    """The CSRF token of this client's session, as a page carries it (base.html)."""
    found = re.search(r'name="csrf-token" content="([^"]+)"', client.get(path).text)
    assert found, path
    return found.group(1)


def signed_in(app: Flask, name: str) -> FlaskClient:
    """A client logged in through the login form as a new account ``name``."""
    client = app.test_client()
    made = client.post("/api/accounts", json={"name": name, "password": PASSWORD})
    assert made.status_code == 201, made.get_json()
    logged = client.post(
        "/login", data={"name": name, "password": PASSWORD, "csrf_token": csrf(client)}
    )
    assert logged.status_code == 302
    return client


def writes(client: FlaskClient) -> dict[str, str]:
    """The header ``forms.js`` sends with every write of a signed-in page."""
    return {"X-CSRFToken": csrf(client, "/my/bots")}


def register_hosted(client: FlaskClient, name: str = "hosted-ada") -> dict[str, Any]:
    """The registration form's request for a hosted bot (what forms.js posts)."""
    answer = client.post(
        "/api/bots",
        json={"name": name, "hosted": True, "games": ["cactus"]},
        headers=writes(client),
    )
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def attribute(page: str, selector: str, name: str) -> str:
    """The value of attribute ``name`` of the first tag that has ``selector`` in it."""
    for tag in re.findall(r"<[a-z]+\b[^>]*>", page):
        if selector in tag:
            found = re.search(rf'\b{name}="([^"]*)"', tag)
            assert found, (tag, name)
            return html.unescape(found.group(1))
    raise AssertionError(f"no tag with {selector}")


def upload(client: FlaskClient, bot_id: int, code: bytes) -> Any:
    """The upload form's request: the file as the raw body, to the address the form names."""
    page = client.get(f"/bots/{bot_id}").text
    url = attribute(page, 'id="code-form"', "data-url")
    headers = {**writes(client), "Content-Type": "text/x-python"}
    return client.put(url, data=code, headers=headers)


def play_enqueued(app: Flask, enqueued: list[int]) -> None:
    """Play every match sent to the workers so far, as a worker does."""
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    while enqueued:
        assert play_module.play_match(database, config, enqueued.pop(0)) == "recorded"


def version_rows(page: str) -> dict[str, str]:
    """Version -> the visible text of its row (and its reason's row) in the versions table."""
    table = re.search(r'<table class="data compact code-versions".*?</table>', page, re.S)
    assert table, "no versions table"
    rows: dict[str, str] = {}
    for version, row in re.findall(r'<tr[^>]*data-version="(\w+)"[^>]*>(.*?)</tr>', table[0], re.S):
        rows[version] = rows.get(version, "") + " " + " ".join(page_text(row).split())
    return rows


# -- registering ---------------------------------------------------------------------------
def test_the_register_form_offers_hosted_and_registers_a_hosted_bot(app):
    ada = signed_in(app, "ada")
    form = ada.get("/bots/register").text
    assert 'name="transport" value="hosted"' in form
    assert "the arena runs your code" in page_text(form)
    bot = register_hosted(ada)
    assert bot["hosted"] is True and bot["endpoint"] is None and bot["code_version"] is None
    page = ada.get(f"/bots/{bot['id']}").text
    facts = " ".join(page_text(page).split())
    assert "Transport hosted: the arena runs its uploaded code" in facts
    assert "none yet: no version of its code has passed its validation" in facts
    assert 'id="code-form"' in page and "No code yet" in page_text(page)


# -- uploading and the versions --------------------------------------------------------------
def test_the_owner_uploads_a_version_and_sees_it_validating(app, enqueued):
    ada = signed_in(app, "ada")
    bot = register_hosted(ada)
    page = ada.get(f"/bots/{bot['id']}").text
    assert attribute(page, 'id="code-form"', "data-url") == f"/api/bots/{bot['id']}/code"
    assert 'accept=".py,.zip' in page
    # a write without the page's CSRF token is refused, as every signed-in write is
    refused = ada.put(
        f"/api/bots/{bot['id']}/code", data=CHATTY, headers={"Content-Type": "text/x-python"}
    )
    assert refused.status_code == 400 and not enqueued
    answer = upload(ada, bot["id"], CHATTY)
    assert answer.status_code == 202, answer.get_json()
    version = answer.get_json()
    assert enqueued == [version["match_id"]]
    page = ada.get(f"/bots/{bot['id']}").text
    row = version_rows(page)[version["version"]]
    assert "validating" in row and f"#{version['match_id']}" in row and "Download" in row
    # while it is validating the page asks the API for the verdict
    assert attribute(page, "code-versions", "data-poll") == f"/api/bots/{bot['id']}/code"
    assert 'id="validating-note"' in page

    play_enqueued(app, enqueued)
    page = ada.get(f"/bots/{bot['id']}").text
    row = version_rows(page)[version["version"]]
    assert "passed" in row and "plays" in row and "Make this one play" not in row
    assert "data-poll" not in page
    assert f"{version['version']} plays" in " ".join(page_text(page).split())
    # the download link gives the code back, as uploaded, to its owner
    link = attribute(page, 'class="download"', "href")
    assert ada.get(link).data == CHATTY


def test_a_failed_version_shows_its_reason_to_its_owner(app, enqueued):
    ada = signed_in(app, "ada")
    bot = register_hosted(ada)
    upload(ada, bot["id"], CHATTY)
    broken = upload(ada, bot["id"], BROKEN).get_json()
    play_enqueued(app, enqueued)
    rows = version_rows(ada.get(f"/bots/{bot['id']}").text)
    assert "failed" in rows[broken["version"]]
    assert "the bot raised KeyError" in rows[broken["version"]]
    assert "Make this one play" not in rows[broken["version"]]


def test_the_roll_back_button_makes_an_older_version_play(app, enqueued):
    ada = signed_in(app, "ada")
    bot = register_hosted(ada)
    older = upload(ada, bot["id"], CHATTY).get_json()["version"]
    newer = upload(ada, bot["id"], CHATTY + b"\n# a second version\n").get_json()["version"]
    play_enqueued(app, enqueued)
    page = ada.get(f"/bots/{bot['id']}").text
    rows = version_rows(page)
    assert list(rows) == [newer, older]  # newest first
    assert "plays" in rows[newer] and "Make this one play" in rows[older]
    button = attribute(page, f"/code/{older}/activate", "data-url")
    rolled = ada.post(button, json={}, headers=writes(ada))
    assert rolled.status_code == 200, rolled.get_json()
    page = ada.get(f"/bots/{bot['id']}").text
    rows = version_rows(page)
    assert "plays" in rows[older] and "Make this one play" not in rows[older]
    assert "Make this one play" in rows[newer]
    assert f"{older} plays" in " ".join(page_text(page).split())


def test_a_visitor_sees_the_transport_and_the_version_that_plays_only(app, enqueued):
    ada = signed_in(app, "ada")
    bot = register_hosted(ada)
    good = upload(ada, bot["id"], CHATTY).get_json()["version"]
    upload(ada, bot["id"], BROKEN)
    play_enqueued(app, enqueued)
    for visitor in (app.test_client(), signed_in(app, "bob")):
        page = visitor.get(f"/bots/{bot['id']}").text
        facts = " ".join(page_text(page).split())
        assert "Transport hosted" in facts and f"{good} plays" in facts
        # (its faults by kind are public, as any bot's: the failed version's reason is not)
        for private in ('id="code-form"', "code-versions", "Download", "/code/", "Its log ends"):
            assert private not in page, private
    # the organiser of the open arena (the admin) manages every bot there: the table
    admin = app.test_client().get(f"/bots/{bot['id']}", headers=auth(ADMIN)).text
    assert "code-versions" in admin and "Its log ends" in admin


# -- the private logs on the match page -------------------------------------------------------
def seat_logs(page: str) -> list[dict[str, Any]] | None:
    found = re.search(r'<script type="application/json" id="seat-logs">(.*?)</script>', page, re.S)
    return json.loads(found.group(1)) if found else None


def test_the_match_page_holds_a_seats_log_for_its_owner_only(app, enqueued):
    ada = signed_in(app, "ada")
    bot = register_hosted(ada)
    match_id = upload(ada, bot["id"], CHATTY).get_json()["match_id"]
    play_enqueued(app, enqueued)

    mine = ada.get(f"/matches/{match_id}")
    logs = seat_logs(mine.text)
    assert logs is not None and [log["seat"] for log in logs] == [0]  # not the house bot's
    entries = logs[0]["entries"]
    decided = [e for e in entries if e["step"] is not None]
    assert decided and all(e["decision_id"] == f"{e['step']}:0" for e in decided)
    assert any(e.get("debug", "").startswith("took the first of") for e in decided)
    assert any("weighing" in e.get("stderr", "") for e in decided)
    # what it wrote as it loaded belongs to no decision: the page lists it under the viewer
    section = re.search(r'<section id="private-logs".*?</section>', mine.text, re.S)
    assert section and "loading the weights" in section[0]
    assert f"{len({e['step'] for e in decided})} decisions with a note" in page_text(section[0])
    assert logs[0]["text_url"] == f"/api/matches/{match_id}/logs/0"
    assert ada.get(logs[0]["text_url"]).status_code == 200
    assert "private" in mine.headers["Cache-Control"]

    for visitor in (app.test_client(), signed_in(app, "bob")):
        page = visitor.get(f"/matches/{match_id}")
        assert page.status_code == 200 and 'id="replay"' in page.text  # the replay is public
        assert seat_logs(page.text) is None and 'id="private-logs"' not in page.text
        for private in ("took the first of", "weighing", "loading the weights"):
            assert private not in page.text, private
        # the owner's copy of the page is not the visitor's: its ETag is not theirs
        again = visitor.get(f"/matches/{match_id}", headers={"If-None-Match": mine.headers["ETag"]})
        assert again.status_code == 200 and seat_logs(again.text) is None
