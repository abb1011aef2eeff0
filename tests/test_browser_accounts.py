"""A contestant's way through the account pages in Chromium: an organiser makes an event
through the API, then a student signs up with its join code, logs out, logs in, registers
a bot that connects out into the event, finds it under "My bots" and in the event's
roster; the organiser, logged in, resets the student's password from the roster and
starts the event's tournament from the form, which offers the event's bots only.

With ``ARENA_SCREENSHOTS`` set, the sign-up form, "My bots" and the event page are saved
there (``accounts-*.png``, the pictures of docs/accounts.md)."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from arena.app import create_app
from arena.config import Config
from tests.support.api import auth
from tests.support.browser import _require_chromium, buffered, shoot
from tests.support.browser import browser as browser
from tests.support.browser import page as page

ADMIN = "organiser-secret"
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Iterator[dict]:
    """The app with an organiser's account and a private event of theirs, served on a free
    loopback port in a background thread."""
    _require_chromium()
    folder = tmp_path_factory.mktemp("accounts")
    shutil.copyfile(migrated_database, folder / "arena.sqlite3")
    config = Config(
        profile="local",
        data_dir=folder,
        database_url=f"sqlite:///{folder / 'arena.sqlite3'}",
        broker_url="filesystem://",
        secret_key="test-secret",
        testing=True,
    )
    app = create_app(replace(config, organiser_token=ADMIN))
    api = app.test_client()
    teacher = api.post(
        "/api/accounts",
        json={"name": "Ms Lovelace", "password": PASSWORD, "role": "organiser"},
        headers=auth(ADMIN),
    ).get_json()
    event = api.post(
        "/api/events",
        json={"name": "Algorithms 2", "games": ["cactus"], "visibility": "private"},
        headers=auth(teacher["token"]),
    ).get_json()
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.port}", "event": event, "api": api}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        app.extensions["arena.db"].dispose()


def log_in(page: Any, name: str, password: str = PASSWORD) -> None:
    page.locator(".nav").get_by_role("link", name="Log in").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/my/bots")


def log_out(page: Any) -> None:
    page.get_by_role("button", name="Log out").click()
    page.wait_for_selector("text=You are logged out.")


def test_a_student_signs_up_registers_a_bot_and_finds_it_in_the_roster(page, site):
    event = site["event"]
    page.goto(f"{site['url']}/")
    page.locator(".nav").get_by_role("link", name="Sign up").click()
    page.get_by_label("Name").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Join code").fill(event["join_code"])
    shoot(page, "accounts-signup")
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_url(f"**/events/{event['id']}")
    assert "you joined Algorithms 2" in page.locator(".flash").inner_text()

    log_out(page)
    assert page.locator(".nav").get_by_role("link", name="Log in").is_visible()
    page.goto(f"{site['url']}/events/{event['id']}")  # private: no page for anyone
    assert page.locator("h1").inner_text() == "Not found"
    log_in(page, "ada")
    assert page.locator(".account-name").inner_text() == "ada"

    page.get_by_role("link", name="Register a bot").click()
    page.get_by_label("Name", exact=True).fill("ada-bot")
    page.get_by_label("It connects out to the arena").check()
    assert page.locator(".endpoint-field").is_hidden()
    # her only event is chosen already: the bot lands in the class, not the open arena
    assert page.get_by_label("Event").locator("option:checked").inner_text() == "Algorithms 2"
    page.locator('input[name="games"][value="cactus"]').check()
    page.get_by_role("button", name="Register").click()
    result = page.locator("#register-result")
    result.wait_for()
    assert result.locator(".bot-link").inner_text() == "ada-bot"
    assert len(page.locator("#owner-token").inner_text()) >= 40

    page.locator(".nav").get_by_role("link", name="My bots").click()
    row = page.locator("#my-bots tbody tr")
    assert row.count() == 1
    cells = row.locator("td").all_inner_texts()
    assert cells[0] == "ada-bot" and cells[2] == "Algorithms 2"
    shoot(page, "accounts-my-bots")

    row.get_by_role("link", name="Algorithms 2").click()
    page.wait_for_url(f"**/events/{event['id']}")
    roster = page.locator("#roster tbody tr", has_text="ada-bot")
    assert roster.count() == 1
    assert roster.locator("td").first.inner_text() == "ada"
    assert "connects out" in roster.inner_text()
    assert page.locator("#join-code").count() == 0  # the organisers' only
    shoot(page, "accounts-event")


def test_the_organiser_makes_a_reset_link_and_the_student_uses_it(page, site, browser):
    event = site["event"]
    api = site["api"]
    answer = api.post(
        "/api/accounts",
        json={"name": "bob", "password": PASSWORD, "join_code": event["join_code"]},
    ).get_json()
    page.goto(f"{site['url']}/")
    log_in(page, "Ms Lovelace")
    page.goto(f"{site['url']}/events/{event['id']}")
    assert page.locator("#join-code").inner_text() == event["join_code"]
    row = page.locator(f'#roster tr[data-account-id="{answer["id"]}"]')
    row.get_by_role("button", name="Reset password").click()
    link = row.locator(".reset-link a")
    link.wait_for()
    url = link.get_attribute("href")
    assert url.startswith(f"{site['url']}/reset/")

    student = browser.new_context(viewport={"width": 380, "height": 800}).new_page()
    try:
        student.goto(url)
        student.get_by_label("New password").fill("a brand new password")
        student.get_by_role("button", name="Set the password").click()
        student.wait_for_url("**/my/bots")
        assert student.locator(".account-name").inner_text() == "bob"
        student.goto(url)  # used: gone
        assert student.locator("h1").inner_text() == "Not found"
    finally:
        student.context.close()


def test_the_organiser_starts_the_events_tournament_with_its_bots_only(page, site):
    """The tournament form offers the organiser's events: choosing one shows that event's
    bots only (never the open arena's), and the tournament is the event's."""
    event, api = site["event"], site["api"]
    entered = []
    for name in ("cy", "di"):
        student = api.post(
            "/api/accounts",
            json={"name": name, "password": PASSWORD, "join_code": event["join_code"]},
        ).get_json()
        bot = api.post(
            "/api/bots",
            json={
                "name": f"{name}-bot",
                "connect": True,
                "games": ["cactus"],
                "event_id": event["id"],
            },
            headers=auth(student["token"]),
        )
        assert bot.status_code == 201, bot.get_json()
        entered.append(bot.get_json()["id"])
    outsider = api.post(
        "/api/bots",
        json={"name": "open-bot", "connect": True, "games": ["cactus"], "owner": "someone"},
        headers=auth(ADMIN),
    ).get_json()
    # a reference bot, registered nowhere near the event, is offered to it all the same
    sample = api.post(
        "/api/bots",
        json={"name": "sample-ref", "connect": True, "games": ["cactus"], "owner": "teacher"},
        headers=auth(ADMIN),
    ).get_json()
    marked = api.patch(f"/api/bots/{sample['id']}", json={"reference": True}, headers=auth(ADMIN))
    assert marked.status_code == 200, marked.get_json()

    page.goto(f"{site['url']}/")
    log_in(page, "Ms Lovelace")
    page.goto(f"{site['url']}/tournaments/new")
    page.select_option("#game-select", "cactus")
    visible = page.locator(".bot-choice:visible")
    names = [t.split("(")[0].strip() for t in visible.all_inner_texts()]
    assert "open-bot" in names and "cy-bot" not in names  # the open arena's by default
    page.get_by_label("Event").select_option(label="Algorithms 2")
    names = [t.split("(")[0].strip() for t in visible.all_inner_texts()]
    assert "cy-bot" in names and "di-bot" in names and "open-bot" not in names
    # and the reference bots: the house bots and the one marked, badged as such
    assert "house random" in names and "sample-ref" in names
    assert visible.filter(has_text="sample-ref").locator(".badge.reference").is_visible()
    page.fill("input[name=name]", "Class cup")
    entered.append(sample["id"])
    for bot_id in entered:
        page.check(f"input[name=bot_ids][value='{bot_id}']")
    page.get_by_role("button", name="Start tournament").click()
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    made = api.get(f"/api/tournaments/{page.url.rsplit('/', 1)[1]}", headers=auth(ADMIN)).get_json()
    assert made["event_id"] == event["id"]
    assert sorted(made["bot_ids"]) == sorted(entered)
    assert outsider["id"] not in made["bot_ids"]
