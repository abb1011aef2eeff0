"""The JSON API's test helpers: registering bots, a tournament's body, auth headers, the
error answers' shape, and the row counts of the tables a request may write."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from arena.models import (
    Bot,
    Ladder,
    Match,
    MatchSeat,
    Rating,
    Replay,
    Tournament,
    TournamentEntry,
)

TABLES = (Bot, Tournament, TournamentEntry, Match, MatchSeat, Replay, Rating, Ladder)


def counts(app: Flask) -> dict[str, int]:
    with app.extensions["arena.db"].session() as session:
        return {
            t.__tablename__: session.scalar(select(func.count()).select_from(t)) for t in TABLES
        }


def error(response: Any, status: int, *fragments: str) -> dict[str, Any]:
    """Assert a JSON error of ``status`` whose message mentions every fragment."""
    body = response.get_json()
    assert response.status_code == status, body
    assert body["code"] == status
    assert isinstance(body["message"], str) and body["message"]
    for fragment in fragments:
        assert fragment in body["message"], body
    return body


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def register(client: FlaskClient, endpoint: str, name: str = "alpha", **fields: Any) -> dict:
    body = {"name": name, "endpoint": endpoint, "owner": "ann", **fields}
    response = client.post("/api/bots", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def register_many(client: FlaskClient, endpoint: str, n: int) -> list[int]:
    return [register(client, endpoint, f"bot-{i}")["id"] for i in range(n)]


def tournament_body(bot_ids: list[int], /, **fields: Any) -> dict[str, Any]:
    """A valid round robin of ``bot_ids``; ``fields`` change or add to it."""
    body = {
        "name": "spring cup",
        "game": "cactus",
        "bot_ids": bot_ids,
        "seats_per_match": 2,
        "games_per_pairing": 2,
    }
    return {**body, **fields}
