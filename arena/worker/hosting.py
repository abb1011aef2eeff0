"""What a worker process needs to play hosted seats: whether this host can make the
sandbox (``can_host``, probed once, said once in one line when it cannot), the host's
hosted cores, and the folder each code version is unpacked into.

Their settings are the configuration's (``arena.config``): ``hosted_cores`` (the cores
hosted decisions take, one decision per core at a time; every core the worker may run
on by default), ``hosted_seats`` (the sandboxed processes, about 20 MiB each, a worker
process runs at once: a match that would need more is sent back to the queue,
unclaimed, until seats are free) and ``hosted_dir`` (where code versions are unpacked and
the cores' lock files are, shared by the workers of one host; a folder of the user's in
the temp dir by default).

A worker that cannot host (no bubblewrap, no user namespaces in its container) leaves a
match with a hosted seat to a worker that can: it sends the match back to the queue
without claiming it, so no bot is charged for it.
"""

from __future__ import annotations

import atexit
import logging
import os
import tempfile
import threading
from pathlib import Path

from arena.config import Config
from arena.db import Database
from arena.hosted import bundles, sandbox
from arena.hosted.client import Cores, HostedClient, default_cores
from arena.services.hosted import find_code

log = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict[str, object] = {}


def hosted_dir(config: Config) -> Path:
    """Where this host's hosted bots' files are: per user by default, so that workers run
    by two users of one machine never share (nor fight over) lock files."""
    default = Path(tempfile.gettempdir()) / f"arena-hosted-{os.getuid()}"
    return Path(config.hosted_dir) if config.hosted_dir else default


def can_host() -> bool:
    """Whether this host can run hosted bots; the first time it cannot, one line says why."""
    reason = sandbox.available()
    if reason is not None:
        with _lock:
            if not _state.get("said"):
                _state["said"] = True
                log.error(
                    "this worker cannot run hosted bots (%s); matches with a hosted bot are "
                    "left to workers that can (docs/hosted.md)",
                    reason,
                )
    return reason is None


def reserve(config: Config, seats: int) -> bool:
    """Take ``seats`` of this process's hosted seats for a match, if that many are free
    (a match with more hosted seats than the limit is let through alone)."""
    with _lock:
        used = int(_state.get("seats", 0))  # type: ignore[call-overload]
        if used and used + seats > config.hosted_seats:
            return False
        _state["seats"] = used + seats
        return True


def release(seats: int) -> None:
    with _lock:
        _state["seats"] = max(0, int(_state.get("seats", 0)) - seats)  # type: ignore[call-overload]


def cores(config: Config) -> Cores:
    """This process's hosted cores (made with the first hosted seat)."""
    with _lock:
        if "cores" not in _state:
            made = Cores(config.hosted_cores or default_cores(), hosted_dir(config) / "cores")
            atexit.register(made.close)  # the process's lock files, closed as it ends
            _state["cores"] = made
        return _state["cores"]  # type: ignore[return-value]


def client(
    database: Database, config: Config, bot_id: int, version: str, name: str
) -> HostedClient:
    """The client of a hosted seat: its version unpacked on this host (read from the
    database the first time only)."""

    def load() -> tuple[bytes, str]:
        with database.session() as session:
            code = find_code(session, bot_id, version)
            if code is None:
                raise LookupError(f"bot {bot_id} has no code version {version}")
            return code.data, code.media_type

    folder = None  # no version passed its validation, or it cannot be read: every
    if version:  # request of the seat fails
        try:
            folder = str(bundles.unpacked(hosted_dir(config) / "code", f"{bot_id}-{version}", load))
        except (LookupError, bundles.BundleError) as exc:
            log.error("bot %s: its code version %s cannot be unpacked: %s", bot_id, version, exc)
    return HostedClient(name, folder, sandbox=sandbox.default(), cores=cores(config))
