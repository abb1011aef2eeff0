"""The charts and the leaderboards in a real browser (Debian's Chromium, as in
``tests/test_browser.py``): a long name in the top five wraps inside its own row, beside
its own Elo; the bot page's charts are drawn at a readable size.

``ARENA_SCREENSHOTS=<folder>`` keeps screenshots of the pages, for looking at them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from arena.models import Rating
from tests.support.browser import _require_chromium, buffered, loopback_bot, shoot, shoot_part

# the browser and a page of it, as the replay viewer's tests have them (on this site)
from tests.support.browser import browser as browser
from tests.support.browser import page as page
from tests.support.charts import build
from tests.support.web import add_bot, close_app, make_app

# names of the longest length allowed (64): one wraps at its spaces, one anywhere
SPACED = "The extraordinarily patient bot with a very long name indeed 42"
UNBROKEN = "Unbreakable_name_without_a_single_space_in_it_at_all_1234567890"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The data of the chart tests (``tests.support.charts``) and two long-named bots at the
    top of the Cactus leaderboard (one registered through the API), served on loopback."""
    _require_chromium()
    app = make_app(tmp_path_factory.mktemp("browser-charts"))
    data = build(app)
    with loopback_bot(["cactus"]) as endpoint:
        answer = app.test_client().post(
            "/api/bots", json={"name": SPACED, "endpoint": endpoint, "owner": "tests"}
        )
        assert answer.status_code == 201, answer.get_json()
    with app.extensions["arena.db"].session() as session:
        spaced = answer.get_json()["id"]
        unbroken = add_bot(session, UNBROKEN, ["cactus"]).id
        session.add(Rating(bot_id=spaced, game="cactus", elo=1712.0, matches=30))
        session.add(Rating(bot_id=unbroken, game="cactus", elo=1688.0, matches=30))
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            **data,
            "app": app,
            "long": [spaced, unbroken],
            "url": f"http://127.0.0.1:{server.port}",
        }
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        close_app(app)


def rows_of(card: Any) -> list[dict[str, Any]]:
    """Each row of a card's top five: its bot id and the boxes of its name and Elo."""
    rows = card.locator("table.top tbody tr")
    found = []
    for i in range(rows.count()):
        row = rows.nth(i)
        found.append(
            {
                "bot_id": int(row.get_attribute("data-bot-id")),
                "name": row.locator("th.name a").bounding_box(),
                "elo": row.locator("td.elo").bounding_box(),
                "elo_text": row.locator("td.elo").inner_text(),
            }
        )
    return found


@pytest.mark.parametrize("width", [1280, 820, 380])
def test_each_elo_stays_on_the_row_of_its_name(page: Any, site: dict[str, Any], width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{site['url']}/leaderboard")
    card = page.locator(".game-card").filter(has=page.locator("h2", has_text="Cactus")).first
    rows = rows_of(card)
    assert len(rows) == 5
    assert [r["bot_id"] for r in rows[:2]] == site["long"]
    assert [r["elo_text"] for r in rows[:2]] == ["1712", "1688"]
    line = min(r["elo"]["height"] for r in rows)
    for r in rows[:2]:  # the long names do wrap: the test would prove nothing otherwise
        assert r["name"]["height"] > 1.5 * line, r
    for n, r in enumerate(rows):
        name, elo = r["name"], r["elo"]
        middle = elo["y"] + elo["height"] / 2
        # the Elo is level with its own name (its first line), not with the next one's
        assert name["y"] <= middle <= name["y"] + name["height"], (n, r)
        assert abs(elo["y"] - name["y"]) < line / 2, (n, r)
        for other in rows[n + 1 :]:
            assert middle < other["name"]["y"], (n, r)
        assert elo["x"] >= name["x"] + name["width"] - 1  # beside the name, not over it
    # the numbers are right-aligned in one column
    rights = {round(r["elo"]["x"] + r["elo"]["width"]) for r in rows}
    assert max(rights) - min(rights) <= 1
    shoot(page, f"leaderboards-{width}")


def test_the_charts_of_a_bot_page_are_drawn_readably(page: Any, site: dict[str, Any]) -> None:
    alpha = site["ids"]["alpha"]
    page.goto(f"{site['url']}/bots/{alpha}")
    chart = page.locator("#rating-history svg.rating-chart")
    box = chart.bounding_box()
    assert box["width"] >= 500 and box["height"] >= 180
    line = page.locator("#rating-history polyline").bounding_box()
    assert box["x"] < line["x"] and line["x"] + line["width"] <= box["x"] + box["width"]
    band = page.locator("#rating-history rect.band").bounding_box()
    assert band["height"] > 4 and band["width"] > 0.8 * box["width"]
    label = page.locator("#rating-history text.axis-label", has_text="Match number")
    assert label.bounding_box()["y"] > line["y"]  # under the line
    for section in ("#opponents", "#fault-kinds"):
        if page.locator(section).count():
            assert page.locator(f"{section} svg.chart").bounding_box()["width"] > 200
    assert page.locator("#opponents svg.results-chart").bounding_box()["height"] > 40
    shoot(page, "bot-page")
    shoot_part(page, "#rating-history", "bot-page-history")
    shoot_part(page, "#opponents", "bot-page-opponents")
    page.goto(f"{site['url']}/bots/{site['ids']['broken']}")
    assert page.locator("#fault-kinds svg.bar-chart").is_visible()
    shoot(page, "bot-page-faults")
    page.goto(f"{site['url']}/leaderboard/cactus")
    bars = page.locator("table.leaderboard svg.interval-chart")
    assert bars.count() == 2 and bars.first.bounding_box()["width"] >= 150
    axis = page.locator("table.leaderboard svg.interval-axis").bounding_box()
    assert abs(axis["x"] - bars.first.bounding_box()["x"]) < 1  # the scale is over the bars
    shoot(page, "leaderboard-cactus")
    page.goto(f"{site['url']}/matches/{site['struck']['broken'][0]}")
    assert "HTTP 500" in page.locator("table.results .fault-reason").inner_text()
    shoot(page, "match-struck-out")
