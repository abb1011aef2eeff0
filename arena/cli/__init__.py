"""The ``arena`` command."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from arena.config import Config, ConfigError
from arena.games import GAMES, POLICIES, get_game, make_policy
from arena.games.base import OptionsError
from arena.match.faults import BotFault, describe_fault, fault_summary
from arena.match.http_client import PROTOCOL_VERSION, HttpClient
from arena.match.referee import PolicyClient, Referee, policy_rng

if TYPE_CHECKING:
    from arena.cli.client import ArenaClient


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


def at_least(flag: str, value: int | None, minimum: int) -> None:
    """A numeric argument below its minimum is a usage mistake (one line, status 2)."""
    if value is not None and value < minimum:
        raise UsageError(f"{flag} must be at least {minimum}, not {value}")


def cmd_play(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    at_least("--matches", args.matches, 1)
    at_least("--deadline-ms", args.deadline_ms, 1)
    at_least("--max-strikes", args.max_strikes, 1)
    at_least("--seed", args.seed, 0)
    if args.replay:
        _check_writable(args.replay)
    bots = [b.strip() for b in (args.bots or "").split(",") if b.strip()]
    urls = list(args.bot or [])
    if not bots and not urls:
        # the house heuristic against random players, as many as the game needs
        seats = max(2, game.min_players) if args.players is None else args.players
        game.check_players(seats)
        bots = ["heuristic"] + ["random"] * (seats - 1)
    entries = bots + urls
    n_players = len(entries) if args.players is None else args.players
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
    http_clients: dict[str, HttpClient] = {}
    try:
        for url in urls:
            http_clients[url] = _http_bot(url, args.secret, game.id)
    except OptionsError:
        for client in http_clients.values():
            client.close()
        raise
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
        write_replay_file(args.replay, records)
        print(f"\nreplay written to {args.replay}")
    return 0


REPLAY_FILE_FORMAT = "arena-replays/1"


def write_replay_file(path: str, records: list[dict[str, Any]]) -> None:
    """The replay file ``arena replay`` and ``arena view`` read; ``-`` is stdout."""
    data = {"format": REPLAY_FILE_FORMAT, "matches": records}
    if path == "-":
        json.dump(data, sys.stdout)
        print()
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be written ({exc.strerror})") from None


def _check_writable(path: str) -> None:
    """Before the work that fills it: a file that could not be written at the end."""
    from pathlib import Path

    if path == "-":
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"{path}: cannot be written (it is a folder)")
    if not folder.is_dir():
        raise UsageError(f"{path}: cannot be written (no folder {folder})")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(f"{path}: cannot be written (permission denied)")


def _http_bot(url: str, secret: str | None, game_id: str) -> HttpClient:
    """An HTTP bot, checked with ``GET /`` before the first match."""
    try:
        client = HttpClient(url, secret)
    except ValueError:
        raise OptionsError(f"--bot {url!r} is not a bot's address: give http://host:port") from None
    try:
        try:
            info = client.info()
        except BotFault as exc:
            raise OptionsError(f"bot {url} does not answer GET /: {exc}") from None
        if str(info.get("apiversion")) != PROTOCOL_VERSION:
            raise OptionsError(f"bot {url} speaks protocol {info.get('apiversion')!r}, not 1")
        if game_id not in info.get("games", []):
            raise OptionsError(f"bot {url} does not play {game_id} (it plays {info.get('games')})")
    except OptionsError:
        client.close()
        raise
    client.name = str(info.get("name") or url)
    return client


def cmd_replay(args: argparse.Namespace) -> int:
    """Each match re-simulated step by step: ``match N: ok``, or ``match N differs at step
    K: ...`` and exit status 1 (the check ran and failed; 2 is for a file it cannot read)."""
    from arena.match.records import first_difference

    failures = 0
    for number, record in enumerate(load_records(args.file), start=1):
        try:
            difference = first_difference(record)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            raise UsageError(f"{args.file}: match {number} is not a match record") from None
        except OptionsError as exc:
            raise UsageError(f"{args.file}: match {number} cannot be re-simulated: {exc}") from None
        if difference is None:
            print(f"match {number}: ok")
        else:
            failures += 1
            step, what = difference
            print(f"match {number} differs at step {step}: {what}")
    return 1 if failures else 0


class UsageError(Exception):
    """A mistake of the user's (a file that is missing or not a replay, a match or seat
    out of range): one line on stderr and exit status 2."""


def load_records(path: str) -> list[dict[str, Any]]:
    """The match records of a replay file: ``arena play --replay``'s ``{"matches": [...]}``
    or one record (``GET /api/matches/<id>/replay``)."""
    from arena.match.records import upgrade

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


@contextmanager
def database_errors() -> Iterator[None]:
    """A database that cannot be used (a URL that is not one, a server that is down, a
    file without the arena's tables) is one line, not SQLAlchemy's page of traceback."""
    from sqlalchemy.exc import ArgumentError, DBAPIError

    try:
        yield
    except ArgumentError:
        raise UsageError(
            "ARENA_DATABASE_URL is not a database URL "
            "(e.g. postgresql+psycopg://arena@db/arena, or unset for SQLite in the data dir)"
        ) from None
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else repr(exc)
        raise UsageError(f"the database cannot be used: {reason}") from None


def upgraded_database(config: Config) -> None:
    """The schema brought to the newest migration (serve, worker and db upgrade)."""
    from arena.db import Database

    with database_errors():
        database = Database(config.database_url)
        try:
            database.upgrade()
        finally:
            database.dispose()


def check_port(flag: str, port: int, lowest: int = 1) -> None:
    if not lowest <= port <= 65535:
        raise UsageError(f"{flag} must be a port from {lowest} to 65535, not {port}")


def cmd_serve(args: argparse.Namespace) -> int:
    from arena.app import create_app
    from arena.cli.processes import make_web_server
    from arena.config import from_env

    check_port("--port", args.port, lowest=0)
    config = from_env()
    upgraded_database(config)
    app = create_app(config)
    try:
        server = make_web_server(args.host, args.port, app)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}): "
            "choose another --port or --host"
        ) from None
    url = f"http://{args.host}:{server.port}/"
    print(f"arena: serving on {url} (profile {config.profile})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.worker.celery_app import worker_app

    at_least("--concurrency", args.concurrency, 1)
    config = from_env()
    upgraded_database(config)
    app = worker_app(config)  # every task registered
    # a worker keeps connections to many bots open at once: as many files as allowed
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    concurrency = args.concurrency or config.worker_concurrency
    argv = ["worker", f"--pool={args.pool}", f"--concurrency={concurrency}",
            f"--loglevel={args.loglevel}"]  # fmt: skip
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    app.worker_main(argv)
    return 0


def cmd_beat(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.worker.celery_app import worker_app

    config = from_env()
    app = worker_app(config)  # every task registered
    schedule = config.data_dir / "celerybeat-schedule"
    app.start(["beat", f"--loglevel={args.loglevel}", f"--schedule={schedule}"])
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from arena.config import from_env

    upgraded_database(from_env())
    print("arena: the database schema is up to date")
    return 0


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    from arena.config import embedded_database, from_env
    from arena.db import Database
    from arena.worker.refits import rebuild_ratings

    games = [get_game(args.game).id] if args.game else sorted(GAMES)
    path = embedded_database(os.environ)
    if path is not None and not path.is_file():  # connecting would create an empty one
        raise UsageError(
            f"no database at {path}: run this where the arena keeps its data, or point "
            "ARENA_DATA_DIR (or ARENA_DATABASE_URL) at it"
        )
    with database_errors():
        database = Database(from_env().database_url)
        try:
            reports = [rebuild_ratings(database, game_id, write=args.write) for game_id in games]
        finally:
            database.dispose()
    mismatched = 0
    for game_id, report in zip(games, reports, strict=True):
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
    from arena.cli.demo import DemoError, run_demo

    try:
        return run_demo(args)
    except DemoError as exc:  # raised before anything started: a mistake in the arguments
        raise UsageError(str(exc)) from None


# -- against a running server -----------------------------------------------------------
# ``arena bots``, ``tournaments``, ``ratings show`` and ``matches`` call the JSON API of the
# arena at --server ($ARENA_SERVER) with arena.cli.client.  A refusal (4xx), a server that is
# down, slow or not an arena: one line and exit status 2; a server that failed (5xx): 1.


def _client(args: argparse.Namespace) -> ArenaClient:
    from arena.cli.client import DEFAULT_SERVER, SERVER_ENV, ArenaClient

    if args.timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    server = args.server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER
    return ArenaClient(server, timeout=args.timeout)


def _token(name: str) -> tuple[str, str | None]:
    return name, os.environ.get(name, "").strip() or None


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _ids(flag: str, text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give bot ids separated by commas, e.g. 1,2,3") from None
    if not ids:
        raise UsageError(f"{flag} names no bot id")
    return ids


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value)
    return str(value)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], indent: str = "") -> None:
    """Plain aligned columns; numbers to the right."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    numeric = [
        bool(rows)
        and all(isinstance(row[i], int | float | type(None)) for row in rows)
        and not all(isinstance(row[i], bool) for row in rows)
        for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        text = "  ".join(
            v.rjust(w) if right else v.ljust(w)
            for v, w, right in zip(values, widths, numeric, strict=True)
        )
        return (indent + text).rstrip()

    print(line(headers))
    for row in cells:
        print(line(row))


def print_fields(pairs: Sequence[tuple[str, Any]], indent: str = "  ") -> None:
    """``name  value`` lines, the values aligned."""
    width = max(len(name) for name, _ in pairs)
    for name, value in pairs:
        print(f"{indent}{name:<{width}}  {_cell(value)}".rstrip())


def _when(timestamp: str | None) -> str | None:
    """``2026-05-01T10:00:00.123456`` -> ``2026-05-01 10:00:00`` (as the API gives it)."""
    return timestamp[:19].replace("T", " ") if timestamp else None


def _interval(fitted: dict[str, Any] | None) -> str:
    if not fitted:
        return "-"
    return f"{fitted['rating']:.0f} ({fitted['low']:.0f}..{fitted['high']:.0f})"


def cmd_bots_register(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"name": args.name, "endpoint": args.endpoint, "owner": args.owner}
    if args.games:
        body["games"] = [g.strip() for g in args.games.split(",") if g.strip()]
    if args.description:
        body["description"] = args.description
    if args.signing_secret:
        body["signing_secret"] = args.signing_secret
    with _client(args) as client:
        bot = client.post("/api/bots", body)
    if args.json:
        _print_json(bot)
        return 0
    print(f"bot {bot['id']} registered: {bot['name']} at {bot['endpoint']}, "
          f"plays {', '.join(bot['games'])}")  # fmt: skip
    print(f"owner token:    {bot['owner_token']}")
    print(f"signing secret: {bot['signing_secret']}")
    print("Both are shown this once. Keep the owner token to manage the bot (as "
          "ARENA_OWNER_TOKEN);\nstart the bot with the signing secret.")  # fmt: skip
    return 0


def _reader_token() -> tuple[str, str | None]:
    """The token a read of bots sends: the organiser's (every endpoint) when set, else a
    bot's owner token (its own endpoint); the server shows endpoints to nobody else."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV

    organiser = _token(ORGANISER_TOKEN_ENV)
    return organiser if organiser[1] else _token(OWNER_TOKEN_ENV)


def cmd_bots_list(args: argparse.Namespace) -> int:
    query = {k: v for k, v in (("game", args.game), ("status", args.status)) if v}
    with _client(args) as client:
        bots = client.get_all("/api/bots", _reader_token(), **query)
    if args.json:
        _print_json(bots)
        return 0
    if not bots:
        print("no bot" + (" matches" if query else " is registered"))
        return 0
    header = ["id", "name", "owner", "status", "games"]
    rows = [[b["id"], b["name"], b["owner"], b["status"], b["games"]] for b in bots]
    if any("endpoint" in b for b in bots):  # only those the token may see: "-" for others
        header.append("endpoint")
        for row, bot in zip(rows, bots, strict=True):
            row.append(bot.get("endpoint", "-"))
    print_table(header, rows)
    return 0


def cmd_bots_show(args: argparse.Namespace) -> int:
    with _client(args) as client:
        bot = client.get_object(f"/api/bots/{args.id}", _reader_token())
    if args.json:
        _print_json(bot)
        return 0
    info = bot.get("info") or {}
    declared = " ".join(str(info[key]) for key in ("name", "version") if info.get(key))
    if info.get("author"):
        declared += f" by {info['author']}"
    status = bot["status"] + (f" ({bot['paused_reason']})" if bot.get("paused_reason") else "")
    print(f"bot {bot['id']}: {bot['name']}")
    print_fields(
        [
            ("status", status),
            ("owner", bot["owner"]),
            *([("endpoint", bot["endpoint"])] if "endpoint" in bot else []),
            ("games", bot["games"]),
            ("declares", declared or None),
            ("description", bot.get("description") or None),
            ("registered", _when(bot.get("created_at"))),
        ]
    )
    if bot.get("ratings"):
        print("Elo")
        print_table(
            ["game", "Elo", "matches"],
            [[r["game"], r["elo"], r["matches"]] for r in bot["ratings"]],
            indent="  ",
        )
    if bot.get("recent_faults"):
        print("Recent matches with faults")
        print_table(
            ["match", "game", "faults", "kinds", "forfeited"],
            [
                [
                    f["match_id"],
                    f["game"],
                    f["count"],
                    ", ".join(f"{k} x{n}" for k, n in sorted(f["kinds"].items())),
                    f["forfeited"],
                ]
                for f in bot["recent_faults"]
            ],
            indent="  ",
        )
    return 0


def cmd_bots_rotate(args: argparse.Namespace) -> int:
    from arena.cli.client import OWNER_TOKEN_ENV

    body: dict[str, Any] = {}
    if args.only:
        body["rotate"] = [args.only]
    if args.signing_secret:
        body["signing_secret"] = args.signing_secret
    with _client(args) as client:
        answer = client.post(f"/api/bots/{args.id}/rotate", body, token=_token(OWNER_TOKEN_ENV))
    if args.json:
        _print_json(answer)
        return 0
    print(f"bot {answer['id']} ({answer['name']}): new {' and '.join(answer['rotated'])}")
    for name in ("owner_token", "signing_secret"):
        if name in answer:
            print(f"{name.replace('_', ' ') + ':':<15} {answer[name]}")
    print("Shown this once; the old values no longer work.")
    return 0


def cmd_tournaments_start(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV

    at_least("--seats", args.seats, 2)
    at_least("--games-per-pairing", args.games_per_pairing, 1)
    at_least("--matches-per-bot", args.matches_per_bot, 1)
    at_least("--seed", args.seed, 0)
    seats = args.seats
    if seats is None:  # the smallest table of the game, where this command knows it
        seats = max(2, GAMES[args.game].min_players) if args.game in GAMES else 2
    body: dict[str, Any] = {
        "name": args.name or f"{args.game} {args.format.replace('_', ' ')}",
        "game": args.game,
        "format": args.format,
        "bot_ids": _ids("--bots", args.bots),
        "seats_per_match": seats,
    }
    if args.format == "round_robin":
        body["games_per_pairing"] = args.games_per_pairing or seats
    elif args.games_per_pairing is not None:
        body["games_per_pairing"] = args.games_per_pairing  # the server says why not
    optional = {
        "matches_per_bot": args.matches_per_bot,
        "challenger_ids": args.challengers and _ids("--challengers", args.challengers),
        "sprt": parse_options(args.sprt) if args.sprt else None,
        "preset": args.preset,
        "options": parse_options(args.options) if args.options else None,
        "deal": args.deal,
        "seed": args.seed,
        "live_view": args.live_view,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    with _client(args) as client:
        tournament = client.post("/api/tournaments", body, token=_token(ORGANISER_TOKEN_ENV))
    if args.json:
        _print_json(tournament)
        return 0
    _print_tournament(tournament)
    return 0


def cmd_tournaments_show(args: argparse.Namespace) -> int:
    with _client(args) as client:
        # the crosstable grows with the square of the bots: only in --json
        tournament = client.get_object(
            f"/api/tournaments/{args.id}", **({} if args.json else {"crosstable": "false"})
        )
    if args.json:
        _print_json(tournament)
        return 0
    _print_tournament(tournament)
    return 0


def cmd_tournaments_cancel(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV

    with _client(args) as client:
        tournament = client.post(
            f"/api/tournaments/{args.id}/cancel", token=_token(ORGANISER_TOKEN_ENV)
        )
    if args.json:
        _print_json(tournament)
        return 0
    _print_tournament(tournament)
    return 0


def _print_tournament(t: dict[str, Any]) -> None:
    what = ", ".join(
        [t["game"], t["format"].replace("_", " "), f"{t['seats_per_match']} seats"]
        + (["duplicate deals"] if t.get("deal") == "duplicate" else [])
    )
    print(f"tournament {t['id']}: {t['name']} ({what}), {t['status']}")
    p = t["progress"]
    done = p["finished"] + p["failed"] + p["cancelled"]
    counts = ", ".join(
        f"{p[k]} {k}" for k in ("finished", "running", "queued", "failed", "cancelled") if p[k]
    )
    print(f"  matches: {done}/{p['total']} over" + (f" ({counts})" if counts else ""))
    standings = t.get("standings") or []
    if standings:
        duplicate = t.get("deal") == "duplicate"
        headers = ["#", "bot", "id", "matches", "points", "per match", "wins", "mean rank"]
        headers += ["faults", "struck out", "forfeits"]
        rows = [
            [i, s["name"], s["bot_id"], s["matches"], s["points"], s.get("points_per_match"),
             s["wins"], s.get("mean_rank"), s.get("faults"), s.get("struck_out"),
             s.get("forfeits")]
            + ([s.get("par_per_deal")] if duplicate else [])
            for i, s in enumerate(standings, start=1)
        ]  # fmt: skip
        print_table(headers + (["par per deal"] if duplicate else []), rows, indent="  ")
    sprt = t.get("sprt_status")
    if sprt:
        for c in sprt.get("challengers", []):
            decision = {"H1": "passed", "H0": "failed"}.get(c.get("decision"), "open")
            print(f"  challenger {c['name']}: {decision} after {c['observations']} "
                  f"(LLR {c['llr']:.2f} in {sprt['lower']:.2f}..{sprt['upper']:.2f})")  # fmt: skip


def cmd_ratings_show(args: argparse.Namespace) -> int:
    with _client(args) as client:
        rows = client.get_list(f"/api/ratings/{args.game}")
    if args.json:
        _print_json(rows)
        return 0
    if not rows:
        print(f"{args.game}: no rated bot yet")
        return 0
    print(f"Leaderboard — {args.game}")
    print_table(
        ["#", "bot", "id", "Elo", "matches", "fitted (95% interval)"],
        [
            [
                i,
                r["name"],
                r["bot_id"],
                round(r["elo"], 1),
                r["matches"],
                _interval(r.get("fitted")),
            ]
            for i, r in enumerate(rows, start=1)
        ],
        indent="  ",
    )
    return 0


def cmd_matches_list(args: argparse.Namespace) -> int:
    at_least("--limit", args.limit, 1)
    query = {
        name: value
        for name, value in (
            ("tournament_id", args.tournament),
            ("bot_id", args.bot),
            ("game", args.game),
            ("status", args.status),
        )
        if value is not None
    }
    with _client(args) as client:
        matches = client.get_list("/api/matches", **query, page_size=min(args.limit, 100))
    if args.json:
        _print_json(matches)
        return 0
    if not matches:
        print("no match" + (" matches" if query else " yet"))
        return 0
    print_table(
        ["id", "game", "status", "tournament", "seats", "ranks", "finished"],
        [
            [
                m["id"],
                m["game"],
                m["status"],
                m.get("tournament_id"),
                " ".join(s["bot_name"] for s in m.get("seats", [])),
                " ".join(_cell(s.get("rank")) for s in m.get("seats", [])),
                _when(m.get("finished_at")),
            ]
            for m in matches
        ],
    )
    return 0


def cmd_matches_show(args: argparse.Namespace) -> int:
    from arena.match.faults import seat_fault_reason

    with _client(args) as client:
        match = client.get_object(f"/api/matches/{args.id}")
    if args.json:
        _print_json(match)
        return 0
    where = f"tournament {match['tournament_id']}" if match.get("tournament_id") else match["kind"]
    facts = [match["game"], match["status"], where, "rated" if match.get("rated") else "unrated"]
    if match.get("seed") is not None:
        facts.append(f"seed {match['seed']}")
    print(f"match {match['id']}: " + ", ".join(facts))
    print_table(
        ["seat", "bot", "id", "rank", "score", "strikes", "faults"],
        [
            [s["seat"], s["bot_name"], s["bot_id"], s.get("rank"), s.get("score"),
             s["strikes"], seat_fault_reason(s.get("faults"))]
            for s in match.get("seats", [])
        ],
        indent="  ",
    )  # fmt: skip
    if match.get("error"):
        print(f"  error: {match['error']}")
    return 0


def cmd_matches_replay(args: argparse.Namespace) -> int:
    out = args.output or f"match-{args.id}.json"
    _check_writable(out)
    with _client(args) as client:
        record = client.get_object(f"/api/matches/{args.id}/replay")
    write_replay_file(out, [record])
    if out != "-":
        print(f"match {args.id}'s replay written to {out} (arena replay and arena view read it)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="play matches in-process between house policies")
    play.add_argument("game", help=f"one of: {', '.join(sorted(GAMES))}")
    presets = "; ".join(
        f"{game_id}: {', '.join(GAMES[game_id].presets)}"
        for game_id in sorted(GAMES)
        if GAMES[game_id].presets
    )
    play.add_argument("--preset", help=f"an option bundle of the game ({presets})")
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
    demo.add_argument(
        "--bot-port",
        type=int,
        default=0,
        metavar="N",
        help="the sample bots listen on N, N+1, ... (default: free ports)",
    )
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

    ratings = sub.add_parser(
        "ratings", help="ratings: rebuild them from the match history, or show a leaderboard"
    )
    ratings_sub = ratings.add_subparsers(dest="action", required=True)
    rebuild = ratings_sub.add_parser(
        "rebuild", help="replay the rated history and compare with the stored Elo (local data)"
    )
    rebuild.add_argument("--game", help="one game (default: every game)")
    rebuild.add_argument(
        "--write", action="store_true", help="store the rebuilt Elo where it differs"
    )
    rebuild.set_defaults(func=cmd_ratings_rebuild)
    show = ratings_sub.add_parser(
        "show", parents=[_remote_options()], help="a game's leaderboard on a running server"
    )
    show.add_argument("game")
    show.set_defaults(func=cmd_ratings_show)

    _add_remote_commands(sub)
    return parser


def _remote_options(json_flag: bool = True) -> argparse.ArgumentParser:
    from arena.cli.client import DEFAULT_SERVER, READ_TIMEOUT, SERVER_ENV

    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--server", metavar="URL", help=f"the arena (default: ${SERVER_ENV}, else {DEFAULT_SERVER})"
    )
    options.add_argument(
        "--timeout",
        type=float,
        default=READ_TIMEOUT,
        metavar="SECONDS",
        help=f"for one answer ({READ_TIMEOUT:g})",
    )
    if json_flag:
        options.add_argument("--json", action="store_true", help="print the API's JSON")
    return options


def _add_remote_commands(sub: Any) -> None:
    """``arena bots``, ``tournaments`` and ``matches``: the JSON API of a running arena."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV

    remote = _remote_options()

    bots = sub.add_parser("bots", help="register, list and show bots on a running server")
    bots_sub = bots.add_subparsers(dest="action", required=True)
    register = bots_sub.add_parser(
        "register",
        parents=[remote],
        help="register a bot endpoint (the arena calls its GET / first)",
        description="Prints the owner token and the signing secret: they are shown once.",
    )
    register.add_argument("name")
    register.add_argument("endpoint", metavar="URL", help="the bot's address, http://host:port")
    register.add_argument("--owner", required=True, help="who runs it (a name or an e-mail)")
    register.add_argument("--games", help="comma-separated (default: every game it declares)")
    register.add_argument("--description")
    register.add_argument(
        "--signing-secret", help="choose the secret (16 to 128 printable ASCII, no spaces)"
    )
    register.set_defaults(func=cmd_bots_register)
    listing = bots_sub.add_parser("list", parents=[remote], help="every bot not deleted")
    listing.add_argument("--game")
    listing.add_argument("--status", help="active, disabled, paused or deleted")
    listing.set_defaults(func=cmd_bots_list)
    show = bots_sub.add_parser(
        "show", parents=[remote], help="one bot: its Elo per game and its recent faults"
    )
    show.add_argument("id", type=int)
    show.set_defaults(func=cmd_bots_show)
    rotate = bots_sub.add_parser(
        "rotate",
        parents=[remote],
        help=f"new owner token and/or signing secret (its owner: ${OWNER_TOKEN_ENV})",
    )
    rotate.add_argument("id", type=int)
    rotate.add_argument("--only", choices=["owner_token", "signing_secret"], help="default: both")
    rotate.add_argument("--signing-secret", help="choose the new secret")
    rotate.set_defaults(func=cmd_bots_rotate)

    tournaments = sub.add_parser(
        "tournaments", help="start, show and cancel tournaments on a running server"
    )
    t_sub = tournaments.add_subparsers(dest="action", required=True)
    start = t_sub.add_parser(
        "start",
        parents=[remote],
        help=f"start a tournament (the organiser token: ${ORGANISER_TOKEN_ENV})",
        description="The fields of POST /api/tournaments; see its OpenAPI description.",
    )
    start.add_argument("game")
    start.add_argument("--bots", required=True, metavar="IDS", help="bot ids, e.g. 1,2,3,4")
    start.add_argument(
        "--seats", type=int, help="seats per match (default: the game's smallest table)"
    )
    start.add_argument("--name", help="default: the game and the format")
    start.add_argument(
        "--format", default="round_robin", help="round_robin (default), balanced or gauntlet"
    )
    start.add_argument(
        "--games-per-pairing", type=int, help="round_robin: a multiple of --seats (default: it)"
    )
    start.add_argument("--matches-per-bot", type=int, help="balanced and gauntlet")
    start.add_argument("--challengers", metavar="IDS", help="gauntlet: the bots tried")
    start.add_argument("--sprt", metavar="K=V,...", help="gauntlet's stop rule, e.g. elo1=20")
    start.add_argument("--preset")
    start.add_argument("--options", help="name[=json],... overriding the preset")
    start.add_argument("--deal", help="independent (default) or duplicate")
    start.add_argument("--seed", type=int)
    start.add_argument("--live-view", help="public (default) or everyone")
    start.set_defaults(func=cmd_tournaments_start)
    t_show = t_sub.add_parser(
        "show", parents=[remote], help="progress and standings (--json: the crosstable too)"
    )
    t_show.add_argument("id", type=int)
    t_show.set_defaults(func=cmd_tournaments_show)
    cancel = t_sub.add_parser(
        "cancel", parents=[remote], help=f"cancel its queued matches (${ORGANISER_TOKEN_ENV})"
    )
    cancel.add_argument("id", type=int)
    cancel.set_defaults(func=cmd_tournaments_cancel)

    matches = sub.add_parser("matches", help="list and show matches, download replays")
    m_sub = matches.add_subparsers(dest="action", required=True)
    m_list = m_sub.add_parser("list", parents=[remote], help="matches, newest first")
    m_list.add_argument("--tournament", type=int, metavar="ID")
    m_list.add_argument("--bot", type=int, metavar="ID", help="a bot in any seat")
    m_list.add_argument("--game")
    m_list.add_argument("--status", help="queued, running, finished, failed or cancelled")
    m_list.add_argument("--limit", type=int, default=20, help="the newest N (20; at most 100)")
    m_list.set_defaults(func=cmd_matches_list)
    m_show = m_sub.add_parser("show", parents=[remote], help="seats, ranks, scores and faults")
    m_show.add_argument("id", type=int)
    m_show.set_defaults(func=cmd_matches_show)
    m_replay = m_sub.add_parser(
        "replay",
        parents=[_remote_options(json_flag=False)],
        help="download a finished match's record as a replay file",
    )
    m_replay.add_argument("id", type=int)
    m_replay.add_argument(
        "-o", "--output", metavar="FILE", help="default: match-ID.json; - for stdout"
    )
    m_replay.set_defaults(func=cmd_matches_replay)


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 done; 1 a check failed (arena replay, ratings rebuild) or the server
    failed (a 5xx); 2 a mistake: an argument, a file, a refused call, a server not
    reached.  Either way one line on stderr, never a traceback."""
    from arena.cli.client import RemoteError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (OptionsError, ConfigError, UsageError) as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2
    except RemoteError as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 1 if exc.server_side else 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
