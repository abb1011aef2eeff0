"""A worker process's own metrics, served at ``arena worker --metrics-port N``: what the
matches it played did (decisions, their latency, faults, how long each match took, what
became of its result) and how many it plays now.

The counts are taken once a match is over, from its record (``match_played``): each
decision's ``latency_ms`` is what the referee stamped when the answer arrived
(``arena.match.referee``), so the referee's hot path has no metric call in it and the
numbers are the ones the replay shows.  Only programs' answers count as decisions: a
house bot's policy (in this process) and a person (a seat with a deadline of its own) are
not a bot's latency.  Fault kinds are ``arena.match.faults``' words, an in-process bot's
``error: <Exception>`` counted as ``error``; ``struck_out`` is not a fault of its own.

The metrics live in this process (prometheus-client's default registry, with its process
and Python metrics), so the endpoint needs a pool whose matches play in this process:
``threads`` (the default) or ``solo``; ``arena worker`` refuses ``--metrics-port`` with
``--pool prefork``, whose children would count where nobody scrapes.

The endpoint listens on loopback unless ``ARENA_WORKER_METRICS_HOST`` says otherwise (a
pod's IP, for a Prometheus elsewhere in the cluster): a worker usually runs beside other
programs, and what it counts is nobody else's business by default.  Nothing it counts
tells one event from another (games, fault kinds, outcomes), but with
``ARENA_METRICS_TOKEN`` set it wants that bearer token too, as the web's ``/metrics``
does: one token for Prometheus's every arena job, and an endpoint opened to a network is
no more open than the web's.
"""

from __future__ import annotations

import hmac
import logging
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.exposition import ThreadingWSGIServer, make_wsgi_app

from arena.games import GAMES

log = logging.getLogger(__name__)

# a bot answers within the arena's deadline (2 s by default, up to a person's minute)
DECISION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 30.0)
MATCH_BUCKETS = (1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
# what became of a played match's attempt: its result written; refused (another
# delivery got there first, or the match was claimed again since); failed (an error of
# ours, or the time limit); abandoned (its lease was lost: another worker plays it)
OUTCOMES = ("recorded", "refused", "failed", "abandoned")

DECISIONS = Counter("arena_decisions", "Bots' answers asked for, by game.", ["game"])
DECISION_SECONDS = Histogram(
    "arena_decision_seconds",
    "How long a bot took to answer a decision, by game.",
    ["game"],
    buckets=DECISION_BUCKETS,
)
FAULTS = Counter(
    "arena_faults", "Bots' faults (no usable answer), by game and kind.", ["game", "kind"]
)
MATCH_SECONDS = Histogram(
    "arena_match_seconds",
    "How long a match took to play, by game.",
    ["game"],
    buckets=MATCH_BUCKETS,
)
RESULTS = Counter("arena_results", "Played matches by what became of them.", ["outcome"])
IN_FLIGHT = Gauge("arena_matches_in_flight", "Matches this process plays now.")

# every series there from the start: a rate over a series that appears late misses its
# first increase, and a dashboard shows 0 rather than nothing
for _game in GAMES:
    DECISIONS.labels(_game)
    DECISION_SECONDS.labels(_game)
    MATCH_SECONDS.labels(_game)
for _outcome in OUTCOMES:
    RESULTS.labels(_outcome)

DEFAULT_HOST = "127.0.0.1"  # where the endpoint listens unless ARENA_WORKER_METRICS_HOST
_served: dict[str, Any] = {}  # the address this process's endpoint listens on, once it does


def _in_flight() -> int:
    """The matches this process's warden holds (none before it started)."""
    from arena.worker.celery_app import _state

    warden = _state.get("warden")
    return warden.in_flight if warden is not None else 0


IN_FLIGHT.set_function(_in_flight)


def fault_kind(kind: str) -> str:
    """The label of a fault kind: an in-process bot's ``error: <Exception>`` is ``error``
    (the exception's class is in the replay, not in a label of its own)."""
    return "error" if kind.startswith("error: ") else kind


def match_played(
    game: str, steps: Sequence[Sequence[dict[str, Any]]], seconds: float, counted: Sequence[bool]
) -> None:
    """Count a match that was played to its end: its ``steps`` (the record's), how long
    it took, and which seats are programs whose answers count (``counted_seats``)."""
    MATCH_SECONDS.labels(game).observe(seconds)
    latency = DECISION_SECONDS.labels(game)
    faults: dict[str, int] = {}
    asked = 0
    for step in steps:
        for decision in step:
            if not counted[decision["seat"]] or "latency_ms" not in decision:
                continue  # not a program's answer, or a seat that struck out: not asked
            asked += 1
            latency.observe(decision["latency_ms"] / 1000)
            kind = decision.get("fault")
            if kind is not None:
                faults[fault_kind(kind)] = faults.get(fault_kind(kind), 0) + 1
    DECISIONS.labels(game).inc(asked)
    for kind, count in faults.items():
        FAULTS.labels(game, kind).inc(count)


def counted_seats(seats: Sequence[Any]) -> list[bool]:
    """Which seats of a plan (``arena.worker.lifecycle.SeatPlan``) are programs asked over
    the network: not a house policy, not a person, not a paused bot left unasked."""
    return [
        seat.policy is None and seat.deadline_ms is None and not seat.withheld for seat in seats
    ]


def result(outcome: str) -> None:
    """A played match's attempt ended with ``outcome`` (one of ``OUTCOMES``)."""
    RESULTS.labels(outcome).inc()


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # a line per scrape says nothing
        pass


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _with_bearer(app: WsgiApp, token: str) -> WsgiApp:
    """``app`` for requests with ``Authorization: Bearer <token>`` only; 401 for others."""

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        scheme, _, given = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token):
            return app(environ, start_response)
        start_response(
            "401 Unauthorized",
            [("Content-Type", "text/plain"), ("WWW-Authenticate", "Bearer")],
        )
        return [b"a bearer token is needed (ARENA_METRICS_TOKEN)\n"]

    return guarded


def serve(port: int, host: str = DEFAULT_HOST, token: str | None = None) -> WSGIServer:
    """Serve this process's metrics on ``host:port`` from a thread (``token``: the bearer
    token a scrape must send; None: none); returns the server (``server_address``)."""
    disable_created_metrics()  # no ``_created`` series beside every counter
    app = make_wsgi_app()
    if token:
        app = _with_bearer(app, token)
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]  # IPv4 or IPv6

    class Server(ThreadingWSGIServer):
        address_family = family

    server = make_server(host, port, app, Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="arena-metrics", daemon=True).start()
    _served.update(host=server.server_address[0], port=server.server_port)
    return server


def served_port() -> int | None:
    """The port this process's metrics are served on (None: not served)."""
    return _served.get("port")


def served_host() -> str | None:
    """The address this process's metrics listen on (None: not served)."""
    return _served.get("host")


def serve_when_ready(port: int, host: str = DEFAULT_HOST, token: str | None = None) -> None:
    """Serve the metrics on ``host:port`` once the Celery worker of this process is ready
    (``worker_ready``: its pool started, its warden with it)."""
    from celery.signals import worker_ready

    def _ready(**_: Any) -> None:
        try:
            server = serve(port, host, token)
        except OSError as exc:  # taken since the command checked it: the worker goes on
            log.error("the metrics cannot be served on %s port %s: %s", host, port, exc)
            return
        bound = server.server_address[0]
        shown = f"[{bound}]" if ":" in bound else bound
        print(f"arena: metrics on http://{shown}:{server.server_port}/metrics", flush=True)

    worker_ready.connect(_ready, weak=False, dispatch_uid="arena.metrics.worker")
