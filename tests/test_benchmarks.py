"""Every benchmark still runs: each script of ``benchmarks/`` with ``--smoke`` (its
smallest sizes and durations, a few seconds: ``benchmarks/_common.py``), in a process of
its own started from an empty directory, must exit 0, print first the versions of what
it compares against, then its table (the lines ``TABLES`` names), leave no process it
started running, and leave nothing in that directory (a script that wrote there, say an
``arena-data/`` of its own, used a configuration no arena process has).

The scripts are found by listing the folder, so a new benchmark is run without being
named here, and fails until ``TABLES`` says what its table looks like; ``MODES`` adds the
runs of a script's other modes (``big_tournament.py --schedule``).  What a benchmark
needs that a machine may lack (root and the programs of the hosts, OpenSpiel, gunicorn,
PostgreSQL and redis-server, the git history, the hosted bots' sandbox) is checked
first: on CI (``CI`` set) a missing one fails the test; elsewhere it is skipped with the
reason, as the lanes do (``tests/support/lanes.py``).

The runs are marked ``benchmarks`` and left out of the default run (pyproject.toml's
``addopts``): they start servers, workers and hosts of their own, which the suite's timed
tests should not share the machine with.  ``python3 -m pytest -m benchmarks -n auto``
runs them; CI does, in a lane of its own after the suite.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import hosts

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
# modules of the folder that are not benchmarks
NOT_SCRIPTS = {
    "_common.py",  # what the benchmarks share: --smoke and the versions line
}
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name not in NOT_SCRIPTS)
# a script's other modes, each run with --smoke too: script -> the options of each mode
MODES = {"big_tournament.py": [["--schedule"]]}
RUNS = [
    [script, *options] for script in SCRIPTS for options in [[], *MODES.get(script, [])]
]  # each run: the script and its options; its name, " ".join(run), keys TABLES

VERSIONS = re.compile(r"versions: python \d+\.\d+\.\d+")
NUMBER = r"-?\d[\d,.]*"

# lines (regular expressions, each matching a whole line) of each run's table
TABLES: dict[str, list[str]] = {
    "accounts.py": [rf"login\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x .*"],
    "across_hosts.py": [rf"matches recorded with every seat faulted\s+{NUMBER}.*"],
    "big_tournament.py": [
        r"  before  answered .* \(HTTP \[201\]\), created .*",
        # built by the worker process, in batches
        r"  after   answered .* \(HTTP \[202\]\), created .*",
        rf"  p99 of the other requests, before / after \(medians\): {NUMBER}x",
    ],
    "big_tournament.py --schedule": [
        r"== scheduling 12 bots x 8 four-seat matches, with the balance report",
        rf"  after   cpu {NUMBER} / {NUMBER} / {NUMBER} s, wall .* digests \['[0-9a-f]{{16}}'\]",
    ],
    "concurrency.py": [
        rf"\s+0ms  {design}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x\s+\d+"
        for design in ("threads", "asyncio")
    ],
    "connect.py": [
        rf"   match ratio connect/webhook\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
        r"   sessions opened 3/3, polls open 3/3 after .* failures none; web process alive",
        rf"   CPU over 1 s idle, polls open\s+{NUMBER} % of a core .*",
    ],
    "connect_client.py": [rf"ratio connect / floor\s+{NUMBER}"],
    "crowd.py": [
        rf"healthz\s+\d+\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}  0",
        rf"login\s+3\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}  0",
        rf"decision, added by connect\s+\d+\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}  0",
        r"tournament \d+: 4 players, 4/4 matches finished, 0 failed, 0 unfinished; .*",
        r"  faults: timeout 0, disconnected 0, other 0",
    ],
    "engine.py": [
        rf"openspiel dou_dizhu \(C\+\+\)\s+yes\s+{NUMBER}\s+{NUMBER}\s+1\.00x",
        rf"president \(4p\)\s+yes\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x",
    ],
    "frames.py": [rf"  live poll at the last step\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}"],
    "hosted.py": [
        rf"matches/min\s+hosted/webhook\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
        rf"worker CPU per decision, us\s+hosted/webhook\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
        rf"median decision latency, ms\s+hosted/webhook\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
        r"hosted\s+6/6 matches finished in every repetition, 0 failed, 0 seat faults",
        r"webhook\s+6/6 matches finished in every repetition, 0 failed, 0 seat faults",
    ],
    "health.py": [rf"tournament, worker alive\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x .*"],
    "kills.py": [
        r"embedded lane, 1 workers, 1 kills .*",
        r"  12 of 12 matches finished, \d+ failed, in \d+ s",
        r"  seats of a match's later attempts: \d+, shown a first view again: \d+",
    ],
    "learn.py": [rf"president \(4p\)\s+{NUMBER}/{NUMBER}/{NUMBER}\s+{NUMBER}/{NUMBER}/{NUMBER}x"],
    "metrics.py": [rf"scrape, 200 matches\s+{NUMBER}\s+{NUMBER}\s+{NUMBER} ms\s+ratio .*"],
    "ranking.py": [
        rf"  ratio dup / indep\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
        r"== president: 4 bots at 4 seats — Kendall tau, .*",
    ],
    "ratings.py": [
        rf"\s+choix baseline\s+{NUMBER} s\s+ratio {NUMBER}x",
        rf"  refit_game, history unchanged\s+{NUMBER} s",
    ],
    "referee.py": [rf"president\s+\d+\s+\d+\s+\d+\s+\d+\s+{NUMBER}x\s+\d+"],
    "registration_stall.py": [r"  after   quiet p50 .*  \|  tarpit p50 .* p99 .*"],
    "sdk_hostile.py": [
        rf"burst p50_ms\s+after\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
        rf"release p50 / quiet p50, after:\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
    ],
    "sdk_roundtrip.py": [rf"SDK, sample bot cactus_random\s+{NUMBER} us\s+ratio {NUMBER}"],
    "sealed_secrets.py": [rf"  ratio cold / baseline\s+: {NUMBER}"],
    "stop_rule.py": [rf"  ratio\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}"],
    "tournament.py": [
        r"  finished 2 matches \(0 failed\) and \d+ decisions in .*",
        rf"  a match took\s+{NUMBER}x its floor .*",
    ],
    "tournament_scale.py": [
        rf"  balanced, 8 bots x 4 seats x 4\s+create\s+{NUMBER}.*",
        rf"  GET /tournaments/<id> \(HTML\)\s+{NUMBER}\s+{NUMBER}\s+{NUMBER} ms\s+ratio .*",
    ],
    "windows.py": [rf"second\s+\d+/2\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}"],
}

# the libraries a benchmark's ratios are measured against, in its versions line
BASELINES = {
    "concurrency.py": ["gevent", "orjson"],
    "connect.py": ["werkzeug"],
    "crowd.py": ["gunicorn", "gevent"],
    "engine.py": ["open_spiel"],
    "learn.py": ["open_spiel"],
    "ratings.py": ["choix"],
    "registration_stall.py": ["gunicorn"],
    "sealed_secrets.py": ["cryptography"],
}

TIMEOUT = 240.0  # seconds: a smoke run takes a few, one with servers a few dozen
TIMEOUTS = {"across_hosts.py": 900.0}  # builds five hosts, PostgreSQL and Redis included


def _module(name: str) -> Callable[[], str | None]:
    return lambda: None if importlib.util.find_spec(name) else f"the {name} module"


def _program(name: str) -> Callable[[], str | None]:
    return lambda: None if shutil.which(name) else f"the {name} program"


def _postgres() -> str | None:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
    except OSError:
        return "PostgreSQL on 127.0.0.1:5432"
    return None


def _sandbox() -> str | None:
    """Hosted bots' sandbox: bubblewrap, user namespaces, libseccomp."""
    from arena.hosted import sandbox

    reason = sandbox.available()
    return None if reason is None else f"the hosted bots' sandbox ({reason})"


def _git_revision_of(script: str) -> Callable[[], str | None]:
    """The older SDK server the benchmark compares against comes from the git history."""

    def missing() -> str | None:
        found = re.search(r'^BEFORE = "(\w+)"', (BENCHMARKS / script).read_text(), re.MULTILINE)
        assert found, f"{script} names no BEFORE revision"
        if shutil.which("git") is None:
            return "the git program"
        known = subprocess.run(
            ["git", "-C", str(ROOT), "cat-file", "-e", f"{found[1]}^{{commit}}"],
            capture_output=True,
        )
        return None if known.returncode == 0 else f"git revision {found[1]} (a shallow clone?)"

    return missing


# what a benchmark needs that a machine may lack: each check returns it, or None
NEEDS: dict[str, list[Callable[[], str | None]]] = {
    "across_hosts.py": [hosts.missing],
    # the image's command on PostgreSQL and a redis-server of its own
    "crowd.py": [_module("gunicorn"), _module("gevent"), _postgres, _program("redis-server")],
    "engine.py": [_module("pyspiel")],
    "hosted.py": [_sandbox],
    "learn.py": [_module("pyspiel"), _module("pettingzoo")],
    "registration_stall.py": [_module("gunicorn")],
    "sdk_hostile.py": [_git_revision_of("sdk_hostile.py")],
}

# the benchmark across hosts builds hosts as tests/test_across_hosts.py does: not both at once
GROUPS = {"across_hosts.py": "across-hosts"}


def _params() -> list[object]:
    return [
        pytest.param(
            run,
            id=" ".join(run),
            marks=[pytest.mark.xdist_group(GROUPS[run[0]])] if run[0] in GROUPS else [],
        )
        for run in RUNS
    ]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _run(run: list[str], cwd: Path, timeout: float) -> tuple[int, str, str, bool]:
    """Exit code, standard output and error of ``python script options --smoke`` in
    ``cwd`` without the caller's ARENA_* variables, and whether a process it started was
    still running 5 s after it exited.  Its process group (the script and every process it
    started) is killed at the end: nothing outlives the test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    script, *options = run
    proc = subprocess.Popen(
        [sys.executable, str(BENCHMARKS / script), *options, "--smoke"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        deadline = time.monotonic() + 5.0
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left_running = _group_alive(proc.pid)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(run)} --smoke took over {timeout:.0f} s:\n{_tail(out, err)}")
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, err, left_running


def _tail(out: str, err: str) -> str:
    return f"{out[-3000:]}\n--- stderr:\n{err[-3000:]}"


def test_every_benchmark_says_what_its_table_looks_like() -> None:
    assert SCRIPTS, f"no benchmark found in {BENCHMARKS}"
    assert sorted(TABLES) == sorted(" ".join(run) for run in RUNS), (
        "TABLES names the runs of benchmarks/ (a new benchmark: add the lines of its table)"
    )
    for name in [*BASELINES, *NEEDS, *GROUPS, *TIMEOUTS, *MODES]:
        assert name in SCRIPTS, f"{name} is not a benchmark of benchmarks/"


@pytest.mark.benchmarks
@pytest.mark.parametrize("run", _params())
def test_benchmark_runs(run: list[str], tmp_path: Path) -> None:
    script, name = run[0], " ".join(run)
    table = TABLES.get(name)
    assert table, f"TABLES says nothing of benchmarks/{name}: add the lines of its table"
    for check in NEEDS.get(script, []):
        lacking = check()
        if lacking is not None:
            reason = f"{lacking}: benchmarks/{script} needs it"
            if os.environ.get("CI"):
                pytest.fail(reason)
            pytest.skip(reason)
    began = time.monotonic()
    code, out, err, left_running = _run(run, tmp_path, TIMEOUTS.get(script, TIMEOUT))
    took = time.monotonic() - began
    assert code == 0, f"{name} --smoke exited with {code} after {took:.0f} s:\n{_tail(out, err)}"
    assert not left_running, f"{name} --smoke left processes it started running"
    first = out.splitlines()[0] if out else ""
    assert VERSIONS.match(first), f"{name} began with no versions line:\n{_tail(out, err)}"
    for library in BASELINES.get(script, []):
        assert f" {library} " in f"{first} ", f"{name}'s versions line names no {library}: {first}"
    for pattern in table:
        assert re.search(f"^{pattern}$", out, re.MULTILINE), (
            f"{name} printed no line matching {pattern!r}:\n{_tail(out, err)}"
        )
    left = sorted(p.name for p in tmp_path.iterdir())
    assert not left, f"{name} left {left} in the directory it was run from"
