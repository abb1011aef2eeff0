"""A Cactus bot (game ``cactus``) written as a plain function: keep low cards.

    python -m arenabot.local bot.py:act --game cactus --opponents heuristic   # try it
    python bot.py --port 9000                                                 # serve it
    python bot.py --connect URL --bot-id ID                                   # or connect out

Every decision gets this seat's ``view`` and the ``legal_actions``; return one of them.
``view["decision"]`` names what is asked (``turn``, ``drawn``, ``taken``, ``snap``,
``call``, ``power``, ``initial_peek``); anything this code does not handle gets a random
legal action, so it never plays an illegal move.
"""

import random

from arenabot import run
from arenabot.views import cactus, of_type

NAME = "starter-cactus"
GAMES = ["cactus"]
# False: act is called for one decision at a time, and the arena, told so, sends one
# request at a time without counting the wait against a decision's deadline.  True only
# if act may run in several threads at once and spends its time waiting (on a remote
# service, say), not computing: see "Deadline and concurrency" in the SDK's README.
THREAD_SAFE = False
rng = random.Random()


def act(view: dict, legal_actions: list[dict]) -> dict:
    decision = view["decision"]
    if decision == "turn":
        return take_a_low_discard(view, legal_actions)
    if decision in ("drawn", "taken"):
        return keep_low_cards(view, legal_actions)
    if decision == "snap":
        return snap_a_known_match(view, legal_actions)
    if decision == "call":
        return call_when_low(view, legal_actions)
    return rng.choice(legal_actions)


def take_a_low_discard(view: dict, legal_actions: list[dict]) -> dict:
    """Take the top of the discard pile when it is a low card, else draw."""
    top = cactus.top_discard(view)
    take = {"type": "take_discard"}
    if top is not None and cactus.card_value(view, top) <= 2 and take in legal_actions:
        return take
    return {"type": "draw"} if {"type": "draw"} in legal_actions else rng.choice(legal_actions)


def keep_low_cards(view: dict, legal_actions: list[dict]) -> dict:
    """Swap the card in hand for my worst card (a high known card, else an unknown one)
    when it is lower; otherwise discard it."""
    card = cactus.drawn_card(view)  # drawn from the stock, or taken from the discard
    swaps = of_type(legal_actions, "swap")
    if card is not None and swaps:
        guess = cactus.average_value(view)
        mine = cactus.my_layout(view)

        def worth(slot: int) -> float:  # what a slot's card counts, as far as I know
            known = mine.get(slot)
            return guess if known is None else cactus.card_value(view, known)

        worst = max(swaps, key=lambda a: worth(a["slot"]))
        if cactus.card_value(view, card) < worth(worst["slot"]) or not of_type(
            legal_actions, "discard"
        ):
            return worst
    discards = of_type(legal_actions, "discard")
    return discards[0] if discards else rng.choice(legal_actions)


def snap_a_known_match(view: dict, legal_actions: list[dict]) -> dict:
    """Snap a card of mine I know matches the discard; never guess (a wrong snap costs)."""
    top = cactus.top_discard(view)
    for action in of_type(legal_actions, "snap"):
        card = cactus.my_layout(view).get(action["slot"])
        if top is not None and card is not None and cactus.rank(card) == cactus.rank(top):
            return action
    passes = of_type(legal_actions, "pass")
    return passes[0] if passes else rng.choice(legal_actions)


def call_when_low(view: dict, legal_actions: list[dict]) -> dict:
    """Call Cactus when my layout probably counts 5 or less."""
    wanted = "call" if cactus.estimated_total(view) <= 5 else "pass"
    chosen = of_type(legal_actions, wanted)
    return chosen[0] if chosen else rng.choice(legal_actions)


if __name__ == "__main__":
    run(act, name=NAME, games=GAMES, thread_safe=THREAD_SAFE)
