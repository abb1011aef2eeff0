"""Président for the tests: the variant table every Président test reads (``VARIANTS``:
each variant's options, written from docs/rules/president.md; the pairs the rules make
contradictory; each variant alone and the compatible pairs, with the seats they take),
and positions for the rule tests: the short form of actions (``9x2``, ``9x3+1j``,
``run:9:3x2``, ...), playing moves by short form, a stacked deck for a later round's deal,
the events of one type, and a round 1 finished in a known order."""

from __future__ import annotations

import itertools
from typing import Any

from arena.games.president import GAME
from arena.games.president.engine import PresidentState


def short(action: dict[str, Any]) -> str:
    kind = action["type"]
    if kind in ("pass", "putsch", "call"):
        return kind
    if kind == "give":
        return "give:" + ",".join(action["ranks"])
    if kind == "run":
        return f"run:{action['rank']}:{action['length']}x{action['count']}"
    if kind == "throw":
        return f"throw:{action['rank']}x{action['count']}"
    if kind == "lay":
        return f"lay:{action['rank']}x{action['count']}"
    if kind == "coup_d_etat":
        return f"coup:{action['rank']}x{action['count']}+{action['jokers']}j"
    if kind == "guillotine":
        return f"guillotine:{action['rank']}"
    if kind == "name":
        vice = action.get("vice_president")
        return "name:" + (f"v{vice}," if vice is not None else "") + f"t{action['trou_du_cul']}"
    text = f"{action['rank']}x{action['count']}"
    return text + (f"+{action['jokers']}j" if action.get("jokers") else "")


def play(state: PresidentState, *moves: str) -> None:
    """Each move is played by the seat whose turn it is."""
    for move in moves:
        [request] = GAME.pending(state)
        actions = {short(a): a for a in request.legal_actions}
        assert move in actions, f"seat {request.seat}: {move} not in {list(actions)}"
        GAME.apply(state, {request.seat: actions[move]})


def events(state: PresidentState, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in state.events if e.data["type"] == kind]


class StackedDeck:
    """Stands in for a state's generator so that the next deal gives the listed seats
    exactly the named cards (the other seats get what is left)."""

    def __init__(self, state: PresidentState, hands: dict[int, list[str]]):
        self.state = state
        self.hands = hands

    def shuffle(self, deck: list[int]) -> None:
        state, spec = self.state, self.state.spec
        n, table = state.n_players, state.table
        first = table.index(state.after[state.dealer])
        free: dict[str, list[int]] = {}
        for phys in deck:
            free.setdefault(spec.names[phys], []).append(phys)
        order: list[int | None] = [None] * len(deck)
        for i in range(n):
            seat = table[(first + i) % n]
            for j, name in enumerate(self.hands.get(seat, [])):
                order[i + j * n] = free[name].pop()
        rest = iter(sorted(c for cs in free.values() for c in cs))
        deck[:] = [next(rest) if c is None else c for c in order]


def finish_round_one(state: PresidentState, hands: list[list[str]], moves: list[str]) -> None:
    state.set_hands(hands, turn=1)
    play(state, *moves)
    assert state.round == 2


# A 4-player round 1 that ends in the order 2, 0, 1, 3 (Président seat 2, Vice-Président
# seat 0, Vice-Trou du Cul seat 1, Trou du Cul seat 3).
ROUND_ONE = (
    [["8C"], ["3C", "4C"], ["5C"], ["6C", "7C"]],
    ["3x1", "5x1", "6x1", "8x1", "pass", "pass", "4x1"],
)


# the variants of docs/rules/president.md, each with its sub-options: the one table of
# them, read by the generic checks (tests/test_contract.py), the pairs refused or run
# (tests/test_president.py) and the rule and policy tests of each variant
VARIANTS: dict[str, dict[str, Any]] = {
    "deck32": {"deck": 32},  # PR-1
    "raise_count": {"raise_count": True},  # PV-1
    "passe": {"passe": True, "passe_breakers": True},  # PV-2
    "jokers": {"jokers": True},  # PV-3
    "joker_wild": {"jokers": True, "joker_wild": True, "no_finish_on_joker": True},  # PV-3
    "no_twos_cut": {"no_twos_cut": True},  # PV-4
    "no_finish_on_two": {"no_finish_on_two": True},  # PV-4
    "quitte_ou_double": {"quitte_ou_double": True},  # PV-6
    "revolution": {"revolution": True, "revolution_lasts": True},  # PV-7
    "eight_clears": {"eight_clears": True},  # PV-11
    "decks2": {"decks": 2},  # PV-16
    "tabula_rasa": {"tabula_rasa": True},  # PV-5
    "coup_d_etat": {"jokers": True, "coup_d_etat": True},  # PV-8
    "guillotine": {"jokers": True, "guillotine": True},  # PV-8
    "putsch": {"putsch": True},  # PV-9
    "jeu_blanc": {"jeu_blanc": True},  # PV-10
    "wizz": {"wizz": True},  # PV-12
    "suites": {"suites": True},  # PV-13
    "rapidite": {"rapidite": True},  # PV-14
    "menteur": {"menteur": True},  # PV-15
}


# pairs the rules make contradictory, each refused with a message naming both (the
# engine's own list is not read here)
CONTRADICTORY = {
    frozenset({"passe", "quitte_ou_double"}),  # PV-2, PV-6: what follows two equal plays
    frozenset({"wizz", "passe"}),  # PV-12, PV-2: an equal play skips or binds
    frozenset({"wizz", "quitte_ou_double"}),  # PV-12, PV-6
    frozenset({"menteur", "rapidite"}),  # PV-15, PV-14: face down, or a rank seen complete
    frozenset({"menteur", "coup_d_etat"}),  # PV-15, PV-8: face down, or shown
    frozenset({"menteur", "guillotine"}),  # PV-15, PV-8
}


SINGLES = {
    "base": {},
    "after_dealer": {"later_lead": "after_dealer"},  # PR-11
    "target": {"target": 12, "max_rounds": 6},  # PR-12
    "passe_alone": {"passe": True},  # PV-2 without breakers
    "revolution_alone": {"revolution": True},  # PV-7 without revolution_lasts
    "no_finish_on_joker": {"jokers": True, "no_finish_on_joker": True},  # PV-3
    **VARIANTS,
}


PAIRS = {
    f"{a}+{b}": {**VARIANTS[a], **VARIANTS[b], "rounds": 2}
    for a, b in itertools.combinations(VARIANTS, 2)
    if frozenset({a, b}) not in CONTRADICTORY
}


def seats_for(options: dict[str, Any]) -> range:
    if options.get("decks") == 2:
        return range(6, 9)  # PV-16
    return range(5, 9) if options.get("tabula_rasa") else range(3, 9)  # PV-5


def probe_every(options: dict[str, Any], every: int) -> int:
    """How often check_bad_input probes: PV-15's random matches are long (random calls
    make cards go back to hands) and each announcement lists every rank and count, so
    they are probed more sparsely, else each probe pickles a long state hundreds of times."""
    return every * 15 if options.get("menteur") else every


# the rule id of each variant of VARIANTS (docs/rules/president.md): a row of the variant
# pair tables (tests/test_president_pairs*.py) cites both of its pair's
VARIANT_RULES: dict[str, str] = {
    "deck32": "PR-1",
    "raise_count": "PV-1",
    "passe": "PV-2",
    "jokers": "PV-3",
    "joker_wild": "PV-3",
    "no_twos_cut": "PV-4",
    "no_finish_on_two": "PV-4",
    "quitte_ou_double": "PV-6",
    "revolution": "PV-7",
    "eight_clears": "PV-11",
    "decks2": "PV-16",
    "tabula_rasa": "PV-5",
    "coup_d_etat": "PV-8",
    "guillotine": "PV-8",
    "putsch": "PV-9",
    "jeu_blanc": "PV-10",
    "wizz": "PV-12",
    "suites": "PV-13",
    "rapidite": "PV-14",
    "menteur": "PV-15",
}
