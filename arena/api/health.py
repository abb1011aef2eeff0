"""``/healthz``, ``/readyz`` and ``/api/status``: whether this web process answers,
whether it can work, and what the arena's workers are doing.

``/healthz`` touches nothing (a process that answers is alive: restart it when it does
not); ``/readyz`` asks the database for ``SELECT 1`` and the broker for a connection (the
embedded broker: its folders are there and writable), so a load balancer sends no
request to a process that could not store or queue anything.  Both are cheap and need
no credential.  ``/api/status`` is the organisers' view (``arena.services.workers.status``)
plus the broker's own count of waiting match messages; the page ``/status`` shows it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from kombu import Connection
from marshmallow import Schema, fields
from sqlalchemy import text

from arena import services
from arena.api.common import OPTIONAL_BEARER, ApiBlueprint, config, current_caller, database
from arena.api.schemas.fields import UtcDateTime
from arena.api.schemas.tournaments import WarningSchema
from arena.config import Config
from arena.services import workers

log = logging.getLogger(__name__)

BROKER_TIMEOUT = 2.0  # seconds a readiness check waits for the broker

blp = ApiBlueprint(
    "health",
    __name__,
    description="Liveness and readiness of a web process, and the arena's status for "
    "its organisers.",
)


class HealthSchema(Schema):
    status = fields.String(metadata={"description": "ok"})


class ReadySchema(Schema):
    status = fields.String(metadata={"description": "ok, or unavailable"})
    checks = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        metadata={"description": "database and broker: ok, or what failed"},
    )
    failed = fields.List(fields.String(), metadata={"description": "the checks that failed"})


class WorkerSchema(Schema):
    name = fields.String(metadata={"description": "its leases' owner name"})
    host = fields.String()
    pid = fields.Integer()
    started_at = UtcDateTime()
    last_seen = UtcDateTime()
    seen_seconds_ago = fields.Integer()
    capacity = fields.Integer(metadata={"description": "matches it plays at once"})
    in_flight = fields.Integer(metadata={"description": "matches it plays now"})
    metrics_port = fields.Integer(allow_none=True)


class BeatSchema(Schema):
    alive = fields.Boolean()
    last_seen = UtcDateTime(allow_none=True, metadata={"description": "null: never"})


class QueueSchema(Schema):
    queued = fields.Integer(metadata={"description": "matches queued in the database"})
    running = fields.Integer()
    broker_waiting = fields.Integer(
        allow_none=True,
        metadata={"description": "match messages the broker holds; null: it cannot tell"},
    )


class RateSchema(Schema):
    finished_per_minute = fields.Float()
    faults_per_minute = fields.Float(metadata={"description": "the bots' faults"})


class StatusSchema(Schema):
    now = UtcDateTime()
    workers = fields.List(fields.Nested(WorkerSchema), metadata={"description": "alive"})
    worker_last_seen = UtcDateTime(
        allow_none=True, metadata={"description": "any worker, alive or not; null: never"}
    )
    beat = fields.Nested(BeatSchema)
    matches = fields.Nested(QueueSchema)
    rates = fields.Dict(
        keys=fields.String(),
        values=fields.Nested(RateSchema),
        metadata={"description": "over the last 5m and 15m"},
    )
    warnings = fields.List(fields.Nested(WarningSchema))


def _broker_connection(config: Config) -> Connection:
    """A kombu connection to the broker the workers use, with Celery's transport (the
    embedded broker's, the repaired Redis one) and a short connect timeout."""
    from arena.worker.celery_app import celery_settings

    settings = celery_settings(config)
    return Connection(
        config.broker_url,
        transport=settings["broker_transport"],
        transport_options=settings["broker_transport_options"],
        connect_timeout=BROKER_TIMEOUT,
    )


def check_database() -> str | None:
    """None when the database answers ``SELECT 1``, else why not in one line."""
    try:
        with database().engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:
        return f"the database does not answer: {_line(exc)}"
    return None


def check_broker(config: Config) -> str | None:
    """None when a ``run_match`` message could be sent now, else why not in one line."""
    if config.embedded_broker:
        try:
            folders = config.broker_folders()  # made when missing, as the workers do
        except OSError as exc:
            return f"the broker's folder cannot be made: {exc.strerror or exc}"
        for key in ("data_folder_in", "processed_folder", "control_folder"):
            if not os.access(folders[key], os.W_OK | os.X_OK):
                return f"the broker's folder {folders[key]} is not writable"
        return None
    connection = _broker_connection(config)
    try:
        connection.ensure_connection(
            max_retries=1, interval_start=0, interval_step=0, timeout=BROKER_TIMEOUT
        )
    except Exception as exc:
        return f"the broker is not reachable: {_line(exc)}"
    finally:
        connection.release()
    return None


def broker_waiting(config: Config) -> int | None:
    """How many match messages the broker holds (None: it cannot say at once)."""
    from arena.worker.queue import queue_length

    connection = _broker_connection(config)
    try:
        connection.ensure_connection(
            max_retries=1, interval_start=0, interval_step=0, timeout=BROKER_TIMEOUT
        )
        return queue_length(connection)
    except Exception:  # a broker away: the database's count stands
        return None
    finally:
        connection.release()


def _line(exc: BaseException) -> str:
    exc = getattr(exc, "orig", None) or exc  # the driver's words, not SQLAlchemy's wrapping
    text_ = " ".join(str(exc).split()) or type(exc).__name__
    return text_[:300]


@blp.route("/healthz")
@blp.response(200, HealthSchema)
def healthz() -> dict[str, str]:
    """Liveness: the process answers (nothing else is checked)

    For an orchestrator's liveness probe; no credential.
    """
    return {"status": "ok"}


@blp.route("/readyz")
@blp.response(200, ReadySchema)
@blp.alt_response(503, schema=ReadySchema, description="the database or the broker failed")
def readyz() -> tuple[dict[str, Any], int]:
    """Readiness: the database answers and the broker is reachable

    ``checks`` says ``ok`` or what failed for each of ``database`` and ``broker`` (in
    the production profile only ``failed``: the reason, which names hosts, is in the
    web's log); any failure is status 503.  For a load balancer's readiness probe; no
    credential.
    """
    checks = {"database": check_database(), "broker": check_broker(config())}
    failed = [name for name, error in checks.items() if error]
    for name in failed:
        log.warning("not ready: %s", checks[name])
    public = config().profile != "production"
    body = {
        "status": "unavailable" if failed else "ok",
        "checks": {
            name: (error if public else "failed") if error else "ok"
            for name, error in checks.items()
        },
        "failed": failed,
    }
    return body, 503 if failed else 200


def check_status_reader(session: Any) -> None:
    """401 or 403 unless the caller may read the status (``workers.may_read_status``)."""
    who = current_caller(session)
    if not workers.may_read_status(config().profile, who):
        if who.anonymous:
            raise services.ServiceError(401, "the status is the organisers': give a token")
        raise services.ServiceError(403, "the status is the organisers' and the admin's")


@blp.route("/api/status")
@blp.response(200, StatusSchema)
@blp.doc(security=OPTIONAL_BEARER)
@blp.alt_response(401, response="UNAUTHORIZED")
@blp.alt_response(403, response="FORBIDDEN")
def status() -> dict[str, Any]:
    """The arena's status: live workers, queues, beat, throughput and faults

    The workers alive (each one's host, process, matches in flight and capacity, when it
    was last seen), the matches queued and running in the database and the match
    messages the broker holds, when beat was last seen, the matches finished and the
    bots' faults per minute over the last 5 and 15 minutes, and the warnings (queued
    matches and no worker alive).  The organisers' (the admin, organiser accounts) in
    the production profile; anyone's in the local one.
    """
    with database().session() as session:
        check_status_reader(session)
        found = workers.status(session)
    found["matches"]["broker_waiting"] = broker_waiting(config())
    return found
