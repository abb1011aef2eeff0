"""``arena events``: create an event (a class, a hackathon) and list the events you may
see, against a running arena (``/api/events``).  An event created with an account's
token ($ARENA_TOKEN) is organised by that account; with the organiser token, by the
admin alone until ``POST /api/events/{id}/organisers`` adds someone."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.output import at_least, print_fields, print_table, printed_as_json, when
from arena.cli.remote import credential, open_client, remote_options


def _games(text: str) -> list[str]:
    return [game.strip() for game in text.split(",") if game.strip()]


def cmd_events_create(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    at_least("--bots-per-account", args.bots_per_account, 1)
    body: dict[str, Any] = {
        "name": args.name,
        "games": _games(args.games),
        "visibility": "private" if args.private else "public",
    }
    optional = {
        "bots_per_account": args.bots_per_account,
        "registration_opens_at": args.opens,
        "registration_closes_at": args.closes,
        "freeze_at": args.freeze,
    }
    # the times go as given: the server reads ISO 8601 (UTC unless it says otherwise)
    body.update({k: v for k, v in optional.items() if v is not None})
    with open_client(args) as client:
        event = client.post("/api/events", body, credential(TOKEN_ENV, ORGANISER_TOKEN_ENV))
    if printed_as_json(args, event):
        return 0
    print(f"event {event['id']} created: {event['name']} ({event['visibility']})")
    _print_event(event)
    print("Contestants sign up with the join code (arena accounts create NAME --join-code CODE).")
    return 0


def _print_event(event: dict[str, Any]) -> None:
    window = " to ".join(
        when(event.get(k)) or "-" for k in ("registration_opens_at", "registration_closes_at")
    )
    print_fields(
        [
            ("games", event["games"]),
            ("bots per account", event["bots_per_account"]),
            ("registration", ("open" if event["registration_open"] else "closed") + f" ({window})"),
            ("freeze", when(event.get("freeze_at"))),
            *([("join code", event["join_code"])] if event.get("join_code") else []),
        ]
    )


def cmd_events_list(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    query = {"mine": "true"} if args.mine else {}
    with open_client(args) as client:
        events = client.get_all("/api/events", credential(TOKEN_ENV, ORGANISER_TOKEN_ENV), **query)
    if printed_as_json(args, events):
        return 0
    if not events:
        print("no event" + (" of yours" if args.mine else " you may see"))
        return 0
    print_table(
        ["id", "name", "games", "visibility", "registration", "frozen", "you"],
        [
            [
                e["id"],
                e["name"],
                e["games"],
                e["visibility"],
                "open" if e["registration_open"] else "closed",
                e["frozen"],
                e.get("role"),
            ]
            for e in events
        ],
    )
    return 0


def add_commands(sub: Any) -> None:
    """``arena events create`` and ``arena events list``."""
    remote = remote_options()
    events = sub.add_parser("events", help="create events (a class, a hackathon) and list them")
    e_sub = events.add_subparsers(dest="action", required=True)
    create = e_sub.add_parser(
        "create",
        parents=[remote],
        help="an organiser's account ($ARENA_TOKEN) or the organiser token",
        description="Prints the event's id and its join code.",
    )
    create.add_argument("name", help="the event's name, e.g. a class or a hackathon")
    create.add_argument("--games", required=True, help="comma-separated, e.g. cactus,president")
    create.add_argument(
        "--private", action="store_true", help="its pages and API for its members only"
    )
    create.add_argument("--bots-per-account", type=int, metavar="N", help="(1)")
    create.add_argument("--opens", metavar="ISO", help="registration opens, e.g. 2026-05-01T09:00")
    create.add_argument("--closes", metavar="ISO", help="registration closes")
    create.add_argument(
        "--freeze", metavar="ISO", help="no new bots or endpoint changes after it (times: UTC)"
    )
    create.set_defaults(func=cmd_events_create)
    listing = e_sub.add_parser("list", parents=[remote], help="the events you may see")
    listing.add_argument("--mine", action="store_true", help="only the events you are in")
    listing.set_defaults(func=cmd_events_list)
