"""What a Cactus bot receives (``view``, its ``events``) and answers (the actions), as JSON
Schema: rules CA, CL and PG of docs/rules/cactus.md.

One schema holds for every option and both presets: a key that only some options or some
decisions bring is optional, and its description says when it is there.  ``DEFS`` holds
the pieces the others refer to (``ref``), ``EVENTS`` and ``ACTIONS`` one schema per type.
The module's dicts are read-only; :func:`arena.games.schemas.document` hands out copies.
"""

from __future__ import annotations

from arena.games import cards
from arena.games.cactus.engine import LAYOUT_SIZE, Cactus
from arena.games.cactus.options import DEFAULT_VALUES, POWER_NAMES
from arena.games.schema_kit import (
    Schema,
    array,
    boolean,
    const,
    described,
    event_ref,
    integer,
    nullable,
    obj,
    one_of_tagged,
    ref,
    string,
    tagged,
)

# the request kinds (a view's ``decision``) and the phases of a round
DECISIONS = ("initial_peek", "turn", "drawn", "taken", "snap", "power", "call")
PHASES = (*DECISIONS, "over")
RANKS = tuple(DEFAULT_VALUES)
MAX_SEAT = Cactus.max_players - 1


def _seat(description: str) -> Schema:
    return integer(description, 0, MAX_SEAT)


def _card(description: str) -> Schema:
    return ref("card", description)


def _slot(description: str) -> Schema:
    return integer(description, 0)


CARD_NAMES = "Cards are named rank then suit: 'AS', '10H', 'QD' (suits C, D, H, S)."
DEFS: dict[str, Schema] = {
    "card": string("A card: " + CARD_NAMES, cards.NAMES),
    # a list's items inline (a reference per card costs a lookup per card)
    "cards": array(string("A card.", cards.NAMES), "Cards: " + CARD_NAMES),
}
PLAYER = _seat("The seat of the player who did it.")
SLOT = _slot(
    f"A layout slot id (CA-3): 0 to {LAYOUT_SIZE - 1} at the deal (2 and 3 the bottom row), "
    "then new ids for penalty cards; an id is never reused in a round."
)
SLOT_CARD = obj(
    "One layout slot and the card this seat knows lies there.",
    {
        "slot": SLOT,
        "card": nullable(
            string("The card at that slot.", cards.NAMES),
            "The card at that slot; null while unknown to you.",
        ),
    },
)
SEEN = array(
    obj(
        "A slot and the card seen there.",
        {"slot": SLOT, "card": _card("The card at that slot.")},
    ),
    "The slots seen and their cards.",
    min_items=1,
)


def _per_seat(description: str) -> Schema:
    return array(integer("One seat's number."), description)


def _scores(description: str) -> Schema:
    per_seat = "one number per seat, by seat"
    return {
        "description": description,
        "oneOf": [
            obj(
                "Scoring 'wins' (CL-8).",
                {
                    "wins": _per_seat(f"Rounds won so far, {per_seat}."),
                    "sum_totals": _per_seat(
                        f"The sum of the round totals so far (the tie-break, lower is better), "
                        f"{per_seat}."
                    ),
                },
            ),
            obj(
                "Scoring 'tas_de_merde' (CL-8).",
                {"tally": _per_seat(f"The tally, lower is better, {per_seat}.")},
            ),
            obj(
                "Scoring 'maximus' (CL-8).",
                {"points": _per_seat(f"Points so far, higher is better, {per_seat}.")},
            ),
            obj(
                "Scoring 'penalty' (PG-5, PG-6).",
                {"penalty": _per_seat(f"Penalty points, lower is better, {per_seat}.")},
            ),
        ],
    }


# -- actions ----------------------------------------------------------------------------------
ACTIONS: dict[str, Schema] = {
    "initial_peek": tagged(
        "initial_peek",
        "PG-1: look at two of your four cards before play (decision 'initial_peek').",
        {"slots": array(SLOT, "The two slots to look at, in increasing order.", 2, 2, unique=True)},
    ),
    "draw": tagged("draw", "CA-5: draw the top stock card and look at it (decision 'turn').", {}),
    "take_discard": tagged(
        "take_discard",
        "CA-5, PG-2: take the top discard card; it must then be swapped in (decision 'turn').",
        {},
    ),
    "peek": tagged(
        "peek",
        "Look at one of your own cards: with the 8 you drew (CL-2, decision 'drawn'; the 8 is "
        "then discarded), the 8 passed on to you (CL-3, decision 'turn', with eight_offer), "
        "or a 6, 7 or 8 power (PG-3, decision 'power').",
        {"slot": described(SLOT, "Your slot to look at.")},
    ),
    "swap": tagged(
        "swap",
        "CA-5: put the card in hand into this slot; the card that was there goes face up onto "
        "the discard (decisions 'drawn' and 'taken').",
        {"slot": described(SLOT, "Your slot that takes the card in hand.")},
    ),
    "discard": tagged(
        "discard", "CA-5: discard the card you drew from the stock (decision 'drawn').", {}
    ),
    "snap": tagged(
        "snap",
        "CA-8: throw this card of your layout onto the discard, claiming it has the top card's "
        "rank (decision 'snap'). A wrong rank costs penalty cards (CL-5, PG-4).",
        {"slot": described(SLOT, "Your slot whose card you throw.")},
    ),
    "pass": tagged("pass", "Do nothing: no snap (decision 'snap'), no call (decision 'call').", {}),
    "skip": tagged("skip", "PG-3: do not use the power of the card you discarded.", {}),
    "peek_other": tagged(
        "peek_other",
        "PG-3 (9, 10, J): look at one card of another player (decision 'power').",
        {
            "player": _seat("The other player."),
            "slot": described(SLOT, "Their slot to look at."),
        },
    ),
    "blind_swap": tagged(
        "blind_swap",
        "PG-3 (Q): swap one of your cards with one of another player's, neither seen "
        "(decision 'power').",
        {
            "slot": described(SLOT, "Your slot."),
            "player": _seat("The other player."),
            "other_slot": described(SLOT, "Their slot."),
        },
    ),
    "call": tagged(
        "call",
        "CA-7: call 'cactus': every other player plays one more turn, then the round ends "
        "(decision 'call').",
        {},
    ),
}


# -- events -----------------------------------------------------------------------------------
ROUND_RESULT_FIELDS: dict[str, Schema] = {
    "round": integer("The round.", 1),
    "totals": _per_seat("Each seat's layout total (CA-10), by seat."),
    "caller": nullable(_seat("Who called (CA-7)."), "Who called (CA-7); null if nobody did."),
    "cactus": array(
        boolean("Whether that seat has cactus."),
        "Whether each seat has cactus: a total of 5 or less (CL-7), by seat.",
    ),
}
ROUND_SCORES: dict[str, Schema] = {
    "winners": array(
        _seat("A winner."), "Scoring 'wins': the seats that won the round (CL-7), maybe none."
    ),
    "tally": _per_seat("Scoring 'tas_de_merde': each seat's tally after the round."),
    "points": _per_seat("Scoring 'maximus': each seat's points of this round."),
    "penalties": _per_seat("Scoring 'penalty': each seat's penalty of this deal (PG-5)."),
}

EVENTS: dict[str, Schema] = {
    "deal": tagged(
        "deal",
        "CA-3: a round begins; every layout is dealt face down.",
        {
            "round": integer("The round.", 1),
            "dealer": _seat("The dealer."),
            "starter": _seat("Who plays the first turn."),
            "slots": array(array(SLOT, "That seat's slot ids."), "Each seat's slot ids, by seat."),
        },
    ),
    "initial_peek": tagged(
        "initial_peek",
        "CL-1, PG-1: you looked at two of your cards (only you see this event).",
        {"player": PLAYER, "seen": SEEN},
    ),
    "turn": tagged(
        "turn",
        "A turn begins.",
        {"player": _seat("Whose turn it is."), "turn": integer("The turn of the round.", 1)},
    ),
    "draw": tagged(
        "draw",
        "CA-5: someone drew from the stock (the card is not shown).",
        {"player": PLAYER, "source": const("stock", "Always 'stock'.")},
    ),
    "drawn": tagged(
        "drawn",
        "CA-5: the card you drew (only the drawer sees this event).",
        {"player": PLAYER, "card": _card("The card drawn.")},
    ),
    "draw_skipped": tagged(
        "draw_skipped", "CA-4: no card could be had; the draw was skipped.", {"player": PLAYER}
    ),
    "take_discard": tagged(
        "take_discard",
        "CA-5: someone took the top discard card.",
        {"player": PLAYER, "card": _card("The card taken.")},
    ),
    "swap": tagged(
        "swap",
        "CA-5: someone put the card in hand into a slot; the card that was there went face up "
        "onto the discard.",
        {
            "player": PLAYER,
            "slot": described(SLOT, "The slot."),
            "source": string(
                "Where the card put in came from (the stock's card is not shown; the "
                "discard's was).",
                ["stock", "discard"],
            ),
            "card": _card("The card that left the slot, now on top of the discard."),
        },
    ),
    "discard": tagged(
        "discard",
        "CA-5: someone discarded the card drawn.",
        {"player": PLAYER, "card": _card("The card discarded.")},
    ),
    "power": {
        "title": "power",
        "description": "A power used (CL-2, CL-3, PG-3): who used it on which slots, not what "
        "was seen.",
        "oneOf": [
            obj(
                "An own card looked at: the drawn 8 or the passed-on 8 (eight_peek), or a 6, "
                "7 or 8 power (power_peek).",
                {
                    "type": const("power", "Always 'power'."),
                    "power": string("The power.", ["eight_peek", "power_peek"]),
                    "player": PLAYER,
                    "slots": array(SLOT, "The slots looked at.", 1),
                },
            ),
            obj(
                "PG-3 peek_other: a card of another player looked at.",
                {
                    "type": const("power", "Always 'power'."),
                    "power": const("peek_other", "The power."),
                    "player": PLAYER,
                    "target": _seat("The other player."),
                    "slot": described(SLOT, "Their slot."),
                },
            ),
            obj(
                "PG-3 blind_swap: two cards swapped unseen.",
                {
                    "type": const("power", "Always 'power'."),
                    "power": const("blind_swap", "The power."),
                    "player": PLAYER,
                    "slot": described(SLOT, "The player's slot."),
                    "target": _seat("The other player."),
                    "other_slot": described(SLOT, "Their slot."),
                },
            ),
        ],
    },
    "eight_peek": tagged(
        "eight_peek",
        "CL-2, CL-3: what you saw with an 8 (only you see this event).",
        {"player": PLAYER, "seen": SEEN},
    ),
    "power_peek": tagged(
        "power_peek",
        "PG-3 peek: what you saw with the power (only you see this event).",
        {"player": PLAYER, "seen": SEEN},
    ),
    "seen": tagged(
        "seen",
        "PG-3 peek_other: the card you saw in another layout (only you see this event).",
        {
            "player": _seat("The owner of the layout."),
            "slot": described(SLOT, "Their slot."),
            "card": _card("The card there."),
        },
    ),
    "snap": tagged(
        "snap",
        "CA-8: someone threw a layout card onto the discard.",
        {
            "player": PLAYER,
            "slot": described(SLOT, "The thrower's slot."),
            "card": _card("The card thrown."),
            "correct": boolean(
                "Whether it had the rank of the card it was thrown on (else CL-5 or PG-4)."
            ),
        },
    ),
    "penalty_card": tagged(
        "penalty_card",
        "CL-5, PG-4: a wrong snap's penalty: an unseen stock card into this slot.",
        {"player": PLAYER, "slot": described(SLOT, "The slot that took it.")},
    ),
    "call": tagged("call", "CA-7: someone called 'cactus'.", {"player": PLAYER}),
    "reshuffle": tagged(
        "reshuffle",
        "CA-4: the discard but its top card was shuffled into a new stock.",
        {"stock": integer("Cards in the new stock.", 0)},
    ),
    "reveal": tagged(
        "reveal",
        "CA-10: the round is over; every layout is revealed.",
        {
            "layouts": array(
                array(
                    obj(
                        "A slot and its card.",
                        {"slot": SLOT, "card": _card("The card there.")},
                    ),
                    "That seat's cards.",
                ),
                "Every layout, by seat.",
            ),
            "totals": _per_seat("Each layout's total (CA-10), by seat."),
        },
    ),
    "tas_de_merde": tagged(
        "tas_de_merde",
        "CL-8 tas_de_merde: the card a seat without cactus drew for its tally.",
        {
            "player": PLAYER,
            "card": _card("The card drawn."),
            "tally": integer("That seat's tally now."),
        },
    ),
    "round_result": {
        **tagged(
            "round_result",
            "CL-7, CL-8, PG-5: the result of the round, and one more key by scoring.",
            ROUND_RESULT_FIELDS,
            ROUND_SCORES,
        ),
        "oneOf": [{"required": [key]} for key in ROUND_SCORES],  # exactly one of them
    },
    "match_over": tagged(
        "match_over",
        "The match is over.",
        {
            "ranks": _per_seat("Each seat's rank, 1 the best (ties share a rank)."),
            "scores": array(
                {"type": "number", "description": "One seat's final score."},
                "Each seat's final score, by seat (rounds won, tally, points or penalty).",
            ),
        },
    ),
}

# -- the view ---------------------------------------------------------------------------------
VIEW: Schema = obj(
    "What a Cactus seat may know (docs/rules/cactus.md, 'What each seat may see'), sent as "
    "'view' with every request. " + CARD_NAMES,
    {
        "game": const("cactus", "The game id."),
        "seat": _seat("Your seat."),
        "players": integer("Players at the table.", Cactus.min_players, Cactus.max_players),
        "round": integer("The round (a deal in pagat), from 1.", 1),
        "turn": integer("Turns begun this round; 0 before the first.", 0),
        "dealer": _seat("The dealer of this round."),
        "to_move": _seat("Whose turn it is (or was, once the round is over)."),
        "phase": string(
            "Where the round stands: initial_peek (PG-1), turn (draw or take, CA-5), drawn "
            "or taken (the card in hand), snap (CA-8), power (PG-3), call (CA-7), over.",
            PHASES,
        ),
        "decision": nullable(
            string("What you must decide now.", DECISIONS),
            "What you must decide now, the kind of this request (the phase, or 'snap' and "
            "'call' when others are asked too); null when nothing is asked of you.",
        ),
        "layouts": array(
            array(SLOT_CARD, "That seat's slots, in the order the layout holds them."),
            "Every layout, by seat (CA-3): its slot ids and, for each, the card you know lies "
            "there (seen by you and not moved unseen since), else null.",
        ),
        "discard": ref("cards", "The discard pile, face up, its top card last (CA-4)."),
        "stock": integer("Cards left in the face-down stock (CA-4).", 0),
        "drawn": nullable(
            _card("The card in your hand."),
            "The card you drew or took this turn and still hold (decisions 'drawn', "
            "'taken'); null otherwise.",
        ),
        "called_by": nullable(
            _seat("Who called."), "Who called 'cactus' this round (CA-7); null if nobody yet."
        ),
        "values": obj(
            "Points of each rank at the end of a round (CA-2, option values).",
            {rank: integer(f"Points of rank {rank}.") for rank in RANKS},
        ),
        "scores": _scores(
            "The match score so far, by the option scoring: one of four shapes (CL-8, PG-5)."
        ),
        "events": array(
            one_of_tagged(
                "Something that happened, as you saw it.", {k: event_ref(k) for k in EVENTS}
            ),
            "What you observed since your last answer, oldest first.",
        ),
    },
    {
        "locked_slots": array(
            SLOT,
            "Decision 'snap' only: your penalty cards you may not throw yet (CL-5).",
        ),
        "power": string(
            "Decision 'power' only: the power of the card you discarded (PG-3).", POWER_NAMES
        ),
        "eight_offer": const(
            True,
            "Decision 'turn' only, present when true: the 8 passed on to you lets you peek at "
            "one of your cards first (CL-3).",
        ),
    },
)
