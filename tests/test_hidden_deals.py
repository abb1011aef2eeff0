"""No seed or card of a deal is published while a match that plays it is queued or
running: not the tournament's seed (every deal follows from it), nor a finished match's
seed, replay, frames or cards while another rotation of its duplicate deal is still to be
played, and not after a cancel either (the running matches finish).  Results are shown.

The tournament is a real schedule (``services.create_tournament``, duplicate deals); its
matches are played by the referee with random policies and stored as a worker stores
them (``play_module.save_result``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any
from unittest import mock

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena import services
from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Match
from arena.worker import play as play_module
from arena.worker import refits
from tests.support.web import add_bot, page_text

CARD = re.compile(r"\b(10|[2-9AJQK])[CDHS]\b")  # a card's code, anywhere in a page
PERSPECTIVES = ("all", "public", "0", "1")


def set_status(app: Flask, match_id: int, status: str) -> None:
    with app.extensions["arena.db"].session() as session:
        session.get(Match, match_id).status = status


def play(app: Flask, match_id: int) -> None:
    """Play the match from its seed and store it as a worker does."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        match = session.get(Match, match_id)
        match.status, match.attempts = "running", 1
        game, seed, options, seats = match.game, match.seed, match.options, len(match.seats)
    clients = [
        PolicyClient(make_policy(game, "random", policy_rng(seed, s)), name=f"p{s}")
        for s in range(seats)
    ]
    record = Referee().run(game, clients, seed, options, match_id=str(match_id))
    with mock.patch.object(refits.refit_ratings, "delay"):  # no broker in these tests
        assert play_module.save_result(database, match_id, record)


@pytest.fixture
def cup(make_app: Any) -> dict[str, Any]:
    """Three Cactus bots in a round robin with duplicate deals: three deals, each played
    twice (its seats rotated), every match queued."""
    app = make_app()
    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, name, ["cactus"]).id for name in ("ann", "bob", "cy")]
        tournament, match_ids = services.create_tournament(
            session,
            app.extensions["arena.config"],
            name="Duplicate cup",
            game="cactus",
            options=None,
            bot_ids=bots,
            seats_per_match=2,
            games_per_pairing=2,
            deal="duplicate",
            seed=5,
        )
        deals: dict[int, list[int]] = defaultdict(list)
        for match_id in match_ids:
            deals[session.get(Match, match_id).deal].append(match_id)
        seeds = {i: session.get(Match, i).seed for i in match_ids}
        tournament_id = tournament.id
    assert sorted(len(rotations) for rotations in deals.values()) == [2, 2, 2]
    return {
        "app": app,
        "client": app.test_client(),
        "tournament": tournament_id,
        "deals": list(deals.values()),
        "seeds": seeds,
    }


def assert_hidden(client: FlaskClient, match_id: int, seed: int, sibling: int) -> None:
    """Every answer about the match shows its result, and nothing of its deal."""
    detail = client.get(f"/api/matches/{match_id}").get_json()
    assert detail["seed"] is None
    assert detail["status"] == "finished" and all(s["rank"] for s in detail["seats"])
    assert detail["result"]["ranks"]  # results stay visible
    listed = client.get(f"/api/matches?tournament_id={detail['tournament_id']}&page_size=100")
    assert {m["id"]: m["seed"] for m in listed.get_json()}[match_id] is None
    for query in ("", "?seat=0", "?seat=1"):
        response = client.get(f"/api/matches/{match_id}/replay{query}")
        assert response.status_code == 403, (query, response.get_json())
        assert str(sibling) in response.get_json()["message"]
    for perspective in PERSPECTIVES:
        response = client.get(f"/api/matches/{match_id}/frames?perspective={perspective}")
        assert response.status_code == 403, perspective
        assert "deal" in response.get_json()["message"]
    page = client.get(f"/matches/{match_id}")
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    assert 'id="replay"' not in body and "replay.js" not in body  # no viewer, no frames
    assert f'href="/matches/{sibling}"' in body and "dealt the same cards" in page_text(body)
    assert str(seed) not in body and not CARD.search(body)
    assert "Rank" in page_text(body)


def assert_shown(client: FlaskClient, match_id: int, seed: int) -> None:
    assert client.get(f"/api/matches/{match_id}").get_json()["seed"] == seed
    record = client.get(f"/api/matches/{match_id}/replay").get_json()
    assert record["seed"] == seed
    assert client.get(f"/api/matches/{match_id}/replay?seat=1").status_code == 200
    for perspective in PERSPECTIVES:
        response = client.get(f"/api/matches/{match_id}/frames?perspective={perspective}")
        assert response.status_code == 200, perspective
        assert response.get_json()["frames"]
    body = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'id="replay"' in body and f"<code>{seed}</code>" in body


def tournament_seed(client: FlaskClient, tournament_id: int) -> list[int | None]:
    """The seed as the detail, the list and the page show it (None: not shown)."""
    detail = client.get(f"/api/tournaments/{tournament_id}").get_json()["seed"]
    listed = {t["id"]: t["seed"] for t in client.get("/api/tournaments").get_json()}
    page = client.get(f"/tournaments/{tournament_id}").get_data(as_text=True)
    shown = re.search(r"<dt>Seed</dt><dd><code>(\d+)</code>", page)
    return [detail, listed[tournament_id], int(shown[1]) if shown else None]


def test_a_rotation_is_hidden_while_another_rotation_of_its_deal_is_queued_or_running(
    cup: dict[str, Any],
) -> None:
    app, client, seeds = cup["app"], cup["client"], cup["seeds"]
    (first, second), (done, done_too), _ = cup["deals"]
    play(app, first)
    assert_hidden(client, first, seeds[first], second)  # its other rotation is queued
    set_status(app, second, "running")
    assert_hidden(client, first, seeds[first], second)  # ... and now being played
    # the last rotation of a deal still being played is followed live (public only)
    live = client.get(f"/api/matches/{second}/frames?perspective=public")
    assert live.status_code == 200 and live.get_json()["perspectives"] == ["public"]
    # a deal every rotation of which is over is shown, while the tournament goes on
    play(app, done)
    play(app, done_too)
    assert_shown(client, done, seeds[done])
    assert_shown(client, done_too, seeds[done_too])
    set_status(app, second, "queued")
    play(app, second)
    assert_shown(client, first, seeds[first])
    assert_shown(client, second, seeds[second])


def test_two_rotations_played_at_once_show_nothing_of_each_other(cup: dict[str, Any]) -> None:
    app, client = cup["app"], cup["client"]
    first, second = cup["deals"][0]
    set_status(app, first, "running")
    set_status(app, second, "running")
    for match_id, other in ((first, second), (second, first)):
        for perspective in PERSPECTIVES:
            response = client.get(f"/api/matches/{match_id}/frames?perspective={perspective}")
            assert response.status_code == 403, perspective
            assert str(other) in response.get_json()["message"]
        body = client.get(f"/matches/{match_id}").get_data(as_text=True)
        assert 'id="replay"' not in body and f'href="/matches/{other}"' in body
        assert client.get(f"/api/matches/{match_id}").get_json()["seed"] is None


def test_a_deal_dealt_again_is_hidden_again_even_once_its_frames_were_kept(
    cup: dict[str, Any],
) -> None:
    """A finished match's frames are kept in memory; a deal played again (a rotation
    queued once more) must not be answered from them."""
    app, client, seeds = cup["app"], cup["client"], cup["seeds"]
    first, second = cup["deals"][0]
    play(app, first)
    play(app, second)
    assert_shown(client, first, seeds[first])  # its frames are now kept
    set_status(app, second, "queued")
    assert_hidden(client, first, seeds[first], second)


def test_a_cancelled_tournament_keeps_its_seed_until_its_running_matches_end(
    cup: dict[str, Any],
) -> None:
    app, client, seeds = cup["app"], cup["client"], cup["seeds"]
    tournament_id = cup["tournament"]
    (first, second), (running, _), _ = cup["deals"]
    assert tournament_seed(client, tournament_id) == [None] * 3  # running
    play(app, first)
    set_status(app, running, "running")
    set_status(app, second, "running")
    cancelled = client.post(f"/api/tournaments/{tournament_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.get_json()["status"] == "cancelled" and cancelled.get_json()["seed"] is None
    assert tournament_seed(client, tournament_id) == [None] * 3
    assert "shown once the tournament is over" in page_text(
        client.get(f"/tournaments/{tournament_id}").data
    )
    # the running rotation still hides its finished sibling, and its own deal
    assert_hidden(client, first, seeds[first], second)
    for match_id in (running, second):
        play(app, match_id)
    # nothing is played any more: the seed and every finished deal are shown
    with app.extensions["arena.db"].session() as session:
        seed = services.get_tournament(session, tournament_id).seed
    assert tournament_seed(client, tournament_id) == [seed] * 3
    assert_shown(client, first, seeds[first])
