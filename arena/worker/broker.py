"""The brokers' transports: kombu's own, with the repairs that keep a worker alive.

Celery loads a transport by its dotted name when it first connects, so a transport is
imported only where its broker is configured: the Redis one lives in
``arena.worker.redis_broker`` (it needs the ``redis`` package, the ``redis`` extra) and
``arena.config`` names the missing package in one line before any process starts.

The embedded broker is kombu's file-system transport, made safe for several processes.

kombu's file-system transport creates a message file and only then writes into it, and
rewrites an exchange's table in place.  A worker polling the folder can pick a message up
between the two steps, read an empty file and die on the JSON decode; a worker starting
while another binds its queues can read an empty exchange table the same way.  This
transport writes every file under a name the readers ignore and renames it into place
(``os.replace`` is atomic within a folder), so a reader sees a whole file or none, and
it serialises the read-modify-write of an exchange table with a lock file beside it.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from queue import Empty
from time import monotonic
from typing import Any

from kombu.transport import filesystem
from kombu.transport.virtual import Channel as VirtualChannel
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

log = logging.getLogger(__name__)

TRANSPORT = "arena.worker.broker:Transport"  # the value of Celery's ``broker_transport``
REDIS_TRANSPORT = "arena.worker.redis_broker:RedisTransport"  # the same for a redis:// broker


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that no reader ever sees a partial file.

    The temporary name starts with a dot and has no ``.msg`` suffix, so the transport's
    readers, which match ``<stamp>_<uuid>.<queue>.msg``, never pick it up."""
    tmp = path.with_name(f".{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path.with_name(path.name + ".lock"), "ab") as f:
        filesystem.lock(f, filesystem.LOCK_EX)
        try:
            yield
        finally:
            filesystem.unlock(f)


class Channel(filesystem.Channel):
    def _get(self, queue: str) -> Any:
        try:
            return super()._get(queue)
        except ValueError:
            # a file this transport did not write whole (a full disk, a foreign writer):
            # drop it and go on rather than end the worker; housekeeping requeues the
            # match it named once it is stale
            log.exception("the broker dropped an unreadable message from %r", queue)
            raise Empty from None

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        # the same name as kombu's: readers take messages in the order of the stamp
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        try:
            write_atomically(Path(self.data_folder_out) / name, str_to_bytes(dumps(payload)))
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add {name!r} to the broker folder") from exc

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str, queue: str) -> None:
        file = self._exchange_file(exchange)
        self.control_folder.mkdir(parents=True, exist_ok=True)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with _locked(file):
            queues = self.get_table(exchange)
            if entry not in queues:
                queues.insert(0, entry)
                write_atomically(file, str_to_bytes(dumps(queues)))

    def _delete(self, queue: str, exchange: str, routing_key: str, pattern: str,
                *args: Any, **kwargs: Any) -> None:  # fmt: skip
        VirtualChannel._delete(self, queue)  # purges the queue's messages
        file = self._exchange_file(exchange)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        if not file.exists():
            return
        with _locked(file):
            queues = self.get_table(exchange)
            if entry in queues:
                queues.remove(entry)
                write_atomically(file, str_to_bytes(dumps(queues)))


class Transport(filesystem.Transport):
    """kombu's file-system transport with atomic writes (see the module docstring)."""

    Channel = Channel

    @property
    def default_connection_params(self) -> dict[str, Any]:
        # no host: a folder has none, and kombu's default ("localhost") came with a
        # warning at every connection ("No hostname was supplied")
        return {"port": self.default_port}
