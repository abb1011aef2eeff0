"""A class round robin of hosted Python bots: matches/min and worker CPU per decision
against the same bots over webhooks, same run.

    python benchmarks/hosted.py [--bots 8] [--games 2] [--repeat 3] [--timeout 900] [--smoke]

One embedded lane (``tests/support/lanes.py``: SQLite, the file-system broker) with one
real ``arena worker`` process (default flags: the threads pool), the web app served over
HTTP on loopback in this process, and ``--bots`` copies of the SDK's Cactus starter
(``sdk/arenabot/starters/cactus.py``, the same bytes) entered twice:

- hosted: registered with ``"hosted": true``, the starter uploaded as ``text/x-python``
  (``PUT /api/bots/<id>/code``); each version plays its validation match, and the run
  goes on once every one has passed.  The worker runs each seat in its sandbox
  (bubblewrap, one warm process per seat per match, stopped between decisions);
- webhook: the starter served by the SDK's server (``python bot.py --port P --secret S``,
  a process per bot, as a student runs it), registered with its endpoint.

Each repetition (``--repeat``) starts, for each transport in turn (the order swapped every
repetition), a Cactus round robin among that transport's bots at 2 seats, ``--games`` per
pairing, through the API, and measures from its creation to its last match's end: the
wall time, matches per minute, the decisions (counted in the replays), the median
decision latency the referee recorded (a hosted decision's clock starts once it holds a
hosted core), and CPU per decision: the worker's (``utime + stime`` from ``/proc``), the
bot's (hosted: its sandboxes, bubblewrap and the runner, start-up included, which run on
the worker's host; webhook: the bots' own processes, on the bots' machines in real life),
and the two together.  A sandbox is killed at its match's end, before bubblewrap can reap
its runner: so that the runner's CPU is counted, this process makes itself the child
subreaper of what it starts (``PR_SET_CHILD_SUBREAPER``) and reaps such orphans itself
(``wait4`` gives their CPU).  After the round robins, a sandbox is started alone
``STARTS`` times (bubblewrap, the runner, the starter loaded and ready), to tell its
start-up from its decisions.

Printed: the versions line (bubblewrap's added), the setup, then for each figure the
min / median / max over the repetitions of each transport and of the ratio hosted/webhook
(the ratio of each repetition's two runs); the matches finished and failed and the seats'
faults; the sandboxes' CPU each, and a start-up's alone.  ``--smoke``: 3 bots, 2 games per
pairing (the fewest: a pairing plays each seat as often), 1 repetition.

Linux only (``/proc``, ``prctl``), and the sandbox must work here (``arena.hosted.sandbox``:
bubblewrap, user namespaces, libseccomp).  Everything it starts is stopped at its end; its
data is in a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import os
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import accepts, free_port, parse_args, versions, wait_until  # noqa: E402
from tournament import decisions_of, process_tree  # noqa: E402

from arena.cli.processes import stop_processes, worker_command  # noqa: E402
from arena.hosted import sandbox  # noqa: E402
from tests.support.lanes import Lane, lane, web_server  # noqa: E402

STARTER = ROOT / "sdk" / "arenabot" / "starters" / "cactus.py"
PYTHONPATH = os.pathsep.join([str(ROOT), str(ROOT / "sdk")])
TRANSPORTS = ("hosted", "webhook")
CLK_TCK = os.sysconf("SC_CLK_TCK")
PR_SET_CHILD_SUBREAPER = 36
VALIDATION_SECONDS = 300.0  # for every hosted version's validation match
STARTS = 5  # sandboxes started alone, after the round robins
SETTLE_SECONDS = 5.0  # for the sandboxes of matches just ended to be gone


# -- CPU -----------------------------------------------------------------------------------
def stat_ticks(pid: int) -> tuple[int, int]:
    """A process's own CPU (utime + stime) and that of its children it has reaped
    (cutime + cstime), in clock ticks; zeros when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0, 0
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


class Orphans:
    """This process as the child subreaper of what it starts: a process whose parent died
    before reaping it (a sandbox's runner, killed with bubblewrap at its match's end)
    becomes this process's child, and is reaped here, its CPU (``wait4``) added up.
    Processes this process started itself (``mine``) are left to their ``Popen``."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")
        self.mine: set[int] = set()
        self.seconds = 0.0
        self.reaped = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _children(self) -> list[int]:
        found = []
        for task in os.listdir("/proc/self/task"):
            try:
                found += [
                    int(p) for p in Path(f"/proc/self/task/{task}/children").read_text().split()
                ]
            except OSError:
                continue
        return found

    def collect(self) -> float:
        """Reap the orphans that have ended; the CPU seconds of every one reaped so far."""
        with self._lock:
            for pid in self._children():
                if pid in self.mine:
                    continue
                try:
                    done, _, usage = os.wait4(pid, os.WNOHANG)
                except ChildProcessError:
                    continue
                if done:
                    self.seconds += usage.ru_utime + usage.ru_stime
                    self.reaped += 1
            return self.seconds

    def settle(self, timeout: float) -> None:
        """Reap until no orphan is left (one that was still exiting at the last look)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.collect()
            if not set(self._children()) - self.mine:
                return
            time.sleep(0.01)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.collect()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Cpu:
    """Seconds of CPU since the process started: the worker processes' own, and the
    bots' (hosted: every descendant of the workers, reaped or not, and the orphans;
    webhook: the bots' processes); of the hosted bots', the runners reaped here, and how
    many."""

    worker: float
    bots: float
    runners: float = 0.0
    sandboxes: int = 0

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(
            self.worker - other.worker,
            self.bots - other.bots,
            self.runners - other.runners,
            self.sandboxes - other.sandboxes,
        )


def cpu_now(workers: list[int], webhook_bots: list[int], orphans: Orphans) -> dict[str, Cpu]:
    """What each transport's figures read: the worker's own CPU, and its bots' CPU; once
    the sandboxes of the matches just ended are gone (killed as their results are saved),
    and reaped."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while any(len(process_tree(root)) > 1 for root in workers) and time.monotonic() < deadline:
        time.sleep(0.01)
    orphans.settle(SETTLE_SECONDS)
    runners = orphans.collect()
    own = below = 0
    for root in workers:
        mine, reaped = stat_ticks(root)
        own += mine
        below += reaped  # its sandboxes' bubblewrap processes, reaped
        for pid in process_tree(root)[1:]:  # its sandboxes still running (or not reaped)
            below += sum(stat_ticks(pid))
    hooks = sum(sum(stat_ticks(pid)) for pid in webhook_bots)
    return {
        "hosted": Cpu(own / CLK_TCK, below / CLK_TCK + runners, runners, orphans.reaped),
        "webhook": Cpu(own / CLK_TCK, hooks / CLK_TCK),
    }


def _said_ready(line: bytes) -> bool:
    """Whether a runner's line is its ready line (read as JSON, as the worker reads it)."""
    try:
        said = json.loads(line)
    except ValueError:
        return False
    return isinstance(said, dict) and said.get("ready") is True


def start_up(code: bytes, folder: Path, orphans: Orphans, times: int) -> tuple[float, float]:
    """A sandbox's start-up alone, as a hosted seat's starts (the starter loaded, ready to
    answer): the median wall and CPU seconds (bubblewrap and the runner) over ``times``."""
    folder.mkdir()
    (folder / "bot.py").write_bytes(code)
    folder.chmod(0o755)
    walls, cpus = [], []
    for _ in range(times):
        with tempfile.TemporaryFile() as log:
            reaped = orphans.reaped
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            proc = sandbox.default().spawn(str(folder), log.fileno())
            orphans.mine.add(proc.pid)  # bubblewrap: reaped by its Popen
            assert proc.stdout is not None and proc.stdin is not None
            lines = [proc.stdout.readline(), proc.stdout.readline()]
            walls.append(time.perf_counter() - began)
            if not _said_ready(lines[1]):
                raise SystemExit(f"the sandbox did not start: {lines}")
            os.killpg(proc.pid, signal.SIGKILL)  # as the worker ends a seat
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()

            def runner_reaped() -> bool:
                orphans.collect()
                return orphans.reaped > reaped  # noqa: B023

            wait_until(runner_reaped, 10, "the sandbox's runner")
            # bubblewrap, reaped by its Popen, and its runner, reaped by wait4 here
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


# -- the API -------------------------------------------------------------------------------
def call(
    base: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """A JSON request to the web app (``data``: a raw body instead); its JSON answer."""
    sent = {"Content-Type": "application/json", **(headers or {})}
    if body is not None:
        data = json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        said = exc.read().decode(errors="replace")[:500]
        raise SystemExit(f"{method} {path}: HTTP {exc.code} {said}") from None


@contextmanager
def web_app(the_lane: Lane) -> Iterator[str]:
    """The lane's web app served over HTTP on loopback by a thread of this process (no
    rate limits: a class registers many bots from one address); its address."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    with web_server(replace(the_lane.config, rate_limits=False)) as (url, _):
        yield url


@contextmanager
def started(
    argv: list[str], log: Path, env: dict[str, str], cwd: Path, orphans: Orphans
) -> Iterator[subprocess.Popen[bytes]]:
    """A process of this run, its output to ``log``; stopped at the end."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    orphans.mine.add(proc.pid)
    try:
        yield proc
    finally:
        stop_processes([proc], timeout=20)


def tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# -- the bots ------------------------------------------------------------------------------
def hosted_bots(base: str, n: int, code: bytes) -> list[tuple[int, dict[str, str]]]:
    """``n`` hosted bots, each with the starter uploaded (its version's validation match
    queued); their ids, each with its owner's credentials."""
    made = []
    for i in range(n):
        entry = {"name": f"hosted-{i}", "hosted": True, "owner": "bench", "games": ["cactus"]}
        bot = call(base, "POST", "/api/bots", entry)
        owner = {"Authorization": f"Bearer {bot['owner_token']}"}
        sent = {**owner, "Content-Type": "text/x-python"}
        call(base, "PUT", f"/api/bots/{bot['id']}/code", data=code, headers=sent)
        made.append((bot["id"], owner))
    return made


def wait_validated(base: str, made: list[tuple[int, dict[str, str]]], log: Path) -> None:
    """Until every version's validation match is played; the run stops unless all passed."""

    def statuses() -> list[dict[str, Any]]:
        return [call(base, "GET", f"/api/bots/{i}/code", headers=h)[0] for i, h in made]

    deadline = time.monotonic() + VALIDATION_SECONDS
    seen = statuses()
    while any(v["status"] == "validating" for v in seen):
        if time.monotonic() > deadline:
            raise SystemExit(
                f"the validation matches: not within {VALIDATION_SECONDS:g} s\n"
                f"the worker's log ends:\n{tail(log)}"
            )
        time.sleep(0.2)
        seen = statuses()
    failed = [v for v in seen if v["status"] != "passed"]
    if failed:
        raise SystemExit(f"a hosted version did not pass its validation: {failed[0]['reason']}")


def webhook_bots(
    stack: ExitStack, base: str, n: int, folder: Path, orphans: Orphans
) -> tuple[list[int], list[int]]:
    """``n`` processes serving the starter (``python bot.py --port P --secret S``), each
    registered with its endpoint and the secret it was started with; their ids and pids."""
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    bots = []
    for i in range(n):
        port, secret = free_port(), secrets.token_hex(24)
        argv = [sys.executable, "bot.py", "--port", str(port), "--secret", secret]
        proc = stack.enter_context(started(argv, folder / f"bot-{i}.log", env, folder, orphans))
        bots.append((proc, port, secret))
    ids = []
    for i, (proc, port, secret) in enumerate(bots):
        wait_until(lambda: accepts(port) or proc.poll() is not None, 30, f"webhook bot {i}")  # noqa: B023
        if proc.poll() is not None:
            raise SystemExit(f"webhook bot {i} exited:\n{tail(folder / f'bot-{i}.log')}")
        bot = call(
            base,
            "POST",
            "/api/bots",
            {
                "name": f"webhook-{i}",
                "endpoint": f"http://127.0.0.1:{port}",
                "owner": "bench",
                "games": ["cactus"],
                "signing_secret": secret,
            },
        )
        ids.append(bot["id"])
    return ids, [proc.pid for proc, _, _ in bots]


# -- one round robin -----------------------------------------------------------------------
@dataclass
class Run:
    wall: float  # seconds from the tournament's creation to its last match's end
    matches: int  # finished
    failed: int
    decisions: int
    faults: int  # decisions with a fault
    latency_ms: float  # median over the decisions
    cpu: Cpu  # seconds

    def figures(self) -> dict[str, float]:
        per = 1e6 / max(self.decisions, 1)
        return {
            "wall time, s": self.wall,
            "matches/min": 60 * self.matches / self.wall,
            "decisions": self.decisions,
            "median decision latency, ms": self.latency_ms,
            "worker CPU per decision, us": self.cpu.worker * per,
            "bot CPU per decision, us": self.cpu.bots * per,
            "worker + bot CPU per decision, us": (self.cpu.worker + self.cpu.bots) * per,
        }


def round_robin(
    base: str, name: str, ids: list[int], games: int, seed: int, timeout: float, measure: Any
) -> Run:
    """A Cactus round robin among ``ids`` at 2 seats, measured from its creation to its
    end (``measure()``: the CPU figure of its transport now)."""
    expected = len(ids) * (len(ids) - 1) // 2 * games
    cpu_before = measure()
    created = datetime.now(UTC)
    began = time.monotonic()
    tournament = call(
        base,
        "POST",
        "/api/tournaments",
        {
            "name": name,
            "game": "cactus",
            "bot_ids": ids,
            "seats_per_match": 2,
            "games_per_pairing": games,
            "seed": seed,
        },
    )
    tid = tournament["id"]
    while True:
        answer = call(base, "GET", f"/api/tournaments/{tid}")
        progress = answer["progress"]
        done = progress["finished"] + progress["failed"] + progress["cancelled"]
        if answer["status"] in ("finished", "cancelled") or done >= expected:
            break
        if time.monotonic() - began > timeout:
            raise SystemExit(f"{name}: {done} of {expected} matches within {timeout:g} s")
        time.sleep(0.1)
    cpu = measure() - cpu_before
    matches: list[dict[str, Any]] = []
    page = 1
    while batch := call(base, "GET", f"/api/matches?tournament_id={tid}&page_size=100&page={page}"):
        matches += batch
        page += 1
    finished = [m for m in matches if m["status"] == "finished"]
    records = [call(base, "GET", f"/api/matches/{m['id']}/replay") for m in finished]
    decided = [
        d
        for r in records
        for step in r["steps"]
        for d in (step["decisions"] if isinstance(step, dict) else step)
    ]
    ended = max((datetime.fromisoformat(m["finished_at"]) for m in finished), default=None)
    wall = (ended - created).total_seconds() if ended else time.monotonic() - began
    latencies = [d["latency_ms"] for d in decided if d.get("latency_ms") is not None]
    return Run(
        wall=wall,
        matches=len(finished),
        failed=len(matches) - len(finished),
        decisions=sum(decisions_of(r) for r in records),
        faults=sum(1 for d in decided if d.get("fault")),
        latency_ms=statistics.median(latencies) if latencies else float("nan"),
        cpu=cpu,
    )


# -- the table -----------------------------------------------------------------------------
def spread(values: list[float], digits: int) -> str:
    return " ".join(
        f"{v:>10.{digits}f}" for v in (min(values), statistics.median(values), max(values))
    )


def report(
    args: argparse.Namespace, runs: dict[str, list[Run]], setup: str, alone: tuple[float, float]
) -> None:
    print(setup)
    print(f"{'':<36}{'':<16}{'min':>10} {'median':>10} {'max':>10}")
    figures = {t: [r.figures() for r in runs[t]] for t in TRANSPORTS}
    for label in figures["hosted"][0]:
        digits = 3 if "ms" in label or "wall" in label else (1 if "min" in label else 0)
        rows = {t: [f[label] for f in figures[t]] for t in TRANSPORTS}
        ratios = [
            h / w if w else float("nan")
            for h, w in zip(rows["hosted"], rows["webhook"], strict=True)
        ]
        for transport in TRANSPORTS:
            print(f"{label:<36}{transport:<16}{spread(rows[transport], digits)}")
        print(f"{label:<36}{'hosted/webhook':<16}{spread(ratios, 2)}")
    expected = args.bots * (args.bots - 1) // 2 * args.games
    for transport in TRANSPORTS:
        done = [r.matches for r in runs[transport]]
        print(
            f"{transport:<8} {min(done)}/{expected} matches finished in every repetition, "
            f"{sum(r.failed for r in runs[transport])} failed, "
            f"{sum(r.faults for r in runs[transport])} seat faults"
        )
    hosted = runs["hosted"]
    sandboxes = statistics.median(r.cpu.sandboxes for r in hosted)
    each = statistics.median(1e3 * r.cpu.bots / max(r.cpu.sandboxes, 1) for r in hosted)
    runner = statistics.median(1e3 * r.cpu.runners / max(r.cpu.sandboxes, 1) for r in hosted)
    per_seat = statistics.median(r.decisions / max(r.cpu.sandboxes, 1) for r in hosted)
    wall, cpu = alone
    print(
        f"hosted sandboxes (one per seat per match): {sandboxes:.0f} per round robin, "
        f"{each:.1f} ms CPU each (its runner {runner:.1f} ms), {per_seat:.0f} decisions each"
    )
    print(
        f"a sandbox's start-up alone (bubblewrap, the runner, the starter loaded): "
        f"{1e3 * cpu:.1f} ms CPU, {1e3 * wall:.1f} ms wall (median of {STARTS}), "
        f"{1e6 * cpu / max(per_seat, 1):.0f} us per decision of a seat"
    )


def run(args: argparse.Namespace) -> None:
    code = STARTER.read_bytes()
    with ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="arena-hosted-bench-"))
        stack.callback(shutil.rmtree, tmp, True)
        orphans = Orphans()
        stack.callback(orphans.close)
        the_lane = stack.enter_context(lane("embedded", tmp / "data", workers=0))
        # the worker's hosted folder (code unpacked, the cores' lock files): this run's own
        env = {**os.environ, **the_lane.env, "ARENA_HOSTED_DIR": str(tmp / "hosted")}
        log = tmp / "worker.log"
        worker = stack.enter_context(
            started(worker_command(f"bench-{os.getpid()}@%h"), log, env, tmp, orphans)
        )
        base = stack.enter_context(web_app(the_lane))
        made = hosted_bots(base, args.bots, code)  # validated while the webhook bots start
        folder = tmp / "webhook"
        folder.mkdir()
        (folder / "bot.py").write_bytes(code)
        hook_ids, hook_pids = webhook_bots(stack, base, args.bots, folder, orphans)
        wait_validated(base, made, log)
        if worker.poll() is not None:
            raise SystemExit(f"the worker exited:\n{tail(log)}")
        bots = {"hosted": [bot_id for bot_id, _ in made], "webhook": hook_ids}
        runs: dict[str, list[Run]] = {t: [] for t in TRANSPORTS}
        for rep in range(args.repeat):
            order = TRANSPORTS if rep % 2 == 0 else TRANSPORTS[::-1]
            for transport in order:
                runs[transport].append(
                    round_robin(
                        base,
                        f"{transport}-{rep}",
                        bots[transport],
                        args.games,
                        seed=1 + rep,
                        timeout=args.timeout,
                        measure=lambda t=transport: cpu_now([worker.pid], hook_pids, orphans)[t],
                    )
                )
        alone = start_up(code, tmp / "alone", orphans, STARTS)
    hosted_cores = os.environ.get("ARENA_HOSTED_CORES") or f"all {len(os.sched_getaffinity(0))}"
    matches = args.bots * (args.bots - 1) // 2 * args.games
    setup = (
        f"{args.bots} cactus starter bots per transport, a round robin at 2 seats, {args.games} "
        f"games per pairing ({matches} matches); {args.repeat} repetition(s), the order "
        f"swapped each one; 1 worker (default flags), hosted cores: {hosted_cores}"
    )
    report(args, runs, setup, alone)


def bwrap_version() -> str:
    try:
        said = subprocess.run([sandbox.BWRAP, "--version"], capture_output=True, text=True)
    except OSError:
        return "not installed"
    return said.stdout.split()[-1] if said.stdout.split() else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8, help="bots per transport")
    parser.add_argument("--games", type=int, default=2, help="matches per pairing")
    parser.add_argument("--repeat", type=int, default=3, help="round robins per transport")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per round robin")
    args = parse_args(parser, smoke={"bots": 3, "games": 2, "repeat": 1})
    print(f"{versions('celery', 'kombu', 'orjson')}, bubblewrap {bwrap_version()}", flush=True)
    if args.bots < 2:
        raise SystemExit("--bots: at least 2")
    if args.games < 2 or args.games % 2:
        raise SystemExit("--games: a positive multiple of 2 (every bot plays both seats)")
    reason = sandbox.available()
    if reason is not None:
        raise SystemExit(f"hosted bots cannot run here: {reason}")
    run(args)


if __name__ == "__main__":
    main()
