"""JSON API blueprints (flask-smorest); registered by ``create_app``."""

from __future__ import annotations

from flask_smorest import Api

from arena.api import (
    accounts,
    bots,
    connect,
    docs,
    events,
    formats,
    games,
    hosted,
    matches,
    play,
    ratings,
    scrimmages,
    tournaments,
)
from arena.api.common import IdConverter, id_parameter_schema

BLUEPRINTS = (
    accounts.blp,
    events.blp,
    bots.blp,
    connect.blp,
    hosted.blp,
    tournaments.blp,
    formats.blp,
    matches.blp,
    play.blp,
    scrimmages.blp,
    ratings.blp,
    games.blp,
)

# once per app, with the first API blueprint
games.blp.record_once(docs.register_assets)


def register_api(api: Api) -> None:
    """Register every blueprint of the JSON API (filled in by the API modules)."""
    api.spec.components.security_scheme(
        "bearerAuth",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "an account's API token, a bot's owner token, or the "
            "organiser token (the admin's)",
        },
    )
    # ids in paths (``common.IdConverter``, the app's ``int``) with their bounds; this
    # app's spec only (``Api.register_converter`` would add it again for every app made)
    api.flask_plugin.register_converter(IdConverter, id_parameter_schema)
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint)
