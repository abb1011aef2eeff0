"""A Président bot (game ``president``) written as a plain function: shed weak cards.

    python -m arenabot.local bot.py:act --game president --opponents heuristic,random
    python bot.py --port 9000                                                  # serve it
    python bot.py --connect URL --bot-id ID                                    # or connect out

Every decision gets this seat's ``view`` and the ``legal_actions``; return one of them.
Plays are ``{"type": "play", "rank": ..., "count": ...}``; the exchange at the start of a
round asks to ``give`` cards.  Anything this code does not handle (the variants' actions)
gets a random legal action, so it never plays an illegal move.
"""

import random

from arenabot import run
from arenabot.views import of_type, president

NAME = "starter-president"
GAMES = ["president"]
# False: act is called for one decision at a time, and the arena, told so, sends one
# request at a time without counting the wait against a decision's deadline.  True only
# if act may run in several threads at once and spends its time waiting (on a remote
# service, say), not computing: see "Deadline and concurrency" in the SDK's README.
THREAD_SAFE = False
rng = random.Random()


def act(view: dict, legal_actions: list[dict]) -> dict:
    strength = president.strength(view)
    gives = of_type(legal_actions, "give")
    if gives:  # the exchange: give my weakest cards
        return min(gives, key=lambda a: sorted((strength[r] for r in a["ranks"]), reverse=True))
    plays = of_type(legal_actions, "play")
    if plays:  # the weakest play, the most cards of it first
        return min(plays, key=lambda a: (strength.get(a["rank"], 99), -a.get("count", 1)))
    if president.can_pass(legal_actions):
        return of_type(legal_actions, "pass")[0]
    return rng.choice(legal_actions)


if __name__ == "__main__":
    run(act, name=NAME, games=GAMES, thread_safe=THREAD_SAFE)
