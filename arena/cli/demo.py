"""``arena demo``: the whole product on one machine with nothing but Python.

Starts the sample bots, the web server and real Celery worker processes on the embedded
default (a SQLite file and a file-system broker, unless ``ARENA_DATABASE_URL`` and
``ARENA_BROKER_URL`` say otherwise), registers the bots and starts a round robin per game
through the JSON API like any organiser would, shows the progress, prints the
leaderboards and the web address, then serves until interrupted.

It prints its progress and the summary only: the workers' output and every warning go
to ``demo.log`` in its folder.  That folder is a new temporary one, removed at exit,
unless ``--data-dir`` names one to keep, or the demo failed or was stopped before its
tournaments were over: then it stays, for its log, and the demo prints the log's path.
A worker process that dies (it could not start, say) ends the demo with the last lines
of the log rather than a progress bar that never moves; tournaments waiting on no live
worker (no heartbeat, ``arena.services.workers``) are told on stderr.  SIGINT, SIGTERM
and SIGHUP stop every process it started.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import IO, Any

from arena.app import create_app
from arena.cli.client import ArenaClient, RemoteError
from arena.cli.output import interval
from arena.cli.processes import make_web_server, stop_processes, worker_command
from arena.competition.ratings import PROVISIONAL_MATCHES, PROVISIONAL_WIDTH
from arena.config import from_env
from arena.db import Database
from arena.games import GAMES

# per game: (bot name suffix, policy) and the seats of its round robin
LINEUPS: dict[str, tuple[list[tuple[str, str]], int]] = {
    "cactus": ([("heuristic", "heuristic"), ("random-1", "random"), ("random-2", "random")], 2),
    "cactus-game": (
        [("heuristic", "heuristic"), ("random-1", "random"), ("random-2", "random")],
        2,
    ),
    "president": (
        [("heuristic", "heuristic"), ("random-1", "random"), ("random-2", "random")],
        3,
    ),
}
WAIT_FOR_WORKERS = 600.0  # seconds: the demo gives up on a tournament after this
LOG_TAIL = 12  # lines of the log shown when a worker died
# a tournament's warning (no worker alive) is told after this long: a worker starting on
# a loaded machine may take longer than the arena's own grace to beat for the first time
WARN_AFTER = 60.0
PROGRESS_EVERY = 60.0  # seconds between progress lines when the output is not a terminal
LOG_NAME = "demo.log"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class DemoError(RuntimeError):
    """Why the demo cannot go on, in one line; ``status`` 2 for a mistake in its
    arguments (a game, a port), 1 for a failure."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


class Stopped(Exception):
    """A stop signal arrived (SIGINT, SIGTERM, SIGHUP)."""


class _Signals:
    """Turns the stop signals into ``Stopped`` in the main thread, except while
    ``held()``: then the signal waits until the held section is over (a worker started
    but not yet in the list of processes to stop), or is only noted (the clean-up)."""

    def __init__(self) -> None:
        self.holding = False
        self.pending: int | None = None
        self.previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signals are the main thread's (the demo run from a test's thread)
        for signum in STOP_SIGNALS:
            self.previous[signum] = signal.signal(signum, self._handle)

    def restore(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.holding:
            self.pending = signum
            return
        raise Stopped(signum)

    @contextmanager
    def held(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
        if self.pending is not None:
            raise Stopped(self.pending)


def check_arguments(args: argparse.Namespace) -> list[str]:
    """The games to play; a mistake in the arguments is a DemoError before anything has
    started (the command makes it one line and exit status 2)."""
    games = [g.strip() for g in (args.games or ",".join(LINEUPS)).split(",") if g.strip()]
    for game in games:
        if game not in GAMES or game not in LINEUPS:
            raise DemoError(f"the demo has no line-up for {game!r}; games: {', '.join(LINEUPS)}")
    if not games:
        raise DemoError(f"--games names no game; games: {', '.join(LINEUPS)}")
    if args.workers < 1:
        raise DemoError(f"--workers must be at least 1, not {args.workers}")
    per_pairing = args.games_per_pairing
    if per_pairing is not None:
        if per_pairing < 1:
            raise DemoError(f"--games-per-pairing must be at least 1, not {per_pairing}")
        for game in games:
            seats = LINEUPS[game][1]
            if per_pairing % seats:
                raise DemoError(
                    f"--games-per-pairing {per_pairing}: {game} is played at {seats} seats "
                    f"here, so give a multiple of {seats} (each bot plays each seat)"
                )
    if not 0 <= args.port <= 65535:
        raise DemoError(f"--port must be a port from 0 to 65535, not {args.port}")
    bots = sum(len(LINEUPS[game][0]) for game in games)
    if args.bot_port and not 1 <= args.bot_port <= 65536 - bots:
        raise DemoError(
            f"--bot-port must be from 1 to {65536 - bots} ({bots} bots from it on), "
            f"not {args.bot_port}"
        )
    if args.data_dir and Path(args.data_dir).exists() and not Path(args.data_dir).is_dir():
        raise DemoError(f"--data-dir {args.data_dir}: not a folder")
    return games


@contextmanager
def _quiet(log: IO[str]) -> Iterator[None]:
    """Warnings and log records go to the log file, not between the progress bars."""
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    werkzeug = logging.getLogger("werkzeug")
    saved = (root.level, werkzeug.level)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    werkzeug.setLevel(logging.WARNING)  # no line per request
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)
        root.setLevel(saved[0])
        werkzeug.setLevel(saved[1])


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * done // max(total, 1)
    return "[" + "#" * filled + "." * (width - filled) + f"] {done}/{total}"


def run_demo(args: argparse.Namespace) -> int:
    games = check_arguments(args)
    keep = args.data_dir is not None
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="arena-demo-")).resolve()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DemoError(f"--data-dir {args.data_dir}: cannot be made ({exc.strerror})") from None
    log_path = data_dir / LOG_NAME
    signals = _Signals()
    signals.install()
    status = 1
    played: list[bool] = []  # set once every tournament is over
    try:
        with open(log_path, "a", encoding="utf-8") as log, _quiet(log):
            where = f"in {data_dir}" if keep else f"in {data_dir} (removed at exit)"
            print(f"arena demo: data and log {where}", flush=True)
            status = _run(args, games, data_dir, log, signals, played)
    except Stopped:  # before or after the part that stops what it started
        print("\narena demo: stopping", flush=True)
        status = 0
    finally:
        signals.restore()
        # failed, or stopped while playing (a demo that seemed stuck): its log is the
        # one account of why; a mistake in the arguments or a port has none
        if not keep and (status == 1 or (status == 0 and not played)):
            print(f"arena demo: its folder is kept for its log: {log_path}", file=sys.stderr)
        elif not keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    return status


def _run(
    args: argparse.Namespace,
    games: list[str],
    data_dir: Path,
    log: IO[str],
    signals: _Signals,
    played: list[bool],
) -> int:
    from arenabot import make_server as make_bot_server

    from sample_bots.policy_bot import PolicyBot

    env = dict(os.environ, ARENA_DATA_DIR=str(data_dir))
    bot_servers = []
    workers: list[subprocess.Popen[bytes]] = []
    web = None
    app = None
    client = None
    try:
        config = from_env(env)
        database = Database(config.database_url)
        database.upgrade()
        database.dispose()
        for game in games:
            for suffix, policy in LINEUPS[game][0]:
                port = args.bot_port + len(bot_servers) if args.bot_port else 0
                # each bot gets its secret now and is registered with it: signed at once
                secret = secrets.token_urlsafe(24)
                try:
                    server = make_bot_server(PolicyBot(game, policy), "127.0.0.1", port, secret)
                except OSError as exc:
                    raise DemoError(
                        f"--bot-port {args.bot_port}: port {port} cannot be used "
                        f"({exc.strerror or exc})",
                        status=2,
                    ) from None
                server.serve_in_background()
                bot_servers.append((f"{game}-{suffix}", game, server, secret))
        app = create_app(config)
        try:
            web = make_web_server(args.host, args.port, app)
        except OSError as exc:
            raise DemoError(
                f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}): "
                "choose another --port or --host",
                status=2,
            ) from None
        threading.Thread(target=web.serve_forever, daemon=True).start()
        base = f"http://{args.host}:{web.port}"
        for i in range(args.workers):
            with signals.held():  # a started worker is always in the list to stop
                workers.append(
                    subprocess.Popen(
                        worker_command(f"demo{i}@%h"),
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        print(f"arena demo: web server on {base}/, {len(workers)} worker process(es)")

        client = ArenaClient(base)
        ids: dict[str, list[int]] = {game: [] for game in games}
        for name, game, server, secret in bot_servers:
            bot = client.post(
                "/api/bots",
                {"name": name, "endpoint": server.url, "owner": "demo", "games": [game],
                 "signing_secret": secret, "playable": True},
            )  # fmt: skip
            ids[game].append(bot["id"])
        ports = f" (ports {args.bot_port} to {bot_servers[-1][2].port})" if args.bot_port else ""
        print(f"arena demo: {len(bot_servers)} sample bots registered{ports}", flush=True)

        tournaments = {}
        for game in games:
            seats = LINEUPS[game][1]
            per_pairing = args.games_per_pairing or 2 * seats
            tournaments[game] = client.post(
                "/api/tournaments",
                {"name": f"demo {game}", "game": game, "bot_ids": ids[game],
                 "seats_per_match": seats, "games_per_pairing": per_pairing, "seed": 1},
            )["id"]  # fmt: skip
        _follow(client, tournaments, lambda: _check_workers(workers, Path(log.name)))
        played.append(True)
        _wait_for_fits(client, games)
        provisional = False
        for game in games:
            print(f"\nLeaderboard — {game}")
            print(f"  {'bot':<26}{'Elo':>8}{'matches':>9}   fitted (95% interval)")
            for row in client.get_list(f"/api/ratings/{game}"):
                provisional = provisional or bool(row.get("provisional"))
                fit = interval(row.get("fitted"), bool(row.get("provisional")))
                print(f"  {row['name']:<26}{row['elo']:>8.1f}{row['matches']:>9}   {fit}")
        if provisional:  # as the pages say it (docs/ratings.md)
            print(
                f"\nprovisional: under {PROVISIONAL_MATCHES} rated matches or a 95% interval "
                f"over {PROVISIONAL_WIDTH:.0f} points"
            )
        if args.exit_when_done:  # the server stops too: no address to browse
            if args.data_dir is not None:
                print(f"\nThe database and the workers' log ({LOG_NAME}) stay in {data_dir}.")
            else:
                print("\nDone: its folder is removed (--data-dir keeps the database and the log).")
            return 0
        print(f"\nBrowse the rankings, tournaments and replays at {base}/")
        print(f"Take a seat against the house bots or the sample bots at {base}/play")
        print(f"The workers' log and any warnings: {data_dir / LOG_NAME}")
        print("Serving until interrupted (Ctrl-C).", flush=True)
        while True:
            _check_workers(workers, Path(log.name))
            time.sleep(0.5)
    except (KeyboardInterrupt, Stopped):
        print("\narena demo: stopping", flush=True)
        return 0
    except (DemoError, RemoteError) as exc:
        print(f"arena demo: {exc}", file=sys.stderr)
        return exc.status if isinstance(exc, DemoError) else 1
    finally:
        signals.holding = True  # a second Ctrl-C must not cut the clean-up short
        if client is not None:
            client.close()
        stop_processes(workers, timeout=10)
        if web is not None:
            web.shutdown()
            web.server_close()
        for _, _, server, _ in bot_servers:
            server.close()
        if app is not None:
            app.extensions["arena.db"].dispose()


def _wait_for_fits(client: ArenaClient, games: list[str], seconds: float = 30.0) -> None:
    """The workers refit the maximum-likelihood ratings when a tournament ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = [row for g in games for row in client.get_list(f"/api/ratings/{g}")]
        if all(row.get("fitted") for row in rows):
            return
        time.sleep(0.3)


def _check_workers(workers: list[subprocess.Popen[bytes]], log_path: Path) -> None:
    """A DemoError saying which worker process ended, with the last lines of the log
    (where its output went), when one did."""
    for number, worker in enumerate(workers):
        code = worker.poll()
        if code is not None:
            tail = _tail(log_path, LOG_TAIL)
            said = "".join(f"\n  | {line}" for line in tail)
            raise DemoError(
                f"worker process {number} (pid {worker.pid}) ended with status {code}; "
                f"the end of its log, {log_path}:{said or ' (empty)'}"
            )


def _tail(path: Path, count: int) -> list[str]:
    """The last ``count`` non-empty lines of a file (none when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-count:]


def _follow(
    client: ArenaClient, tournaments: dict[str, int], check: Callable[[], None] = lambda: None
) -> None:
    """A progress bar per game until every tournament is over: redrawn in place on a
    terminal; elsewhere (a log, a pipe) each game's last bar once it is over, and a line
    every PROGRESS_EVERY seconds while waiting.  ``check()`` raises when the demo cannot
    go on (a worker died); a tournament's warning (no worker alive: a worker process
    that runs but does not work) is told once on stderr after WARN_AFTER seconds."""
    started, noted = time.monotonic(), -PROGRESS_EVERY
    interactive = sys.stdout.isatty()
    last = ""
    shown: set[str] = set()
    warned: set[str] = set()
    while True:
        check()
        lines, running = {}, {}
        for game, tid in tournaments.items():
            t = client.get_object(f"/api/tournaments/{tid}", crosstable="false")
            for warning in t.get("warnings") or []:
                told = warning["code"] in warned
                if not told and time.monotonic() - started >= WARN_AFTER:
                    warned.add(warning["code"])
                    print(f"arena demo: {game}: {warning['message']}", file=sys.stderr)
                    last = ""  # the bars are drawn again below it, not over it
            p = t["progress"]
            done = p["finished"] + p["failed"] + p["cancelled"]
            lines[game] = f"  {game:<12} {_bar(done, p['total'])}  {t['status']}"
            if t["status"] == "running":
                running[game] = f"{game} {done}/{p['total']}"
        if interactive:
            text = "\n".join(lines.values())
            if text != last:
                if last:
                    sys.stdout.write(f"\x1b[{len(lines)}F")  # redraw the bars in place
                print(text, flush=True)
            last = text
        else:
            for game, line in lines.items():
                if game not in running and game not in shown:
                    print(line, flush=True)
                    shown.add(game)
            if running and time.monotonic() - noted >= PROGRESS_EVERY:
                print(f"  playing: {', '.join(running.values())}", flush=True)
                noted = time.monotonic()
        if not running:
            return
        if time.monotonic() - started > WAIT_FOR_WORKERS:
            raise DemoError("the tournaments did not finish in time; are the workers running?")
        time.sleep(0.3)
