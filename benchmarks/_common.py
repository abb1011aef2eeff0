"""What every benchmark shares (a module, not a benchmark): its ``--smoke`` flag, and the
versions line of its header.

- ``parse_args(parser, smoke)`` adds ``--smoke`` to a script's parser.  With it, the
  script's defaults become those of ``smoke``: the smallest sizes and durations that
  still go through every code path of a real run (an option given on the command line
  still wins).  ``tests/test_benchmarks.py`` runs every benchmark so, so that none of
  them rots unnoticed; the figures of a smoke run measure nothing.
- ``image_command(dockerfile)`` and ``host_command(command, port, workers)``: the image's
  ``CMD`` as written, and as run on this host (the benchmarks that load the web tier run
  the deployment's own command).
- ``print_versions(*names)`` prints the interpreter's version and each named
  distribution's (``sqlite``: the SQLite library Python uses), what a run's ratios were
  measured against, so that two runs' figures can be told apart.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

SMOKE_HELP = (
    "a few seconds with the smallest sizes: checks that the benchmark runs, measures nothing"
)


def parse_args(
    parser: argparse.ArgumentParser, smoke: Mapping[str, Any], argv: Sequence[str] | None = None
) -> argparse.Namespace:
    """The parsed command line, with ``--smoke`` added to ``parser``; with it, ``smoke``
    (option destinations to values, as ``parse_args`` gives them) are the defaults."""
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    args = parser.parse_args(argv)
    unknown = sorted(set(smoke) - set(vars(args)))
    if unknown:
        raise ValueError(f"--smoke sets options the parser does not have: {unknown}")
    if args.smoke:
        parser.set_defaults(**smoke)
        args = parser.parse_args(argv)
    return args


def version_of(name: str) -> str:
    """The installed version of a distribution, or that it is not installed."""
    if name == "sqlite":
        return sqlite3.sqlite_version
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions(*names: str) -> str:
    """``versions: python X.Y.Z, name version, ...``"""
    found = [f"python {platform.python_version()}"]
    found += [f"{name} {version_of(name)}" for name in names]
    return "versions: " + ", ".join(found)


def print_versions(*names: str) -> None:
    print(versions(*names), flush=True)


def accepts(port: int) -> bool:
    """Whether a server on this machine accepts connections on ``port`` yet."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Until ``check()`` holds; past ``timeout`` seconds the run stops, saying ``what``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not within {timeout:g} s")
        time.sleep(0.05)


def image_command(dockerfile: Path) -> list[str]:
    """The image's CMD as written (a JSON exec array)."""
    found = re.findall(r"^CMD\s+(\[.*\])\s*$", dockerfile.read_text(), re.MULTILINE)
    if len(found) != 1:
        raise SystemExit(f"{dockerfile}: expected one CMD [...] line, found {len(found)}")
    command = json.loads(found[0])
    if command[0] != "gunicorn" or "--bind" not in command:
        raise SystemExit(f"{dockerfile}: the CMD is not gunicorn with --bind: {command}")
    return command


def host_command(command: list[str], port: int, workers: int | None) -> list[str]:
    """The CMD on this host: bound to 127.0.0.1:port, ``--workers`` replaced when given,
    gunicorn taken from this interpreter's environment (a virtualenv not on PATH)."""
    out = list(command)
    out[out.index("--bind") + 1] = f"127.0.0.1:{port}"
    if workers is not None:
        out[out.index("--workers") + 1] = str(workers)
    beside = Path(sys.executable).parent / out[0]
    return [str(beside) if beside.exists() else out[0], *out[1:]]
