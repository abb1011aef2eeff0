"""What a Président bot receives (``view``, its ``events``) and answers (the actions), as
JSON Schema: rules PR-1..12 and the variants PV-1..16 of docs/rules/president.md.

One schema holds for every option and preset: a key or an action that only some variants
bring is optional, and its description names the option.  ``DEFS`` holds the pieces the
others refer to (``ref``), ``EVENTS`` and ``ACTIONS`` one schema per type.  The module's
dicts are read-only; :func:`arena.games.schemas.document` hands out copies.
"""

from __future__ import annotations

from arena.games import cards
from arena.games.president.deck import JOKERS, ORDER_52
from arena.games.president.engine import President
from arena.games.president.rounds import NEUTRAL, PRESIDENT, TROU, VICE_PRESIDENT, VICE_TROU
from arena.games.president.special_plays import MAX_RUN_WIDTH, MIN_RUN
from arena.games.schema_kit import (
    Schema,
    action_ref,
    array,
    boolean,
    described,
    event_ref,
    integer,
    nullable,
    obj,
    one_of_tagged,
    pick,
    ref,
    string,
    tagged,
)

# the request kinds (the variants' reaction windows and choices included) and the phases
DECISIONS = ("play", "exchange", "rapidite", "call", "lay", "putsch", "guillotine")
PHASES = (*DECISIONS, "over")
ROLES = (PRESIDENT, VICE_PRESIDENT, NEUTRAL, VICE_TROU, TROU)
RANKS = (*ORDER_52, *JOKERS)  # the 32-card deck's ranks are among them (PR-1)
CARD_NAMES = (*cards.NAMES, *JOKERS)
MAX_SEAT = President.max_players - 1
MAX_DECKS = 2  # PV-16
MAX_SET = 4 * MAX_DECKS + 1  # PV-3 joker_wild: a full rank and a Joker
TRICK_ENDS = ("passes", "cut", "tabula_rasa", "wizz", "menteur")
ROUND_ENDS = ("coup_d_etat", "guillotine", "putsch", "jeu_blanc", "menteur_cap")


def _seat(description: str) -> Schema:
    return integer(description, 0, MAX_SEAT)


def _cards(description: str) -> Schema:
    return ref("cards", description)


def _rank(description: str, jokers: bool = True) -> Schema:
    return string(description, RANKS if jokers else ORDER_52)


def _per_seat(description: str, minimum: int | None = 0) -> Schema:
    return array(integer("One seat's number.", minimum), description)


CARD_TEXT = (
    "Cards are named rank then suit ('9H', '10S', 'AD'; suits never matter, PR-2) and the "
    "Jokers 'BJ' (black) and 'RJ' (coloured, PV-3); a rank is the name without its suit "
    "('9', '10', 'A') or a Joker's name."
)
DEFS: dict[str, Schema] = {
    "cards": array(string("A card.", CARD_NAMES), "Cards: " + CARD_TEXT),
}
SEAT = _seat("The seat of the player who did it.")
COUNT = integer("How many cards.", 1, MAX_SET)
JOKER_COUNT = integer(
    "PV-3 joker_wild: how many of the cards are Jokers completing the set.", 0, 2 * MAX_DECKS
)
PLAY_FIELDS: dict[str, Schema] = {
    "rank": _rank("The rank played: a natural rank, or 'BJ' / 'RJ' for a Joker alone (PV-3)."),
    "count": COUNT,
}
RUN_FIELDS: dict[str, Schema] = {
    "rank": _rank("The run's weakest rank, in the order in force.", jokers=False),
    "length": integer(f"How many consecutive ranks ({MIN_RUN} or more).", MIN_RUN),
    "count": integer("Cards of each rank: 1, 2 or 3.", 1, MAX_RUN_WIDTH),
}
COUP_FIELDS: dict[str, Schema] = {
    "rank": _rank("The rank of four (or three) of a kind.", jokers=False),
    "count": integer("Cards in all, the Jokers included.", 5, 6),
    "jokers": integer("How many of them are Jokers.", 1, 2),
}

# -- actions ----------------------------------------------------------------------------------
ACTIONS: dict[str, Schema] = {
    "pass": tagged(
        "pass",
        "PR-6: do not play now (you may play later in the trick); in a reaction window "
        "(rapidite, call) or before the exchange (putsch): do nothing.",
        {},
    ),
    "play": tagged(
        "play",
        "PR-5: play count cards of one rank (suits never matter: the engine picks which). "
        "Leading: any count; following: as many cards of a higher rank (PV-1, PV-2, PV-6, "
        "PV-12 allow more or equal). With menteur (PV-15) this is an announcement; its cards "
        "are laid next.",
        PLAY_FIELDS,
        {
            "jokers": described(
                JOKER_COUNT,
                "PV-3 joker_wild only, and then in every play: how many of the cards are "
                "Jokers completing the set.",
            )
        },
    ),
    "give": tagged(
        "give",
        "PR-10 (decision 'exchange'): the cards you give back, by rank (suits never matter), "
        "never a Joker.",
        {
            "ranks": array(
                _rank("A rank.", jokers=False),
                "The ranks of the cards given, one per card, weakest first in the normal "
                "order: two for the Président, one for the Vice-Président (four after a "
                "failed putsch, PV-9).",
                0,
                4,
            )
        },
    ),
    "run": tagged(
        "run",
        "PV-13 suites: length consecutive ranks, count cards of each, led or played on a run "
        "of the same shape (higher). With menteur (PV-15) an announcement.",
        RUN_FIELDS,
    ),
    "throw": tagged(
        "throw",
        "PV-14 rapidite (decision 'rapidite'): throw out of turn the cards that complete the "
        "rank just played.",
        {
            "rank": _rank("The rank just played.", jokers=False),
            "count": integer("The cards of it you throw: all the rest.", 1, 4 * MAX_DECKS),
        },
    ),
    "coup_d_etat": tagged(
        "coup_d_etat",
        "PV-8 coup_d_etat: four of a kind and a Joker, or three and two Jokers: you become "
        "Président at once and the round ends.",
        COUP_FIELDS,
    ),
    "guillotine": tagged(
        "guillotine",
        "PV-8 guillotine: four of a kind and two Jokers: you become Président at once and "
        "name the Vice-Président and the Trou du Cul (decision 'guillotine' next).",
        COUP_FIELDS,
    ),
    "name": tagged(
        "name",
        "PV-8 guillotine (decision 'guillotine'): the seats you name.",
        {"trou_du_cul": _seat("Who becomes Trou du Cul.")},
        {
            "vice_president": _seat(
                "Who becomes Vice-Président (absent with three players: there is none, PR-9)."
            )
        },
    ),
    "putsch": tagged(
        "putsch",
        "PV-9 (decision 'putsch', the Trou du Cul): cancel every exchange of this round.",
        {},
    ),
    "lay": tagged(
        "lay",
        "PV-15 menteur (decision 'lay'): lay count cards of this rank face down for your "
        "announcement (true or not); asked again until the announced number is laid.",
        {
            "rank": _rank("The rank of the cards laid (a Joker's name for a Joker)."),
            "count": integer("How many.", 1, MAX_SET),
        },
    ),
    "call": tagged(
        "call",
        "PV-15 menteur (decision 'call'): call 'menteur!' on the announcement just made.",
        {},
    ),
}

# -- events -----------------------------------------------------------------------------------
FACE_UP = _cards("The cards, face up.")
PLAY_EVENT = tagged(
    "play",
    "PR-5: someone played cards of one rank, face up.",
    {"seat": SEAT, **PLAY_FIELDS, "cards": FACE_UP},
    {"jokers": described(JOKER_COUNT, "PV-3 joker_wild: present when Jokers completed it.")},
)
PASS_EVENT = tagged("pass", "PR-6: someone passed.", {"seat": SEAT})
RUN_EVENT = tagged(
    "run", "PV-13: someone played a run, face up.", {"seat": SEAT, **RUN_FIELDS, "cards": FACE_UP}
)
THROW_EVENT = tagged(
    "throw",
    "PV-14: someone threw the rest of the rank out of turn, face up.",
    {"seat": SEAT, **pick(ACTIONS["throw"]["properties"], ["rank", "count"]), "cards": FACE_UP},
)
WIZZ_EVENT = tagged(
    "wizz",
    "PV-12: an equal play skipped players.",
    {"seat": SEAT, "skipped": array(_seat("A skipped seat."), "The seats skipped, in order.")},
)
COUP_EVENTS = {
    kind: tagged(
        kind,
        f"PV-8: someone played a {kind}, face up.",
        {"seat": SEAT, **COUP_FIELDS, "cards": FACE_UP},
    )
    for kind in ("coup_d_etat", "guillotine")
}
ANNOUNCE_FIELDS: dict[str, Schema] = {
    "rank": _rank("The rank announced (a run's weakest rank with suites)."),
    "count": integer("Cards announced (of each rank, for a run).", 1, MAX_SET),
}
ANNOUNCE_EVENT = tagged(
    "announce",
    "PV-15: someone laid cards face down under this announcement (the cards are not shown).",
    {"seat": SEAT, **ANNOUNCE_FIELDS},
    {
        "jokers": described(JOKER_COUNT, "PV-3 joker_wild: the Jokers the announcement claims."),
        "length": described(RUN_FIELDS["length"], "PV-13: the ranks of an announced run."),
    },
)
TRICK_EVENTS = {
    "play": PLAY_EVENT,
    "pass": PASS_EVENT,
    "run": RUN_EVENT,
    "throw": THROW_EVENT,
    "wizz": WIZZ_EVENT,
    **COUP_EVENTS,
    "announce": ANNOUNCE_EVENT,
}
RECEIVED = obj(
    "Cards given or received.",
    {
        "cards": _cards("The cards."),
        "forced": boolean(
            "Whether they were the forced strongest cards (PR-10), not a chosen give-back."
        ),
    },
)

EVENTS: dict[str, Schema] = {
    "deal": tagged(
        "deal",
        "PR-3: a round begins; the cards are gathered, shuffled and dealt.",
        {
            "round": integer("The round.", 1),
            "table": array(_seat("A seat."), "The seats clockwise in role order (PR-11)."),
            "dealer": _seat("The dealer."),
            "roles": array(
                nullable(string("A role.", ROLES)), "Each seat's role (PR-9), null in round 1."
            ),
            "reversed": boolean("Whether the order is reversed (PV-7 revolution_lasts)."),
            "hand_size": integer("Cards dealt to each player.", 0),
        },
    ),
    "hand": tagged(
        "hand",
        "PR-3: the hand dealt to you (only you see this event).",
        {"seat": SEAT, "cards": _cards("Your cards, weakest first.")},
    ),
    "leftover": tagged(
        "leftover",
        "PR-3: the cards left over, shown to all and set aside.",
        {"cards": _cards("The cards set aside.")},
    ),
    "putsch": tagged("putsch", "PV-9: the Trou du Cul cancelled every exchange.", {"seat": SEAT}),
    "jeu_blanc": tagged(
        "jeu_blanc",
        "PV-10: this seat was dealt nothing above 10 and becomes Président without play.",
        {"seat": SEAT},
    ),
    "exchange": tagged(
        "exchange",
        "PR-10: cards went from one player to another (who and how many).",
        {
            "giver": _seat("Who gave."),
            "receiver": _seat("Who received."),
            "count": integer("How many cards.", 0),
        },
    ),
    "exchange_cards": tagged(
        "exchange_cards",
        "PR-10: the cards of an exchange (only the two players see this event).",
        {
            "giver": _seat("Who gave."),
            "receiver": _seat("Who received."),
            "cards": _cards("The cards."),
        },
    ),
    **TRICK_EVENTS,
    "laid": tagged(
        "laid",
        "PV-15: the cards you laid face down for your announcement (only you see this event).",
        {"seat": SEAT, "cards": _cards("The cards laid.")},
    ),
    "menteur": tagged(
        "menteur",
        "PV-15: someone called 'menteur!'; the announced cards are turned over.",
        {
            "caller": _seat("Who called."),
            "seat": _seat("Who made the announcement."),
            "cards": _cards("The cards laid for it, now shown."),
            "lied": boolean("Whether the cards differ from the announcement."),
        },
    ),
    "pick_up": tagged(
        "pick_up",
        "PV-15: the loser of the call picks up the trick's cards.",
        {"seat": SEAT, "count": integer("How many cards.", 0)},
        {"cards": _cards("The cards picked up: only the one who picks them up sees them.")},
    ),
    "revolution": tagged(
        "revolution",
        "PV-7: four of a kind reversed the rank order (or restored it).",
        {"order": array(_rank("A rank.", jokers=False), "The rank order now, weakest first.")},
    ),
    "named": tagged(
        "named",
        "PV-8 guillotine: the seats the guillotine's player named.",
        {"seat": SEAT, "trou_du_cul": _seat("The Trou du Cul named.")},
        {"vice_president": _seat("The Vice-Président named (absent with three players).")},
    ),
    "out": tagged(
        "out",
        "PR-8: someone played their last card and left the round.",
        {
            "seat": SEAT,
            "place": integer("Their finishing place, 1 first.", 1, President.max_players),
            "forbidden": boolean(
                "Whether it was a forbidden finish (PV-3, PV-4): they take the last place free."
            ),
        },
    ),
    "trick_over": tagged(
        "trick_over",
        "PR-6, PR-7: the trick is over.",
        {
            "winner": _seat("Who won it."),
            "leader": _seat("Who leads the next trick (PR-8: the next one still in)."),
            "why": string(
                "Why: every other player passed (PR-6), a cut (PR-7, PV-3, PV-11), tabula rasa "
                "(PV-5), a wizz came round (PV-12), a call (PV-15).",
                TRICK_ENDS,
            ),
        },
    ),
    "round_over": tagged(
        "round_over",
        "PR-9, PR-12: the round is over.",
        {
            "round": integer("The round.", 1),
            "order": array(_seat("A seat."), "The finishing order, first to last."),
            "roles": array(string("A role.", ROLES), "Each seat's new role (PR-9), by seat."),
            "points": _per_seat("Points of this round (PR-12), by seat.", None),
            "scores": _per_seat("Total scores, by seat.", None),
        },
        {
            "ended_by": string(
                "Present when the round ended early: by a coup (PV-8), a failed putsch "
                "(PV-9), a jeu blanc (PV-10) or the menteur safety cap.",
                ROUND_ENDS,
            ),
            "putsch": obj(
                "PV-9: present after a putsch.",
                {
                    "seat": _seat("The putschist."),
                    "succeeded": boolean("Whether they finished Président."),
                },
            ),
        },
    ),
    "match_over": tagged(
        "match_over",
        "PR-12: the match is over.",
        {
            "scores": _per_seat("Final scores, by seat.", None),
            "ranks": _per_seat("Each seat's rank, 1 the best (ties share a rank)."),
        },
    ),
}


# -- the view ---------------------------------------------------------------------------------
VIEW: Schema = obj(
    "What a Président seat may know (docs/rules/president.md, 'What each seat may see'), "
    "sent as 'view' with every request. " + CARD_TEXT,
    {
        "seat": _seat("Your seat."),
        "round": integer("The round, from 1.", 1),
        "phase": string(
            "Where the round stands: play (a turn), exchange (PR-10), and the variants' "
            "moments: rapidite (PV-14), lay and call (PV-15), putsch (PV-9), guillotine "
            "(PV-8); over.",
            PHASES,
        ),
        "turn": nullable(
            _seat("Whose turn it is."),
            "Whose turn it is; null when nobody plays a turn (an exchange, a putsch "
            "decision, a menteur call, the end).",
        ),
        "cards": _cards("Your hand, weakest first in the order in force, Jokers last."),
        "hand_sizes": _per_seat("Each hand's size, by seat."),
        "rank_order": array(
            _rank("A rank.", jokers=False),
            "The natural ranks, weakest first, in the order in force (PR-2; reversed by a "
            "revolution, PV-7). Jokers beat them all (PV-3).",
        ),
        "reversed": boolean("Whether a revolution reversed the order (PV-7)."),
        "table": array(
            _seat("A seat."),
            "The seats clockwise from the Président (PR-11; in round 1 from seat 0): who plays "
            "after whom.",
        ),
        "dealer": _seat("The dealer of this round (PR-4, PR-11)."),
        "roles": array(
            nullable(string("A role.", ROLES)),
            "Each seat's role from the last round (PR-9), by seat; null in round 1.",
        ),
        "scores": _per_seat("Total scores so far (PR-12), by seat.", None),
        "leftover": obj(
            "The cards set aside for the round (PR-3), face up.",
            {"cards": _cards("The cards set aside.")},
        ),
        "places": array(
            nullable(_seat("A seat.")),
            "Finishing places so far (PR-8): the seat in each place, first to last; null for "
            "a place nobody has taken yet.",
        ),
        "played": obj(
            "The cards played this round.",
            {
                "cards": _cards(
                    "Every card played face up this round, in order (empty with menteur)."
                )
            },
            {"face_down": integer("PV-15 menteur: how many cards lie face down on the pile.", 0)},
        ),
        "trick": obj(
            "The current trick.",
            {
                "rank": nullable(
                    _rank("The rank to beat."),
                    "The rank to beat (a run's weakest rank); null before the lead.",
                ),
                "count": integer("Cards in the play to beat (of each rank, for a run).", 0),
                "jokers": integer("PV-3 joker_wild: the Jokers in the play to beat.", 0),
                "by": nullable(_seat("Who played it."), "Who played it; null before the lead."),
                "passes": integer("Passes in a row since it was played (PR-6).", 0),
                "forced": boolean(
                    "PV-2, PV-6: two equal plays in a row bind the next player (same rank, or "
                    "the same play exactly with quitte_ou_double)."
                ),
                "plays": array(
                    one_of_tagged(
                        "A play, a pass or an announcement.",
                        {kind: event_ref(kind) for kind in TRICK_EVENTS},
                    ),
                    "What happened in this trick so far, in order (the events play, pass, run, "
                    "throw, wizz, coup_d_etat, guillotine, announce).",
                ),
            },
            {
                "length": integer(
                    "PV-13 suites only: ranks in the play to beat, 1 for a set, 3 or more for a "
                    "run.",
                    1,
                )
            },
        ),
        "exchange": nullable(
            obj(
                "PR-10: your exchange of this round.",
                {
                    "gave": nullable(RECEIVED, "The cards you gave; null if none yet."),
                    "received": nullable(RECEIVED, "The cards you received; null if none yet."),
                },
            ),
            "Your exchange of this round (PR-10); null if you have none.",
        ),
        "events": array(
            one_of_tagged(
                "Something that happened, as you saw it.", {k: event_ref(k) for k in EVENTS}
            ),
            "What you observed since your last answer, oldest first.",
        ),
    },
    {
        "putsch": nullable(
            _seat("The putschist."),
            "Option putsch only (PV-9): the Trou du Cul who cancelled this round's exchanges; "
            "null if nobody did.",
        ),
        "face_down": obj(
            "Option menteur only (PV-15): the cards you laid face down on this trick.",
            {"cards": _cards("Your cards lying face down on the trick.")},
        ),
        "announcing": nullable(
            {
                "description": "The announcement.",
                "oneOf": [action_ref("play"), action_ref("run")],
            },
            "Option menteur only (PV-15): the announcement you are laying cards for (decision "
            "'lay'), as you chose it; else null.",
        ),
        "announced": nullable(
            event_ref("announce"),
            "Option menteur only (PV-15): the announcement the others may call (decision "
            "'call'); null when none is open.",
        ),
    },
)
