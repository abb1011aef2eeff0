"""Président's actions: one canonical dict per choice, built once and shared by every legal
list (nobody mutates actions), so that the hot path builds no dict.

Actions are plain JSON:

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
"""

from __future__ import annotations

import functools

from arena.games.base import Action

PASS: Action = {"type": "pass"}
PLAY = "play"  # the kind of a turn's request
PUTSCH: Action = {"type": "putsch"}  # PV-9
CALL: Action = {"type": "call"}  # PV-15: "menteur!"


def play_action(rank_name: str, count: int, jokers: int, wild: bool) -> Action:
    action: Action = {"type": "play", "rank": rank_name, "count": count}
    if wild:  # PV-3 joker_wild: every play says how many of its cards are Jokers
        action["jokers"] = jokers
    return action


@functools.cache
def give_action(ranks: tuple[str, ...]) -> Action:
    return {"type": "give", "ranks": list(ranks)}


@functools.cache
def run_action(rank_name: str, length: int, count: int) -> Action:
    """PV-13: ``length`` consecutive ranks from ``rank_name`` up, ``count`` cards of each."""
    return {"type": "run", "rank": rank_name, "length": length, "count": count}


@functools.cache
def throw_action(rank_name: str, count: int) -> Action:
    """PV-14: the cards that complete the rank, thrown out of turn."""
    return {"type": "throw", "rank": rank_name, "count": count}


@functools.cache
def coup_action(kind: str, rank_name: str, naturals: int, jokers: int) -> Action:
    """PV-8: ``naturals`` cards of a rank and ``jokers`` Jokers (``count`` in all)."""
    return {"type": kind, "rank": rank_name, "count": naturals + jokers, "jokers": jokers}


@functools.cache
def lay_action(rank_name: str, count: int) -> Action:
    """PV-15: ``count`` cards of a rank laid face down (a Joker's rank is its name)."""
    return {"type": "lay", "rank": rank_name, "count": count}


@functools.cache
def name_action(vice_president: int | None, trou_du_cul: int) -> Action:
    """PV-8 guillotine: the seats named; no Vice-Président with 3 players (PR-9)."""
    if vice_president is None:
        return {"type": "name", "trou_du_cul": trou_du_cul}
    return {"type": "name", "vice_president": vice_president, "trou_du_cul": trou_du_cul}
