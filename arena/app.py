"""The Flask application: JSON API (flask-smorest, OpenAPI) and server-rendered pages.

The web knows the referee only through tasks and the database: creating a tournament
writes its matches and enqueues ``run_match`` for each after the commit.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy.exc
from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException, ServiceUnavailable

from arena import proxies, sealing
from arena.config import Config, from_env, local_secret_key
from arena.db import Database
from arena.extensions import api

SEALING_RETRY_AFTER = 60  # seconds: an operator's fix of the keys is a restart away
DATABASE_BUSY_RETRY_AFTER = 2  # seconds: a crowd's peak passes


def _routing_first() -> None:
    """A request no route takes is answered so (404, or 405 with its ``Allow``) before
    anything reads it: Flask runs every ``before_request`` first, and the body limits or
    the pages' CSRF check would answer for a view that does not exist."""
    from flask import request

    if request.routing_exception is not None:
        raise request.routing_exception


def create_app(config: Config | None = None, **flask_config: Any) -> Flask:
    from arena import logins
    from arena.api import health, limits
    from arena.api.common import IdConverter
    from arena.services import notices as services_notices

    config = config or from_env()
    app = Flask(__name__, template_folder="web/templates", static_folder="web/static")
    # before any route: every whole number in a path is an id, 1 to MAX_ID (else 404)
    app.url_map.converters["int"] = IdConverter
    app.config.update(
        # ARENA_SECRET_KEY, else (from_env refuses production without it) the data dir's
        # key file, the same for every process of the machine and across restarts
        SECRET_KEY=config.secret_key or local_secret_key(config.data_dir),
        API_TITLE="Card-bot arena",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/api",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL="/api/swagger-ui/",
        API_SPEC_OPTIONS={"info": {"description": limits.API_DESCRIPTION}},
        MAX_CONTENT_LENGTH=limits.MAX_BODY_BYTES,
        TESTING=config.testing,
        **flask_config,
    )
    app.extensions["arena.config"] = config
    # the client's address behind the deployment's own proxies, for the rate limits
    app.wsgi_app = proxies.behind(app.wsgi_app, config.trusted_proxies)  # type: ignore[method-assign]
    sealing.use(config)  # the keys bots' signing secrets are sealed with
    services_notices.use_config(config)  # what its notices' deliveries are sent with
    database = Database(config.database_url, config.database_pool)
    app.extensions["arena.db"] = database

    from arena.api import register_api
    from arena.web import register_web, security

    # before any view of any blueprint: every route that reads a body is covered
    app.before_request(_routing_first)
    app.before_request(limits.check_request_body)
    logins.init_app(app, config)
    api.init_app(app)
    register_api(api)
    api.register_blueprint(health.blp)  # /healthz, /readyz (no /api prefix), /api/status
    register_web(app)
    security.init_app(app)  # CSP and the other headers on every answer
    from arena.metrics.web import register_metrics

    register_metrics(app)  # /metrics: Prometheus's text, outside the OpenAPI document

    @app.errorhandler(HTTPException)
    def _json_error(exc: HTTPException):  # type: ignore[no-untyped-def]
        """Every API error is JSON with a message (pages get their own templates)."""
        from flask import request

        if not request.path.startswith("/api/"):
            return security.error_page(exc) if security.wants_page() else exc
        body = {"code": exc.code, "status": exc.name, "message": exc.description}
        body.update(getattr(exc, "extra", None) or {})
        errors = getattr(exc, "data", {}).get("messages") if hasattr(exc, "data") else None
        if errors:
            body["errors"] = errors
        response = jsonify(body)
        response.status_code = exc.code or 500
        for name, value in exc.get_headers():  # Retry-After, Allow, WWW-Authenticate...
            if name.lower() != "content-type":
                response.headers[name] = value
        return response

    @app.errorhandler(sealing.SealingError)
    def _unopened_secret(exc: sealing.SealingError):  # type: ignore[no-untyped-def]
        """A bot's secret no configured key opens is the operator's to fix (the keys
        of this process): one line in the log for them, a 503 for the caller."""
        from flask import request

        app.logger.error("%s %s: %s", request.method, request.path, exc)
        unavailable = ServiceUnavailable(
            "the arena cannot read this bot's signing secret right now; its operator "
            "has been told (a key is missing from its configuration)"
        )
        unavailable.retry_after = SEALING_RETRY_AFTER
        return _json_error(unavailable)

    @app.errorhandler(sqlalchemy.exc.TimeoutError)
    def _database_busy(exc: sqlalchemy.exc.TimeoutError):  # type: ignore[no-untyped-def]
        """Every pooled database connection of the process stayed taken past the pool's
        wait (a crowd arriving at once): a 503 the caller retries after a moment, with
        one log line, rather than a 500 and a traceback per request."""
        from flask import request

        app.logger.warning("%s %s: the database pool is exhausted (%s)", request.method,
                           request.path, str(exc).split(" (Background")[0])  # fmt: skip
        busy = ServiceUnavailable("the arena is busy: try again in a few seconds")
        busy.retry_after = DATABASE_BUSY_RETRY_AFTER
        return _json_error(busy)

    return app
