"""Président variant pairs whose first variant is PV-2 `passe` or PV-3 `jokers`: every key
of tests/support/president.PAIRS that starts with ``passe+`` or ``jokers+`` (31 pairs).

Each row (``P``, tests/support/president_table.py) is one position where both variants
act in the same play or decision: the play that ends a hand (PR-8), a play on each kind
of trick (led, on a single, on a set, on a run, on a forced rank, on a Joker), a window
out of turn, round 1 against a later round.  Its options are exactly both variants' of
tests/support/president.VARIANTS (so `passe` always comes with `passe_breakers`); it cites
both rule ids and the base rules the same play acts under.  Every expected value is
written from docs/rules/president.md (its rules, "How the engine reads the variants" and
"Three readings of the source"), never read back from the engine; "ruling" marks a row
that rests on one of the engine's documented readings.  Where two variants cannot act in
one play, the row says so and shows each acting with the other on.

Moves are in the short form of tests/support/president.py (``9x2``, ``9x2+1j``, ``BJx1``,
``run:5:3x1``, ``throw:9x2@0``, ``coup:Qx5+1j``, ``guillotine:Q``, ``name:v0,t1``,
``lay:5x1``, ``pass@2``); in round 1 seat 0 deals and seats follow 0, 1, 2, ... clockwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.president import VARIANTS, events
from tests.support.president_table import P, PairCase, asked, check_group, dealt_round_one, run_pair


def both(a: str, b: str) -> dict[str, Any]:
    """The options of a pair row: both variants', nothing else (PAIRS adds only rounds)."""
    return {**VARIANTS[a], **VARIANTS[b]}


PJ = both("passe", "jokers")
PW = both("passe", "joker_wild")
PN = both("passe", "no_twos_cut")
PF = both("passe", "no_finish_on_two")
PR = both("passe", "revolution")
PE = both("passe", "eight_clears")
PD = both("passe", "decks2")
PT = both("passe", "tabula_rasa")
PC = both("passe", "coup_d_etat")
PG = both("passe", "guillotine")
PP = both("passe", "putsch")
PB = both("passe", "jeu_blanc")
PS = both("passe", "suites")
PQ = both("passe", "rapidite")
PM = both("passe", "menteur")
JW = both("jokers", "joker_wild")
JN = both("jokers", "no_twos_cut")
JF = both("jokers", "no_finish_on_two")
JQ = both("jokers", "quitte_ou_double")
JR = both("jokers", "revolution")
JE = both("jokers", "eight_clears")
JD = both("jokers", "decks2")
JT = both("jokers", "tabula_rasa")
JC = both("jokers", "coup_d_etat")
JG = both("jokers", "guillotine")
JP = both("jokers", "putsch")
JB = both("jokers", "jeu_blanc")
JZ = both("jokers", "wizz")
JS = both("jokers", "suites")
JA = both("jokers", "rapidite")
JM = both("jokers", "menteur")

# a hand dealt with no card above 10 (PV-10), and the round-1 seating of later rounds:
# round 1 ended 2, 0, 1, 3 (Président seat 2, Vice-Président 0, Vice-Trou 1, Trou du Cul 3;
# PR-9), so round 2 is seated 2, 0, 1, 3 and seat 3 leads (PR-11)
BLANC = ["3C", "3D", "3H", "3S", "4C", "4D", "4H", "4S", "5C", "5D", "5H", "5S", "6C"]
ORDER = [2, 0, 1, 3]
QUADS = ["QC", "QD", "QH", "QS"]
NINES = ["9C", "9D", "9H", "9S"]

# fmt: off
# (a table: one row a few lines, as the rules read, rather than one argument a line)
ROWS: list[PairCase] = [
    # == passe (PV-2, with passe_breakers) ================================================
    # -- + jokers (PV-3): a Joker alone "at any time", and the passe's breakers
    P("passe+jokers", "PV-2 PV-3", "forced",
      "on a forced 9: a 9, a 2 or either Joker alone breaks it; no king", PJ,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "2C", "BJ", "RJ", "KC"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "9x1", "2x1", "BJx1", "RJx1"]),
    P("passe+jokers", "PV-2 PV-3 PR-8", "finish",
      "the coloured Joker breaks the passe as its last card: out first, and it wins the "
      "trick, so the next one still in leads", PJ,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["RJ"]],
      ["9x1", "9x1", "RJx1"], outs=[(3, 1, False)], tricks=[("cut", 0)], turn=0),
    P("passe+jokers", "PV-2 PV-3", "set",
      "on a forced pair: a pair of 2s or a Joker alone (even on pairs); no pair of kings",
      PJ, [["3C", "4C"], ["9C", "9D", "5C"], ["9H", "9S", "6C"], ["BJ", "KC", "KD", "2C", "2D"]],
      ["9x2", "9x2"], turn=3, legal=["pass", "2x2", "BJx1"]),
    P("passe+jokers", "PV-2 PV-3 PR-7", "forced",
      "ruling: with Jokers a 2 that breaks the passe does not cut (2s never do); the next "
      "may play a 2 on it (equal rank) or a Joker", PJ,
      [["2D", "BJ", "3C"], ["9C", "5C"], ["9D", "6C"], ["9H", "2C", "KC"]],
      ["9x1", "9x1", "2x1"], tricks=[], turn=0, legal=["pass", "2x1", "BJx1"]),
    # -- + joker_wild (PV-3): a wild Joker only completes a set, never alone
    P("passe+joker_wild", "PV-2 PV-3", "forced",
      "on a forced single 9 a wild Joker cannot break the passe: it is never alone", PW,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "BJ", "2C", "KC"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "9x1", "2x1"]),
    P("passe+joker_wild", "PV-2 PV-3", "forced",
      "a 9 and a wild Joker are a pair of 9s: two such pairs force 9s, and a wild Joker "
      "completes the forced pair or the breaking pair of 2s", PW,
      [["3C", "4C"], ["9C", "9D", "5C"], ["9H", "BJ", "6C"], ["9S", "RJ", "2C", "KC", "KD"]],
      ["9x2", "9x2+1j"], turn=3, legal=["pass", "9x2+1j", "2x2+1j"],
      view={3: {"trick": {"rank": "9", "count": 2, "jokers": 1, "forced": True}}}),
    P("passe+joker_wild", "PV-2 PV-3 PR-8", "finish",
      "no_finish_on_joker: the forced pair played with a wild Joker as the last cards takes "
      "the last place; the next is still bound to the 9s", PW,
      [["3C", "KC"], ["9C", "9D", "5C"], ["9H", "BJ", "6C"], ["9S", "RJ"]],
      ["9x2", "9x2+1j", "9x2+1j"], outs=[(3, 4, True)], turn=0, legal=["pass"]),
    # -- + no_twos_cut (PV-4): a breaking 2 leaves the trick open
    P("passe+no_twos_cut", "PV-2 PV-4", "forced",
      "the 2 that breaks the passe does not cut; on it only a 2 (equal rank) or a pass", PN,
      [["2D", "AC", "3C"], ["9C", "5C"], ["9D", "6C"], ["9H", "2C", "KC"]],
      ["9x1", "9x1", "2x1"], tricks=[], turn=0, legal=["pass", "2x1"]),
    P("passe+no_twos_cut", "PV-2 PV-4 PR-8", "finish",
      "the breaking 2 is the last card: out first, the trick goes on", PN,
      [["2D", "AC", "3C"], ["9C", "5C"], ["9D", "6C"], ["2C"]],
      ["9x1", "9x1", "2x1"], outs=[(3, 1, False)], tricks=[], turn=0, legal=["pass", "2x1"]),
    P("passe+no_twos_cut", "PV-2 PV-4", "set",
      "a pair of 2s breaks a forced pair and leaves the trick open", PN,
      [["2C", "2D", "3C"], ["9C", "9D", "5C"], ["9H", "9S", "6C"], ["2H", "2S", "KC"]],
      ["9x2", "9x2", "2x2"], tricks=[], turn=0, legal=["pass", "2x2"]),
    # -- + no_finish_on_two (PV-4)
    P("passe+no_finish_on_two", "PV-2 PV-4 PR-7 PR-8", "finish",
      "a last 2 that breaks the passe: a forbidden finish (last place), and it cuts", PF,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["2C"]],
      ["9x1", "9x1", "2x1"], outs=[(3, 4, True)], tricks=[("cut", 0)], turn=0),
    P("passe+no_finish_on_two", "PV-2 PV-4 PR-8", "finish",
      "a last forced 9 is a plain finish; the next is bound to the 9s (or a 2)", PF,
      [["9S", "KC", "2D"], ["9C", "5C"], ["9D", "6C"], ["9H"]],
      ["9x1", "9x1", "9x1"], outs=[(3, 1, False)], turn=0, legal=["pass", "9x1", "2x1"]),
    P("passe+no_finish_on_two", "PV-2 PV-4 PR-7 PR-8", "set",
      "a last pair of 2s breaking a forced pair: a forbidden finish, and it cuts", PF,
      [["3C", "4C"], ["9C", "9D", "5C"], ["9H", "9S", "6C"], ["2C", "2D"]],
      ["9x2", "9x2", "2x2"], outs=[(3, 4, True)], tricks=[("cut", 0)], turn=0),
    # -- + revolution (PV-7, revolution_lasts)
    P("passe+revolution", "PV-2 PV-7", "forced",
      "after a revolution two 9s still force the 9s (the 4 that now beats a 9 is refused)",
      PR, [["6C", "7C"], ["5C", "5D", "5H", "5S", "9C", "QC"], ["9D", "8C"], ["9H", "KC", "4C"]],
      ["5x4", "pass", "pass", "pass", "9x1", "9x1"], reversed=True, turn=3,
      legal=["pass", "9x1"]),
    P("passe+revolution", "PV-2 PV-7 PR-7", "forced",
      "ruling: in a revolution the 3, the rank that cuts, breaks the passe, not the 2", PR,
      [["6C", "7C"], ["5C", "5D", "5H", "5S", "9C", "QC"], ["9D", "8C"],
       ["9H", "3C", "2C", "KC"]],
      ["5x4", "pass", "pass", "pass", "9x1", "9x1"], reversed=True, turn=3,
      legal=["pass", "9x1", "3x1"]),
    P("passe+revolution", "PV-2 PV-7 PR-5", "single",
      "in a revolution, on one 9: an equal 9 or a rank below it in the normal order", PR,
      [["6C", "7C"], ["5C", "5D", "5H", "5S", "9C", "QC"], ["9D", "KC", "4C"], ["8C", "10C"]],
      ["5x4", "pass", "pass", "pass", "9x1"], reversed=True, turn=2,
      legal=["pass", "9x1", "4x1"]),
    P("passe+revolution", "PV-2 PV-7 PR-8", "finish",
      "four of a kind as the last cards: out first and the order turns; one deck has no "
      "equal four to follow it", PR,
      [["3C", "JC"], ["5C", "5D", "5H", "5S"], ["4C", "4D", "4H", "4S", "KC"], ["6C"]],
      ["5x4"], outs=[(1, 1, False)], reversed=True, turn=2, legal=["pass", "4x4"]),
    P("passe+revolution", "PV-2 PV-7 PR-8 PR-11", "later",
      "revolution_lasts: round 2 starts in the reversed order", PR,
      [["3C"], ["5C", "5D", "5H", "5S"], ["KC"], ["4C"]],
      ["5x4", "pass", "pass", "pass", "Kx1", "4x1"], results={"order": [1, 2, 3, 0]}, round=2,
      reversed=True, phase="exchange"),
    # -- + eight_clears (PV-11)
    P("passe+eight_clears", "PV-2 PV-11", "forced",
      "on a forced 9 no 8 (it is not the rank, nor a breaker)", PE,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "8C", "2C", "KC"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "9x1", "2x1"]),
    P("passe+eight_clears", "PV-2 PV-11", "single",
      "on one 7: an equal 7 (passe) or an 8", PE,
      [["3C", "4C"], ["7C", "5C"], ["7D", "8C", "3D"], ["6C"]],
      ["7x1"], turn=2, legal=["pass", "7x1", "8x1"]),
    P("passe+eight_clears", "PV-2 PV-11 PR-8", "finish",
      "an 8 as the last card clears the trick; the next one still in leads", PE,
      [["3C", "4C"], ["7C", "5C"], ["8C"], ["9C", "6C"]],
      ["7x1", "8x1"], outs=[(2, 1, False)], tricks=[("cut", 3)], turn=3),
    # -- + decks2 (PV-16)
    P("passe+decks2", "PV-2 PV-16", "forced",
      "a third 9 of the two decks: still forced", PD,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "7C"], ["9S", "KC", "2C"], ["10C", "JC"]],
      ["9x1", "9x1", "9x1"], turn=4, legal=["pass", "9x1", "2x1"]),
    P("passe+decks2", "PV-2 PV-16", "set",
      "two decks: a four of 9s on a four of 9s, then only four 2s break it", PD,
      [["3C", "4C"], [*NINES, "5C"], [*NINES, "6C"],
       ["KC", "KD", "KH", "KS", "2C", "2D", "2H", "2S"], ["7C"], ["8C"]],
      ["9x4", "9x4"], turn=3, legal=["pass", "2x4"]),
    P("passe+decks2", "PV-2 PV-16 PR-7 PR-8", "finish",
      "a breaking 2 as the last card: out first, it cuts, the next one still in leads", PD,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["2C"], ["9S", "KC"], ["10C", "JC"]],
      ["9x1", "9x1", "2x1"], outs=[(3, 1, False)], tricks=[("cut", 4)], turn=4),
    # -- + tabula_rasa (PV-5)
    P("passe+tabula_rasa", "PV-2 PV-5", "forced",
      "two 9s force the 9s before the rank is complete", PT,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "KC", "2C"], ["9S", "7C"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "9x1", "2x1"]),
    P("passe+tabula_rasa", "PV-2 PV-5", "forced",
      "the forced 9s complete the rank: tabula rasa, its last player leads", PT,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "KC", "2C"], ["9S", "7C"]],
      ["9x1", "9x1", "9x1", "9x1"], tricks=[("tabula_rasa", 4)], turn=4),
    P("passe+tabula_rasa", "PV-2 PV-5 PR-8", "finish",
      "the completing forced 9 is the last card: out first, the next one still in leads", PT,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "KC", "2C"], ["9S"]],
      ["9x1", "9x1", "9x1", "9x1"], outs=[(4, 1, False)], tricks=[("tabula_rasa", 0)],
      turn=0),
    # -- + coup_d_etat (PV-8, with jokers)
    P("passe+coup_d_etat", "PV-2 PV-3 PV-8", "forced",
      "on a forced 9 a coup d'état is offered (whatever the trick), with the 9 and the Joker",
      PC, [["3C", "4C", "5C"], ["9C", "4D"], ["9D", "5D", "6D"], ["9H", *QUADS, "BJ", "KC"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "9x1", "BJx1", "coup:Qx5+1j"]),
    P("passe+coup_d_etat", "PV-2 PV-8 PR-9", "round1",
      "ruling: a coup on a forced 9 in round 1: the player first, then by fewest cards", PC,
      [["3C", "4C", "5C"], ["9C", "4D"], ["9D", "5D", "6D"], ["9H", *QUADS, "BJ", "KC"]],
      ["9x1", "9x1", "coup:Qx5+1j"], ended_by="coup_d_etat", results={"order": [3, 1, 2, 0]}),
    P("passe+coup_d_etat", "PV-2 PV-8 PR-11", "later",
      "a coup on a forced 9 in round 2: the player and the Président swap places", PC,
      [["QC", "QD", "QH", "QS", "BJ", "9H"], ["3C", "4C"], ["9D", "5D"], ["9C", "4D"]],
      ["9x1", "9x1", "coup:Qx5+1j"], order=ORDER, lead=3, ended_by="coup_d_etat",
      results={"order": [0, 2, 1, 3], "ended_by": "coup_d_etat"}),
    # -- + guillotine (PV-8, with jokers)
    P("passe+guillotine", "PV-2 PV-3 PV-8", "forced",
      "on a forced 9 either Joker alone breaks it, and the guillotine is offered", PG,
      [["3C", "4C", "5C"], ["9C", "4D"], ["9D", "5D", "6D"], [*QUADS, "BJ", "RJ", "KC"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "BJx1", "RJx1", "guillotine:Q"]),
    P("passe+guillotine", "PV-2 PV-8 PR-9", "round1",
      "ruling: a guillotine on a forced 9 in round 1: the player, the named Vice-Président, "
      "the others by fewest cards, the named Trou du Cul", PG,
      [["3C", "4C", "5C"], ["9C", "4D"], ["9D", "5D", "6D"], [*QUADS, "BJ", "RJ", "KC"]],
      ["9x1", "9x1", "guillotine:Q", "name:v0,t1"], ended_by="guillotine",
      results={"order": [3, 0, 2, 1]}),
    # -- + putsch (PV-9)
    P("passe+putsch", "PV-2 PV-9", "round1",
      "no putsch in round 1 (no Trou du Cul yet): play starts, and the passe binds", PP,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "KC"]],
      ["9x1", "9x1"], round=1, asked=[(3, "play")], legal=["pass", "9x1"]),
    P("passe+putsch", "PV-2 PV-9 PR-8 PR-12", "later",
      "putsch, then another player goes out first on the forced 9s: the round stops, roles "
      "come back, the putschist loses 1 and the others score nothing", PP,
      [["9H"], ["3C", "4C"], ["9D", "5D"], ["9C", "KC", "KD"]],
      ["putsch", "9x1", "9x1", "9x1"], order=ORDER, lead=3, ended_by="putsch",
      results={"order": ORDER, "points": [0, 0, 0, -1]}, scores=[2, 1, 3, -1], phase="over"),
    P("passe+putsch", "PV-2 PV-9 PR-8", "later",
      "the putschist goes out first on its own forced 9: the round goes on, bound to 9s", PP,
      [["3C", "6C"], ["4C", "7C"], ["9D", "5D"], ["9C", "9S"]],
      ["putsch", "9x1", "9x1", "pass", "pass", "9x1"], order=ORDER, lead=3,
      view={0: {"places": [3, None, None, None]}}, turn=2, legal=["pass"], round=2,
      phase="play"),
    # -- + jeu_blanc (PV-10): a jeu blanc ends the round at the deal, before any passe
    P("passe+jeu_blanc", "PV-2 PV-10", "round1",
      "reading: round 1 plays hands without a figure (the deal: the test below), two 9s bind",
      PB,
      [["3C", "4C", "5C"], ["9C", "6C", "7C"], ["9D", "8C", "10C"], ["9H", "3D", "4D"]],
      ["9x1", "9x1"], round=1, phase="play", turn=3, legal=["pass", "9x1"]),
    P("passe+jeu_blanc", "PV-2 PV-10 PR-12", "later",
      "the rules cannot meet in one play: a jeu blanc in round 2 ends it at the deal (the "
      "Vice-Trou du Cul first, those above move down one)", PB,
      None, [], order=ORDER, deal={1: BLANC}, ended_by="jeu_blanc",
      results={"order": [1, 2, 0, 3], "points": [1, 3, 2, 0]}),
    # -- + suites (PV-13)
    P("passe+suites", "PV-2 PV-13", "run",
      "equal rank is for sets: a run is beaten only by a higher run, not the same one", PS,
      [["3C", "4C"], ["5C", "6C", "7C", "KC"], ["5D", "6D", "7D", "8D", "4D"], ["3D", "JC"]],
      ["run:5:3x1"], turn=2, legal=["pass", "run:6:3x1"]),
    P("passe+suites", "PV-2 PV-13", "forced",
      "on a forced 9 no run (runs are only led)", PS,
      [["3C", "4C"], ["9C", "5C"], ["9D", "6C"], ["9H", "10C", "JC", "QC"]],
      ["9x1", "9x1"], turn=3, legal=["pass", "9x1"]),
    # -- + rapidite (PV-14)
    P("passe+rapidite", "PV-2 PV-14", "window",
      "two 9s, a throw of the last two: the throw counts for the passe, so the next is "
      "bound to the 9s (none left) or a pair of 2s, not kings", PQ,
      [["9H", "9S", "3C"], ["9C", "2C", "2D", "KC", "KD"], ["9D", "5C"], ["6C", "7C"]],
      ["9x1", "9x1", "throw:9x2@0"], turn=1, trick=("9", 2, 0), legal=["pass", "2x2"]),
    P("passe+rapidite", "PV-2 PV-14", "window",
      "one 9, then a throw of three: two plays of 9s in a row bind the next", PQ,
      [["KC", "KD", "KH", "2C", "2D", "2H"], ["9C", "4C"], ["5C", "6C"], ["9D", "9H", "9S", "7C"]],
      ["9x1", "throw:9x3@3"], turn=0, trick=("9", 3, 3), legal=["pass", "2x3"],
      view={0: {"trick": {"forced": True}}}),
    P("passe+rapidite", "PV-2 PV-14 PR-8", "finish",
      "a throw of the last two 9s takes the thrower out; the next is still bound", PQ,
      [["9H", "9S"], ["9C", "2C", "2D", "KC", "KD"], ["9D", "5C"], ["6C", "7C"]],
      ["9x1", "9x1", "throw:9x2@0"], outs=[(0, 1, False)], turn=1, legal=["pass", "2x2"]),
    # -- + menteur (PV-15)
    P("passe+menteur", "PV-2 PV-15", "forced",
      "two announced 9s nobody calls bind the next announcement to a 9 or a 2, whatever "
      "the hand", PM,
      [["3C", "4C"], ["5C", "6C"], ["7C", "8C"], ["KC", "AC"]],
      ["9x1", "lay:5x1", "pass@2", "9x1", "lay:7x1", "pass@3"], turn=3,
      legal=["pass", "9x1", "2x1"]),
    P("passe+menteur", "PV-2 PV-15 PR-8", "finish",
      "a forced 9 announced with the last card, not called: out first; the next is bound",
      PM, [["3C", "4C"], ["5C", "6C"], ["7C", "8C"], ["KC"]],
      ["9x1", "lay:5x1", "pass@2", "9x1", "lay:7x1", "pass@3", "9x1", "lay:Kx1", "pass@0"],
      outs=[(3, 1, False)], turn=0, legal=["pass", "9x1", "2x1"]),

    # == jokers (PV-3) ======================================================================
    # -- + joker_wild (PV-3): the same rule with its sub-options
    P("jokers+joker_wild", "PV-3", "set",
      "wild: no Joker alone, even on a pair; a 9 and a Joker make a pair", JW,
      [["3C"], ["8C", "8D", "4C"], ["9C", "BJ", "RJ"], ["5C"]],
      ["8x2"], turn=2, legal=["pass", "9x2+1j"]),
    P("jokers+joker_wild", "PV-3 PR-7", "lead",
      "a wild coloured Joker in a pair does not win the trick (only a Joker alone does)", JW,
      [["3C"], ["9C", "RJ", "4C"], ["5C"], ["6C"]],
      ["9x2+1j"], tricks=[], turn=2, legal=["pass"]),
    # -- + no_twos_cut (PV-4)
    P("jokers+no_twos_cut", "PV-3 PV-4", "set",
      "on a pair of 2s nothing higher, but a Joker alone", JN,
      [["3C"], ["2C", "2D", "4C"], ["2H", "AC", "AD", "BJ"], ["6C"]],
      ["2x2"], tricks=[], turn=2, legal=["pass", "BJx1"]),
    P("jokers+no_twos_cut", "PV-3 PV-4 PR-7", "joker",
      "the coloured Joker on a 2 wins the trick at once", JN,
      [["3C"], ["2C", "4C"], ["RJ", "AC", "5C"], ["6C"]],
      ["2x1", "RJx1"], tricks=[("cut", 2)], turn=2),
    P("jokers+no_twos_cut", "PV-3 PV-4 PR-8", "finish",
      "a last 2: out first, the trick stays open to a Joker", JN,
      [["3C"], ["2C"], ["BJ", "AC", "5C"], ["6C"]],
      ["2x1"], outs=[(1, 1, False)], tricks=[], turn=2, legal=["pass", "BJx1"]),
    # -- + no_finish_on_two (PV-4)
    P("jokers+no_finish_on_two", "PV-3 PV-4 PR-8", "finish",
      "a last Joker is no 2: a plain finish (no_finish_on_joker is off)", JF,
      [["3C", "4C"], ["BJ"], ["5C", "6C"], ["7C", "8C"]],
      ["BJx1"], outs=[(1, 1, False)], tricks=[], turn=2, legal=["pass"]),
    P("jokers+no_finish_on_two", "PV-3 PV-4 PR-7 PR-8", "finish",
      "a last 2: forbidden finish (last place); with Jokers it does not cut", JF,
      [["3C", "4C"], ["2C"], ["BJ", "AC", "5C"], ["7C", "8C"]],
      ["2x1"], outs=[(1, 4, True)], tricks=[], turn=2, legal=["pass", "BJx1"]),
    P("jokers+no_finish_on_two", "PV-3 PV-4 PR-8", "joker",
      "a last coloured Joker on a 9: a plain finish, and it wins the trick", JF,
      [["3C"], ["9C", "4C"], ["RJ"], ["5C"]],
      ["9x1", "RJx1"], outs=[(2, 1, False)], tricks=[("cut", 3)], turn=3),
    # -- + quitte_ou_double (PV-6)
    P("jokers+quitte_ou_double", "PV-3 PV-6", "single",
      "on one 9 (not yet bound): an equal 9, a higher rank or a Joker alone", JQ,
      [["3C"], ["9C", "4C"], ["9D", "BJ", "KC"], ["5C"]],
      ["9x1"], turn=2, legal=["pass", "9x1", "Kx1", "BJx1"]),
    P("jokers+quitte_ou_double", "PV-3 PV-6", "set",
      "on one pair of 9s: an equal pair or a Joker alone", JQ,
      [["3C"], ["9C", "9D", "4C"], ["9H", "9S", "BJ", "KC"], ["5C"]],
      ["9x2"], turn=2, legal=["pass", "9x2", "BJx1"]),
    P("jokers+quitte_ou_double", "PV-3 PV-6", "joker",
      "on the black Joker only the coloured one (one deck: no second black Joker)", JQ,
      [["3C"], ["BJ", "4C"], ["RJ", "2C", "AC"], ["5C"]],
      ["BJx1"], turn=2, legal=["pass", "RJx1"]),
    P("jokers+quitte_ou_double", "PV-3 PV-6", "forced",
      "ruling: two identical pairs bind the next player; a Joker alone does not break it",
      JQ, [["3C"], ["9C", "9D", "4C"], ["9H", "9S", "KC"], ["BJ", "RJ", "5C"]],
      ["9x2", "9x2"], turn=3, legal=["pass"]),
    # -- + revolution (PV-7, revolution_lasts)
    P("jokers+revolution", "PV-3 PV-7", "set",
      "on a revolution's four: a four below in the normal order, or a Joker alone", JR,
      [["6C"], ["5C", "5D", "5H", "5S", "KC"], ["4C", "4D", "4H", "4S", "BJ"], ["7C"]],
      ["5x4"], reversed=True, turn=2, legal=["pass", "4x4", "BJx1"]),
    P("jokers+revolution", "PV-3 PV-7 PR-7", "single",
      "ruling: with Jokers the strongest rank does not cut, the 3 of a revolution neither; "
      "only a Joker goes on it", JR,
      [["6C", "7C"], ["5C", "5D", "5H", "5S", "KC", "QC"], ["3C", "8C"], ["BJ", "AC"]],
      ["5x4", "pass", "pass", "pass", "Kx1", "3x1"], tricks=[("passes", 1)], turn=3,
      legal=["pass", "BJx1"]),
    P("jokers+revolution", "PV-3 PV-7 PR-8 PR-11", "later",
      "revolution_lasts: round 2 starts reversed, the Jokers still on top", JR,
      [["3C"], ["5C", "5D", "5H", "5S"], ["KC"], ["4C"]],
      ["5x4", "pass", "pass", "pass", "Kx1", "4x1"], results={"order": [1, 2, 3, 0]}, round=2,
      reversed=True,
      view={0: {"rank_order": ["2", "A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4",
                               "3"]}}),
    # -- + eight_clears (PV-11)
    P("jokers+eight_clears", "PV-3 PV-11", "single",
      "on a 7: an 8 (which clears) or a Joker alone", JE,
      [["3C"], ["7C", "4C"], ["8C", "BJ", "5C"], ["6C"]],
      ["7x1"], turn=2, legal=["pass", "8x1", "BJx1"]),
    P("jokers+eight_clears", "PV-3 PV-11", "joker",
      "on the black Joker no 8: only the coloured Joker", JE,
      [["3C"], ["BJ", "4C"], ["8C", "RJ", "5C"], ["6C"]],
      ["BJx1"], turn=2, legal=["pass", "RJx1"]),
    P("jokers+eight_clears", "PV-3 PV-11 PR-8", "finish",
      "an 8 as the last card clears the trick before a Joker can come; the next leads", JE,
      [["3C"], ["7C", "4C"], ["8C"], ["BJ", "6C"]],
      ["7x1", "8x1"], outs=[(2, 1, False)], tricks=[("cut", 3)], turn=3),
    # -- + decks2 (PV-16): two black and two coloured Jokers
    P("jokers+decks2", "PV-3 PV-16", "joker",
      "ruling: a black Joker is not beaten by the other black Joker", JD,
      [["3C"], ["BJ", "4C"], ["BJ", "5C"], ["6C"], ["7C"], ["8C"]],
      ["BJx1"], turn=2, legal=["pass"]),
    P("jokers+decks2", "PV-3 PV-16 PR-7", "joker",
      "a coloured Joker wins the trick at once, another coloured Joker in play or not", JD,
      [["3C"], ["RJ", "4C"], ["RJ", "5C"], ["6C"], ["7C"], ["8C"]],
      ["RJx1"], tricks=[("cut", 1)], turn=1),
    P("jokers+decks2", "PV-3 PV-16", "set",
      "a Joker alone on a four of a kind of the two decks", JD,
      [["3C"], [*NINES, "4C"], ["10C", "10D", "10H", "10S", "BJ", "5C"], ["6C"], ["7C"], ["8C"]],
      ["9x4"], turn=2, legal=["pass", "10x4", "BJx1"]),
    P("jokers+decks2", "PV-3 PV-16 PR-10", "later",
      "the Trou du Cul holding all four Jokers gives its 2 and its ace, never a Joker", JD,
      None, [], order=[0, 1, 2, 3, 4, 5],
      deal={5: ["BJ", "BJ", "RJ", "RJ", "2C", "AC", "3C", "3D", "3H", "3S", "4C", "4D",
                "4H", "4S", "5C", "5D", "5H", "5S"]},
      phase="exchange",
      hand={5: ["3C", "3D", "3H", "3S", "4C", "4D", "4H", "4S", "5C", "5D", "5H", "5S",
                "BJ", "BJ", "RJ", "RJ"]}),
    # -- + tabula_rasa (PV-5)
    P("jokers+tabula_rasa", "PV-3 PV-5", "single",
      "on the third 9: the fourth (equal rank), a higher rank or a Joker alone", JT,
      [["3C"], ["9C", "4C"], ["9D", "5C"], ["9H", "6C"], ["9S", "BJ", "KC"]],
      ["9x1", "9x1", "9x1"], turn=4, legal=["pass", "9x1", "Kx1", "BJx1"]),
    P("jokers+tabula_rasa", "PV-3 PV-5", "joker",
      "a Joker on the third 9: the fourth 9 may no longer come, the rank stays incomplete",
      JT, [["9S", "RJ"], ["9C", "4C"], ["9D", "5C"], ["9H", "6C"], ["BJ", "KC"]],
      ["9x1", "9x1", "9x1", "BJx1"], tricks=[], turn=0, legal=["pass", "RJx1"]),
    # -- + coup_d_etat (PV-8)
    P("jokers+coup_d_etat", "PV-3 PV-8 PR-5", "lead",
      "a lead: the 9s, the Joker alone, or the coup d'état", JC,
      [["3C"], [*NINES, "BJ"], ["4C"], ["5C"]],
      [], turn=1, legal=["9x1", "9x2", "9x3", "9x4", "BJx1", "coup:9x5+1j"]),
    P("jokers+coup_d_etat", "PV-3 PV-8", "joker",
      "on the black Joker: the coloured Joker, or a coup d'état with it", JC,
      [["3C", "4C"], ["BJ", "5C"], [*NINES, "RJ", "KC"], ["6C", "7C", "8C"]],
      ["BJx1"], turn=2, legal=["pass", "RJx1", "coup:9x5+1j"]),
    P("jokers+coup_d_etat", "PV-3 PV-8 PR-9", "round1",
      "ruling: a coup on a Joker in round 1: the player, then the others by fewest cards "
      "(ties clockwise from the player)", JC,
      [["3C", "4C"], ["BJ", "5C"], [*NINES, "RJ", "KC"], ["6C", "7C", "8C"]],
      ["BJx1", "coup:9x5+1j"], ended_by="coup_d_etat", results={"order": [2, 1, 0, 3]}),
    P("jokers+coup_d_etat", "PV-3 PV-8 PR-11", "later",
      "a coup on the Trou du Cul's black Joker in round 2: the player and the Président "
      "swap places, the others keep theirs", JC,
      [[*NINES, "RJ", "KC"], ["5C", "6C"], ["7C", "8C"], ["BJ", "3C"]],
      ["BJx1", "pass", "coup:9x5+1j"], order=ORDER, lead=3, ended_by="coup_d_etat",
      results={"order": [0, 2, 1, 3]}),
    # -- + guillotine (PV-8)
    P("jokers+guillotine", "PV-3 PV-8 PR-5", "lead",
      "a lead: the 9s, each Joker alone, or the guillotine (no coup d'état option)", JG,
      [["3C"], [*NINES, "BJ", "RJ"], ["4C"], ["5C"]],
      [], turn=1, legal=["9x1", "9x2", "9x3", "9x4", "BJx1", "RJx1", "guillotine:9"]),
    P("jokers+guillotine", "PV-3 PV-8", "set",
      "on a pair of kings: either Joker alone, or the guillotine", JG,
      [["3C", "4C"], ["KC", "KD", "5C"], [*NINES, "BJ", "RJ", "AC"], ["6C", "7C"]],
      ["Kx2"], turn=2, legal=["pass", "BJx1", "RJx1", "guillotine:9"]),
    P("jokers+guillotine", "PV-3 PV-8 PR-9", "round1",
      "3 players: the guillotine names only the Trou du Cul", JG,
      [["3C", "4C"], [*NINES, "BJ", "RJ", "KC"], ["5C", "6C"]],
      ["guillotine:9"], asked=[(1, "guillotine")], legal=["name:t0", "name:t2"]),
    P("jokers+guillotine", "PV-3 PV-8 PR-9", "round1",
      "3 players: the player first, the named Trou du Cul last", JG,
      [["3C", "4C"], [*NINES, "BJ", "RJ", "KC"], ["5C", "6C"]],
      ["guillotine:9", "name:t2"], ended_by="guillotine", results={"order": [1, 0, 2]}),
    P("jokers+guillotine", "PV-3 PV-8 PR-11", "later",
      "a guillotine in round 2 by the Vice-Trou du Cul: it names Vice-Président seat 3 and "
      "Trou du Cul the deposed Président; the other keeps its place between", JG,
      [["3C", "4C"], [*NINES, "BJ", "RJ", "KC"], ["7C", "8C"], ["5C", "6C"]],
      ["5x1", "pass", "pass", "guillotine:9", "name:v3,t2"], order=ORDER, lead=3,
      ended_by="guillotine", results={"order": [1, 3, 0, 2]}),
    # -- + putsch (PV-9)
    P("jokers+putsch", "PV-3 PV-9", "round1",
      "no putsch in round 1: the leader plays at once, a Joker alone among its leads", JP,
      [["3C"], ["BJ", "4C"], ["5C"], ["6C"]],
      [], asked=[(1, "play")], legal=["4x1", "BJx1"]),
    P("jokers+putsch", "PV-3 PV-9 PR-8 PR-12", "later",
      "putsch, then another player goes out first on a Joker: the putsch has failed", JP,
      [["3C", "4C"], ["5C", "6C"], ["BJ"], ["9C", "KC"]],
      ["putsch", "9x1", "BJx1"], order=ORDER, lead=3, ended_by="putsch",
      results={"order": ORDER, "points": [0, 0, 0, -1]}, scores=[2, 1, 3, -1]),
    P("jokers+putsch", "PV-3 PV-9 PR-10", "later",
      "the round after a failed putsch: its Trou du Cul gives its 4 strongest cards, never "
      "a Joker, and may not putsch", JP,
      [["3C", "4C"], ["5C", "6C"], ["BJ"], ["9C", "KC"]],
      ["putsch", "9x1", "BJx1"], order=ORDER, lead=3, rounds=3,
      deal={3: ["BJ", "RJ", "2C", "2D", "AC", "AD", "KC", "3C", "3D", "4C", "4D", "5C", "5D"]},
      round=3, asked=[(0, "exchange"), (2, "exchange")],
      hand={3: ["3C", "3D", "4C", "4D", "5C", "5D", "KC", "BJ", "RJ"]}),
    # -- + jeu_blanc (PV-10)
    P("jokers+jeu_blanc", "PV-3 PV-10", "round1",
      "reading: round 1 plays hands without a figure (the deal: the test below); a Joker "
      "alone on a 5", JB,
      [["3C", "4C"], ["5C", "6C"], ["7C", "BJ"], ["8C", "9C"]],
      ["5x1"], round=1, turn=2, legal=["pass", "7x1", "BJx1"]),
    P("jokers+jeu_blanc", "PV-3 PV-10", "later",
      "a jeu blanc in the 54-card deck ends round 2 at the deal", JB,
      None, [], order=ORDER, deal={1: BLANC}, ended_by="jeu_blanc",
      results={"order": [1, 2, 0, 3]}),
    P("jokers+jeu_blanc", "PV-3 PV-10", "later",
      "a coloured Joker is above 10: no jeu blanc, the exchange follows", JB,
      None, [], order=ORDER, deal={1: [*BLANC[:-1], "RJ"]}, round=2, phase="exchange"),
    # -- + wizz (PV-12)
    P("jokers+wizz", "PV-3 PV-12", "set",
      "on a pair of 9s: an equal pair, a higher pair or three, or a Joker alone", JZ,
      [["3C"], ["9C", "9D", "4C"], ["9H", "9S", "10C", "10D", "10H", "BJ"], ["5C"]],
      ["9x2"], turn=2, legal=["pass", "9x2", "10x2", "10x3", "BJx1"]),
    P("jokers+wizz", "PV-3 PV-12", "joker",
      "on the black Joker no more cards: only the coloured Joker", JZ,
      [["3C"], ["BJ", "4C"], ["RJ", "AC", "AD"], ["5C"]],
      ["BJx1"], turn=2, legal=["pass", "RJx1"]),
    P("jokers+wizz", "PV-3 PV-12", "single",
      "an equal 9 skips the next player; the one after may put a Joker on it", JZ,
      [["BJ", "3C"], ["9C", "4C"], ["9D", "5C"], ["KC", "6C"]],
      ["9x1", "9x1"], wizz=[[3]], turn=0, legal=["pass", "BJx1"]),
    # -- + suites (PV-13)
    P("jokers+suites", "PV-3 PV-13", "run",
      "on a run of pairs: a higher run of pairs, or a Joker alone", JS,
      [["3C"], ["5C", "5D", "6C", "6D", "7C", "7D", "KC"],
       ["6H", "6S", "7H", "7S", "8H", "8S", "BJ"], ["4C"]],
      ["run:5:3x2"], turn=2, legal=["pass", "run:6:3x2", "BJx1"]),
    P("jokers+suites", "PV-3 PV-13", "joker",
      "a black Joker on a run: then only the coloured Joker, no run", JS,
      [["3C"], ["5C", "6C", "7C", "KC"], ["BJ", "4C"], ["RJ", "8C", "9C", "10C"]],
      ["run:5:3x1", "BJx1"], turn=3, legal=["pass", "RJx1"]),
    P("jokers+suites", "PV-3 PV-13 PR-5", "lead",
      "a Joker is no rank of a run: the run is of the naturals", JS,
      [["3C"], ["5C", "6C", "7C", "BJ"], ["4C"], ["4D"]],
      [], turn=1, legal=["5x1", "6x1", "7x1", "BJx1", "run:5:3x1"]),
    # -- + rapidite (PV-14)
    P("jokers+rapidite", "PV-3 PV-14", "window",
      "a throw of the last three 9s; the next may put a Joker on them", JA,
      [["BJ", "3C"], ["9C", "4C"], ["5C", "6C"], ["9D", "9H", "9S", "7C"]],
      ["9x1", "throw:9x3@3"], turn=0, trick=("9", 3, 3), legal=["pass", "BJx1"]),
    P("jokers+rapidite", "PV-3 PV-14 PR-7", "window",
      "with Jokers a 2 leaves the trick open, so the seat holding the other 2s may throw",
      JA, [["3C"], ["2C", "4C"], ["5C", "6C"], ["2D", "2H", "2S", "7C"]],
      ["2x1"], asked=[(3, "rapidite")], legal=["pass", "throw:2x3"]),
    # -- + menteur (PV-15)
    P("jokers+menteur", "PV-3 PV-15", "set",
      "on an announced pair of 9s: any higher pair, or either Joker alone, whatever the "
      "hand", JM,
      [["3C", "4C"], ["5C", "6C"], ["7C", "8C", "JC"], ["KC", "AC"]],
      ["9x2", "lay:5x1", "lay:6x1", "pass@2"], turn=2,
      legal=["pass", "10x2", "Jx2", "Qx2", "Kx2", "Ax2", "2x2", "BJx1", "RJx1"]),
    P("jokers+menteur", "PV-3 PV-15 PR-7", "joker",
      "an announced coloured Joker nobody calls wins the trick", JM,
      [["3C", "4C"], ["5C", "6C"], ["7C", "8C"], ["KC", "AC"]],
      ["RJx1", "lay:5x1", "pass@2"], tricks=[("cut", 1)], turn=1),
    P("jokers+menteur", "PV-3 PV-15 PR-8", "finish",
      "a true last Joker called: the player goes out, the caller picks it up, the next "
      "still in after the player leads", JM,
      [["3C", "4C"], ["BJ"], ["7C", "8C"], ["KC", "AC"]],
      ["BJx1", "lay:BJx1", "call@3"], outs=[(1, 1, False)], tricks=[("menteur", 2)], turn=2,
      hand={3: ["KC", "AC", "BJ"]}),
]
# fmt: on


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_pair(row: PairCase) -> None:
    run_pair(row)


@pytest.mark.parametrize("pair", ["passe+jeu_blanc", "jokers+jeu_blanc"])
def test_round_one_deal_without_a_figure_is_played(pair: str) -> None:
    """PV-10 reading ("No jeu blanc in the first round"), with PV-2 or PV-3 on: the rows
    above replace round 1's hands after the deal, so the deal itself is judged here: a
    hand dealt with no card above 10 leads round 1 (PR-4) like any other."""
    state = dealt_round_one(4, both(*pair.split("+")), {1: BLANC})
    assert events(state, "jeu_blanc") == [] and state.round_results == []
    assert asked(state) == [(1, "play")] and sorted(state.hand_view[1]) == sorted(BLANC)


def test_the_table_covers_its_pairs() -> None:
    check_group(ROWS, "jokers")
