"""``python -m arenabot new GAME DIR``: write a starter bot for a game into a new directory.

A mistake (an unknown game, a directory that is not empty) is one line on stderr and exit
status 2.  ``python -m arenabot.local`` plays a bot against the house bots.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from arenabot.local import OneLineParser
from arenabot.starters import BOT_FILE, STARTERS, StarterError, write


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m arenabot", description="The card-bot arena SDK.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    new = commands.add_parser(
        "new",
        help="write a starter bot for a game into a new directory",
        description="Write a starter bot (a function act(view, legal_actions) using the "
        "game's view helpers) and a README into a new directory.",
    )
    new.add_argument("game", help=f"one of: {', '.join(STARTERS)}")
    new.add_argument("dir", help="the directory to write into (created; must be empty)")
    new.add_argument("--name", help="the bot's name (default: the directory's name)")
    args = parser.parse_args(argv)
    try:
        written = write(args.game, args.dir, args.name)
    except StarterError as exc:
        print(f"{new.prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {', '.join(str(p) for p in written)}")
    print(f"try it:    cd {args.dir} && python -m arenabot.local {BOT_FILE}:act --game {args.game}")
    print(f"serve it:  cd {args.dir} && python {BOT_FILE}   (see README.md there)")
    print(
        f"connect:   cd {args.dir} && python {BOT_FILE} --connect URL --bot-id ID   "
        "(from a laptop: no port)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
