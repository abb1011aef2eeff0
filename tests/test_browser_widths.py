"""Every page of the site at a phone's width (380 px) and a laptop's (1280 px) in Chromium:
none may be wider than the window (``document.documentElement.scrollWidth >
window.innerWidth``), whoever reads it.

The data is a class's: a teacher (an organiser account) with an event of a long name,
students with long names and bots whose names have no space to wrap at, a qualifier
played to its end (standings, crosstable, grades), a replayed match, a person's seat, a
reset link.  Each page is read by who would read it: a visitor, a student, the teacher
(the event's roster with its Organiser column), the admin.  A page that overflows is
named with its widest element; all of them are listed at once.

With ``ARENA_SCREENSHOTS`` set, each page is saved there at each width
(``widths-<page>-<width>.png``)."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from werkzeug.serving import make_server

from arena.app import create_app
from arena.config import Config
from arena.models import Bot, Match, Tournament
from tests.support.api import auth
from tests.support.browser import _require_chromium, buffered, shoot
from tests.support.browser import browser as browser  # one Chromium for the module
from tests.support.web import finish, play_match

ADMIN = "organiser-secret"
PASSWORD = "correct horse battery"
WIDTHS = (380, 1280)
TEACHER = "Professor Hamilton-Lovelace"
# names with no space to break at: the worst a table cell can be given
STUDENTS = {
    "ada.lovelace.first.of.her.name": ["analytical-engine-monte-carlo-tree-search-v12"],
    "grace.hopper.compiler.queen": ["nanosecond-heuristic-snapper", "cobol-minimax-depth-9"],
    "alan-turing-the-enigmatic": ["bombe-expectimax-with-a-very-long-name-too"],
}
EVENT = "Algorithms and Data Structures, spring semester: the card-game bots project"

# The page's widest element that sticks out of the window (not counting what a scroll
# container clips): "tag#id.class" and the start of its text, and its right edge.
WIDEST = """() => {
  const width = window.innerWidth;
  const clipped = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible"
          && up.getBoundingClientRect().right <= width + 0.5) return true;
    }
    return false;
  };
  let found = null;
  let right = 0;
  const consider = (el, box) => {
    if (box.width === 0 || box.right <= width + 0.5 || box.right < right || clipped(el)) return;
    found = el;
    right = box.right;
  };
  for (const el of document.body.querySelectorAll("*")) consider(el, el.getBoundingClientRect());
  // a long word that sticks out of a box that does not: named by the element it is in
  const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (texts.nextNode()) {
    range.selectNodeContents(texts.currentNode);
    consider(texts.currentNode.parentElement, range.getBoundingClientRect());
  }
  const sw = document.documentElement.scrollWidth;
  if (!found) return { scrollWidth: sw, widest: "(none found)" };
  const name = found.tagName.toLowerCase() + (found.id ? "#" + found.id : "")
    + Array.from(found.classList, (c) => "." + c).join("");
  const text = (found.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 50);
  const edge = " (right edge " + Math.round(right) + " px)";
  return { scrollWidth: sw, widest: name + ' "' + text + '"' + edge };
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Iterator[dict]:
    """A class's arena, served on a free loopback port in a background thread."""
    _require_chromium()
    folder = tmp_path_factory.mktemp("widths")
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

    def post(path: str, body: dict[str, Any], token: str = ADMIN) -> dict[str, Any]:
        answer = api.post(path, json=body, headers=auth(token))
        assert answer.status_code in (200, 201), (path, answer.get_json())
        return answer.get_json()

    post("/api/accounts", {"name": "root", "password": PASSWORD, "role": "admin"})
    teacher = post("/api/accounts", {"name": TEACHER, "password": PASSWORD, "role": "organiser"})
    event = post("/api/events", {"name": EVENT, "games": ["cactus"], "bots_per_account": 3},
                 teacher["token"])  # fmt: skip
    bots: list[int] = []
    students = {}
    for name, bot_names in STUDENTS.items():
        student = post("/api/accounts", {"name": name, "password": PASSWORD,
                                         "join_code": event["join_code"]})  # fmt: skip
        students[name] = student
        for bot_name in bot_names:
            body = {"name": bot_name, "connect": True, "games": ["cactus"],
                    "event_id": event["id"], "description": "It plays. " * 40}  # fmt: skip
            bots.append(post("/api/bots", body, student["token"])["id"])
    qualifier = post(
        "/api/tournaments",
        {"name": "Qualifier: beat the reference bots in at least eight of ten matches, please",
         "game": "cactus", "event_id": event["id"], "format": "qualifier", "bot_ids": bots,
         "challenger_ids": bots[1:], "seats_per_match": 2, "matches_per_bot": 4,
         "pass_rule": {"kind": "score", "min_score": 0.6}},
        teacher["token"],
    )  # fmt: skip
    with app.extensions["arena.db"].session() as session:
        matches = list(
            session.scalars(
                select(Match.id).where(Match.tournament_id == qualifier["id"]).order_by(Match.id)
            )
        )
    for n, match_id in enumerate(matches):
        finish(app, match_id, [1, 2] if n % 3 else [2, 1])
    with app.extensions["arena.db"].session() as session:
        assert session.get(Tournament, qualifier["id"]).status == "finished"
        first, second = session.get(Bot, bots[0]), session.get(Bot, bots[1])
        replayed = play_match(session, "cactus", [first, second], 2024).id
    reset = post(f"/api/accounts/{students['grace.hopper.compiler.queen']['id']}/reset", {},
                 teacher["token"])  # fmt: skip
    seat = post(
        "/api/play",
        {"game": "cactus", "seats": [{"person": "a person with a rather long name"},
                                     {"house": "random"}]},
    )["links"][0]["url"]  # fmt: skip
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            "url": f"http://127.0.0.1:{server.port}",
            "event": event["id"],
            "qualifier": qualifier["id"],
            "bot": bots[0],
            "replayed": replayed,
            "reset": reset["reset_path"],
            "seat": seat,
        }
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        app.extensions["arena.db"].dispose()


def pages(site: dict[str, Any]) -> dict[str, list[tuple[str, str, str | None]]]:
    """Who reads which pages: (a name for the report, the path, a selector to wait for)."""
    event, bot, qualifier = site["event"], site["bot"], site["qualifier"]
    return {
        "visitor": [
            ("home", "/", None),
            ("leaderboards", "/leaderboard", None),
            ("leaderboard", "/leaderboard/cactus", None),
            ("bots", "/bots", None),
            ("bot", f"/bots/{bot}", None),
            ("tournaments", "/tournaments", None),
            ("tournament", f"/tournaments/{qualifier}", None),
            ("events", "/events", None),
            ("event", f"/events/{event}", None),
            ("match", f"/matches/{site['replayed']}", "#table .seat-area"),
            ("play", "/play", None),
            ("play-cactus", "/play/cactus", None),
            ("play-president", "/play/president", None),
            ("seat", site["seat"], None),
            ("login", "/login", None),
            ("signup", "/signup", None),
            ("reset", site["reset"], None),
            ("not-found", "/no/such/page", None),
            ("api-docs", "/api/docs", "#swagger-ui-container .information-container"),
        ],
        "student": [
            ("my-bots", "/my/bots", None),
            ("own-bot", f"/bots/{bot}", None),
            ("register", f"/bots/register?event_id={event}", None),
            ("account", "/account", None),
            ("notices", "/notices", None),
            ("student-event", f"/events/{event}", None),
        ],
        "teacher": [
            ("roster", f"/events/{event}", None),
            ("grades", f"/tournaments/{qualifier}", None),
            ("new-event", "/events/new", None),
            ("new-tournament", f"/tournaments/new?event_id={event}",
             "#tournament-form[data-formats-loaded]"),
            ("organised-bot", f"/bots/{bot}", None),
            ("status", "/status", None),
        ],
        "admin": [
            ("accounts", "/accounts", None),
            ("admin-tournament", f"/tournaments/{qualifier}", None),
        ],
    }  # fmt: skip


def log_in(page: Any, url: str, name: str) -> None:
    page.goto(f"{url}/login")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/my/bots")


def test_no_page_is_wider_than_the_window_at_380_and_1280_px(
    browser: Any, site: dict[str, Any]
) -> None:
    readers = {"visitor": None, "student": next(iter(STUDENTS)), "teacher": TEACHER,
               "admin": "root"}  # fmt: skip
    overflows: list[str] = []
    errors: list[str] = []
    seen = 0
    for reader, paths in pages(site).items():
        context = browser.new_context(viewport={"width": WIDTHS[-1], "height": 900})
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        if readers[reader]:
            log_in(page, site["url"], readers[reader])
        for name, path, ready in paths:
            page.set_viewport_size({"width": WIDTHS[-1], "height": 900})
            page.goto(site["url"] + path)
            if ready:
                page.wait_for_selector(ready, state="attached")
            for width in reversed(WIDTHS):  # the page narrowed, as a window is
                page.set_viewport_size({"width": width, "height": 900})
                seen += 1
                shoot(page, f"widths-{name}-{width}")
                if page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth"):
                    over = page.evaluate(WIDEST)
                    overflows.append(
                        f"{name} ({path}, as {reader}) at {width} px is "
                        f"{over['scrollWidth']} px wide; widest: {over['widest']}"
                    )
        context.close()
    assert seen == 2 * sum(len(p) for p in pages(site).values())
    assert overflows == [], "\n".join(overflows)
    assert errors == [], errors


def test_the_roster_shows_the_organisers_column_at_1280_px(
    browser: Any, site: dict[str, Any]
) -> None:
    """The teacher's roster at 1280 px: every column, the Organiser one with its buttons
    included, is inside the window without scrolling the table."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        log_in(page, site["url"], TEACHER)
        page.goto(f"{site['url']}/events/{site['event']}")
        shoot(page, "widths-roster-organiser-1280")
        assert page.locator("#roster th", has_text=re.compile("^Organiser$")).count() == 1
        assert page.locator("#roster td.row-actions button").count() >= 3
        right = page.evaluate(
            "() => Math.max(...Array.from(document.querySelectorAll("
            "'#roster th, #roster td.row-actions button'), e => e.getBoundingClientRect().right))"
        )
        assert right <= 1280, f"the roster reaches {right:.0f} px of a 1280 px window"
    finally:
        context.close()
