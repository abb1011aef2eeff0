"""The worker's Celery app: its settings, its queues, and the state of its process.

Matches and the other tasks (the ladder, refits, housekeeping) have queues of their
own, so the latter never wait behind a tournament's backlog.  ``configure`` binds the
app and the process's database to a ``Config``; the tasks themselves are defined by the
modules of ``TASK_MODULES``, which a worker imports (``load_tasks``) and the web process
does not: it only sends them (``arena.worker.queue``).
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from celery import Celery
from kombu import Exchange, Queue
from kombu import pools as kombu_pools

from arena import sealing
from arena.config import Config, from_env
from arena.db import Database
from arena.worker import broker

celery = Celery("arena")
MATCH_QUEUE = "arena.matches"
CONTROL_QUEUE = "arena.control"  # the ladder, refits and housekeeping
QUEUES = (MATCH_QUEUE, CONTROL_QUEUE)
TASK_MODULES = (
    "arena.worker.queue",
    "arena.worker.play",
    "arena.worker.refits",
    "arena.worker.ladder",
    "arena.worker.housekeeping",
    "arena.worker.building",
    "arena.worker.notices",
)

# kombu's Redis transport options bounding a link to the broker
BROKER_SOCKET_OPTIONS: dict[str, dict[str, Any]] = {
    "redis": {
        "socket_timeout": 30,
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        "health_check_interval": 10,
    },
}

_state: dict[str, Any] = {}
_state_lock = threading.Lock()


def celery_settings(config: Config) -> dict[str, Any]:
    """The Celery settings for ``config``."""
    settings: dict[str, Any] = {
        "broker_url": config.broker_url,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_queues": tuple(Queue(q, Exchange(q), routing_key=q) for q in QUEUES),
        "task_default_queue": CONTROL_QUEUE,
        "task_routes": {"arena.run_match": {"queue": MATCH_QUEUE}},
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a broker that restarts is waited for
        # a broker that goes away does not stop the matches being played: their results
        # go to the database, and a delivery made again finds them finished
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        # after a reconnection, Celery lowers the prefetch count and raises it again with
        # a basic.qos per finished task; on RabbitMQ the worker was seen to hang for good
        # in one of those calls (a threads pool, a broker restarted mid-tournament)
        "worker_enable_prefetch_count_reduction": False,
        "worker_hijack_root_logger": False,
        # what the worker prints (``arena: metrics on ...``) stays a plain line on its
        # stdout: redirected, it was logged as a WARNING that warned of nothing
        "worker_redirect_stdouts": False,
        "timezone": "UTC",
        "beat_schedule": {
            "ladder": {"task": "arena.ladder_round", "schedule": config.ladder_interval},
            "housekeeping": {"task": "arena.housekeeping", "schedule": 30.0},
        },
    }
    if config.embedded_broker:
        # kombu's own file-system transport loses messages to a race (see arena.worker.broker)
        settings["broker_transport"] = broker.TRANSPORT
        settings["broker_transport_options"] = config.broker_folders()
    else:
        # from the URL's scheme; for Redis, kombu's transport with a repair (arena.worker.broker)
        scheme = config.broker_url.partition("://")[0]
        settings["broker_transport"] = broker.REDIS_TRANSPORT if scheme == "redis" else None
        # Redis hands an unacknowledged message out again after this long: never while
        # its match may still be running (the warden recovers a dead worker's match
        # long before that)
        settings["broker_transport_options"] = {
            "visibility_timeout": config.match_time_limit + 60,
            # a broker cut off without a FIN must not hang the consumer until TCP gives
            # up: a worker cut off from Redis took no message for 50 s after the link
            # came back, blocked in a read without a timeout
            **BROKER_SOCKET_OPTIONS.get(scheme, {}),
        }
        # RabbitMQ: heartbeats notice a dead link within a minute (Celery's default: 120 s)
        settings["broker_heartbeat"] = 30
    return settings


def configure(config: Config) -> Celery:
    """Bind the Celery app and the tasks' database to ``config``."""
    settings = celery_settings(config)
    # connections pooled for a previous broker must not outlive it; kombu keeps its pools
    # in registries keyed by broker, so the closed ones go from there too (else the same
    # broker configured again is handed a closed pool: "Acquire on closed pool")
    kombu_pools.reset()
    celery._after_fork()
    celery.conf.update(settings)
    old = _state.get("db")
    if old is not None:
        old.dispose()
    for name in ("pools", "relay_pools"):
        pools = _state.get(name)
        if pools is not None:
            pools.close()
    for writer in (_state.get("live") or {}).values():
        writer.close()
    _state.update(config=config, db=None, pools=None, relay_pools=None, live={})
    sealing.use(config)  # the keys the bots' signing secrets are sealed with
    return celery


def _config() -> Config:
    if "config" not in _state:
        configure(from_env())
    return _state["config"]


def _db() -> Database:
    _config()
    with _state_lock:
        if _state.get("db") is None:
            config = _state["config"]
            # a worker's threads save results at once: twice the web's share of connections
            _state["db"] = Database(config.database_url, 2 * config.database_pool)
        return _state["db"]


def load_tasks() -> Celery:
    """Import every task module, so the app has all its tasks (a worker, beat)."""
    for module in TASK_MODULES:
        importlib.import_module(module)
    return celery


def worker_app(config: Config) -> Celery:
    """The app bound to ``config`` with all its tasks: what a worker or beat runs."""
    configure(config)
    return load_tasks()
