"""``arena demo`` never hangs on a worker that is not there: a worker process that dies
says why (the end of its log) and ends the demo; the log is kept when the demo fails or
is stopped while playing; and the processes it starts import the arena package whatever
folder they start in (a folder named ``arena`` there is not imported), as does
``python -m arenabot.local``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.cli import build_parser, demo, processes

pytestmark = pytest.mark.xdist_group("server")

SHADOW = 'raise SystemExit("this is a folder named arena, not the arena package")\n'


@pytest.fixture
def shadowed(tmp_path: Path) -> Path:
    """A folder holding a directory ``arena`` with a broken ``__init__.py``: what
    ``python -m arena`` imports from there unless the current folder is off its path."""
    folder = tmp_path / "project"
    (folder / "arena").mkdir(parents=True)
    (folder / "arena" / "__init__.py").write_text(SHADOW)
    return folder


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return {**env, "TMPDIR": str(tmp_path)}


def test_a_worker_started_from_a_folder_holding_an_arena_folder_imports_the_package(
    shadowed, tmp_path
):
    done = subprocess.run(
        processes.worker_command("shadowed@%h", "--help"),
        cwd=shadowed,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: arena worker")


def test_the_demo_plays_from_a_folder_holding_an_arena_folder(shadowed, tmp_path):
    # the demo itself started as the documented `python -P -m arena` (or `arena demo`)
    done = subprocess.run(
        [sys.executable, "-P", "-m", "arena", "demo", "--exit-when-done", "--port", "0",
         "--games", "cactus", "--games-per-pairing", "2"],
        cwd=shadowed,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,  # a bound on the process, not a timed assertion
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"cactus +\[#{30}\] (\d+)/\1  finished", done.stdout), done.stdout


def test_arenabot_local_plays_a_bot_from_a_folder_holding_an_arena_folder(shadowed, tmp_path):
    (shadowed / "mybot.py").write_text("def act(view, legal):\n    return legal[0]\n")
    done = subprocess.run(
        [sys.executable, "-m", "arenabot.local", "mybot:act", "--game", "cactus",
         "--matches", "2"],
        cwd=shadowed,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "mybot" in done.stdout and "not the arena package" not in done.stderr


def demo_args(*extra: str):
    return build_parser().parse_args(
        ["demo", "--port", "0", "--games", "cactus", "--games-per-pairing", "2", *extra]
    )


@pytest.fixture
def demo_folder(tmp_path, monkeypatch) -> Path:
    """The demo's temporary folders go here; it gives up on its tournaments soon (so
    that a demo that does not notice a dead worker fails this test, not hangs it)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setattr(demo, "WAIT_FOR_WORKERS", 60.0)
    for name in [k for k in os.environ if k.startswith("ARENA_")]:
        monkeypatch.delenv(name)
    return folder


def test_a_worker_that_dies_at_start_up_ends_the_demo_with_the_end_of_its_log(
    demo_folder, monkeypatch, capsys
):
    said = "ModuleNotFoundError: the worker could not start"
    dies = [sys.executable, "-c", f"import sys; print({said!r}); sys.exit(3)"]
    monkeypatch.setattr(demo, "worker_command", lambda *args: dies)
    status = demo.run_demo(demo_args())
    out, err = capsys.readouterr()
    assert status == 1, out + err
    assert re.search(r"worker process 0 \(pid \d+\) ended with status 3", err), err
    assert said in err  # the end of its log, where its output went
    [kept] = demo_folder.iterdir()
    log = kept / demo.LOG_NAME
    assert f"its folder is kept for its log: {log}" in err
    assert said in log.read_text()


def test_ctrl_c_while_playing_keeps_the_log(demo_folder, monkeypatch, capsys):
    sleeps = [sys.executable, "-c", "import time; time.sleep(120)"]
    monkeypatch.setattr(demo, "worker_command", lambda *args: sleeps)

    def interrupted(*args, **kwargs):
        raise demo.Stopped(signal.SIGINT)  # what the SIGINT handler raises

    monkeypatch.setattr(demo, "_follow", interrupted)
    status = demo.run_demo(demo_args())
    out, err = capsys.readouterr()
    assert status == 0 and "arena demo: stopping" in out
    [kept] = demo_folder.iterdir()
    assert (kept / demo.LOG_NAME).is_file()
    assert f"its folder is kept for its log: {kept / demo.LOG_NAME}" in err
