"""The ``arena`` command."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from arena.clients import PROTOCOL_VERSION, HttpClient
from arena.config import ConfigError
from arena.games import GAMES, POLICIES, get_game, make_policy
from arena.games.base import OptionsError
from arena.referee import BotFault, PolicyClient, Referee, policy_rng
from arena.replay import describe_fault, fault_summary


def parse_options(text: str | None) -> dict[str, Any]:
    """``revolution,jokers,rounds=3,values={"K":-1}``: a bare name is true, a value after
    ``=`` is read as JSON when it parses (else kept as a string)."""
    options: dict[str, Any] = {}
    if not text:
        return options
    for item in _split_top_level(text):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not name:
            raise OptionsError(f"empty option name in {text!r}")
        if not sep:
            options[name] = True
            continue
        try:
            options[name] = json.loads(value)
        except json.JSONDecodeError:
            options[name] = value
    return options


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside {...} or [...]."""
    items, depth, current = [], 0, []
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [i for i in items if i.strip()]


def _labels(names: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    labels = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        labels.append(n if names.count(n) == 1 else f"{n}#{seen[n]}")
    return labels


def cmd_play(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    bots = [b.strip() for b in (args.bots or "").split(",") if b.strip()]
    urls = list(args.bot or [])
    if not bots and not urls:
        bots = ["heuristic", "random"]
    entries = bots + urls
    n_players = args.players or len(entries)
    if len(entries) != n_players:
        raise OptionsError(
            f"--bots and --bot name {len(entries)} bot(s) but --players is {n_players}: "
            "name one per seat"
        )
    game.check_players(n_players)
    for name in bots:
        make_policy(game.id, name, policy_rng(0, 0))  # fail early on an unknown policy
    options = parse_options(args.options)
    if args.preset:
        options["preset"] = args.preset
    game.resolve_options(options)  # fail before the first match on bad options
    http_clients = {url: _http_bot(url, args.secret, game.id) for url in urls}
    labels = _labels([http_clients[e].name if e in http_clients else e for e in entries])
    totals = {label: {"matches": 0, "wins": 0, "rank": 0.0, "score": 0.0} for label in labels}
    records = []
    referee = Referee(max_strikes=args.max_strikes, deadline_ms=args.deadline_ms)
    try:
        for m in range(args.matches):
            seed = args.seed + m
            # rotate the entries so every entry plays every seat equally often
            seating = [(m + seat) % n_players for seat in range(n_players)]
            clients = [
                http_clients[entries[e]]
                if entries[e] in http_clients
                else PolicyClient(
                    make_policy(game.id, entries[e], policy_rng(seed, seat)), labels[e]
                )
                for seat, e in enumerate(seating)
            ]
            record = referee.run(game.id, clients, seed, options, match_id=f"local-{seed}")
            records.append(record.to_json())
            ranks, scores = record.outcome["ranks"], record.outcome["scores"]
            faults = fault_summary(records[-1])
            count = sum(f["count"] for f in faults.values())
            print(
                f"match {m + 1:>4}  seed {seed:<8} "
                + "  ".join(f"{labels[e]}:{ranks[s]}" for s, e in enumerate(seating))
                + (f"  ({count} faults)" if count else "")
            )
            forfeited = record.outcome.get("forfeited", [])
            for seat, summary in sorted(faults.items()):
                kinds = ", ".join(f"{k} x{n}" for k, n in sorted(summary["kinds"].items()))
                print(
                    f"      {labels[seating[seat]]} (seat {seat}): {kinds}"
                    + ("; forfeited" if seat in forfeited else "")
                    + f"; first at step {summary['first']['step'] + 1}: "
                    + describe_fault(summary["first"])
                )
            for seat, entry in enumerate(seating):
                t = totals[labels[entry]]
                t["matches"] += 1
                t["wins"] += ranks[seat] == 1
                t["rank"] += ranks[seat]
                t["score"] += scores[seat]
    finally:
        for client in http_clients.values():
            client.close()
    print()
    title = " ".join(filter(None, [game.id, args.preset, f"{n_players} players,"]))
    print(f"{title} {args.matches} matches")
    print(f"{'bot':<16}{'matches':>8}{'wins':>7}{'win %':>8}{'mean rank':>11}{'mean score':>12}")
    for label, t in totals.items():
        n = t["matches"] or 1
        print(
            f"{label:<16}{t['matches']:>8}{t['wins']:>7}{100 * t['wins'] / n:>7.1f}%"
            f"{t['rank'] / n:>11.2f}{t['score'] / n:>12.2f}"
        )
    if args.replay:
        with open(args.replay, "w", encoding="utf-8") as f:
            json.dump({"format": "arena-replays/1", "matches": records}, f)
        print(f"\nreplay written to {args.replay}")
    return 0


def _http_bot(url: str, secret: str | None, game_id: str) -> HttpClient:
    """An HTTP bot, checked with ``GET /`` before the first match."""
    client = HttpClient(url, secret)
    try:
        info = client.info()
    except BotFault as exc:
        raise OptionsError(f"bot {url} does not answer GET /: {exc}") from None
    if str(info.get("apiversion")) != PROTOCOL_VERSION:
        raise OptionsError(f"bot {url} speaks protocol {info.get('apiversion')!r}, not 1")
    if game_id not in info.get("games", []):
        raise OptionsError(f"bot {url} does not play {game_id} (it plays {info.get('games')})")
    client.name = str(info.get("name") or url)
    return client


def cmd_replay(args: argparse.Namespace) -> int:
    from arena.replay import check, upgrade

    with open(args.file, encoding="utf-8") as f:
        data = json.load(f)
    failures = 0
    for record in data["matches"]:
        problems = check(upgrade(record))
        failures += bool(problems)
        print(f"{record['match_id']}: {'ok' if not problems else '; '.join(problems)}")
    return 1 if failures else 0


class UsageError(Exception):
    """A mistake of the user's (a file that is missing or not a replay, a match or seat
    out of range): one line on stderr and exit status 2."""


def load_records(path: str) -> list[dict[str, Any]]:
    """The match records of a replay file: ``arena play --replay``'s ``{"matches": [...]}``
    or one record (``GET /api/matches/<id>/replay``)."""
    from arena.replay import upgrade

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict) and "steps" in data and "game" in data:
        data = {"matches": [data]}
    if not isinstance(data, dict) or not isinstance(data.get("matches"), list):
        raise UsageError(
            f'{path}: not a replay file (arena play --replay writes one: an object with "matches")'
        )
    records = []
    for number, record in enumerate(data["matches"], start=1):
        try:
            records.append(upgrade(record))
        except (TypeError, ValueError, KeyError, AttributeError):
            raise UsageError(f"{path}: match {number} is not a match record") from None
    if not records:
        raise UsageError(f"{path}: holds no match")
    return records


def cmd_view(args: argparse.Namespace) -> int:
    import tempfile
    import webbrowser
    from pathlib import Path

    from arena.web.replay_file import render

    records = load_records(args.file)
    if not 1 <= args.match <= len(records):
        raise UsageError(f"--match {args.match}: {args.file} holds matches 1 to {len(records)}")
    record = records[args.match - 1]
    n_players = len(record.get("players") or [])
    if args.seat is not None and not 0 <= args.seat < n_players:
        raise UsageError(f"--seat {args.seat}: match {args.match} has seats 0 to {n_players - 1}")
    try:
        page = render(record, args.seat)
    except (KeyError, TypeError, OptionsError) as exc:
        raise UsageError(f"{args.file}: match {args.match} cannot be shown ({exc})") from None
    suffix = f"-match{args.match}" + (f"-seat{args.seat}" if args.seat is not None else "")
    if args.html is not None:
        source = Path(args.file)
        out = Path(args.html) if args.html else source.with_name(f"{source.stem}{suffix}.html")
        try:
            out.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{out}: cannot be written ({exc.strerror})") from None
        print(f"replay page written to {out}")
        return 0
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", prefix="arena-replay-", suffix=f"{suffix}.html", delete=False
    ) as f:
        f.write(page)
    url = Path(f.name).as_uri()
    # without a display, webbrowser would start a text browser that cannot run the page
    graphical = sys.platform in ("darwin", "win32") or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY")
    )
    if graphical and webbrowser.open(url):
        print(f"replay page opened: {url}")
    else:
        print(f"replay page written to {f.name}: open it in a browser")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from werkzeug.serving import run_simple

    from arena.app import create_app
    from arena.config import from_env
    from arena.db import Database

    config = from_env()
    Database(config.database_url).upgrade()
    app = create_app(config)
    print(f"arena: serving on http://{args.host}:{args.port}/ (profile {config.profile})")
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False)
    return 0


def worker_command(hostname: str, *options: str) -> list[str]:
    """The command that starts a worker process (the demo and the tests start them)."""
    return [sys.executable, "-m", "arena", "worker", f"--hostname={hostname}", *options]


def stop_processes(procs: Sequence[subprocess.Popen[bytes]], timeout: float) -> None:
    """Ask worker processes to stop (a warm shutdown finishes the match in hand), and
    kill those still running after ``timeout`` seconds."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cmd_worker(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.db import Database
    from arena.tasks import configure

    config = from_env()
    Database(config.database_url).upgrade()
    app = configure(config)
    # a worker keeps connections to many bots open at once: as many files as allowed
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.concurrency is not None and args.concurrency < 1:
        raise OptionsError("--concurrency must be at least 1")
    concurrency = args.concurrency or config.worker_concurrency
    argv = ["worker", f"--pool={args.pool}", f"--concurrency={concurrency}",
            f"--loglevel={args.loglevel}"]  # fmt: skip
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    app.worker_main(argv)
    return 0


def cmd_beat(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.tasks import configure

    config = from_env()
    app = configure(config)
    schedule = config.data_dir / "celerybeat-schedule"
    app.start(["beat", f"--loglevel={args.loglevel}", f"--schedule={schedule}"])
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.db import Database

    Database(from_env().database_url).upgrade()
    print("arena: the database schema is up to date")
    return 0


def cmd_ratings(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.db import Database
    from arena.tasks import rebuild_ratings

    database = Database(from_env().database_url)
    games = [args.game] if args.game else sorted(GAMES)
    mismatched = 0
    for game_id in games:
        report = rebuild_ratings(database, game_id, write=args.write)
        differences = report["differences"]
        mismatched += bool(differences)
        state = "equal to what is stored" if not differences else f"{len(differences)} differ"
        print(f"{game_id}: {report['matches']} rated matches replayed; Elo {state}")
        for bot_id, (stored, rebuilt) in sorted(differences.items()):
            print(f"  bot {bot_id}: stored {stored}, rebuilt {rebuilt}")
    if mismatched and args.write:
        print("arena: the rebuilt ratings were written")
        return 0
    return 1 if mismatched else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.demo import run_demo

    return run_demo(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="play matches in-process between house policies")
    play.add_argument("game", help=f"one of: {', '.join(sorted(GAMES))}")
    play.add_argument("--preset", help="an option bundle of the game (e.g. classic, pagat)")
    play.add_argument("--options", help="name[=json],... e.g. rounds=3,revolution")
    play.add_argument("--players", type=int, help="seats (default: one per --bots entry)")
    play.add_argument(
        "--bots",
        help="in-process policies, one per seat, comma-separated (default heuristic,random); "
        + "; ".join(f"{g}: {', '.join(p)}" for g, p in POLICIES.items()),
    )
    play.add_argument(
        "--bot",
        action="append",
        metavar="URL",
        help="a bot endpoint over HTTP, one more seat (repeat for several)",
    )
    play.add_argument("--secret", help="the signing secret shared with the --bot endpoints")
    play.add_argument("--deadline-ms", type=int, default=2000, help="time for one answer")
    play.add_argument("--matches", type=int, default=1)
    play.add_argument("--seed", type=int, default=1)
    play.add_argument("--max-strikes", type=int, default=3)
    play.add_argument("--replay", metavar="FILE", help="write every match record as JSON")
    play.set_defaults(func=cmd_play)

    replay = sub.add_parser("replay", help="re-simulate a replay file and check it")
    replay.add_argument("file")
    replay.set_defaults(func=cmd_replay)

    view = sub.add_parser(
        "view", help="open a replay file in the replay viewer (a page of its own, no server)"
    )
    view.add_argument("file", help="a file written by arena play --replay, or one record")
    view.add_argument(
        "--match", type=int, default=1, metavar="N", help="the N-th match of the file (1)"
    )
    view.add_argument(
        "--seat", type=int, metavar="K", help="only what seat K knew (the page holds no more)"
    )
    view.add_argument(
        "--html",
        nargs="?",
        const="",
        metavar="OUT",
        help="write the page (next to FILE, or to OUT) instead of opening a browser",
    )
    view.set_defaults(func=cmd_view)

    demo = sub.add_parser(
        "demo",
        help="start the web server, a worker and the sample bots; run a round robin per game",
    )
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument("--games", help="comma-separated game ids (default: every game)")
    demo.add_argument("--games-per-pairing", type=int, default=None)
    demo.add_argument("--workers", type=int, default=1, help="worker processes")
    demo.add_argument("--data-dir", help="keep the demo's database here (default: a new one)")
    demo.add_argument("--exit-when-done", action="store_true", help="do not serve afterwards")
    demo.set_defaults(func=cmd_demo)

    serve = sub.add_parser("serve", help="the web server (pages and JSON API)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="a Celery worker that plays matches")
    worker.add_argument(
        "--concurrency",
        type=int,
        help="matches played at once (default: $ARENA_WORKER_CONCURRENCY, else 100)",
    )
    worker.add_argument(
        "--pool",
        choices=["threads", "prefork", "solo"],
        default="threads",
        help="threads: many matches in this process (the default); prefork: one process "
        "per match, --concurrency of them; solo: one match at a time",
    )
    worker.add_argument("--loglevel", default="WARNING")
    worker.add_argument("--hostname", help="the worker's node name (default celery@host)")
    worker.set_defaults(func=cmd_worker)

    beat = sub.add_parser("beat", help="Celery beat: the rated ladder and housekeeping")
    beat.add_argument("--loglevel", default="WARNING")
    beat.set_defaults(func=cmd_beat)

    db = sub.add_parser("db", help="database schema")
    db.add_argument("action", choices=["upgrade"])
    db.set_defaults(func=cmd_db)

    ratings = sub.add_parser("ratings", help="ratings from the match history")
    ratings.add_argument("action", choices=["rebuild"])
    ratings.add_argument("--game", help="one game (default: every game)")
    ratings.add_argument(
        "--write", action="store_true", help="store the rebuilt Elo where it differs"
    )
    ratings.set_defaults(func=cmd_ratings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (OptionsError, ConfigError, UsageError) as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
