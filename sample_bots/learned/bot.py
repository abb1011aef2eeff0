"""``LearnedBot``: a saved :class:`~sample_bots.learned.policy.LinearPolicy` as an SDK bot.

It plays from exactly what a bot is sent: the request's view is encoded by the game's
encoding, its legal actions mapped to indices, the greedy index chosen and its JSON
action answered.  Served like the other sample bots::

    python -m sample_bots.learned.bot --weights president.npz --port 8080 [--secret S]
    python -m sample_bots.learned.bot --weights president.npz --connect URL --bot-id ID --secret S
    python -m arenabot.local sample_bots/learned/bot.py:LearnedBot --opponents random,random,random

``LearnedBot()`` without arguments (what ``arenabot.local`` builds) reads the weights named
by the environment variable ``LEARNED_WEIGHTS``, by default the committed
``sample_bots/learned/president.npz``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arenabot import Bot, run

from arena import __version__ as arena_version
from sample_bots.learned.policy import LinearPolicy, WeightsError

WEIGHTS_ENV = "LEARNED_WEIGHTS"
DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "president.npz"


def weights_path(weights: str | Path | None = None) -> Path:
    """The weights to play: the argument, else ``$LEARNED_WEIGHTS``, else the committed file."""
    return Path(weights or os.environ.get(WEIGHTS_ENV) or DEFAULT_WEIGHTS)


class LearnedBot(Bot):
    """Plays the policy of a weights file in the game it was trained for.

    Stateless between decisions (the observation is the view's), so it is thread-safe:
    the policy's arrays are only read."""

    author = "card-bot arena"
    version = arena_version
    thread_safe = True

    def __init__(self, weights: str | Path | LinearPolicy | None = None):
        if isinstance(weights, LinearPolicy):
            self.policy = weights
        else:
            self.policy = LinearPolicy.load(weights_path(weights))
        self.name = f"learned-{self.policy.game}"
        self.games = [self.policy.game]

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        return self.policy.act(view, legal_actions)


def main(argv: Sequence[str] | None = None) -> None:
    """``--weights FILE`` (default ``$LEARNED_WEIGHTS`` or the committed file), then the
    SDK's command line: ``--port``, ``--host``, ``--secret``... or ``--connect URL
    --bot-id ID`` (see ``arenabot.run``)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--weights", default=None)
    args, rest = parser.parse_known_args(argv)
    if {"-h", "--help"} & set(rest):  # the SDK's parser prints the rest of the options
        print(
            f"--weights FILE: the policy to play (default ${WEIGHTS_ENV}, else {DEFAULT_WEIGHTS})"
        )
    try:
        bot = LearnedBot(args.weights)
    except WeightsError as exc:
        print(f"python -m sample_bots.learned.bot: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    run(bot, rest)


if __name__ == "__main__":
    main()
