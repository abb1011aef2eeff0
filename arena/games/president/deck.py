"""Président's deck facts: the ranks and their order, the Jokers, the physical cards of a
deck configuration and the plays each rank allows (:class:`Spec`, built once per
configuration by :func:`deck_spec`).

Card names are those of :mod:`arena.games.cards` plus ``"BJ"`` and ``"RJ"`` for the Jokers;
physical cards are ints (``deck * 52 + rank * 4 + suit`` as in ``cards``, Jokers after
all the decks) so that two decks stay distinct.  Rank indices are in the normal order,
weakest first; the Jokers are the last two indices.  ``pos`` gives a rank's strength in the
current order (PV-7 reverses the naturals, never the Jokers).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from arena.games import cards
from arena.games.base import Action
from arena.games.president.actions import play_action

ORDER_52 = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")  # PR-2
ORDER_32 = ("8", "9", "10", "J", "Q", "K", "A", "7")  # PR-2, 32-card deck
JOKERS = ("BJ", "RJ")  # PV-3: black, coloured


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
            tuple(play_action(name, count, j, wild) for j in range(min(count, 2 * n_decks) + 1))
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
        # PV-7 ruling from Wikilivres: with several decks a revolution takes 7 or 8 cards
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
