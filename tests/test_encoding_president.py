"""The Président encoding says what the view says, and names every legal action once
(arena/games/president/encoding.py, docs/learn/president.md).

- Random play under the leak oracle (``check_encoding``) for every player count (PR-1),
  every preset and every option set of tests/support/president.py (``SINGLES``, ``PAIRS``):
  every legal action of every request has an index of its own (``check_indices``; the
  document says "There is no cap: every action the engine can offer has an index", so no
  action is excused), and the observation explained back (``explain``) gives the view's
  own cards at the view's own paths (:func:`agrees`), not only cards the seat may know.
- Positions built directly (``tests/support/president_table.py``), where random play
  rarely goes: a revolution and its undoing (PV-7), the exchange (PR-10, PV-3, PV-16), the
  putsch and its 4-card penalty (PV-9), the guillotine's naming (PV-8), coups on a trick
  (PV-8), runs (PV-13), wild Jokers (PV-3), a rapidité window (PV-14), menteur's lay and
  call windows and a pick-up (PV-15), the 32-card deck (PR-1, PR-2), 3 and 8 players.
  Each checks every seat's explanation and every request's indices, and names the keys
  the document gives the actions (strength slots, relative seats).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from arena.games.president import ENCODING, GAME
from arena.games.president.engine import PRESETS, PresidentState
from tests.support.contract import check_encoding, check_indices
from tests.support.president import PAIRS, SINGLES, VARIANTS, short
from tests.support.president import seats_for as seats_of
from tests.support.president_table import (
    exchange_defaults,
    finish_round,
    later_round,
    play,
    table,
)

# -- what the explanation must say -------------------------------------------------------------

# the paths `explain` gives (docs/learn/president.md: own hand, the face-up pile, the
# leftover, the trick's rank, own exchange; with menteur own face-down cards, the pile's
# face-down count and the announcements' ranks)
PATHS = {"cards", "rank_order", "reversed", "leftover", "played", "trick", "exchange"}
MENTEUR_PATHS = {"face_down", "announced", "announcing"}


def cards(names: list[str]) -> list[str]:
    """A card list as a multiset (sorted): `*_cards` slices count each identity (two decks
    may hold two of a name, PV-16) and lose the view's order, which suits never matter to
    (PR-2)."""
    return sorted(names)


def agrees(view: dict[str, Any], explained: dict[str, Any]) -> None:
    """``explain(encode(view))`` holds exactly the view's cards at the view's paths
    (docs/learn/president.md, "Observation"): own hand (PR-3), the face-up pile and the
    leftover (PR-3), the trick's rank (PR-5), the order in force (PR-2, PV-7), own exchange
    with its forced flags (PR-10) and, with menteur (PV-15), own face-down cards, the
    face-down pile and the announcements' ranks.  Nothing is clipped on these paths: a
    name is held twice at most (PV-16) and the pile 108 cards at most."""
    menteur = "face_down" in view
    assert set(explained) == PATHS | (MENTEUR_PATHS if menteur else set()), sorted(explained)
    assert cards(explained["cards"]) == cards(view["cards"]), "own hand"
    assert explained["rank_order"] == list(view["rank_order"]), "rank order"
    assert explained["reversed"] == view["reversed"], "reversed"
    assert cards(explained["leftover"]["cards"]) == cards(view["leftover"]["cards"]), "leftover"
    pile = explained["played"]
    assert cards(pile["cards"]) == cards(view["played"]["cards"]), "face-up pile"
    if menteur:  # (a position built by set_hands has no face-down count yet: none)
        assert set(pile) == {"cards", "face_down"}
        assert pile["face_down"] == view["played"].get("face_down", 0), "face-down pile"
    else:
        assert set(pile) == {"cards"}
    assert explained["trick"] == {"rank": view["trick"]["rank"]}, "trick"
    mine, theirs = explained["exchange"], view["exchange"]
    if theirs is None:
        assert mine is None, "no exchange"
    else:
        assert mine is not None and set(mine) == {"gave", "received"}, "exchange"
        for key in ("gave", "received"):
            if theirs[key] is None:
                assert mine[key] is None, key
            else:
                assert mine[key]["forced"] == theirs[key]["forced"], f"{key} forced"
                assert cards(mine[key]["cards"]) == cards(theirs[key]["cards"]), key
    if menteur:
        assert cards(explained["face_down"]["cards"]) == cards(view["face_down"]["cards"])
        for key in ("announced", "announcing"):
            said = view[key]
            assert explained[key] == (None if said is None else {"rank": said["rank"]}), key


def observe(view: dict[str, Any]) -> list[float]:
    values = [0.0] * ENCODING.size
    ENCODING.encode(view, values)
    return values


# -- random play -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(3, 9))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_at_every_player_count(preset: str, n: int) -> None:
    """PR-1 (3..8 players) and every preset: explained observations are the views, and
    every legal action has an index of its own.  Half the cells, in a checkerboard, play a
    second round (the exchange, PR-10; PV-9 and PV-10 with `revolutionnaire`)."""
    rounds = 2 if (sorted(PRESETS).index(preset) + n) % 2 == 0 else 1
    options = {"preset": preset, "rounds": rounds}
    assert check_encoding(GAME, ENCODING, n, n, options, agrees=agrees) > 0


SINGLE_CASES = [
    (name, seats_of(options)[i % len(seats_of(options))])
    for i, (name, options) in enumerate(sorted(SINGLES.items()))
]


@pytest.mark.parametrize(("name", "n"), SINGLE_CASES)
def test_every_option_alone(name: str, n: int) -> None:
    """Every option of tests/support/president.py's SINGLES (each variant PV-1..PV-16 with
    its sub-options, PR-1's 32 cards, PR-11's later_lead, PR-12's target), at player
    counts spread over those the option allows (PV-5, PV-16), over two rounds."""
    options = dict(SINGLES[name])
    if "target" not in options:  # PR-12: rounds and target exclude each other
        options["rounds"] = 2
    assert check_encoding(GAME, ENCODING, n, 11, options, agrees=agrees) > 0


PAIR_CASES = [
    (name, seats_of(options)[i % len(seats_of(options))])
    for i, (name, options) in enumerate(sorted(PAIRS.items()))
]


@pytest.mark.parametrize(("name", "n"), PAIR_CASES)
def test_every_compatible_pair_of_variants(name: str, n: int) -> None:
    """Every pair of variants the rules allow together (tests/support/president.py PAIRS),
    player counts spread over those allowed, one round each to keep the 184 matches
    affordable: what acts only from round 2 (the exchange PR-10, PV-7 revolution_lasts,
    PV-9, PV-10) is played by the two tests above and the built positions below."""
    options = {**PAIRS[name], "rounds": 1}
    assert check_encoding(GAME, ENCODING, n, 5, options, agrees=agrees) > 0


def test_the_option_sets_set_every_option_off_its_default() -> None:
    """The option sets above are broad: every option of the game (PR-1, PR-11, PR-12,
    PV-1..PV-16) takes a value other than its default in one of them at least."""
    default = GAME.resolve_options({})
    sets = [{"preset": p} for p in PRESETS] + list(SINGLES.values()) + list(PAIRS.values())
    changed = {
        f.name
        for options in sets
        for f in dataclasses.fields(default)
        if getattr(GAME.resolve_options(options), f.name) != getattr(default, f.name)
    }
    assert changed == {f.name for f in dataclasses.fields(default)}


# -- built positions -------------------------------------------------------------------------


def checked(state: PresidentState) -> dict[int, dict[str, Any]]:
    """Every seat's observation explained agrees with its view, and every request's legal
    actions have indices of their own that ``legal_indices`` maps back; returns, by seat
    asked, each legal action (short form) -> its key in the action space."""
    for seat in range(state.n_players):
        view = GAME.view(state, seat)
        agrees(view, ENCODING.explain(observe(view)))
    out: dict[int, dict[str, Any]] = {}
    for request in GAME.pending(state):
        view = GAME.view(state, request.seat)
        named = check_indices(ENCODING, view, request.legal_actions)
        assert len(named) == len(request.legal_actions)  # no cap (docs/learn)
        out[request.seat] = {short(a): ENCODING.actions.keys[i] for i, a in named.items()}
    return out


# strength slots (docs/learn/president.md, "Strength slots"), written from PR-2 and PV-7:
# the strongest natural rank is slot 12, the Jokers 13 and 14
RANKS_52 = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"]  # PR-2
RANKS_32 = ["8", "9", "10", "J", "Q", "K", "A", "7"]  # PR-1, PR-2
NORMAL = {r: i for i, r in enumerate(RANKS_52)}
REVERSED = {r: 12 - i for r, i in NORMAL.items()}
SMALL = {r: 5 + i for i, r in enumerate(RANKS_32)}
SMALL_REVERSED = {r: 17 - i for r, i in SMALL.items()}
JOKER_SLOTS = {"BJ": 13, "RJ": 14}


def relative(state: PresidentState, me: int, seat: int) -> int:
    """docs/learn: seat entries count from the observer in `table` order (PR-11)."""
    table_ = state.table
    return (table_.index(seat) - table_.index(me)) % state.n_players


def test_pv7_a_revolution_turns_the_slots_round_and_another_turns_them_back() -> None:
    """PV-7: four of a kind reverses the order, a second one restores it; the slots of
    plays follow the order in force (docs/learn: "a revolution turns the slots round")."""
    hands = [["6C", "KC"], ["5C", "5D", "5H", "5S", "3C"], ["4C", "4D", "4H", "4S", "9C"],
             ["8C", "QC"]]  # fmt: skip
    state = table(hands, {"revolution": True, "revolution_lasts": True}, rounds=3)
    before = checked(state)[1]
    assert before["5x4"] == ("play", NORMAL["5"], 4, 0) and before["3x1"] == ("play", 0, 1, 0)
    play(state, "5x4")
    assert state.reversed
    # PR-5 in the reversed order: only a stronger four, the 4s (slot 11 now)
    assert checked(state)[2] == {"pass": ("pass",), "4x4": ("play", REVERSED["4"], 4, 0)}
    play(state, "4x4")
    assert not state.reversed
    assert checked(state)[3] == {"pass": ("pass",)}
    view = GAME.view(state, 0)
    assert ENCODING.explain(observe(view))["trick"] == {"rank": "4"}


def test_pv7_pr10_a_lasting_revolution_into_round_two_and_its_end() -> None:
    """PV-7 `revolution_lasts`: the order stays reversed in round 2; the exchange's gives
    (PR-10) name slots of the reversed order; a four of a kind in round 2 restores it."""
    options = {"rounds": 3, "revolution": True, "revolution_lasts": True}
    state = GAME.new_state(4, 0, options)
    state.set_hands([["6C"], ["5C", "5D", "5H", "5S", "KC"], ["7C"], ["8C"]], turn=1)
    play(state, "5x4", "pass", "pass", "pass")
    assert state.reversed
    finish_round(state, [2, 0, 1, 3])
    assert state.round == 2 and state.reversed and state.phase == "exchange"
    asked = checked(state)
    assert sorted(asked) == [0, 2]  # the Vice-Président and the Président (PR-10)
    for seat, number in ((2, 2), (0, 1)):
        for move, key in asked[seat].items():
            ranks = move.removeprefix("give:").split(",")
            assert len(ranks) == number
            assert key == ("give", tuple(sorted(REVERSED[r] for r in ranks))), move
    exchange_defaults(state)
    hands = [["6C", "7C"], ["9C", "9D", "9H", "9S", "KC"], ["10C", "JC"], ["QC", "3C"]]
    state.set_hands(hands, turn=1)
    assert checked(state)[1]["9x4"] == ("play", REVERSED["9"], 4, 0)
    play(state, "9x4")  # PV-7: "une autre révolution" restores the order
    assert not state.reversed
    # PR-11: seat 3 plays after seat 1 in the table 2 0 1 3; PR-5: singles beat no four
    assert checked(state)[3] == {"pass": ("pass",)}


# PV-16: 17 cards of two decks, two of each name but the J
TWO_OF_A_NAME = [c for c in ("5C", "9H", "3D", "4S", "6C", "7C", "8D", "10S") for _ in (1, 2)]
TWO_OF_A_NAME.append("JH")
# PV-3: 12 low cards for the Président beside the black Joker, 10 for the Trou du Cul
# beside the red Joker, a 2 and an ace (its two best cards but for the Joker)
LOW_PAIRS = [r + s for r in ("3", "4", "5", "6", "7", "8") for s in ("C", "D")]
LOW_HEARTS = [r + "H" for r in RANKS_52[:10]]


@pytest.mark.parametrize(
    ("order", "options", "deal"),
    [
        ([2, 0, 1, 3], {}, None),  # PR-10: 4 players
        ([1, 2, 0], {}, None),  # PR-10: 3 players, only the first exchange
        ([7, 6, 5, 4, 3, 2, 1, 0], {}, None),  # 8 players
        # PV-16: two decks, the Président dealt two cards of one name twice
        (
            [3, 1, 4, 0, 5, 2],
            {"decks": 2},
            {3: TWO_OF_A_NAME},
        ),
        # PV-3: the Jokers are never given, neither forced nor chosen
        (
            [2, 0, 1, 3],
            {"jokers": True},
            {2: ["BJ", *LOW_PAIRS], 3: ["RJ", "2C", "AC", *LOW_HEARTS]},
        ),
    ],
    ids=["4 players", "3 players", "8 players", "two decks", "jokers"],
)
def test_pr10_the_gives_of_the_exchange(
    order: list[int], options: dict[str, Any], deal: dict[int, list[str]] | None
) -> None:
    """PR-10: the Président gives back two cards of their choice, the Vice-Président one
    (none with 3 players); each give is the sorted tuple of its slots, a pair of one rank
    included (PV-16: two cards of one name); Jokers are never given (PV-3)."""
    state = later_round(order, options, deal=deal)
    asked = checked(state)
    president, vice = order[0], order[1]
    assert sorted(asked) == sorted([president] if len(order) == 3 else [president, vice])
    for seat, number in ((president, 2), (vice, 1)):
        for move, key in asked.get(seat, {}).items():
            ranks = move.removeprefix("give:").split(",")
            assert len(ranks) == number and not {"BJ", "RJ"} & set(ranks)
            assert key == ("give", tuple(sorted(NORMAL[r] for r in ranks))), move
    view = GAME.view(state, president)
    received = view["exchange"]["received"]
    assert received["forced"] and len(received["cards"]) == 2
    assert not {"BJ", "RJ"} & set(received["cards"])
    if options.get("decks") == 2:
        assert asked[president]["give:5,5"] == ("give", (2, 2))
        assert ENCODING.explain(observe(view))["cards"].count("9H") == 2
    exchange_defaults(state)
    for seat in asked:  # the gift made: both halves of the record (PR-10)
        view = GAME.view(state, seat)
        agrees(view, ENCODING.explain(observe(view)))
        assert view["exchange"]["gave"]["forced"] is False


def test_pv9_the_putsch_decision_and_the_four_card_penalty() -> None:
    """PV-9: the Trou du Cul is asked to putsch (or pass); when the putsch fails they give
    their 4 best cards next round and the Président gives any 4 back."""
    putsch = VARIANTS["putsch"]
    state = later_round([2, 0, 1, 3], putsch, rounds=4)
    assert checked(state) == {3: {"pass": ("pass",), "putsch": ("putsch",)}}
    play(state, "putsch")
    assert GAME.view(state, 1)["putsch"] == 3
    checked(state)
    finish_round(state, [2, 0, 1, 3])  # seat 2 goes out first: the putsch failed
    assert state.round == 3 and state.phase == "exchange"
    asked = checked(state)
    assert sorted(asked) == [0, 2]
    assert len(asked[2]) > 1
    for move, key in asked[2].items():
        ranks = move.removeprefix("give:").split(",")
        assert len(ranks) == 4
        assert key == ("give", tuple(sorted(NORMAL[r] for r in ranks))), move
    received = GAME.view(state, 2)["exchange"]["received"]
    assert received["forced"] and len(received["cards"]) == 4


NINES = ["9C", "9D", "9H", "9S"]


@pytest.mark.parametrize("n", [3, 4, 8])
def test_pv8_a_guillotine_names_seats_relative_to_its_player(n: int) -> None:
    """PV-8: four and two Jokers make a guillotine; its player then names the Trou du Cul
    and (from 4 players, PR-9) the Vice-Président, as relative seats (docs/learn)."""
    fillers = [["3C", "4C"], ["5C", "6C"], ["7C", "8C"], ["10C", "JC"], ["QC", "3D"],
               ["4D", "5D"], ["6D", "7D"]]  # fmt: skip
    hands = [fillers[0], [*NINES, "BJ", "RJ", "KC"], *fillers[1 : n - 1]]
    state = table(hands, {"jokers": True, "guillotine": True, "coup_d_etat": True})
    lead = checked(state)[1]
    assert lead["guillotine:9"] == ("guillotine", NORMAL["9"], 6, 2)
    assert lead["coup:9x5+1j"] == ("coup_d_etat", NORMAL["9"], 5, 1)
    assert lead["coup:9x5+2j"] == ("coup_d_etat", NORMAL["9"], 5, 2)
    play(state, "guillotine:9")
    asked = checked(state)
    names = GAME.pending(state)[0].legal_actions
    assert len(names) == (n - 1 if n == 3 else (n - 1) * (n - 2))
    for action in names:
        vice = action.get("vice_president")
        want = (
            "name",
            None if vice is None else relative(state, 1, vice),
            relative(state, 1, action["trou_du_cul"]),
        )
        assert asked[1][short(action)] == want


def test_pv8_a_guillotine_in_a_later_round_counts_seats_in_table_order() -> None:
    """PV-8 with PR-11: from round 2 seats sit in role order; `name` counts from the
    player in `table` order (table 3 4 0 1 2: from seat 1, seat 2 is +1, seat 3 +2)."""
    state = later_round([3, 4, 0, 1, 2], VARIANTS["guillotine"])
    exchange_defaults(state)
    hands = [["3C", "4C"], [*NINES, "BJ", "RJ", "KC"], ["5C", "6C"], ["7C", "8C"],
             ["10C", "JC"]]  # fmt: skip
    state.set_hands(hands, turn=1)
    play(state, "guillotine:9")
    asked = checked(state)[1]
    assert len(asked) == 4 * 3
    assert asked["name:v2,t3"] == ("name", 1, 2)
    assert asked["name:v0,t4"] == ("name", 4, 3)


def test_pv8_coups_offered_on_a_trick_with_two_decks() -> None:
    """PV-8: a coup "n'importe quand", here on a pair of 2s; PV-16: four of a kind and one
    of four Jokers; PV-3: a Joker alone is offered too."""
    hands = [["3C"], ["2C", "2D", "4C"], [*NINES, "BJ", "5C"], ["6C"], ["7C"], ["8C"]]
    options = {"jokers": True, "coup_d_etat": True, "decks": 2, "no_twos_cut": True}
    state = table(hands, options)
    play(state, "2x2")
    assert checked(state)[2] == {
        "pass": ("pass",),
        "BJx1": ("play", JOKER_SLOTS["BJ"], 1, 0),
        "coup:9x5+1j": ("coup_d_etat", NORMAL["9"], 5, 1),
    }


def test_pv13_runs_led_and_followed() -> None:
    """PV-13: runs of single cards, pairs or triples are led, and beaten only by a run of
    the same shape from a higher rank; `run` names its weakest rank's slot."""
    hands = [["KC"], ["3C", "3D", "4C", "4D", "5C", "5D"], ["6C", "6D", "7C", "7D", "8C", "8D"],
             ["QC"]]  # fmt: skip
    state = table(hands, VARIANTS["suites"])
    lead = checked(state)[1]
    assert lead["run:3:3x1"] == ("run", 0, 3, 1) and lead["run:3:3x2"] == ("run", 0, 3, 2)
    play(state, "run:3:3x2")
    assert checked(state)[2] == {"pass": ("pass",), "run:6:3x2": ("run", NORMAL["6"], 3, 2)}


def test_pv13_pv7_runs_in_the_reversed_order() -> None:
    """PV-13 with PV-7: "a revolution turns runs round too": after four 5s, K Q J is a run
    named by the K (its weakest rank now, slot 2), beaten by J 10 9 or 10 9 8."""
    hands = [["3D"], ["5C", "5D", "5H", "5S", "KC", "QC", "JC", "10C", "KD", "QD", "JD"],
             ["JH", "10H", "9H", "8H"], ["3C"]]  # fmt: skip
    state = table(hands, {**VARIANTS["suites"], "revolution": True})
    play(state, "5x4", "pass", "pass", "pass")
    assert state.reversed
    lead = checked(state)[1]
    runs = {move: key for move, key in lead.items() if move.startswith("run")}
    assert runs == {
        "run:K:3x1": ("run", REVERSED["K"], 3, 1),
        "run:K:4x1": ("run", REVERSED["K"], 4, 1),
        "run:Q:3x1": ("run", REVERSED["Q"], 3, 1),
        "run:K:3x2": ("run", REVERSED["K"], 3, 2),
    }
    play(state, "run:K:3x1")
    assert checked(state)[2] == {
        "pass": ("pass",),
        "run:J:3x1": ("run", REVERSED["J"], 3, 1),
        "run:10:3x1": ("run", REVERSED["10"], 3, 1),
    }


# PV-3 joker_wild: a pair of 9s, two Jokers and a K; (slot, count, jokers) of each lead
WILD_SETS = {
    "9x1": (6, 1, 0),
    "9x2": (6, 2, 0),
    "9x2+1j": (6, 2, 1),
    "9x3+1j": (6, 3, 1),
    "9x3+2j": (6, 3, 2),
    "9x4+2j": (6, 4, 2),
    "Kx2+1j": (10, 2, 1),
    "Kx3+2j": (10, 3, 2),
}


@pytest.mark.parametrize(
    ("hands", "options", "wanted"),
    [
        # PV-3 joker_wild: a Joker completes a set; every (count, jokers) its own index
        (
            [["3C"], ["9C", "9D", "BJ", "RJ", "KC"], ["4C"], ["5C"]],
            {},
            WILD_SETS,
        ),
        # PV-3 ruling: a hand of Jokers only plays them as the weakest rank
        ([["4C"], ["BJ", "RJ"], ["5C"], ["6C"]], {}, {"3x1+1j": (0, 1, 1), "3x2+2j": (0, 2, 2)}),
        # PV-16: eight 9s and a Joker, the largest set (one more than a full rank)
        (
            [["3C"], [*NINES, *NINES, "BJ"], ["4C"], ["5C"], ["6C"], ["7C"]],
            {"decks": 2},
            {"9x8": (6, 8, 0), "9x9+1j": (6, 9, 1)},
        ),
    ],
    ids=["a pair of 9s and two Jokers", "Jokers only", "two decks"],
)
def test_pv3_wild_jokers_in_sets(
    hands: list[list[str]], options: dict[str, Any], wanted: dict[str, tuple[int, ...]]
) -> None:
    """PV-3 `joker_wild`: `play` keys are (slot, count, jokers), so each set with more or
    fewer Jokers has an index of its own."""
    state = table(hands, {"jokers": True, "joker_wild": True, **options})
    lead = checked(state)[1]
    for move, (slot, count, jokers) in wanted.items():
        assert lead[move] == ("play", slot, count, jokers), move


def test_pv14_a_rapidite_window() -> None:
    """PV-14: after one 9, the seat holding the three others is asked at once; a `throw`
    names the rank's slot and the count."""
    hands = [["3C", "4C"], ["9C", "5C"], ["9D", "9H", "9S", "6C"], ["7C", "8C"]]
    state = table(hands, VARIANTS["rapidite"])
    play(state, "9x1")
    assert state.phase == "rapidite"
    assert checked(state) == {2: {"pass": ("pass",), "throw:9x3": ("throw", NORMAL["9"], 3)}}
    play(state, "throw:9x3@2")
    assert GAME.view(state, 0)["played"]["cards"]
    checked(state)


def test_pv15_menteur_lay_and_call_windows_and_a_pick_up() -> None:
    """PV-15: an announcement is a `play`; its cards are laid face down one rank at a time
    (`lay`: slot and count, a Joker by its own slot); every other player is asked to call;
    the loser picks up the trick.  Each seat's explanation holds only its own face-down
    cards and the pile's count, at every step."""
    hands = [["7C", "8C"], ["5C", "3C", "BJ"], ["9C", "6D", "10C"], ["4D", "JC", "QC"]]
    state = table(hands, {**VARIANTS["menteur"], "jokers": True})
    checked(state)
    play(state, "5x1")
    assert checked(state)[1] == {
        "lay:3x1": ("lay", NORMAL["3"], 1),
        "lay:5x1": ("lay", NORMAL["5"], 1),
        "lay:BJx1": ("lay", JOKER_SLOTS["BJ"], 1),
    }
    play(state, "lay:BJx1")  # a lie
    assert state.phase == "call"
    asked = checked(state)
    assert sorted(asked) == [0, 2, 3]
    assert all(keys == {"pass": ("pass",), "call": ("call",)} for keys in asked.values())
    play(state, "pass@2")
    checked(state)
    play(state, "9x1", "lay:9x1")
    checked(state)
    play(state, "call@0")  # seat 2 told the truth: seat 0 picks up the trick
    assert sorted(state.hand_view[0]) == sorted(["7C", "8C", "BJ", "9C"])
    after = checked(state)  # the winner of the call leads a new trick: an announcement
    assert list(after) == [2] and {key[0] for key in after[2].values()} == {"play"}
    view = GAME.view(state, 0)
    assert view["played"] == {"cards": [], "face_down": 0}
    assert cards(ENCODING.explain(observe(view))["cards"]) == cards(view["cards"])


@pytest.mark.parametrize("reverse", [False, True])
def test_pr1_pr2_the_32_card_deck(reverse: bool) -> None:
    """PR-1, PR-2: 8 9 10 J Q K A 7, the 7 strongest, fill slots 5..12 (docs/learn); PV-7
    reversed, the 8 is slot 12."""
    hands = [["9C"], ["8C", "10C", "AC", "7C", "7D"], ["JC"], ["QC", "KC"]]
    state = table(hands, {"deck": 32})
    if reverse:
        state.reversed = True
        for seat in range(4):
            state.refresh_hand(seat)
    slots = SMALL_REVERSED if reverse else SMALL
    lead = checked(state)[1]
    assert lead == {
        f"{r}x{k}": ("play", slots[r], k, 0)
        for r, k in (("8", 1), ("10", 1), ("A", 1), ("7", 1), ("7", 2))
    }
    view = GAME.view(state, 1)
    assert ENCODING.explain(observe(view))["rank_order"] == view["rank_order"]
