"""Runnable bots built on the SDK: the arena's house policies behind HTTP.

Each module ``sample_bots.<game>_<policy>`` serves one policy of one game::

    python -m sample_bots.cactus_heuristic --port 8001 --secret s3cret
    python -m sample_bots.cactus_heuristic --connect URL --bot-id ID --secret s3cret  # no port

``python -m sample_bots`` lists them.  They wrap the in-process policies of
``arena.games`` (see :mod:`sample_bots.policy_bot`), so they need the arena package too.
``sample_bots/js/bot.js`` is a bot of its own in JavaScript (Node, no dependencies).
"""

from __future__ import annotations

# module name -> (game id, policy name); every game of arena.games.GAMES, random and heuristic
SAMPLE_BOTS: dict[str, tuple[str, str]] = {
    "cactus_random": ("cactus", "random"),
    "cactus_heuristic": ("cactus", "heuristic"),
    "cactus_game_random": ("cactus-game", "random"),
    "cactus_game_heuristic": ("cactus-game", "heuristic"),
    "president_random": ("president", "random"),
    "president_heuristic": ("president", "heuristic"),
}
