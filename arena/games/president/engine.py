"""Président (Trou du Cul), game id ``president``: rules PR-1..12 and the variants PV-1..16
of docs/rules/president.md, each variant an option; presets are named bundles of them.

Actions (plain JSON; the legal list holds one canonical dict per choice):

- ``{"type": "pass"}``.
- ``{"type": "play", "rank": "9", "count": 2}``: two 9s.  Suits never matter (PR-2), so
  the cards of one rank are interchangeable and the engine picks which physical 9s go;
  the legal list has one entry per (rank, count), never one per subset of cards.
- Jokers keep their identity because black and coloured differ (PV-3): a Joker alone is
  ``{"type": "play", "rank": "BJ", "count": 1}`` (black) or ``"RJ"`` (coloured).  With
  ``joker_wild`` a Joker only completes a set and every play carries the key ``jokers``:
  ``{"type": "play", "rank": "9", "count": 3, "jokers": 1}`` is two 9s and a Joker
  (black Jokers are spent first, wild Jokers being equal).
- ``{"type": "give", "ranks": ["3", "7"]}``: the Président's (two cards, four after a
  failed putsch) or the Vice-Président's (one card) choice in the exchange, ranks weakest
  first in the deck's normal order.

The variants' actions, each in its own decision (``Request.kind``):

- PV-13: ``{"type": "run", "rank": "9", "length": 3, "count": 2}``: 9 9 10 10 J J (the
  weakest rank, consecutive in the order in force).
- PV-8: ``{"type": "coup_d_etat", "rank": "9", "count": 5, "jokers": 1}`` (four 9s and a
  Joker; three and two Jokers with ``"jokers": 2``), ``{"type": "guillotine", "rank": "9",
  "count": 6, "jokers": 2}``, then ``{"type": "name", "vice_president": 1,
  "trou_du_cul": 3}`` (decision ``guillotine``).
- PV-9 (decision ``putsch``, the Trou du Cul): ``{"type": "putsch"}`` or a pass.
- PV-14 (decision ``rapidite``): ``{"type": "throw", "rank": "10", "count": 2}`` or a pass.
- PV-15: a turn's ``play`` or ``run`` is an announcement; its cards are laid next, one rank
  at a time: ``{"type": "lay", "rank": "3", "count": 1}`` (decision ``lay``); then every
  other player holding cards answers ``{"type": "call"}`` or a pass (decision ``call``).

Card names are those of :mod:`arena.games.cards` plus ``"BJ"`` and ``"RJ"`` for the Jokers;
physical cards are ints (``deck * 52 + rank * 4 + suit`` as in ``cards``, Jokers after
all the decks) so that two decks stay distinct.

The state keeps each hand three ways: counts per rank (legal plays come from them), the
physical cards per rank (conservation) and the names in view order (so that a view only
refers to it).  Rank indices are in the normal order, weakest first; the Jokers are the
last two indices.  ``pos`` gives a rank's strength in the current order (PV-7 reverses
the naturals, never the Jokers).

Rulings where the rules are silent are marked "ruling" where they are implemented; the
main ones: the strongest rank of the current order is the one that cuts (PR-7: the 7 of
the 32-card deck, the 3 during a revolution) and the one a player may not finish on
(PV-4); with Jokers the 2s do not cut, so that a Joker can still be put on them (the seed:
the cut "cannot apply" with Jokers); the black Joker leaves the trick open to the coloured
one, which cuts; later rounds are dealt by the Trou du Cul, so ``after_dealer`` makes the
Président lead (PR-11).  The variants' rulings are listed in docs/rules/president.md ("How
the engine reads the variants").

A play's consequences (the cut, a revolution, going out, a tabula rasa, a wizz, a rapidité
window) are settled in one place, ``President._settle``, whether the cards were played, a
run, thrown out of turn or announced face down; ``_play`` keeps the base rules' part inline
as the hot path.  A round cut short (a coup, a failed putsch, a jeu blanc, the menteur cap)
ends through ``_end_round`` with the order it decides.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from arena.games import cards
from arena.games import options as opts
from arena.games.base import (
    DEAL_EVENT,
    JSON,
    Action,
    Game,
    OptionsError,
    Outcome,
    Request,
    State,
    competition_ranks,
    first_in_priority,
)

ORDER_52 = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")  # PR-2
ORDER_32 = ("8", "9", "10", "J", "Q", "K", "A", "7")  # PR-2, 32-card deck
JOKERS = ("BJ", "RJ")  # PV-3: black, coloured
DEFAULT_ROUNDS = 5  # PR-12
DEFAULT_MAX_ROUNDS = 50  # ruling: the cap of a `target` match when none is given
MIN_PLAYERS_TWO_DECKS = 6  # PV-16: two decks are for more than five players

PASS: Action = {"type": "pass"}
PLAY = "play"  # the kind of a turn's request

PRESIDENT = "president"
VICE_PRESIDENT = "vice_president"
NEUTRAL = "neutral"
VICE_TROU = "vice_trou_du_cul"
TROU = "trou_du_cul"


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
MIN_PLAYERS_TABULA_RASA = 5  # PV-5: "s'il y a plus de quatre joueurs"

# Named bundles of options (docs/rules/president.md, "Presets"); any option may be added
PRESETS: dict[str, dict[str, JSON]] = {
    "classique": {},  # PR-1..12: the base rules of seed 003
    "regle_des_4": {"passe": True, "passe_breakers": True},  # PV-2, the seed's "Option"
    "wizz": {"wizz": True, "revolution": True},  # PV-12, PV-7: the seed's "Le Wizz"
    "revolutionnaire": {  # PV-3, PV-7, PV-8, PV-9, PV-10: the seed's rules of power
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
    "regle_des_4": "The base rules with the seed's own option, the règle des 4: a rank may "
    "be played on itself, two in a row force that rank or a pass; a 2 breaks it.",
    "wizz": "The seed's Wizz: more cards or the same rank may follow, the same rank skips "
    "players; no Joker; four of a kind makes a revolution.",
    "revolutionnaire": "Jokers and every change of power in the seed: revolution, coup "
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


@dataclass(frozen=True)
class Spec:
    """Static facts of one deck configuration, shared by every match that uses it."""

    n_ranks: int  # natural ranks; the Jokers are indices n_ranks and n_ranks + 1
    rank_names: tuple[str, ...]  # by rank index, Jokers included
    rank_index: Mapping[str, int]
    deck: tuple[int, ...]  # physical cards, unshuffled
    names: tuple[str, ...]  # by physical card
    rank_of: tuple[int, ...]  # rank index by physical card
    eight: int  # rank index of the 8s (PV-11)
    high: tuple[int, ...]  # PV-10: the ranks above 10 in the normal order, Jokers included
    max_set: int  # most natural cards of one rank (4 per deck)
    revolution_size: int  # PV-7: cards of one play that make a revolution
    order: tuple[tuple[int, ...], tuple[int, ...]]  # naturals weakest first: normal, reversed
    pos: tuple[tuple[int, ...], tuple[int, ...]]  # strength by rank index: normal, reversed
    order_names: tuple[list[str], list[str]]  # view pieces: shared, never changed
    view_order: tuple[tuple[int, ...], tuple[int, ...]]  # naturals then Jokers, by order
    # plays[rank][count][jokers]: the one canonical dict of each play, shared by every
    # legal list (nobody mutates actions), so the hot path builds no dict
    plays: tuple[tuple[tuple[Action, ...], ...], ...]
    leads: tuple[tuple[tuple[Action, ...], ...], ...]  # [rank][k]: the plays of 1..k cards


@functools.cache
def deck_spec(deck_size: int, n_decks: int, jokers: bool, wild: bool = False) -> Spec:
    natural = ORDER_32 if deck_size == 32 else ORDER_52
    n = len(natural)
    rank_names = (*natural, *JOKERS)
    index = {name: i for i, name in enumerate(rank_names)}
    n_phys = cards.CARDS_PER_DECK * n_decks + (len(JOKERS) * n_decks if jokers else 0)
    names: list[str] = [""] * n_phys
    rank_of: list[int] = [0] * n_phys
    deck: list[int] = []
    for d in range(n_decks):
        for card in range(cards.CARDS_PER_DECK):
            phys = d * cards.CARDS_PER_DECK + card
            r = cards.rank(card)
            names[phys] = cards.name(card)
            if r in index:
                rank_of[phys] = index[r]
                deck.append(phys)
    if jokers:
        for d in range(n_decks):
            for colour, joker in enumerate(JOKERS):
                phys = cards.CARDS_PER_DECK * n_decks + d * len(JOKERS) + colour
                names[phys] = joker
                rank_of[phys] = n + colour
                deck.append(phys)
    normal = tuple(range(n))
    reverse = tuple(reversed(normal))
    plays = tuple(
        tuple(
            tuple(_play_action(name, count, j, wild) for j in range(min(count, 2 * n_decks) + 1))
            for count in range(4 * n_decks + 2)
        )
        for name in rank_names
    )
    pos_normal = tuple(range(n + 2))
    pos_reverse = (*(n - 1 - r for r in range(n)), n, n + 1)  # ruling: Jokers stay on top
    return Spec(
        n_ranks=n,
        rank_names=rank_names,
        rank_index=index,
        deck=tuple(deck),
        names=tuple(names),
        rank_of=tuple(rank_of),
        eight=index["8"],
        high=(*range(index["10"] + 1, n), n, n + 1),
        max_set=4 * n_decks,
        # PV-7 ruling from the seed: with several decks a revolution takes 7 or 8 cards
        revolution_size=4 if n_decks == 1 else 7,
        order=(normal, reverse),
        pos=(pos_normal, pos_reverse),
        order_names=([natural[r] for r in normal], [natural[r] for r in reverse]),
        view_order=((*normal, n, n + 1), (*reverse, n, n + 1)),
        plays=plays,
        leads=tuple(
            tuple(tuple(plays[r][c][0] for c in range(1, k + 1)) for k in range(4 * n_decks + 1))
            for r in range(n + 2)
        ),
    )


def _play_action(rank_name: str, count: int, jokers: int, wild: bool) -> Action:
    action: Action = {"type": "play", "rank": rank_name, "count": count}
    if wild:  # PV-3 joker_wild: every play says how many of its cards are Jokers
        action["jokers"] = jokers
    return action


@functools.cache
def _give_action(ranks: tuple[str, ...]) -> Action:
    return {"type": "give", "ranks": list(ranks)}


# the variants' actions, one canonical dict each (nobody mutates actions)
PUTSCH: Action = {"type": "putsch"}  # PV-9
CALL: Action = {"type": "call"}  # PV-15: "menteur!"
MIN_RUN = 3  # PV-13 ruling: a run has three ranks at least (the seed's shared runs need 3)
MAX_RUN_WIDTH = 3  # PV-13: runs of single cards, pairs or triples
# PV-15 ruling: a safety cap on announcements in one round, this many per card dealt (cards
# go back to hands, so two bots that always lie and always call could play for ever; every
# announcement lays a card at least); the round then ends as it stands
MENTEUR_PLAYS_PER_CARD = 2


@functools.cache
def _run_action(rank_name: str, length: int, count: int) -> Action:
    """PV-13: ``length`` consecutive ranks from ``rank_name`` up, ``count`` cards of each."""
    return {"type": "run", "rank": rank_name, "length": length, "count": count}


@functools.cache
def _throw_action(rank_name: str, count: int) -> Action:
    """PV-14: the cards that complete the rank, thrown out of turn."""
    return {"type": "throw", "rank": rank_name, "count": count}


@functools.cache
def _coup_action(kind: str, rank_name: str, naturals: int, jokers: int) -> Action:
    """PV-8: ``naturals`` cards of a rank and ``jokers`` Jokers (``count`` in all)."""
    return {"type": kind, "rank": rank_name, "count": naturals + jokers, "jokers": jokers}


@functools.cache
def _lay_action(rank_name: str, count: int) -> Action:
    """PV-15: ``count`` cards of a rank laid face down (a Joker's rank is its name)."""
    return {"type": "lay", "rank": rank_name, "count": count}


@functools.cache
def _name_action(vice_president: int | None, trou_du_cul: int) -> Action:
    """PV-8 guillotine: the seats named; no Vice-Président with 3 players (PR-9)."""
    if vice_president is None:
        return {"type": "name", "trou_du_cul": trou_du_cul}
    return {"type": "name", "vice_president": vice_president, "trou_du_cul": trou_du_cul}


MAX_RESOLVED = 256
_RESOLVED: dict[tuple[tuple[str, str, JSON], ...], PresidentOptions] = {}


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


def roles_for(n_players: int) -> tuple[str, ...]:
    """PR-9: the role of each finishing place, first to last."""
    if n_players == 3:
        return (PRESIDENT, NEUTRAL, TROU)
    middle = (NEUTRAL,) * (n_players - 4)
    return (PRESIDENT, VICE_PRESIDENT, *middle, VICE_TROU, TROU)


class PresidentState(State):
    options: PresidentOptions

    def __init__(self, n_players: int, seed: int, options: PresidentOptions, spec: Spec):
        super().__init__(n_players, seed, options)
        self.spec = spec
        n = n_players
        self.wild = options.joker_wild
        # PR-7 ruling: with Jokers the 2s do not cut (the seed: the cut cannot apply with
        # Jokers), so a Joker may still be put on them.
        self.twos_cut = not options.no_twos_cut and not options.jokers
        # PV-2, PV-6: a run of equal plays binds the next player
        self.runs_bind = options.passe or options.quitte_ou_double
        # equal rank on equal rank: PV-2, PV-6, PV-5, PV-12
        self.equal_plays = self.runs_bind or options.tabula_rasa or options.wizz
        # PV-7: the cards of one play that make a revolution, None without the option
        self.revolution_size = spec.revolution_size if options.revolution else None
        self.menteur = options.menteur  # PV-15: cards laid face down, announced
        # no Joker, no raised count, no run, no announcement: legal plays take the short path
        self.plain = not (
            options.jokers or options.raise_count or options.wizz or options.suites or self.menteur
        )
        # PV-5, PV-14: the natural cards of each rank on the trick are counted
        self.count_trick = options.tabula_rasa or options.rapidite
        # a play has more consequences than the base rules' (see President._settle)
        self.extra_settle = (
            self.runs_bind
            or self.count_trick
            or options.wizz
            or options.rapidite
            or options.suites
            or self.menteur
        )
        # every action of a turn is a pass or a set of one rank: no run (PV-13), no coup
        # (PV-8), no announcement (PV-15)
        self.sets_only = not (
            options.suites or options.coup_d_etat or options.guillotine or self.menteur
        )
        # the view has more than the base rules' keys
        self.extra_view = options.suites or options.putsch or self.menteur
        # the ranks whose play ends the trick at once, by orientation (normal, reversed):
        # the strongest rank (PR-7; ruling: the strongest of the order in force, so the 7
        # of the 32-card deck and the 3 in a revolution), the coloured Joker (PV-3; ruling:
        # the black one leaves the trick open to it), the 8s (PV-11)
        self.cut_ranks = tuple(
            frozenset(
                ([order[-1]] if self.twos_cut else [])
                + ([spec.n_ranks + 1] if options.jokers else [])
                + ([spec.eight] if options.eight_clears else [])
            )
            for order in spec.order
        )
        self.round = 0
        self.phase = "play"  # "exchange", "play", "over"
        self.table: list[int] = list(range(n))  # seats clockwise (PR-11)
        self.after: list[int] = [(s + 1) % n for s in range(n)]
        self.dealer = 0
        self.roles: list[str | None] = [None] * n
        self.scores = [0] * n
        self.reversed = False  # PV-7
        self.counts: list[list[int]] = [[0] * (spec.n_ranks + 2) for _ in range(n)]
        self.hands: list[list[list[int]]] = [
            [[] for _ in range(spec.n_ranks + 2)] for _ in range(n)
        ]
        self.sizes = [0] * n
        self.hand_view: list[list[str]] = [[] for _ in range(n)]  # names, view order
        self.active = [True] * n
        self.n_active = n
        self.places: list[int | None] = [None] * n  # PR-8: finishing order
        self.front = 0  # next place for a player who goes out
        self.back = n - 1  # next place for a forbidden finish (PV-3, PV-4)
        self.leftover: list[int] = []  # PR-3
        self.leftover_names: list[str] = []
        self.leftover_view: dict[str, JSON] = {"cards": []}
        self.pile: list[int] = []  # cards played this round, face up
        self.pile_names: list[str] = []
        self.played_view: dict[str, JSON] = {"cards": self.pile_names}
        # PR-10: seat that gives back -> (the seat it gives to, how many cards)
        self.exchange_due: dict[int, tuple[int, int]] = {}
        self.exchanged: list[dict[str, JSON] | None] = [None] * n
        self.leader = 1 % n
        self.turn: int | None = None
        # the current trick
        self.top_rank: int | None = None
        self.top_count = 0
        self.top_jokers = 0
        self.last_player: int | None = None
        self.passes = 0
        self.run = 0  # PV-2 / PV-6: length of the run of equal plays ending the trick
        self.top_length = 1  # PV-13: ranks in the play to beat (a run has three or more)
        self.trick: list[dict[str, JSON]] = []
        # PV-5, PV-14: natural cards of each rank on the trick, and in the round (the deck's
        # less those set aside, PR-3)
        self.on_trick = [0] * spec.n_ranks
        self.in_round = [spec.max_set] * spec.n_ranks
        # PV-14: the seats asked in a rapidité window (priority order), the rank and count
        self.window: list[int] = []
        self.window_rank = 0
        self.window_need = 0
        # PV-9: this round's putschist; the failed putschist who owes 4 cards next round
        self.putschist: int | None = None
        self.putsch_due: int | None = None
        # PV-8: the guillotine's player and the order before it, while they name seats
        self.guillotine: tuple[int, list[int]] | None = None
        # PV-15: each seat's cards face down on this trick (physical, and as a view piece);
        # the trick's cards in order; the announcement being laid (seat, action, cards to
        # lay) and the one awaiting calls (seat, action, the cards laid for it)
        self.down: list[list[int]] = [[] for _ in range(n)]
        self.down_view: list[dict[str, JSON]] = [{"cards": []} for _ in range(n)]
        self.trick_cards: list[int] = []
        self.announcing: tuple[int, Action, list[int]] | None = None
        self.announced: tuple[int, Action, list[int]] | None = None
        self.announced_view: dict[str, JSON] | None = None
        self.announcements = 0  # this round's, for the safety cap (MENTEUR_PLAYS_PER_CARD)
        self.max_announcements = 0
        self.round_results: list[dict[str, JSON]] = []

    # -- helpers for tests and tools -------------------------------------------------------
    def set_hands(self, hands: list[list[str]], turn: int | None = None) -> None:
        """Give each seat exactly the named cards and, if given, the turn to ``turn`` (tests
        build situations this way); the cards nobody holds go to the set-aside leftover."""
        spec = self.spec
        free: dict[str, list[int]] = {}
        for phys in spec.deck:
            free.setdefault(spec.names[phys], []).append(phys)
        self.sizes = [0] * self.n_players
        for seat in range(self.n_players):
            self.counts[seat] = [0] * (spec.n_ranks + 2)
            self.hands[seat] = [[] for _ in range(spec.n_ranks + 2)]
        for seat, names in enumerate(hands):
            for card_name in names:
                self._take_into(seat, free[card_name].pop(0))
            self.sizes[seat] = len(names)
        for seat in range(self.n_players):
            self.hands[seat] = [sorted(cs) for cs in self.hands[seat]]
            self.refresh_hand(seat)
        self.leftover = sorted(c for left in free.values() for c in left)
        self.leftover_names = [spec.names[c] for c in self.leftover]
        self.leftover_view = {"cards": list(self.leftover_names)}
        self.pile, self.pile_names = [], []
        self.played_view = {"cards": self.pile_names}
        self.count_in_round()
        if turn is not None:
            self.turn = turn
        self._pending = None

    def count_in_round(self) -> None:
        """PV-5, PV-14: the natural cards of each rank in the round, those set aside by PR-3
        excepted (ruling: a card set aside face up never reaches the trick, so the rank is
        complete without it)."""
        spec = self.spec
        in_round = [spec.max_set] * spec.n_ranks
        for phys in self.leftover:
            r = spec.rank_of[phys]
            if r < spec.n_ranks:
                in_round[r] -= 1
        self.in_round = in_round

    def _take_into(self, seat: int, phys: int) -> None:
        """One card into a hand; the caller updates ``sizes`` and ``hand_view``."""
        r = self.spec.rank_of[phys]
        self.hands[seat][r].append(phys)
        self.counts[seat][r] += 1

    def refresh_hand(self, seat: int) -> None:
        """The seat's cards by name, weakest first in the current order, Jokers last (kept
        up to date at every change so that a view only copies it)."""
        spec = self.spec
        hand = self.hands[seat]
        names = spec.names
        self.hand_view[seat] = [names[c] for r in spec.view_order[self.reversed] for c in hand[r]]

    def next_active(self, seat: int) -> int:
        """The next seat clockwise still in the round (PR-8)."""
        after, active = self.after, self.active
        seat = after[seat]
        while not active[seat]:
            seat = after[seat]
        return seat


class President(Game):
    id = "president"
    title = "Président"
    min_players = 3  # PR-1
    max_players = 8
    presets: Mapping[str, Mapping[str, JSON]] = PRESETS
    preset_docs = PRESET_DOCS

    # -- options ---------------------------------------------------------------------------
    def resolve_options(self, options: Mapping[str, JSON] | None) -> PresidentOptions:
        # resolving reads the dataclass's type hints, which costs more than a short match
        # of steps: remember the result for options made of plain scalars
        key = _options_key(options)
        resolved = _RESOLVED.get(key) if key is not None else None
        if resolved is None:
            resolved = opts.resolve(PresidentOptions, self.id, self.presets, options)
            check_options(resolved)
            if key is not None and len(_RESOLVED) < MAX_RESOLVED:
                _RESOLVED[key] = resolved
        return resolved

    # -- the contract ------------------------------------------------------------------------
    def new_state(
        self,
        n_players: int,
        seed: int,
        options: Mapping[str, JSON] | PresidentOptions | None = None,
    ) -> PresidentState:
        self.check_players(n_players)
        if isinstance(options, PresidentOptions):
            check_options(options)
            o = options
        else:
            o = self.resolve_options(options)
        if o.decks == 2 and n_players < MIN_PLAYERS_TWO_DECKS:  # PV-16
            raise OptionsError(
                f"president option 'decks' = 2 is for {MIN_PLAYERS_TWO_DECKS} players or more "
                f"(PV-16), not {n_players}: use 'decks' = 1"
            )
        if o.tabula_rasa and n_players < MIN_PLAYERS_TABULA_RASA:  # PV-5
            raise OptionsError(
                f"president option 'tabula_rasa' is for more than four players (PV-5), not "
                f"{n_players}"
            )
        state = PresidentState(
            n_players, seed, o, deck_spec(o.deck, o.decks, o.jokers, o.joker_wild)
        )
        self._start_round(state)
        return state

    def _requests(self, state: PresidentState) -> list[Request]:
        phase = state.phase
        if phase == "play":
            seat = state.turn
            assert seat is not None
            legal = self._legal_plays(state, seat)
            # the default is a pass when passing is legal, else the weakest lead (legal[0])
            return [Request(seat, PLAY, legal, legal[0])]
        if phase == "exchange":
            return [
                self._give_request(state, giver, number)
                for giver, (_, number) in sorted(state.exchange_due.items())
            ]
        names = state.spec.rank_names
        if phase == "rapidite":  # PV-14: each seat that can complete the rank, by priority
            throw = _throw_action(names[state.window_rank], state.window_need)
            return [Request(s, "rapidite", [PASS, throw], PASS) for s in state.window]
        if phase == "call":  # PV-15: every other player still holding cards, by priority
            return [Request(s, "call", [PASS, CALL], PASS) for s in state.window]
        if phase == "lay":  # PV-15
            return [self._lay_request(state)]
        if phase == "putsch":  # PV-9: the Trou du Cul, before any exchange
            trou = state.table[-1]
            return [Request(trou, "putsch", [PASS, PUTSCH], PASS)]
        assert phase == "guillotine" and state.guillotine is not None  # PV-8
        seat = state.guillotine[0]
        others = [s for s in state.table if s != seat]
        if state.n_players == 3:  # PR-9: no Vice-Président
            legal = [_name_action(None, t) for t in others]
        else:
            legal = [_name_action(v, t) for v in others for t in others if v != t]
        return [Request(seat, "guillotine", legal, legal[0])]

    def _apply(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        phase = state.phase
        if phase == "play":
            seat = requests[0].seat
            action = answers[seat]
            if action is PASS:  # answers are the engine's own canonical elements
                self._pass(state, seat)
                return
            spec = state.spec
            if state.sets_only:  # the hot path: every play is a set of one rank
                r = spec.rank_index[action["rank"]]
                self._play(state, seat, r, action["count"], action.get("jokers", 0))
                return
            if state.menteur:  # PV-15: an announcement, whose cards are laid next
                self._announce(state, seat, action)
                return
            kind = action["type"]
            r = spec.rank_index[action["rank"]]
            if kind == "play":
                self._play(state, seat, r, action["count"], action.get("jokers", 0))
            elif kind == "run":  # PV-13
                self._play_run(state, seat, r, action["length"], action["count"])
            else:  # PV-8: coup_d_etat or guillotine
                self._coup(state, seat, kind, r, action["count"], action["jokers"])
        elif phase == "exchange":
            self._give_back(state, answers)
        elif phase == "rapidite":
            self._resolve_rapidite(state, requests, answers)
        elif phase == "lay":
            seat = requests[0].seat
            action = answers[seat]
            self._lay(state, seat, state.spec.rank_index[action["rank"]], action["count"])
        elif phase == "call":
            self._resolve_call(state, requests, answers)
        elif phase == "putsch":
            self._resolve_putsch(state, requests[0].seat, answers[requests[0].seat])
        else:
            self._name(state, answers[requests[0].seat])

    def view(self, state: PresidentState, seat: int) -> dict[str, JSON]:
        """The seat's information set (rules, "What each seat may see").

        A view shares the state's lists and dicts instead of copying them: the engine
        replaces such a piece when it changes and never alters one it has shown, so a
        view stays what it was when built.  Views are read-only for their users."""
        spec = state.spec
        top = state.top_rank
        view = {
            "seat": seat,
            "round": state.round,
            "phase": state.phase,
            "turn": state.turn,
            "cards": state.hand_view[seat],
            "hand_sizes": state.sizes,
            "rank_order": spec.order_names[state.reversed],
            "reversed": state.reversed,
            "table": state.table,
            "dealer": state.dealer,
            "roles": state.roles,
            "scores": state.scores,
            "leftover": state.leftover_view,
            "places": state.places,
            "played": state.played_view,
            "trick": {
                "rank": None if top is None else spec.rank_names[top],
                "count": state.top_count,
                "jokers": state.top_jokers,
                "by": state.last_player,
                "passes": state.passes,
                "forced": state.run >= 2,
                "plays": state.trick,
            },
            "exchange": state.exchanged[seat],
            "events": state.events_for(seat, state.shown_upto[seat]),
        }
        if state.extra_view:
            o = state.options
            if o.suites:  # PV-13: 1 for a set, 3 or more for a run
                view["trick"]["length"] = state.top_length
            if o.putsch:  # PV-9: public, it was announced
                view["putsch"] = state.putschist
            if state.menteur:  # PV-15
                # the cards this seat laid face down on the trick (its own knowledge), the
                # announcement it is laying cards for, the one the others may call
                view["face_down"] = state.down_view[seat]
                announcing = state.announcing
                view["announcing"] = (
                    announcing[1] if announcing is not None and announcing[0] == seat else None
                )
                view["announced"] = state.announced_view
        return view

    def spectator_view(self, state: PresidentState, reveal: bool = False) -> dict[str, JSON]:
        view = self.view(state, 0)
        del view["events"]
        # PR-3: hands are private, and PR-10: so are the exchanged cards; the revealed
        # table shows every hand and every exchange
        view["seat"] = None
        view["cards"] = None
        view["hands"] = list(state.hand_view) if reveal else None
        view["exchange"] = None
        view["exchanges"] = list(state.exchanged) if reveal else None
        if state.phase == "rapidite" and not reveal:
            # PV-14: a window is asked of a seat holding the rest of the rank; the audience
            # may not learn that it exists, so it sees the turn that follows
            view["phase"] = "play"
        if state.menteur:  # PV-15: the face-down cards and an announcement being laid
            names = state.spec.names
            view["face_down"] = list(state.down_view) if reveal else None
            view["announcing"] = state.announcing[1] if reveal and state.announcing else None
            if reveal:
                view["played"] = {
                    "cards": [names[c] for c in state.pile],
                    "face_down": len(state.pile),
                }
        return view

    def all_cards(self, state: PresidentState) -> list[int]:
        held = [c for hand in state.hands for rank in hand for c in rank]
        return held + state.pile + state.leftover

    # -- legal actions -------------------------------------------------------------------
    def _legal_plays(self, state: PresidentState, seat: int) -> list[Action]:
        """Pass first when legal, then the plays from weakest to strongest (PR-5)."""
        if state.plain:
            # the common case, straight from the counts per rank
            spec = state.spec
            counts = state.counts[seat]
            order = spec.order[state.reversed]
            top = state.top_rank
            if top is None:  # PR-5: a lead, 1 to all the cards of one rank
                leads = spec.leads
                out = []
                for r in order:
                    out += leads[r][counts[r]]
                return out
            if state.run < 2:
                plays = spec.plays
                # PR-5: as many cards, of a strictly higher rank (equal with PV-2/PV-6)
                c = state.top_count
                start = spec.pos[state.reversed][top] + (0 if state.equal_plays else 1)
                return [PASS] + [plays[r][c][0] for r in order[start:] if counts[r] >= c]
        return self._legal_plays_variants(state, seat)

    def _legal_plays_variants(self, state: PresidentState, seat: int) -> list[Action]:
        """The general case: raised counts, runs of equal plays, Jokers alone or wild, runs
        (PV-13), coups (PV-8) and announcements (PV-15)."""
        spec = state.spec
        o = state.options
        n = spec.n_ranks
        size = state.sizes[seat]
        if state.menteur:
            # PV-15: any play the hand has enough cards for may be announced, whatever the
            # cards (the seed: "annoncer double 2 en mettant un 3 et un 7")
            counts = [min(spec.max_set, size)] * n + [o.decks if o.jokers else 0] * 2
        else:
            counts = state.counts[seat]
        plays = spec.plays
        order = spec.order[state.reversed]
        pos = spec.pos[state.reversed]
        top = state.top_rank
        if top is not None and state.top_length > 1:
            # PV-13: on a run, a higher run of the same shape, or a Joker alone (PV-3)
            runs = self._runs(
                state, counts, size, pos[top] + 1, (state.top_count,), state.top_length
            )
            out = [PASS, *runs]
            if o.jokers and not state.wild:
                out += [plays[j][1][0] for j in (n, n + 1) if counts[j]]
            return out + self._coups(state, counts)
        jokers = counts[n] + counts[n + 1] if state.wild else 0
        # PV-3 ruling: a hand of wild Jokers only may play them as a set of the weakest rank
        # (PV-15: the hand's own Jokers, whatever it may announce)
        held = state.counts[seat]
        bare = state.wild and size > 0 and held[n] + held[n + 1] == size
        out = []
        # PV-3 ruling: a wild set has one natural card at least and one card more than a
        # full rank at most (the seed's "five")
        wild_cap = spec.max_set + 1 if state.wild else spec.max_set
        ranks: tuple[int, ...] | list[int]
        alone: tuple[int, ...] | list[int] = () if state.wild else (n, n + 1)
        if top is None:  # PR-5: a lead, any set of one rank
            ranks, low, high = order, 1, wild_cap
        else:
            out.append(PASS)  # PR-6
            low = high = state.top_count
            if o.raise_count or o.wizz:  # PV-1, PV-12: as many cards or more
                high = wild_cap
            # PV-2 / PV-6: the run of equal plays binds the next player (ruling: plays in a
            # row of the trick, whatever passes fall between; it lasts until another rank)
            if state.run >= 2:
                ranks = [top] if top < n else []
                if o.quitte_ou_double:
                    high = low  # PV-6: match exactly
                    alone = [top] if top >= n and not state.wild else []
                elif top >= n:
                    alone = [top] + ([n + 1] if o.passe_breakers and top == n else [])
                elif not o.passe_breakers:
                    alone = []
                elif top != order[-1]:
                    ranks.append(order[-1])  # PV-2: a 2 (or a Joker, kept) breaks the passe
            elif top < n:
                ranks = order[pos[top] if state.equal_plays else pos[top] + 1 :]
            else:  # PV-3: on a Joker only a stronger (or, with equal plays, the same) Joker
                ranks = ()
                alone = [j for j in alone if j > top or (state.equal_plays and j == top)]
        for r in ranks:
            k = counts[r]
            lowest = bare and r == order[0]
            if not k and not lowest:
                continue
            first = 0 if lowest else 1
            # (an announcement may not hold more cards than the hand, PV-15)
            for total in range(low, min(high, k + jokers, wild_cap, size) + 1):
                # naturals alone first, then with more and more wild Jokers (PV-3)
                for j in range(max(0, total - k), min(jokers, total - first) + 1):
                    out.append(plays[r][total][j])
        if o.jokers:
            # PV-3: a Joker alone at any time, on any set; the coloured beats the black
            for r in alone:
                if counts[r]:
                    out.append(plays[r][1][0])
        if o.suites and top is None:  # PV-13: runs may be led
            out += self._runs(state, counts, size, 0, range(1, MAX_RUN_WIDTH + 1), None)
        return out + self._coups(state, counts)

    def _runs(
        self,
        state: PresidentState,
        counts: list[int],
        size: int,
        start: int,
        widths: tuple[int, ...] | range,
        length: int | None,
    ) -> list[Action]:
        """PV-13: the runs of ``widths`` cards per rank (of ``length`` ranks, or of any
        length from MIN_RUN) whose weakest rank is at ``start`` or above, in the order in
        force (ruling: a revolution turns runs round too; the strongest rank may end one)."""
        spec = state.spec
        order = spec.order[state.reversed]
        names = spec.rank_names
        m = len(order)
        out: list[Action] = []
        for width in widths:
            if width > spec.max_set:
                continue
            for low in range(start, m - MIN_RUN + 1):
                end = low
                while end < m and counts[order[end]] >= width:
                    end += 1
                if length is not None:
                    if end - low >= length and length * width <= size:
                        out.append(_run_action(names[order[low]], length, width))
                    continue
                for ranks in range(MIN_RUN, end - low + 1):
                    if ranks * width <= size:
                        out.append(_run_action(names[order[low]], ranks, width))
        return out

    def _coups(self, state: PresidentState, counts: list[int]) -> list[Action]:
        """PV-8: a coup d'état (four of a kind and a Joker, or three and two Jokers) or a
        guillotine (four and two Jokers), on one's turn whatever the trick (the seed: "Le
        coup d'État peut être posé n'importe quand lors de la partie")."""
        o = state.options
        if not (o.coup_d_etat or o.guillotine):
            return []
        spec = state.spec
        n = spec.n_ranks
        jokers = counts[n] + counts[n + 1]
        if not jokers:
            return []
        names = spec.rank_names
        out: list[Action] = []
        for r in spec.order[state.reversed]:
            k = counts[r]
            if o.coup_d_etat:
                if k >= 4:
                    out.append(_coup_action("coup_d_etat", names[r], 4, 1))
                if k >= 3 and jokers >= 2:
                    out.append(_coup_action("coup_d_etat", names[r], 3, 2))
            if o.guillotine and k >= 4 and jokers >= 2:
                out.append(_coup_action("guillotine", names[r], 4, 2))
        return out

    # -- playing ---------------------------------------------------------------------------
    def _play(self, state: PresidentState, seat: int, r: int, count: int, jokers: int) -> None:
        spec = state.spec
        hand = state.hands[seat]
        counts = state.counts[seat]
        naturals = hand[r]
        k = count - jokers
        played = naturals[len(naturals) - k :]
        del naturals[len(naturals) - k :]
        counts[r] -= k
        if jokers:  # wild Jokers, black first
            n = spec.n_ranks
            for _ in range(jokers):
                j = n if counts[n] else n + 1
                played.append(hand[j].pop())
                counts[j] -= 1
        # what a view shows is replaced, never changed in place (see ``view``)
        sizes = state.sizes[:]
        sizes[seat] -= count
        state.sizes = sizes
        names = spec.names
        played_names = [names[c] for c in played]
        hand_view = state.hand_view[seat][:]
        for card_name in played_names:
            hand_view.remove(card_name)
        state.hand_view[seat] = hand_view
        state.pile += played
        state.pile_names = pile_names = state.pile_names + played_names
        state.played_view = {"cards": pile_names}
        event: dict[str, JSON] = {
            "type": "play",
            "seat": seat,
            "rank": spec.rank_names[r],
            "count": count,
            "cards": played_names,
        }
        if jokers:
            event["jokers"] = jokers
        state.emit(event)
        state.trick = [*state.trick, event]
        if state.extra_settle:
            self._settle(state, seat, r, count, jokers)
            return
        # the base rules' consequences, inline on the hot path (the general case: _settle)
        reversed_order = state.reversed
        cut = r in state.cut_ranks[reversed_order]  # PR-7, PV-3, PV-11
        state.top_rank = r
        state.top_count = count
        state.top_jokers = jokers
        state.last_player = seat
        state.passes = 0
        size = state.revolution_size
        if size is not None and count >= size:  # PV-7
            self._revolution(state)
        if not sizes[seat]:  # PR-8
            forbidden = self._forbidden(state, r, jokers, 1, reversed_order)
            if self._leave(state, seat, forbidden):
                return
        if cut:
            self._end_trick(state, "cut")
        else:
            state.turn = state.next_active(seat)

    def _take(self, state: PresidentState, seat: int, r: int, k: int, jokers: int) -> list[int]:
        """``k`` cards of rank ``r`` and ``jokers`` wild Jokers (black first) out of the
        seat's hand; the views' pieces are replaced, never changed in place."""
        spec = state.spec
        hand = state.hands[seat]
        counts = state.counts[seat]
        naturals = hand[r]
        taken = naturals[len(naturals) - k :]
        del naturals[len(naturals) - k :]
        counts[r] -= k
        n = spec.n_ranks
        for _ in range(jokers):
            j = n if counts[n] else n + 1
            taken.append(hand[j].pop())
            counts[j] -= 1
        sizes = state.sizes[:]
        sizes[seat] -= len(taken)
        state.sizes = sizes
        hand_view = state.hand_view[seat][:]
        for phys in taken:
            hand_view.remove(spec.names[phys])
        state.hand_view[seat] = hand_view
        return taken

    def _face_up(self, state: PresidentState, event: dict[str, JSON], played: list[int]) -> None:
        """Cards onto the trick face up, named in the public ``event`` (PR-5)."""
        names = [state.spec.names[c] for c in played]
        event["cards"] = names
        state.pile += played
        state.pile_names = state.pile_names + names
        state.played_view = {"cards": state.pile_names}
        state.emit(event)
        state.trick = [*state.trick, event]

    def _settle(
        self,
        state: PresidentState,
        seat: int,
        r: int,
        count: int,
        jokers: int,
        length: int = 1,
        thrown: bool = False,
    ) -> None:
        """What a play does once it lies on the trick: the runs of equal plays (PV-2, PV-6),
        the cut (PR-7, PV-3, PV-11), tabula rasa (PV-5), the revolution (PV-7), going out
        (PR-8), the wizz (PV-12), the rapidité window (PV-14) and the next turn.  ``r`` is
        a run's weakest rank (PV-13: ``length`` ranks); ``thrown``: a rapidité."""
        spec = state.spec
        o = state.options
        prev_count = state.top_count
        equal = r == state.top_rank and state.top_length == 1 and length == 1
        if state.runs_bind:  # PV-2 counts same-rank plays, PV-6 identical plays
            same = equal and (not o.quitte_ou_double or count == prev_count)
            state.run = state.run + 1 if same else int(length == 1)
        # judged in the order the cards were played in (before a revolution they make)
        reversed_order = state.reversed
        cut_ranks = state.cut_ranks[reversed_order]
        if length == 1:
            cut = r in cut_ranks
        else:  # PV-13 ruling: a run that holds a rank that cuts cuts too
            order, low = spec.order[reversed_order], spec.pos[reversed_order][r]
            cut = any(order[i] in cut_ranks for i in range(low, low + length))
        why = "cut"
        state.top_rank = r
        state.top_count = max(count, prev_count) if thrown else count  # PV-14: the larger
        state.top_jokers = jokers
        state.top_length = length
        state.last_player = seat
        state.passes = 0
        n = spec.n_ranks
        if state.count_trick and length == 1 and r < n:
            naturals = count - jokers
            on_trick = state.on_trick[r] + naturals
            state.on_trick[r] = on_trick
            # PV-5: every card of the rank lies on the trick, laid by more than one play
            # (the seed: "Cette règle ne s'applique pas aux carrés")
            complete = on_trick >= state.in_round[r] and naturals < on_trick
            if o.tabula_rasa and complete and not cut:
                cut, why = True, "tabula_rasa"
        # PV-7 (ruling: wild Jokers count; the cut above was judged before the reversal)
        size = state.revolution_size
        if size is not None and length == 1 and count >= size:
            self._revolution(state)

        if not state.sizes[seat]:  # PR-8
            forbidden = self._forbidden(state, r, jokers, length, reversed_order)
            if self._leave(state, seat, forbidden):
                return
        if cut:
            self._end_trick(state, why)
            return
        following = state.next_active(seat)
        if o.wizz and equal and not thrown:
            # PV-12: an equal play skips the next player, and one more per extra card;
            # never the player themself, nor one who has gone out (the seed)
            others = state.n_active - state.active[seat]
            skipped = []
            for _ in range(min(1 + count - prev_count, others)):
                skipped.append(following)
                following = state.next_active(following)
            event: dict[str, JSON] = {"type": "wizz", "seat": seat, "skipped": skipped}
            state.emit(event)
            state.trick = [*state.trick, event]
            state.passes = len(skipped)  # PR-6: as if they had passed
            if len(skipped) >= others:
                # the seed: "Dès lors que la main revient au joueur ayant posé une carte
                # pour la dernière fois, le tour de jeu est clos"
                self._end_trick(state, "wizz")
                return
        state.turn = following
        if o.rapidite and length == 1 and r < n and not thrown:
            self._open_rapidite(state, seat, r)

    def _revolution(self, state: PresidentState) -> None:
        """PV-7: the order turns round (every hand's view order with it)."""
        state.reversed = not state.reversed
        for s in range(state.n_players):
            state.refresh_hand(s)
        state.emit({"type": "revolution", "order": state.spec.order_names[state.reversed]})

    def _forbidden(
        self, state: PresidentState, r: int, jokers: int, length: int, reversed_order: bool
    ) -> bool:
        """Whether a last play of rank ``r`` (a run from ``r``) is a forbidden finish: the
        strongest rank with PV-4 ``no_finish_on_two`` (ruling: of the order in force; a run
        that holds it), a Joker with PV-3 ``no_finish_on_joker``."""
        o = state.options
        spec = state.spec
        if o.no_finish_on_two:
            order = spec.order[reversed_order]
            if spec.pos[reversed_order][r] + length - 1 == len(order) - 1 and r < spec.n_ranks:
                return True
        return o.no_finish_on_joker and (jokers > 0 or r >= spec.n_ranks)

    def _play_run(self, state: PresidentState, seat: int, r: int, length: int, count: int) -> None:
        """PV-13: ``count`` cards of each of ``length`` ranks from ``r`` up."""
        spec = state.spec
        order, low = spec.order[state.reversed], spec.pos[state.reversed][r]
        played: list[int] = []
        for i in range(low, low + length):
            played += self._take(state, seat, order[i], count, 0)
        event: dict[str, JSON] = {
            "type": "run",
            "seat": seat,
            "rank": spec.rank_names[r],
            "length": length,
            "count": count,
        }
        self._face_up(state, event, played)
        self._settle(state, seat, r, count, 0, length)

    def _open_rapidite(self, state: PresidentState, seat: int, r: int) -> None:
        """PV-14: the seats holding every card of the rank not yet on the trick may throw
        them (ruling: the cards set aside by PR-3 excepted), clockwise from the seat after
        the last player.  At most one seat can hold them all; the window is still asked
        in priority order, as a reaction window."""
        need = state.in_round[r] - state.on_trick[r]
        if need <= 0:
            return
        window = []
        s = seat
        for _ in range(state.n_players - 1):
            s = state.after[s]
            if state.active[s] and state.counts[s][r] >= need:
                window.append(s)
        if window:
            state.window = window
            state.window_rank = r
            state.window_need = need
            state.phase = "rapidite"

    def _resolve_rapidite(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        thrower = first_in_priority(requests, answers, "throw")
        state.phase = "play"
        state.window = []
        if thrower is None:
            return  # the turn that was next goes on
        r, need = state.window_rank, state.window_need
        played = self._take(state, thrower, r, need, 0)
        event: dict[str, JSON] = {
            "type": "throw",
            "seat": thrower,
            "rank": state.spec.rank_names[r],
            "count": need,
        }
        self._face_up(state, event, played)
        # ruling: the thrower is now the last player, and play goes on after them
        self._settle(state, thrower, r, need, 0, thrown=True)

    def _coup(
        self, state: PresidentState, seat: int, kind: str, r: int, count: int, jokers: int
    ) -> None:
        """PV-8: the player becomes Président at once and the round ends."""
        played = self._take(state, seat, r, count - jokers, jokers)
        event: dict[str, JSON] = {
            "type": kind,
            "seat": seat,
            "rank": state.spec.rank_names[r],
            "count": count,
            "jokers": jokers,
        }
        self._face_up(state, event, played)
        standing = self._standing(state, seat)
        if kind == "coup_d_etat":
            # the seed: "Le Président déchu vient prendre la place de celui qui a posé le
            # coup d'État"
            i = standing.index(seat)
            standing[0], standing[i] = standing[i], standing[0]
            self._end_round(state, standing, "coup_d_etat")
        else:  # the seed: "décide qui sera le Balayeur, et il choisit son Premier Ministre"
            state.guillotine = (seat, standing)
            state.phase = "guillotine"
            state.turn = seat

    def _name(self, state: PresidentState, action: Action) -> None:
        """PV-8 guillotine: the player first, the Vice-Président named second, the Trou du
        Cul named last, the others between in their standing."""
        assert state.guillotine is not None
        seat, standing = state.guillotine
        state.guillotine = None
        trou, vice = action["trou_du_cul"], action.get("vice_president")
        event: dict[str, JSON] = {"type": "named", "seat": seat, "trou_du_cul": trou}
        head = [seat]
        if vice is not None:
            event["vice_president"] = vice
            head.append(vice)
        state.emit(event)
        order = head + [s for s in standing if s not in head and s != trou] + [trou]
        self._end_round(state, order, "guillotine")

    def _standing(self, state: PresidentState, seat: int, *, roles: bool = True) -> list[int]:
        """The order a round cut short starts from: the roles in force, Président first (the
        seats of PR-11); ruling, in round 1 (no roles yet) or without ``roles``: the players
        out in their places, then the others by fewest cards (ties clockwise from
        ``seat``), then the forbidden finishes (PV-3, PV-4)."""
        if roles and state.round > 1:
            return list(state.table)
        n = state.n_players
        ahead = [s for s in state.places[: state.front] if s is not None]
        behind = [s for s in state.places[state.back + 1 :] if s is not None]
        rest = sorted(
            (s for s in range(n) if state.active[s]),
            key=lambda s: (state.sizes[s], (s - seat) % n),
        )
        return ahead + rest + behind

    # -- Président-Menteur (PV-15) ------------------------------------------------------------
    def _announce(self, state: PresidentState, seat: int, action: Action) -> None:
        """The announcement stays the seat's own until its cards are laid face down."""
        state.announcing = (seat, action, [])
        state.phase = "lay"
        state.announcements += 1

    def _claim(self, state: PresidentState, action: Action) -> tuple[Counter[int], int]:
        """The natural cards by rank (a Joker alone by its own rank) and the wild Jokers
        that an announcement says were laid."""
        spec = state.spec
        r = spec.rank_index[action["rank"]]
        count = action["count"]
        if action["type"] == "run":
            order, low = spec.order[state.reversed], spec.pos[state.reversed][r]
            return Counter({order[i]: count for i in range(low, low + action["length"])}), 0
        jokers = action.get("jokers", 0)
        return Counter({r: count - jokers}), jokers

    def _lay_request(self, state: PresidentState) -> Request:
        """Cards of one rank at a time, face down; the default lays the announced cards
        while the hand has them (an honest play), else the weakest card."""
        assert state.announcing is not None
        seat, action, laid = state.announcing
        spec = state.spec
        counts = state.counts[seat]
        names = spec.rank_names
        left = action["count"] * action.get("length", 1) - len(laid)
        view_order = spec.view_order[state.reversed]
        legal = [
            _lay_action(names[r], k) for r in view_order for k in range(1, min(counts[r], left) + 1)
        ]
        claim, jokers = self._claim(state, action)
        laid_ranks = Counter(spec.rank_of[c] for c in laid)
        still = claim - laid_ranks
        n = spec.n_ranks
        wild = jokers - laid_ranks[n] - laid_ranks[n + 1]
        default = legal[0]
        for r in view_order:
            want = still[r] if r < n or not jokers else wild
            if want > 0 and counts[r]:
                default = _lay_action(names[r], min(want, counts[r], left))
                break
        return Request(seat, "lay", legal, default)

    def _lay(self, state: PresidentState, seat: int, r: int, k: int) -> None:
        assert state.announcing is not None
        _, action, laid = state.announcing
        spec = state.spec
        cards_laid = self._take(state, seat, r, k, 0)
        laid = laid + cards_laid
        down = state.down[seat] + cards_laid
        state.down[seat] = down
        state.down_view[seat] = {"cards": [spec.names[c] for c in down]}
        state.pile += cards_laid
        state.trick_cards += cards_laid
        state.played_view = {"cards": [], "face_down": len(state.pile)}
        if len(laid) < action["count"] * action.get("length", 1):
            state.announcing = (seat, action, laid)
            return
        state.announcing = None
        # the announced rank and count are public, the cards are the player's own
        announce: dict[str, JSON] = {"type": "announce", "seat": seat}
        announce.update((key, value) for key, value in action.items() if key != "type")
        state.emit(announce)
        state.emit({"type": "laid", "seat": seat, "cards": [spec.names[c] for c in laid]}, [seat])
        state.trick = [*state.trick, announce]
        state.announced = (seat, action, laid)
        state.announced_view = announce
        # the seed: "n'importe quel joueur ayant encore des cartes peut annoncer « menteur »"
        callers = []
        s = seat
        for _ in range(state.n_players - 1):
            s = state.after[s]
            if state.active[s] and state.sizes[s]:
                callers.append(s)
        state.window = callers
        state.phase = "call"
        state.turn = None
        if not callers:  # (never: another player in the round holds cards) nobody may call
            self._resolve_call(state, [], {})

    def _resolve_call(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        caller = first_in_priority(requests, answers, "call")
        assert state.announced is not None
        seat, action, laid = state.announced
        state.announced = None
        state.announced_view = None
        state.phase = "play"
        state.window = []
        spec = state.spec
        r = spec.rank_index[action["rank"]]
        count, jokers, length = action["count"], action.get("jokers", 0), action.get("length", 1)
        if caller is None:  # the announcement stands as the play it claims
            self._settle(state, seat, r, count, jokers, length)
        else:
            self._call(state, caller, seat, action, laid)
        if state.phase == "play" and state.announcements >= state.max_announcements:
            # ruling: the round is cut short, ranked as it stands
            self._end_round(state, self._standing(state, seat, roles=False), "menteur_cap")

    def _call(
        self, state: PresidentState, caller: int, seat: int, action: Action, laid: list[int]
    ) -> None:
        """The seed: the last cards announced are turned over; if they match the
        announcement the caller picks up the whole pile, else the liar does; whoever was
        right leads.  Ruling: the pile is the trick's (PV-15), the trick is over, and a true
        announcement keeps its own effects (a revolution, going out)."""
        spec = state.spec
        claim, jokers = self._claim(state, action)
        got = Counter(spec.rank_of[c] for c in laid)
        n = spec.n_ranks
        wild = got.pop(n, 0) + got.pop(n + 1, 0) if jokers else 0
        honest = wild == jokers and got == claim
        state.emit(
            {
                "type": "menteur",
                "caller": caller,
                "seat": seat,
                "cards": [spec.names[c] for c in laid],
                "lied": not honest,
            }
        )
        loser, winner = (caller, seat) if honest else (seat, caller)
        picked = state.trick_cards
        state.trick_cards = []
        kept = len(state.pile) - len(picked)
        assert state.pile[kept:] == picked, "the trick's cards are the top of the pile"
        state.pile = state.pile[:kept]
        state.played_view = {"cards": [], "face_down": kept}
        for phys in picked:
            state._take_into(loser, phys)
        hand = state.hands[loser]
        for rank in hand:
            rank.sort()
        sizes = state.sizes[:]
        sizes[loser] += len(picked)
        state.sizes = sizes
        state.refresh_hand(loser)
        public: dict[str, JSON] = {"type": "pick_up", "seat": loser, "count": len(picked)}
        state.emit({**public, "cards": [spec.names[c] for c in picked]}, [loser])
        others = [s for s in range(state.n_players) if s != loser]
        state.emit(public, others)
        if honest:
            r = spec.rank_index[action["rank"]]
            length = action.get("length", 1)
            size = state.revolution_size
            reversed_order = state.reversed
            if size is not None and length == 1 and action["count"] >= size:  # PV-7
                self._revolution(state)
            if not state.sizes[seat]:  # PR-8: the true last cards take the player out
                forbidden = self._forbidden(state, r, jokers, length, reversed_order)
                if self._leave(state, seat, forbidden):
                    return
        self._end_trick(state, "menteur", winner)

    def _pass(self, state: PresidentState, seat: int) -> None:
        event: dict[str, JSON] = {"type": "pass", "seat": seat}
        state.emit(event)
        state.trick = [*state.trick, event]
        state.passes += 1
        last = state.last_player
        assert last is not None
        # PR-6: over once every other player still in the round has passed in a row
        if state.passes >= state.n_active - state.active[last]:
            self._end_trick(state, "passes")
        else:
            state.turn = state.next_active(seat)

    def _leave(self, state: PresidentState, seat: int, forbidden: bool) -> bool:
        """PR-8: the seat goes out; True when that ends the round (the last player holding
        cards, or PV-9 a failed putsch)."""
        self._go_out(state, seat, forbidden)
        putschist, first = state.putschist, state.places[0]
        gone = first is not None or seat == putschist  # someone else first, or it is out
        if putschist is not None and first != putschist and gone:
            # PV-9: the seed: "La partie peut donc être arrêtée dès lors que le premier joueur
            # à se débarrasser de toutes ses cartes n'est pas le putschiste lui-même"
            self._end_round(state, list(state.table), "putsch")
            return True
        if state.n_active == 1:
            self._end_round(state)
            return True
        return False

    def _go_out(self, state: PresidentState, seat: int, forbidden: bool) -> None:
        state.active[seat] = False
        state.n_active -= 1
        if forbidden:  # PV-3/PV-4 ruling: forbidden finishes fill the last places in turn
            place = state.back
            state.back -= 1
        else:
            place = state.front
            state.front += 1
        places = state.places[:]
        places[place] = seat
        state.places = places
        state.emit({"type": "out", "seat": seat, "place": place + 1, "forbidden": forbidden})

    def _end_trick(self, state: PresidentState, why: str, winner: int | None = None) -> None:
        if winner is None:
            winner = state.last_player
        assert winner is not None
        # PR-6/PR-7: the last player leads again; PR-8: if gone, the next one still in
        leader = winner if state.active[winner] else state.next_active(winner)
        state.emit({"type": "trick_over", "winner": winner, "leader": leader, "why": why})
        state.top_rank = None
        state.top_count = state.top_jokers = 0
        state.last_player = None
        state.passes = 0
        state.run = 0
        state.trick = []
        state.turn = leader
        if state.extra_settle:  # (the variants' bookkeeping, off the hot path)
            state.top_length = 1  # PV-13
            if state.count_trick:  # PV-5, PV-14
                state.on_trick = [0] * state.spec.n_ranks
            if state.menteur:  # PV-15: the trick's cards stay face down on the pile
                n = state.n_players
                state.trick_cards = []
                state.down = [[] for _ in range(n)]
                state.down_view = [{"cards": []} for _ in range(n)]

    # -- rounds ----------------------------------------------------------------------------
    def _end_round(
        self, state: PresidentState, order: list[int] | None = None, why: str | None = None
    ) -> None:
        """The round is over: in finishing order (PR-8), or in ``order`` when it ended
        early, for ``why``: a coup d'état or guillotine (PV-8), a failed putsch (PV-9), a
        jeu blanc (PV-10), the PV-15 safety cap."""
        n = state.n_players
        if order is None:
            last = next(s for s in range(n) if state.active[s])
            places = state.places[:]
            places[state.front] = last  # the one still holding cards (PR-8)
            order = [s for s in places if s is not None]
        points = [0] * n
        for place, seat in enumerate(order):
            points[seat] = n - 1 - place  # PR-12
        putschist = state.putschist
        if putschist is not None:
            if order[0] == putschist:
                # PV-9 and the seed's "Comptage des points": "le putschiste récolte alors 1
                # point de plus qu'un Président dit normal"
                points[putschist] = n
            else:
                # PV-9: "tous les autres joueurs retrouvent la position qu'ils avaient", and
                # "s'il est raté, le putschiste en perd 1"; ruling: the round being "hors
                # phase", the others score nothing
                order = list(state.table)
                points = [0] * n
                points[putschist] = -1
                state.putsch_due = putschist
        state.places = list(order)
        state.scores = [a + b for a, b in zip(state.scores, points, strict=True)]
        roles = roles_for(n)
        result: dict[str, JSON] = {
            "round": state.round,
            "order": order,
            "roles": [roles[order.index(s)] for s in range(n)],
            "points": points,
            "scores": list(state.scores),
        }
        if why is not None:
            result["ended_by"] = why
        if putschist is not None:
            result["putsch"] = {"seat": putschist, "succeeded": order[0] == putschist}
        state.round_results.append(result)
        state.emit({"type": "round_over", **result})
        state.turn = None
        o = state.options
        limit = o.round_limit
        reached = o.target is not None and max(state.scores) >= o.target
        if reached or state.round >= limit:  # PR-12
            ranks = competition_ranks([-s for s in state.scores])
            state.phase = "over"
            state.result = Outcome(ranks, list(state.scores), state.round_results)
            state.emit({"type": "match_over", "scores": list(state.scores), "ranks": ranks})
            return
        self._start_round(state)

    def _start_round(self, state: PresidentState) -> None:
        spec = state.spec
        o = state.options
        n = state.n_players
        state.round += 1
        if state.round == 1:
            table = list(range(n))
            state.dealer = 0  # PR-4
            leader = 1 % n
        else:
            # PR-11: seats in role order, Président first; ruling: the Trou du Cul deals
            table = [s for s in state.places if s is not None]
            roles = roles_for(n)
            state.roles = [roles[table.index(s)] for s in range(n)]
            state.dealer = table[-1]
            leader = table[-1] if o.later_lead == "trou_du_cul" else table[0]
        state.table = table
        for i, s in enumerate(table):
            state.after[s] = table[(i + 1) % n]
        if not o.revolution_lasts:  # PV-7: the order comes back with the new round
            state.reversed = False
        state.active = [True] * n
        state.n_active = n
        state.places = [None] * n
        state.front, state.back = 0, n - 1
        state.exchanged = [None] * n
        state.pile, state.pile_names = [], []
        state.played_view = (
            {"cards": [], "face_down": 0} if state.menteur else {"cards": state.pile_names}
        )
        state.sizes = [0] * n
        state.top_rank = state.last_player = None
        state.top_count = state.top_jokers = state.passes = state.run = 0
        state.top_length = 1
        state.trick = []
        state.leader = leader
        state.putschist = None
        state.guillotine = None
        state.window = []
        state.on_trick = [0] * spec.n_ranks
        if state.menteur:
            state.down = [[] for _ in range(n)]
            state.down_view = [{"cards": []} for _ in range(n)]
            state.trick_cards = []
            state.announcing = state.announced = state.announced_view = None
            state.announcements = 0
            cards_dealt = len(spec.deck) - len(spec.deck) % n
            state.max_announcements = MENTEUR_PLAYS_PER_CARD * cards_dealt

        deck = list(spec.deck)
        state.rng.shuffle(deck)
        per = len(deck) // n  # PR-3: equal hands, the rest set aside face up
        first = table.index(state.after[state.dealer])
        state.emit(
            {  # the gathering and shuffle: what was seen before says nothing now
                "type": DEAL_EVENT,
                "round": state.round,
                "table": list(table),
                "dealer": state.dealer,
                "roles": list(state.roles),
                "reversed": state.reversed,
                "hand_size": per,
            }
        )
        rank_of = spec.rank_of
        for i in range(n):  # one by one from the seat after the dealer
            seat = table[(first + i) % n]
            hand: list[list[int]] = [[] for _ in range(spec.n_ranks + 2)]
            for c in sorted(deck[i : per * n : n]):  # so each rank's cards are sorted
                hand[rank_of[c]].append(c)
            state.hands[seat], state.sizes[seat] = hand, per
            state.counts[seat] = [len(cs) for cs in hand]
            state.refresh_hand(seat)
            state.emit({"type": "hand", "seat": seat, "cards": state.hand_view[seat][:]}, to=[seat])
        state.leftover = sorted(deck[per * n :])
        state.leftover_names = [spec.names[c] for c in state.leftover]
        state.leftover_view = {"cards": list(state.leftover_names)}
        state.emit({"type": "leftover", "cards": list(state.leftover_names)})
        if state.count_trick:
            state.count_in_round()

        state.exchange_due = {}
        penalty, state.putsch_due = state.putsch_due, None
        if state.round > 1:
            if o.jeu_blanc and self._jeu_blanc(state):
                return
            # PV-9: the Trou du Cul decides before any exchange; one who failed may not
            # try again the next round (the seed: "ne peut pas putscher à nouveau avant un
            # tour")
            if o.putsch and table[-1] != penalty:
                state.phase = "putsch"
                state.turn = None
                return
        self._exchange(state, penalty)

    def _exchange(self, state: PresidentState, penalty: int | None) -> None:
        """PR-10 from the second round on; PV-9: a failed putschist gives 4 cards."""
        table = state.table
        if state.round > 1:
            pairs = [(table[-1], table[0], 4 if penalty == table[-1] else 2)]
            if state.n_players > 3:
                pairs.append((table[-2], table[1], 1))
            for giver, receiver, number in pairs:
                given = self._forced_gift(state, giver, receiver, number)
                if given:
                    state.exchange_due[receiver] = (giver, given)
        if state.exchange_due:
            state.phase = "exchange"
            state.turn = None
        else:
            state.phase = "play"
            state.turn = state.leader

    def _resolve_putsch(self, state: PresidentState, seat: int, action: Action) -> None:
        if action is PUTSCH:  # PV-9: "tout le monde conserve ses cartes (pas d'échanges)"
            state.putschist = seat
            state.emit({"type": "putsch", "seat": seat})
            state.phase = "play"
            state.turn = state.leader
        else:
            self._exchange(state, None)

    def _jeu_blanc(self, state: PresidentState) -> bool:
        """PV-10: a hand without J, Q, K, A, 2 or Joker (ruling: the ranks above 10 in the
        normal order, so the 7s of the 32-card deck too).  The seed: "Le joueur ayant reçu
        le jeu blanc prend alors la place du Président et tout joueur qui était plus élevé
        dans la hiérarchie recule d'un échelon"; ruling: several such players take the
        first places in their former order.  Only from round 2 (ruling: round 1 has no
        hierarchy, and the seed places it "avant que tout échange soit fait")."""
        high = state.spec.high
        blanc = [s for s in state.table if not any(state.counts[s][r] for r in high)]
        if not blanc:
            return False
        for s in blanc:
            state.emit({"type": "jeu_blanc", "seat": s})
        rest = [s for s in state.table if s not in blanc]
        self._end_round(state, blanc + rest, "jeu_blanc")
        return True

    def _forced_gift(self, state: PresidentState, giver: int, receiver: int, number: int) -> int:
        """PR-10: the giver's strongest cards go to the receiver; PV-3: never a Joker."""
        spec = state.spec
        hand = state.hands[giver]
        moved: list[int] = []
        for r in reversed(spec.order[state.reversed]):
            moved += hand[r][max(0, len(hand[r]) - (number - len(moved))) :][::-1]
            if len(moved) == number:
                break
        self._move(state, giver, receiver, moved)
        self._emit_exchange(state, giver, receiver, moved, forced=True)
        return len(moved)

    def _move(self, state: PresidentState, giver: int, receiver: int, cards: list[int]) -> None:
        """Hand the physical ``cards`` over (the exchange, PR-10)."""
        for phys in cards:
            r = state.spec.rank_of[phys]
            state.hands[giver][r].remove(phys)
            state.counts[giver][r] -= 1
            state._take_into(receiver, phys)
            state.hands[receiver][r].sort()
        sizes = state.sizes[:]
        sizes[giver] -= len(cards)
        sizes[receiver] += len(cards)
        state.sizes = sizes
        state.refresh_hand(giver)
        state.refresh_hand(receiver)

    def _emit_exchange(
        self, state: PresidentState, giver: int, receiver: int, moved: list[int], forced: bool
    ) -> None:
        names = [state.spec.names[c] for c in moved]
        state.emit(
            {"type": "exchange", "giver": giver, "receiver": receiver, "count": len(moved)},
        )
        state.emit(
            {"type": "exchange_cards", "giver": giver, "receiver": receiver, "cards": names},
            to=[giver, receiver],
        )
        for seat, key in ((giver, "gave"), (receiver, "received")):
            record = state.exchanged[seat] or {"gave": None, "received": None}
            state.exchanged[seat] = {**record, key: {"cards": list(names), "forced": forced}}

    def _give_request(self, state: PresidentState, seat: int, number: int) -> Request:
        """PR-10: any `number` cards of the hand, Jokers excepted (PV-3)."""
        spec = state.spec
        counts = state.counts[seat]
        names = spec.rank_names
        held = [r for r in range(spec.n_ranks) if counts[r]]
        # ruling: never more cards than the hand has besides its Jokers
        number = min(number, sum(counts[: spec.n_ranks]))
        if number == 1:
            legal = [_give_action((names[r],)) for r in held]
        elif number == 2:
            legal = [
                _give_action((names[a], names[b]))
                for i, a in enumerate(held)
                for b in held[i:]
                if a != b or counts[a] >= 2
            ]
        else:  # weakest first in the normal order; PV-9: 4 after a failed putsch
            legal = [
                _give_action(tuple(names[r] for r in ranks))
                for ranks in itertools.combinations_with_replacement(held, number)
                if all(counts[r] >= ranks.count(r) for r in set(ranks))
            ]
        # the default gives the weakest cards in the current order
        weakest: list[int] = []
        for r in spec.order[state.reversed]:
            weakest.extend([r] * min(counts[r], number - len(weakest)))
        default = _give_action(tuple(names[r] for r in sorted(weakest)))
        return Request(seat, "exchange", legal, default)

    def _give_back(self, state: PresidentState, answers: Mapping[int, Action]) -> None:
        spec = state.spec
        for seat in sorted(answers):
            receiver = state.exchange_due[seat][0]
            hand = state.hands[seat]
            moved: list[int] = []
            for rank_name in answers[seat]["ranks"]:
                same = [c for c in hand[spec.rank_index[rank_name]] if c not in moved]
                moved.append(same[-1])
            self._move(state, seat, receiver, moved)
            self._emit_exchange(state, seat, receiver, moved, forced=False)
        state.exchange_due = {}
        state.phase = "play"
        state.turn = state.leader
