"""The class's way through the API on both databases (SQLite and PostgreSQL): the
queries of accounts and events (filters without case, a game inside a JSON list, the
private-event clauses, the roster's counts, the exports) are plain SQL that each engine
must run the same.  The acceptance interface, end to end: an event from the organiser
token, a sign-up with its join code, a bot in the event from that account, "mine", an
organiser's PATCH, the roster and the leaderboard as CSV, a private event hidden."""

from __future__ import annotations

import csv
import io

from arena.db import Database
from tests.support.api import auth

ORGANISER = "organiser-token-for-both-databases"
PASSWORD = "a long enough password"


def test_a_class_runs_the_same_on_both_databases(make_app, database_url: str):
    database = Database(database_url)
    database.upgrade()
    database.dispose()
    app = make_app(database_url=database_url, organiser_token=ORGANISER, rate_limits=False)
    client = app.test_client()
    admin = auth(ORGANISER)

    event = client.post(
        "/api/events",
        json={"name": "Algorithms", "games": ["cactus"], "visibility": "private"},
        headers=admin,
    )
    assert event.status_code == 201, event.get_json()
    event = event.get_json()
    assert event["id"] and event["join_code"]

    student = client.post(
        "/api/accounts",
        json={"name": "Ada", "password": PASSWORD, "join_code": event["join_code"].lower()},
    )
    assert student.status_code == 201, student.get_json()
    token = auth(student.get_json()["token"])
    bot = client.post(
        "/api/bots",
        json={"name": "Ada-Bot", "connect": True, "games": ["cactus"], "event_id": event["id"]},
        headers=token,
    )
    assert bot.status_code == 201, bot.get_json()
    bot_id = bot.get_json()["id"]
    open_bot = client.post(
        "/api/bots",
        json={"name": "open", "connect": True, "games": ["president"], "owner": "Someone"},
        headers=admin,
    ).get_json()

    def names(query: str, headers=None) -> list[str]:
        answer = client.get(f"/api/bots?{query}", headers=headers)
        assert answer.status_code == 200, answer.get_json()
        return [b["name"] for b in answer.get_json()]

    assert names("mine=true", token) == ["Ada-Bot"]
    assert names("q=ADA", token) == ["Ada-Bot"]
    assert names("owner=someone") == ["open"]
    assert names("game=cactus", admin) == ["Ada-Bot"]
    assert names("game=president") == ["open"]
    assert names("") == ["open"]  # the private event's bot is its members'
    assert client.get(f"/api/bots/{bot_id}").status_code == 404

    paused = client.patch(
        f"/api/bots/{bot_id}", json={"status": "paused", "name": "Ada-Bot-2"}, headers=admin
    )
    assert paused.status_code == 200, paused.get_json()
    assert (paused.get_json()["status"], paused.get_json()["paused_by"]) == (
        "paused",
        "organiser",
    )
    assert (
        client.patch(f"/api/bots/{bot_id}", json={"status": "active"}, headers=token).status_code
        == 403
    )

    roster = client.get(f"/api/events/{event['id']}/roster", headers=token).get_json()
    row = next(r for r in roster if r["bot_id"] == bot_id)
    assert (row["account"], row["bot"], row["status"], row["matches"]) == (
        "Ada",
        "Ada-Bot-2",
        "paused",
        0,
    )
    text = client.get(f"/api/events/{event['id']}/roster.csv", headers=token).get_data(as_text=True)
    assert [r["bot"] for r in csv.DictReader(io.StringIO(text))] == [r["bot"] or "" for r in roster]
    board = client.get(f"/api/events/{event['id']}/leaderboard.csv", headers=token)
    assert board.status_code == 200 and board.mimetype == "text/csv"
    assert client.get(f"/api/events/{event['id']}/leaderboard.csv").status_code == 404
    assert client.get(f"/api/bots/{open_bot['id']}/versions").status_code == 200
