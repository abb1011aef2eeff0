"""The pages in a real browser: Debian's Chromium driven by Playwright, against the app
served on loopback.  Covers what needs JavaScript: stepping through a replay with the
buttons and the arrow keys, the per-seat perspective, and the forms that call the API.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``); Playwright's own browser
download is never used.  Without it these tests fail on CI (``CI=true``) and are skipped
elsewhere, saying why.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.serving import make_server

from arena.models import Bot, Match, MatchSeat, Replay, Tournament
from arena.replay import seat_events
from arena.services import token_matches
from tests.badbots import serving
from tests.test_web import add_bot, close_app, make_app, play_match

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TIMEOUT_MS = 10_000


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = (
        f"Debian's Chromium is not installed at {CHROMIUM}: "
        "apt-get update && apt-get install -y chromium"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


# -- the site and the browser -----------------------------------------------------------
def buffered(app: Any) -> Any:
    """The WSGI app with each response read whole and closed before werkzeug writes it.

    When a browser drops a connection while a static file is being sent, werkzeug's
    dev server skips ``close()`` on the file it was streaming (the read that drains the
    socket raises first), and the open file surfaces later as a ResourceWarning."""

    def app_buffered(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            if hasattr(body, "close"):
                body.close()

    return app_buffered


ODD_EVENTS = [
    {"to": "public", "type": "mystery", "answer": 42, "note": "<img src=x onerror=alert(1)>"},
    {"to": [1], "type": "whisper", "secret": "for bob only"},
]


def odd_match(session: Session, bots: list[Bot]) -> int:
    """A finished match whose record has event types no game emits and no steps: the
    viewer falls back to showing each event's type and fields, as text."""
    match = Match(game="cactus", seed=1, status="finished", kind="ladder")
    match.seats = [MatchSeat(seat=s, bot_id=b.id, rank=s + 1, score=0) for s, b in enumerate(bots)]
    session.add(match)
    session.flush()
    record = {
        "format": 1,
        "match_id": str(match.id),
        "game": "cactus",
        "seed": 1,
        "options": {},
        "players": [b.name for b in bots],
        "steps": [],
        "events": ODD_EVENTS,
        "outcome": {"ranks": [1, 2], "scores": [0, 0], "rounds": [], "struck_out": []},
        "strikes": [0, 0],
    }
    session.add(Replay(match_id=match.id, record=record))
    session.flush()
    return match.id


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The app with two cactus bots, one replayed match and a running tournament, served
    on a free loopback port in a background thread."""
    _require_chromium()
    app = make_app(tmp_path_factory.mktemp("browser"))
    with app.extensions["arena.db"].session() as session:
        ann = add_bot(session, "ann", ["cactus"])
        bob = add_bot(session, "bob", ["cactus"])
        add_bot(session, "pat", ["president"])
        match = play_match(session, "cactus", [ann, bob], 2024)
        record = session.get(Replay, match.id).record
        running = Tournament(
            name="Running cup",
            game="cactus",
            options={},
            seats_per_match=2,
            games_per_pairing=2,
            seed=1,
            status="running",
        )
        session.add(running)
        session.flush()
        odd = odd_match(session, [ann, bob])
        ids = {"match": match.id, "bots": [ann.id, bob.id], "running": running.id, "odd": odd}
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {**ids, "app": app, "record": record, "url": f"http://127.0.0.1:{server.port}"}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        close_app(app)


@pytest.fixture(scope="module")
def browser(site: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, site: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    the_page = context.new_page()
    the_page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    the_page.on("pageerror", lambda exc: errors.append(str(exc)))
    # nothing may leave the app's own origin (no CDN, no fonts)
    outside: list[str] = []

    def guard(route: Any) -> None:
        if route.request.url.startswith(site["url"]):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    the_page.route("**/*", guard)
    yield the_page
    context.close()
    assert errors == [], errors
    assert outside == [], outside


def shoot(page: Any, name: str) -> None:
    """A full-page screenshot into $ARENA_SCREENSHOTS, when set (for looking, not testing)."""
    folder = os.environ.get("ARENA_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def counter(page: Any) -> str:
    return page.locator("#counter").inner_text().strip()


def wait_counter(page: Any, text: str) -> None:
    page.wait_for_function(
        "text => document.getElementById('counter').textContent.trim() === text", arg=text
    )


def current_event(page: Any) -> tuple[str, str]:
    node = page.locator("#event-current .event")
    return node.get_attribute("data-index"), node.inner_text()


# -- the replay viewer -----------------------------------------------------------------
def test_stepping_through_a_replay(page: Any, site: dict[str, Any]) -> None:
    total = len(site["record"]["events"])
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"1 / {total}")
    assert page.locator("#replay").get_attribute("data-match-id") == str(site["match"])
    first = current_event(page)
    assert first[0] == "0" and "deal" in first[1]
    assert page.locator("[data-go=prev]").is_disabled()

    page.click("[data-go=next]")
    wait_counter(page, f"2 / {total}")
    second = current_event(page)
    assert second != first and second[0] == "1"

    page.keyboard.press("ArrowRight")
    wait_counter(page, f"3 / {total}")
    assert current_event(page)[0] == "2"
    shoot(page, "replay-all")
    page.keyboard.press("ArrowLeft")
    wait_counter(page, f"2 / {total}")
    assert current_event(page) == second

    page.click("[data-go=last]")
    wait_counter(page, f"{total} / {total}")
    last = current_event(page)
    assert last[0] == str(total - 1) and "Match over" in last[1]
    assert page.locator("[data-go=next]").is_disabled()
    page.keyboard.press("ArrowRight")  # at the end: stays
    wait_counter(page, f"{total} / {total}")

    page.keyboard.press("Home")
    wait_counter(page, f"1 / {total}")
    page.keyboard.press("End")
    wait_counter(page, f"{total} / {total}")
    page.click("[data-go=first]")
    wait_counter(page, f"1 / {total}")
    assert current_event(page) == first
    # the log shows the events up to the current one only
    assert page.locator("#event-log li:visible").count() == 1


def test_decisions_are_shown_next_to_their_event(page: Any, site: dict[str, Any]) -> None:
    record = site["record"]
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"1 / {len(record['events'])}")
    # the first decision (a draw or taking the discard) comes with the first event after it
    first_turn = next(i for i, e in enumerate(record["events"]) if e["type"] == "turn")
    for _ in range(first_turn + 1):
        page.keyboard.press("ArrowRight")
    decision = page.locator("#decisions .decision").first
    decision.wait_for()
    text = decision.inner_text()
    action = record["steps"][0][0]["action"]["type"]
    assert action in text and " ms" in text and "step 1" in text


def test_a_seat_sees_only_what_it_received(page: Any, site: dict[str, Any]) -> None:
    record = site["record"]
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"1 / {len(record['events'])}")
    # everyone's view: seat 1's private cards are there
    page.click("[data-go=last]")
    private_to_1 = page.locator("#event-log li", has_text="only seat 1")
    assert private_to_1.count() > 0

    page.click("[data-seat='0']")
    mine = seat_events(record, 0)
    wait_counter(page, f"{len(mine)} / {len(mine)}")  # still at the end of the match
    assert page.locator("[data-seat='0']").get_attribute("aria-pressed") == "true"
    assert page.locator("#event-log li").count() == len(mine)
    assert page.locator("#event-log li", has_text="only seat 1").count() == 0
    types = page.locator("#event-log li").evaluate_all("items => items.map(i => i.dataset.type)")
    assert types == [e["type"] for e in mine]
    # seat 1's first private event (the cards it peeked at) is nowhere on the page
    secret = next(e for e in record["events"] if e["to"] == [1])
    assert secret not in mine
    log_text = page.locator("#event-log").inner_text()
    assert "only seat 0" in log_text
    shoot(page, "replay-seat-0")
    # only seat 0's own decisions are listed
    page.click("[data-go=first]")
    deciders = []
    for _ in range(min(len(mine) - 1, 40)):
        page.keyboard.press("ArrowRight")
        deciders += page.locator("#decisions .decision > .player").all_inner_texts()
    assert deciders and all(seat.endswith("(seat 0)") for seat in deciders), deciders

    page.click("[data-seat='all']")
    page.click("[data-go=last]")
    wait_counter(page, f"{len(record['events'])} / {len(record['events'])}")


def test_a_perspective_can_be_linked(page: Any, site: dict[str, Any]) -> None:
    mine = seat_events(site["record"], 1)
    page.goto(f"{site['url']}/matches/{site['match']}#seat=1&event=3")
    wait_counter(page, f"3 / {len(mine)}")
    assert page.locator("[data-seat='1']").get_attribute("aria-pressed") == "true"
    page.keyboard.press("ArrowRight")
    wait_counter(page, f"4 / {len(mine)}")
    assert page.evaluate("location.hash") == "#seat=1&event=4"


def test_unknown_events_show_their_type_and_fields_as_text(page: Any, site: dict[str, Any]) -> None:
    page.goto(f"{site['url']}/matches/{site['odd']}")
    wait_counter(page, "1 / 2")
    text = page.locator("#event-current").inner_text()
    assert "mystery" in text and "answer" in text and "42" in text
    assert "<img src=x onerror=alert(1)>" in text  # shown as text, never as markup
    assert page.locator("#replay img").count() == 0
    assert "cannot be placed" in page.locator("#decisions").inner_text()
    page.keyboard.press("ArrowRight")
    wait_counter(page, "2 / 2")
    assert "for bob only" in page.locator("#event-current").inner_text()
    page.click("[data-seat='0']")
    wait_counter(page, "1 / 1")
    assert "whisper" not in page.locator("#replay").inner_text()


# -- forms ------------------------------------------------------------------------------
@contextmanager
def loopback_bot(games: list[str]) -> Iterator[str]:
    """A bot endpoint that only answers ``GET /`` (enough to be registered)."""
    info = {"apiversion": "1", "name": "form bot", "author": "tests", "version": "1"}
    body = json.dumps({**info, "games": games}).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Handler) as url:
        yield url


def test_registering_a_bot_shows_its_secrets_once(page: Any, site: dict[str, Any]) -> None:
    with loopback_bot(["cactus"]) as endpoint:
        page.goto(f"{site['url']}/bots/register")
        page.fill("input[name=name]", "form-bot")
        page.fill("input[name=endpoint]", endpoint)
        page.fill("input[name=owner]", "browser test")
        page.fill("textarea[name=description]", "registered by the browser test")
        page.click("button[type=submit]")
        page.locator("#register-result").wait_for(state="visible")
    token = page.locator("#owner-token").inner_text()
    secret = page.locator("#signing-secret").inner_text()
    assert token and secret and token != secret
    assert "Copy these now" in page.locator("#register-result").inner_text()
    assert page.locator("#register-form").is_hidden()
    shoot(page, "registered")
    with site["app"].extensions["arena.db"].session() as session:
        bot = session.scalar(select(Bot).where(Bot.name == "form-bot"))
        assert bot is not None and bot.games == ["cactus"]
        assert token_matches(token, bot.owner_token_hash)
        assert bot.signing_secret == secret
    assert page.locator(".bot-link").get_attribute("href") == f"/bots/{bot.id}"
    # shown once: neither a reload of the form nor the bot's page shows them again
    page.reload()
    assert page.locator("#register-result").is_hidden()
    assert token not in page.content()
    page.goto(f"{site['url']}/bots/{bot.id}")
    assert token not in page.content() and secret not in page.content()


def test_a_refused_registration_shows_the_api_message(page: Any, site: dict[str, Any]) -> None:
    page.goto(f"{site['url']}/bots/register")
    page.fill("input[name=name]", "ann")  # taken
    page.fill("input[name=endpoint]", "not a url")
    page.fill("input[name=owner]", "browser test")
    page.click("button[type=submit]")
    error = page.locator("#register-form .form-error")
    error.wait_for(state="visible")
    assert "endpoint" in error.inner_text().lower()
    assert page.locator("#register-result").is_hidden()


def test_the_tournament_form_filters_bots_and_starts_a_tournament(
    page: Any, site: dict[str, Any]
) -> None:
    page.goto(f"{site['url']}/tournaments/new")
    visible = page.locator(".bot-choice:visible")
    page.select_option("#game-select", "president")
    assert [t.split("(")[0].strip() for t in visible.all_inner_texts()] == ["pat"]
    assert page.input_value("#seats-input") == "3"
    page.select_option("#game-select", "cactus")
    names = [t.split("(")[0].strip() for t in visible.all_inner_texts()]
    assert "ann" in names and "bob" in names and "pat" not in names
    assert page.locator("#preset-select option").all_inner_texts()[1:] == ["classic", "pagat"]
    page.fill("input[name=name]", "Browser cup")
    for bot_id in site["bots"]:
        page.check(f"input[name=bot_ids][value='{bot_id}']")
    page.select_option("#preset-select", "classic")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    assert "Browser cup" in page.locator("h1").inner_text()
    standings = page.locator("table.standings tbody tr").all_inner_texts()
    assert {row.split("\t")[1] for row in standings} == {"ann", "bob"}


def test_cancelling_a_tournament(page: Any, site: dict[str, Any]) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{site['url']}/tournaments/{site['running']}")
    page.click("#cancel-form button[type=submit]")
    page.locator("h1 .status-cancelled").wait_for()
    assert page.locator("#cancel-form").count() == 0
