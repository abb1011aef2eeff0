"""Président's options: the option set (PR-1, PR-11, PR-12 and the variants PV-1..16 of
docs/rules/president.md, each variant an option), the sub-options and contradictions refused,
the presets (named bundles of options), the resolution of raw options, and :class:`Rules`,
the flags a match derives from its options once so that the hot path reads plain booleans.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from arena.games import options as opts
from arena.games.base import JSON, OptionsError
from arena.games.president.deck import Spec, deck_spec

DEFAULT_ROUNDS = 5  # PR-12
DEFAULT_MAX_ROUNDS = 50  # ruling: the cap of a `target` match when none is given
MIN_PLAYERS_TWO_DECKS = 6  # PV-16: two decks are for more than five players
MIN_PLAYERS_TABULA_RASA = 5  # PV-5: "s'il y a plus de quatre joueurs"


@dataclass(frozen=True)
class PresidentOptions:
    # each option's doc is what the API and the tournament form show; the bounds repeat
    # check_options for the schema (tests/test_game_options.py checks that they agree)
    deck: int = opts.option(  # PR-1: 52 or 32
        52, choices=(52, 32), doc="Cards per deck: 52, or 32 (7 up to ace, the 7s strongest)."
    )
    decks: int = opts.option(  # PV-16: 1 or 2
        1, choices=(1, 2), doc="Decks shuffled together: 1, or 2 for six players or more."
    )
    rounds: int | None = opts.option(  # PR-12: default DEFAULT_ROUNDS when no target
        None, minimum=1, doc=f"Rounds in a match (empty: {DEFAULT_ROUNDS}); not with target."
    )
    target: int | None = opts.option(  # PR-12
        None, minimum=1, doc="Play until a total score reaches this, instead of fixed rounds."
    )
    max_rounds: int | None = opts.option(  # PR-12: only with target
        None,
        minimum=1,
        doc=f"Most rounds of a target match (empty: {DEFAULT_MAX_ROUNDS}); only with target.",
    )
    later_lead: Literal["trou_du_cul", "after_dealer"] = opts.option(  # PR-11
        "trou_du_cul",
        doc="Who leads from the second round on: the Trou du Cul, or the seat after the "
        "dealer (the Trou du Cul deals, so the Président).",
    )
    raise_count: bool = opts.option(  # PV-1
        False, doc="A play may hold more cards than the one it beats (three aces on two kings)."
    )
    passe: bool = opts.option(  # PV-2
        False,
        doc="Règle des 4: a rank may be played on itself; after two plays of one rank the "
        "next player must play that rank too or pass.",
    )
    passe_breakers: bool = opts.option(  # PV-2
        False, doc="With passe: a 2 (or a Joker) may break the forced rank."
    )
    jokers: bool = opts.option(  # PV-3
        False,
        doc="Two Jokers join the deck: a Joker alone beats any play and wins the trick, the "
        "coloured one beating the black; 2s no longer cut.",
    )
    no_finish_on_joker: bool = opts.option(  # PV-3
        False, doc="With jokers: a player who finishes on a Joker becomes Trou du Cul."
    )
    joker_wild: bool = opts.option(  # PV-3
        False, doc="With jokers: a Joker only completes a set of another rank, never alone."
    )
    no_twos_cut: bool = opts.option(  # PV-4
        False, doc="2s (the strongest rank) do not end the trick by themselves."
    )
    no_finish_on_two: bool = opts.option(  # PV-4
        False, doc="A player who finishes on the strongest rank (2s) becomes Trou du Cul."
    )
    quitte_ou_double: bool = opts.option(  # PV-6
        False,
        doc="Equal plays allowed; after two identical plays the next player must match "
        "them exactly or pass. Not with passe.",
    )
    revolution: bool = opts.option(  # PV-7
        False,
        doc="Four of a kind (seven cards with two decks) reverses the rank order until the "
        "round ends; another one restores it.",
    )
    revolution_lasts: bool = opts.option(  # PV-7
        False, doc="With revolution: a reversed order lasts into the next rounds."
    )
    eight_clears: bool = opts.option(  # PV-11
        False, doc="Playing 8s clears the trick; the same player leads again."
    )
    tabula_rasa: bool = opts.option(  # PV-5
        False,
        doc="More than four players: a rank may be played on itself; once every card of a "
        "rank lies on the trick, its last player leads a new trick (not for four at once).",
    )
    coup_d_etat: bool = opts.option(  # PV-8
        False,
        doc="With jokers: four of a kind and a Joker, or three and two Jokers, make the "
        "player Président at once and end the round; the deposed Président takes their place.",
    )
    guillotine: bool = opts.option(  # PV-8
        False,
        doc="With jokers: four of a kind and two Jokers make the player Président at once "
        "and end the round; they name the Vice-Président and the Trou du Cul.",
    )
    putsch: bool = opts.option(  # PV-9
        False,
        doc="The Trou du Cul may cancel every exchange after the deal: finishing Président "
        "scores one more; failing costs a point and their 4 best cards next round.",
    )
    jeu_blanc: bool = opts.option(  # PV-10
        False,
        doc="From the second round: a player dealt nothing above 10 (no J, Q, K, A, 2 or "
        "Joker) becomes Président without play; those above move down one place.",
    )
    wizz: bool = opts.option(  # PV-12
        False,
        doc="A play may hold more cards or repeat the rank; repeating it skips the next "
        "player, and one more per extra card. Not with passe or quitte_ou_double.",
    )
    suites: bool = opts.option(  # PV-13
        False,
        doc="Runs of three or more consecutive ranks, one, two or three cards each, may be "
        "led; only a higher run of the same shape beats one.",
    )
    rapidite: bool = opts.option(  # PV-14
        False,
        doc="Out of turn, a player holding every other card of the rank just played may "
        "throw them at once; the trick goes on with the larger count. Not with menteur.",
    )
    menteur: bool = opts.option(  # PV-15
        False,
        doc="Président-Menteur: cards are laid face down with an announced rank and count; "
        "anyone may call menteur, and the loser of the call picks up the trick.",
    )

    @property
    def round_limit(self) -> int:
        """The number of rounds of a `rounds` match, the cap of a `target` match."""
        if self.target is None:
            return DEFAULT_ROUNDS if self.rounds is None else self.rounds
        return DEFAULT_MAX_ROUNDS if self.max_rounds is None else self.max_rounds


# each sub-option and the option it refines (refused alone)
SUB_OPTIONS = (
    ("passe_breakers", "passe"),
    ("no_finish_on_joker", "jokers"),
    ("joker_wild", "jokers"),
    ("revolution_lasts", "revolution"),
    ("coup_d_etat", "jokers"),  # PV-8: "avec jokers"
    ("guillotine", "jokers"),
)
# pairs of options that say contradictory things, and why (refused together)
CONTRADICTIONS = (
    ("passe", "quitte_ou_double", "both say what must follow two equal plays; choose one"),
    ("wizz", "passe", "an equal play skips the next player (PV-12) or binds them (PV-2)"),
    (
        "wizz",
        "quitte_ou_double",
        "an equal play skips the next player (PV-12) or binds them (PV-6)",
    ),
    (
        "menteur",
        "rapidite",
        "a rapidité completes a rank the table sees (PV-14); menteur lays every card face "
        "down (PV-15)",
    ),
    (
        "menteur",
        "coup_d_etat",
        "a coup d'état is shown to make its player Président (PV-8); menteur lays every "
        "card face down (PV-15)",
    ),
    (
        "menteur",
        "guillotine",
        "a guillotine is shown to make its player Président (PV-8); menteur lays every "
        "card face down (PV-15)",
    ),
)

# Named bundles of options (docs/rules/president.md, "Presets"); any option may be added
PRESETS: dict[str, dict[str, JSON]] = {
    "classique": {},  # PR-1..12: the base rules of Wikilivres' « Le Président »
    "regle_des_4": {"passe": True, "passe_breakers": True},  # PV-2, Wikilivres' "Option"
    "wizz": {"wizz": True, "revolution": True},  # PV-12, PV-7: Wikilivres' "Le Wizz"
    "revolutionnaire": {  # PV-3, PV-7, PV-8, PV-9, PV-10: Wikilivres' rules of power
        "jokers": True,
        "revolution": True,
        "coup_d_etat": True,
        "guillotine": True,
        "putsch": True,
        "jeu_blanc": True,
    },
    "menteur": {"menteur": True},  # PV-15: Président-Menteur
}
PRESET_DOCS: dict[str, str] = {
    "classique": "The base rules of the Wikilivres page: one deck, sets of one rank beaten "
    "by a higher rank, 2s cut, roles and exchanges, five rounds.",
    "regle_des_4": "The base rules with Wikilivres' own option, the règle des 4: a rank may "
    "be played on itself, two in a row force that rank or a pass; a 2 breaks it.",
    "wizz": "Wikilivres' Wizz: more cards or the same rank may follow, the same rank skips "
    "players; no Joker; four of a kind makes a revolution.",
    "revolutionnaire": "Jokers and every change of power on Wikilivres: revolution, coup "
    "d'état, guillotine, putsch and jeu blanc.",
    "menteur": "Président-Menteur: every card is laid face down under an announced rank "
    "and count, and anyone may call menteur.",
}


def check_options(o: PresidentOptions) -> None:
    """Game-level validation: values in range, no sub-option alone, no contradiction."""
    if o.deck not in (52, 32):
        raise OptionsError(f"president option 'deck' must be 52 or 32, not {o.deck!r}")
    if o.decks not in (1, 2):
        raise OptionsError(f"president option 'decks' must be 1 or 2, not {o.decks!r}")
    for name in ("rounds", "target", "max_rounds"):
        value = getattr(o, name)
        if value is not None and value < 1:
            raise OptionsError(f"president option {name!r} must be at least 1, not {value!r}")
    for sub, parent in SUB_OPTIONS:
        if getattr(o, sub) and not getattr(o, parent):
            raise OptionsError(
                f"president option {sub!r} refines {parent!r}: set {parent!r} too or drop {sub!r}"
            )
    for a, b, why in CONTRADICTIONS:
        if getattr(o, a) and getattr(o, b):
            raise OptionsError(f"president options {a!r} and {b!r} contradict each other: {why}")
    if o.target is not None and o.rounds is not None:
        raise OptionsError(
            "president options 'rounds' and 'target' contradict each other: a match is a "
            "number of rounds or played to a target score (capped by 'max_rounds')"
        )
    if o.max_rounds is not None and o.target is None:
        raise OptionsError(
            "president option 'max_rounds' caps a 'target' match: set 'target' too, or use "
            "'rounds' for a fixed number of rounds"
        )


MAX_RESOLVED = 256
_RESOLVED: dict[tuple[tuple[str, str, JSON], ...], PresidentOptions] = {}


def resolve(
    game_id: str, presets: Mapping[str, Mapping[str, JSON]], options: object
) -> PresidentOptions:
    """Raw options (a preset and any options) resolved and checked.  Resolving reads the
    dataclass's type hints, which costs more than a short match of steps: the result is
    remembered for options made of plain scalars."""
    key = _options_key(options)
    resolved = _RESOLVED.get(key) if key is not None else None
    if resolved is None:
        resolved = opts.resolve(PresidentOptions, game_id, presets, options)
        check_options(resolved)
        if key is not None and len(_RESOLVED) < MAX_RESOLVED:
            _RESOLVED[key] = resolved
    return resolved


def _options_key(options: object) -> tuple[tuple[str, str, JSON], ...] | None:
    """A hashable key for raw options of plain scalars (the type is part of the key: true
    is not 1), else None."""
    if options is None:
        return ()
    if not isinstance(options, dict):
        return None
    key = []
    for name, value in options.items():
        if not isinstance(name, str) or not (value is None or type(value) in (bool, int, str)):
            return None
        key.append((name, type(value).__name__, value))
    return tuple(sorted(key))


@dataclass(frozen=True)
class Rules:
    """What a match's options mean for play, derived once per options (:func:`rules_for`);
    the state copies these flags as its own attributes, so the hot path reads each one as
    cheaply as any other field of the state."""

    wild: bool  # PV-3 joker_wild
    # PR-7 ruling: with Jokers the 2s do not cut (Wikilivres: the cut cannot apply with
    # Jokers), so a Joker may still be put on them.
    twos_cut: bool
    runs_bind: bool  # PV-2, PV-6: a run of equal plays binds the next player
    equal_plays: bool  # equal rank on equal rank: PV-2, PV-6, PV-5, PV-12
    # PV-7: the cards of one play that make a revolution, None without the option
    revolution_size: int | None
    menteur: bool  # PV-15: cards laid face down, announced
    # no Joker, no raised count, no run, no announcement: legal plays take the short path
    plain: bool
    count_trick: bool  # PV-5, PV-14: the natural cards of each rank on the trick are counted
    extra_settle: bool  # a play has more consequences than the base rules' (President._settle)
    # every action of a turn is a pass or a set of one rank: no run (PV-13), no coup
    # (PV-8), no announcement (PV-15)
    sets_only: bool
    extra_view: bool  # the view has more than the base rules' keys
    # the ranks whose play ends the trick at once, by orientation (normal, reversed):
    # the strongest rank (PR-7; ruling: the strongest of the order in force, so the 7
    # of the 32-card deck and the 3 in a revolution), the coloured Joker (PV-3; ruling:
    # the black one leaves the trick open to it), the 8s (PV-11)
    cut_ranks: tuple[frozenset[int], frozenset[int]]


def spec_for(o: PresidentOptions) -> Spec:
    """The deck configuration of the options (PR-1, PV-3, PV-16)."""
    return deck_spec(o.deck, o.decks, o.jokers, o.joker_wild)


@functools.lru_cache(maxsize=MAX_RESOLVED)
def rules_for(o: PresidentOptions) -> Rules:
    """The flags of :class:`Rules` for options ``o``."""
    spec = spec_for(o)
    twos_cut = not o.no_twos_cut and not o.jokers
    runs_bind = o.passe or o.quitte_ou_double
    count_trick = o.tabula_rasa or o.rapidite

    def cuts(order: tuple[int, ...]) -> frozenset[int]:
        return frozenset(
            ([order[-1]] if twos_cut else [])
            + ([spec.n_ranks + 1] if o.jokers else [])
            + ([spec.eight] if o.eight_clears else [])
        )

    return Rules(
        wild=o.joker_wild,
        twos_cut=twos_cut,
        runs_bind=runs_bind,
        equal_plays=runs_bind or o.tabula_rasa or o.wizz,
        revolution_size=spec.revolution_size if o.revolution else None,
        menteur=o.menteur,
        plain=not (o.jokers or o.raise_count or o.wizz or o.suites or o.menteur),
        count_trick=count_trick,
        extra_settle=(runs_bind or count_trick or o.wizz or o.rapidite or o.suites or o.menteur),
        sets_only=not (o.suites or o.coup_d_etat or o.guillotine or o.menteur),
        extra_view=o.suites or o.putsch or o.menteur,
        cut_ranks=(cuts(spec.order[0]), cuts(spec.order[1])),
    )
