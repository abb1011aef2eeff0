"""``arena ladders``: the rated ladders (which games schedule rated matches, at how many
seats) of the open arena or of one event, and switching one on or off, against a running
arena (``/api/ladders``, ``/api/events/{id}``)."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.output import at_least, print_table, printed_as_json, when
from arena.cli.remote import credential, open_client, remote_options
from arena.games import GAMES


def _event(args: argparse.Namespace) -> int | None:
    # ``arena ladders --event 3 set ...`` and ``arena ladders set ... --event 3`` alike
    event = getattr(args, "event", None)
    return event if event is not None else args.list_event


def _event_ladders(event: dict[str, Any]) -> list[dict[str, Any]]:
    """An event's ladder per game: its ``ladder`` has only the games switched at least
    once (the others are off, at the game's smallest table, as the server reads them)."""
    ladder = event.get("ladder") or {}
    rows = []
    for game in event["games"]:
        switched = ladder.get(game) or {}
        smallest = max(2, GAMES[game].min_players) if game in GAMES else None
        rows.append(
            {
                "game": game,
                "enabled": bool(switched.get("enabled")),
                "seats_per_match": switched.get("seats_per_match", smallest),
                "updated_at": switched.get("updated_at"),
            }
        )
    return rows


def cmd_ladders_list(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    event_id = _event(args)
    with open_client(args) as client:
        if event_id is None:
            ladders = client.get_list("/api/ladders")
            title = "Ladders of the open arena"
        else:
            token = credential(TOKEN_ENV, ORGANISER_TOKEN_ENV)
            event = client.get_object(f"/api/events/{event_id}", token)
            ladders = _event_ladders(event)
            title = f"Ladders of event {event['id']} ({event['name']})"
    if printed_as_json(args, ladders):
        return 0
    print(title)
    print_table(
        ["game", "ladder", "seats", "switched"],
        [
            [
                ladder["game"],
                "on" if ladder["enabled"] else "off",
                ladder["seats_per_match"],
                when(ladder.get("updated_at")),
            ]
            for ladder in ladders
        ],
        indent="  ",
    )
    return 0


def cmd_ladders_set(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    at_least("--seats", args.seats, 2)
    event_id = _event(args)
    body: dict[str, Any] = {"enabled": args.on}
    if args.seats is not None:
        body["seats_per_match"] = args.seats
    if event_id is None:  # the open arena's: the admin's
        path, token = f"/api/ladders/{args.game}", credential(ORGANISER_TOKEN_ENV, TOKEN_ENV)
        where = "the open arena"
    else:  # an event's: its organisers' accounts (or the admin)
        path = f"/api/events/{event_id}/ladders/{args.game}"
        token, where = credential(TOKEN_ENV, ORGANISER_TOKEN_ENV), f"event {event_id}"
    with open_client(args) as client:
        ladder = client.put(path, body, token)
    if printed_as_json(args, ladder):
        return 0
    state = f"on, {ladder['seats_per_match']} seats a match" if ladder["enabled"] else "off"
    print(f"{ladder['game']} ladder of {where}: {state}")
    return 0


def add_commands(sub: Any) -> None:
    """``arena ladders`` (the list) and ``arena ladders set``."""
    ladders = sub.add_parser(
        "ladders",
        parents=[remote_options()],
        help="the rated ladders of the open arena or an event; set: switch one on or off",
    )
    ladders.add_argument(
        "--event", type=int, metavar="ID", dest="list_event", help="an event's ladders"
    )
    ladders.set_defaults(func=cmd_ladders_list)
    l_sub = ladders.add_subparsers(dest="action")
    # the options again, for after ``set``; SUPPRESS keeps the ones given before it
    # (a subcommand's defaults would overwrite them)
    options = remote_options(suppress_defaults=True)
    switch = l_sub.add_parser(
        "set",
        parents=[options],
        help="switch a game's ladder on or off (the open arena's: the admin; an event's: "
        "its organisers)",
    )
    switch.add_argument("game", help="the game's id, e.g. cactus")
    on_off = switch.add_mutually_exclusive_group(required=True)
    on_off.add_argument("--on", action="store_true", dest="on", help="rated matches scheduled")
    on_off.add_argument("--off", action="store_false", dest="on", help="none scheduled")
    switch.add_argument("--seats", type=int, metavar="N", help="(the game's smallest table)")
    switch.add_argument(
        "--event", type=int, metavar="ID", default=argparse.SUPPRESS, help="an event's ladder"
    )
    switch.set_defaults(func=cmd_ladders_set)
