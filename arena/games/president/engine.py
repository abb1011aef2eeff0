"""Président (Trou du Cul), game id ``president``: rules PR-1..12 and the variants PV-1,
PV-2, PV-3, PV-4, PV-6, PV-7, PV-11 and PV-16 of docs/rules/president.md, each variant an option.

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
- ``{"type": "give", "ranks": ["3", "7"]}``: the Président's (two cards) or the
  Vice-Président's (one card) choice in the exchange, ranks weakest first in the deck's
  normal order.

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
Président lead (PR-11).
"""

from __future__ import annotations

import functools
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
    deck: int = 52  # PR-1: 52 or 32
    decks: int = 1  # PV-16: 1 or 2
    rounds: int | None = None  # PR-12: default DEFAULT_ROUNDS when no target
    target: int | None = None  # PR-12
    max_rounds: int | None = None  # PR-12: only with target
    later_lead: Literal["trou_du_cul", "after_dealer"] = "trou_du_cul"  # PR-11
    raise_count: bool = False  # PV-1
    passe: bool = False  # PV-2
    passe_breakers: bool = False  # PV-2
    jokers: bool = False  # PV-3
    no_finish_on_joker: bool = False  # PV-3
    joker_wild: bool = False  # PV-3
    no_twos_cut: bool = False  # PV-4
    no_finish_on_two: bool = False  # PV-4
    quitte_ou_double: bool = False  # PV-6
    revolution: bool = False  # PV-7
    revolution_lasts: bool = False  # PV-7
    eight_clears: bool = False  # PV-11

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
)


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
    if o.passe and o.quitte_ou_double:
        raise OptionsError(
            "president options 'passe' and 'quitte_ou_double' contradict each other: both "
            "say what must follow two equal plays; choose one"
        )
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
        self.equal_plays = options.passe or options.quitte_ou_double  # PV-2, PV-6
        # PV-7: the cards of one play that make a revolution, None without the option
        self.revolution_size = spec.revolution_size if options.revolution else None
        # no Joker and no raised count: legal plays take the short path
        self.plain = not options.jokers and not options.raise_count
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
        self.trick: list[dict[str, JSON]] = []
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
        if turn is not None:
            self.turn = turn
        self._pending = None

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
    presets: Mapping[str, Mapping[str, JSON]] = {}

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
        state = PresidentState(
            n_players, seed, o, deck_spec(o.deck, o.decks, o.jokers, o.joker_wild)
        )
        self._start_round(state)
        return state

    def _requests(self, state: PresidentState) -> list[Request]:
        if state.phase == "exchange":
            return [
                self._give_request(state, giver, number)
                for giver, (_, number) in sorted(state.exchange_due.items())
            ]
        seat = state.turn
        assert seat is not None
        legal = self._legal_plays(state, seat)
        # the default is a pass when passing is legal, else the weakest lead (legal[0])
        return [Request(seat, PLAY, legal, legal[0])]

    def _apply(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        if state.phase == "exchange":
            self._give_back(state, answers)
            return
        seat = requests[0].seat
        action = answers[seat]
        if action is PASS:  # answers are the engine's own canonical elements
            self._pass(state, seat)
        else:
            spec = state.spec
            self._play(
                state,
                seat,
                spec.rank_index[action["rank"]],
                action["count"],
                action.get("jokers", 0),
            )

    def view(self, state: PresidentState, seat: int) -> dict[str, JSON]:
        """The seat's information set (rules, "What each seat may see").

        A view shares the state's lists and dicts instead of copying them: the engine
        replaces such a piece when it changes and never alters one it has shown, so a
        view stays what it was when built.  Views are read-only for their users."""
        spec = state.spec
        top = state.top_rank
        return {
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
        """The general case: raised counts, runs of equal plays, Jokers alone or wild."""
        spec = state.spec
        o = state.options
        n = spec.n_ranks
        counts = state.counts[seat]
        plays = spec.plays
        order = spec.order[state.reversed]
        pos = spec.pos[state.reversed]
        jokers = counts[n] + counts[n + 1] if state.wild else 0
        # PV-3 ruling: a hand of wild Jokers only may play them as a set of the weakest rank
        bare = jokers and jokers == state.sizes[seat]
        top = state.top_rank
        out: list[Action] = []
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
            if o.raise_count:  # PV-1: as many cards or more
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
        first = 0 if bare else 1
        for r in ranks:
            k = counts[r]
            if not k and not (bare and r == order[0]):
                continue
            for total in range(low, min(high, k + jokers, wild_cap) + 1):
                # naturals alone first, then with more and more wild Jokers (PV-3)
                for j in range(max(0, total - k), min(jokers, total - first) + 1):
                    out.append(plays[r][total][j])
        if o.jokers:
            # PV-3: a Joker alone at any time, on any set; the coloured beats the black
            for r in alone:
                if counts[r]:
                    out.append(plays[r][1][0])
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

        if state.equal_plays:  # PV-2 counts same-rank plays, PV-6 identical plays
            same = r == state.top_rank and (
                not state.options.quitte_ou_double or count == state.top_count
            )
            state.run = state.run + 1 if same else 1
        # judged in the order the cards were played in (before a revolution they make)
        reversed_order = state.reversed
        cut = r in state.cut_ranks[reversed_order]
        state.top_rank = r
        state.top_count = count
        state.top_jokers = jokers
        state.last_player = seat
        state.passes = 0
        # PV-7 (ruling: wild Jokers count; the cut above was judged before the reversal)
        if state.revolution_size is not None and count >= state.revolution_size:
            state.reversed = not reversed_order
            for s in range(state.n_players):
                state.refresh_hand(s)
            state.emit({"type": "revolution", "order": spec.order_names[state.reversed]})

        if not sizes[seat]:  # PR-8
            o = state.options
            forbidden = (o.no_finish_on_two and r == spec.order[reversed_order][-1]) or (  # PV-4
                o.no_finish_on_joker and (jokers > 0 or r >= spec.n_ranks)  # PV-3
            )
            self._go_out(state, seat, forbidden)
            if state.n_active == 1:
                self._end_round(state)
                return
        if cut:
            self._end_trick(state, "cut")
        else:
            state.turn = state.next_active(seat)

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

    def _end_trick(self, state: PresidentState, why: str) -> None:
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

    # -- rounds ----------------------------------------------------------------------------
    def _end_round(self, state: PresidentState) -> None:
        n = state.n_players
        last = next(s for s in range(n) if state.active[s])
        places = state.places[:]
        places[state.front] = last  # the one still holding cards (PR-8)
        state.places = places
        order = [s for s in places if s is not None]
        points = [0] * n
        for place, seat in enumerate(order):
            points[seat] = n - 1 - place  # PR-12
        state.scores = [a + b for a, b in zip(state.scores, points, strict=True)]
        roles = roles_for(n)
        result: dict[str, JSON] = {
            "round": state.round,
            "order": order,
            "roles": [roles[order.index(s)] for s in range(n)],
            "points": points,
            "scores": list(state.scores),
        }
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
        state.played_view = {"cards": state.pile_names}
        state.sizes = [0] * n
        state.top_rank = state.last_player = None
        state.top_count = state.top_jokers = state.passes = state.run = 0
        state.trick = []
        state.leader = leader

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

        state.exchange_due = {}
        if state.round > 1:  # PR-10
            pairs = [(table[-1], table[0], 2)]
            if n > 3:
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
            state.turn = leader

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
        if number == 1:
            legal = [_give_action((names[r],)) for r in held]
        else:
            legal = [
                _give_action((names[a], names[b]))
                for i, a in enumerate(held)
                for b in held[i:]
                if a != b or counts[a] >= 2
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
