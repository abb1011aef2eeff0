"""``arena demo``: the whole product on one machine with nothing but Python.

Starts the sample bots, the web server and real Celery worker processes on the embedded
default (a SQLite file and a file-system broker, unless ``ARENA_DATABASE_URL`` and
``ARENA_BROKER_URL`` say otherwise), registers the bots and starts a round robin per game
through the JSON API like any organiser would, shows the progress, prints the
leaderboards and the web address, then serves until interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from arena.app import create_app
from arena.cli import stop_processes, worker_command
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


class DemoError(RuntimeError):
    pass


def _api(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise DemoError(f"{method} {path}: {exc.code} {exc.read().decode()[:300]}") from None


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * done // max(total, 1)
    return "[" + "#" * filled + "." * (width - filled) + f"] {done}/{total}"


def run_demo(args: argparse.Namespace) -> int:
    from arenabot import make_server as make_bot_server

    from sample_bots.policy_bot import PolicyBot

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="arena-demo-")).resolve()
    env = dict(os.environ, ARENA_DATA_DIR=str(data_dir))
    config = from_env(env)
    Database(config.database_url).upgrade()
    games = [g.strip() for g in (args.games or ",".join(LINEUPS)).split(",") if g.strip()]
    for game in games:
        if game not in GAMES or game not in LINEUPS:
            raise DemoError(f"the demo has no line-up for {game!r}; games: {', '.join(LINEUPS)}")
    print(f"arena demo: data in {data_dir}")

    bot_servers = []
    workers: list[subprocess.Popen[bytes]] = []
    web = None
    try:
        for game in games:
            for suffix, policy in LINEUPS[game][0]:
                server = make_bot_server(PolicyBot(game, policy), "127.0.0.1", 0, secret=None)
                server.serve_in_background()
                bot_servers.append((f"{game}-{suffix}", game, server))
        app = create_app(config)
        web = make_server(args.host, args.port, app, threaded=True)
        threading.Thread(target=web.serve_forever, daemon=True).start()
        base = f"http://{args.host}:{web.server_port}"
        for i in range(args.workers):
            workers.append(
                subprocess.Popen(
                    worker_command(f"demo{i}@%h"),
                    env=env,
                )
            )
        print(f"arena demo: web server on {base}/, {len(workers)} worker process(es)")

        ids: dict[str, list[int]] = {game: [] for game in games}
        for name, game, server in bot_servers:
            bot = _api(
                base, "POST", "/api/bots",
                {"name": name, "endpoint": server.url, "owner": "demo", "games": [game]},
            )  # fmt: skip
            server.secret = bot["signing_secret"]  # from now on requests must be signed
            ids[game].append(bot["id"])
        print(f"arena demo: {len(bot_servers)} sample bots registered")

        tournaments = {}
        for game in games:
            seats = LINEUPS[game][1]
            per_pairing = args.games_per_pairing or 2 * seats
            tournaments[game] = _api(
                base, "POST", "/api/tournaments",
                {"name": f"demo {game}", "game": game, "bot_ids": ids[game],
                 "seats_per_match": seats, "games_per_pairing": per_pairing, "seed": 1},
            )["id"]  # fmt: skip
        _follow(base, tournaments)
        _wait_for_fits(base, games)
        for game in games:
            print(f"\nLeaderboard — {game}")
            print(f"  {'bot':<26}{'Elo':>8}{'matches':>9}   fitted (95% interval)")
            for row in _api(base, "GET", f"/api/ratings/{game}"):
                fitted = row.get("fitted")
                interval = (
                    f"{fitted['rating']:.0f} ({fitted['low']:.0f}..{fitted['high']:.0f})"
                    if fitted
                    else "-"
                )
                print(f"  {row['name']:<26}{row['elo']:>8.1f}{row['matches']:>9}   {interval}")
        print(f"\nBrowse the rankings, tournaments and replays at {base}/")
        if args.exit_when_done:
            return 0
        print("Serving until interrupted (Ctrl-C).")
        while all(w.poll() is None for w in workers):
            time.sleep(0.5)
        print("arena demo: a worker stopped", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\narena demo: stopping")
        return 0
    except DemoError as exc:
        print(f"arena demo: {exc}", file=sys.stderr)
        return 1
    finally:
        stop_processes(workers, timeout=10)
        if web is not None:
            web.shutdown()
        for _, _, server in bot_servers:
            server.close()


def _wait_for_fits(base: str, games: list[str], seconds: float = 30.0) -> None:
    """The workers refit the maximum-likelihood ratings when a tournament ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = [row for g in games for row in _api(base, "GET", f"/api/ratings/{g}")]
        if all(row.get("fitted") for row in rows):
            return
        time.sleep(0.3)


def _follow(base: str, tournaments: dict[str, int]) -> None:
    """A progress bar per game until every tournament is over."""
    started = time.monotonic()
    interactive = sys.stdout.isatty()
    last = ""
    while True:
        lines, over = [], True
        for game, tid in tournaments.items():
            t = _api(base, "GET", f"/api/tournaments/{tid}")
            p = t["progress"]
            done = p["finished"] + p["failed"] + p["cancelled"]
            lines.append(f"  {game:<12} {_bar(done, p['total'])}  {t['status']}")
            over &= t["status"] != "running"
        text = "\n".join(lines)
        if interactive:
            if last:
                sys.stdout.write(f"\x1b[{len(lines)}F")  # redraw the bars in place
            print(text, flush=True)
        elif text != last:
            print(text, flush=True)
        last = text
        if over:
            return
        if time.monotonic() - started > WAIT_FOR_WORKERS:
            raise DemoError("the tournaments did not finish in time; are the workers running?")
        time.sleep(0.3)
