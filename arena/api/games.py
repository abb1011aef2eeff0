"""``/api/games``: what the forms need to know about each game, its options above all."""

from __future__ import annotations

from typing import Any

from flask import abort

from arena.api.common import ApiBlueprint
from arena.api.schemas.ratings import GameDetailSchema, GameSchema, GameWireSchema
from arena.games import GAMES, schemas
from arena.games.base import Game

blp = ApiBlueprint("games", __name__, url_prefix="/api/games", description="The games played here.")


def _about(game: Game) -> dict[str, Any]:
    """What the list and the detail share (the detail lists the presets with their
    descriptions, the list keeps its name -> options mapping)."""
    return {
        "id": game.id,
        "title": game.title,
        "min_players": game.min_players,
        "max_players": game.max_players,
        "default_options": game.default_options(),
        "options": game.option_list(),
        "options_schema": game.options_schema(),
    }


@blp.route("")
@blp.response(200, GameSchema(many=True))
def games() -> list[dict[str, Any]]:
    """Every game: id, title, player limits, presets, default options and every option

    ``presets`` maps each preset to the options it sets; ``GET /api/games/{game_id}``
    describes them too.
    """
    return [
        {**_about(game), "presets": {p["name"]: p["options"] for p in game.preset_list()}}
        for game in GAMES.values()
    ]


@blp.route("/<game_id>")
@blp.response(200, GameDetailSchema)
@blp.alt_response(404, response="NOT_FOUND")
def game(game_id: str) -> dict[str, Any]:
    """One game and its options: each option's type, allowed values, default and
    description, the JSON Schema of a tournament's ``options``, and the presets

    A tournament's ``options`` may name a ``preset`` and override any of its values; only
    what differs from the defaults needs to be given.
    """
    found = GAMES.get(game_id)
    if found is None:
        abort(404, f"unknown game {game_id!r}; games: {', '.join(sorted(GAMES))}")
    return {**_about(found), "presets": found.preset_list()}


@blp.route("/<game_id>/schema")
@blp.response(200, GameWireSchema)
@blp.alt_response(404, response="NOT_FOUND")
def game_schema(game_id: str) -> dict[str, Any]:
    """What a bot of this game receives and answers, as JSON Schemas (draft 2020-12)

    ``view`` describes the ``view`` of every ``POST /act`` (every key, its type, the
    game's fixed sets as enums, what each key means), ``actions`` each action type a
    ``legal_actions`` list may hold, ``act_request`` the whole body of ``POST /act``.
    They hold for every option and preset; ``docs/schemas/<game_id>.json`` is the same
    document.
    """
    if game_id not in GAMES:
        abort(404, f"unknown game {game_id!r}; games: {', '.join(sorted(GAMES))}")
    return schemas.document(game_id)
