"""Président, rule by rule: every PR-n and PV-n of docs/rules/president.md, with its edges.

Written from the rule text (docs/rules/president.md, and the French text it quotes), not
from the engine: each case says what the rule makes of one position, built directly
(``PresidentState.set_hands``, a stacked or unshuffled deal), never reached by random
play.  Most rules are one table, ``CASES``: (rule, case, options, hands by seat, who
leads, moves, what must hold after them).  The rules that need a later round, a deal or
a scripted round of their own have a test each below the table.  Where the rule text
leaves a case open, the engine's reading is marked "ruling" (docs/rules/president.md,
"How the engine reads the variants" and "Three readings of the source").

Moves are in the short form of tests/support/president.py (``9x2``, ``9x3+1j``,
``BJx1``, ``run:9:3x2``, ``throw:9x2``, ``coup:9x5+1j``, ``guillotine:9``, ``lay:3x1``,
``name:v1,t3``, ``give:5,5``); ``call@2`` is seat 2's answer in a window where the others
pass.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from arena.games.president import GAME
from arena.games.president.engine import ORDER_32, ORDER_52, PresidentState
from tests.support.president import VARIANTS, StackedDeck, events, short
from tests.support.president_table import (
    C,
    Case,
    StackedOnce,
    Unshuffled,
    asked,
    check,
    dealt_round_one,
    exchange_defaults,
    finish_round,
    later_round,
    legal,
    outs,
    play,
    step,
    table,
    tricks,
    turn,
)

TABULA = VARIANTS["tabula_rasa"]
WILD = {"jokers": True, "joker_wild": True}
WIZZ = VARIANTS["wizz"]
SUITES = VARIANTS["suites"]
RAPIDITE = VARIANTS["rapidite"]
MENTEUR = VARIANTS["menteur"]
REVOLUTION = {"revolution": True}

# fmt: off
# (a table: one case a few lines, as the rule reads, rather than one argument a line)
CASES = [
    # -- PR-2 rank order (every rank of both decks: the tests below the table)
    C("PR-2", "suits never matter: a 9 of another suit does not beat a 9", {},
      [["5C"], ["9S", "3C"], ["9C", "9H", "10H", "4C"], ["6C"]], ["9x1"],
      turn=2, legal=["pass", "10x1"]),
    # -- PR-5 leading and following
    C("PR-5", "the leader leads any count it holds, and may not pass", {},
      [["5C"], ["9S", "9H", "9D", "3C", "3D"], ["4C"], ["6C"]], [],
      turn=1, legal=["3x1", "3x2", "9x1", "9x2", "9x3"]),
    C("PR-5", "a pair is followed from a hand of three", {},
      [["5C"], ["9S", "9H", "3C"], ["10C", "10D", "10H", "4C"], ["6C"]], ["9x2"],
      turn=2, legal=["pass", "10x2"]),
    C("PR-5", "on three of a kind, two of a higher rank are not enough", {},
      [["5C"], ["9S", "9H", "9D", "3C"], ["10C", "10D", "JC", "JD", "JH", "4C"], ["6C"]],
      ["9x3"], turn=2, legal=["pass", "Jx3"]),
    C("PR-5", "a four of a kind is followed by a higher four", {},
      [["5C"], ["9S", "9H", "9D", "9C", "3C"], ["10C", "10D", "10H", "10S", "4C"], ["6C"]],
      ["9x4"], turn=2, legal=["pass", "10x4"]),
    # -- PR-6 passes
    C("PR-6", "a play after passes starts the count of passes again", {},
      [["4C", "3S"], ["9C", "3D"], ["QC", "3H"], ["JC", "5S"]],
      ["9x1", "pass", "Jx1", "pass", "pass"], turn=2, legal=["pass", "Qx1"], tricks=[]),
    C("PR-6", "then every other player passed: the last player leads", {},
      [["4C", "3S"], ["9C", "3D"], ["QC", "3H"], ["JC", "5S"]],
      ["9x1", "pass", "Jx1", "pass", "pass", "pass"], turn=3, tricks=[("passes", 3)]),
    C("PR-6", "PR-8 the last player went out: every player still in must pass", {},
      [["4C", "5C"], ["KC"], ["3C", "6C"], ["7C", "8C"]],
      ["Kx1", "pass", "pass"], turn=0, legal=["pass"], tricks=[]),
    C("PR-6", "PR-8 ... and once they all have, the next one still in leads", {},
      [["4C", "5C"], ["KC"], ["3C", "6C"], ["7C", "8C"]],
      ["Kx1", "pass", "pass", "pass"], turn=2, tricks=[("passes", 2)]),
    C("PR-6", "3 players: two passes end the trick", {},
      [["4C", "5C"], ["9C", "3C"], ["6C", "7C"]], ["9x1", "pass", "pass"],
      turn=1, tricks=[("passes", 1)]),
    C("PR-6", "8 players: six passes are not enough", {},
      [["4C", "3S"], ["9C", "3D"], ["5C", "5D"], ["6C", "6D"], ["7C", "7D"], ["8C", "8D"],
       ["10C", "10D"], ["JC", "JD"]],
      ["9x1", *["pass"] * 6], turn=0, legal=["pass"], tricks=[]),
    C("PR-6", "8 players: the seventh pass ends the trick", {},
      [["4C", "3S"], ["9C", "3D"], ["5C", "5D"], ["6C", "6D"], ["7C", "7D"], ["8C", "8D"],
       ["10C", "10D"], ["JC", "JD"]],
      ["9x1", *["pass"] * 7], turn=1, tricks=[("passes", 1)]),
    # -- PR-7 the strongest rank cuts
    C("PR-7", "a 2 led cuts at once", {},
      [["4C"], ["2C", "5C"], ["3C"], ["6C"]], ["2x1"], turn=1, tricks=[("cut", 1)]),
    C("PR-7", "a pair of 2s on a pair cuts", {},
      [["4C"], ["KC", "KD", "5C"], ["2C", "2D", "3C"], ["6C"]], ["Kx2", "2x2"],
      turn=2, tricks=[("cut", 2)], legal=["3x1"]),
    C("PR-7", "an ace does not cut", {},
      [["4C"], ["AC", "5C"], ["2C", "3C"], ["6C"]], ["Ax1"], turn=2, tricks=[]),
    C("PR-7", "the 32-card deck: an ace does not cut, the 7 does", {"deck": 32},
      [["8C"], ["AC", "9C"], ["7C", "10C"], ["JC"]], ["Ax1", "7x1"],
      turn=2, tricks=[("cut", 2)]),
    # -- PR-8 leaving the round
    C("PR-8", "the winner and the seat after it are out: the next still in leads", {},
      [["4C", "5C"], ["3C", "KC"], ["QC"], ["6C", "7C"]],
      ["3x1", "Qx1", "pass", "pass", "Kx1", "pass", "pass"],
      turn=3, tricks=[("passes", 3)], outs=[(2, 1, False), (1, 2, False)]),
    C("PR-8", "the view shows the places filled so far", {},
      [["4C", "5C"], ["3C", "KC"], ["QC"], ["6C", "7C"]],
      ["3x1", "Qx1", "pass", "pass", "Kx1"],
      view={0: {"places": [2, 1, None, None], "hand_sizes": [2, 0, 0, 2]}}),
    C("PR-8", "the last player holding cards takes the last place", {},
      [["4C"], ["3C"], ["5C"], ["6C", "7C"]],
      ["3x1", "5x1", "pass", "pass", "6x1", "pass", "7x1"],
      order=[1, 2, 3, 0], outs=[(1, 1, False), (2, 2, False), (3, 3, False)]),
    # -- PV-1 raise_count
    C("PV-1", "the seed: on four aces only four 2s", {"raise_count": True},
      [["3C"], ["AC", "AD", "AH", "AS", "3D"], ["2C", "2D", "2H", "2S", "KC", "KD"], ["5C"]],
      ["Ax4"], turn=2, legal=["pass", "2x4"]),
    C("PV-1", "a raised count still needs a higher rank", {"raise_count": True},
      [["3C"], ["KC", "KD", "3D"], ["KH", "KS", "QC", "QD", "QH", "AC"], ["5C"]],
      ["Kx2"], turn=2, legal=["pass"]),
    C("PV-1", "the raised count is the count to beat", {"raise_count": True},
      [["3C"], ["KC", "KD", "3D"], ["AS", "AH", "AD", "QC"], ["2C", "2D", "5C"]],
      ["Kx2", "Ax3"], turn=3, legal=["pass"]),
    # -- PV-2 passe
    C("PV-2", "the seed: the rule applies to pairs too", {"passe": True},
      [["3C", "3D", "KC", "KD"], ["3H", "3S", "4C"], ["5C", "5D", "9C"], ["6C", "6D"]],
      ["3x2", "3x2"], lead=0, turn=2, legal=["pass"]),
    C("PV-2", "one equal play does not bind yet", {"passe": True},
      [["3C", "KC"], ["3D", "4C"], ["5C", "9C", "3H"], ["6C"]], ["3x1"],
      turn=2, legal=["pass", "3x1", "5x1", "9x1"]),
    C("PV-2", "the view tells when the next play is bound", {"passe": True},
      [["3C", "KC"], ["3D", "4C"], ["5C", "9C", "3H"], ["6C"]], ["3x1", "3x1"],
      view={3: {"trick": {"rank": "3", "count": 1, "by": 2, "passes": 0, "forced": True}}}),
    C("PV-2", "... and when it is not", {"passe": True},
      [["3C", "KC"], ["3D", "4C"], ["5C", "9C", "3H"], ["6C"]], ["3x1", "pass"],
      view={3: {"trick": {"rank": "3", "by": 1, "passes": 1, "forced": False}}}),
    C("PV-2", "ruling: a pass between two equal plays does not break the run", {"passe": True},
      [["3C", "KC"], ["3D", "4C"], ["5C", "9C"], ["3H", "KH", "AH"]], ["3x1", "pass", "3x1"],
      turn=0, legal=["pass", "3x1"]),
    C("PV-2", "a 2 that breaks the passe cuts (PR-7)", {"passe": True, "passe_breakers": True},
      [["3S", "KS"], ["3C", "KC"], ["3D", "KD"], ["3H", "4H", "2H"]],
      ["3x1", "3x1", "2x1"], turn=3, tricks=[("cut", 3)]),
    C("PV-2", "PV-4 a passe of 2s: a 2 or a pass, once",
      {"passe": True, "passe_breakers": True, "no_twos_cut": True},
      [["3S", "KS"], ["2C", "KC"], ["2D", "KD"], ["2H", "4H", "AH"]],
      ["2x1", "2x1"], turn=3, legal=["pass", "2x1"]),
    C("PV-2", "PV-3 PV-16 the coloured Joker breaks a passe of black Jokers",
      {"passe": True, "passe_breakers": True, "jokers": True, "decks": 2},
      [["3S"], ["BJ", "4C"], ["BJ", "5C"], ["RJ", "6C"], ["7C"], ["8C"]],
      ["BJx1", "BJx1"], turn=3, legal=["pass", "RJx1"]),
    # -- PV-3 Jokers
    C("PV-3", "a Joker alone on three of a kind", {"jokers": True},
      [["3C"], ["9C", "9D", "9H", "4C"], ["BJ", "5C"], ["6C"]], ["9x3"],
      turn=2, legal=["pass", "BJx1"]),
    C("PV-3", "PV-16 a black Joker does not beat a black Joker", {"jokers": True, "decks": 2},
      [["3C"], ["5C", "4C"], ["BJ", "6C"], ["BJ", "RJ", "7C"], ["8C"], ["9C"]],
      ["5x1", "BJx1"], turn=3, legal=["pass", "RJx1"]),
    C("PV-3", "PV-5 PV-16 ruling: with equal plays a Joker may follow the same Joker",
      {"jokers": True, "decks": 2, "tabula_rasa": True},
      [["3C"], ["5C", "4C"], ["BJ", "6C"], ["BJ", "RJ", "7C"], ["8C"], ["9C"]],
      ["5x1", "BJx1"], turn=3, legal=["pass", "BJx1", "RJx1"]),
    C("PV-3", "the coloured Joker led wins the trick at once", {"jokers": True},
      [["3C"], ["RJ", "4C"], ["BJ", "5C"], ["6C"]], ["RJx1"], turn=1, tricks=[("cut", 1)]),
    C("PV-3", "a black Joker nobody beats: its player leads once all pass", {"jokers": True},
      [["3C"], ["9C", "4C"], ["BJ", "5C"], ["6C"]], ["9x1", "BJx1", "pass", "pass", "pass"],
      turn=2, tricks=[("passes", 2)]),
    C("PV-3", "PV-7 a revolution leaves the Jokers on top",
      {"jokers": True, "revolution": True},
      [["6C"], ["5C", "5D", "5H", "5S", "KC"], ["3C", "BJ"], ["RJ", "4C"]],
      ["5x4", "BJx1"], turn=3, legal=["pass", "RJx1"], reversed=True),
    C("PV-3", "joker_wild: black Jokers are spent first", WILD,
      [["3C"], ["9C", "RJ", "BJ", "4C"], ["5C"], ["6C"]], ["9x2+1j"],
      played=[["9C", "BJ"]], hand={1: ["4C", "RJ"]}),
    C("PV-3", "joker_wild: the trick tells how many Jokers the play holds", WILD,
      [["3C"], ["9C", "RJ", "BJ", "4C"], ["5C"], ["6C"]], ["9x3+2j"],
      view={2: {"trick": {"rank": "9", "count": 3, "jokers": 2, "by": 1}}}),
    C("PV-3", "joker_wild: a five is four of a kind and a Joker", WILD,
      [["3C"], ["9C", "9D", "9H", "9S", "BJ", "4C"], ["5C"], ["6C"]], [],
      legal=["4x1", "4x2+1j", "9x1", "9x2", "9x2+1j", "9x3", "9x3+1j", "9x4", "9x4+1j",
             "9x5+1j"]),
    C("PV-3", "joker_wild: on a pair, a pair with or without a Joker", WILD,
      [["3C"], ["8C", "8D", "4C"], ["9C", "9D", "BJ", "5C"], ["6C"]], ["8x2"],
      turn=2, legal=["pass", "9x2", "9x2+1j"]),
    C("PV-3", "no_finish_on_joker: a last set with a wild Joker takes the last place",
      {**WILD, "no_finish_on_joker": True},
      [["3C", "4C"], ["9C", "BJ"], ["5C", "6C"], ["7C", "8C"]], ["9x2+1j"],
      outs=[(1, 4, True)]),
    C("PV-3", "no_finish_on_joker: a last natural set is a plain finish",
      {**WILD, "no_finish_on_joker": True},
      [["3C", "4C"], ["9C", "9D"], ["5C", "6C"], ["7C", "8C", "BJ"]], ["9x2"],
      outs=[(1, 1, False)]),
    # -- PV-4
    C("PV-4", "no_twos_cut: nothing but a pass on a 2", {"no_twos_cut": True},
      [["5C"], ["2C", "3C"], ["2D", "AC", "4C"], ["6C"]], ["2x1"], turn=2, legal=["pass"]),
    C("PV-4", "no_twos_cut: the trick on a 2 ends by passes", {"no_twos_cut": True},
      [["5C"], ["2C", "3C"], ["2D", "AC", "4C"], ["6C"]], ["2x1", "pass", "pass", "pass"],
      turn=1, tricks=[("passes", 1)]),
    C("PV-4", "no_finish_on_two: a last pair of 2s takes the last place",
      {"no_finish_on_two": True},
      [["5C", "6C"], ["2C", "2D"], ["3C", "4C"], ["7C", "8C"]], ["2x2"],
      outs=[(1, 4, True)]),
    C("PV-4", "no_finish_on_two: two forbidden finishes take the last places in turn",
      {"no_finish_on_two": True},
      [["5C", "6C"], ["2C"], ["2D"], ["7C", "8C"]], ["2x1", "2x1"],
      outs=[(1, 4, True), (2, 3, True)]),
    C("PV-4", "PV-7 ruling: in a revolution the 3s may not end a hand, the 2s may",
      {"no_finish_on_two": True, **REVOLUTION},
      [["6C", "7C"], ["5C", "5D", "5H", "5S", "3C"], ["2C"], ["8C", "9C"]],
      ["5x4", "pass", "pass", "pass", "3x1"], outs=[(1, 4, True)]),
    C("PV-4", "PV-7 ruling: ... and a last 2 is a plain finish",
      {"no_finish_on_two": True, **REVOLUTION},
      [["6C", "7C"], ["3C", "4C"], ["5C", "5D", "5H", "5S", "2C"], ["8C", "9C"]],
      ["5x4", "pass", "pass", "pass", "2x1"], lead=2, outs=[(2, 1, False)]),
    C("PV-4", "PV-13 no_finish_on_two: a last run up to the 2s",
      {**SUITES, "no_finish_on_two": True},
      [["3C", "4C"], ["QC", "KC", "AC", "2C"], ["5C", "6C"], ["7C", "8C"]], ["run:Q:4x1"],
      outs=[(1, 4, True)]),
    C("PV-4", "PV-13 no_finish_on_two: a last run below the 2s is a plain finish",
      {**SUITES, "no_finish_on_two": True},
      [["3C", "4C"], ["JC", "QC", "KC", "AC"], ["5C", "6C"], ["7C", "8C"]], ["run:J:4x1"],
      outs=[(1, 1, False)]),
    # -- PV-5 tabula rasa
    C("PV-5", "passes between the plays of the rank: still one trick", TABULA,
      [["9C", "3C"], ["4C", "3D"], ["9D", "5C"], ["9H", "7C"], ["9S", "8C"]],
      ["9x1", "pass", "9x1", "9x1", "9x1"], lead=0, turn=4, tricks=[("tabula_rasa", 4)]),
    C("PV-5", "a new trick counts the rank from nothing", TABULA,
      [["9C", "3C"], ["9D", "4C", "4D"], ["5C", "6C"], ["9H", "7C"], ["9S", "8C"]],
      ["9x1", "9x1", "pass", "pass", "pass", "pass", "4x1", "pass", "9x1", "9x1"],
      lead=0, tricks=[("passes", 1)], turn=0),
    C("PV-5", "wild Jokers do not complete the rank", {**TABULA, **WILD},
      [["9C", "BJ", "3C"], ["9D", "9H", "4C"], ["5C", "9S"], ["6C"], ["7C"]],
      ["9x2+1j", "9x2"], lead=0, tricks=[], turn=2),
    # (a revolution of 4s, then the 3s, strongest now, complete the rank and undo it)
    C("PV-5", "PR-7 PV-1 PV-7 PV-16 ruling: a play that cuts and completes the rank is a cut",
      {**TABULA, **REVOLUTION, "raise_count": True, "decks": 2},
      [["3C", "5C"], ["4C", "4D", "4H", "4S", "4C", "4D", "4H", "6C"],
       ["3D", "3H", "3S", "3C", "3D", "3H", "3S", "7C"], ["8C"], ["9C"], ["10C"]],
      ["3x1", "4x7", "3x7"], lead=0, reversed=False, tricks=[("cut", 2)]),
    C("PV-5", "PR-8 the completing player goes out: the next still in leads", TABULA,
      [["9C", "3C"], ["9D", "4C"], ["9H", "5C"], ["9S"], ["6C", "7C"]],
      ["9x1", "9x1", "9x1", "9x1"], lead=0, tricks=[("tabula_rasa", 4)],
      outs=[(3, 1, False)], turn=4),
    C("PV-5", "8 players: the four 9s across the table, passes between", TABULA,
      [["9C", "3C"], ["4C", "3D"], ["9D", "5C"], ["6C", "3H"], ["9H", "7C"], ["8C", "3S"],
       ["10C", "4D"], ["9S", "JC"]],
      ["9x1", "pass", "9x1", "pass", "9x1", "pass", "pass", "9x1"], lead=0,
      tricks=[("tabula_rasa", 7)], turn=7),
    C("PV-5", "PV-16 two decks: six 9s of eight do not complete the rank",
      {**TABULA, "decks": 2},
      [["9C", "9D", "3C"], ["9H", "9S", "4C"], ["9C", "9D", "5C"], ["9H", "9S", "6C"],
       ["7C"], ["8C"]],
      ["9x2", "9x2", "9x2"], lead=0, tricks=[], turn=3),
    C("PV-5", "PV-16 ... the fourth pair does", {**TABULA, "decks": 2},
      [["9C", "9D", "3C"], ["9H", "9S", "4C"], ["9C", "9D", "5C"], ["9H", "9S", "6C"],
       ["7C"], ["8C"]],
      ["9x2", "9x2", "9x2", "9x2"], lead=0, tricks=[("tabula_rasa", 3)]),
    C("PV-5", "PV-16 ruling: two fours of a kind of two decks make a tabula rasa",
      {**TABULA, "decks": 2},
      [["9C", "9D", "9H", "9S", "3C"], ["9C", "9D", "9H", "9S", "4C"], ["5C"], ["6C"],
       ["7C"], ["8C"]],
      ["9x4", "9x4"], lead=0, tricks=[("tabula_rasa", 1)]),
    # -- PV-6 quitte ou double
    C("PV-6", "PV-1 the same rank with more cards is no identical play",
      {"quitte_ou_double": True, "raise_count": True},
      [["KH", "3C"], ["KC", "KD", "4C"], ["AC", "AD", "AH", "5C"], ["6C"]],
      ["Kx1", "Kx2"], lead=0, turn=2, legal=["pass", "Ax2", "Ax3"]),
    C("PV-6", "after two identical plays a stronger rank may not be played",
      {"quitte_ou_double": True},
      [["KH", "3C"], ["KC", "4C"], ["AC", "KD", "5C"], ["6C"]],
      ["Kx1", "Kx1"], lead=0, turn=2, legal=["pass", "Kx1"]),
    C("PV-6", "PV-1 the forced play may not raise the count either",
      {"quitte_ou_double": True, "raise_count": True},
      [["KH", "3C"], ["KC", "4C"], ["KD", "KS", "AC", "5C"], ["6C"]],
      ["Kx1", "Kx1"], lead=0, turn=2, legal=["pass", "Kx1"]),
    C("PV-6", "PV-3 PV-16 two black Jokers bind the next to a black Joker",
      {"quitte_ou_double": True, "jokers": True, "decks": 2},
      [["3C"], ["BJ", "4C"], ["BJ", "5C"], ["RJ", "6C"], ["7C"], ["8C"]],
      ["BJx1", "BJx1"], turn=3, legal=["pass"]),
    C("PV-6", "the view tells when the next play is bound", {"quitte_ou_double": True},
      [["KH", "3C"], ["KC", "4C"], ["AC", "KD", "5C"], ["6C"]], ["Kx1", "Kx1"], lead=0,
      view={2: {"trick": {"forced": True}}}),
    # -- PV-7 revolution
    C("PV-7", "after a revolution the 3s cut", REVOLUTION,
      [["6C", "2C"], ["5C", "5D", "5H", "5S", "KC"], ["4C", "JC"], ["7C", "3C"]],
      ["5x4", "pass", "pass", "pass", "Kx1", "Jx1", "3x1"],
      tricks=[("passes", 1), ("cut", 3)], turn=3),
    C("PV-7", "every hand is shown at once in the order in force", REVOLUTION,
      [["6C", "2C", "KC"], ["5C", "5D", "5H", "5S", "9C"], ["3C", "KD", "2D"], ["7C"]],
      ["5x4"], reversed=True,
      view={0: {"cards": ["2C", "KC", "6C"], "rank_order": list(reversed(ORDER_52)),
                "reversed": True},
            2: {"cards": ["2D", "KD", "3C"]}}),
    C("PV-7", "a revolution by four 2s: they cut, then are the weakest", REVOLUTION,
      [["6C"], ["2C", "2D", "2H", "2S", "KC"], ["3C", "3D", "3H", "3S", "JC"], ["7C"]],
      ["2x4", "Kx1"], tricks=[("cut", 1)], turn=2, legal=["pass", "Jx1", "3x1"],
      reversed=True),
    C("PV-7", "a four of a kind in the 32-card deck", {**REVOLUTION, "deck": 32},
      [["9C"], ["JC", "JD", "JH", "JS", "KC"], ["8C", "8D", "8H", "8S", "AC"], ["QC"]],
      ["Jx4"], turn=2, legal=["pass", "8x4"], reversed=True),
    C("PV-7", "PV-1 four of a kind raised from a pair", {**REVOLUTION, "raise_count": True},
      [["3C"], ["6C", "6D", "4C"], ["9C", "9D", "9H", "9S", "5C"], ["7C"]],
      ["6x2", "9x4"], reversed=True, turn=3),
    C("PV-7", "PV-3 ruling: three of a kind and a wild Joker make a revolution",
      {**REVOLUTION, **WILD},
      [["3C"], ["9C", "9D", "9H", "BJ", "4C"], ["5C"], ["6C"]], ["9x4+1j"], reversed=True),
    # -- PV-8 (the coups' orders after the round: the tests below the table)
    C("PV-8", "ruling: a coup d'état takes the black Joker first",
      {"jokers": True, "coup_d_etat": True},
      [["3C"], ["9C", "9D", "9H", "9S", "RJ", "BJ", "KC"], ["5C"], ["6C"]], ["coup:9x5+1j"],
      hand={1: ["KC", "RJ"]}, ended_by="coup_d_etat"),
    # -- PV-9 putsch: none in the first round (no Trou du Cul yet)
    C("PV-9", "no putsch in round 1", {"putsch": True},
      [["3C"], ["4C"], ["5C"], ["6C"]], [], asked=[(1, "play")]),
    # -- PV-11 règle du 8
    C("PV-11", "a pair of 8s clears the trick", {"eight_clears": True},
      [["5C"], ["7C", "7D", "3C"], ["8C", "8D", "4C"], ["6C"]], ["7x2", "8x2"],
      turn=2, tricks=[("cut", 2)], legal=["4x1"]),
    C("PV-11", "an 8 led clears the trick too", {"eight_clears": True},
      [["5C"], ["8C", "3C"], ["9C"], ["6C"]], ["8x1"], turn=1, tricks=[("cut", 1)]),
    C("PV-11", "PV-7 an 8 clears in a revolution too", {"eight_clears": True, **REVOLUTION},
      [["6C"], ["5C", "5D", "5H", "5S", "KC"], ["8C", "4C"], ["9C", "JC"]],
      ["5x4", "pass", "pass", "pass", "Kx1", "8x1"], turn=2,
      tricks=[("passes", 1), ("cut", 2)]),
    C("PV-11", "without the option an 8 is a plain card", {},
      [["5C"], ["7C", "3C"], ["8C", "4C"], ["6C"]], ["7x1", "8x1"], turn=3, tricks=[]),
    # -- PV-12 wizz
    C("PV-12", "the wizzing player goes out: the skips count those still in", WIZZ,
      [["3C", "4C"], ["6C", "5C"], ["6D", "6H"], ["7C", "8C"]], ["6x1", "6x2"],
      wizz=[[3, 0]], turn=1, tricks=[], outs=[(2, 1, False)]),
    C("PV-12", "... then a pass ends the trick; the next still in after the player leads",
      WIZZ, [["3C", "4C"], ["6C", "5C"], ["6D", "6H"], ["7C", "8C"]],
      ["6x1", "6x2", "pass"], tricks=[("passes", 3)], turn=3),
    C("PV-12", "a wizz of as many players as are left comes round: the trick is over", WIZZ,
      [["3C", "4C"], ["6C", "5C"], ["6D", "6H", "6S", "9C"], ["7C", "8C"]], ["6x1", "6x3"],
      wizz=[[3, 0, 1]], tricks=[("wizz", 2)], turn=2),
    C("PV-12", "a wizz passes over the players out", WIZZ,
      [["3D", "4D"], ["6C", "5C"], ["6D", "6H", "6S", "9C"], ["7C"], ["3C", "4C"]],
      ["7x1", "pass", "pass", "pass", "pass", "3x1", "pass", "6x1", "6x3"], lead=3,
      wizz=[[4, 0, 1]], tricks=[("passes", 4), ("wizz", 2)]),
    C("PV-12", "a player out inside the wizzed stretch is passed over", WIZZ,
      [["7C"], ["6C", "5C"], ["6D", "6H", "6S", "9C"], ["3D", "4D"], ["3C", "4C"]],
      ["7x1", "pass", "pass", "pass", "pass", "6x1", "6x3"], lead=0,
      wizz=[[3, 4, 1]], tricks=[("passes", 1), ("wizz", 2)]),
    C("PV-12", "3 players: an equal pair wizzes one player", WIZZ,
      [["6C", "6D", "3C"], ["6H", "6S", "4C"], ["9C", "5C"]], ["6x2", "6x2"], lead=0,
      wizz=[[2]], turn=0, legal=["pass"]),
    C("PV-12", "a higher rank with more cards wizzes nobody", WIZZ,
      [["3C"], ["6C", "4C"], ["7C", "7D", "5C"], ["8C", "8D", "8H"]], ["6x1", "7x2"],
      wizz=[], turn=3, legal=["pass", "8x2", "8x3"]),
    C("PV-12", "8 players: an equal three on a single wizzes three", WIZZ,
      [["3C"], ["6C", "4C"], ["6D", "6H", "6S", "5C"], ["7C"], ["8C"], ["9C"], ["10C"], ["JC"]],
      ["6x1", "6x3"], wizz=[[3, 4, 5]], turn=6, tricks=[]),
    C("PV-12", "PV-7 the 3s cut in a revolution", {**WIZZ, **REVOLUTION},
      [["6C"], ["5C", "5D", "5H", "5S", "KC"], ["3C", "3D", "JC"], ["7C"]],
      ["5x4", "pass", "pass", "pass", "Kx1", "3x2"], tricks=[("passes", 1), ("cut", 2)]),
    # -- PV-13 suites
    C("PV-13", "the trick tells a run's length", SUITES,
      [["3C"], ["5C", "6C", "7C", "8C", "KC"], ["4C"], ["4D"]], ["run:5:4x1"],
      view={2: {"trick": {"rank": "5", "count": 1, "length": 4, "by": 1}}}),
    C("PV-13", "a run is not beaten by the run from the same rank", SUITES,
      [["3C"], ["5C", "6C", "7C", "KC"], ["5D", "6D", "7D", "8H", "4C"], ["4D"]],
      ["run:5:3x1"], turn=2, legal=["pass", "run:6:3x1"]),
    C("PV-13", "a run is not beaten by a longer or a shorter one", SUITES,
      [["3C"], ["5C", "6C", "7C", "8C", "KC"], ["6D", "7D", "8D", "9D", "10D", "4C"], ["4D"]],
      ["run:5:4x1"], turn=2, legal=["pass", "run:6:4x1", "run:7:4x1"]),
    C("PV-13", "a run of triples", SUITES,
      [["3C"], ["5C", "5D", "5H", "6C", "6D", "6H", "7C", "7D", "7H", "KC"],
       ["8C", "8D", "8H", "9C", "9D", "9H", "10C", "10D", "10H", "4C"], ["4D"]],
      ["run:5:3x3"], turn=2, legal=["pass", "run:8:3x3"]),
    C("PV-13", "no run on a single, nor a run of two ranks", SUITES,
      [["3C"], ["4C", "KC"], ["5D", "6D", "7D", "8H", "JC", "QC"], ["4D"]],
      ["4x1"], turn=2, legal=["pass", "5x1", "6x1", "7x1", "8x1", "Jx1", "Qx1"]),
    C("PV-13", "a run may end on the 2s", SUITES,
      [["3C"], ["KC", "AC", "2C", "4C"], ["5C"], ["6C"]], [],
      legal=["4x1", "Kx1", "Ax1", "2x1", "run:K:3x1"]),
    C("PV-13", "PR-7 ... and it cuts", SUITES,
      [["3C"], ["KC", "AC", "2C", "4C"], ["5C"], ["6C"]], ["run:K:3x1"],
      tricks=[("cut", 1)], turn=1),
    C("PV-13", "PV-11 a run that holds an 8 clears the trick", {**SUITES, "eight_clears": True},
      [["3C"], ["7C", "8C", "9C", "KC"], ["10D", "JD", "QD", "4C"], ["4D"]],
      ["run:7:3x1"], turn=1, tricks=[("cut", 1)]),
    C("PV-13", "PV-11 ... wherever the 8 lies in it", {**SUITES, "eight_clears": True},
      [["3C"], ["8C", "9C", "10C", "KC"], ["10D", "JD", "QD", "4C"], ["4D"]],
      ["run:8:3x1"], turn=1, tricks=[("cut", 1)]),
    C("PV-13", "PV-3 a Joker alone beats a run", {**SUITES, "jokers": True},
      [["3C"], ["5C", "6C", "7C", "KC"], ["BJ", "4C"], ["4D"]], ["run:5:3x1"],
      turn=2, legal=["pass", "BJx1"]),
    C("PV-13", "PV-3 a wild Joker is never alone, not even on a run", {**SUITES, **WILD},
      [["3C"], ["5C", "6C", "7C", "KC"], ["BJ", "4C"], ["4D"]], ["run:5:3x1"],
      turn=2, legal=["pass"]),
    # -- PV-14 rapidité
    C("PV-14", "the seat just before the player may throw", RAPIDITE,
      [["10H", "10S", "6C"], ["10C", "10D", "4C"], ["5C", "QC", "QD"], ["3C", "JC", "JD"]],
      ["10x2"], asked=[(0, "rapidite")]),
    C("PV-14", "the window holds up the next player's turn", RAPIDITE,
      [["10H", "10S", "6C"], ["10C", "10D", "4C"], ["5C", "QC", "QD"], ["3C", "JC", "JD"]],
      ["10x2"], view={0: {"phase": "rapidite", "turn": 2}}),
    C("PV-14", "no window while the cards are in two hands", RAPIDITE,
      [["10H", "6C"], ["10C", "10D", "4C"], ["5C", "QC", "QD"], ["3C", "10S", "JD"]],
      ["10x2"], asked=[(2, "play")]),
    C("PV-14", "no window after a Joker", {**RAPIDITE, "jokers": True},
      [["3C"], ["BJ", "4C"], ["RJ", "5C"], ["6C"]], ["BJx1"], asked=[(2, "play")]),
    C("PV-14", "the thrower leads once the others pass", RAPIDITE,
      [["3C", "JC", "JD"], ["10C", "10D", "4C"], ["5C", "QC", "QD"], ["10H", "10S", "6C"]],
      ["10x2", "throw:10x2", "pass", "pass", "pass"], turn=3, tricks=[("passes", 3)]),
    C("PV-14", "the seed: a 4 then a rapidité of three 4s", RAPIDITE,
      [["4D", "4H", "4S", "QC"], ["4C", "6C", "6D", "6H"], ["5C"], ["7C"]],
      ["4x1", "throw:4x3"], turn=1, trick=("4", 3, 0), legal=["pass", "6x3"]),
    C("PV-14", "PV-2 the cards still needed are those not yet on the trick",
      {**RAPIDITE, "passe": True},
      [["3H", "3S", "QC"], ["3C", "4C"], ["3D", "5C"], ["6C", "7C"]], ["3x1", "3x1"],
      asked=[(0, "rapidite")], legal=["pass", "throw:3x2"]),
    C("PV-14", "PV-12 a throw skips nobody", {**RAPIDITE, **WIZZ},
      [["3H", "3S", "QC"], ["3C", "4C"], ["3D", "5C"], ["6C", "7C"]],
      ["3x1", "3x1", "throw:3x2"], wizz=[[3]], turn=1, trick=("3", 2, 0)),
    C("PV-14", "PV-7 a throw of three completes the rank but is no four of a kind",
      {**RAPIDITE, **REVOLUTION},
      [["9D", "9H", "9S", "QC"], ["9C", "6C"], ["5C"], ["7C"]],
      ["9x1", "throw:9x3"], reversed=False, trick=("9", 3, 0), turn=1),
    C("PV-14", "PV-7 PV-16 a throw of seven is a revolution",
      {**RAPIDITE, **REVOLUTION, "decks": 2},
      [["9D", "9H", "9S", "9C", "9D", "9H", "9S", "QC"], ["9C", "6C"], ["5C"], ["7C"],
       ["8C"], ["10C"]],
      ["9x1", "throw:9x7"], reversed=True, trick=("9", 7, 0), turn=1),
    C("PV-14", "PR-8 a throw of the last cards takes the thrower out", RAPIDITE,
      [["10H", "10S"], ["10C", "10D", "4C"], ["5C", "QC", "QD"], ["3C", "JC", "JD"]],
      ["10x2", "throw:10x2"], outs=[(0, 1, False)], turn=1),
    # -- PV-15 menteur
    C("PV-15", "no call: an announced four of a kind is a revolution, true or not",
      {**MENTEUR, **REVOLUTION},
      [["7C", "8C"], ["3C", "4C", "6C", "9D", "KC"], ["9C", "10C"], ["JC", "QC"]],
      ["5x4", "lay:3x1", "lay:4x1", "lay:6x1", "lay:9x1", "pass@2"], reversed=True, turn=2),
    C("PV-15", "PV-12 no call: an announced equal play wizzes", {**MENTEUR, **WIZZ},
      [["7C", "8C"], ["3C", "4C"], ["9C", "10C"], ["JC", "QC"]],
      ["5x1", "lay:3x1", "pass@2", "5x1", "lay:9x1", "pass@3"], wizz=[[3]], turn=0),
    # -- three readings of the source (docs/rules/president.md): PV-14 needs no equal play
    C("PV-14", "reading: the throw is the only equal play it allows", RAPIDITE,
      [["3C", "JC", "10S"], ["10C", "4C"], ["5C", "QC", "10D"], ["10H", "6C"]],
      ["10x1"], asked=[(2, "play")], legal=["pass", "Qx1"]),
    C("PV-14", "reading: no equal-play rule needed for a pair on a pair", RAPIDITE,
      [["3C", "JC", "JD"], ["10C", "10D", "4C"], ["5C", "QC", "QD"], ["10H", "10S", "6C"]],
      ["10x2"], asked=[(3, "rapidite")], legal=["pass", "throw:10x2"]),
]
# fmt: on


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.rule} {c.case}") for c in CASES])
def test_rules(case: Case) -> None:
    state = table(case.hands, case.options, case.lead)
    play(state, *case.moves)
    check(state, case.expect)


@pytest.mark.parametrize(("deck", "order"), [(52, ORDER_52), (32, ORDER_32)])
def test_pr2_on_each_rank_exactly_the_stronger_ranks(deck: int, order: tuple[str, ...]) -> None:
    """PR-2 with PR-5: on a single card of each rank, the ranks above it and only those
    (suits never matter); nothing on the strongest, which cuts (PR-7)."""
    every = [f"{r}D" for r in order]
    for i, rank in enumerate(order):
        low = "10C" if rank != "10" else "JC"
        state = table([[low], [f"{rank}C", f"{rank}H"], every, [f"{order[0]}S"]], {"deck": deck})
        play(state, f"{rank}x1")
        if i == len(order) - 1:
            assert tricks(state) == [("cut", 1)], rank
            continue
        assert legal(state) == ["pass"] + [f"{r}x1" for r in order[i + 1 :]], rank


def test_pv7_the_order_reversed_on_each_rank() -> None:
    """PV-7 with PR-2: after a revolution, on each single the ranks below it in the normal
    order and only those; the 3 is the strongest and cuts."""
    order = list(reversed(ORDER_52))
    for i, rank in enumerate(order):
        if rank == "5":
            continue  # the revolution's own rank: every 5 is on the table
        hands = [["6C" if rank != "6" else "7C"], ["5C", "5D", "5H", "5S", f"{rank}C", "KH"],
                 [f"{r}D" for r in order if r != "5"], ["KS"]]  # fmt: skip
        state = table(hands, REVOLUTION)
        play(state, "5x4", "pass", "pass", "pass", f"{rank}x1")
        if rank == "3":
            assert tricks(state)[-1] == ("cut", 1)
            continue
        assert legal(state) == ["pass"] + [f"{r}x1" for r in order[i + 1 :] if r != "5"], rank


# -- PR-1 players and decks -------------------------------------------------------------------


@pytest.mark.parametrize("deck", [52, 32])
@pytest.mark.parametrize("players", range(3, 9))
def test_pr1_three_to_eight_players_with_either_deck(players: int, deck: int) -> None:
    """PR-1: 3 to 8 players, one deck of 52 or 32 cards (7 to ace); PR-3 the rest set
    aside, so 32 cards for three players play as the source's "30 cartes pour 3 joueurs"."""
    state = GAME.new_state(players, 1, {"deck": deck})
    assert state.sizes == [deck // players] * players
    assert len(state.leftover) == deck % players
    ranks = {c[:-1] for hand in state.hand_view for c in hand} | {
        c[:-1] for c in state.leftover_names
    }
    assert ranks == set(ORDER_52 if deck == 52 else ORDER_32)


# -- PR-3 the deal ----------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "deck", "decks"), [(3, 52, 1), (5, 52, 1), (8, 52, 1),
                                                        (3, 32, 1), (7, 52, 2)])  # fmt: skip
def test_pr3_dealt_one_by_one_from_the_seat_after_the_dealer(
    players: int, deck: int, decks: int
) -> None:
    """PR-3: "Un nombre égal de cartes est distribué à chaque joueur, les éventuelles cartes
    restantes sont identifiées publiquement et mises de côté", one by one from the seat
    after the dealer (PR-4; in later rounds the Trou du Cul deals, so the Président gets
    the first card).  With the deck left in its order, each seat's cards are every n-th
    card from its turn, and the cards left over are the last ones."""
    order = list(range(players))[::-1]  # round 1 ends with seat n-1 first, seat 0 last
    state = GAME.new_state(players, 0, {"rounds": 2, "deck": deck, "decks": decks})
    state.rng = Unshuffled()  # type: ignore[assignment]
    finish_round(state, order)
    spec = state.spec
    deal = list(spec.deck)
    per = len(deal) // players
    since = max(i for i, e in enumerate(state.events) if e.data["type"] == "deal")
    dealt = {e.data["seat"]: e.data["cards"] for e in state.events[since:]
             if e.data["type"] == "hand"}  # fmt: skip
    assert events(state, "deal")[-1]["dealer"] == order[-1]
    for i in range(players):
        seat = order[i]  # the seat after the dealer (order[-1]) is order[0]
        want = [spec.names[c] for c in deal[i : per * players : players]]
        assert Counter(dealt[seat]) == Counter(want), seat
    leftover = [spec.names[c] for c in deal[per * players :]]
    assert Counter(events(state, "leftover")[-1]["cards"]) == Counter(leftover)
    assert len(leftover) == len(deal) % players


# -- PR-9, PR-11, PR-12 over a whole round --------------------------------------------------


@pytest.mark.parametrize(
    ("order", "roles"),
    [
        ([2, 0, 1], {2: "president", 0: "neutral", 1: "trou_du_cul"}),
        ([4, 2, 0, 3, 1], {4: "president", 2: "vice_president", 0: "neutral",
                           3: "vice_trou_du_cul", 1: "trou_du_cul"}),
        ([5, 7, 1, 0, 6, 3, 2, 4], {5: "president", 7: "vice_president", 1: "neutral",
                                    0: "neutral", 6: "neutral", 3: "neutral",
                                    2: "vice_trou_du_cul", 4: "trou_du_cul"}),
    ],
)  # fmt: skip
def test_pr9_pr11_pr12_roles_points_and_seats_after_a_round(
    order: list[int], roles: dict[int, str]
) -> None:
    """PR-9 the roles by finishing order, PR-12 n-1 points down to 0, PR-11 the seats in
    role order and the Trou du Cul leading; round 2's turns go round the new seating."""
    n = len(order)
    state = later_round(order)
    result = state.round_results[0]
    assert result["order"] == order
    assert {s: result["roles"][s] for s in range(n)} == roles
    assert [result["points"][s] for s in order] == list(range(n - 1, -1, -1))
    assert state.roles == result["roles"] and state.scores == result["points"]
    assert state.table == order and state.dealer == order[-1]
    exchange_defaults(state)
    assert turn(state) == order[-1]  # PR-11: the Trou du Cul leads
    # turns follow the seating: the Trou du Cul leads, then the Président, ...
    seen = [turn(state)]
    GAME.apply(state, {seen[0]: GAME.pending(state)[0].legal_actions[0]})
    for _ in range(n - 1):
        seen.append(turn(state))
        step(state, "pass")
    assert seen == [order[-1], *order[:-1]]


def test_pr12_scores_add_up_over_rounds_and_rank_the_match() -> None:
    """PR-12: the first round counts; the match is ranked by total score."""
    state = later_round([2, 0, 1, 3], rounds=2)
    exchange_defaults(state)
    finish_round(state, [3, 1, 2, 0])
    outcome = GAME.outcome(state)
    assert outcome is not None
    # round 1: 2:3, 0:2, 1:1, 3:0; round 2: 3:3, 1:2, 2:1, 0:0
    assert outcome.scores == [2, 3, 4, 3]
    assert outcome.ranks == [4, 2, 1, 2]


def test_pr12_a_target_reached_exactly_ends_the_match() -> None:
    """PR-12: "La partie se termine lorsqu'un joueur atteint un nombre de points
    prédéterminé": reaching the target is enough."""
    state = later_round([2, 0, 1, 3], {"target": 6}, rounds=None)
    exchange_defaults(state)
    finish_round(state, [2, 3, 1, 0])
    assert GAME.outcome(state) is not None and state.scores[2] == 6
    state = later_round([2, 0, 1, 3], {"target": 7}, rounds=None)
    exchange_defaults(state)
    finish_round(state, [2, 3, 1, 0])
    assert GAME.outcome(state) is None and state.round == 3


# -- PR-10 the exchange -----------------------------------------------------------------------


def test_pr10_the_president_may_give_back_a_pair() -> None:
    """PR-10: "celui-ci lui donne deux cartes au choix", a pair included; both cards go."""
    deal = {2: ["5C", "5D", "3C", "3D", "4C", "4D", "6C", "6D", "7C", "7D", "8C", "8D", "9C"]}
    state = later_round([2, 0, 1, 3], deal=deal)
    president = next(r for r in GAME.pending(state) if r.seat == 2)
    offered = [short(a) for a in president.legal_actions]
    assert "give:5,5" in offered and "give:9,9" not in offered  # one 9 only
    answers = {r.seat: r.default_action for r in GAME.pending(state)}
    answers[2] = next(a for a in president.legal_actions if short(a) == "give:5,5")
    GAME.apply(state, answers)
    gift = events(state, "exchange_cards")[-2:]
    back = next(g for g in gift if g["giver"] == 2)
    assert sorted(back["cards"]) == ["5C", "5D"]
    assert {"5C", "5D"} <= set(state.hand_view[3])
    assert not {"5C", "5D"} & set(state.hand_view[2])
    assert state.sizes == [13, 13, 13, 13]


@pytest.mark.parametrize("players", [5, 8])
def test_pr10_only_the_two_first_and_two_last_exchange(players: int) -> None:
    """PR-10: the Trou du Cul and the Président two cards, the Vice-Trou du Cul and the
    Vice-Président one; the Neutres keep their hands."""
    order = list(range(players))[::-1]
    state = later_round(order)
    gifts = [(e["giver"], e["receiver"], e["count"]) for e in events(state, "exchange")]
    assert gifts == [(order[-1], order[0], 2), (order[-2], order[1], 1)]
    assert sorted(r.seat for r in GAME.pending(state)) == sorted(order[:2])
    per = 52 // players
    assert [state.sizes[s] for s in order[2:-2]] == [per] * (players - 4)


def test_pr10_the_two_strongest_cards_are_given_whatever_their_ranks() -> None:
    """PR-10: "ses deux meilleures cartes": two 2s if it has them; a 2 and an ace if it
    has one 2; the Vice-Trou du Cul's one strongest."""
    low_cd = ["3C", "3D", "4C", "4D", "5C", "5D", "6C", "6D", "7C", "7D", "8C"]
    low_hs = ["3H", "3S", "4H", "4S", "5H", "5S", "6H", "6S", "7H", "7S", "8H"]
    deal = {3: ["2S", "2H", *low_cd], 1: ["AS", "KS", *low_hs]}
    state = later_round([2, 0, 1, 3], deal=deal)
    gifts = [(e["giver"], sorted(e["cards"])) for e in events(state, "exchange_cards")]
    assert gifts == [(3, ["2H", "2S"]), (1, ["AS"])]
    state = later_round([2, 0, 1, 3], deal={3: ["2S", "AH", "KC", *low_cd[:-2], "9C"]})
    gifts = [(e["giver"], sorted(e["cards"])) for e in events(state, "exchange_cards")]
    assert gifts[0] == (3, ["2S", "AH"])


def test_pr10_three_players_the_neutre_keeps_its_hand() -> None:
    state = later_round([1, 2, 0])
    assert [(e["giver"], e["receiver"], e["count"]) for e in events(state, "exchange")] == [
        (0, 1, 2)
    ]
    assert state.sizes[2] == 17 and asked(state) == [(1, "exchange")]


# -- PV-5 and PV-14: the cards of a rank in the round, counted again at each deal -----------

# Round 2 of five players seated 0..4 (seat 4 the Trou du Cul, who leads): every card dealt
# by a stacked deck.  Seat 4 gives its 2s to seat 0 and gets back seat 0's two weakest
# (the queens); seat 3 gives its 2 to seat 1 and gets back seat 1's weakest (the 4).
ROUND_TWO_5 = {
    4: ["2S", "2H", "9C", "3C", "3D", "3H", "3S", "4C", "4D", "4H"],
    3: ["2D", "9D", "5C", "5D", "5H", "5S", "6C", "6D", "6H", "6S"],
    2: ["9H", "7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S", "10C"],
    1: ["4S", "9S", "10D", "10H", "10S", "JC", "JD", "JH", "JS", "QC"],
    0: ["2C", "QD", "QH", "QS", "KC", "KD", "AC", "AD", "AH", "AS"],
}  # set aside: KH, KS


def round_two_5(options: dict[str, Any], deal: dict[int, list[str]]) -> PresidentState:
    state = later_round([0, 1, 2, 3, 4], options, deal=deal)
    exchange_defaults(state)
    assert turn(state) == 4
    return state


def test_pv5_every_nine_dealt_is_awaited() -> None:
    """PV-5 with PR-3: "toutes les cartes de même valeur" of this deal.  Round 1 was
    played from hands that set every 9 aside; round 2 deals all four, so the rank is
    complete with the fourth 9 only."""
    state = round_two_5(TABULA, ROUND_TWO_5)
    assert sorted(state.leftover_names) == ["KH", "KS"]
    play(state, "9x1", "pass", "9x1", "9x1")
    assert tricks(state) == [] and turn(state) == 3
    play(state, "9x1")
    assert tricks(state) == [("tabula_rasa", 3)]


def test_pv5_a_nine_set_aside_by_this_deal_is_not_awaited() -> None:
    """PV-5 with PR-3 (ruling): a 9 set aside by this round's deal never reaches the
    trick, so three complete the rank."""
    deal = {**ROUND_TWO_5, 1: ["4S", "KH", "10D", "10H", "10S", "JC", "JD", "JH", "JS", "QC"]}
    state = round_two_5(TABULA, deal)  # set aside: 9S, KS
    assert sorted(state.leftover_names) == ["9S", "KS"]
    play(state, "9x1", "pass", "pass", "9x1")
    assert tricks(state) == []
    play(state, "9x1")
    assert tricks(state) == [("tabula_rasa", 3)]


def test_pv14_the_cards_awaited_are_those_of_this_deal() -> None:
    """PV-14 with PR-3: round 2 deals all four 9s; after one, the seat holding the three
    others may throw them."""
    deal = {
        **ROUND_TWO_5,
        3: ["2D", "10C", "5C", "5D", "5H", "5S", "6C", "6D", "6H", "6S"],
        2: ["10D", "7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S", "JS"],
        1: ["4S", "9S", "9D", "9H", "10H", "10S", "JC", "JD", "JH", "QC"],
    }
    state = round_two_5(RAPIDITE, deal)
    play(state, "9x1")
    assert asked(state) == [(1, "rapidite")] and legal(state) == ["pass", "throw:9x3"]


# -- PV-8 coup d'état and guillotine ----------------------------------------------------------

COUP = VARIANTS["coup_d_etat"]
GUILLOTINE = VARIANTS["guillotine"]
NINES = ["9C", "9D", "9H", "9S"]


@pytest.mark.parametrize(
    ("hand", "coups"),
    [
        ([*NINES, "BJ", "KC"], ["coup:9x5+1j"]),
        ([*NINES, "BJ", "RJ"], ["coup:9x5+1j", "coup:9x5+2j", "guillotine:9"]),
        (["9C", "9D", "9H", "BJ", "RJ"], ["coup:9x5+2j"]),
        (["9C", "9D", "9H", "BJ", "KC"], []),  # three and one Joker: no coup
        ([*NINES, "KC"], []),  # no Joker
        (["9C", "9D", "BJ", "RJ", "KC"], []),  # a pair and two Jokers
    ],
)
def test_pv8_the_coups_a_hand_may_make(hand: list[str], coups: list[str]) -> None:
    """PV-8: "un carré et un joker ou un brelan et deux jokers" (coup d'état), "un carré
    plus deux jokers" (guillotine)."""
    state = table([["3C"], hand, ["4C"], ["5C"]], {**COUP, "guillotine": True})
    assert [a for a in legal(state) if a.startswith(("coup", "guillotine"))] == coups


def test_pv8_a_coup_on_a_trick_and_with_two_decks() -> None:
    """PV-8: "peut être posé n'importe quand", here on a pair of 2s; PV-16: with two decks
    four of a kind and one of the four Jokers."""
    hands = [["3C"], ["2C", "2D", "4C"], [*NINES, "BJ", "5C"], ["6C"], ["7C"], ["8C"]]
    state = table(hands, {**COUP, "decks": 2, "no_twos_cut": True})
    play(state, "2x2")
    assert legal(state) == ["pass", "BJx1", "coup:9x5+1j"]


def test_pv8_coup_d_etat_the_deposed_president_takes_the_players_seat() -> None:
    """PV-8, from round 2: the player and the Président swap; the others keep their
    places ("Le Président déchu vient prendre la place de celui qui a posé le coup
    d'État")."""
    state = later_round([3, 4, 0, 1, 2], COUP)
    exchange_defaults(state)
    hands = [["3C", "4C"], [*NINES, "BJ", "KC"], ["5C", "6C"], ["7C", "8C"], ["10C", "JC"]]
    state.set_hands(hands, turn=1)
    play(state, "coup:9x5+1j")
    result = state.round_results[-1]
    assert (result["ended_by"], result["order"]) == ("coup_d_etat", [1, 4, 0, 3, 2])
    assert result["points"] == [2, 4, 0, 1, 3]


def test_pv8_guillotine_the_others_keep_their_standing_between() -> None:
    """PV-8 guillotine: the player first, the named Vice-Président second, the named Trou
    du Cul last; the others between in the order of their roles, not of their seats."""
    state = later_round([3, 4, 0, 1, 2], GUILLOTINE)
    exchange_defaults(state)
    hands = [["3C", "4C"], [*NINES, "BJ", "RJ", "KC"], ["5C", "6C"], ["7C", "8C"],
             ["10C", "JC"]]  # fmt: skip
    state.set_hands(hands, turn=1)
    play(state, "guillotine:9")
    assert asked(state) == [(1, "guillotine")]
    assert len(legal(state)) == 4 * 3 and "name:v2,t3" in legal(state)
    play(state, "name:v2,t3")
    result = state.round_results[-1]
    assert (result["ended_by"], result["order"]) == ("guillotine", [1, 2, 4, 0, 3])


def test_pv8_ruling_round_one_standing_ties_clockwise_from_the_player() -> None:
    """PV-8 ruling, round 1 (no roles yet): the players out, then the others by fewest
    cards, ties clockwise from the player, then the swap."""
    hands = [["3C", "4C", "5C"], ["6C", "7C"], ["8C", "10C", "JC"], [*NINES, "BJ", "KC"],
             ["QC", "AC"]]  # fmt: skip
    state = table(hands, COUP, lead=3)
    play(state, "coup:9x5+1j")
    # seat 3 holds 1 card, seats 4 and 1 two (4 is first clockwise from 3), seats 0 and 2
    # three (0 first)
    assert state.round_results[-1]["order"] == [3, 4, 1, 0, 2]


def test_pv8_ruling_round_one_the_coup_swaps_with_the_first_out() -> None:
    """PV-8 ruling, round 1: a player already out stands first; the coup swaps with it."""
    hands = [["AC"], ["3C", "4C", "QC"], [*NINES, "BJ", "5C"], ["6C", "7C", "8C"], ["JC", "KC"]]
    state = table(hands, COUP)
    play(state, "3x1", "pass", "pass", "pass", "Ax1")  # seat 0 goes out first
    play(state, "pass", "coup:9x5+1j")
    # standing: 0 (out), 2 (1 card), 4 (2), 1 (2; after 4 clockwise from 2), 3 (3)
    assert state.round_results[-1]["order"] == [2, 0, 4, 1, 3]


# -- PV-9 putsch ----------------------------------------------------------------------------


PUTSCH = VARIANTS["putsch"]


def test_pv9_the_penalty_is_paid_once() -> None:
    """PV-9: a failed putsch costs 4 cards and the right to putsch "avant un tour": the
    next round only; the round after, the Trou du Cul is asked again and gives 2."""
    state = later_round([2, 0, 1, 3], PUTSCH, rounds=4)
    assert asked(state) == [(3, "putsch")]
    play(state, "putsch")
    finish_round(state, [2, 0, 1, 3])  # seat 2 goes out first: the putsch failed
    assert state.round_results[-1]["ended_by"] == "putsch" and state.round == 3
    gifts = [(e["giver"], e["count"]) for e in events(state, "exchange")]
    assert gifts[-2:] == [(3, 4), (1, 1)] and asked(state) == [(0, "exchange"), (2, "exchange")]
    # PR-10 "les 4 cartes de son choix": any four of the Président's own cards
    president = next(r for r in GAME.pending(state) if r.seat == 2)
    held = Counter(c[:-1] for c in state.hand_view[2])
    assert all(Counter(a["ranks"]) <= held for a in president.legal_actions)
    assert len(president.legal_actions) > 1
    # "le putschiste en perd 1"; ruling: the others score nothing, the round "hors phase"
    assert state.round_results[1]["points"] == [0, 0, 0, -1]
    exchange_defaults(state)
    finish_round(state, [2, 0, 1, 3])
    assert state.round == 4 and asked(state) == [(3, "putsch")]
    play(state, "pass")
    gifts = [(e["giver"], e["count"]) for e in events(state, "exchange")]
    assert gifts[-2:] == [(3, 2), (1, 1)]


def test_pv9_a_putsch_that_succeeds_owes_nothing() -> None:
    """PV-9: the putschist who finishes Président scores n and keeps the role; next round
    the new Trou du Cul gives 2 cards and may putsch."""
    state = later_round([2, 0, 1, 3], PUTSCH, rounds=3)
    play(state, "putsch")
    finish_round(state, [3, 2, 0, 1])
    result = state.round_results[-1]
    assert result["putsch"] == {"seat": 3, "succeeded": True}
    assert result["points"] == [1, 0, 2, 4]
    assert state.table == [3, 2, 0, 1] and asked(state) == [(1, "putsch")]
    play(state, "pass")
    assert [(e["giver"], e["count"]) for e in events(state, "exchange")][-2:] == [(1, 2), (0, 1)]
    exchange_defaults(state)
    finish_round(state, [0, 1, 2, 3])  # round 3 is a plain round
    result = state.round_results[-1]
    assert "putsch" not in result and result["points"] == [3, 2, 1, 0]


def test_pv9_a_putschist_who_may_not_finish_so_fails_at_once() -> None:
    """PV-9 with PV-4: a forbidden finish is no first place; the round stops there."""
    state = later_round([2, 0, 1, 3], {**PUTSCH, "no_finish_on_two": True}, rounds=3)
    play(state, "putsch")
    state.set_hands([["4C", "5C"], ["6C", "7C"], ["KC", "QC"], ["2C"]], turn=3)
    play(state, "2x1")
    result = state.round_results[-1]
    assert (result["ended_by"], result["order"]) == ("putsch", [2, 0, 1, 3])
    assert result["points"] == [0, 0, 0, -1] and state.round == 3


def test_pv9_ruling_a_jeu_blanc_in_the_penalty_round_cancels_the_penalty() -> None:
    """PV-9 with PV-10 (ruling): the penalty round ends at its deal by a jeu blanc; the
    penalty is not carried to the next round."""
    blanc = ["3C", "3D", "3H", "3S", "4C", "4D", "4H", "4S", "5C", "5D", "5H", "5S", "6C"]
    state = later_round([2, 0, 1, 3], {**PUTSCH, "jeu_blanc": True}, rounds=4)
    play(state, "putsch")
    state.rng = StackedOnce(state, {1: blanc})  # type: ignore[assignment]
    finish_round(state, [2, 0, 1, 3])  # failed
    assert [r.get("ended_by") for r in state.round_results] == [None, "putsch", "jeu_blanc"]
    assert state.round_results[-1]["order"] == [1, 2, 0, 3]
    assert state.round == 4 and asked(state) == [(3, "putsch")]


@pytest.mark.parametrize(
    ("seat", "order", "points"),
    [
        (0, [2, 0, 1, 3], [0, 0, 0, -1]),  # another's coup: the putsch has failed
        (3, [3, 0, 1, 2], [2, 1, 0, 4]),  # the putschist's own: it finishes Président
    ],
)
def test_pv9_pv8_ruling_a_coup_in_the_putsch_round(
    seat: int, order: list[int], points: list[int]
) -> None:
    """PV-9 with PV-8 (ruling): a coup d'état makes its player Président at once; when
    that is not the putschist, the putsch has failed and every role comes back ("tous les
    autres joueurs retrouvent la position qu'ils avaient avant que le putsch ne soit
    lancé"); when it is, the putsch has succeeded and scores n."""
    state = later_round([2, 0, 1, 3], {**PUTSCH, **COUP}, rounds=3)
    play(state, "putsch")
    hands = [["3C", "4C"], ["5C", "6C"], ["7C", "8C"], ["10C", "JC"]]
    hands[seat] = [*NINES, "BJ", "KC"]
    state.set_hands(hands, turn=seat)
    play(state, "coup:9x5+1j")
    result = state.round_results[-1]
    assert result["ended_by"] == "coup_d_etat" and result["order"] == order
    assert result["putsch"] == {"seat": 3, "succeeded": seat == 3}
    assert result["points"] == points


# -- PV-10 jeu blanc -------------------------------------------------------------------------

JEU_BLANC = VARIANTS["jeu_blanc"]
BLANC_A = ["3C", "3D", "3H", "3S", "4C", "4D", "4H", "4S", "5C", "5D", "5H", "5S", "6C"]
BLANC_B = ["6D", "6H", "6S", "7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S", "9C", "10C"]


@pytest.mark.parametrize(
    ("deal", "blancs", "order"),
    [
        # the seed: "si le Balayeur a un jeu blanc, il devient président, le président
        # devient Premier Ministre, le Premier Ministre prend le rang qui le précède..."
        ({3: BLANC_A}, [3], [3, 2, 0, 1]),
        ({0: BLANC_B}, [0], [0, 2, 1, 3]),  # the Vice-Président: only the Président moves
        ({2: BLANC_A}, [2], [2, 0, 1, 3]),  # the Président keeps its place
        # ruling: several take the first places in their former order (not seat order)
        ({2: BLANC_A, 1: BLANC_B}, [2, 1], [2, 1, 0, 3]),
        ({3: BLANC_A, 0: BLANC_B}, [0, 3], [0, 3, 2, 1]),
    ],
)
def test_pv10_the_jeu_blanc_takes_the_first_place_and_those_above_move_down(
    deal: dict[int, list[str]], blancs: list[int], order: list[int]
) -> None:
    """PV-10: "n'a aucune figure ou carte plus forte (soit V, D, R, As, 2 et Joker)": a 10
    is no figure (BLANC_B holds one)."""
    state = later_round([2, 0, 1, 3], JEU_BLANC, deal=deal)
    assert [e["seat"] for e in events(state, "jeu_blanc")] == blancs
    result = state.round_results[-1]
    assert (result["ended_by"], result["order"]) == ("jeu_blanc", order)
    assert [result["points"][s] for s in order] == [3, 2, 1, 0]


@pytest.mark.parametrize("card", ["JC", "2C", "BJ"])
def test_pv10_a_figure_a_2_or_a_joker_is_no_jeu_blanc(card: str) -> None:
    hand = [*BLANC_A[:-1], card]
    state = later_round([2, 0, 1, 3], {**JEU_BLANC, "jokers": True}, deal={1: hand})
    assert events(state, "jeu_blanc") == [] and state.phase == "exchange"


def test_pv10_reading_no_jeu_blanc_in_the_first_round() -> None:
    """Reading (docs/rules/president.md, "Three readings of the source"): the first round
    has no hierarchy ("les rôles ne sont pas encore distribués"), so a hand without a
    figure is played like any other."""
    state = dealt_round_one(4, JEU_BLANC, {0: BLANC_A, 1: BLANC_B})
    assert state.hand_view[0] == BLANC_A and state.hand_view[1] == BLANC_B
    assert events(state, "jeu_blanc") == [] and asked(state) == [(1, "play")]


# -- PV-15 Président-Menteur ---------------------------------------------------------------------


def test_pv15_reading_a_call_picks_up_the_cards_of_the_trick_not_of_earlier_tricks() -> None:
    """Reading (docs/rules/president.md, "Three readings of the source"): "reprend en main
    toutes les cartes de la pile" is every card of the trick the call ends, its earlier
    plays included; the tricks already over were gathered and stay face down."""
    hands = [["7C", "8C"], ["5C", "3C"], ["9C", "6D", "10C"], ["4D", "JC", "QC"]]
    state = table(hands, MENTEUR)
    play(state, "5x1", "lay:5x1", "pass@2", "9x1", "lay:9x1", "pass@3")
    play(state, "pass", "pass", "pass")  # trick 1 is over: seat 2 leads
    assert tricks(state) == [("passes", 2)]
    play(state, "6x1", "lay:6x1", "pass@3")
    # "played": how many cards lie face down this round, every trick's
    assert GAME.view(state, 0)["played"] == {"cards": [], "face_down": 3}
    play(state, "Kx1", "lay:4x1", "call@0")
    [call] = events(state, "menteur")
    assert (call["caller"], call["seat"], call["lied"]) == (0, 3, True)
    assert [e.data["count"] for e in state.events if e.data["type"] == "pick_up"] == [2, 2]
    assert sorted(state.hand_view[3]) == ["4D", "6D", "JC", "QC"]
    assert GAME.view(state, 1)["played"] == {"cards": [], "face_down": 2}  # 5C and 9C
    assert tricks(state)[-1] == ("menteur", 0)


def test_pv15_a_true_four_of_a_kind_called_is_still_a_revolution() -> None:
    """PV-15 with PV-7: the caller was wrong; the announcement stands with its effects."""
    hands = [["7C", "8C"], ["5C", "5D", "5H", "5S", "KC"], ["9C", "10C"], ["JC", "QC"]]
    state = table(hands, {**MENTEUR, **REVOLUTION})
    play(state, "5x4", "lay:5x4", "call@2")
    assert events(state, "menteur")[-1]["lied"] is False
    assert state.reversed is True and tricks(state) == [("menteur", 1)]
    assert sorted(state.hand_view[2]) == ["10C", "5C", "5D", "5H", "5S", "9C"]


def test_pv15_a_true_last_card_called_takes_the_player_out() -> None:
    """PV-15 with PR-8: true last cards take the player out; the caller picks them up and
    the player, right but out, leaves the lead to the next one still in."""
    state = table([["7C", "8C"], ["3C"], ["9C", "10C"], ["JC", "QC"]], MENTEUR)
    play(state, "3x1", "lay:3x1", "call@3")
    assert outs(state) == [(1, 1, False)] and tricks(state) == [("menteur", 2)]
    assert turn(state) == 2 and "3C" in state.hand_view[3]


def test_pv15_only_players_holding_cards_may_call() -> None:
    """PV-15: "n'importe quel joueur ayant encore des cartes"; a player out is not asked."""
    state = table([["7C", "8C"], ["3C"], ["9C", "10C"], ["JC", "QC"]], MENTEUR)
    play(state, "3x1", "lay:3x1", "pass@2")
    assert outs(state) == [(1, 1, False)]
    play(state, "4x1", "lay:9x1")
    assert asked(state) == [(3, "call"), (0, "call")]


# -- later rounds: what a round leaves behind and what it does not --------------------------


@pytest.mark.parametrize("lasts", [False, True])
def test_pv7_pr10_a_revolution_lasts_only_with_revolution_lasts(lasts: bool) -> None:
    """PV-7: "À la prochaine partie les cartes reprennent leur valeur normale"; with
    `revolution_lasts` they keep it, and PR-10's "deux meilleures cartes" are the
    strongest of the order in force (3s before 4s)."""
    options = {"rounds": 2, **REVOLUTION, **({"revolution_lasts": True} if lasts else {})}
    state = GAME.new_state(4, 0, options)
    trou = ["2S", "2H", "AS", "AH", "KS", "KH", "3C", "4C", "QS", "QH", "JS", "JH", "10S"]
    state.rng = StackedDeck(state, {3: trou})  # type: ignore[assignment]
    state.set_hands([["6C"], ["5C", "5D", "5H", "5S", "KC"], ["7C"], ["8C"]], turn=1)
    play(state, "5x4", "pass", "pass", "pass")
    assert state.reversed is True
    finish_round(state, [2, 0, 1, 3])
    assert state.round == 2 and state.reversed is lasts
    assert events(state, "deal")[-1]["reversed"] is lasts
    [gift, _] = events(state, "exchange_cards")
    assert (gift["giver"], sorted(gift["cards"])) == (3, ["3C", "4C"] if lasts else ["2H", "2S"])


def test_pr11_after_dealer_the_president_leads_later_rounds() -> None:
    """PR-11 option `later_lead: after_dealer`: the Trou du Cul deals, the Président (the
    seat after it) leads."""
    state = later_round([2, 0, 1, 3], {"later_lead": "after_dealer"})
    exchange_defaults(state)
    assert state.dealer == 3 and turn(state) == 2


def test_pr8_pv4_each_round_fills_its_places_from_both_ends_again() -> None:
    """PR-8 with PV-4: a forbidden finish in round 1 does not shift round 2's places."""
    state = GAME.new_state(4, 0, {"rounds": 2, "no_finish_on_two": True})
    state.set_hands([["5C", "6C"], ["2C"], ["3C"], ["7C", "8C"]], turn=1)
    play(state, "2x1", "3x1", "7x1", "pass", "8x1")  # seat 1 last (forbidden), seat 2 first
    assert state.round_results[0]["order"] == [2, 3, 0, 1]
    exchange_defaults(state)
    state.set_hands([["5C", "6C"], ["3C", "4C"], ["2C"], ["7C", "8C"]], turn=2)
    play(state, "2x1")
    assert outs(state)[-1] == (2, 4, True)
    assert GAME.view(state, 0)["places"] == [None, None, None, 2]


def test_pr3_a_new_round_starts_with_nothing_played() -> None:
    """PR-3: each round is a new deal: nothing played, every player in, no trick."""
    state = later_round([2, 0, 1, 3])
    view = GAME.view(state, 0)
    assert view["played"] == {"cards": []} and view["places"] == [None] * 4
    assert view["trick"]["rank"] is None and view["trick"]["plays"] == []
    assert view["hand_sizes"] == [14, 12, 15, 11]  # the forced gifts are made
    exchange_defaults(state)
    assert GAME.view(state, 0)["hand_sizes"] == [13] * 4


def test_pv8_ruling_round_one_standing_puts_the_forbidden_finishes_last() -> None:
    """PV-8 ruling, round 1: the players out first, then those holding cards, then the
    forbidden finishes (PV-4)."""
    hands = [["2C"], ["3C", "QC"], [*NINES, "BJ", "5C"], ["6C", "7C", "8C"]]
    state = table(hands, {**COUP, "no_finish_on_two": True}, lead=0)
    play(state, "2x1", "pass", "pass", "pass")  # seat 0 out last (forbidden); 2s do not cut
    play(state, "3x1", "coup:9x5+1j")  # (PV-3 ruling: with Jokers)
    assert state.round_results[-1]["order"] == [2, 1, 3, 0]


def test_pv15_pv13_a_run_announced_and_called() -> None:
    """PV-15 with PV-13: a run may be announced; a call checks every rank of it."""
    for laid, lied in ((["lay:5x1", "lay:6x1", "lay:7x1"], False),
                       (["lay:5x1", "lay:6x1", "lay:9x1"], True)):  # fmt: skip
        hands = [["4C", "8C"], ["5C", "6C", "7C", "9C"], ["10C", "JC"], ["QC", "KC"]]
        state = table(hands, {**MENTEUR, **SUITES})
        play(state, "run:5:3x1", *laid, "call@2")
        assert events(state, "menteur")[-1]["lied"] is lied
        assert tricks(state) == [("menteur", 2 if lied else 1)]


# -- the round before: every rule that starts from round 2 leaves round 1 alone -------------


@pytest.mark.parametrize(
    "options",
    [
        {"jeu_blanc": True},  # PV-10
        {"putsch": True},  # PV-9
        {"later_lead": "after_dealer"},  # PR-11
        {"later_lead": "trou_du_cul"},  # PR-11
        {"revolution": True, "revolution_lasts": True},  # PV-7
        {"preset": "revolutionnaire"},  # PV-8, PV-9, PV-10 together
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_round_one_plays_as_the_base_rules_say_under_the_later_round_rules(
    options: dict[str, Any],
) -> None:
    """PR-4, PR-10, PR-11, PV-7, PV-9, PV-10: round 1 has no roles yet, so no exchange, no
    putsch and (reading, "Three readings of the source") no jeu blanc, even for a hand
    dealt without a figure; seat 0 deals and seat 1 leads whatever ``later_lead`` says; the
    order is the normal one."""
    blanc = ["3C", "3D", "4C", "4D", "5C", "5D", "6C", "6D", "7C", "7D", "8C", "8D", "9C"]
    state = dealt_round_one(4, options, {2: blanc})
    assert state.hand_view[2] == blanc  # the deal was stacked as asked
    assert events(state, "jeu_blanc") == [] and events(state, "exchange") == []
    assert asked(state) == [(1, "play")]
    view = GAME.view(state, 1)
    assert (view["round"], view["dealer"], view["table"]) == (1, 0, [0, 1, 2, 3])
    assert view["roles"] == [None] * 4 and view["reversed"] is False
    # and the same hand in round 2 is a jeu blanc (PV-10), the control of this test
    if options.get("jeu_blanc"):
        later = later_round([0, 1, 2, 3], options, deal={2: blanc})
        assert [e["seat"] for e in events(later, "jeu_blanc")] == [2]


@pytest.mark.parametrize(
    "extra",
    [{}, {"wizz": True}, {"passe": True}, {"tabula_rasa": True}, {"suites": True}],
    ids=["alone", "wizz", "passe", "tabula_rasa", "suites"],
)
def test_pv4_pv7_a_last_four_of_2s_is_judged_before_its_revolution_whatever_else_is_on(
    extra: dict[str, Any],
) -> None:
    """PV-4, PV-7, PR-8 (ruling: a play is judged in the order in force when it is played,
    before the revolution it makes): four 2s as the last cards are a forbidden finish, and
    four 3s are not, with any other variant on beside them (a variant that gives a play more
    consequences must not change how its finish is judged)."""
    options = {"no_finish_on_two": True, "revolution": True, **extra}
    for last, forbidden, place in (("2", True, 5), ("3", False, 1)):
        hands = [["5C"], [last + s for s in "CDHS"], ["6C", "7C"], ["8C", "9C"], ["10C"]]
        state = table(hands, options)
        play(state, f"{last}x4")
        assert outs(state) == [(1, place, forbidden)], last
        assert state.reversed is True


@pytest.mark.parametrize(("last", "forbidden", "place"), [("2", True, 4), ("3", False, 1)])
def test_pv15_pv4_pv7_a_true_last_four_called_is_judged_before_its_revolution(
    last: str, forbidden: bool, place: int
) -> None:
    """PV-15, PV-4, PV-7, PR-8: a true announcement called keeps its revolution and its going
    out, and its finish is judged as a play is (ruling: in the order in force when it is
    played, before the revolution it makes): four 2s are a forbidden finish, four 3s not."""
    options = {"menteur": True, "no_finish_on_two": True, "revolution": True}
    state = table([["5C"], [last + s for s in "CDHS"], ["6C", "7C"], ["8C", "9C"]], options)
    play(state, f"{last}x4", f"lay:{last}x4", "call@2")
    assert outs(state) == [(1, place, forbidden)]
    assert state.reversed is True
