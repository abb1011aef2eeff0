"""The connect transport's replay guard: the ``request_id`` of every signed request a bot
that connects out sent (``arena.api.connect``) that a web process accepted, shared by
every web process of the arena.

A signed request's timestamp is accepted ``MAX_SKEW`` seconds either side of the
receiving process's clock, so a captured request could be played again, as it is, until
its timestamp is too old: at another gunicorn process or another pod as well as at the
one that took it.  ``new(request_id)`` answers True the first time any process of the
arena asks about an id and False every later time within ``window`` (``2 * MAX_SKEW``:
an id accepted at the earliest moment its timestamp allowed is still refused at the
latest); it is atomic across processes, and costs one round trip to the store:

- ``RedisReplays``, when the arena's rate limits count in Redis (``ARENA_RATELIMIT_STORAGE``
  is ``redis://`` or ``rediss://``, the shared state of its web processes): ``SET
  <prefix><id> 1 NX EX <window>``; Redis forgets the key once the window is over.
- ``DatabaseReplays`` otherwise: an ``INSERT`` of the id into ``seen_requests``, in a
  transaction of its own; a duplicate key is a replay.  Every ``PRUNE_EVERY`` seconds a
  process deletes the rows older than the window (a row older than the window that is
  still there is taken over by the next request with its id: it is forgotten on time
  either way).

A store that cannot answer (Redis down) raises ``Unavailable``, which the API answers
with a 503: a request that cannot be told from a replay is not taken.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import Connection, delete, insert, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from arena.config import REDIS_SCHEMES, Config
from arena.models import SeenRequest
from arena.relay.internal import MAX_SKEW

if TYPE_CHECKING:
    from arena.db import Database

WINDOW = 2 * MAX_SKEW  # seconds an accepted request_id is remembered
PRUNE_EVERY = 60.0  # seconds between a process's deletions of rows older than the window
PREFIX = "arena:connect:seen:"  # Redis keys: the prefix and the request_id
REDIS_TIMEOUT = 2.0  # seconds to connect to Redis, and for one answer
RETRY_AFTER = 5  # seconds a request refused for want of the store is told to wait

log = logging.getLogger(__name__)
_TABLE = SeenRequest.__table__


class Unavailable(RuntimeError):
    """The store did not answer: the request cannot be told from a replay.  ``str`` is
    the words for the bot; ``detail`` the operator's (the store's own error)."""

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.detail = detail


class Replays(Protocol):
    window: int

    def new(self, request_id: str) -> bool:
        """True the first time any web process asks about ``request_id`` within the
        window, False after (a replay); ``Unavailable`` when the store does not answer."""
        ...

    def close(self) -> None: ...


class RedisReplays:
    """The ids in Redis, each a key that expires at the end of the window."""

    def __init__(self, url: str, prefix: str = PREFIX, window: int = WINDOW):
        import redis
        from redis.backoff import ExponentialBackoff
        from redis.retry import Retry

        self.prefix, self.window = prefix, window
        # a link Redis closed (a restart) is opened again at once, and a Redis that is
        # down is told in milliseconds (redis-py's default retries take seconds)
        self.client = redis.Redis.from_url(
            url,
            socket_connect_timeout=REDIS_TIMEOUT,
            socket_timeout=REDIS_TIMEOUT,
            retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 2),
        )
        self._errors: type[Exception] = redis.RedisError

    def new(self, request_id: str) -> bool:
        try:
            return bool(self.client.set(self.prefix + request_id, 1, nx=True, ex=self.window))
        except self._errors as exc:
            raise Unavailable(
                "the arena cannot tell this request from a replay right now: its Redis "
                f"does not answer; try again in a few seconds ({RETRY_AFTER} s)",
                f"Redis (ARENA_RATELIMIT_STORAGE) does not answer: {exc}",
            ) from exc

    def close(self) -> None:
        self.client.close()


class DatabaseReplays:
    """The ids in the arena's database (``seen_requests``), pruned every so often.
    ``clock`` gives Unix seconds (the tests move it)."""

    def __init__(
        self,
        database: Database,
        window: int = WINDOW,
        clock: Callable[[], float] = time.time,
        prune_every: float = PRUNE_EVERY,
    ):
        self.database, self.window = database, window
        self._clock, self._prune_every = clock, prune_every
        self._pruned_at: float | None = None
        self._pruning = threading.Lock()
        self._dialect = database.engine.dialect.name

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        """A short transaction of the store's own whose commit does not wait for the disk:
        without that, the flush of each commit was most of the cost (3 ms of 3.5 on
        PostgreSQL and on SQLite, measured).  What it risks is the ids of the last moment
        before the database's host crashes (PostgreSQL: its WAL writer's last 0.6 s at
        most; SQLite, whose every connection the arena opens in WAL mode with
        ``synchronous=NORMAL`` (``arena.db``): a power loss's, not a process's), never the
        database's consistency, and only for ids that matter for ten minutes."""
        with self.database.engine.connect() as connection, connection.begin():
            if self._dialect == "postgresql":
                connection.exec_driver_sql("SET LOCAL synchronous_commit = off")
            yield connection

    def new(self, request_id: str) -> bool:
        now = self._clock()
        self._prune_if_due(now)
        seen_at = _moment(now)
        try:
            with self._transaction() as connection:
                connection.execute(insert(_TABLE).values(request_id=request_id, seen_at=seen_at))
            return True
        except IntegrityError:
            pass
        # there already: a replay, unless the row is older than the window and not yet
        # pruned, when the first process to update it takes the id
        with self._transaction() as connection:
            taken = connection.execute(
                update(_TABLE)
                .where(
                    _TABLE.c.request_id == request_id, _TABLE.c.seen_at < _moment(now - self.window)
                )
                .values(seen_at=seen_at)
            )
        return taken.rowcount == 1

    def _prune_if_due(self, now: float) -> None:
        """Delete the rows older than the window, if this process did not lately (one
        thread at a time; any process may, a DELETE twice deletes nothing more).  A
        failure is logged, and the request goes on: pruning keeps the table small, it
        is not what refuses a replay."""
        last = self._pruned_at
        if last is not None and 0 <= now - last < self._prune_every:
            return
        if not self._pruning.acquire(blocking=False):
            return
        try:
            self._pruned_at = now
            with self._transaction() as connection:
                connection.execute(
                    delete(_TABLE).where(_TABLE.c.seen_at < _moment(now - self.window))
                )
        except SQLAlchemyError as exc:
            log.warning("could not delete old request ids (seen_requests): %s", exc)
        finally:
            self._pruning.release()

    def close(self) -> None:
        pass  # the database is the app's


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def redis_url(config: Config) -> str | None:
    """The Redis the arena's web processes share state in: its rate limits' storage, when
    that is Redis (``ARENA_RATELIMIT_STORAGE``); None when there is none."""
    url = config.ratelimit_storage
    return url if url.partition("://")[0].lower() in REDIS_SCHEMES else None


def for_config(config: Config, database: Database) -> Replays:
    """The store for an arena: Redis when its web processes share one, else the
    database."""
    url = redis_url(config)
    return RedisReplays(url) if url else DatabaseReplays(database)
