"""``arena demo``, the README's main command, on the embedded default: what it plays and
prints (one screen: progress and summary, the rest in its log), the folder it leaves (none
unless --data-dir, or stopped while playing: then its log), and the processes it leaves
(none, however it is stopped)."""

from __future__ import annotations

import contextlib
import os
import queue
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("server")

SCREEN = (40, 100)  # lines, columns: the whole output of a demo fits one terminal


def demo_env(tmp_path: Path) -> dict[str, str]:
    """Nothing configured (no database server, no broker server); temporary folders in
    the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return {**env, "TMPDIR": str(tmp_path)}


def fits_one_screen(output: str, tmp_path: Path) -> None:
    """The test's folder counted as /tmp, where the demo's own folder would be."""
    lines = output.replace(str(tmp_path), "/tmp").splitlines()
    assert len(lines) <= SCREEN[0], output
    assert max(len(line) for line in lines) <= SCREEN[1], output


def test_the_demo_plays_a_round_robin_and_prints_the_leaderboard(tmp_path):
    # nothing configured: no database server, no broker server
    env = demo_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "arena", "demo", "--exit-when-done", "--port", "0",
         "--games", "cactus,president", "--data-dir", str(tmp_path / "demo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a bound on the process, not a timed assertion
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "sample bots registered" in out
    for game in ("cactus", "president"):  # the last progress bar of each tournament
        assert re.search(rf"{game} +\[#{{30}}\] (\d+)/\1  finished", out), out
    for game in ("cactus", "president"):
        board = out.split(f"Leaderboard — {game}\n")[1].split("\n\n")[0]
        rows = board.splitlines()[1:]
        # each bot's Elo and its fit, or "provisional" as the pages say (docs/ratings.md)
        assert len(rows) == 3, board
        assert all(
            re.search(r"\d+\.\d +\d+ +(\d+ \(\d+\.\.\d+\)|provisional)$", r) for r in rows
        ), board
    if "provisional" in out:  # said once what it means
        assert out.count("provisional: under 10 rated matches") == 1
    assert "Browse" not in out  # --exit-when-done: the server is gone with the demo
    assert (tmp_path / "demo" / "arena.sqlite3").exists()
    assert not (tmp_path / "control").exists()  # the broker keeps to its data folder
    # progress and summary only; the worker's banner and the warnings are in the log
    assert done.stderr == ""
    fits_one_screen(out, tmp_path)
    log = tmp_path / "demo" / "demo.log"
    assert (
        out.splitlines()[-1]
        == f"The database and the workers' log (demo.log) stay in {log.parent}."
    )
    assert "celery@" in log.read_text() or "demo0@" in log.read_text()  # the banner


def test_the_demo_fits_one_screen_and_leaves_no_folder(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "arena", "demo", "--exit-when-done", "--port", "0",
         "--games", "cactus", "--games-per-pairing", "2"],
        env=demo_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stderr == ""
    fits_one_screen(done.stdout, tmp_path)
    first = done.stdout.splitlines()[0]
    folder = re.fullmatch(r"arena demo: data and log in (\S+) \(removed at exit\)", first)[1]
    assert Path(folder).parent == tmp_path
    assert done.stdout.splitlines()[-1] == (
        "Done: its folder is removed (--data-dir keeps the database and the log)."
    )
    assert list(tmp_path.iterdir()) == []  # its folder is gone, nothing else was made


def _session(leader: int) -> dict[int, str]:
    """The processes of the session ``leader`` started (the demo and its children), by
    pid, with their state; from /proc, no library."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        state, _ppid, _pgrp, session = stat.rsplit(")", 1)[1].split()[:4]
        if int(session) == leader:
            found[int(entry.name)] = state
    return found


def free_run_of_ports(count: int = 3) -> int:
    """The first of ``count`` consecutive free ports, below the ephemeral range (where the
    ports the system hands out to other tests' servers and connections come from)."""
    chooser = random.Random()
    for _ in range(200):
        first = chooser.randrange(20_000, 30_000)
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    sock = held.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return first
    raise RuntimeError(f"no {count} consecutive free ports")


@pytest.mark.parametrize(
    ("signum", "when"),
    [(signal.SIGTERM, "sample bots registered"), (signal.SIGINT, "Serving until interrupted")],
    ids=["SIGTERM while playing", "SIGINT while serving"],
)
def test_a_stop_signal_stops_every_child(tmp_path, signum, when):
    first_bot_port = free_run_of_ports(3)  # the demo's three sample bots
    demo = subprocess.Popen(
        [sys.executable, "-m", "arena", "demo", "--port", "0", "--games", "cactus",
         "--bot-port", str(first_bot_port)],
        env=demo_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        start_new_session=True,  # its own session: whatever it starts is found by it
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in demo.stdout])
    reader.start()
    output = []
    try:
        deadline = time.monotonic() + 300
        while not any(when in line for line in output):
            assert time.monotonic() < deadline, "".join(output)
            try:
                output.append(lines.get(timeout=1))
            except queue.Empty:
                assert demo.poll() is None, "".join(output)
        children = {pid for pid in _session(demo.pid) if pid != demo.pid}
        assert children  # the worker process
        demo.send_signal(signum)
        assert demo.wait(timeout=60) == 0
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
        reader.join(timeout=30)  # to the end of its output
        demo.stdout.close()
    while not lines.empty():
        output.append(lines.get())
    text = "".join(output)
    assert f"sample bots registered (ports {first_bot_port} to {first_bot_port + 2})" in text
    assert "arena demo: stopping" in text
    left = {pid: state for pid, state in _session(demo.pid).items() if state != "Z"}
    assert left == {}, text  # no worker orphaned to PID 1
    if signum == signal.SIGINT:  # stopped while serving, its tournaments over
        assert list(tmp_path.iterdir()) == []  # and its temporary folder removed
    else:  # stopped while playing (it seemed stuck?): the folder stays for its log
        [kept] = tmp_path.iterdir()
        assert f"its folder is kept for its log: {kept / 'demo.log'}" in text
