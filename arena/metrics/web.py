"""The web's ``/metrics``: the state of the arena in Prometheus's text format, read from
the database when Prometheus scrapes it (a custom collector), so every web process
answers the same and none keeps counters of its own.

A scrape costs a handful of COUNT ... GROUP BY queries and two small reads: matches and
tournaments by status, bots by status and transport, connected bots, the live worker
processes (``arena.services.workers``) and the age of the oldest queued match.  What a
worker does while it plays (decisions, faults, latency) is the worker's own endpoint's
(``arena.metrics.worker``).

The route is a plain Flask blueprint, outside the OpenAPI document: its answer is
Prometheus's text format, not JSON, and its reader is a scraper, not an API client.  It is
open unless ``ARENA_METRICS_TOKEN`` is set; then it wants ``Authorization: Bearer
<token>`` (Prometheus's ``authorization`` setting), in any profile.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator

from flask import Blueprint, Flask, Response, current_app, request
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector
from sqlalchemy import case, func, select
from sqlalchemy.exc import SQLAlchemyError

from arena.db import Database
from arena.models import (
    BOT_STATUSES,
    MATCH_STATUSES,
    TOURNAMENT_STATUSES,
    Bot,
    BotSession,
    Match,
    Tournament,
    aware,
    utcnow,
)
from arena.relay import sessions
from arena.services import workers

log = logging.getLogger(__name__)

# who answers for a bot: its endpoint (webhook), its session (connect: a program or a
# person's browser), or a policy in the worker (house)
BOT_TRANSPORTS = ("webhook", "connect", "house")

blueprint = Blueprint("metrics", __name__)


class ArenaCollector(Collector):
    """The gauges of the arena's state, each read anew at every ``collect``."""

    def __init__(self, database: Database):
        self.database = database

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self.database.session() as session:
            matches = dict.fromkeys(MATCH_STATUSES, 0)
            matches.update(
                session.execute(select(Match.status, func.count()).group_by(Match.status)).all()
            )
            oldest = session.scalar(
                select(func.min(Match.created_at)).where(Match.status == "queued")
            )
            transport = case(
                (Bot.kind == "house", "house"),
                (Bot.endpoint.is_(None), "connect"),
                else_="webhook",
            )
            bots = {(s, t): 0 for s in BOT_STATUSES for t in BOT_TRANSPORTS}
            for status, kind, count in session.execute(
                select(Bot.status, transport, func.count()).group_by(Bot.status, transport)
            ):
                bots[(status, kind)] = count
            tournaments = dict.fromkeys(TOURNAMENT_STATUSES, 0)
            tournaments.update(
                session.execute(
                    select(Tournament.status, func.count()).group_by(Tournament.status)
                ).all()
            )
            open_sessions = session.scalars(
                select(BotSession.bot_id).where(BotSession.closed_at.is_(None))
            ).all()
            connected = len(sessions.online(session, open_sessions))
            live = workers.live(session, kind="worker")
        yield _by_label("arena_matches", "Matches by status.", "status", matches)
        yield _by_label("arena_tournaments", "Tournaments by status.", "status", tournaments)
        family = GaugeMetricFamily(
            "arena_bots",
            "Bots by status and transport (webhook, connect, house).",
            labels=["status", "transport"],
        )
        for (status, kind), count in sorted(bots.items()):
            family.add_metric([status, kind], count)
        yield family
        yield GaugeMetricFamily(
            "arena_connected_bots",
            "Bots that connect out with a live session heard from lately (taking matches).",
            value=connected,
        )
        yield GaugeMetricFamily(
            "arena_workers",
            f"Live worker processes (a heartbeat within the last {workers.LIVE_SECONDS:g} s).",
            value=len(live),
        )
        yield GaugeMetricFamily(
            "arena_worker_capacity",
            "Matches the live worker processes may play at once, together.",
            value=sum(beat.capacity or 0 for beat in live),
        )
        age = (utcnow() - aware(oldest)).total_seconds() if oldest is not None else 0.0
        yield GaugeMetricFamily(
            "arena_queued_match_age_seconds",
            "How long the oldest queued match has waited since it was created (0: none).",
            value=max(age, 0.0),
        )


def _by_label(
    name: str, documentation: str, label: str, counts: dict[str, int]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for value, count in sorted(counts.items()):
        family.add_metric([value], count)
    return family


def _authorized(token: str | None) -> bool:
    if not token:
        return True
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token)


@blueprint.get("/metrics")
def metrics() -> Response:
    """The arena's gauges (see the module docstring)."""
    config = current_app.extensions["arena.config"]
    if not _authorized(config.metrics_token):
        return Response(
            "a bearer token is needed (ARENA_METRICS_TOKEN)\n",
            status=401,
            mimetype="text/plain",
            headers={"WWW-Authenticate": "Bearer"},
        )
    # the format Prometheus asks for (its text format, or OpenMetrics)
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    try:
        body = encode(current_app.extensions["arena.metrics"])
    except SQLAlchemyError:
        # a failed scrape (Prometheus's ``up`` 0) rather than gauges that say nothing is wrong
        log.warning("the metrics could not be read from the database", exc_info=True)
        return Response("the database cannot be read\n", status=503, mimetype="text/plain")
    return Response(body, headers={"Content-Type": content_type})


def register_metrics(app: Flask) -> None:
    """``/metrics`` on ``app``, read from its database."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ArenaCollector(app.extensions["arena.db"]))
    app.extensions["arena.metrics"] = registry
    app.register_blueprint(blueprint)
