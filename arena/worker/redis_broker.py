"""kombu's Redis transport with the repair that keeps a worker alive when Redis goes away.

Imported by Celery only when the broker is ``redis://`` (``arena.worker.broker.
REDIS_TRANSPORT`` names it): kombu's Redis module needs the ``redis`` package, which
only the ``redis`` extra installs.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class RedisChannel(kombu_redis.Channel):
    """kombu's Redis channel, where a channel of a closed connection fails as a lost
    connection does.

    When the Redis server goes away, the worker's consumer closes its connection while a
    channel of it may still be asked for a Redis client; kombu then reads the address
    of a connection that is gone and raises AttributeError, which Celery takes for an
    unrecoverable error: the worker process ends and its matches wait for another.  A
    ConnectionError instead is one of the transport's connection errors, on which Celery
    connects again and the worker goes on playing."""

    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:
            raise RedisConnectionError("the connection to the broker was closed")
        return super()._connparams(asynchronous)


class RedisTransport(kombu_redis.Transport):
    """kombu's Redis transport with the channel above."""

    Channel = RedisChannel
