"""Headless Chromium for the browser tests, and the fixtures they share: ``browser`` and
``page`` (each reads the ``site`` fixture of the module that imports it; module scoped, so
each module gets its own), ``site`` (the app of tests/test_browser.py: bots, a replayed
match, an odd record, a running and a live tournament, served on loopback), screenshots on
request, a buffered WSGI app, a loopback bot to register, and waiting for a form's POST."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session
from werkzeug.serving import make_server

from arena.models import Bot, Match, MatchSeat, Replay, Tournament
from arena.services import create_tournament
from tests.support.badbots import serving
from tests.support.web import (
    add_bot,
    close_app,
    make_app,
    play_match,
)

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


def shoot(page: Any, name: str) -> None:
    """A full-page screenshot into $ARENA_SCREENSHOTS, when set (for looking, not testing)."""
    folder = os.environ.get("ARENA_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def shoot_part(page: Any, selector: str, name: str) -> None:
    """One element's screenshot, like ``shoot``."""
    folder = os.environ.get("ARENA_SCREENSHOTS")
    if folder:
        page.locator(selector).screenshot(path=str(Path(folder) / f"{name}.png"))


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


def open_tournament_form(page: Any, site: dict[str, Any]) -> None:
    """The new-tournament form, once its formats have come from ``GET /api/formats``."""
    page.goto(f"{site['url']}/tournaments/new")
    page.wait_for_selector("#tournament-form[data-formats-loaded]", state="attached")
    assert page.locator("#format-select option").count() >= 3


def submitted(page: Any) -> Any:
    """Waits for the form's POST to the API: ``with submitted(page) as request: ...``."""
    return page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/api/tournaments"))


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
        crowd = [add_bot(session, f"cat{i}", ["cactus"]).id for i in range(1, 7)]
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
        # a balanced tournament of the six cat bots, its matches queued (no worker plays them)
        live, _ = create_tournament(
            session,
            app.extensions["arena.config"],
            name="Live league",
            game="cactus",
            options=None,
            bot_ids=crowd,
            seats_per_match=2,
            format="balanced",
            matches_per_bot=8,
            seed=3,
        )
        ids = {
            "match": match.id,
            "bots": [ann.id, bob.id],
            "crowd": crowd,
            "running": running.id,
            "live": live.id,
            "odd": odd,
        }
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
