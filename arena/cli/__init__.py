"""The ``arena`` command: its parser, assembled from the command families (``local``:
no server; ``server``: the arena's processes; ``remote``, ``tournaments``,
``contestants``, ``accounts``, ``events``, ``ladders``: against a running arena), and
``main``.  ``output`` is what they print with; ``demo``, ``processes`` and ``client``
(the API client) serve the families.

Every parser is a ``Parser``: a mistake in a subcommand's arguments is told with that
subcommand's usage, unknown arguments too (argparse leaves those to the top parser,
which would print the usage of ``arena`` itself)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from arena.cli import (
    accounts,
    contestants,
    events,
    ladders,
    local,
    remote,
    server,
    tournaments,
)
from arena.cli.output import UsageError
from arena.config import ConfigError
from arena.games.base import OptionsError
from arena.sealing import SealingError


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 done; 1 a check failed (arena replay, ratings rebuild) or the server
    failed (a 5xx); 2 a mistake: an argument, a file, a refused call, a server not
    reached.  Either way one line on stderr, never a traceback."""
    from arena.cli.client import RemoteError

    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        # the output still buffered is written now, where a reader gone away is caught
        # below, and not at the interpreter's exit, which prints a traceback for it
        sys.stdout.flush()
        return status
    except (OptionsError, ConfigError, UsageError, SealingError) as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2
    except RemoteError as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 1 if exc.server_side else 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (``arena bots show 1 | head``): what it read is all it
        # wanted; stdout is pointed at nothing so that the exit flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


DESCRIPTION = (
    "The card-game arena: play matches locally (play, replay, view), run the arena "
    "(serve, worker, beat, demo, db) and use a running one (bots, tournaments, matches, "
    "ratings, scrimmage, notices, accounts, events, ladders). Each command has its own "
    "--help."
)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that refuses the arguments it does not know itself, with
    its own usage (its subcommands' parsers are of this class too)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="arena", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    local.add_commands(sub)
    server.add_commands(sub)
    ratings = sub.add_parser(
        "ratings", help="ratings: rebuild them from the match history, or show a leaderboard"
    )
    ratings_sub = ratings.add_subparsers(dest="action", required=True)
    server.add_ratings_commands(ratings_sub)
    remote.add_ratings_commands(ratings_sub)
    remote.add_commands(sub)
    tournaments.add_commands(sub)
    contestants.add_commands(sub)
    accounts.add_commands(sub)
    events.add_commands(sub)
    ladders.add_commands(sub)
    return parser


if __name__ == "__main__":
    sys.exit(main())
