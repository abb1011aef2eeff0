"""Cactus views (game ``cactus``).

Cards are names such as ``"10H"`` (rank then suit).  ``view["layouts"][seat]`` lists that
seat's slots as ``{"slot": id, "card": name or None}``: the card is there only when this
seat knows it (it saw it and it has not moved unseen since).  ``view["values"]`` gives the
value of each rank under the match's options; ``view["decision"]`` names what is asked now
(``initial_peek``, ``turn``, ``drawn``, ``taken``, ``snap``, ``power``, ``call``).
"""

from __future__ import annotations

from arenabot.views import View


def rank(card: str) -> str:
    """``"10H"`` → ``"10"``."""
    return card[:-1]


def suit(card: str) -> str:
    """``"10H"`` → ``"H"``."""
    return card[-1]


def card_value(view: View, card: str) -> int:
    """What the card counts in a layout's total, under this match's values."""
    return view["values"][rank(card)]


def average_value(view: View) -> float:
    """The mean value of a card of the deck: a fair guess for an unknown card."""
    values = view["values"]
    return sum(values.values()) / len(values)


def layout(view: View, seat: int | None = None) -> dict[int, str | None]:
    """Slot id → card name, or None where this seat does not know the card (default: my
    own layout)."""
    owner = view["seat"] if seat is None else seat
    return {s["slot"]: s["card"] for s in view["layouts"][owner]}


def my_layout(view: View) -> dict[int, str | None]:
    """My slots: slot id → card name or None."""
    return layout(view)


def known_cards(view: View) -> dict[tuple[int, int], str]:
    """Every card this seat knows on the table: (owner seat, slot id) → card name."""
    return {
        (owner, s["slot"]): s["card"]
        for owner, row in enumerate(view["layouts"])
        for s in row
        if s["card"] is not None
    }


def unknown_slots(view: View, seat: int | None = None) -> list[int]:
    """The slots whose card this seat does not know (default: in my own layout)."""
    return [slot for slot, card in layout(view, seat).items() if card is None]


def estimated_total(view: View, seat: int | None = None, unknown: float | None = None) -> float:
    """A layout's total: known cards at their value, unknown ones at ``unknown`` (default
    the deck's average value)."""
    guess = average_value(view) if unknown is None else unknown
    return sum(
        guess if card is None else card_value(view, card) for card in layout(view, seat).values()
    )


def top_discard(view: View) -> str | None:
    """The card on top of the discard pile, None when it is empty."""
    discard = view["discard"]
    return discard[-1] if discard else None


def drawn_card(view: View) -> str | None:
    """The card I drew this turn and still hold (decision ``drawn``), else None."""
    return view["drawn"]
