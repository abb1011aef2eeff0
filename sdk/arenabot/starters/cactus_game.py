"""A Cactus Game bot (game ``cactus-game``) written as a plain function: complete sets.

    python -m arenabot.local bot.py:act --game cactus-game --opponents heuristic   # try it
    python bot.py --port 9000                                                      # serve it
    python bot.py --connect URL --bot-id ID                                        # or connect out

Every decision gets this seat's ``view`` and the ``legal_actions``; return one of them.
``view["decision"]`` names what is asked (``turn``, ``stop``, ``take``); anything this code
does not handle gets a random legal action, so it never plays an illegal move.
"""

import random

from arenabot import run
from arenabot.views import cactus_game, of_type

NAME = "starter-cactus-game"
GAMES = ["cactus-game"]
# False: act is called for one decision at a time, and the arena, told so, sends one
# request at a time without counting the wait against a decision's deadline.  True only
# if act may run in several threads at once and spends its time waiting (on a remote
# service, say), not computing: see "Deadline and concurrency" in the SDK's README.
THREAD_SAFE = False
rng = random.Random()


def act(view: dict, legal_actions: list[dict]) -> dict:
    if view["decision"] == "turn":
        return play_a_turn(view, legal_actions)
    if view["decision"] == "stop":
        return stop_a_thief(view, legal_actions)
    return rng.choice(legal_actions)


def play_a_turn(view: dict, legal_actions: list[dict]) -> dict:
    """The set worth the most Points, else an action card, else draw."""
    sets = of_type(legal_actions, "play_set")
    if sets:
        return max(sets, key=cactus_game.set_points)
    plays = of_type(legal_actions, "play")
    if plays:
        return rng.choice(plays)
    return rng.choice(legal_actions)


def stop_a_thief(view: dict, legal_actions: list[dict]) -> dict:
    """Play a Stop on a card aimed at me; let the others pass."""
    waiting = cactus_game.chain(view) or {}
    aimed_at_me = waiting.get("target") == view["seat"] or view["seat"] in waiting.get(
        "players", ()
    )
    stops = of_type(legal_actions, "stop")
    if aimed_at_me and stops:
        return stops[0]
    passes = of_type(legal_actions, "pass")
    return passes[0] if passes else rng.choice(legal_actions)


if __name__ == "__main__":
    run(act, name=NAME, games=GAMES, thread_safe=THREAD_SAFE)
