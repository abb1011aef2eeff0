"""The image's web command (deploy/Dockerfile's ``CMD``) run on this host, as an operator
runs it with only the bind address changed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.cli.processes import stop_processes
from tests.support.lanes import free_port

DOCKERFILE = Path(__file__).resolve().parents[2] / "deploy" / "Dockerfile"


def image_argv(dockerfile: Path = DOCKERFILE) -> list[str]:
    """The image's CMD, as written."""
    (cmd,) = re.findall(r"^CMD (\[.*\])$", dockerfile.read_text(), re.M)
    return json.loads(cmd)  # type: ignore[no-any-return]


def image_command(port: int, dockerfile: Path = DOCKERFILE) -> list[str]:
    """The image's CMD with the bind address changed (gunicorn run by this Python)."""
    argv = image_argv(dockerfile)
    assert argv[0] == "gunicorn", argv
    argv[argv.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [sys.executable, "-m", "gunicorn", *argv[1:]]


def workers_of(master: int) -> list[int]:
    """The web processes gunicorn's master ``master`` runs."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


def listening_ports(pid: int) -> set[int]:
    """The TCP ports the process listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@contextmanager
def image_web(
    env: dict[str, str], log: Path, dockerfile: Path = DOCKERFILE
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The image's command on a free port with ``env``, once it answers with every one of
    its processes started: its address and the master process."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            image_command(port, dockerfile), env=env, stdout=out, stderr=out, cwd=log.parent
        )
        url = f"http://127.0.0.1:{port}"
        try:
            argv = image_argv(dockerfile)
            expected = int(argv[argv.index("--workers") + 1])
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                        if len(workers_of(proc.pid)) >= expected:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail(f"the image's command did not start: {log.read_text()[-3000:]}")
                time.sleep(0.2)
            yield url, proc
        finally:
            stop_processes([proc], 30)
