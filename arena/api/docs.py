"""Swagger UI's scripts and styles, served from the ``swagger-ui-bundle`` package (the
docs page works without any network)."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory
from flask.blueprints import BlueprintSetupState
from swagger_ui_bundle import swagger_ui_path

# a plain Flask blueprint: these files are not part of the OpenAPI document
assets = Blueprint("swagger_ui_assets", __name__, url_prefix="/api/swagger-ui")


@assets.route("/<path:filename>")
def swagger_ui_asset(filename: str) -> Response:
    return send_from_directory(swagger_ui_path, filename)


def register_assets(state: BlueprintSetupState) -> None:
    """Registered along with an API blueprint (``record_once``): ``register_api`` gets the
    Api, not the app."""
    state.app.register_blueprint(assets)
