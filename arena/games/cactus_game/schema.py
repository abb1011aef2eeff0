"""What a Cactus Game bot receives (``view``, its ``events``) and answers (the actions), as
JSON Schema: rules CG-1..CG-21 of docs/rules/cactus-game.md.

One schema holds for every option: a key that only some moments bring is optional, and
its description says when it is there.  ``DEFS`` holds the pieces the others refer to
(``ref``; none here but the events), ``EVENTS`` and ``ACTIONS`` one schema per type.  The
module's dicts are read-only; :func:`arena.games.schemas.document` hands out copies.
"""

from __future__ import annotations

from arena.games.cactus_game.engine import (
    ACTIONS as ACTION_CARDS,
)
from arena.games.cactus_game.engine import (
    CHARACTERS,
    KINDS,
    POINT_CARDS,
    SET_SIZE,
    CactusGame,
)
from arena.games.schema_kit import (
    Schema,
    array,
    boolean,
    const,
    event_ref,
    integer,
    nullable,
    obj,
    one_of_tagged,
    pick,
    string,
    tagged,
)

# card kinds are few: their enum stands wherever a card does
DEFS: dict[str, Schema] = {}
# the request kinds (a view's ``decision``) and the phases
DECISIONS = ("turn", "stop", "take")
PHASES = (*DECISIONS, "over")
MAX_SEAT = CactusGame.max_players - 1
# each action card and the targets its play names (CG-10..CG-16; a Stop is never played
# on one's own turn, CG-19)
TARGETS: dict[str, tuple[str, ...]] = {
    "free_point": (),
    "draw_three": (),
    "swap_hands": ("players",),
    "look_and_steal": ("target",),
    "steal_a_card": ("target",),
    "steal_a_point": ("target",),
    "ask_for_a_card": ("target", "named"),
}
CARD_RULES = {
    "free_point": "CG-10 Free Point",
    "draw_three": "CG-13 Draw Three",
    "swap_hands": "CG-11 Swap Hands",
    "look_and_steal": "CG-12 Look and Steal",
    "steal_a_card": "CG-16 Steal a Card",
    "steal_a_point": "CG-14 Steal a Point",
    "ask_for_a_card": "CG-15 Ask for a Card",
}


def _seat(description: str) -> Schema:
    return integer(description, 0, MAX_SEAT)


def _kind(description: str) -> Schema:
    return string(description, KINDS)


def _kinds(description: str) -> Schema:
    return array(_kind("A card."), description)


def _per_seat(description: str, maximum: int | None = None) -> Schema:
    return array(integer("One seat's number.", 0, maximum), description)


PLAYER = _seat("The seat of the player who did it.")
CARD_NAMES = (
    "Cards are named by kind: the characters "
    + ", ".join(CHARACTERS)
    + "; the action cards "
    + ", ".join(ACTION_CARDS)
    + "; copies of a kind are alike."
)
TARGET_FIELDS: dict[str, Schema] = {
    "players": array(
        _seat("A player."),
        "CG-11: the two players whose hands are swapped, the lower seat first (you may be one).",
        2,
        2,
        unique=True,
    ),
    "target": _seat("The other player the card is played at."),
    "named": _kind("CG-15: the card kind asked for."),
}


def _plays(head: dict[str, Schema], tail: dict[str, Schema] | None = None) -> list[Schema]:
    """One closed shape per action card: ``head``, the card and its targets, ``tail``."""
    return [
        obj(
            f"{CARD_RULES[card]}.",
            {
                **head,
                "card": const(card, "The action card played."),
                **pick(TARGET_FIELDS, TARGETS[card]),
                **(tail or {}),
            },
        )
        for card in TARGETS
    ]


SET = array(
    _kind("A character."),
    "CG-7: three characters, the completed one first, then its Jokers (three Jokers alone "
    "make a set too).",
    SET_SIZE,
    SET_SIZE,
)

# -- actions ----------------------------------------------------------------------------------
ACTIONS: dict[str, Schema] = {
    "draw": tagged("draw", "CG-5: draw one card; the turn ends. Always legal on your turn.", {}),
    "play_set": tagged(
        "play_set", "CG-7: play a set of characters and gain its Points.", {"cards": SET}
    ),
    "play": {
        "title": "play",
        "description": "Play an action card with its targets (CG-10..CG-16); a Stop window "
        "opens before it takes effect (CG-17).",
        "oneOf": _plays({"type": const("play", "Always 'play'.")}),
    },
    "pass": tagged("pass", "CG-17: let the card be (decision 'stop').", {}),
    "stop": tagged(
        "stop", "CG-17, CG-18: play a Stop on the card in the open window (decision 'stop').", {}
    ),
    "take": tagged(
        "take",
        "CG-12: the card kind you take from the hand you looked at (decision 'take').",
        {"card": _kind("The kind taken.")},
    ),
}

# -- events -----------------------------------------------------------------------------------
PLAY_EVENT: Schema = {
    "title": "play",
    "description": "An action card was played face up with its targets (CG-10..CG-16).",
    "oneOf": _plays({"type": const("play", "Always 'play'."), "player": PLAYER}),
}
PLAY_SET_EVENT = tagged(
    "play_set", "CG-7: someone played a set of characters.", {"player": PLAYER, "cards": SET}
)
STOP_EVENT = tagged(
    "stop",
    "CG-17, CG-18: someone played a Stop.",
    {
        "player": PLAYER,
        "card": const("stop", "Always 'stop'."),
        "against": _seat("Who played the card it stops."),
        "chain": integer("Its place in the chain of Stops on the card, from 1 (CG-18).", 1),
    },
)

EVENTS: dict[str, Schema] = {
    "deal": tagged(
        "deal",
        "CG-3: the cards are dealt.",
        {
            "first": _seat("Who plays first."),
            "target": integer("Points that win (CG-20).", 1, POINT_CARDS),
            "hand_sizes": _per_seat("Each hand's size, by seat."),
            "draw_pile": integer("Cards in the draw pile.", 0),
        },
    ),
    "dealt": tagged(
        "dealt",
        "CG-3: your hand as dealt (only you see this event).",
        {"player": PLAYER, "cards": _kinds("The cards dealt to you.")},
    ),
    "turn": tagged(
        "turn",
        "A turn begins (CG-4).",
        {"player": _seat("Whose turn it is."), "turn": integer("The turn, from 1 (CG-21).", 1)},
    ),
    "draw": tagged(
        "draw",
        "CG-5, CG-6, CG-13: someone drew cards.",
        {"player": PLAYER, "count": integer("Cards drawn.", 0)},
        {
            "forced": const(True, "CG-6: present and true for the forced draw of an empty hand."),
            "cards": _kinds("The cards drawn: only the drawer sees them."),
        },
    ),
    "reshuffle": tagged(
        "reshuffle",
        "CG-8: the discard was shuffled into a new draw pile.",
        {"draw_pile": integer("Cards in the new draw pile.", 0)},
    ),
    "play_set": PLAY_SET_EVENT,
    "play": PLAY_EVENT,
    "stop": STOP_EVENT,
    "resolve": tagged(
        "resolve",
        "CG-17, CG-18: the Stop window closed on an action card.",
        {
            "player": _seat("Who played the action card."),
            "card": string("The action card.", TARGETS),
            "stopped": boolean("Whether it was cancelled (an odd number of Stops)."),
            "stops": integer("Stops in its chain.", 0),
        },
    ),
    "gain": tagged(
        "gain",
        "CG-7, CG-9, CG-10: someone gained Points from the supply.",
        {
            "player": PLAYER,
            "count": integer("Points gained (what the supply had, CG-9).", 0),
            "reason": string("What gave them: a set or a Free Point.", ["set", "free_point"]),
        },
    ),
    "swap_hands": tagged(
        "swap_hands",
        "CG-11: two hands were swapped.",
        {
            "player": PLAYER,
            "players": TARGET_FIELDS["players"],
            "sizes": array(
                integer("A hand size.", 0),
                "The two hands' sizes after the swap, in the order of players.",
                2,
                2,
            ),
        },
        {"cards": _kinds("The hand you now hold: only the two players see it.")},
    ),
    "look": tagged(
        "look",
        "CG-12: someone looked at another player's hand.",
        {
            "player": PLAYER,
            "target": _seat("Whose hand."),
            "count": integer("Cards in that hand.", 0),
        },
        {"cards": _kinds("The hand seen: only the player who looked sees it.")},
    ),
    "take": tagged(
        "take",
        "CG-12: the card taken from the hand looked at.",
        {
            "player": PLAYER,
            "from": _seat("Whose hand."),
            "count": const(1, "Always 1."),
        },
        {"card": _kind("The card taken: only the two players see it.")},
    ),
    "steal_point": tagged(
        "steal_point",
        "CG-14: someone took a Point from another player.",
        {"player": PLAYER, "from": _seat("Who lost it."), "count": const(1, "Always 1.")},
    ),
    "ask": tagged(
        "ask",
        "CG-15: someone asked another player for a card kind.",
        {
            "player": PLAYER,
            "from": _seat("Who was asked."),
            "named": _kind("The kind asked for."),
            "given": boolean("Whether they had one and gave it."),
        },
        {"card": _kind("Present when given: the card given (the kind named).")},
    ),
    "steal_card": tagged(
        "steal_card",
        "CG-16: someone took a card at random from another player.",
        {
            "player": PLAYER,
            "from": _seat("Who lost it."),
            "count": integer("Cards taken: 1, or 0 when their hand was empty.", 0, 1),
        },
        {"card": _kind("The card taken: only the two players see it.")},
    ),
    "game_over": tagged(
        "game_over",
        "CG-20, CG-21: the game is over.",
        {
            "winner": nullable(
                _seat("Who reached the target."), "Who reached the target; null at the turn cap."
            ),
            "reason": string("Why: the target reached, or the turn cap.", ["target", "max_turns"]),
            "points": _per_seat("Points owned, by seat.", POINT_CARDS),
            "ranks": _per_seat("Each seat's rank, 1 the best (ties share a rank)."),
        },
    ),
}

# -- the view ---------------------------------------------------------------------------------
VIEW: Schema = obj(
    "What a Cactus Game seat may know (docs/rules/cactus-game.md, 'What each seat may see'), "
    "sent as 'view' with every request. " + CARD_NAMES,
    {
        "seat": _seat("Your seat."),
        "players": integer("Players at the table.", CactusGame.min_players, CactusGame.max_players),
        "target": integer("Points that win at once (CG-20).", 1, POINT_CARDS),
        "max_turns": integer("Turns after which the game ends (CG-21).", 1),
        "turn": integer("Turns begun, forced draws included (CG-21).", 1),
        "player": _seat("Whose turn it is."),
        "phase": string(
            "Where the turn stands: turn (the player plays or draws), stop (a Stop window is "
            "open, CG-17), take (Look and Steal's choice, CG-12), over.",
            PHASES,
        ),
        "decision": nullable(
            string("What you must decide now.", DECISIONS),
            "What you must decide now, the kind of this request; null when nothing is asked "
            "of you.",
        ),
        "hand": obj("Your hand.", {"cards": _kinds("Your cards, sorted by name.")}),
        "hand_sizes": _per_seat("Each hand's size, by seat (public)."),
        "points": _per_seat("Points owned, by seat (CG-2, face up).", POINT_CARDS),
        "point_supply": integer("Point cards left in the supply (CG-2, CG-9).", 0, POINT_CARDS),
        "draw_pile": integer("Cards in the face-down draw pile (CG-8).", 0),
        "discard": obj(
            "The discard pile, face up.", {"cards": _kinds("Its cards, the top card last.")}
        ),
        "this_turn": array(
            one_of_tagged(
                "A card or set played this turn.",
                {kind: event_ref(kind) for kind in ("play_set", "play", "stop")},
            ),
            "What was played this turn so far, in order (the events play_set, play and stop).",
        ),
        "events": array(
            one_of_tagged(
                "Something that happened, as you saw it.", {k: event_ref(k) for k in EVENTS}
            ),
            "What you observed since your last answer, oldest first.",
        ),
    },
    {
        "chain": {
            "description": "While an action card waits for its effect (decision 'stop' and "
            "the Stops on it): the card as played, with the seats that stopped so far.",
            "oneOf": _plays(
                {"type": const("play", "Always 'play'."), "player": PLAYER},
                {
                    "stops": array(
                        _seat("A seat that played a Stop."),
                        "Who played the Stops in the chain, in order (CG-18).",
                    )
                },
            ),
        },
        "looked": obj(
            "Decision 'take' only: the hand you looked at (CG-12), as it was then.",
            {
                "player": _seat("Whose hand."),
                "cards": _kinds("Its cards, sorted by name."),
            },
        ),
    },
)
