"""``/api/ratings`` (leaderboards) and ``/api/ladders`` (the rated ladder switches)."""

from __future__ import annotations

from typing import Any

from flask import abort
from flask.views import MethodView

from arena import services
from arena.api.common import BEARER, ApiBlueprint, config, current_caller, database
from arena.api.schemas import LadderSchema, LadderUpdateSchema, LeaderboardRowSchema
from arena.games import GAMES

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
    ``/api/events/{id}/leaderboard``)"""
    _known_game(game)
    with database().session() as session:
        return services.leaderboard(session, game)


@blp.route("/ladders")
@blp.response(200, LadderSchema(many=True))
def ladders() -> list[dict[str, Any]]:
    """Every game's ladder: whether rated matches are scheduled, and at how many seats"""
    with database().session() as session:
        return services.ladders(session)


@blp.route("/ladders/<game>")
class LadderByGame(MethodView):
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
