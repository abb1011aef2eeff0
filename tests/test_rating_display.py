"""How a rating reads, on every page and in every answer: a fit on too little evidence is
provisional (no interval thousands of points wide, no negative low shown), a bot's page
shows one rating in its table and its chart whatever the bot's status, neighbours that
are statistically tied share a tie group, and a CSV writes numbers to what they mean.

The history is written as rated results (matches, seats, Elo changes folded by the real
``apply_match``) and fitted by the worker's own refit (``refits.refit_game``); the pages
and the API are read through Flask's test client.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena.api.exports import csv_text
from arena.competition.ratings import (
    PROVISIONAL_MATCHES,
    PROVISIONAL_WIDTH,
    apply_match,
    tie_groups,
)
from arena.models import Bot, Match, MatchSeat, Rating, RatingChange
from arena.web import charts
from arena.worker import refits
from arena.worker.lifecycle import ELO
from tests.support.web import add_bot, close_app, make_app, page_text

SVG = "{http://www.w3.org/2000/svg}"
MINUS = "\u2212"

# (winner, loser, times) in Cactus: ace and deuce are even, king beats both nearly always,
# the rookie has three matches, the retiree (paused after its matches) an even record
CACTUS = [
    ("king", "ace", 18),
    ("king", "deuce", 18),
    ("ace", "king", 2),
    ("deuce", "king", 2),
    ("ace", "deuce", 10),
    ("deuce", "ace", 10),
    ("retiree", "deuce", 7),
    ("deuce", "retiree", 7),
    ("rookie", "ace", 2),
    ("ace", "rookie", 1),
]
# and in the other Cactus game: the newcomer lost its one match (its fit: about 1200,
# a 95% interval from below zero to near 2900)
CACTUS_GAME = [("stalwart", "steady", 15), ("steady", "stalwart", 15), ("stalwart", "newcomer", 1)]


def _interleaved(schedule: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """The schedule's results, one of each kind in turn, so that Elo moves as it would."""
    left = [[winner, loser, times] for winner, loser, times in schedule]
    results = []
    while any(entry[2] for entry in left):
        for entry in left:
            if entry[2]:
                results.append((entry[0], entry[1]))
                entry[2] -= 1
    return results


def _rate(session: Any, game: str, ids: dict[str, int], schedule: list, first: int) -> int:
    """The schedule's two-seat results as rated matches (rating_seq from ``first``), with
    their Elo changes and each bot's rating; the next rating_seq."""
    elo: dict[int, float] = {}
    played: dict[int, int] = {}
    seq = first
    for seq, (winner, loser) in enumerate(_interleaved(schedule), start=first):
        seats = [ids[winner], ids[loser]]
        match = Match(kind="ladder", game=game, seed=seq, status="finished")
        match.rating_seq = seq
        match.seats = [
            MatchSeat(seat=0, bot_id=seats[0], rank=1),
            MatchSeat(seat=1, bot_id=seats[1], rank=2),
        ]
        session.add(match)
        session.flush()
        for bot, (before, after) in apply_match(elo, seats, [1, 2], ELO).items():
            session.add(
                RatingChange(match_id=match.id, bot_id=bot, game=game, before=before, after=after)
            )
            elo[bot] = after
            played[bot] = played.get(bot, 0) + 1
    for bot, rating in elo.items():
        session.add(Rating(bot_id=bot, game=game, elo=rating, matches=played[bot]))
    return seq + 1


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    app = make_app(tmp_path_factory.mktemp("rating-display"))
    database = app.extensions["arena.db"]
    with database.session() as session:
        ids = {
            name: add_bot(session, name, ["cactus"]).id
            for name in ("ace", "deuce", "king", "rookie", "retiree")
        }
        ids |= {
            name: add_bot(session, name, ["cactus-game"]).id
            for name in ("stalwart", "steady", "newcomer")
        }
        seq = _rate(session, "cactus", ids, CACTUS, 1)
        _rate(session, "cactus-game", ids, CACTUS_GAME, seq)
    for game in ("cactus", "cactus-game"):
        assert refits.refit_game(database, game).status == "fitted"
    with database.session() as session:
        session.get(Bot, ids["retiree"]).status = "paused"
    yield {"app": app, "ids": ids}
    close_app(app)


@pytest.fixture
def client(site: dict[str, Any]) -> FlaskClient:
    return site["app"].test_client()


def board(client: FlaskClient, game: str = "cactus") -> dict[str, dict[str, Any]]:
    rows = client.get(f"/api/ratings/{game}").get_json()
    return {row["name"]: row for row in rows}


def csv_table(client: FlaskClient, url: str) -> list[dict[str, str]]:
    response = client.get(url)
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True), newline="")))


def page_row(body: str, bot_id: int) -> str:
    found = re.search(rf'<tr data-bot-id="{bot_id}">(.*?)</tr>', body, re.S)
    assert found, bot_id
    return found[1]


def rating_figure(body: str, game: str = "cactus") -> str:
    return body.split(f'<figure class="history" data-game="{game}">', 1)[1].split("</figure>")[0]


def ratings_table(body: str) -> str:
    return body.split("<h2>Ratings</h2>", 1)[1].split("</table>", 1)[0]


# -- provisional ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "game", "why"),
    [
        ("rookie", "cactus", "3 rated matches of the 10 needed"),
        ("newcomer", "cactus-game", "1 rated match of the 10 needed"),
    ],
)
def test_a_bot_with_few_matches_is_provisional_everywhere(
    client: FlaskClient, site: dict[str, Any], name: str, game: str, why: str
) -> None:
    rookie = site["ids"][name]
    row = board(client, game)[name]
    fitted = row["fitted"]
    # the fit is there, and it is the kind that misleads: a few matches, an interval wider
    # than the rest of the leaderboard (the newcomer's starts below zero)
    assert fitted["matches"] < PROVISIONAL_MATCHES
    assert fitted["high"] - fitted["low"] > 600
    if name == "newcomer":
        assert fitted["low"] < 0 and fitted["high"] - fitted["low"] > 2000
    assert row["provisional"] is True and row["tie_group"] is None
    (mine,) = client.get(f"/api/bots/{rookie}").get_json()["ratings"]
    assert mine["provisional"] is True and mine["fitted"] == fitted
    (flat,) = [r for r in csv_table(client, f"/api/ratings/{game}.csv") if r["bot"] == name]
    assert flat["provisional"] == "true" and flat["tie_group"] == ""

    shown = [charts.number(fitted[k]) for k in ("low", "high")]
    # the leaderboard: "provisional" and why, no interval bar, none of the fit's numbers
    body = client.get(f"/leaderboard/{game}").get_data(as_text=True)
    cells = page_row(body, rookie)
    text = " ".join(page_text(cells).split())
    assert f"provisional ({why})" in text
    assert "interval-chart" not in cells
    assert not any(n in text for n in shown) and MINUS not in text and "-" not in text
    # the bars' scale is not stretched by it (the other Cactus game's board has no bar:
    # with three bots, one of them the newcomer, every interval is wide, see docs/ratings.md)
    axis = re.search(r'<svg [^>]*class="chart interval-axis".*?</svg>', body, re.S)
    if game == "cactus":
        label = ET.fromstring(axis[0]).get("aria-label")
        assert float(re.fullmatch(r"Elo scale from (\d+) to (\d+)", label)[1]) > fitted["low"]
    else:
        assert axis is None
    # its page: the table and the chart's caption say provisional, the chart has no band
    body = client.get(f"/bots/{rookie}").get_data(as_text=True)
    table = " ".join(page_text(ratings_table(body)).split())
    figure = rating_figure(body, game)
    caption = " ".join(page_text(figure.split("<figcaption>")[1]).split())
    assert f"provisional ({why})" in table
    matches = f"{fitted['matches']} rated match" + ("es" if fitted["matches"] != 1 else "")
    assert caption == f"{matches}; provisional ({why})"
    assert "class='band'" not in figure and 'class="band"' not in figure
    assert not any(n in page_text(body) for n in shown) and MINUS not in page_text(body)


def test_a_bot_with_enough_matches_and_a_narrow_interval_is_not_provisional(
    client: FlaskClient,
) -> None:
    rows = board(client)
    for name in ("ace", "deuce", "king"):
        fitted = rows[name]["fitted"]
        assert fitted["matches"] >= PROVISIONAL_MATCHES, name
        assert fitted["high"] - fitted["low"] <= PROVISIONAL_WIDTH, name
        assert rows[name]["provisional"] is False, name


# -- one rating per bot, wherever it is shown ----------------------------------------------
@pytest.mark.parametrize("name", ["king", "retiree"])
def test_the_bot_page_table_and_chart_show_the_same_rating(
    client: FlaskClient, site: dict[str, Any], name: str
) -> None:
    """The retiree is paused: off the leaderboard, its rating still is its rating (its page
    used to say "not fitted yet" in its table beside a fitted chart)."""
    bot_id = site["ids"][name]
    (api,) = client.get(f"/api/bots/{bot_id}").get_json()["ratings"]
    assert api["provisional"] is False
    fitted = api["fitted"]
    body = client.get(f"/bots/{bot_id}").get_data(as_text=True)
    table = ratings_table(body)
    assert re.search(r'<td class="num fitted">(\d+)</td>', table)[1] == f"{fitted['rating']:.0f}"
    assert f"{fitted['low']:.0f} \u2013 {fitted['high']:.0f}" in page_text(table)
    figure = rating_figure(body)
    svg = ET.fromstring(
        re.search(r'<svg [^>]*class="chart rating-chart".*?</svg>', figure, re.S)[0]
    )
    line = svg.find(f".//{SVG}line[@class='fitted']")
    band = svg.find(f".//{SVG}rect[@class='band']")
    assert float(line.get("data-rating")) == pytest.approx(fitted["rating"], abs=0.05)
    assert float(band.get("data-low")) == pytest.approx(fitted["low"], abs=0.05)
    assert float(band.get("data-high")) == pytest.approx(fitted["high"], abs=0.05)
    assert f"fitted {fitted['rating']:.0f}," in page_text(figure)
    assert "not fitted yet" not in page_text(body) and "provisional" not in page_text(table)


def test_the_leaderboard_and_the_bot_page_read_the_same_rating(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    rows = board(client)
    for name in ("ace", "king", "rookie"):
        (mine,) = client.get(f"/api/bots/{site['ids'][name]}").get_json()["ratings"]
        assert {k: mine[k] for k in ("elo", "matches", "fitted", "provisional")} == {
            k: rows[name][k] for k in ("elo", "matches", "fitted", "provisional")
        }


# -- ties -----------------------------------------------------------------------------------
def test_two_close_bots_share_a_tie_group_and_a_clearly_better_one_does_not(
    client: FlaskClient, site: dict[str, Any]
) -> None:
    rows = board(client)
    ace, deuce, king = rows["ace"], rows["deuce"], rows["king"]
    assert ace["tie_group"] is not None and ace["tie_group"] == deuce["tie_group"]
    assert king["tie_group"] != ace["tie_group"]
    # the evidence: ace and deuce an even record, king far above both
    assert abs(ace["fitted"]["rating"] - deuce["fitted"]["rating"]) < 50
    assert king["fitted"]["low"] > max(ace["fitted"]["high"], deuce["fitted"]["high"])
    flat = {r["bot"]: r for r in csv_table(client, "/api/ratings/cactus.csv")}
    assert flat["ace"]["tie_group"] == flat["deuce"]["tie_group"] == str(ace["tie_group"])
    assert flat["king"]["tie_group"] != flat["ace"]["tie_group"]
    # the page: a mark on each tied row, naming the other, none on king's
    body = client.get("/leaderboard/cactus").get_data(as_text=True)
    for me, other in (("ace", "deuce"), ("deuce", "ace")):
        cells = page_row(body, site["ids"][me])
        title = re.search(r'<span class="tie" title="([^"]*)">\u2248</span>', cells)
        assert title and title[1].startswith(f"Statistically tied with {other}:"), cells
    assert 'class="tie"' not in page_row(body, site["ids"]["king"])


def test_tie_groups_compare_with_the_group_s_first_and_stop_at_a_provisional_row() -> None:
    # half widths 60: tied below sqrt(2)·60 ≈ 84.9 points apart
    def fit(rating: float) -> tuple[float, float, float]:
        return (rating, rating - 60, rating + 60)

    # 1700 and 1640 tied; 1580 is tied with 1640 but not with the group's first: a new group
    assert tie_groups([fit(1700), fit(1640), fit(1580), fit(1530)]) == [1, 1, 2, 2]
    # a provisional row ends the group above it; a row alone has no group
    assert tie_groups([fit(1700), None, fit(1690), fit(1500)]) == [None, None, None, None]
    assert tie_groups([fit(1700), fit(1690), None, fit(1600), fit(1590)]) == [1, 1, None, 2, 2]


# -- CSV numbers --------------------------------------------------------------------------------
DECIMALS = re.compile(r"^-?\d+\.(\d+)$")


def decimals(text: str) -> int:
    found = DECIMALS.match(text)
    return len(found[1]) if found else 0


def test_the_leaderboard_csv_writes_ratings_to_one_decimal(client: FlaskClient) -> None:
    rows = csv_table(client, "/api/ratings/cactus.csv")
    assert len(rows) == 4
    exact = board(client)
    for row in rows:
        for column in ("elo", "fitted_rating", "fitted_low", "fitted_high"):
            assert decimals(row[column]) <= 1, (column, row[column])
        assert float(row["elo"]) == pytest.approx(exact[row["bot"]]["elo"], abs=0.05)
    # the JSON keeps full precision: it is the CSV that rounds
    assert any(decimals(repr(r["elo"])) > 1 for r in exact.values())


def test_every_csv_rounds_by_the_column_s_meaning() -> None:
    row = {
        "elo": 1523.456789,
        "fitted_low": -0.04,
        "points": 3.5,
        "points_per_match": 2 / 3,
        "mean_score": 0.123456,
        "par_per_deal": -1e-9,
        "matches": 12,
    }
    text = csv_text([row], list(row))
    (written,) = list(csv.DictReader(io.StringIO(text, newline="")))
    assert written == {
        "elo": "1523.5",
        "fitted_low": "0.0",
        "points": "3.5",
        "points_per_match": "0.667",
        "mean_score": "0.123",
        "par_per_deal": "0.0",
        "matches": "12",
    }
