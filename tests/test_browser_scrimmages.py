"""A contestant tries their bot from its page in Chromium: signed in, they open Challenge,
pick a house bot and a bot that accepts challenges, ask for two matches and get links to
them; then they let others challenge their bot with its checkbox.

With ``ARENA_SCREENSHOTS`` set, the open form is saved there (``scrimmage-form.png``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from argon2 import PasswordHasher
from werkzeug.serving import make_server

from arena.models import Bot, Match
from arena.services import accounts
from arena.worker import queue
from tests.support.api import auth
from tests.support.browser import _require_chromium, buffered, loopback_bot, shoot
from tests.support.browser import browser as browser
from tests.support.browser import page as page
from tests.support.web import close_app, make_app
from tests.test_browser_csp import WATCH

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Ada's bot and Bo's bot (which accepts challenges), both in the open arena, served on
    loopback; the matches sent to the workers are kept in ``sent``."""
    _require_chromium()
    app = make_app(tmp_path_factory.mktemp("scrimmages"))
    client = app.test_client()
    sent: list[int] = []
    patch = pytest.MonkeyPatch()
    patch.setattr(queue, "enqueue_matches", lambda config, ids: sent.extend(ids))
    # what a login costs is not the question here
    patch.setattr(accounts, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    with ExitStack() as stack:
        bots = {}
        for name in ("ada", "bo"):
            made = client.post("/api/accounts", json={"name": name, "password": PASSWORD})
            assert made.status_code == 201, made.get_json()
            token = made.get_json()["token"]
            endpoint = stack.enter_context(loopback_bot(["cactus"]))
            bot = client.post(
                "/api/bots",
                json={"name": f"{name}-bot", "endpoint": endpoint, "event_id": None},
                headers=auth(token),
            )
            assert bot.status_code == 201, bot.get_json()
            bots[name] = bot.get_json()["id"]
        switched = client.patch(
            f"/api/bots/{bots['bo']}", json={"accepts_challenges": True}, headers=auth(token)
        )
        assert switched.status_code == 200, switched.get_json()
        server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield {"app": app, "sent": sent, "bots": bots, "url": f"http://127.0.0.1:{server.port}"}
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)
            patch.undo()
            close_app(app)


def test_a_contestant_challenges_the_field_from_their_bots_page(
    page: Any, site: dict[str, Any]
) -> None:
    page.add_init_script(WATCH)
    page.goto(f"{site['url']}/login")
    page.get_by_label("Name").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/my/bots")
    mine, theirs = site["bots"]["ada"], site["bots"]["bo"]
    page.goto(f"{site['url']}/bots/{mine}")

    form = page.locator("#challenge-form")
    assert form.is_hidden()
    page.locator("#challenge summary").click()  # the Challenge button opens the form
    assert form.get_by_label("Opponent 1").input_value() == "heuristic"
    form.get_by_label("Opponent 2").select_option(str(theirs))
    form.get_by_label("Matches").fill("2")
    shoot(page, "scrimmage-form")
    sent_before = len(site["sent"])
    form.get_by_role("button", name="Play the matches").click()
    links = form.locator(".challenge-matches a")
    links.first.wait_for()
    assert links.count() == 2
    made = site["sent"][sent_before:]
    assert [a.get_attribute("href") for a in links.all()] == [f"/matches/{i}" for i in made]
    with site["app"].extensions["arena.db"].session() as session:
        for match_id in made:
            match = session.get(Match, match_id)
            assert match.kind == "scrimmage" and not match.rated
            assert {s.bot_id for s in match.seats} >= {mine, theirs}

    # a refusal is shown in the form: a third seat of a bot already seated
    form.get_by_label("Opponent 3").select_option(str(theirs))
    form.get_by_role("button", name="Play the matches").click()
    form.locator(".form-error").wait_for()
    assert "named twice" in form.locator(".form-error").inner_text()

    switch = page.locator("#accepts-challenges-form")
    switch.get_by_label("Accept challenges").check()
    with page.expect_navigation():  # saved, the page is read again
        switch.get_by_role("button", name="Save").click()
    assert page.locator("#accepts-challenges-form").get_by_label("Accept challenges").is_checked()
    with site["app"].extensions["arena.db"].session() as session:
        assert session.get(Bot, mine).accepts_challenges is True
    assert page.evaluate("window.__violations") == []
