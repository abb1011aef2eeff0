"""The commands against a running arena, through its JSON API (``arena.cli.client``):
``arena bots``, ``matches`` and ``ratings show``.  Each prints a summary, or with
``--json`` the API's answer as it is.  What every remote command shares (``open_client``,
``remote_options``, ``credential``, the tokens) is here too: ``arena.cli.tournaments``,
``accounts``, ``events`` and ``ladders`` use it.

The arena is the one at --server ($ARENA_SERVER).  A refusal (4xx), a server that is
down, slow or not an arena: one line and exit status 2; a server that failed (5xx): 1.
A command sends one token, the first set of the variables it takes in the order of
``arena.cli.client.TOKEN_PRECEDENCE``: ARENA_TOKEN (an account's), ARENA_ORGANISER_TOKEN
(the server's), ARENA_OWNER_TOKEN (one bot's).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from arena.cli.local import check_writable, write_replay_file
from arena.cli.output import (
    UsageError,
    at_least,
    cell,
    interval,
    print_fields,
    print_table,
    printed_as_json,
    when,
)

if TYPE_CHECKING:
    from arena.cli.client import ArenaClient


def open_client(args: argparse.Namespace) -> ArenaClient:
    from arena.cli.client import DEFAULT_SERVER, SERVER_ENV, ArenaClient

    if args.timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    server = args.server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER
    return ArenaClient(server, timeout=args.timeout)


def credential(main: str, *others: str) -> tuple[str, str | None]:
    """The token a command sends, as ``(variable, value)``: the first set of ``main`` and
    ``others`` in the order of TOKEN_PRECEDENCE; none set: ``main`` (a refusal tells to
    set it) and no token."""
    from arena.cli.client import TOKEN_PRECEDENCE

    taken = {main, *others}
    for name in TOKEN_PRECEDENCE:
        value = os.environ.get(name, "").strip() if name in taken else ""
        if value:
            return name, value
    return main, None


def _ids(flag: str, text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give bot ids separated by commas, e.g. 1,2,3") from None
    if not ids:
        raise UsageError(f"{flag} names no bot id")
    return ids


def cmd_bots_register(args: argparse.Namespace) -> int:
    if args.connect + args.hosted + (args.endpoint is not None) != 1:
        raise UsageError(
            "give the bot's URL, or --connect for a bot that connects out, or --hosted for "
            "code the arena runs (one of the three)"
        )
    if args.connect and not args.games:
        raise UsageError("a bot that connects out is registered with --games (it is not called)")
    if args.hosted and not args.games:
        raise UsageError("a hosted bot is registered with --games (its code is uploaded after)")
    body: dict[str, Any] = {"name": args.name}
    if args.owner:
        body["owner"] = args.owner
    if args.event is not None and args.open_arena:
        raise UsageError("give --event ID or --open-arena, not both")
    if args.event is not None:
        body["event_id"] = args.event
    elif args.open_arena:
        body["event_id"] = None  # without either, an account in one event registers into it
    if args.connect:
        body["connect"] = True
    elif args.hosted:
        body["hosted"] = True
    else:
        body["endpoint"] = args.endpoint
    if args.games:
        body["games"] = [g.strip() for g in args.games.split(",") if g.strip()]
    if args.description:
        body["description"] = args.description
    if args.signing_secret:
        body["signing_secret"] = args.signing_secret
    if args.playable:
        body["playable"] = True
    with open_client(args) as client:
        bot = client.post("/api/bots", body, _member_token())  # an account's bot is its own
        server = client.base
    if printed_as_json(args, bot):
        return 0
    where = (
        "connects out to the arena"
        if args.connect
        else f"hosted: upload its code with arena bots upload {bot['id']} bot.py"
        if args.hosted
        else f"at {bot['endpoint']}"
    )
    print(f"bot {bot['id']} registered: {bot['name']} {where}, "
          f"plays {', '.join(bot['games'])}")  # fmt: skip
    print(f"owner token:    {bot['owner_token']}")
    print(f"signing secret: {bot['signing_secret']}")
    print("Both are shown this once. Keep the owner token to manage the bot (as "
          "ARENA_OWNER_TOKEN).")  # fmt: skip
    if not args.hosted:  # a hosted bot's code is run by the arena, which has its secret
        _print_start(bot, server, restart=not args.connect and not args.signing_secret)
    return 0


def _print_start(bot: dict[str, Any], server: str, *, restart: bool) -> None:
    """How to start the bot with its secret, the SDK's way: in the environment variable
    the SDK reads (sdk/README.md), not on the command line, which other users of the
    machine see (``ps``) and the shell keeps in its history."""
    import shlex
    from urllib.parse import urlsplit

    from arena.cli.client import BOT_SECRET_ENV

    if bot.get("connect"):
        command = f"python bot.py --connect {shlex.quote(server)} --bot-id {bot['id']}"
        print("Start it from anywhere, the secret in its environment (not on its command line):")
    else:
        port = urlsplit(bot.get("endpoint") or "").port
        command = "python bot.py --host 0.0.0.0" + (f" --port {port}" if port else "")
        print(
            ("Restart it" if restart else "Start it")
            + " with the secret in its environment, not on its command line"
            + (" (until then it accepts requests from anybody):" if restart else ":")
        )
    print(f"  export {BOT_SECRET_ENV}={shlex.quote(bot['signing_secret'])}")
    print(f"  {command}")


def _reader_token() -> tuple[str, str | None]:
    """The token a read of bots sends, any of the three: an account's (its bots'
    endpoints, and the private events it is in), the organiser's (every endpoint), a
    bot's owner token (its own endpoint); the server shows endpoints to nobody else."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV, TOKEN_ENV

    return credential(TOKEN_ENV, ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV)


def _member_token() -> tuple[str, str | None]:
    """The token a read of tournaments, events and ladders sends: a private event's
    are shown to its members (an account) and the admin only."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    return credential(TOKEN_ENV, ORGANISER_TOKEN_ENV)


def _owner_token() -> tuple[str, str | None]:
    """A bot's own changes: its owner token, its account's or an organiser's."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV, TOKEN_ENV

    return credential(OWNER_TOKEN_ENV, TOKEN_ENV, ORGANISER_TOKEN_ENV)


def _organiser_token() -> tuple[str, str | None]:
    """What the open arena's organiser does (the server's token, or an admin's account)
    and an event's organisers (their accounts)."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    return credential(ORGANISER_TOKEN_ENV, TOKEN_ENV)


def cmd_bots_list(args: argparse.Namespace) -> int:
    query = {k: v for k, v in (("game", args.game), ("status", args.status)) if v}
    with open_client(args) as client:
        bots = client.get_all("/api/bots", _reader_token(), **query)
    if printed_as_json(args, bots):
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


def _connection(presence: dict[str, Any]) -> str:
    """What ``arena bots show`` says of a bot that connects out."""
    if not presence.get("connected"):
        seen = presence.get("last_seen")
        return "connects out; not connected" + (f" (last heard from {when(seen)})" if seen else "")
    text = f"connects out; connected since {when(presence.get('since'))}"
    if presence.get("draining"):
        text += ", stopping (finishing its matches)"
    if presence.get("sdk"):
        text += f"; {presence['sdk']}"
    if presence.get("capacity"):
        text += f"; takes {presence['capacity']} at once"
    return text


def cmd_bots_show(args: argparse.Namespace) -> int:
    with open_client(args) as client:
        bot = client.get_object(f"/api/bots/{args.id}", _reader_token())
    if printed_as_json(args, bot):
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
            *([("endpoint", bot["endpoint"])] if bot.get("endpoint") else []),
            *(
                [("connection", _connection(bot.get("connection") or {}))]
                if bot.get("connect")
                else []
            ),
            *(
                [
                    (
                        "hosted",
                        f"version {bot['code_version']} plays"
                        if bot.get("code_version")
                        else "no version of its code has passed its validation yet",
                    )
                ]
                if bot.get("hosted")
                else []
            ),
            ("games", bot["games"]),
            ("declares", declared or None),
            ("description", bot.get("description") or None),
            ("registered", when(bot.get("created_at"))),
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


def _upload_body(path: str) -> tuple[bytes, str]:
    """The body of an upload: a ``.py`` file, a ``.zip``, or a folder with ``bot.py``
    (zipped here, with every file below it but caches and hidden ones)."""
    import io
    import zipfile
    from pathlib import Path

    where = Path(path)
    if where.is_dir():
        if not (where / "bot.py").is_file():
            raise UsageError(f"{path} has no bot.py: upload the folder that has it")
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(where.rglob("*")):
                relative = file.relative_to(where)
                if (
                    file.is_file()
                    and not file.is_symlink()
                    and not any(
                        part.startswith(".") or part == "__pycache__" for part in relative.parts
                    )
                ):
                    archive.write(file, relative.as_posix())
        return out.getvalue(), "application/zip"
    if not where.is_file():
        raise UsageError(f"no such file or folder: {path}")
    kinds = {".py": "text/x-python", ".zip": "application/zip"}
    if where.suffix.lower() not in kinds:
        raise UsageError(f"upload a .py file, a .zip with bot.py at its root, or a folder: {path}")
    try:
        return where.read_bytes(), kinds[where.suffix.lower()]
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def cmd_bots_upload(args: argparse.Namespace) -> int:
    data, kind = _upload_body(args.file)
    with open_client(args) as client:
        version = client.put_raw(f"/api/bots/{args.id}/code", data, kind, token=_owner_token())
    if printed_as_json(args, version):
        return 0
    print(
        f"bot {args.id}: version {version['version']} ({version['size']} bytes) {version['status']}"
    )
    if version["status"] == "validating":
        print(
            f"It plays validation match {version['match_id']} against the house bot first; "
            f"arena matches show {version['match_id']} tells how it went."
        )
    elif version.get("reason"):
        print(f"It failed before: {version['reason']}")
    return 0


def cmd_bots_rotate(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {}
    if args.only:
        body["rotate"] = [args.only]
    if args.signing_secret:
        body["signing_secret"] = args.signing_secret
    with open_client(args) as client:
        answer = client.post(f"/api/bots/{args.id}/rotate", body, token=_owner_token())
    if printed_as_json(args, answer):
        return 0
    print(f"bot {answer['id']} ({answer['name']}): new {' and '.join(answer['rotated'])}")
    for name in ("owner_token", "signing_secret"):
        if name in answer:
            print(f"{name.replace('_', ' ') + ':':<15} {answer[name]}")
    print("Shown this once; the old values no longer work.")
    return 0


def _change_bot(
    args: argparse.Namespace, body: dict[str, Any], token: tuple[str, str | None]
) -> int:
    with open_client(args) as client:
        bot = client.patch(f"/api/bots/{args.id}", body, token=token)
    if printed_as_json(args, bot):
        return 0
    status = bot["status"] + (f" ({bot['paused_reason']})" if bot.get("paused_reason") else "")
    print(f"bot {bot['id']} ({bot['name']}): {status}")
    return 0


def cmd_bots_pause(args: argparse.Namespace) -> int:
    """An organiser's pause: its owner cannot end it (the server says so)."""
    return _change_bot(args, {"status": "paused"}, _member_token())


def cmd_bots_activate(args: argparse.Namespace) -> int:
    return _change_bot(args, {"status": "active"}, _owner_token())


def cmd_bots_rename(args: argparse.Namespace) -> int:
    return _change_bot(args, {"name": args.name}, _owner_token())


def cmd_bots_delete(args: argparse.Namespace) -> int:
    token = _owner_token()
    with open_client(args) as client:
        bot = client.get_object(f"/api/bots/{args.id}", token)
        if not args.yes:
            # a mistyped id would delete another bot: the organiser sees which one first
            if not sys.stdin.isatty():
                raise UsageError(f"give --yes to delete bot {bot['id']} ({bot['name']})")
            answer = input(f"delete bot {bot['id']} ({bot['name']}, owner {bot['owner']})? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("not deleted")
                return 0
        client.delete(f"/api/bots/{args.id}", token=token)
    print(f"bot {bot['id']} ({bot['name']}) deleted: it plays no more; its matches stay")
    return 0


def cmd_ratings_show(args: argparse.Namespace) -> int:
    with open_client(args) as client:
        rows = client.get_list(f"/api/ratings/{args.game}")
    if printed_as_json(args, rows):
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
                interval(r.get("fitted"), r.get("provisional", False)),
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
    with open_client(args) as client:
        matches = client.get_list("/api/matches", **query, page_size=min(args.limit, 100))
    if printed_as_json(args, matches):
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
                " ".join(cell(s.get("rank")) for s in m.get("seats", [])),
                when(m.get("finished_at")),
            ]
            for m in matches
        ],
    )
    return 0


def cmd_matches_show(args: argparse.Namespace) -> int:
    from arena.match.faults import seat_fault_reason

    with open_client(args) as client:
        match = client.get_object(f"/api/matches/{args.id}")
    if printed_as_json(args, match):
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
    check_writable(out)
    with open_client(args) as client:
        record = client.get_object(f"/api/matches/{args.id}/replay")
    write_replay_file(out, [record])
    if out != "-":
        print(f"match {args.id}'s replay written to {out} (arena replay and arena view read it)")
    return 0


def remote_options(
    json_flag: bool = True, suppress_defaults: bool = False
) -> argparse.ArgumentParser:
    """--server, --timeout and --json, for a parser's ``parents``.  ``suppress_defaults``:
    for a subcommand of a command that has them too (``arena ladders set``), so that
    the ones given before the subcommand are kept."""
    from arena.cli.client import DEFAULT_SERVER, READ_TIMEOUT, SERVER_ENV

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress_defaults else value

    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--server",
        metavar="URL",
        default=default(None),
        help=f"the arena (default: ${SERVER_ENV}, else {DEFAULT_SERVER})",
    )
    options.add_argument(
        "--timeout",
        type=float,
        default=default(READ_TIMEOUT),
        metavar="SECONDS",
        help=f"for one answer ({READ_TIMEOUT:g})",
    )
    if json_flag:
        options.add_argument(
            "--json", action="store_true", default=default(False), help="print the API's JSON"
        )
    return options


def add_commands(sub: Any) -> None:
    """``arena bots`` and ``matches``: the JSON API of a running arena."""
    from arena.cli.client import OWNER_TOKEN_ENV

    remote = remote_options()

    bots = sub.add_parser(
        "bots", help="register, list, show, pause, rename and delete bots on a running server"
    )
    bots_sub = bots.add_subparsers(dest="action", required=True)
    register = bots_sub.add_parser(
        "register",
        parents=[remote],
        help="register a bot: its endpoint (the arena calls its GET / first), or --connect",
        description="Prints the owner token and the signing secret: they are shown once.",
    )
    register.add_argument("name", help="the bot's name, unique in the arena")
    register.add_argument(
        "endpoint", metavar="URL", nargs="?", help="the bot's address, http://host:port"
    )
    register.add_argument(
        "--connect",
        action="store_true",
        help="the bot connects out to the arena (a laptop: no address; give --games)",
    )
    register.add_argument(
        "--hosted",
        action="store_true",
        help="the arena runs the bot's code (give --games, then arena bots upload ID FILE)",
    )
    register.add_argument(
        "--owner", help="who runs it, a name or an e-mail (default: the account's name)"
    )
    register.add_argument(
        "--event",
        type=int,
        metavar="ID",
        help="enter it in an event (default: your account's event, when it is in exactly one)",
    )
    register.add_argument(
        "--open-arena",
        action="store_true",
        help="register it in the open arena, outside your account's event",
    )
    register.add_argument("--games", help="comma-separated (default: every game it declares)")
    register.add_argument("--description", help="a few words on the bot's pages")
    register.add_argument(
        "--signing-secret", help="choose the secret (16 to 128 printable ASCII, no spaces)"
    )
    register.add_argument(
        "--playable", action="store_true", help="people may pick it as an opponent at /play"
    )
    register.set_defaults(func=cmd_bots_register)
    listing = bots_sub.add_parser("list", parents=[remote], help="every bot not deleted")
    listing.add_argument("--game", help="only the bots that play this game")
    listing.add_argument("--status", help="active, disabled, paused or deleted")
    listing.set_defaults(func=cmd_bots_list)
    show = bots_sub.add_parser(
        "show", parents=[remote], help="one bot: its Elo per game and its recent faults"
    )
    show.add_argument("id", type=int, help="the bot's id")
    show.set_defaults(func=cmd_bots_show)
    upload = bots_sub.add_parser(
        "upload",
        parents=[remote],
        help=f"a new version of a hosted bot's code (its owner: ${OWNER_TOKEN_ENV})",
        description="FILE is bot.py, a .zip with bot.py at its root, or a folder with bot.py "
        "(zipped for you). The version plays a validation match before it plays for real.",
    )
    upload.add_argument("id", type=int, help="the bot's id")
    upload.add_argument("file", metavar="FILE", help="bot.py, a .zip or a folder (above)")
    upload.set_defaults(func=cmd_bots_upload)
    rotate = bots_sub.add_parser(
        "rotate",
        parents=[remote],
        help=f"new owner token and/or signing secret (its owner: ${OWNER_TOKEN_ENV})",
    )
    rotate.add_argument("id", type=int, help="the bot's id")
    rotate.add_argument("--only", choices=["owner_token", "signing_secret"], help="default: both")
    rotate.add_argument("--signing-secret", help="choose the new secret")
    rotate.set_defaults(func=cmd_bots_rotate)
    for name, func, what in (
        ("pause", cmd_bots_pause, "an organiser's pause: only an organiser ends it"),
        ("activate", cmd_bots_activate, "end a pause (an organiser's: only an organiser)"),
    ):
        change = bots_sub.add_parser(name, parents=[remote], help=what)
        change.add_argument("id", type=int, help="the bot's id")
        change.set_defaults(func=func)
    rename = bots_sub.add_parser("rename", parents=[remote], help="its owner or an organiser")
    rename.add_argument("id", type=int, help="the bot's id")
    rename.add_argument("name", help="its new name")
    rename.set_defaults(func=cmd_bots_rename)
    delete = bots_sub.add_parser(
        "delete",
        parents=[remote_options(json_flag=False)],
        help="its owner or an organiser: it plays no more (its matches and ratings stay)",
    )
    delete.add_argument("id", type=int, help="the bot's id")
    delete.add_argument("--yes", action="store_true", help="do not ask first")
    delete.set_defaults(func=cmd_bots_delete)

    matches = sub.add_parser("matches", help="list and show matches, download replays")
    m_sub = matches.add_subparsers(dest="action", required=True)
    m_list = m_sub.add_parser("list", parents=[remote], help="matches, newest first")
    m_list.add_argument("--tournament", type=int, metavar="ID", help="a tournament's matches")
    m_list.add_argument("--bot", type=int, metavar="ID", help="a bot in any seat")
    m_list.add_argument("--game", help="one game's matches")
    m_list.add_argument("--status", help="queued, running, finished, failed or cancelled")
    m_list.add_argument("--limit", type=int, default=20, help="the newest N (20; at most 100)")
    m_list.set_defaults(func=cmd_matches_list)
    m_show = m_sub.add_parser("show", parents=[remote], help="seats, ranks, scores and faults")
    m_show.add_argument("id", type=int, help="the match's id")
    m_show.set_defaults(func=cmd_matches_show)
    m_replay = m_sub.add_parser(
        "replay",
        parents=[remote_options(json_flag=False)],
        help="download a finished match's record as a replay file",
    )
    m_replay.add_argument("id", type=int, help="the match's id")
    m_replay.add_argument(
        "-o", "--output", metavar="FILE", help="default: match-ID.json; - for stdout"
    )
    m_replay.set_defaults(func=cmd_matches_replay)


def add_ratings_commands(ratings_sub: Any) -> None:
    """``ratings show``."""
    show = ratings_sub.add_parser(
        "show", parents=[remote_options()], help="a game's leaderboard on a running server"
    )
    show.add_argument("game", help="the game's id, e.g. cactus")
    show.set_defaults(func=cmd_ratings_show)
