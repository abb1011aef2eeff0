"""French-suited playing cards shared by the games.

A physical card is an int: ``deck * 52 + rank_index * 4 + suit_index``, so two decks
shuffled together still have distinct physical cards while their names repeat.  Names
are what views and events show: rank then suit letter, e.g. ``"AS"``, ``"10H"``, ``"QD"``.
"""

from __future__ import annotations

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
CARDS_PER_DECK = len(RANKS) * len(SUITS)

# index by physical card % 52
NAMES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
RANK_OF: tuple[str, ...] = tuple(r for r in RANKS for _ in SUITS)


def deck(n_decks: int = 1) -> list[int]:
    """Physical cards of ``n_decks`` 52-card decks, in a fixed (unshuffled) order."""
    return list(range(CARDS_PER_DECK * n_decks))


def name(card: int) -> str:
    return NAMES[card % CARDS_PER_DECK]


def rank(card: int) -> str:
    return RANK_OF[card % CARDS_PER_DECK]


def rank_of_name(card_name: str) -> str:
    return card_name[:-1]
