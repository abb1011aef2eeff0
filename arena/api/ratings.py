"""``/api/ratings`` (leaderboards, and ``<game>.csv``) and ``/api/ladders`` (the rated
ladder switches).  ``leaderboard_rows`` is the flat leaderboard table, the open arena's
or an event's, that the CSV exports and ``/api/events/{id}/leaderboard`` share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import abort
from flask.views import MethodView
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena import services
from arena.api import exports
from arena.api.common import (
    BEARER,
    ApiBlueprint,
    config,
    credentials_first,
    current_caller,
    database,
    unless_open,
)
from arena.api.schemas.exports import LeaderboardExportRowSchema
from arena.api.schemas.ratings import LadderSchema, LadderUpdateSchema, LeaderboardRowSchema
from arena.games import GAMES
from arena.models import Bot

blp = ApiBlueprint(
    "ratings", __name__, url_prefix="/api", description="Elo leaderboards and rated ladders."
)


def _known_game(game: str) -> None:
    if game not in GAMES:
        abort(404, f"unknown game {game!r}; games: {', '.join(sorted(GAMES))}")


@blp.route("/ratings/<game>")
@blp.response(200, LeaderboardRowSchema(many=True))
def leaderboard(game: str) -> list[dict[str, Any]]:
    """The open arena's leaderboard of a game: active rated bots by Elo, with the fitted
    rating and its 95% interval when one has been fitted (an event's is at
    ``/api/events/{id}/leaderboard``)

    ``provisional``: the fit rests on too little to be compared (no fit yet, too few rated
    matches in it, or too wide an interval; the field says the numbers).  ``tie_group``:
    neighbours sharing a number are statistically tied (their fitted ratings differ by
    less than the 95% margin of the difference from the group's first row).
    """
    _known_game(game)
    with database().session() as session:
        return services.leaderboard(session, game)


@blp.route("/ratings/<game>.csv")
@blp.response(200, {"format": "binary", "type": "string"}, content_type="text/csv")
def leaderboard_csv(game: str) -> Any:
    """The open arena's leaderboard of a game as CSV: the rows of ``/api/ratings/{game}``,
    flattened (the fitted rating's ``rating``, ``low`` and ``high`` become columns of
    their own; ``rank`` and ``owner`` are added), ratings to one decimal"""
    _known_game(game)
    with database().session() as session:
        rows = leaderboard_rows(session, [game])
    return exports.csv_response(
        LeaderboardExportRowSchema(many=True).dump(rows),
        LEADERBOARD_COLUMNS,
        f"leaderboard-{game}.csv",
    )


# the flat leaderboard's columns, in order (the CSV's header)
LEADERBOARD_COLUMNS = tuple(LeaderboardExportRowSchema().fields)


def leaderboard_rows(
    session: Session, games: Sequence[str], event_id: int | None = None
) -> list[dict[str, Any]]:
    """The leaderboard of each game in turn (the open arena's, or ``event_id``'s) as flat
    rows: ``rank`` 1 for the best Elo of its game, the fitted rating and its interval as
    three columns (null where no fit has been made), whether it is ``provisional``, its
    ``tie_group`` within its game, the bot's ``owner``."""
    boards = {game: services.leaderboard(session, game, event_id=event_id) for game in games}
    ids = {row["bot_id"] for rows in boards.values() for row in rows}
    owners = dict(session.execute(select(Bot.id, Bot.owner).where(Bot.id.in_(ids))).all())
    flat = []
    for game, rows in boards.items():
        for rank, row in enumerate(rows, start=1):
            fitted = row["fitted"] or {}
            flat.append(
                {
                    "game": game,
                    "rank": rank,
                    "bot_id": row["bot_id"],
                    "bot": row["name"],
                    "owner": owners.get(row["bot_id"]),
                    "elo": row["elo"],
                    "matches": row["matches"],
                    "fitted_rating": fitted.get("rating"),
                    "fitted_low": fitted.get("low"),
                    "fitted_high": fitted.get("high"),
                    "provisional": row["provisional"],
                    "tie_group": row["tie_group"],
                }
            )
    return flat


@blp.route("/ladders")
@blp.response(200, LadderSchema(many=True))
def ladders() -> list[dict[str, Any]]:
    """Every game's ladder: whether rated matches are scheduled, and at how many seats"""
    with database().session() as session:
        return services.ladders(session)


@blp.route("/ladders/<game>")
class LadderByGame(MethodView):
    @credentials_first(unless_open)
    @blp.arguments(LadderUpdateSchema)
    @blp.response(200, LadderSchema)
    @blp.doc(security=BEARER)
    def put(self, data: dict[str, Any], game: str) -> dict[str, Any]:
        """Switch the open arena's ladder of a game on or off (the admin, when an organiser
        token is configured; an event's ladder is at ``/api/events/{id}/ladders/{game}``)

        ``seats_per_match`` defaults to the smallest table the game is played at.
        """
        _known_game(game)
        seats = data["seats_per_match"] or max(2, GAMES[game].min_players)
        with database().session() as session:
            services.check_admin(config(), current_caller(session))
            ladder = services.set_ladder(session, game, data["enabled"], seats)
            return {
                "game": ladder.game,
                "enabled": ladder.enabled,
                "seats_per_match": ladder.seats_per_match,
                "updated_at": ladder.updated_at,
            }
