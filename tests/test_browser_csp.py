"""The pages under their Content-Security-Policy in a real browser (Debian's Chromium,
as in ``tests/test_browser.py``): the policy forbids inline script and style, so a page
that still had some would lose it silently in a user's browser.  Every main page, the
API's documentation and the 404 page load with no ``securitypolicyviolation`` and no
console error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from tests.support.api import tournament_body
from tests.support.browser import _require_chromium, buffered

# the browser and a page of it, as the replay viewer's tests have them (on this site)
from tests.support.browser import browser as browser
from tests.support.browser import page as page
from tests.support.charts import build
from tests.support.web import close_app, make_app

# every violation the page reports, from before its first script runs
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(
    `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The charts' data (bots, rated matches) and a tournament, served on loopback."""
    _require_chromium()
    app = make_app(tmp_path_factory.mktemp("browser-csp"))
    data = build(app)
    ids = list(data["ids"].values())[:3]
    answer = app.test_client().post("/api/tournaments", json=tournament_body(ids))
    assert answer.status_code == 201, answer.get_json()
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            **data,
            "tournament": answer.get_json()["id"],
            "url": f"http://127.0.0.1:{server.port}",
        }
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        close_app(app)


def paths(site: dict[str, Any]) -> list[str]:
    alpha = site["ids"]["alpha"]
    return [
        "/",
        "/leaderboard",
        "/leaderboard/cactus",
        "/bots",
        f"/bots/{alpha}",
        "/bots/register",
        "/tournaments",
        f"/tournaments/{site['tournament']}",
        "/tournaments/new",
        "/events",
        "/play",
        "/play/cactus",
        "/login",
        "/signup",
        "/api/docs",
        "/no/such/page",
    ]


def test_no_page_breaks_its_content_security_policy(page: Any, site: dict[str, Any]) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script(WATCH)
    for path in paths(site):
        answer = page.goto(f"{site['url']}{path}")
        assert answer is not None
        assert "default-src 'self'" in answer.headers["content-security-policy"], path
        page.wait_for_load_state("networkidle")
        if path == "/api/docs":  # its start-up script ran: the operations are listed
            page.locator(".opblock").first.wait_for()
        violations = page.evaluate("window.__violations")
        # a 404 is a console error of its own, not a policy's
        seen = [e for e in errors if "404" not in e or path != "/no/such/page"]
        assert violations == [] and seen == [], (path, violations, seen)
        errors.clear()
    # and the page of an unknown address is the site's own, in its layout
    page.goto(f"{site['url']}/no/such/page")
    assert page.locator("header.topbar nav").is_visible()
    assert page.locator("main h1").inner_text() == "Not found"
