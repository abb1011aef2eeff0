"""The commands that need no server: ``arena play`` (matches in process, house
policies or bots over HTTP), ``arena replay`` (re-simulate a replay file) and
``arena view`` (a replay file in the viewer)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from arena.cli.output import UsageError, at_least
from arena.games import GAMES, POLICIES, get_game, make_policy
from arena.games.base import OptionsError
from arena.match.faults import BotFault, describe_fault, fault_summary
from arena.match.http_client import PROTOCOL_VERSION, HttpClient
from arena.match.referee import PolicyClient, Referee, policy_rng


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
    at_least("--matches", args.matches, 1)
    at_least("--deadline-ms", args.deadline_ms, 1)
    at_least("--max-strikes", args.max_strikes, 1)
    at_least("--seed", args.seed, 0)
    if args.replay:
        check_writable(args.replay)
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


def check_writable(path: str) -> None:
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


def add_commands(sub: Any) -> None:
    """``play``, ``replay`` and ``view``."""
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
    play.add_argument("--matches", type=int, default=1, help="how many to play (1)")
    play.add_argument(
        "--seed", type=int, default=1, help="the first match's deal; the next ones count up (1)"
    )
    play.add_argument(
        "--max-strikes",
        type=int,
        default=3,
        help="faults after which a bot plays on default actions, ranked last (3)",
    )
    play.add_argument("--replay", metavar="FILE", help="write every match record as JSON")
    play.set_defaults(func=cmd_play)

    replay = sub.add_parser("replay", help="re-simulate a replay file and check it")
    replay.add_argument(
        "file", help="a file written by arena play --replay or arena matches replay"
    )
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
