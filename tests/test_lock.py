"""The lock of tested versions (constraints.txt): every package an install of the arena
takes is pinned there, and every install the project documents or ships takes it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_lock_pins_every_package_the_arena_and_its_extras_need() -> None:
    # a dependency added to pyproject.toml without renewing the lock would install at
    # whatever version is newest that day: every one, transitively, for any Python 3.11
    # release (the image's Debian 3.11.2 needs more than 3.11.7), is pinned in its range
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "lock.py"), "check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "open-spiel==1.6.15" in (ROOT / "constraints.txt").read_text()  # the anchor


def test_every_install_of_the_arena_takes_the_lock() -> None:
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    commands = quick_start.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(commands) == 2 and all("pip install -c constraints.txt " in c for c in commands)
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^COPY .*\bconstraints\.txt\b", dockerfile, re.M)
    assert re.search(r"pip install -c constraints\.txt ", dockerfile)
