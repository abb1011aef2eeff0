"""Président variant pairs, where two rules act in one play: every pair of
tests/support/president.PAIRS whose first variant is ``no_finish_on_two`` (PV-4),
``revolution`` (PV-7, with ``revolution_lasts``) or ``eight_clears`` (PV-11).

Each row of ``ROWS`` puts both variants on (exactly their options in
tests/support/president.VARIANTS) and plays one moment where they meet (MOMENTS of
tests/support/president_table.py): the play that ends a hand (PR-8) and whether that
finish is forbidden, a special play offered or not on each kind of trick, a window out of
turn, and round 1 against a later round for the rules that start from round 2 (PR-10,
PR-11, PV-9, PV-10, PV-7's ``revolution_lasts``).  Where the two rules cannot act in one
play, the row says so in its case and shows each acting with the other on.

Every expected value is derived from docs/rules/president.md (its base rules, variants and
the rulings of "How the engine reads the variants"), never read back from the engine.
Legal actions are in the engine's order: a pass first when it is legal, then plays from
the weakest rank of the order in force (fewest cards first), Jokers alone, runs, coups.

Most rows start from round 1 (``hands``, seat 1 leads) or from round 2 after a round 1
ended in a known order (``order``, :func:`~tests.support.president_table.later_round`).
The rows whose round 2 must start reversed (``revolution_lasts``) or after a round 1 of
their own play it out first (``T``, a row with ``first``): ``REV_FIRST`` is a round 1
that ends with the order reversed, in the finishing order 1, 2, 3, 0.  The rows on what a
deal decides in round 1 (PV-10: no jeu blanc there) start from a real deal, stacked (``D``,
a row with ``deal`` and no ``order``).  ``outs`` and ``tricks`` count from the deal of the
round the moves start in.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.president import PAIRS
from tests.support.president_table import (
    PairCase,
    R,
    check_group,
    run_pair,
)

FIRSTS = {"no_finish_on_two", "revolution", "eight_clears"}
MINE = [k for k in PAIRS if k.split("+")[0] in FIRSTS]

NINES = ["9C", "9D", "9H", "9S"]
EIGHTS = ["8C", "8D", "8H", "8S"]
FIVES = ["5C", "5D", "5H", "5S"]
KINGS = ["KC", "KD", "KH", "KS"]
# PV-10 hands: no J, Q, K, A, 2 or Joker (BLANC_B holds four 8s and a 10)
BLANC_A = ["3C", "3D", "3H", "3S", "4C", "4D", "4H", "4S", "5C", "5D", "5H", "5S", "6C"]
BLANC_B = ["6D", "6H", "6S", "7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S", "9C", "10C"]
# one card of each rank: in the reversed order its two strongest are the 3 and the 4
TROU = ["2S", "AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S", "4C", "3C"]

# A round 1 that ends reversed, in the order 1, 2, 3, 0: seat 1's four 5s (the last cards)
# make a revolution (PV-7) and take it out first; the others pass; seat 2 leads its 4
# (strong now) and goes out; the 7 of seat 3 is weaker than it, and so is seat 0's 6;
# seat 3 leads its 7 and goes out, seat 0 last.  No 2, no 8, no 3, no Joker: no other
# variant of these pairs acts in it.
REV_FIRST = (
    [["6C"], FIVES, ["4C"], ["7C"]],
    ["5x4", "pass", "pass", "pass", "4x1", "pass", "pass", "7x1"],
)
# A round 1 that ends in the order 2, 3, 0, 1 (PV-4): seat 1's last 2 is a forbidden finish
# (last place), seat 2 then leads its 3 and goes out first, seat 3 second.
FORBIDDEN_FIRST = (
    [["5C", "6C"], ["2C"], ["3C"], ["7C", "8C"]],
    ["2x1", "3x1", "7x1", "pass", "8x1"],
)


def T(pair: str, rules: str, moment: str, case: str,
      first: tuple[list[list[str]], list[str]], hands: list[list[str]] | None,
      moves: list[str], **kw: Any) -> PairCase:  # fmt: skip
    """A row whose round 2 follows a round 1 played out from ``first`` (hands, moves)."""
    return R(pair, rules, moment, case, hands, moves, first=first, **kw)


def D(pair: str, rules: str, moment: str, case: str, deal: dict[int, list[str]],
      moves: list[str], players: int = 4, **expect: Any) -> PairCase:  # fmt: skip
    """A row in round 1 as dealt to ``players`` seats, the listed ones dealt ``deal``."""
    return R(pair, rules, moment, case, None, moves, deal=deal, players=players, **expect)


NF2 = "no_finish_on_two"

# fmt: off
ROWS = [
    # -- no_finish_on_two (PV-4) + quitte_ou_double (PV-6)
    R(f"{NF2}+quitte_ou_double", "PV-4 PV-6 PR-7", "forced",
      "after two identical kings the next must match or pass: its 2 may not be played",
      [["3C", "4C"], ["KC", "5C"], ["KD", "6C"], ["2C"]], ["Kx1", "Kx1"],
      turn=3, legal=["pass"]),
    R(f"{NF2}+quitte_ou_double", "PV-4 PV-6 PR-8", "finish",
      "a last king matched on a king goes out first; the next is bound to a king",
      [["3C", "4C"], ["KC", "5C"], ["KD"], ["KS", "AS", "6C"]], ["Kx1", "Kx1"],
      outs=[(2, 1, False)], turn=3, legal=["pass", "Kx1"]),
    R(f"{NF2}+quitte_ou_double", "PV-4 PV-6 PR-7 PR-8", "finish",
      "a last 2 on a king (not yet bound) cuts and is a forbidden finish",
      [["3C", "4C"], ["KC", "5C"], ["2C"], ["6C", "7C"]], ["Kx1", "2x1"],
      outs=[(2, 4, True)], tricks=[("cut", 3)], turn=3),
    # -- no_finish_on_two (PV-4) + revolution (PV-7)
    R(f"{NF2}+revolution", "PV-4 PV-7 PR-7 PR-8", "finish",
      "four 2s as the last cards: played while the 2 is strongest, they cut and are a "
      "forbidden finish; then the order turns",
      [["6C", "7C"], ["2C", "2D", "2H", "2S"], ["3C", "4C"], ["8C", "9C"]], ["2x4"],
      outs=[(1, 4, True)], tricks=[("cut", 2)], reversed=True, turn=2),
    R(f"{NF2}+revolution", "PV-4 PV-7 PR-7 PR-8", "finish",
      "four 3s as the last cards: weakest when played, no cut and a plain finish; the "
      "order turns and nothing beats them",
      [["6C", "7C"], ["3C", "3D", "3H", "3S"], ["4C", "5C"], ["8C", "9C"]], ["3x4"],
      outs=[(1, 1, False)], tricks=[], reversed=True, turn=2, legal=["pass"]),
    T(f"{NF2}+revolution", "PV-4 PV-7 PR-8 PR-11", "later",
      "revolution_lasts: round 2 is still reversed; a last 3 is forbidden there, a last 2 "
      "a plain finish",
      REV_FIRST, [["KC", "QC"], ["3C"], ["2C"], ["8C", "9C"]], ["Kx1", "3x1", "2x1"],
      lead=0, round=2, reversed=True, outs=[(1, 4, True), (2, 1, False)],
      tricks=[("cut", 2)], turn=3),
    # -- no_finish_on_two (PV-4) + eight_clears (PV-11)
    R(f"{NF2}+eight_clears", "PV-4 PV-11 PR-8", "finish",
      "a last 8 clears the trick and is a plain finish; the next still in leads",
      [["3C", "4C"], ["5C", "6C"], ["8C"], ["7C", "9C"]], ["5x1", "8x1"],
      outs=[(2, 1, False)], tricks=[("cut", 3)], turn=3),
    R(f"{NF2}+eight_clears", "PV-4 PV-11 PR-7 PR-8", "lead",
      "an 8 led clears and its player leads again: its last card, a 2, is forbidden",
      [["3C", "4C"], ["8C", "2C"], ["5C", "6C"], ["7C", "9C"]], ["8x1", "2x1"],
      tricks=[("cut", 1), ("cut", 2)], outs=[(1, 4, True)], turn=2),
    R(f"{NF2}+eight_clears", "PV-4 PV-11 PR-8", "set",
      "a last pair of 8s on a pair clears and is a plain finish (an 8 is no 2)",
      [["3C", "4C"], ["7C", "7D", "5C"], ["8C", "8D"], ["9C", "10C"]], ["7x2", "8x2"],
      outs=[(2, 1, False)], tricks=[("cut", 3)], turn=3),
    # -- no_finish_on_two (PV-4) + decks2 (PV-16)
    R(f"{NF2}+decks2", "PV-4 PV-16 PR-7 PR-8", "finish",
      "a last pair of 2s of the two decks cuts and takes the last of six places",
      [["3C", "4C"], ["2C", "2C"], ["5C", "6C"], ["7C", "8C"], ["9C", "10C"], ["JC", "QC"]],
      ["2x2"], outs=[(1, 6, True)], tricks=[("cut", 2)], turn=2),
    R(f"{NF2}+decks2", "PV-4 PV-16 PR-7 PR-8", "finish",
      "the 2C of each deck as last cards: the forbidden finishes fill the last places, "
      "the first one last",
      [["3C", "4C"], ["2C"], ["2C"], ["7C", "8C"], ["9C", "10C"], ["JC", "QC"]],
      ["2x1", "2x1"], outs=[(1, 6, True), (2, 5, True)],
      tricks=[("cut", 2), ("cut", 3)], turn=3),
    # -- no_finish_on_two (PV-4) + tabula_rasa (PV-5)
    R(f"{NF2}+tabula_rasa", "PV-4 PV-5 PR-7 PR-8", "finish",
      "a last 2 on equal 9s cuts before the rank is complete: a forbidden finish",
      [["9C", "3C"], ["9D", "4C"], ["2C"], ["9H", "5C"], ["6C", "7C"]],
      ["9x1", "9x1", "2x1"], lead=0, outs=[(2, 5, True)], tricks=[("cut", 3)], turn=3),
    R(f"{NF2}+tabula_rasa", "PV-4 PV-5 PR-8", "finish",
      "the last card completes the 9s: a tabula rasa and a plain finish; the next still "
      "in leads",
      [["9C", "3C"], ["9D", "4C"], ["9H", "5C"], ["9S"], ["2C", "7C"]],
      ["9x1", "9x1", "9x1", "9x1"], lead=0, outs=[(3, 1, False)],
      tricks=[("tabula_rasa", 4)], turn=4, legal=["7x1", "2x1"]),
    R(f"{NF2}+tabula_rasa", "PV-4 PV-5 PR-5 PR-7", "single",
      "on a 9 both are offered: the equal 9 (PV-5) and the 2 (which cuts, PR-7)",
      [["9C", "3C"], ["9D", "2C"], ["9H", "5C"], ["9S", "4C"], ["6C", "7C"]], ["9x1"],
      lead=0, turn=1, legal=["pass", "9x1", "2x1"]),
    # -- no_finish_on_two (PV-4) + coup_d_etat (PV-8, with PV-3 jokers)
    R(f"{NF2}+coup_d_etat", "PV-4 PV-8 PV-3 PR-7 PR-8", "single",
      "with Jokers a 2 does not cut: a last 2 is forbidden and the trick stays open to a "
      "Joker or a coup",
      [["3C", "4C"], ["2C"], [*NINES, "BJ", "5C"], ["6C", "7C"]], ["2x1"],
      outs=[(1, 4, True)], tricks=[], turn=2, legal=["pass", "BJx1", "coup:9x5+1j"]),
    R(f"{NF2}+coup_d_etat", "PV-4 PV-8 PV-3 PR-8", "round1",
      "ruling, round 1: two forbidden finishes then a coup: the player first, the others "
      "by fewest cards, the forbidden finishes last in their places",
      [["3C", "4C", "8C"], ["2C"], ["2D"], [*NINES, "BJ", "5C"], ["6C", "7C"]],
      ["2x1", "pass", "pass", "pass", "pass", "2x1", "coup:9x5+1j"],
      outs=[(1, 5, True), (2, 4, True)],
      results={"ended_by": "coup_d_etat", "order": [3, 4, 0, 2, 1]}),
    R(f"{NF2}+coup_d_etat", "PV-4 PV-8 PV-3 PR-8 PR-11", "later",
      "ruling, round 2: a forbidden finish of the Président then another's coup: the roles "
      "in force, the player and the Président swapped",
      [[*NINES, "BJ", "8C"], ["5C", "6C"], ["2C"], ["7C", "KC"]],
      ["7x1", "2x1", "coup:9x5+1j"], order=[2, 0, 1, 3], lead=3,
      outs=[(2, 4, True)], ended_by="coup_d_etat",
      results={"order": [0, 2, 1, 3], "points": [3, 1, 2, 0]}),
    # -- no_finish_on_two (PV-4) + guillotine (PV-8, with PV-3 jokers)
    R(f"{NF2}+guillotine", "PV-4 PV-8 PV-3 PR-8", "single",
      "a last 2 (no cut with Jokers) is forbidden; the guillotine may be played on it",
      [["3C", "4C"], ["2C"], [*NINES, "BJ", "RJ", "5C"], ["6C", "7C", "8C"]], ["2x1"],
      outs=[(1, 4, True)], turn=2, legal=["pass", "BJx1", "RJx1", "guillotine:9"]),
    R(f"{NF2}+guillotine", "PV-4 PV-8 PR-8", "finish",
      "the guillotine's player may name any other seat, the forbidden finisher too",
      [["3C", "4C"], ["2C"], [*NINES, "BJ", "RJ", "5C"], ["6C", "7C", "8C"]],
      ["2x1", "guillotine:9"], asked=[(2, "guillotine")],
      legal=["name:v0,t1", "name:v0,t3", "name:v1,t0", "name:v1,t3", "name:v3,t0",
             "name:v3,t1"]),
    R(f"{NF2}+guillotine", "PV-4 PV-8 PR-8", "finish",
      "ruling, round 1: the forbidden finisher named Vice-Président is second; the others "
      "keep their standing (fewest cards first), the named Trou du Cul last",
      [["3C", "4C"], ["2C"], [*NINES, "BJ", "RJ", "5C"], ["6C", "7C", "8C"]],
      ["2x1", "guillotine:9", "name:v1,t0"],
      results={"ended_by": "guillotine", "order": [2, 1, 3, 0]}),
    # -- no_finish_on_two (PV-4) + putsch (PV-9)
    R(f"{NF2}+putsch", "PV-4 PV-9 PR-8", "round1",
      "no putsch in round 1: the round starts with a play, and a last 2 is forbidden there",
      [["5C", "6C"], ["2C"], ["3C", "4C"], ["7C", "8C"]], ["2x1"],
      round=1, outs=[(1, 4, True)], asked=[(2, "play")]),
    R(f"{NF2}+putsch", "PV-4 PV-9 PR-8", "later",
      "another player's forbidden finish is no first place: the putsch round goes on",
      [["5C", "6C"], ["7C", "8C"], ["2C"], ["3C", "KC"]], ["putsch", "3x1", "2x1"],
      order=[2, 0, 1, 3], lead=3, round=2, outs=[(2, 4, True)], tricks=[("cut", 0)],
      turn=0),
    R(f"{NF2}+putsch", "PV-4 PV-9 PR-8 PR-12", "finish",
      "... then the putschist goes out first: it scores n, the forbidden finisher is last",
      [["5C", "6C"], ["7C", "8C"], ["2C"], ["3C", "KC"]],
      ["putsch", "3x1", "2x1", "5x1", "7x1", "Kx1", "pass", "pass", "6x1"],
      order=[2, 0, 1, 3], lead=3,
      results={"order": [3, 0, 1, 2], "points": [2, 1, 0, 4],
               "putsch": {"seat": 3, "succeeded": True}}),
    # -- no_finish_on_two (PV-4) + jeu_blanc (PV-10)
    D(f"{NF2}+jeu_blanc", "PV-4 PV-10 PR-4", "round1",
      "reading: round 1 dealt a hand without a figure: no jeu blanc, it is played (it holds "
      "no 2 to finish on)",
      {1: BLANC_A}, [], round=1, phase="play", asked=[(1, "play")],
      legal=["3x1", "3x2", "3x3", "3x4", "4x1", "4x2", "4x3", "4x4", "5x1", "5x2", "5x3",
             "5x4", "6x1"]),
    R(f"{NF2}+jeu_blanc", "PV-4 PV-10 PR-8", "round1",
      "the rules meet only at a deal: with jeu_blanc on, a last 2 in round 1 is forbidden",
      [["5C", "6C"], ["3C", "4C"], ["2C"], ["7C", "8C"]], ["3x1", "2x1"],
      round=1, outs=[(2, 4, True)], tricks=[("cut", 3)], turn=3),
    T(f"{NF2}+jeu_blanc", "PV-4 PV-10 PR-8 PR-9", "later",
      "the forbidden finisher of round 1, Trou du Cul, is dealt a jeu blanc in round 2: "
      "Président, every other moves down one",
      FORBIDDEN_FIRST, None, [], deal={1: BLANC_A},
      results={"ended_by": "jeu_blanc", "order": [1, 2, 3, 0]}),
    # -- no_finish_on_two (PV-4) + wizz (PV-12)
    R(f"{NF2}+wizz", "PV-4 PV-12 PR-6 PR-8", "set",
      "an equal pair of kings as the last cards wizzes the next player: a plain finish",
      [["3C", "4C"], ["KC", "KD", "5C"], ["KH", "KS"], ["6C", "7C"]], ["Kx2", "Kx2"],
      outs=[(2, 1, False)], wizz=[[3]], turn=0, legal=["pass"]),
    R(f"{NF2}+wizz", "PV-4 PV-12", "set",
      "on a pair of kings: 2s as many or more (the hand's last three)",
      [["3C", "4C"], ["KC", "KD", "5C"], ["2C", "2D", "2H"], ["6C", "7C"]], ["Kx2"],
      turn=2, legal=["pass", "2x2", "2x3"]),
    R(f"{NF2}+wizz", "PV-4 PV-12 PR-7 PR-8", "finish",
      "three 2s on the kings: a higher rank skips nobody, cuts, and is a forbidden finish",
      [["3C", "4C"], ["KC", "KD", "5C"], ["2C", "2D", "2H"], ["6C", "7C"]], ["Kx2", "2x3"],
      wizz=[], outs=[(2, 4, True)], tricks=[("cut", 3)], turn=3),
    # -- no_finish_on_two (PV-4) + suites (PV-13)
    R(f"{NF2}+suites", "PV-4 PV-13", "run",
      "on the run J-Q-K only a higher run of singles: K-A-2",
      [["3C", "4C"], ["JC", "QC", "KC", "5C"], ["KD", "AD", "2D"], ["6C", "7C"]],
      ["run:J:3x1"], turn=2, legal=["pass", "run:K:3x1"]),
    R(f"{NF2}+suites", "PV-4 PV-13 PR-7 PR-8", "finish",
      "K-A-2 as the last cards: it holds the 2s, so it cuts and is a forbidden finish",
      [["3C", "4C"], ["JC", "QC", "KC", "5C"], ["KD", "AD", "2D"], ["6C", "7C"]],
      ["run:J:3x1", "run:K:3x1"], outs=[(2, 4, True)], tricks=[("cut", 3)], turn=3),
    R(f"{NF2}+suites", "PV-4 PV-13 PR-7 PR-8", "lead",
      "a run of pairs up to the 2s led with the last cards: a cut and a forbidden finish",
      [["3C", "4C"], ["KC", "KD", "AC", "AD", "2C", "2D"], ["5C", "6C"], ["7C", "8C"]],
      ["run:K:3x2"], outs=[(1, 4, True)], tricks=[("cut", 2)], turn=2),
    # -- no_finish_on_two (PV-4) + rapidite (PV-14)
    R(f"{NF2}+rapidite", "PV-4 PV-14 PR-7 PR-8", "window",
      "a 2 cuts, so no window opens on it though one seat holds the three others; the "
      "leader's last 2 is forbidden",
      [["3C", "4C"], ["2C"], ["2D", "2H", "2S", "5C"], ["6C", "7C"]], ["2x1"],
      outs=[(1, 4, True)], tricks=[("cut", 2)], asked=[(2, "play")]),
    R(f"{NF2}+rapidite", "PV-4 PV-14 PR-6 PR-8", "window",
      "a throw of the last cards goes out first; a later last 2 takes the last place",
      [["10H", "10S"], ["10C", "10D", "4C"], ["QC", "QD", "5C", "6C"], ["2C"]],
      ["10x2", "throw:10x2", "pass", "Qx2", "pass", "pass", "5x1", "2x1"],
      outs=[(0, 1, False), (3, 4, True)], tricks=[("passes", 2), ("cut", 1)], turn=1),
    # -- no_finish_on_two (PV-4) + menteur (PV-15)
    R(f"{NF2}+menteur", "PV-4 PV-15 PR-7 PR-8", "finish",
      "a last card announced as a 2 and not called counts as a 2: a cut and a forbidden "
      "finish",
      [["5C", "6C"], ["3C"], ["7C", "8C"], ["9C", "10C"]], ["2x1", "lay:3x1", "pass@2"],
      outs=[(1, 4, True)], tricks=[("cut", 2)], turn=2),
    R(f"{NF2}+menteur", "PV-4 PV-15 PR-8", "finish",
      "a true last 2 called: the caller picks it up, the player still goes out, forbidden",
      [["5C", "6C"], ["2C"], ["7C", "8C"], ["9C", "10C"]], ["2x1", "lay:2x1", "call@3"],
      outs=[(1, 4, True)], tricks=[("menteur", 2)], turn=2,
      hand={3: ["9C", "10C", "2C"]}),
    R(f"{NF2}+menteur", "PV-4 PV-15 PR-8", "finish",
      "a last card falsely announced as a 2 and called: the liar takes it back and stays in",
      [["5C", "6C"], ["3C"], ["7C", "8C"], ["9C", "10C"]], ["2x1", "lay:3x1", "call@0"],
      outs=[], tricks=[("menteur", 0)], turn=0, hand={1: ["3C"]}),
    # -- revolution (PV-7) + eight_clears (PV-11)
    R("revolution+eight_clears", "PV-7 PV-11", "lead",
      "four 8s led: a revolution, and the 8s clear: their player leads again, reversed",
      [["3C"], [*EIGHTS, "KC", "4C"], ["5C"], ["6C"]], ["8x4"],
      reversed=True, tricks=[("cut", 1)], turn=1, legal=["Kx1", "4x1"]),
    R("revolution+eight_clears", "PV-7 PV-11 PR-8", "finish",
      "four 8s as the last cards: a revolution, out first, the clear; the next leads",
      [["3C"], EIGHTS, ["5C", "6C"], ["7C"]], ["8x4"],
      reversed=True, outs=[(1, 1, False)], tricks=[("cut", 2)], turn=2,
      legal=["6x1", "5x1"]),
    R("revolution+eight_clears", "PV-7 PV-11", "single",
      "in a revolution an 8 is weaker than a 7: not offered on it, so it cannot clear",
      [["JC"], [*FIVES, "7C", "KC"], ["8C", "6C", "4C"], ["9C"]],
      ["5x4", "pass", "pass", "pass", "7x1"],
      reversed=True, tricks=[("passes", 1)], turn=2, legal=["pass", "6x1", "4x1"]),
    T("revolution+eight_clears", "PV-7 PV-11 PR-11", "later",
      "revolution_lasts: in round 2 an 8 beats a 9 and clears",
      REV_FIRST, [["9C", "KC"], ["8C", "3C"], ["10C", "JC"], ["QC", "AC"]], ["9x1", "8x1"],
      lead=0, round=2, reversed=True, tricks=[("cut", 1)], turn=1),
    # -- revolution (PV-7) + decks2 (PV-16)
    R("revolution+decks2", "PV-7 PV-16", "lead",
      "eight 9s of the two decks in one play: one revolution; the next must play eight of "
      "a rank stronger in the reversed order",
      [["3C"], [*NINES, *NINES, "KC"], [*FIVES, *FIVES, *KINGS], ["6C"], ["7C"], ["8C"]],
      ["9x8"], reversed=True, turn=2, legal=["pass", "5x8"]),
    R("revolution+decks2", "PV-7 PV-16", "set",
      "... and eight 5s on the same trick restore the order",
      [["3C"], [*NINES, *NINES, "KC"], [*FIVES, *FIVES, *KINGS], ["6C"], ["7C"], ["8C"]],
      ["9x8", "5x8"], reversed=False, turn=3),
    # -- revolution (PV-7) + tabula_rasa (PV-5)
    R("revolution+tabula_rasa", "PV-7 PV-5", "lead",
      "four 9s played at once: a revolution, no tabula rasa (not for fours); play goes on",
      [["3C"], [*NINES, "KC"], ["4C"], ["5C"], ["6C"]], ["9x4"],
      reversed=True, tricks=[], turn=2),
    R("revolution+tabula_rasa", "PV-7 PV-5", "set",
      "two pairs complete the 9s: a tabula rasa and no revolution (no play holds four)",
      [["3C"], ["9C", "9D", "KC"], ["9H", "9S", "4C"], ["5C"], ["6C"]], ["9x2", "9x2"],
      reversed=False, tricks=[("tabula_rasa", 2)], turn=2),
    R("revolution+tabula_rasa", "PV-7 PV-5", "single",
      "in a revolution equal 4s complete the rank: a tabula rasa in the reversed order",
      [["KC", "10C"], [*FIVES, "4C", "JC"], ["4D", "6C"], ["4H", "7C"], ["4S", "9C"]],
      ["5x4", "pass", "pass", "pass", "pass", "4x1", "4x1", "4x1", "4x1"],
      reversed=True, tricks=[("passes", 1), ("tabula_rasa", 4)], turn=4, legal=["9x1"]),
    # -- revolution (PV-7) + coup_d_etat (PV-8, with PV-3 jokers)
    R("revolution+coup_d_etat", "PV-7 PV-8 PV-3", "set",
      "on four 9s that turned the order: four stronger now, a Joker, or a coup",
      [["3C"], [*NINES, "KC"], [*FIVES, "BJ"], ["6C"]], ["9x4"],
      reversed=True, turn=2, legal=["pass", "5x4", "BJx1", "coup:5x5+1j"]),
    T("revolution+coup_d_etat", "PV-7 PV-8 PR-11", "later",
      "revolution_lasts: round 2 reversed; a coup there: the roles in force, the player "
      "and the Président swapped",
      REV_FIRST, [["KD", "QD"], ["6C", "7C"], ["8C", "10C"], [*NINES, "BJ", "KC"]],
      ["Kx1", "pass", "pass", "coup:9x5+1j"],
      lead=0, ended_by="coup_d_etat", results={"order": [3, 2, 1, 0],
                                               "points": [0, 1, 2, 3]}),
    # -- revolution (PV-7) + guillotine (PV-8, with PV-3 jokers)
    R("revolution+guillotine", "PV-7 PV-8 PV-3", "set",
      "on four 9s that turned the order: four stronger now, either Joker, or a guillotine",
      [["3C"], [*NINES, "KC"], [*FIVES, "BJ", "RJ"], ["6C"]], ["9x4"],
      reversed=True, turn=2, legal=["pass", "5x4", "BJx1", "RJx1", "guillotine:5"]),
    R("revolution+guillotine", "PV-7 PV-8", "finish",
      "ruling, round 1: a guillotine with the last cards after a revolution: the player, "
      "the named Vice-Président, the others by fewest cards, the named Trou du Cul",
      [["6C", "7C", "8C"], [*NINES, "KC"], [*FIVES, "BJ", "RJ"], ["3C", "4C"]],
      ["9x4", "guillotine:5", "name:v3,t1"],
      results={"ended_by": "guillotine", "order": [2, 3, 0, 1]}),
    T("revolution+guillotine", "PV-7 PV-8 PR-11", "later",
      "ruling, round 2 (reversed since round 1): the player, the named Vice-Président, the "
      "others in their roles' order, the named Trou du Cul",
      REV_FIRST, [["KD", "QD"], ["6C", "7C"], ["8C", "10C"], [*NINES, "BJ", "RJ", "KC"]],
      ["Kx1", "pass", "pass", "guillotine:9", "name:v0,t1"], lead=0, reversed=True,
      results={"ended_by": "guillotine", "order": [3, 0, 2, 1]}),
    # -- revolution (PV-7) + putsch (PV-9)
    R("revolution+putsch", "PV-7 PV-9", "round1",
      "no putsch in round 1; four of a kind there is a revolution",
      [["6C"], [*FIVES, "KC"], ["3C"], ["7C"]], ["5x4"],
      round=1, reversed=True, asked=[(2, "play")]),
    T("revolution+putsch", "PV-7 PV-9 PR-10", "later",
      "revolution_lasts: the putsch declined in a reversed round 2, the Trou du Cul gives "
      "its two strongest cards of the order in force, its 3 and 4",
      REV_FIRST, None, ["pass"], deal={0: TROU},
      reversed=True, phase="exchange", asked=[(1, "exchange"), (2, "exchange")],
      hand={0: ["2S", "AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S"]}),
    R("revolution+putsch", "PV-7 PV-9", "later",
      "a failed putsch brings the roles back, not the order: the putschist's revolution "
      "lasts into round 3",
      [["6C", "7C"], ["8C", "9C"], ["4C"], [*FIVES, "KC", "QC"]],
      ["putsch", "5x4", "pass", "pass", "pass", "Kx1", "4x1"],
      order=[2, 0, 1, 3], lead=3, rounds=3,
      results={"ended_by": "putsch", "order": [2, 0, 1, 3]}, round=3, reversed=True),
    # -- revolution (PV-7) + jeu_blanc (PV-10)
    D("revolution+jeu_blanc", "PV-7 PV-10 PR-4", "round1",
      "reading: no jeu blanc in round 1: the hand without a figure is played, its four 5s "
      "make a revolution",
      {1: BLANC_A}, ["5x4"], round=1, reversed=True, turn=2),
    T("revolution+jeu_blanc", "PV-7 PV-10", "later",
      "revolution_lasts: in a reversed round 2 a hand of 3s to 6s (the strongest now) is "
      "still without a figure: a jeu blanc",
      REV_FIRST, None, [], deal={3: BLANC_A},
      results={"ended_by": "jeu_blanc", "order": [3, 1, 2, 0]}),
    T("revolution+jeu_blanc", "PV-7 PV-10", "later",
      "... and a hand whose one card above 10 is a 2 (the weakest now) is none",
      REV_FIRST, None, [], deal={3: [*BLANC_A[:-1], "2C"]},
      round=2, phase="exchange", reversed=True),
    # -- revolution (PV-7) + wizz (PV-12)
    R("revolution+wizz", "PV-7 PV-12", "set",
      "four kings on a pair of 9s (more cards, a higher rank): a revolution, no skip",
      [["3C"], ["9C", "9D", "4C"], ["KC", "KD", "KH", "KS", "5C"],
       ["QC", "QD", "QH", "QS", "6C"]],
      ["9x2", "Kx4"], reversed=True, wizz=[], turn=3, legal=["pass", "Qx4"]),
    R("revolution+wizz", "PV-7 PV-12", "single",
      "in a revolution, on a 9: the same rank, as many cards or more, or a rank stronger "
      "in the reversed order",
      [["7C"], [*FIVES, "9C", "JC"], ["9D", "9H", "8C", "KC"], ["6C"]],
      ["5x4", "pass", "pass", "pass", "9x1"],
      reversed=True, turn=2, legal=["pass", "9x1", "9x2", "8x1"]),
    R("revolution+wizz", "PV-7 PV-12", "single",
      "... the equal 9 skips the next player",
      [["7C"], [*FIVES, "9C", "JC"], ["9D", "9H", "8C", "KC"], ["6C"]],
      ["5x4", "pass", "pass", "pass", "9x1", "9x1"],
      reversed=True, wizz=[[3]], turn=0),
    # -- revolution (PV-7) + suites (PV-13)
    R("revolution+suites", "PV-7 PV-13", "run",
      "a run of pairs holds six cards but no four of a kind: no revolution",
      [["3C"], ["5C", "5D", "6C", "6D", "7C", "7D", "KC"], ["4C"], ["8C"]], ["run:5:3x2"],
      reversed=False, turn=2, legal=["pass"]),
    R("revolution+suites", "PV-7 PV-13", "lead",
      "ruling: in a revolution runs turn round: K-Q-J is led from its weakest rank, the K",
      [["3C"], [*FIVES, "KC", "QC", "JC"], ["4C"], ["6C"]],
      ["5x4", "pass", "pass", "pass"],
      reversed=True, turn=1, legal=["Kx1", "Qx1", "Jx1", "run:K:3x1"]),
    R("revolution+suites", "PV-7 PV-13", "run",
      "... and it is beaten by a run stronger in that order (10-9-8), not by A-K-Q",
      [["3C"], [*FIVES, "KC", "QC", "JC"], ["AD", "KD", "QD", "10D", "9D", "8D"], ["6C"]],
      ["5x4", "pass", "pass", "pass", "run:K:3x1"],
      turn=2, legal=["pass", "run:10:3x1"]),
    R("revolution+suites", "PV-7 PV-13 PR-7", "run",
      "in a revolution the run 5-4-3 holds the 3s, the rank that cuts now: it cuts",
      [["KC"], ["6C", "6D", "6H", "6S", "5C", "4C", "3C", "JC"], ["9C"], ["10C"]],
      ["6x4", "pass", "pass", "pass", "run:5:3x1"],
      tricks=[("passes", 1), ("cut", 1)], turn=1, legal=["Jx1"]),
    # -- revolution (PV-7) + rapidite (PV-14)
    R("revolution+rapidite", "PV-7 PV-14", "window",
      "four of a kind puts the whole rank on the trick: a revolution and no window",
      [["3C"], [*NINES, "KC"], ["4C"], ["5C"]], ["9x4"],
      reversed=True, asked=[(2, "play")]),
    R("revolution+rapidite", "PV-7 PV-14", "window",
      "in a revolution, three 9s thrown on a 9: the next must play three of a rank "
      "stronger in the reversed order",
      [["9D", "9H", "9S", "QC"],
       [*FIVES, "9C", "8C", "8D", "8H", "10C", "10D", "10H"], ["4C"], ["6C"]],
      ["5x4", "pass", "pass", "pass", "9x1", "throw:9x3"],
      reversed=True, trick=("9", 3, 0), turn=1, legal=["pass", "8x3"]),
    R("revolution+rapidite", "PV-7 PV-14", "window",
      "three 9s, then the fourth thrown: the rank is on the trick but no play held four: "
      "no revolution; the trick keeps the larger count",
      [["9S", "3C"], ["9C", "9D", "9H", "KC"], ["4C"], ["5C"]], ["9x3", "throw:9x1"],
      reversed=False, trick=("9", 3, 0), turn=1, legal=["pass"]),
    # -- revolution (PV-7) + menteur (PV-15)
    R("revolution+menteur", "PV-7 PV-15", "set",
      "an announced four of a kind shown false by a call: the liar picks up, no revolution",
      [["7C", "8C"], ["3C", "4C", "6C", "9D", "KC"], ["9C", "10C"], ["JC", "QC"]],
      ["5x4", "lay:3x1", "lay:4x1", "lay:6x1", "lay:9x1", "call@2"],
      reversed=False, tricks=[("menteur", 2)], turn=2),
    R("revolution+menteur", "PV-7 PV-15 PR-8", "finish",
      "a true four of a kind as the last cards, called: the revolution stands, the player "
      "goes out, the caller picks the four up",
      [["7C", "8C"], FIVES, ["9C", "10C"], ["JC", "QC"]], ["5x4", "lay:5x4", "call@2"],
      reversed=True, outs=[(1, 1, False)], tricks=[("menteur", 2)], turn=2,
      view={0: {"hand_sizes": [2, 0, 6, 2]}}),
    # -- eight_clears (PV-11) + decks2 (PV-16)
    R("eight_clears+decks2", "PV-11 PV-16", "set",
      "a pair of 8s of the two decks on a pair clears; its player leads again",
      [["3C"], ["7C", "7C", "4C"], ["8C", "8C", "5C"], ["6C"], ["9C"], ["10C"]],
      ["7x2", "8x2"], tricks=[("cut", 2)], turn=2, legal=["5x1"]),
    R("eight_clears+decks2", "PV-11 PV-16", "single",
      "the other deck's 8C clears the next trick too",
      [["3C"], ["8C", "4C"], ["8C", "5C"], ["6C"], ["9C"], ["10C"]],
      ["8x1", "4x1", "8x1"], tricks=[("cut", 1), ("cut", 2)], turn=2, legal=["5x1"]),
    R("eight_clears+decks2", "PV-11 PV-16 PR-8", "finish",
      "a last 8 clears; of six players the next still in leads",
      [["3C"], ["8C"], ["4C", "5C"], ["6C"], ["9C"], ["10C"]], ["8x1"],
      outs=[(1, 1, False)], tricks=[("cut", 2)], turn=2),
    # -- eight_clears (PV-11) + tabula_rasa (PV-5)
    R("eight_clears+tabula_rasa", "PV-11 PV-5", "single",
      "on a 7: the same rank (PV-5) or the 8 that clears",
      [["3C", "4C"], ["7C", "5C"], ["7D", "8C", "6C"], ["7H", "9C"], ["7S", "10C"]],
      ["7x1"], turn=2, legal=["pass", "7x1", "8x1"]),
    R("eight_clears+tabula_rasa", "PV-11 PV-5", "single",
      "the 8 clears; the 7s of the next trick are counted afresh: three are not the rank",
      [["3C", "4C"], ["7C", "5C"], ["7D", "8C", "6C"], ["7H", "9C"], ["7S", "10C"]],
      ["7x1", "8x1", "7x1", "7x1", "7x1"],
      tricks=[("cut", 2)], turn=0, legal=["pass"]),
    R("eight_clears+tabula_rasa", "PV-11 PV-5 PR-8", "finish",
      "a last 8 on three 7s clears (a cut, not a tabula rasa) and goes out first",
      [["7C", "3C"], ["7D", "4C"], ["7H", "5C"], ["8C"], ["7S", "6C"]],
      ["7x1", "7x1", "7x1", "8x1"], lead=0,
      outs=[(3, 1, False)], tricks=[("cut", 4)], turn=4),
    # -- eight_clears (PV-11) + coup_d_etat (PV-8, with PV-3 jokers)
    R("eight_clears+coup_d_etat", "PV-11 PV-8 PV-3", "single",
      "on a 7: the 8 that clears, a higher card, a Joker, or a coup of four 8s and a Joker",
      [["3C", "4C"], ["7C", "5C"], [*EIGHTS, "BJ", "KC"], ["6C"]], ["7x1"],
      turn=2, legal=["pass", "8x1", "Kx1", "BJx1", "coup:8x5+1j"]),
    R("eight_clears+coup_d_etat", "PV-11 PV-8", "round1",
      "ruling, round 1: a coup of four 8s ends the round at once (no clear, no lead): the "
      "player, then by fewest cards, ties clockwise from it",
      [["3C", "4C"], ["7C", "5C"], [*EIGHTS, "BJ", "KC"], ["6C"]], ["7x1", "coup:8x5+1j"],
      tricks=[], results={"ended_by": "coup_d_etat", "order": [2, 3, 1, 0]}),
    # -- eight_clears (PV-11) + guillotine (PV-8, with PV-3 jokers)
    R("eight_clears+guillotine", "PV-11 PV-8 PV-3", "single",
      "on a 7: the 8 that clears, either Joker, or a guillotine of four 8s",
      [["3C", "4C"], ["7C", "5C"], [*EIGHTS, "BJ", "RJ"], ["6C", "9C", "10C"]], ["7x1"],
      turn=2, legal=["pass", "8x1", "BJx1", "RJx1", "guillotine:8"]),
    R("eight_clears+guillotine", "PV-11 PV-8", "finish",
      "ruling, round 1: a guillotine of four 8s with the last cards ends the round: the "
      "player, the named Vice-Président, the others by fewest cards, the named Trou du Cul",
      [["3C", "4C"], ["7C", "5C"], [*EIGHTS, "BJ", "RJ"], ["6C", "9C", "10C"]],
      ["7x1", "guillotine:8", "name:v0,t1"],
      tricks=[], results={"ended_by": "guillotine", "order": [2, 0, 3, 1]}),
    # -- eight_clears (PV-11) + putsch (PV-9)
    R("eight_clears+putsch", "PV-11 PV-9 PR-8", "later",
      "the putschist's last 8 clears and takes it out first: the round goes on",
      [["5C", "6C"], ["7C", "9C"], ["4C", "KC"], ["3C", "8C"]],
      ["putsch", "3x1", "4x1", "5x1", "7x1", "8x1"], order=[2, 0, 1, 3], lead=3,
      outs=[(3, 1, False)], tricks=[("cut", 2)], round=2, turn=2),
    R("eight_clears+putsch", "PV-11 PV-9 PR-8", "later",
      "another player's last 8 takes it out first: the putsch has failed, the round stops",
      [["5C", "6C"], ["7C", "9C"], ["8C"], ["3C", "KC"]], ["putsch", "3x1", "8x1"],
      order=[2, 0, 1, 3], lead=3,
      results={"ended_by": "putsch", "order": [2, 0, 1, 3], "points": [0, 0, 0, -1]}),
    R("eight_clears+putsch", "PV-11 PV-9", "round1",
      "no putsch in round 1; an 8 led there clears",
      [["3C", "4C"], ["8C", "5C"], ["6C", "7C"], ["9C", "10C"]], ["8x1"],
      round=1, tricks=[("cut", 1)], asked=[(1, "play")]),
    # -- eight_clears (PV-11) + jeu_blanc (PV-10)
    R("eight_clears+jeu_blanc", "PV-11 PV-10", "later",
      "a hand of 6s to 10 with four 8s (which clear) has no figure: a jeu blanc",
      None, [], order=[2, 0, 1, 3], deal={3: BLANC_B},
      results={"ended_by": "jeu_blanc", "order": [3, 2, 0, 1]}),
    D("eight_clears+jeu_blanc", "PV-11 PV-10 PR-4", "round1",
      "reading: no jeu blanc in round 1: the hand without a figure is played, its 8 clears",
      {1: BLANC_B}, ["8x1"], round=1, tricks=[("cut", 1)], turn=1),
    # -- eight_clears (PV-11) + wizz (PV-12)
    R("eight_clears+wizz", "PV-11 PV-12", "set",
      "three 8s on a pair of 7s (more cards, a higher rank): no skip, and they clear",
      [["3C"], ["7C", "7D", "4C"], [*EIGHTS[:3], "5C"], ["6C"]], ["7x2", "8x3"],
      wizz=[], tricks=[("cut", 2)], turn=2, legal=["5x1"]),
    R("eight_clears+wizz", "PV-11 PV-12", "single",
      "on a 7: the same rank (a wizz) or the 8, as many cards or more",
      [["3C"], ["7C", "4C"], ["7D", "8C", "8D", "5C"], ["6C"]], ["7x1"],
      turn=2, legal=["pass", "7x1", "8x1", "8x2"]),
    R("eight_clears+wizz", "PV-11 PV-12", "single",
      "the equal 7 skips the next player, 8 and all; the one after may clear",
      [["8C", "3C"], ["7C", "4C"], ["7D", "5C"], ["8D", "6C"]], ["7x1", "7x1"],
      wizz=[[3]], turn=0, legal=["pass", "8x1"]),
    # -- eight_clears (PV-11) + suites (PV-13)
    R("eight_clears+suites", "PV-11 PV-13", "run",
      "on a run only a higher run: a single 8 is not offered and cannot clear it",
      [["3C"], ["4C", "5C", "6C", "KC"], ["8C", "9C"], ["10C"]], ["run:4:3x1"],
      turn=2, legal=["pass"]),
    R("eight_clears+suites", "PV-11 PV-13", "run",
      "ruling: a higher run that holds an 8 clears the trick",
      [["3C"], ["5C", "6C", "7C", "KC"], ["6D", "7D", "8D", "4C"], ["10C"]],
      ["run:5:3x1", "run:6:3x1"], tricks=[("cut", 2)], turn=2, legal=["4x1"]),
    R("eight_clears+suites", "PV-11 PV-13 PR-8", "finish",
      "a run holding an 8 as the last cards: out first, the clear; the next still in leads",
      [["3C"], ["7C", "8C", "9C"], ["4C"], ["5C"]], ["run:7:3x1"],
      outs=[(1, 1, False)], tricks=[("cut", 2)], turn=2),
    # -- eight_clears (PV-11) + rapidite (PV-14)
    R("eight_clears+rapidite", "PV-11 PV-14", "window",
      "an 8 clears: no window though one seat holds the three other 8s",
      [["8D", "8H", "8S", "3C"], ["8C", "4C"], ["5C"], ["6C"]], ["8x1"],
      tricks=[("cut", 1)], asked=[(1, "play")]),
    R("eight_clears+rapidite", "PV-11 PV-14", "window",
      "after three 7s thrown on a 7 the next plays three 8s or passes",
      [["7D", "7H", "7S", "3C"], ["7C", "4C"], [*EIGHTS[:3], "5C"], ["6C"]],
      ["7x1", "throw:7x3", "pass"], trick=("7", 3, 0), turn=2, legal=["pass", "8x3"]),
    R("eight_clears+rapidite", "PV-11 PV-14", "window",
      "... and the three 8s clear",
      [["7D", "7H", "7S", "3C"], ["7C", "4C"], [*EIGHTS[:3], "5C"], ["6C"]],
      ["7x1", "throw:7x3", "pass", "8x3"], tricks=[("cut", 2)], turn=2),
    # -- eight_clears (PV-11) + menteur (PV-15)
    R("eight_clears+menteur", "PV-11 PV-15", "lead",
      "an 8 announced and not called counts as an 8: it clears, the announcer leads",
      [["5C", "6C"], ["3C", "4C"], ["7C", "9C"], ["10C", "JC"]],
      ["8x1", "lay:3x1", "pass@2"], tricks=[("cut", 1)], turn=1),
    R("eight_clears+menteur", "PV-11 PV-15", "lead",
      "an 8 announced falsely and called: the liar picks it up, the caller leads",
      [["5C", "6C"], ["3C", "4C"], ["7C", "9C"], ["10C", "JC"]],
      ["8x1", "lay:3x1", "call@3"], tricks=[("menteur", 3)], turn=3,
      hand={1: ["3C", "4C"]}),
    R("eight_clears+menteur", "PV-11 PV-15", "lead",
      "a true 8 called: the caller picks it up, the announcer leads",
      [["5C", "6C"], ["8C", "4C"], ["7C", "9C"], ["10C", "JC"]],
      ["8x1", "lay:8x1", "call@3"], tricks=[("menteur", 1)], turn=1,
      hand={3: ["8C", "10C", "JC"]}),
]
# fmt: on


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_pair(row: PairCase) -> None:
    run_pair(row)


def test_the_table_covers_its_pairs() -> None:
    check_group(ROWS, "finishes")
