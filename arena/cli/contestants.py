"""A contestant's commands against a running arena: ``arena scrimmage`` (unrated matches
now, against house bots and bots that accept challenges: ``POST /api/scrimmages``) and
``arena notices`` (what the arena told the account: ``/api/accounts/me/notices``).  Who
may play whom is the server's to say; a refusal is its one line."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.output import UsageError, at_least, print_table, printed_as_json, when
from arena.cli.remote import _owner_token, credential, open_client, remote_options


def _opponents(text: str) -> list[int | str]:
    """``heuristic,12,random``: bot ids as numbers, house policies by name."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UsageError(
            "--against names no opponent: give bot ids or house bots, e.g. heuristic,12"
        )
    return [int(name) if name.isdigit() else name for name in names]


def cmd_scrimmage(args: argparse.Namespace) -> int:
    at_least("--matches", args.matches, 1)
    body: dict[str, Any] = {
        "bot_id": args.bot_id,
        "opponents": _opponents(args.against),
        "matches": args.matches,
    }
    if args.game:
        body["game"] = args.game
    with open_client(args) as client:
        made = client.post("/api/scrimmages", body, _owner_token())
    if printed_as_json(args, made):
        return 0
    ids = made.get("match_ids") or []
    matches = "match" if len(ids) == 1 else "matches"
    print(f"bot {args.bot_id}: {len(ids)} unrated {made.get('game')} {matches} queued: "
          f"{', '.join(map(str, ids))}")  # fmt: skip
    print(f"Follow them with arena matches list --bot {args.bot_id} (a bot plays at most "
          f"{made.get('per_hour')} scrimmage matches an hour).")  # fmt: skip
    return 0


def cmd_notices(args: argparse.Namespace) -> int:
    from arena.cli.client import TOKEN_ENV

    at_least("--limit", args.limit, 1)
    token = credential(TOKEN_ENV)
    query: dict[str, Any] = {"page_size": min(args.limit, 100)}
    if args.unread:
        query["unread"] = "true"
    with open_client(args) as client:
        notices = client.get_list("/api/accounts/me/notices", token, **query)
        unread = [n["id"] for n in notices if not n.get("read") and "id" in n]
        if args.mark_read and unread:
            client.post("/api/accounts/me/notices/read", {"ids": unread}, token)
    if printed_as_json(args, notices):
        return 0
    if not notices:
        print("no notice" + (" unread" if args.unread else " yet"))
        return 0
    print_table(
        ["when", "kind", "bot", "", "notice"],
        [
            [when(n.get("created_at")), n["kind"], n.get("bot_id"),
             "" if n.get("read", True) else "new", n["text"]]
            for n in notices
        ],
    )  # fmt: skip
    if args.mark_read and unread:
        print(f"{len(unread)} marked read")
    return 0


def add_commands(sub: Any) -> None:
    """``arena scrimmage`` and ``arena notices``."""
    from arena.cli.client import OWNER_TOKEN_ENV, TOKEN_ENV

    remote = remote_options()
    scrimmage = sub.add_parser(
        "scrimmage",
        parents=[remote],
        help=f"unrated matches now, your bot against house bots or bots that accept "
        f"challenges (its owner: ${OWNER_TOKEN_ENV} or ${TOKEN_ENV})",
        description="Queues the matches at once, the seats rotating from one to the next. "
        "They count in no rating, leaderboard or tournament.",
    )
    scrimmage.add_argument("bot_id", type=int, metavar="BOT_ID", help="your bot's id")
    scrimmage.add_argument(
        "--against",
        required=True,
        metavar="OPPONENTS",
        help="who sits at each table with it: bot ids and house bots, e.g. heuristic,12",
    )
    scrimmage.add_argument("--matches", type=int, default=1, help="how many (1)")
    scrimmage.add_argument("--game", help="default: the bot's first game that every opponent plays")
    scrimmage.set_defaults(func=cmd_scrimmage)
    notices = sub.add_parser(
        "notices",
        parents=[remote],
        help=f"what the arena told your account, newest first (${TOKEN_ENV})",
        description="A bot paused, a bot's faults, a failed validation, a tournament "
        "finished, a grade decided.",
    )
    notices.add_argument("--unread", action="store_true", help="only those not read yet")
    notices.add_argument("--limit", type=int, default=20, help="the newest N (20; at most 100)")
    notices.add_argument(
        "--mark-read", action="store_true", help="mark the unread ones shown as read"
    )
    notices.set_defaults(func=cmd_notices)
