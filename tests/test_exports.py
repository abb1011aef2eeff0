"""The CSV exports are the same tables as their JSON routes: the open arena's leaderboard
(``/api/ratings/<game>.csv``, the flattening of ``/api/ratings/<game>``), an event's
leaderboard, a tournament's standings and crosstable; on real results (matches played
by the referee and stored as a worker stores them, ratings refitted).  A private event's
tables are not shown to strangers, and the pages link the downloads."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.api.exports import cell, decimals_of
from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Match
from arena.worker import play, refits
from arena.worker.lifecycle import declared_version
from tests.support.api import auth, error, register, tournament_body

ORGANISER = "organiser-token-of-the-exports"
PASSWORD = "a long enough password 1"
LEADERBOARD_HEADER = [
    "game", "rank", "bot_id", "bot", "owner", "elo", "matches",
    "fitted_rating", "fitted_low", "fitted_high", "provisional", "tie_group",
]  # fmt: skip


def play_matches(app: Flask, match_ids: list[int]) -> None:
    """Each match played to its end by random policies and saved as a worker saves it
    (each seat's version recorded as the worker records it); then the game's ratings are
    refitted (the worker's task, run here)."""
    database = app.extensions["arena.db"]
    for match_id in match_ids:
        with database.session() as session:
            match = session.get(Match, match_id)
            match.status = "running"
            for seat in match.seats:
                seat.version = declared_version(seat.bot)
            seats, seed = len(match.seats), match.seed
        clients = [
            PolicyClient(make_policy("cactus", "random", policy_rng(seed, seat)))
            for seat in range(seats)
        ]
        record = Referee().run("cactus", clients, seed)
        with mock.patch.object(refits.refit_ratings, "delay"):
            assert play.save_result(database, match_id, record)
    assert refits.refit_game(database, "cactus").status == "fitted"


def csv_rows(response: Any) -> tuple[list[str], list[dict[str, str]]]:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    reader = csv.DictReader(io.StringIO(response.get_data(as_text=True), newline=""))
    return list(reader.fieldnames or []), list(reader)


def assert_same_table(json_rows: list[dict[str, Any]], response: Any) -> list[str]:
    """The CSV has the JSON rows' columns (the JSON's keys come sorted: the CSV's order
    is checked by the callers) and the same rows, in order, each value written by the
    cell rule; returns the header."""
    header, rows = csv_rows(response)
    assert json_rows, "an empty table proves nothing"
    assert sorted(header) == sorted(json_rows[0]) and len(set(header)) == len(header)
    assert rows == [{k: cell(v, decimals_of(k)) for k, v in row.items()} for row in json_rows]
    return header


def flatten(game: str, rows: list[dict[str, Any]], owners: dict[int, str]) -> list[dict]:
    """``/api/ratings/<game>``'s nested rows as the export's flat ones, written out here
    independently of the server's code."""
    return [
        {
            "game": game,
            "rank": rank,
            "bot_id": row["bot_id"],
            "bot": row["name"],
            "owner": owners[row["bot_id"]],
            "elo": row["elo"],
            "matches": row["matches"],
            "fitted_rating": (row["fitted"] or {}).get("rating"),
            "fitted_low": (row["fitted"] or {}).get("low"),
            "fitted_high": (row["fitted"] or {}).get("high"),
            "provisional": row["provisional"],
            "tie_group": row["tie_group"],
        }
        for rank, row in enumerate(rows, start=1)
    ]


@pytest.fixture
def arena(
    make_app: Callable[..., Flask], info_bot: Callable[..., str], enqueued: list[int]
) -> dict[str, Any]:
    """An arena with an organiser token: an open round robin of three bots and a private
    event's round robin of three contestants' bots, every match played."""
    app = make_app(organiser_token=ORGANISER, rate_limits=False)
    client = app.test_client()
    admin = auth(ORGANISER)
    open_bots = [
        register(client, info_bot(), name, owner=f"{name}'s owner", games=["cactus"])
        for name in ("ada", "bob", "cy")
    ]
    response = client.post(
        "/api/tournaments", json=tournament_body([b["id"] for b in open_bots]), headers=admin
    )
    assert response.status_code == 201, response.get_json()
    open_cup = response.get_json()["id"]

    response = client.post(
        "/api/accounts",
        json={"name": "olga", "password": PASSWORD, "role": "organiser"},
        headers=admin,
    )
    assert response.status_code == 201, response.get_json()
    organiser = auth(response.get_json()["token"])
    response = client.post(
        "/api/events",
        json={"name": "class", "games": ["cactus"], "visibility": "private"},
        headers=organiser,
    )
    assert response.status_code == 201, response.get_json()
    event = response.get_json()
    members = []
    for name in ("dee", "eve", "fay"):
        response = client.post(
            "/api/accounts",
            json={"name": name, "password": PASSWORD, "join_code": event["join_code"]},
        )
        assert response.status_code == 201, response.get_json()
        member = auth(response.get_json()["token"])
        response = client.post(
            "/api/bots",
            json={
                "name": f"{name}-bot",
                "endpoint": info_bot(),
                "event_id": event["id"],
                "games": ["cactus"],
            },
            headers=member,
        )
        assert response.status_code == 201, response.get_json()
        members.append((member, response.get_json()))
    body = tournament_body([bot["id"] for _, bot in members], event_id=event["id"])
    response = client.post("/api/tournaments", json=body, headers=organiser)
    assert response.status_code == 201, response.get_json()
    event_cup = response.get_json()["id"]

    play_matches(app, enqueued)
    return {
        "app": app,
        "client": client,
        "open_cup": open_cup,
        "event": event,
        "event_cup": event_cup,
        "member": members[0][0],
        "owners": {b["id"]: b["owner"] for b in open_bots}
        | {bot["id"]: bot["owner"] for _, bot in members},
    }


def test_a_tournament_s_standings_csv_is_its_standings_table(arena):
    client: FlaskClient = arena["client"]
    cup = arena["open_cup"]
    rows = client.get(f"/api/tournaments/{cup}/standings").get_json()
    header = assert_same_table(rows, client.get(f"/api/tournaments/{cup}/standings.csv"))
    assert header == [
        "rank", "bot_id", "bot", "matches", "points", "points_per_match", "wins",
        "mean_rank", "challenger", "faults", "struck_out", "forfeits", "deals", "par_per_deal",
    ]  # fmt: skip
    # the flat rows are the tournament's standings, in its order, numbered
    detail = client.get(f"/api/tournaments/{cup}").get_json()
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [(r["bot_id"], r["bot"]) for r in rows] == [
        (s["bot_id"], s["name"]) for s in detail["standings"]
    ]
    for row, standing in zip(rows, detail["standings"], strict=True):
        for key in ("matches", "points", "points_per_match", "wins", "mean_rank", "faults"):
            assert row[key] == standing[key], key
        assert row["deals"] is None and row["par_per_deal"] is None  # not duplicate deals
    assert sum(r["matches"] for r in rows) == 2 * 6  # 3 pairs x 2 games, 2 seats each


def test_a_tournament_s_crosstable_csv_is_its_crosstable_table(arena):
    client = arena["client"]
    cup = arena["open_cup"]
    rows = client.get(f"/api/tournaments/{cup}/crosstable").get_json()
    header = assert_same_table(rows, client.get(f"/api/tournaments/{cup}/crosstable.csv"))
    assert header == ["bot_id", "bot", "opponent_id", "opponent", "wins", "draws", "losses"]
    cells = client.get(f"/api/tournaments/{cup}").get_json()["crosstable"]["cells"]
    assert {(r["bot_id"], r["opponent_id"]) for r in rows} == {
        (int(a), int(b)) for a, row in cells.items() for b in row
    }
    assert len(rows) == 6  # every ordered pair of three bots met
    for row in rows:
        assert {k: row[k] for k in ("wins", "draws", "losses")} == cells[str(row["bot_id"])][
            str(row["opponent_id"])
        ]
        assert row["wins"] + row["draws"] + row["losses"] == 2  # games_per_pairing


def test_the_open_arena_s_leaderboard_csv_flattens_its_json(arena):
    client = arena["client"]
    nested = client.get("/api/ratings/cactus").get_json()
    flat = flatten("cactus", nested, arena["owners"])
    header = assert_same_table(flat, client.get("/api/ratings/cactus.csv"))
    assert header == LEADERBOARD_HEADER
    assert {r["bot"] for r in flat} == {"ada", "bob", "cy"}  # the event's bots are not here
    assert all(r["fitted_rating"] is not None for r in flat)  # refitted: the columns are filled
    assert all(r["fitted_low"] <= r["fitted_rating"] <= r["fitted_high"] for r in flat)
    # a game nobody is rated in: the header alone; an unknown game: 404 as for the JSON
    header, rows = csv_rows(client.get("/api/ratings/president.csv"))
    assert (header, rows) == (list(LEADERBOARD_HEADER), [])
    error(client.get("/api/ratings/poker.csv"), 404, "unknown game 'poker'")


def test_an_event_s_leaderboard_csv_is_its_json_and_only_for_its_members(arena):
    client = arena["client"]
    event = arena["event"]["id"]
    member = arena["member"]
    rows = client.get(f"/api/events/{event}/leaderboard", headers=member).get_json()
    csv_response = client.get(f"/api/events/{event}/leaderboard.csv", headers=member)
    assert assert_same_table(rows, csv_response) == LEADERBOARD_HEADER
    assert {r["bot"] for r in rows} == {"dee-bot", "eve-bot", "fay-bot"}
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [r["elo"] for r in rows] == sorted((r["elo"] for r in rows), reverse=True)
    assert {r["owner"] for r in rows} == {"dee", "eve", "fay"}  # the accounts' names
    # ?game= narrows to one of the event's games, in the JSON and the CSV alike
    query = "?game=cactus"
    same = client.get(f"/api/events/{event}/leaderboard{query}", headers=member).get_json()
    assert same == rows
    assert_same_table(
        rows, client.get(f"/api/events/{event}/leaderboard.csv{query}", headers=member)
    )
    for path in ("leaderboard", "leaderboard.csv"):
        error(
            client.get(f"/api/events/{event}/{path}?game=president", headers=member),
            404,
            "plays cactus, not 'president'",
        )
        error(client.get(f"/api/events/{event}/{path}?game=poker", headers=member), 422)
        # a private event does not exist for anyone else
        error(client.get(f"/api/events/{event}/{path}"), 404, f"no event {event}")
        error(client.get(f"/api/events/{event + 1}/{path}", headers=member), 404)


def test_every_csv_writes_its_numbers_to_what_they_mean(arena):
    """Ratings to one decimal, any other fractional number (points, per-match means) to
    three; the JSON behind each keeps full precision."""
    client = arena["client"]
    cup, event, member = arena["open_cup"], arena["event"]["id"], arena["member"]
    urls = [
        (f"/api/tournaments/{cup}/standings.csv", None),
        (f"/api/tournaments/{cup}/standings.csv?by=version", None),
        (f"/api/tournaments/{cup}/crosstable.csv", None),
        ("/api/ratings/cactus.csv", None),
        (f"/api/events/{event}/leaderboard.csv", member),
        (f"/api/events/{event}/roster.csv", member),
    ]
    fractions = 0
    for url, headers in urls:
        _, rows = csv_rows(client.get(url, headers=headers))
        for row in rows:
            for column, text in row.items():
                found = re.fullmatch(r"-?\d+\.(\d+)", text)
                if found:
                    fractions += 1
                    assert len(found[1]) <= decimals_of(column), (url, column, text)
    assert fractions > 20  # the tables have fractional numbers to check
    # the JSON keeps them whole: an Elo there has its every digit
    exact = client.get("/api/ratings/cactus").get_json()
    assert any(len(repr(r["elo"]).split(".")[1]) > 1 for r in exact), exact


def test_a_private_event_s_tournament_tables_are_for_its_members(arena):
    client = arena["client"]
    cup = arena["event_cup"]
    for path in ("standings", "crosstable"):
        rows = client.get(f"/api/tournaments/{cup}/{path}", headers=arena["member"]).get_json()
        csv_response = client.get(f"/api/tournaments/{cup}/{path}.csv", headers=arena["member"])
        assert_same_table(rows, csv_response)
        for suffix in ("", ".csv"):
            error(client.get(f"/api/tournaments/{cup}/{path}{suffix}"), 404, f"no tournament {cup}")
        error(client.get(f"/api/tournaments/99999/{path}.csv"), 404, "no tournament 99999")


def test_the_pages_link_the_downloads(arena):
    client = arena["client"]
    cup = arena["open_cup"]
    page = client.get(f"/tournaments/{cup}").get_data(as_text=True)
    for path in ("standings.csv", "crosstable.csv"):
        link = f'href="/api/tournaments/{cup}/{path}"'
        assert link in page
        assert client.get(f"/api/tournaments/{cup}/{path}").status_code == 200
    page = client.get("/leaderboard/cactus").get_data(as_text=True)
    assert 'href="/api/ratings/cactus.csv"' in page


def test_the_exports_are_in_the_openapi_document(arena):
    paths = arena["client"].get("/api/openapi.json").get_json()["paths"]
    for path in (
        "/api/ratings/{game}.csv",
        "/api/events/{event_id}/leaderboard",
        "/api/events/{event_id}/leaderboard.csv",
        "/api/tournaments/{tournament_id}/standings",
        "/api/tournaments/{tournament_id}/standings.csv",
        "/api/tournaments/{tournament_id}/crosstable",
        "/api/tournaments/{tournament_id}/crosstable.csv",
    ):
        assert "get" in paths[path], path
    csv_answer = paths["/api/tournaments/{tournament_id}/standings.csv"]["get"]["responses"]
    assert "text/csv" in csv_answer["200"]["content"]
