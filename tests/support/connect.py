"""What the connect transport's end-to-end tests share: the sample bot started as a
student starts it on a laptop, connecting out (``connect_bot``), and what a process
listens on (``listening_sockets``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def connect_bot(
    url: str, bot_id: int, secret: str, wrap: Callable[..., list[str]] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m sample_bots.cactus_random --connect URL --bot-id ID --secret S``, its
    output (stdout and stderr) in a pipe; ``wrap(*argv)`` gives the command that runs it
    elsewhere (in a network namespace, say).  Killed at the end if still running."""
    argv = [sys.executable, "-m", "sample_bots.cactus_random", "--connect", url,
            "--bot-id", str(bot_id), "--secret", secret]  # fmt: skip
    student = subprocess.Popen(
        wrap(*argv) if wrap is not None else argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")])},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        yield student
    finally:
        if student.poll() is None:
            student.kill()
        student.wait()
        assert student.stdout is not None
        student.stdout.close()
