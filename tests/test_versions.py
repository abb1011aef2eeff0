"""Results per version: a bot that changes the version it declares between matches (its
owner moves it to a new endpoint) shows each version with its own matches: in each
match's seats, in ``/api/bots/<id>/versions`` and on its page, and in its tournament's
standings split by version (JSON, the same CSV, the page).  The version counted is the
one declared when the match was claimed, not the one declared when it ended.  Matches
are played as a worker plays them, with SDK bots on loopback."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from arenabot import make_server
from flask import Flask

from arena.api.exports import cell, decimals_of
from arena.match.pools import Pools
from arena.models import Bot, Match, utcnow
from arena.worker import play, refits
from sample_bots.policy_bot import PolicyBot
from tests.support.api import auth


def policy_bot(stack: ExitStack, version: str) -> Any:
    bot = PolicyBot("cactus", "random")
    bot.version = version
    server = make_server(bot, "127.0.0.1", 0, secret=None)  # its secret comes at registration
    server.serve_in_background()
    stack.callback(server.close)
    return server


@pytest.fixture
def arena(
    make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch, enqueued: list[int]
) -> Iterator[dict[str, Any]]:
    """Bot "ver" at an endpoint declaring 1.0 (a second endpoint declares 2.0) and bot
    "other" (3.9), in a round robin of four matches."""
    app = make_app()
    pools = Pools()
    monkeypatch.setattr(play, "_pools", lambda: pools)
    # the last match ends the tournament, whose refit goes to a broker: none here
    monkeypatch.setattr(refits.refit_ratings, "delay", lambda game: None)
    client = app.test_client()
    with ExitStack() as stack:
        first, second = policy_bot(stack, "1.0"), policy_bot(stack, "2.0")
        opponent = policy_bot(stack, "3.9")
        registered = {}
        for name, server in (("ver", first), ("other", opponent)):
            response = client.post(
                "/api/bots", json={"name": name, "endpoint": server.url, "owner": "tests"}
            )
            assert response.status_code == 201, response.get_json()
            registered[name] = response.get_json()
            server.secret = registered[name]["signing_secret"]
        second.secret = registered["ver"]["signing_secret"]  # the owner's new deployment
        body = {
            "name": "versions cup",
            "game": "cactus",
            "bot_ids": [registered["ver"]["id"], registered["other"]["id"]],
            "seats_per_match": 2,
            "games_per_pairing": 4,
        }
        sent = len(enqueued)  # the bots' validation matches, not played here
        response = client.post("/api/tournaments", json=body)
        assert response.status_code == 201, response.get_json()
        yield {
            "app": app,
            "client": client,
            "bots": registered,
            "second": second,
            "tournament": response.get_json()["id"],
            "match_ids": enqueued[sent:],
        }
    pools.close()


def play_one(app: Flask, match_id: int) -> None:
    assert play.play_match(
        app.extensions["arena.db"], app.extensions["arena.config"], match_id
    ) == ("recorded")


def same_table(rows: list[dict[str, Any]], response: Any) -> None:
    assert response.status_code == 200 and response.mimetype == "text/csv"
    read = list(csv.DictReader(io.StringIO(response.get_data(as_text=True), newline="")))
    assert rows and read == [{k: cell(v, decimals_of(k)) for k, v in row.items()} for row in rows]


def test_each_version_has_the_matches_it_was_claimed_for(arena):
    app, client, bots = arena["app"], arena["client"], arena["bots"]
    ver, other = bots["ver"]["id"], bots["other"]["id"]
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    first, second, third, fourth = arena["match_ids"]

    play_one(app, first)
    # the owner moves the bot to its new deployment: the arena reads its GET / again
    response = client.patch(
        f"/api/bots/{ver}",
        json={"endpoint": arena["second"].url},
        headers=auth(bots["ver"]["owner_token"]),
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["info"]["version"] == "2.0"
    play_one(app, second)
    play_one(app, third)
    # the fourth is claimed while it declares 2.0; it declares 3.0 before the match ends
    with database.session() as session:
        match = session.get(Match, fourth)
        now = utcnow()
        assert play.claim(session, match, "tests", now.replace(year=now.year + 1), now) is None
    with database.session() as session:
        bot = session.get(Bot, ver)
        bot.info = {**bot.info, "version": "3.0"}
    assert play.play_claimed(database, config, fourth, "tests") == "recorded"

    # each match's seats say the version it played with
    seats = {
        match_id: {s["bot_id"]: s["version"] for s in client.get(f"/api/matches/{match_id}")
                   .get_json()["seats"]}
        for match_id in arena["match_ids"]
    }  # fmt: skip
    assert [seats[m][ver] for m in arena["match_ids"]] == ["1.0", "2.0", "2.0", "2.0"]
    assert {seats[m][other] for m in arena["match_ids"]} == {"3.9"}

    # the bot's results per version
    detail = {m: client.get(f"/api/matches/{m}").get_json() for m in arena["match_ids"]}
    wins = {
        m: any(s["bot_id"] == ver and s["rank"] == 1 for s in d["seats"])
        and sum(s["rank"] == 1 for s in d["seats"]) == 1
        for m, d in detail.items()
    }
    rows = client.get(f"/api/bots/{ver}/versions").get_json()
    assert [(r["version"], r["matches"]) for r in rows] == [("1.0", 1), ("2.0", 3)]
    assert rows[0]["wins"] == wins[first]
    assert rows[1]["wins"] == wins[second] + wins[third] + wins[fourth]
    for row in rows:
        assert 0 <= row["mean_score"] <= 1 and row["first_played"] <= row["last_played"]
    page = client.get(f"/bots/{ver}").get_data(as_text=True)
    section = page[page.index('id="versions"') :].split("</section>")[0]
    assert "Results per version" in section
    assert "<code>1.0</code>" in section and "<code>2.0</code>" in section
    assert "3.0" not in section

    # the tournament's standings by version: the versions' points add up to the bot's
    url = f"/api/tournaments/{arena['tournament']}/standings"
    split = client.get(url + "?by=version").get_json()
    assert [(r["bot"], r["version"], r["matches"]) for r in split] == [
        ("other", "3.9", 4),
        ("ver", "1.0", 1),
        ("ver", "2.0", 3),
    ]
    whole = {r["bot_id"]: r for r in client.get(url).get_json()}
    for bot_id in (ver, other):
        mine = [r for r in split if r["bot_id"] == bot_id]
        assert sum(r["points"] for r in mine) == whole[bot_id]["points"]
        assert sum(r["wins"] for r in mine) == whole[bot_id]["wins"]
    same_table(split, client.get(url + ".csv?by=version"))
    assert client.get(url + "?by=colour").status_code == 422
    page = client.get(f"/tournaments/{arena['tournament']}").get_data(as_text=True)
    section = page[page.index('id="versions"') :].split("</section>")[0]
    assert "Standings by version" in section and section.count(f'data-bot-id="{ver}"') == 2
