"""``arena tournaments``: list, start, show and cancel tournaments on a running arena
(``/api/tournaments``).

``arena tournaments start`` sends what the tournament form sends.  The flags of the
formats' own parameters are made from the registry (``arena.competition.formats``: every
``Field`` of every format is a flag named after its JSON key, ``--matches-per-bot`` for
``matches_per_bot``), so a field a format gains is a flag here with nothing to change;
how a value is typed is ``FIELD_SYNTAX``'s for the fields it knows (bot ids, the pass
rule, the stop rule), else a number, ``key=value,...`` or JSON.  What the server refuses
(a field of another format, a bot that is not there) is its one-line answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.cli.local import parse_options
from arena.cli.output import UsageError, at_least, print_table, printed_as_json
from arena.cli.remote import _ids, _member_token, _organiser_token, open_client, remote_options
from arena.competition.formats import DEALS, DEFAULT_FORMAT, FORMAT_FIELDS, FORMATS
from arena.competition.grading import RULE_KINDS, GradingError, PassRule
from arena.games import GAMES

if TYPE_CHECKING:
    from arena.cli.client import ArenaClient

LIVE_VIEWS = ("public", "everyone")  # arena.models.LIVE_VIEWS (the CLI loads no model)


def _json_or_pairs(flag: str, text: str) -> Any:
    """A value as JSON (a number, an object, a list), else ``key=value,...`` (an object;
    a bare key is true), else the text as it is: the server says what it expects."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError as exc:
        if stripped[:1] in ("{", "["):  # meant as JSON: say where it is not
            raise UsageError(f"{flag} {text!r} is not JSON: {exc}") from None
    if "=" in stripped:
        return parse_options(stripped)
    return stripped


def _count(flag: str, text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give a whole number") from None
    at_least(flag, count, 1)
    return count


def pass_rule(flag: str, text: str) -> dict[str, Any]:
    """``score:0.8``, ``consecutive:8/10``, ``stop_rule``, ``kind=score,min_score=0.8``
    or the JSON object; the short forms are checked here (``arena.competition.grading``)."""
    stripped = text.strip()
    if stripped[:1] == "{" or "=" in stripped:
        value = _json_or_pairs(flag, stripped)
        if not isinstance(value, dict):
            raise UsageError(f"{flag} {text!r}: give an object, e.g. {PASS_RULE_FORMS}")
        return value
    kind, _, rest = stripped.partition(":")
    kind = kind.strip().replace("-", "_")
    try:
        if kind == "score" and rest:
            rule = PassRule(kind, min_score=float(rest))
        elif kind == "consecutive" and rest:
            wins, sep, of = rest.partition("/")
            if not sep:
                raise ValueError
            rule = PassRule(kind, wins=int(wins), of=int(of))
        elif kind == "stop_rule" and not rest:
            rule = PassRule(kind)
        else:
            raise ValueError
        rule.check()
    except ValueError as exc:  # GradingError is one: its words are the organiser's
        reason = f": {exc}" if isinstance(exc, GradingError) else ""
        raise UsageError(
            f"{flag} {text!r}{reason or ' is not a pass rule'} (give {PASS_RULE_FORMS})"
        ) from None
    return rule.to_json()


PASS_RULE_FORMS = "score:0.8, consecutive:8/10, stop_rule, or the JSON object"
assert {"score", "consecutive", "stop_rule"} == set(RULE_KINDS)  # the forms above, all


@dataclass(frozen=True)
class Syntax:
    """How a format field is typed on the command line: its metavar, what reads it, and
    the words that say how (the field's meaning comes from the registry)."""

    metavar: str
    read: Callable[[str, str], Any]
    how: str


# the fields the command line knows how to read; any other field of a format is read by
# _json_or_pairs.  The ids lists are comma-separated.
FIELD_SYNTAX: dict[str, Syntax] = {
    "games_per_pairing": Syntax("N", _count, "a whole number"),
    "matches_per_bot": Syntax("N", _count, "a whole number"),
    "challenger_ids": Syntax("IDS", _ids, "bot ids, e.g. 3,4 (entrants: added to --bots)"),
    "sprt": Syntax(
        "K=V,...",
        _json_or_pairs,
        "elo0, elo1, alpha and beta as K=V,... or JSON, e.g. elo1=20; {} for the "
        "defaults (0, 10, 0.05, 0.05)",
    ),
    "pass_rule": Syntax("RULE", pass_rule, PASS_RULE_FORMS),
}
GENERIC_SYNTAX = Syntax("VALUE", _json_or_pairs, "a number, K=V,... or JSON")
# flags kept from before the registry named them (the same field)
FIELD_ALIASES = {"challenger_ids": ("--challengers",)}


def field_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _field_help(name: str) -> str:
    """Which formats take the field and what it means in each (the registry's words)."""
    syntax = FIELD_SYNTAX.get(name, GENERIC_SYNTAX)
    uses = [
        f"{fmt.name}{'' if f.required else ' (optional)'}: {f.description}"
        for fmt in FORMATS.values()
        for f in fmt.fields
        if f.name == name
    ]
    # argparse formats help with %: the registry's words are text
    return f"{syntax.how}. " + "; ".join(uses).replace("%", "%%")


def _format_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The format fields given, read, by their JSON keys."""
    fields = {}
    for name in FORMAT_FIELDS:
        text = getattr(args, name, None)
        if text is not None:
            fields[name] = FIELD_SYNTAX.get(name, GENERIC_SYNTAX).read(field_flag(name), text)
    return fields


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
    if not args.bots and not args.people and args.challenger_ids is None:
        raise UsageError("give the entrants: --bots IDS and/or --people NAMES")
    at_least("--seats", args.seats, 2)
    at_least("--seed", args.seed, 0)
    at_least("--person-deadline", args.person_deadline, 2)
    at_least("--time-bank-ms", args.time_bank_ms, 0)
    fields = _format_fields(args)
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
    # a challenger is an entrant, as on the form: listed in --bots or not
    challengers = fields.get("challenger_ids")
    if isinstance(challengers, list):
        body["bot_ids"] += [c for c in challengers if c not in body["bot_ids"]]
    if FORMATS[args.format].takes("games_per_pairing"):
        fields.setdefault("games_per_pairing", seats)  # each bot in each seat once
    body.update(fields)  # another format's field too: the server says why not
    optional = {
        "preset": args.preset,
        "options": parse_options(args.options) if args.options else None,
        "deal": args.deal,
        "seed": args.seed,
        "time_bank_ms": args.time_bank_ms,
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
    balance = _balance_text(tournament.get("balance"))  # before its first match is played
    if balance:
        print(f"  balance: {balance}")
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


def _span(values: Any, one: str, many: str) -> str | None:
    """A [min, max] pair in words: "40 matches", "2 to 3 matches"."""
    if not isinstance(values, list) or len(values) != 2:
        return None
    low, high = values
    return f"{low} {one if low == 1 else many}" if low == high else f"{low} to {high} {many}"


def _balance_text(balance: dict[str, Any] | None) -> str | None:
    """What the schedule achieved, as the tournament's page says it."""
    if not balance:
        return None
    matches = _span(balance.get("matches_per_bot"), "match", "matches")
    meetings = _span(balance.get("pair_meetings"), "time", "times")
    parts = [
        f"{matches} per bot" if matches else None,
        f"seat spread {balance['seat_spread']}" if balance.get("seat_spread") is not None else None,
        f"two bots meet {meetings}" if meetings else None,
    ]
    return ", ".join(p for p in parts if p) or None


def _print_tournament(t: dict[str, Any]) -> None:
    what = ", ".join(
        [t["game"], t["format"].replace("_", " "), f"{t['seats_per_match']} seats"]
        + (["duplicate deals"] if t.get("deal") == "duplicate" else [])
    )
    print(f"tournament {t['id']}: {t['name']} ({what}), {t['status']}")
    if t.get("pass_rule"):
        try:
            rule = PassRule.from_json(t["pass_rule"]).text()
        except GradingError:  # a kind this command does not know yet: as the server has it
            rule = json.dumps(t["pass_rule"])
        print(f"  pass rule: {rule}")
    if t.get("time_bank_ms"):
        print(f"  time bank: {t['time_bank_ms']:,} ms per bot per match")
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


def add_commands(sub: Any) -> None:
    """``arena tournaments list``, ``start``, ``show`` and ``cancel``."""
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    remote = remote_options()
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
        description="Sends the fields of POST /api/tournaments, as the tournament form does. "
        "Each format takes its own fields (below, and GET /api/formats): a qualifier, e.g., "
        "--format qualifier --bots 1,2,3,4 --challenger-ids 3,4 --matches-per-bot 10 "
        "--pass-rule score:0.6.",
    )
    start.add_argument("game", help=f"the game's id: {', '.join(GAMES)}")
    start.add_argument(
        "--bots", metavar="IDS", help="every entrant bot, challengers too, e.g. 1,2,3,4"
    )
    start.add_argument(
        "--people", metavar="NAMES", help="people playing in the browser, e.g. Ann,Bob"
    )
    start.add_argument(
        "--person-deadline",
        type=int,
        metavar="S",
        help="their time per decision, in seconds (60)",
    )
    start.add_argument(
        "--rated", action="store_true", help="rate the matches even with people (default: not)"
    )
    start.add_argument(
        "--seats", type=int, help="seats per match (default: the game's smallest table)"
    )
    start.add_argument("--name", help="default: the game and the format")
    start.add_argument(
        "--event", type=int, metavar="ID", help=f"an event's (its organisers: ${TOKEN_ENV})"
    )
    start.add_argument(
        "--format",
        default=DEFAULT_FORMAT,
        choices=list(FORMATS),
        help="; ".join(f"{f.name}: {f.summary}" for f in FORMATS.values())
        + f" (default {DEFAULT_FORMAT})",
    )
    fields = start.add_argument_group(
        "the formats' fields", "each format takes its own: the server refuses another's"
    )
    for name in FORMAT_FIELDS:
        syntax = FIELD_SYNTAX.get(name, GENERIC_SYNTAX)
        fields.add_argument(
            field_flag(name),
            *FIELD_ALIASES.get(name, ()),
            dest=name,
            metavar=syntax.metavar,
            help=_field_help(name),
        )
    start.add_argument("--preset", help="the game's preset rules (default: the game's default)")
    start.add_argument(
        "--options", help="name[=json],... overriding the preset, e.g. rounds=3,jokers"
    )
    start.add_argument(
        "--deal",
        choices=DEALS,
        help="duplicate: each deal is played once per rotation of its table, so every bot "
        "holds every hand (default: independent)",
    )
    start.add_argument("--seed", type=int, help="the deals follow from it (default: random)")
    start.add_argument(
        "--time-bank-ms",
        type=int,
        metavar="MS",
        help="each bot's time bank per match, in milliseconds: an answer past its deadline "
        "draws the overage from it instead of being a fault (default: none)",
    )
    start.add_argument(
        "--live-view",
        choices=LIVE_VIEWS,
        help="what a match's page shows while it is played: public, the public table "
        "(the default), or everyone, every hidden card too (for a class, not a contest)",
    )
    start.set_defaults(func=cmd_tournaments_start)
    t_show = t_sub.add_parser(
        "show", parents=[remote], help="progress and standings (--json: the crosstable too)"
    )
    t_show.add_argument("id", type=int, help="the tournament's id")
    t_show.set_defaults(func=cmd_tournaments_show)
    cancel = t_sub.add_parser(
        "cancel", parents=[remote], help=f"cancel its queued matches (${ORGANISER_TOKEN_ENV})"
    )
    cancel.add_argument("id", type=int, help="the tournament's id")
    cancel.set_defaults(func=cmd_tournaments_cancel)
