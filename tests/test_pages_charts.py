"""The charts and fault reasons of the pages, through Flask's test client: a bot's rating
history, its results by opponent and its faults by kind, the interval bars of a
leaderboard, the top five of the leaderboards, and why a bot was struck out.

The data are real: rated matches played by the referee (house policies, and HTTP bots
that misbehave on loopback) and stored the way a worker stores them
(``play.save_result``: ranks, faults, Elo changes); a long rating history and a bot that
met many opponents are written with the models directly.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from sqlalchemy import event, select

from arena.models import Match, MatchSeat, Rating, RatingChange
from arena.web import charts
from tests.support.charts import (
    FITTED,
    SNEAKY,
    SPOKES,
    VETERAN_MATCHES,
    build,
)
from tests.support.web import close_app, make_app, page_text

SVG = "{http://www.w3.org/2000/svg}"


# -- data ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    app = make_app(tmp_path_factory.mktemp("charts"))
    data = build(app)
    yield {"app": app, **data}
    close_app(app)


@pytest.fixture
def client(site: dict[str, Any]) -> FlaskClient:
    return site["app"].test_client()


# -- reading a page ----------------------------------------------------------------------------
def get(client: FlaskClient, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.data[:300]
    return response.data.decode()


def svgs(fragment: str, kind: str) -> list[ET.Element]:
    """The charts of a kind in a piece of a page, parsed (they must be well-formed)."""
    found = re.findall(rf'<svg [^>]*class="chart {kind}".*?</svg>', fragment, re.S)
    return [ET.fromstring(svg) for svg in found]


def part(body: str, start: str, end: str) -> str:
    assert start in body, start
    return body.split(start, 1)[1].split(end, 1)[0]


def polyline(svg: ET.Element) -> list[str]:
    return svg.find(f".//{SVG}polyline").get("points").split()


def slow_results(app: Flask, bot_id: int) -> dict[int, list[int]]:
    """Per opponent: [matches, ahead, tied, behind] over finished matches, the slow way."""
    with app.extensions["arena.db"].session() as session:
        rows = session.execute(
            select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank)
            .join(Match)
            .where(Match.status == "finished")
        ).all()
    seats = defaultdict(list)
    for match_id, bot, rank in rows:
        seats[match_id].append((bot, rank))
    totals: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for players in seats.values():
        mine = [rank for bot, rank in players if bot == bot_id]
        if not mine:
            continue
        for other in {bot for bot, _ in players if bot != bot_id}:
            totals[other][0] += 1
        for rank in mine:
            for bot, theirs in players:
                if bot != bot_id:
                    totals[bot][1 if rank < theirs else 2 if rank == theirs else 3] += 1
    return dict(totals)


def table_rows(fragment: str) -> dict[int, list[int]]:
    """``data-bot-id`` rows of a table and their numbers, in order."""
    rows = {}
    for bot_id, cells in re.findall(r'<tr data-bot-id="(\d+)">(.*?)</tr>', fragment, re.S):
        rows[int(bot_id)] = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', cells)]
    return rows


# -- the rating history -------------------------------------------------------------------------
def test_the_bot_page_draws_its_rating_history_with_the_fitted_band(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    alpha = site["ids"]["alpha"]
    with site["app"].extensions["arena.db"].session() as session:
        changes = session.scalars(
            select(RatingChange)
            .join(Match)
            .where(RatingChange.bot_id == alpha)
            .order_by(Match.rating_seq)
        ).all()
        elo = session.get(Rating, (alpha, "cactus")).elo
        history = [changes[0].before, *(c.after for c in changes)]
    assert len(changes) == 14  # see the next test
    body = get(client, f"/bots/{alpha}")
    figure = part(body, '<figure class="history" data-game="cactus">', "</figure>")
    (svg,) = svgs(figure, "rating-chart")
    assert svg.get("data-points") == str(len(changes) + 1) == str(len(polyline(svg)))
    assert svg.get("data-matches") == str(len(changes))
    rating, low, high = FITTED["alpha"]
    band = svg.find(f".//{SVG}rect[@class='band']")
    assert (band.get("data-low"), band.get("data-high")) == (f"{low:.1f}", f"{high:.1f}")
    assert svg.find(f".//{SVG}line[@class='fitted']").get("data-rating") == f"{rating:.1f}"
    label = svg.get("aria-label")
    assert label.startswith(f"Rating history of alpha in Cactus: Elo over {len(changes)} rated")
    assert f"from 1500 to {charts.number(elo)}" in label
    assert f"lowest {charts.number(min(history))}, highest {charts.number(max(history))}" in label
    assert "fitted rating 1531, 95% interval 1460 to 1603" in label
    text = page_text(figure)
    assert "Match number" in text and "Elo" in text
    assert f"{len(changes)} rated matches; fitted 1531, 95% interval 1460 \u2013 1603" in text


def test_the_rated_matches_counted_are_those_the_bot_played(site: dict[str, Any]) -> None:
    # alpha: 2 x 2 two-seat matches against each of bravo and charlie (8), two three-seat
    # matches, two against sneaky and two against the broken bot
    with site["app"].extensions["arena.db"].session() as session:
        rated = session.scalar(select(Rating.matches).where(Rating.bot_id == site["ids"]["alpha"]))
    assert rated == 14


def test_a_long_history_is_drawn_with_at_most_300_points(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    body = get(client, f"/bots/{site['veteran']}")
    assert len(body) < 60_000  # a thousand matches, a small page
    (svg,) = svgs(part(body, 'data-game="president"', "</figure>"), "rating-chart")
    assert svg.get("data-points") == "300" == str(len(polyline(svg)))
    assert svg.get("data-matches") == str(VETERAN_MATCHES)
    assert svg.find(f".//{SVG}rect[@class='band']") is None
    assert "not fitted yet" in page_text(part(body, 'data-game="president"', "</figure>"))


def test_a_bot_without_matches_draws_nothing(client: FlaskClient, site: dict[str, Any]) -> None:
    body = get(client, f"/bots/{site['spokes'][0]}")  # matches, but none rated
    assert 'class="chart rating-chart"' not in body and "Rating history" not in body
    assert "Faults by kind" not in body


# -- results by opponent ------------------------------------------------------------------------
def test_results_by_opponent_match_the_database(client: FlaskClient, site: dict[str, Any]) -> None:
    for name in ("alpha", "bravo", SNEAKY, "broken"):
        bot_id = site["ids"][name]
        body = get(client, f"/bots/{bot_id}")
        shown = table_rows(part(body, '<section id="opponents">', "</table>"))
        assert shown == slow_results(site["app"], bot_id), name
        (chart,) = svgs(part(body, '<section id="opponents">', "</section>"), "results-chart")
        rows = [g for g in chart.iter(f"{SVG}g") if g.get("class") == "row"]
        assert len(rows) == len(shown)


def test_only_the_most_met_opponents_are_listed_in_order(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    body = get(client, f"/bots/{site['hub']}")
    shown = table_rows(part(body, '<section id="opponents">', "</table>"))
    expected = slow_results(site["app"], site["hub"])
    assert len(expected) == SPOKES and len(shown) == 20
    assert set(expected) - set(shown) == set(site["spokes"][:2])  # met once each
    assert all(expected[bot] == numbers for bot, numbers in shown.items())
    meetings = [numbers[0] for numbers in shown.values()]
    assert meetings == sorted(meetings, reverse=True)
    # spoke 21 met the hub 11 times two-seat (hub behind) and once in the three-seat match
    assert shown[site["spokes"][-1]] == [12, 0, 0, 12]
    # spoke 20: 11 ties (20 is divisible by 5), and behind the hub in the three-seat match
    assert shown[site["spokes"][-2]] == [12, 1, 11, 0]


def test_the_bot_page_asks_the_same_number_of_queries_whatever_it_shows(
    site: dict[str, Any],
) -> None:
    """No query per opponent, per game or per match: a bot with 22 opponents and one
    with a few cost the page the same number of statements."""
    app = site["app"]
    engine = app.extensions["arena.db"].engine
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        costs = {}
        for bot in (site["hub"], site["ids"]["alpha"], site["ids"]["charlie"]):
            statements.clear()
            get(app.test_client(), f"/bots/{bot}")
            costs[bot] = len(statements)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(set(costs.values())) == 1, costs


# -- faults --------------------------------------------------------------------------------------
def test_the_bot_page_counts_faults_by_kind(client: FlaskClient, site: dict[str, Any]) -> None:
    broken = site["ids"]["broken"]
    with site["app"].extensions["arena.db"].session() as session:
        faults = session.scalars(
            select(MatchSeat.faults).where(MatchSeat.bot_id == broken, MatchSeat.strikes > 0)
        ).all()
    total = sum(f["kinds"]["http_status"] for f in faults)
    assert len(faults) == 2 and total == 6  # struck out twice, three strikes each
    body = get(client, f"/bots/{broken}")
    section = part(body, '<section id="fault-kinds">', "</section>")
    row = part(section, '<tr data-kind="http_status">', "</tr>")
    assert re.findall(r'<td class="num">(\d+)</td>', row) == [str(total), "2"]
    assert "HTTP error status" in page_text(row)
    (chart,) = svgs(section, "bar-chart")
    assert chart.get("aria-label").endswith(f"over all its finished matches: http_status {total}")
    # the recent faults say why, with the bot's own words
    recent = page_text(part(body, "<h2>Recent faults</h2>", "</section>"))
    assert 'HTTP 500: the bot\'s server failed \u2014 answer: {"error": "boom"}' in recent


def test_the_match_page_says_why_a_bot_was_struck_out(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    for name, reason in (
        ("broken", "HTTP 500: the bot's server failed"),
        ("lost", 'illegal action {"type": "fly"} (not in the legal list)'),
    ):
        match_id = site["struck"][name][0]
        body = get(client, f"/matches/{match_id}")
        results = part(body, '<table class="data results">', "</table>")
        row = next(r for r in results.split("<tr>") if f">{name}</a>" in r)
        text = " ".join(page_text(row).split())
        assert re.search(r"(forfeit|struck out) " + re.escape(reason), text), text
        assert f'<span class="fault-reason">{escape(reason)}</span>' in row
        faults = " ".join(page_text(part(body, "<h3>Faults</h3>", "</ul>")).split())
        assert f"{name}: 3 faults" in faults and f": {reason}" in faults
    # the opponents, who answered, have no reason beside their names
    body = get(client, f"/matches/{site['struck']['broken'][0]}")
    assert body.count('class="fault-reason"') == 1


# -- leaderboards --------------------------------------------------------------------------------
def test_the_leaderboard_draws_each_fitted_interval_on_one_scale(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    body = get(client, "/leaderboard/cactus")
    table = part(body, '<table class="data leaderboard">', "</table>")
    (axis,) = svgs(table, "interval-axis")
    low, high = map(
        float, re.fullmatch(r"Elo scale from (\d+) to (\d+)", axis.get("aria-label")).groups()
    )
    bars = {}
    for bot_id, row in re.findall(r'<tr data-bot-id="(\d+)">(.*?)</tr>', table, re.S):
        found = svgs(row, "interval-chart")
        bars[int(bot_id)] = found[0] if found else None
        if not found:
            assert "not fitted yet" in page_text(row)
    ids = site["ids"]
    assert {b for b, svg in bars.items() if svg is not None} == {ids["alpha"], ids["bravo"]}
    for name, (rating, lo, hi) in FITTED.items():
        svg = bars[ids[name]]
        assert (svg.get("data-low"), svg.get("data-high")) == (f"{lo:.1f}", f"{hi:.1f}")
        assert svg.get("data-rating") == f"{rating:.1f}"
        assert svg.get("aria-label") == (
            f"{name}: fitted {charts.number(rating)}, 95% interval "
            f"{charts.number(lo)} to {charts.number(hi)}"
        )
        # on the page's scale: where the box starts and ends
        rect = svg.find(f"{SVG}rect")
        x = charts.linear((low, high), (charts.BAR_PAD, charts.BAR_WIDTH - charts.BAR_PAD))
        assert float(rect.get("x")) == pytest.approx(x(lo), abs=0.1)
        assert float(rect.get("x")) + float(rect.get("width")) == pytest.approx(x(hi), abs=0.1)
    assert low <= min(f[1] for f in FITTED.values()) and high >= max(f[2] for f in FITTED.values())
    assert page_text(table).count("not fitted yet") == len(bars) - 2


def test_the_top_five_keep_each_elo_on_its_name_row(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    body = get(client, "/leaderboard")
    card = part(body, 'href="/leaderboard/cactus">Cactus</a></h2>', "</table>")
    rows = re.findall(r'<tr data-bot-id="(\d+)">(.*?)</tr>', card, re.S)
    assert len(rows) == 5
    with site["app"].extensions["arena.db"].session() as session:
        query = select(Rating.bot_id, Rating.elo).where(Rating.game == "cactus")
        elos = {bot: elo for bot, elo in session.execute(query)}
    for position, (bot_id, row) in enumerate(rows, start=1):
        assert f'<td class="pos">{position}</td>' in row
        assert f'href="/bots/{bot_id}"' in row
        assert f'<td class="num elo">{elos[int(bot_id)]:.0f}</td>' in row
    assert [elos[int(b)] for b, _ in rows] == sorted(elos.values(), reverse=True)[:5]


def test_names_in_charts_are_escaped(client: FlaskClient, site: dict[str, Any]) -> None:
    for url in (
        f"/bots/{site['ids']['alpha']}",
        f"/bots/{site['ids'][SNEAKY]}",
        "/leaderboard/cactus",
    ):
        body = get(client, url)
        assert SNEAKY not in body and html.escape(SNEAKY) in body, url
    body = get(client, f"/bots/{site['ids']['alpha']}")
    (chart,) = svgs(part(body, '<section id="opponents">', "</section>"), "results-chart")
    assert SNEAKY in chart.get("aria-label")  # escaped in the markup, the name when read
