"""``/api/games``: what the forms need to know about each game."""

from __future__ import annotations

from typing import Any

from arena.api.common import ApiBlueprint
from arena.api.schemas import GameSchema
from arena.games import GAMES

blp = ApiBlueprint("games", __name__, url_prefix="/api/games", description="The games played here.")


@blp.route("")
@blp.response(200, GameSchema(many=True))
def games() -> list[dict[str, Any]]:
    """Every game: id, title, player limits, presets and the default options"""
    return [
        {
            "id": game.id,
            "title": game.title,
            "min_players": game.min_players,
            "max_players": game.max_players,
            "presets": {name: dict(values) for name, values in game.presets.items()},
            "default_options": game.options_json(game.resolve_options({})),
        }
        for game in GAMES.values()
    ]
