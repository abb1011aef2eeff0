"""A student's way with a hosted bot in Chromium: signed in, they register it from the form
(the third transport), upload a Python file on its page and see it validating; once a
worker has played the validation match the page shows it passed by itself.  Its replay
then shows, beside each of the bot's decisions, what the bot wrote privately (stderr and
its answer's debug text); a visitor's copy of the same replay holds none of it and asks
for none.  The bot page and the replay fit a 380 px screen.  One journey, in order: each
step needs the one before.

With ``ARENA_SCREENSHOTS`` set, the form, the bot page and the replay are saved there
(``hosted-*.png``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from arena.models import Match
from arena.services import hosted
from arena.worker import play as play_module
from arena.worker import queue
from tests.support.browser import _require_chromium, buffered, shoot
from tests.support.browser import browser as browser
from tests.support.browser import page as page
from tests.support.sandbox import CHATTY, needs_sandbox
from tests.support.web import close_app, make_app
from tests.test_browser_csp import WATCH

PASSWORD = "correct horse battery"
NARROW = {"width": 380, "height": 800}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The app with a student's account, served on loopback; the matches it sends to the
    workers are kept in ``sent`` for the test to play, as a worker would."""
    _require_chromium()
    needs_sandbox()
    app = make_app(tmp_path_factory.mktemp("hosted"))
    made = app.test_client().post("/api/accounts", json={"name": "ada", "password": PASSWORD})
    assert made.status_code == 201, made.get_json()
    sent: list[int] = []
    patch = pytest.MonkeyPatch()
    patch.setattr(queue, "enqueue_matches", lambda config, ids: sent.extend(ids))
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"app": app, "sent": sent, "url": f"http://127.0.0.1:{server.port}"}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        patch.undo()
        close_app(app)


def log_in(page: Any, site: dict[str, Any]) -> None:
    page.goto(f"{site['url']}/login")
    page.get_by_label("Name").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/my/bots")


def shown_at(page: Any, step: int) -> None:
    """Waits for the viewer to show frame ``step`` (a locator's wait: the pages' CSP
    forbids the eval a polled ``wait_for_function`` needs)."""
    page.locator(f'#replay[data-step="{step}"]').wait_for()


def fits(page: Any) -> None:
    """Nothing on the page is wider than a 380 px screen (else: the elements that stick out)."""
    wide = page.evaluate(
        """w => Array.from(document.querySelectorAll("body *"))
            .filter(e => e.getBoundingClientRect().right > w)
            .filter(e => !e.parentElement.closest(".scroll, .event-log"))
            .filter((e, _, all) => !all.includes(e.parentElement))
            .map(e => e.tagName + "." + e.className)""",
        NARROW["width"],
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"], wide


def test_a_student_uploads_code_and_reads_their_bots_log_beside_its_decisions(
    page: Any, browser: Any, site: dict[str, Any], tmp_path: Path
) -> None:
    page.add_init_script(WATCH)  # every Content-Security-Policy violation of every page
    log_in(page, site)
    page.goto(f"{site['url']}/bots/register")
    page.get_by_label("Name", exact=True).fill("ada-hosted")
    page.get_by_label("Hosted: the arena runs your code").check()
    assert page.locator(".endpoint-field").is_hidden()
    assert page.locator(".hosted-hint").is_visible()
    assert page.get_by_label("Signing secret (optional)").is_hidden()
    page.locator('input[name="games"][value="cactus"]').check()
    shoot(page, "hosted-register")
    page.get_by_role("button", name="Register").click()
    result = page.locator("#register-result")
    result.wait_for()
    assert result.locator(".bot-link").inner_text() == "ada-hosted"
    assert result.locator(".hosted-next").is_visible()
    result.get_by_role("link", name="upload its code").click()
    page.wait_for_url("**/bots/*#code")
    bot_url = page.url.split("#")[0]
    facts = page.locator("dl.facts").inner_text()
    assert "hosted: the arena runs its uploaded code" in facts and "none yet" in facts

    code = tmp_path / "bot.py"
    code.write_bytes(CHATTY)
    page.locator('#code-form input[type="file"]').set_input_files(str(code))
    page.get_by_role("button", name="Upload").click()
    row = page.locator("table.code-versions tbody tr[data-version]").first
    row.locator(".status-validating").wait_for()
    [match_id] = site["sent"]
    assert row.get_by_role("link", name=f"#{match_id}").is_visible()

    # a worker plays the validation match; the page, which was waiting for it, shows it
    database, config = site["app"].extensions["arena.db"], site["app"].extensions["arena.config"]
    assert play_module.play_match(database, config, match_id) == "recorded"
    page.locator("table.code-versions .status-passed").wait_for()
    version = page.locator("table.code-versions tr[data-version]").first.get_attribute(
        "data-version"
    )
    assert f"{version} plays" in page.locator("dl.facts").inner_text()
    assert page.evaluate("window.__violations") == []
    page.screenshot(path=str(tmp_path / "hosted-bot.png"), full_page=True)
    shoot(page, "hosted-bot")

    # the replay of its validation match: the bot's own notes beside one of its decisions
    with database.session() as session:
        entries = hosted.log_entries(session, session.get(Match, match_id), 0)
    step = next(e["step"] for e in entries if e.get("debug"))
    notes = [
        e[k].strip() for e in entries if e["step"] == step for k in ("debug", "stderr") if k in e
    ]
    assert any(n.startswith("took the first of") for n in notes)
    assert any(n.startswith("weighing") for n in notes)
    page.locator("table.code-versions").get_by_role("link", name=f"#{match_id}").click()
    page.wait_for_url(f"**/matches/{match_id}*")
    match_url = page.url.split("#")[0]
    page.locator('#replay[data-showing="all"]').wait_for()
    # frame n shows the decisions of the record's step n - 1 (frame 0 is the deal)
    page.evaluate(f"location.hash = '#seat=all&step={step + 1}'")
    shown_at(page, step + 1)
    mine = page.locator("#decisions .decision", has=page.locator(".player.seat-0"))
    shown = [t.strip() for t in mine.locator(".private-log pre").all_inner_texts()]
    assert shown == notes
    # what it wrote as it loaded is no decision's: it is listed under the viewer
    assert "loading the weights" in page.locator("#private-logs").inner_text()
    assert page.evaluate("window.__violations") == []
    shoot(page, "hosted-replay")

    # on a phone: the bot page and the replay, with the log, fit the screen
    narrow = browser.new_context(viewport=NARROW, storage_state=page.context.storage_state())
    try:
        small = narrow.new_page()
        small.goto(bot_url)
        small.locator("table.code-versions").wait_for()
        fits(small)
        small.screenshot(path=str(tmp_path / "hosted-bot-380.png"), full_page=True)
        shoot(small, "hosted-bot-380")
        small.goto(f"{match_url}#seat=all&step={step + 1}")
        small.locator("#decisions .private-log").first.wait_for()
        fits(small)
        shoot(small, "hosted-replay-380")
    finally:
        narrow.close()

    # a visitor's copy of the replay: the same decisions, no log, and no request for one
    visitor = browser.new_context(viewport=NARROW)
    asked: list[str] = []
    try:
        other = visitor.new_page()
        other.on("request", lambda r: asked.append(r.url))
        other.goto(f"{match_url}#seat=all&step={step + 1}")
        shown_at(other, step + 1)
        assert other.locator("#decisions .decision .player.seat-0").count() >= 1
        assert other.locator(".private-log, #private-logs, #seat-logs").count() == 0
        assert not any("/logs/" in url for url in asked), asked
        fits(other)
    finally:
        visitor.close()
