"""The commands against a running arena, through its JSON API (``arena.cli.client``):
``arena bots``, ``tournaments``, ``matches`` and ``ratings show``.  Each prints a
summary, or with ``--json`` the API's answer as it is.  What every remote command shares
(``open_client``, ``remote_options``, ``credential``) is here too: ``arena.cli.accounts``,
``events`` and ``ladders`` use it.

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
import time
from typing import TYPE_CHECKING, Any

from arena.cli.local import check_writable, parse_options, write_replay_file
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
from arena.competition.formats import DEFAULT_FORMAT, FORMATS
from arena.games import GAMES

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
    if args.event is not None:
        body["event_id"] = args.event
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
    if args.connect:
        print(f"start it from anywhere: python bot.py --connect {server} "
              f"--bot-id {bot['id']} --secret {bot['signing_secret']}")  # fmt: skip
    print("Both are shown this once. Keep the owner token to manage the bot (as "
          "ARENA_OWNER_TOKEN);\nstart the bot with the signing secret.")  # fmt: skip
    return 0


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


def cmd_tournaments_list(args: argparse.Namespace) -> int:
    at_least("--limit", args.limit, 1)
    if args.watch is not None and not args.watch > 0:
        raise UsageError(f"--watch must be more than 0 seconds, not {args.watch:g}")
    query: dict[str, Any] = {"page_size": min(args.limit, 100)}
    if args.event is not None:
        query["event_id"] = args.event
    token = _member_token()
    with open_client(args) as client:
        if args.watch is None:
            tournaments = client.get_list("/api/tournaments", token, **query)
            if not printed_as_json(args, tournaments):
                _print_tournaments(tournaments, args.event)
            _warn(*tournaments)
            return 0
        redraw = sys.stdout.isatty()
        try:
            while True:
                tournaments = client.get_list("/api/tournaments", token, **query)
                if redraw:
                    print("\x1b[H\x1b[2J", end="")  # the cursor home, the screen cleared
                print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} · every {args.watch:g} s, "
                      "Ctrl-C to stop")  # fmt: skip
                if not printed_as_json(args, tournaments):
                    _print_tournaments(tournaments, args.event)
                sys.stdout.flush()  # a pipe shows each draw as it is made
                _warn(*tournaments)
                time.sleep(args.watch)
        except KeyboardInterrupt:
            return 0  # how a watch ends


def _print_tournaments(tournaments: list[dict[str, Any]], event: int | None) -> None:
    if not tournaments:
        print("no tournament" + (f" in event {event}" if event is not None else " yet"))
        return
    rows = []
    for t in tournaments:
        p = t["progress"]
        done = p["finished"] + p["failed"] + p["cancelled"]
        share = f" ({100 * done // p['total']}%)" if p["total"] else ""
        rows.append([t["id"], t["name"], t["game"], t["format"], t["status"],
                     f"{done}/{p['total']}{share}"])  # fmt: skip
    print_table(["id", "name", "game", "format", "status", "progress"], rows)


def cmd_tournaments_start(args: argparse.Namespace) -> int:
    if not args.bots and not args.people:
        raise UsageError("give the entrants: --bots IDS and/or --people NAMES")
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
        "bot_ids": _ids("--bots", args.bots) if args.bots else [],
        "seats_per_match": seats,
    }
    if args.event is not None:
        body["event_id"] = args.event
    if args.people:
        body["people"] = [name.strip() for name in args.people.split(",") if name.strip()]
    at_least("--person-deadline", args.person_deadline, 2)
    if args.format in FORMATS and FORMATS[args.format].takes("games_per_pairing"):
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
        "person_deadline_s": args.person_deadline,
        "rated": True if args.rated else None,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    with open_client(args) as client:
        tournament = client.post("/api/tournaments", body, token=_organiser_token())
        server = client.base
        if tournament.get("status") == "building":
            tournament = _wait_built(client, tournament)
    _warn(tournament)
    if printed_as_json(args, tournament):
        return 0
    _print_tournament(tournament)
    links = tournament.get("seat_links") or []
    if links:
        print("  people's links (shown this once; give each person their own):")
        for link in links:
            print(f"    {link['name']}: {server}{link['url']}")
    return 0


BUILD_POLL_SECONDS = 1.0


def _wait_built(client: ArenaClient, tournament: dict[str, Any]) -> dict[str, Any]:
    """Wait while a big tournament is built by a worker, its progress on stderr (a line
    each time it moves); Ctrl-C stops the waiting, not the build.  Returns it built."""
    shown = None
    path = f"/api/tournaments/{tournament['id']}"
    seat_links = tournament.get("seat_links")  # only the answer that created it has them
    try:
        while tournament.get("status") == "building":
            build = tournament.get("build") or {}
            line = f"{build.get('written', 0):,} of {build.get('total', 0):,} matches written"
            if line != shown:
                print(f"tournament {tournament['id']}: building, {line}", file=sys.stderr)
                _warn(tournament)  # building needs a worker too
                shown = line
            time.sleep(BUILD_POLL_SECONDS)
            tournament = client.get_object(path, _member_token(), crosstable="false")
    except KeyboardInterrupt:
        print(
            f"arena: stopped waiting; tournament {tournament['id']} is still being built "
            f"(arena tournaments show {tournament['id']})",
            file=sys.stderr,
        )
    return {**tournament, "seat_links": seat_links}


def cmd_tournaments_show(args: argparse.Namespace) -> int:
    with open_client(args) as client:
        # the crosstable grows with the square of the bots: only in --json
        tournament = client.get_object(
            f"/api/tournaments/{args.id}",
            _member_token(),
            **({} if args.json else {"crosstable": "false"}),
        )
    _warn(tournament)
    if printed_as_json(args, tournament):
        return 0
    _print_tournament(tournament)
    return 0


def cmd_tournaments_cancel(args: argparse.Namespace) -> int:
    with open_client(args) as client:
        tournament = client.post(f"/api/tournaments/{args.id}/cancel", token=_organiser_token())
    if printed_as_json(args, tournament):
        return 0
    _print_tournament(tournament)
    return 0


def _warn(*tournaments: dict[str, Any]) -> None:
    """A line on stderr per warning of each tournament (no worker alive, say): what keeps
    its matches from being played, apart from the output a script may read."""
    for t in tournaments:
        for warning in t.get("warnings") or []:
            print(f"arena: warning: tournament {t['id']}: {warning['message']}", file=sys.stderr)
    sys.stderr.flush()


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
                interval(r.get("fitted")),
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
    """``arena bots``, ``tournaments`` and ``matches``: the JSON API of a running arena."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV

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
    register.add_argument("name")
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
    register.add_argument("--event", type=int, metavar="ID", help="enter it in an event")
    register.add_argument("--games", help="comma-separated (default: every game it declares)")
    register.add_argument("--description")
    register.add_argument(
        "--signing-secret", help="choose the secret (16 to 128 printable ASCII, no spaces)"
    )
    register.add_argument(
        "--playable", action="store_true", help="people may pick it as an opponent at /play"
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
    upload = bots_sub.add_parser(
        "upload",
        parents=[remote],
        help=f"a new version of a hosted bot's code (its owner: ${OWNER_TOKEN_ENV})",
        description="FILE is bot.py, a .zip with bot.py at its root, or a folder with bot.py "
        "(zipped for you). The version plays a validation match before it plays for real.",
    )
    upload.add_argument("id", type=int)
    upload.add_argument("file", metavar="FILE")
    upload.set_defaults(func=cmd_bots_upload)
    rotate = bots_sub.add_parser(
        "rotate",
        parents=[remote],
        help=f"new owner token and/or signing secret (its owner: ${OWNER_TOKEN_ENV})",
    )
    rotate.add_argument("id", type=int)
    rotate.add_argument("--only", choices=["owner_token", "signing_secret"], help="default: both")
    rotate.add_argument("--signing-secret", help="choose the new secret")
    rotate.set_defaults(func=cmd_bots_rotate)
    for name, func, what in (
        ("pause", cmd_bots_pause, "an organiser's pause: only an organiser ends it"),
        ("activate", cmd_bots_activate, "end a pause (an organiser's: only an organiser)"),
    ):
        change = bots_sub.add_parser(name, parents=[remote], help=what)
        change.add_argument("id", type=int)
        change.set_defaults(func=func)
    rename = bots_sub.add_parser("rename", parents=[remote], help="its owner or an organiser")
    rename.add_argument("id", type=int)
    rename.add_argument("name")
    rename.set_defaults(func=cmd_bots_rename)
    delete = bots_sub.add_parser(
        "delete",
        parents=[remote_options(json_flag=False)],
        help="its owner or an organiser: it plays no more (its matches and ratings stay)",
    )
    delete.add_argument("id", type=int)
    delete.add_argument("--yes", action="store_true", help="do not ask first")
    delete.set_defaults(func=cmd_bots_delete)

    tournaments = sub.add_parser(
        "tournaments", help="list, start, show and cancel tournaments on a running server"
    )
    t_sub = tournaments.add_subparsers(dest="action", required=True)
    t_list = t_sub.add_parser(
        "list", parents=[remote], help="id, name, game, format, status and progress, newest first"
    )
    t_list.add_argument("--event", type=int, metavar="ID", help="an event's tournaments")
    t_list.add_argument("--limit", type=int, default=20, help="the newest N (20; at most 100)")
    t_list.add_argument(
        "--watch",
        type=float,
        nargs="?",
        const=2.0,
        metavar="SECONDS",
        help="draw it again every SECONDS (2) until Ctrl-C",
    )
    t_list.set_defaults(func=cmd_tournaments_list)
    start = t_sub.add_parser(
        "start",
        parents=[remote],
        help=f"start a tournament (the organiser token: ${ORGANISER_TOKEN_ENV})",
        description="The fields of POST /api/tournaments; see its OpenAPI description.",
    )
    start.add_argument("game")
    start.add_argument("--bots", metavar="IDS", help="bot ids, e.g. 1,2,3,4")
    start.add_argument(
        "--people", metavar="NAMES", help="people playing in the browser, e.g. Ann,Bob"
    )
    start.add_argument("--person-deadline", type=int, metavar="S", help="their time per decision")
    start.add_argument(
        "--rated", action="store_true", help="rate the matches even with people (default: not)"
    )
    start.add_argument(
        "--seats", type=int, help="seats per match (default: the game's smallest table)"
    )
    start.add_argument("--name", help="default: the game and the format")
    start.add_argument(
        "--event", type=int, metavar="ID", help="an event's (its organisers: $ARENA_TOKEN)"
    )
    start.add_argument(
        "--format", default=DEFAULT_FORMAT, help=f"{', '.join(FORMATS)} (default {DEFAULT_FORMAT})"
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
        parents=[remote_options(json_flag=False)],
        help="download a finished match's record as a replay file",
    )
    m_replay.add_argument("id", type=int)
    m_replay.add_argument(
        "-o", "--output", metavar="FILE", help="default: match-ID.json; - for stdout"
    )
    m_replay.set_defaults(func=cmd_matches_replay)


def add_ratings_commands(ratings_sub: Any) -> None:
    """``ratings show``."""
    show = ratings_sub.add_parser(
        "show", parents=[remote_options()], help="a game's leaderboard on a running server"
    )
    show.add_argument("game")
    show.set_defaults(func=cmd_ratings_show)
