"""Registrations against a bot that never answers, and every other page meanwhile.

    python benchmarks/registration_stall.py [--repeat 3] [--registrations 16] [--seconds 15]
        [--web-workers N] [--smoke]

Runs the deployment's web command (``deploy/Dockerfile``'s ``CMD``, read from it, bound
to a free loopback port; its program taken from this interpreter's environment first)
with the local profile on a fresh data directory, and a tarpit bot: it accepts
connections and never answers.  Four reader threads ask ``GET /`` and ``GET /api/bots``
in turn for ``--seconds``; meanwhile ``--registrations`` threads register bots at the
tarpit, one after another each (the per-address rate limit is off: an attacker has many
addresses).  The baseline is the same readers without them.

- before: the command before it had threads (``--workers 4``, sync workers) and the
  health check as it was (``GET /`` given 5 s, no limit on how many at once), set by a
  gunicorn hook;
- after: the command as the Dockerfile has it, and the health check as the code has it.

``--web-workers`` sets both commands' ``--workers`` (default: the Dockerfile's).

Every figure: the readers' p50 and p99 latency, min / median / max over ``--repeat`` runs.
A reader's request that times out counts with its time; one the server answers with an
error status makes the script exit with an error once the figures are printed.

``--smoke``: one run, 1 registration, 1 s of readers, 1 web worker.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena.config import from_env
from arena.db import Database

ROOT = Path(__file__).resolve().parent.parent

READERS = 4
OLD_CHECK = """
import threading

def post_fork(server, worker):
    from arena.services import bots
    bots.REGISTRATION_CHECK_SECONDS = 5.0  # the old GET / timeout (CONTROL_TIMEOUT)
    bots._registration_checks = threading.BoundedSemaphore(10**6)  # no limit
"""


def deployed_command() -> list[str]:
    """The web command of the image: its CMD, as JSON, its program (``gunicorn``) that of
    this interpreter's environment when it has one (a virtual environment not on PATH)."""
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    found = re.search(r"^CMD\s+(\[.*\])\s*$", text, re.MULTILINE)
    if found is None:
        raise SystemExit("deploy/Dockerfile has no CMD [...] line")
    command = json.loads(found[1])
    beside = Path(sys.executable).parent / command[0]
    return [str(beside) if beside.exists() else command[0], *command[1:]]


def with_bind(command: list[str], port: int) -> list[str]:
    out = list(command)
    out[out.index("--bind") + 1] = f"127.0.0.1:{port}"
    return out


def with_workers(command: list[str], workers: int | None) -> list[str]:
    out = list(command)
    if workers is not None:
        out[out.index("--workers") + 1] = str(workers)
    return out


def before_command(command: list[str], hook: Path) -> list[str]:
    """Sync workers (no --worker-class/--threads, gunicorn's default timeout), the old
    health check."""
    out: list[str] = []
    skip = False
    for i, part in enumerate(command):
        if skip:
            skip = False
            continue
        if part in ("--worker-class", "--threads", "--timeout", "--graceful-timeout"):
            skip = True
            continue
        if i == len(command) - 1:
            out += ["--config", str(hook)]
        out.append(part)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tarpit:
    """Accepts connections and never answers."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1024)
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _run(self) -> None:
        self.listener.settimeout(0.1)
        while not self.stop.is_set():
            try:
                self.held.append(self.listener.accept()[0])
            except OSError:
                continue

    def close(self) -> None:
        self.stop.set()
        for conn in self.held:
            conn.close()
        self.listener.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def serve(command: list[str], data_dir: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "ARENA_PROFILE": "local",
        "ARENA_DATA_DIR": data_dir,
        "ARENA_RATE_LIMITS": "0",
        "PYTHONPATH": str(ROOT),
    }
    Database(from_env(env).database_url).upgrade()
    log = open(Path(data_dir) / "gunicorn.log", "wb")  # noqa: SIM115 - the process owns it
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)


def wait_up(base: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the web command exited ({proc.returncode})")
        try:
            with urllib.request.urlopen(base + "/api/games", timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    raise SystemExit("the web command did not answer within 60 s")


def measure(
    base: str, seconds: float, registrations: int, tarpit: str | None
) -> tuple[list[float], int]:
    """The readers' latencies, and how many of their requests the server answered with an
    error status."""
    stop = threading.Event()
    latencies: list[float] = []
    refused = [0]
    outcomes: dict[int, int] = {}

    def read(i: int) -> None:
        paths = ("/", "/api/bots")
        k = i
        while not stop.is_set():
            began = time.perf_counter()
            try:
                with urllib.request.urlopen(base + paths[k % 2], timeout=60) as response:
                    response.read()
            except urllib.error.HTTPError:
                refused[0] += 1
            except (urllib.error.URLError, OSError):
                pass  # timed out: its time is the figure
            latencies.append(time.perf_counter() - began)
            k += 1
            time.sleep(0.05)

    def register(i: int) -> None:
        n = 0
        while not stop.is_set():
            body = {"name": f"pit {i} {n}", "endpoint": tarpit, "owner": "bench"}
            request = urllib.request.Request(
                base + "/api/bots",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    status = response.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except (urllib.error.URLError, OSError):
                status = 0
            outcomes[status] = outcomes.get(status, 0) + 1
            n += 1

    threads = [threading.Thread(target=read, args=(i,)) for i in range(READERS)]
    if tarpit is not None:
        threads += [threading.Thread(target=register, args=(i,)) for i in range(registrations)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    if outcomes:
        print(f"    registrations answered: {dict(sorted(outcomes.items()))}", flush=True)
    return latencies, refused[0]


def one_run(command: list[str], args: argparse.Namespace) -> dict[str, float]:
    tarpit = Tarpit()
    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        proc = serve(with_bind(command, port), data_dir)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_up(base, proc)
            quiet, quiet_refused = measure(base, args.seconds, 0, None)
            stalled, refused = measure(base, args.seconds, args.registrations, tarpit.url)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            tarpit.close()
    return {
        "quiet_p50": percentile(quiet, 0.5),
        "quiet_p99": percentile(quiet, 0.99),
        "p50": percentile(stalled, 0.5),
        "p99": percentile(stalled, 0.99),
        "refused": quiet_refused + refused,
    }


def spread(values: list[float]) -> str:
    return " / ".join(f"{v:.3f}" for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--registrations", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--web-workers", type=int, help="--workers (default: the Dockerfile's)")
    args = parse_args(
        parser, smoke={"repeat": 1, "registrations": 1, "seconds": 1.0, "web_workers": 1}
    )
    print_versions("gunicorn")
    deployed = with_workers(deployed_command(), args.web_workers)
    with tempfile.TemporaryDirectory() as tmp:
        hook = Path(tmp) / "old_check.py"
        hook.write_text(OLD_CHECK)
        commands = {"before": before_command(deployed, hook), "after": deployed}
        results: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for run in range(args.repeat):
            for mode, command in commands.items():
                print(f"  run {run + 1} {mode}: {' '.join(with_bind(command, 0))}", flush=True)
                result = one_run(command, args)
                print(f"    {result}", flush=True)
                results[mode].append(result)
    print(
        f"\nGET / and GET /api/bots, seconds (min / median / max of {args.repeat} runs), "
        f"without and with {args.registrations} registrations at a tarpit"
    )
    for mode, runs in results.items():
        print(
            f"  {mode:6}  quiet p50 {spread([r['quiet_p50'] for r in runs])}  "
            f"p99 {spread([r['quiet_p99'] for r in runs])}  |  tarpit p50 "
            f"{spread([r['p50'] for r in runs])}  p99 {spread([r['p99'] for r in runs])}"
        )
    refused = sum(r["refused"] for runs in results.values() for r in runs)
    if refused:
        sys.exit(f"{refused} readers' requests were answered with an error status")


if __name__ == "__main__":
    main()
