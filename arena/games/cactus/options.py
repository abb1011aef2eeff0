"""Cactus's options: every ruling that changes play (:class:`CactusOptions`), the card
values and powers they default to, the presets ``classic`` (French rules) and ``pagat``
(Vancouver rules, from Pagat's Cactus page) as option bundles, and the checks a set of
options must pass (:func:`resolve`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from arena.games import options as opts
from arena.games.base import JSON, OptionsError

DEFAULT_VALUES: dict[str, int] = {  # CA-2
    "A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7,
    "8": 8, "9": 9, "10": 10, "J": 10, "Q": 10, "K": 0,
}  # fmt: skip
PAGAT_POWERS: dict[str, str] = {  # PG-3
    "6": "peek", "7": "peek", "8": "peek",
    "9": "peek_other", "10": "peek_other", "J": "peek_other",
    "Q": "blind_swap",
}  # fmt: skip
POWER_NAMES = ("peek", "peek_other", "blind_swap")


@dataclass(frozen=True)
class CactusOptions:
    # each option's doc is what the API and the tournament form show; the bounds repeat
    # resolve_options for the schema (tests/test_game_options.py checks that they agree)
    decks: int | None = opts.option(  # CA-1: None = one deck up to 6 players, two for 7-8
        None,
        minimum=1,
        maximum=3,
        doc="Decks shuffled together, 1 to 3 (empty: one for up to 6 players, two for 7-8).",
    )
    values: dict[str, int] = opts.option(  # noqa: RUF009 (a field, made fresh) CA-2
        factory=lambda: dict(DEFAULT_VALUES),
        keys=tuple(DEFAULT_VALUES),
        doc="Points of each rank in a layout at the end of a round; ranks left out keep "
        "theirs (K 0, A 1, 2-10 their pips, J and Q 10).",
    )
    call: Literal["end_of_turn", "any_time"] = opts.option(  # CA-7
        "end_of_turn",
        doc='Who may call "cactus" to end the round: the player whose turn just ended, or '
        "any player after any turn.",
    )
    reaction_priority: Literal["seat_order", "random"] = opts.option(  # CA-9
        "seat_order",
        doc="Which snap counts when several seats snap at once: the first clockwise from the "
        "card's owner, or a random one (from the match's seed).",
    )
    initial_peek: Literal["bottom_row", "choose_two"] = opts.option(  # CL-1 / PG-1
        "bottom_row",
        doc="Before play each player sees their two bottom cards, or chooses two of their four.",
    )
    eight_power: bool = opts.option(  # CL-2: a stock-drawn 8 lets its drawer peek
        True, doc="An 8 drawn from the stock lets its drawer peek at one of their own cards."
    )
    passed_on_eight: bool = opts.option(  # CL-3
        True,
        doc="A stock-drawn 8 discarded unused lets the next player peek at one of their own "
        "cards. Needs eight_power.",
    )
    powers: dict[str, str] = opts.option(  # noqa: RUF009 (a field) PG-3: rank -> power
        factory=dict,
        keys=tuple(DEFAULT_VALUES),
        choices=POWER_NAMES,
        doc="Ranks whose discard gives a power: peek (an own card), peek_other (another "
        'player\'s card) or blind_swap, e.g. {"Q": "blind_swap"}.',
    )
    wrong_snap: Literal["stays", "returns"] = opts.option(  # CL-5 / PG-4
        "stays",
        doc="A card snapped on the wrong rank stays on the discard (a penalty card takes its "
        "slot) or goes back to its slot (penalty cards in new slots).",
    )
    penalty_cards: int = opts.option(  # CL-5 (the "kamikaze" fix uses 2) / PG-4 (2)
        1, minimum=0, maximum=4, doc="Unseen stock cards a wrong snap costs, 0 to 4."
    )
    snap_after_miss: bool = opts.option(  # PG-4 ruling
        False, doc="With wrong_snap returns: others may still snap after a wrong snap."
    )
    snap_chain: bool = opts.option(  # CL-4 / PG-4
        True,
        doc="A card thrown right on a snap opens a new snap window on its rank; off, one "
        "throw per discarded card.",
    )
    scoring: Literal["wins", "tas_de_merde", "maximus", "penalty"] = opts.option(  # CL-8 / PG-5
        "wins",
        doc="How a match is won: most rounds won (wins), lowest random tally (tas_de_merde), "
        "first to maximus_target points (maximus), lowest penalty points (penalty).",
    )
    rounds: int = opts.option(  # CL-8 wins and tas_de_merde
        5, minimum=1, doc="Rounds in a match scored by wins or tas_de_merde."
    )
    maximus_target: int = opts.option(  # CL-8 maximus
        5, minimum=1, doc="Points that win a maximus match (alone in the lead)."
    )
    target: int = opts.option(  # PG-6
        100, minimum=1, doc="Penalty points that end a penalty match."
    )
    max_rounds: int = opts.option(  # CL-8 maximus cap / PG-6 cap
        30, minimum=1, doc="Most rounds of a maximus or penalty match."
    )
    next_round: Literal["rotate", "lowest_score"] = opts.option(  # CA-11 / PG-6
        "rotate",
        doc="Who starts the next round: the seat after the dealer (who moves on one seat), or "
        "the round's lowest scorer; in maximus the seat after a correct caller.",
    )
    max_turns: int = opts.option(  # ruling: a round with no call ends after this many turns
        200, minimum=1, doc="Turns after which a round nobody called ends."
    )


PRESETS: dict[str, dict[str, JSON]] = {
    "classic": {},
    "pagat": {
        "initial_peek": "choose_two",
        "eight_power": False,
        "passed_on_eight": False,
        "powers": dict(PAGAT_POWERS),
        "wrong_snap": "returns",
        "penalty_cards": 2,
        "snap_after_miss": False,
        "snap_chain": False,
        "scoring": "penalty",
        "target": 100,
        "max_rounds": 50,
        "next_round": "lowest_score",
    },
}

PRESET_DOCS: dict[str, str] = {
    "classic": "French rules: see your bottom two cards, a drawn 8 lets you peek, a wrong "
    "snap stays on the discard, most rounds won out of 5.",
    "pagat": "Vancouver rules (Pagat): choose two cards to see, powers on 6 to Q, a wrong "
    "snap costs two cards, lowest penalty points when someone reaches 100.",
}


def resolve(game_id: str, options: Mapping[str, JSON] | None) -> CactusOptions:
    """Raw options (a preset and any options) resolved and checked."""
    raw = dict(options or {})
    if "values" in raw and isinstance(raw["values"], Mapping):
        unknown = sorted(set(raw["values"]) - set(DEFAULT_VALUES))
        if unknown:
            raise OptionsError(f"cactus option 'values' has unknown ranks {unknown}")
        raw["values"] = {**DEFAULT_VALUES, **raw["values"]}
    o = opts.resolve(CactusOptions, game_id, PRESETS, raw, default_preset="classic")
    if o.decks is not None and not 1 <= o.decks <= 3:
        raise OptionsError("cactus option 'decks' must be 1, 2 or 3")
    for rank, power in o.powers.items():
        if rank not in DEFAULT_VALUES or power not in POWER_NAMES:
            raise OptionsError(
                f"cactus option 'powers' maps ranks to {', '.join(POWER_NAMES)}; "
                f"got {rank!r}: {power!r}"
            )
    if o.eight_power and "8" in o.powers:
        raise OptionsError(
            "cactus options 'eight_power' and 'powers' both give the 8 a power: keep one"
        )
    if o.passed_on_eight and not o.eight_power:
        raise OptionsError("cactus option 'passed_on_eight' needs 'eight_power'")
    for name in ("rounds", "maximus_target", "target", "max_rounds", "max_turns"):
        if getattr(o, name) < 1:
            raise OptionsError(f"cactus option {name!r} must be at least 1")
    if not 0 <= o.penalty_cards <= 4:
        raise OptionsError("cactus option 'penalty_cards' must be between 0 and 4")
    return o
