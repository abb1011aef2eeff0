"""What a worker process needs to play hosted seats: whether this host can make the
sandbox (``can_host``, probed once, said once in one line when it cannot), the host's
hosted cores, and the folder each code version is unpacked into.

- ``ARENA_HOSTED_CORES``: the cores hosted decisions take, one decision per core at a
  time (``0-3``, ``2,3``); default: every core the worker may run on;
- ``ARENA_HOSTED_DIR``: where code versions are unpacked and the cores' lock files are,
  shared by the workers of one host; default: ``<temp dir>/arena-hosted-<uid>``;
- ``ARENA_HOSTED_SEATS``: hosted seats (sandboxed processes, about 20 MiB each) a worker
  process runs at once; a match that would need more waits for seats to free (it is
  sent back to the queue, unclaimed); default 32.

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

from arena.db import Database
from arena.hosted import bundles, sandbox
from arena.hosted.client import Cores, HostedClient, default_cores
from arena.services.hosted import find_code

log = logging.getLogger(__name__)

DEFAULT_SEATS = 32
_lock = threading.Lock()
_state: dict[str, object] = {}


def hosted_dir() -> Path:
    """Where this host's hosted bots' files are: per user by default, so that workers run
    by two users of one machine never share (nor fight over) lock files."""
    default = Path(tempfile.gettempdir()) / f"arena-hosted-{os.getuid()}"
    return Path(os.environ.get("ARENA_HOSTED_DIR") or default)


def parse_cores(text: str) -> list[int]:
    """``0-3,6`` as [0, 1, 2, 3, 6]; ValueError with a message when it is not that."""
    cores: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if first < 0 or last < first:
            raise ValueError(f"ARENA_HOSTED_CORES: {part!r} is not a core or a range of them")
        cores.update(range(first, last + 1))
    if not cores:
        raise ValueError("ARENA_HOSTED_CORES names no core")
    return sorted(cores)


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


def seats_limit() -> int:
    text = os.environ.get("ARENA_HOSTED_SEATS", "").strip()
    try:
        value = int(text) if text else DEFAULT_SEATS
    except ValueError:
        raise ValueError(f"ARENA_HOSTED_SEATS must be a number, not {text!r}") from None
    return max(value, 1)


def reserve(seats: int) -> bool:
    """Take ``seats`` of this process's hosted seats for a match, if that many are free
    (a match with more hosted seats than the limit is let through alone)."""
    with _lock:
        used = int(_state.get("seats", 0))  # type: ignore[call-overload]
        if used and used + seats > seats_limit():
            return False
        _state["seats"] = used + seats
        return True


def release(seats: int) -> None:
    with _lock:
        _state["seats"] = max(0, int(_state.get("seats", 0)) - seats)  # type: ignore[call-overload]


def cores() -> Cores:
    with _lock:
        if "cores" not in _state:
            text = os.environ.get("ARENA_HOSTED_CORES", "").strip()
            chosen = parse_cores(text) if text else default_cores()
            made = Cores(chosen, hosted_dir() / "cores")
            atexit.register(made.close)  # the process's lock files, closed as it ends
            _state["cores"] = made
        return _state["cores"]  # type: ignore[return-value]


def client(database: Database, bot_id: int, version: str, name: str) -> HostedClient:
    """The client of a hosted seat: its version unpacked on this host (read from the
    database the first time only)."""

    def load() -> tuple[bytes, str]:
        with database.session() as session:
            code = find_code(session, bot_id, version)
            if code is None:
                raise LookupError(f"bot {bot_id} has no code version {version}")
            return code.data, code.media_type

    if not version:
        return HostedClient(name, None, sandbox=sandbox.default(), cores=cores())
    try:
        folder = bundles.unpacked(hosted_dir() / "code", f"{bot_id}-{version}", load)
    except (LookupError, bundles.BundleError) as exc:
        log.error("bot %s: its code version %s cannot be unpacked: %s", bot_id, version, exc)
        return HostedClient(name, None, sandbox=sandbox.default(), cores=cores())
    return HostedClient(name, str(folder), sandbox=sandbox.default(), cores=cores())
