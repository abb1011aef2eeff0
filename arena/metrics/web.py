"""The web's ``/metrics``: the state of the arena in Prometheus's text format, read from
the database when Prometheus scrapes it (a custom collector), so every web process
answers the same and none keeps counters of its own.

A scrape costs a handful of COUNT ... GROUP BY queries and two small reads: matches and
tournaments by status, bots by status and transport, connected bots, the live worker
processes (``arena.services.workers``) and the age of the oldest queued match.  What a
worker does while it plays (decisions, faults, latency) is the worker's own endpoint's
(``arena.metrics.worker``).

The route is a plain Flask blueprint, outside the OpenAPI document: its answer is
Prometheus's text format, not JSON, and its reader is a scraper, not an API client.  Who
reads what:

- ``ARENA_METRICS_TOKEN`` set (any profile): ``Authorization: Bearer <token>``
  (Prometheus's ``authorization`` setting) reads every count; without it, 401.
- unset, production profile: 403 for everyone.  A production arena's counts are read by
  its Prometheus, which can be given a token; counts open to the internet would tell
  anyone how busy the arena is and, counted whole, that a private event exists and how
  many bots it has, which the rest of the arena tells no stranger.  Refusing (rather
  than serving a smaller set) makes a scrape configured without the token fail where
  its operator sees it (``up`` 0), instead of dashboards that quietly leave a part out.
- unset, local profile (a class's afternoon on one machine): open, as before, but the
  counts leave out private events' bots, matches, tournaments and sessions: nobody is
  known to be allowed to see them.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector
from sqlalchemy import ColumnElement, case, func, or_, select, true
from sqlalchemy.exc import SQLAlchemyError

from arena.db import Database
from arena.models import (
    BOT_STATUSES,
    MATCH_STATUSES,
    TOURNAMENT_STATUSES,
    Bot,
    BotSession,
    Event,
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
    """The gauges of the arena's state, each read anew at every ``collect``; with
    ``private_events`` false, without anything of a private event (the local profile's
    answer to a caller with no token: see the module docstring)."""

    def __init__(self, database: Database, private_events: bool = True):
        self.database = database
        self.private_events = private_events

    def _shown(self, event_id: Any) -> ColumnElement[bool]:
        """A clause on an ``event_id`` column: the rows these gauges count."""
        if self.private_events:
            return true()
        private = select(Event.id).where(Event.visibility == "private")
        return or_(event_id.is_(None), event_id.not_in(private))

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self.database.session() as session:
            matches = dict.fromkeys(MATCH_STATUSES, 0)
            matches.update(
                session.execute(
                    select(Match.status, func.count())
                    .where(self._shown(Match.event_id))
                    .group_by(Match.status)
                ).all()
            )
            oldest = session.scalar(
                select(func.min(Match.created_at)).where(
                    Match.status == "queued", self._shown(Match.event_id)
                )
            )
            transport = case(
                (Bot.kind == "house", "house"),
                (Bot.endpoint.is_(None), "connect"),
                else_="webhook",
            )
            bots = {(s, t): 0 for s in BOT_STATUSES for t in BOT_TRANSPORTS}
            for status, kind, count in session.execute(
                select(Bot.status, transport, func.count())
                .where(self._shown(Bot.event_id))
                .group_by(Bot.status, transport)
            ):
                bots[(status, kind)] = count
            tournaments = dict.fromkeys(TOURNAMENT_STATUSES, 0)
            tournaments.update(
                session.execute(
                    select(Tournament.status, func.count())
                    .where(self._shown(Tournament.event_id))
                    .group_by(Tournament.status)
                ).all()
            )
            open_sessions = session.scalars(
                select(BotSession.bot_id)
                .join(Bot, Bot.id == BotSession.bot_id)
                .where(BotSession.closed_at.is_(None), self._shown(Bot.event_id))
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
    """The arena's gauges, to whom may read them (see the module docstring)."""
    config = current_app.extensions["arena.config"]
    if config.metrics_token:
        if not _authorized(config.metrics_token):
            return Response(
                "a bearer token is needed (ARENA_METRICS_TOKEN)\n",
                status=401,
                mimetype="text/plain",
                headers={"WWW-Authenticate": "Bearer"},
            )
        registry = current_app.extensions["arena.metrics"]
    elif config.profile == "production":
        return Response(
            "the production profile serves /metrics only with ARENA_METRICS_TOKEN set "
            "(and Prometheus sending it as a bearer token)\n",
            status=403,
            mimetype="text/plain",
        )
    else:
        registry = current_app.extensions["arena.metrics.public"]
    # the format Prometheus asks for (its text format, or OpenMetrics)
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    try:
        body = encode(registry)
    except SQLAlchemyError:
        # a failed scrape (Prometheus's ``up`` 0) rather than gauges that say nothing is wrong
        log.warning("the metrics could not be read from the database", exc_info=True)
        return Response("the database cannot be read\n", status=503, mimetype="text/plain")
    return Response(body, headers={"Content-Type": content_type})


def register_metrics(app: Flask) -> None:
    """``/metrics`` on ``app``, read from its database: every count (``arena.metrics``,
    for the token's bearer) and the counts without private events (``arena.metrics.public``,
    the local profile's open answer)."""
    for key, private_events in (("arena.metrics", True), ("arena.metrics.public", False)):
        registry = CollectorRegistry(auto_describe=False)
        registry.register(ArenaCollector(app.extensions["arena.db"], private_events))
        app.extensions[key] = registry
    app.register_blueprint(blueprint)
