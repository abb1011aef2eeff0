"""Cactus rules, one test (or table) per rule id of rules/cactus.md."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from arena.games import cards, make_policy
from arena.games.base import IllegalAction, OptionsError
from arena.games.cactus import GAME
from arena.games.cactus.engine import _pagat_penalties
from arena.match.referee import PolicyClient, Referee, policy_rng
from tests.support import contract
from tests.support.cactus_helpers import (
    act,
    answer_all,
    asked,
    card,
    layout,
    legal,
    names,
    pass_windows,
    table,
)

SWAP0 = {"type": "swap", "slot": 0}


# -- CA-1 cards and players ------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "options", "deck_size"),
    [(2, {}, 52), (6, {}, 52), (7, {}, 104), (8, {}, 104), (4, {"decks": 2}, 104)],
)
def test_ca1_one_deck_up_to_six_players_two_beyond(players, options, deck_size):
    state = GAME.new_state(players, 3, options)
    assert sorted(GAME.all_cards(state)) == list(range(deck_size))


@pytest.mark.parametrize("players", [1, 9, 0])
def test_ca1_two_to_eight_players(players):
    with pytest.raises(OptionsError, match="2 to 8 players"):
        GAME.new_state(players, 1)


# -- CA-2 values -------------------------------------------------------------------------


def test_ca2_values_count_in_the_round_total():
    state = table(2, layouts=[["KH", "AS", "10D", "QC"], ["JH", "2S", "9D", "5C"]])
    GAME._end_round(state)
    assert state.round_results[0]["totals"] == [0 + 1 + 10 + 10, 10 + 2 + 9 + 5]


def test_ca2_values_option_overrides_one_rank():
    state = table(2, layouts=[["KH", "AS"], ["JH"]], values={"K": -1})
    GAME._end_round(state)
    assert state.round_results[0]["totals"] == [0, 10]  # -1 + 1


def test_ca2_unknown_rank_in_values_is_refused():
    with pytest.raises(OptionsError, match="unknown ranks"):
        GAME.resolve_options({"values": {"Z": 3}})


# -- CA-3 layout ------------------------------------------------------------------------


def test_ca3_four_face_down_slots_nobody_sees_unless_a_rule_shows_them():
    state = GAME.new_state(3, 5, {"preset": "pagat"})
    for seat in range(3):
        view = GAME.view(state, seat)
        assert [[s["slot"] for s in row] for row in view["layouts"]] == [[0, 1, 2, 3]] * 3
        assert all(s["card"] is None for row in view["layouts"] for s in row)


def test_ca3_slot_ids_are_stable_and_new_cards_get_new_ids():
    state = table(
        2, preset="pagat", layouts=[["5H", "9S", "KD", "2C"], ["5S", "3D", "4H", "6C"]],
        stock=["7H", "8H", "AC"],
    )  # fmt: skip
    act(state, 0, {"type": "draw"})  # AC
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 1}})  # 3D on AC: wrong (PG-4)
    assert set(state.layouts[1]) == {0, 1, 2, 3, 4, 5}
    assert layout(state, 1)[1] == "3D"


def test_ca3_the_deal_goes_one_card_at_a_time_from_the_dealers_left():
    """CA-3: the dealer gives each player one card at a time, clockwise from their left,
    until each has four (slots 0 to 3 in that order).  With the shuffle left out, the
    stock's top card (the deck's last) goes to the seat after the dealer's slot 0."""
    state = GAME.new_state(3, 1)
    state.rng.shuffle = lambda deck: None
    state.dealer = 1
    GAME._start_round(state)
    assert [layout(state, seat) for seat in range(3)] == [
        {0: "KH", 1: "QS", 2: "QC", 3: "JD"},
        {0: "KD", 1: "QH", 2: "JS", 3: "JC"},
        {0: "KS", 1: "KC", 2: "QD", 3: "JH"},
    ]
    assert len(state.stock) == 40 and state.discard == []


# -- CA-4 stock and discard -------------------------------------------------------------


def test_ca4_empty_stock_takes_the_discard_but_its_top():
    state = table(2, layouts=[["5H"], ["5S"]], stock=[], discard=["2C", "3C", "4C"])
    act(state, 0, {"type": "draw"})
    assert cards.name(state.hand) in {"2C", "3C"}
    assert names(state.discard) == ["4C"]
    assert any(e.data["type"] == "reshuffle" for e in state.events)


def test_ca4_no_card_at_all_skips_the_draw():
    state = table(2, layouts=[["5H"], ["5S"]], stock=[], discard=["4C"])
    act(state, 0, {"type": "draw"})
    assert state.phase == "call" and state.hand is None
    assert state.events[-1].data == {"type": "draw_skipped", "player": 0}


# -- CA-5 a turn -------------------------------------------------------------------------


def test_ca5_take_discard_is_not_allowed_while_the_discard_is_empty():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C"], discard=[])
    assert legal(state, 0) == [{"type": "draw"}]


def test_ca5_a_taken_discard_must_be_swapped_and_the_old_card_goes_face_up():
    state = table(2, layouts=[["5H", "9S"], ["5S"]], stock=["2C"], discard=["KC"])
    act(state, 0, {"type": "take_discard"})
    assert legal(state, 0) == [{"type": "swap", "slot": 0}, {"type": "swap", "slot": 1}]
    act(state, 0, {"type": "swap", "slot": 1})
    assert layout(state, 0) == {0: "5H", 1: "KC"}
    assert names(state.discard) == ["9S"]


def test_ca5_a_drawn_card_may_be_swapped_or_discarded():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C"], discard=["KC"])
    act(state, 0, {"type": "draw"})
    assert legal(state, 0) == [SWAP0, {"type": "discard"}]
    act(state, 0, {"type": "discard"})
    assert names(state.discard) == ["KC", "2C"]


# -- CA-6 no layout cards -----------------------------------------------------------------


def test_ca6_an_empty_layout_can_still_draw_and_discard():
    state = table(2, layouts=[[], ["5S"]], stock=["2C"], discard=["KC"])
    assert legal(state, 0) == [{"type": "draw"}]
    act(state, 0, {"type": "draw"})
    assert legal(state, 0) == [{"type": "discard"}]


# -- CA-7 calling -------------------------------------------------------------------------


def test_ca7_every_other_player_plays_one_more_turn_then_the_round_ends():
    state = table(3, layouts=[["KH"], ["5S"], ["6S"]], stock=["AC", "AD", "AH"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_call(state)
    act(state, 0, {"type": "call"})
    assert state.caller == 0 and state.player == 1
    for seat in (1, 2):
        assert state.player == seat
        assert [r.kind for r in GAME.pending(state)] == ["turn"]
        act(state, seat, {"type": "draw"})
        act(state, seat, {"type": "discard"})
        pass_windows(state)  # no call decision once someone has called
    assert state.round == 2  # the caller did not play again: round 1 is over
    assert state.round_results[0]["caller"] == 0


def pass_windows_until_call(state):
    while state.phase == "snap":
        answer_all(state, {})
    assert state.phase == "call"


def test_ca7_only_one_call_per_round():
    state = table(3, layouts=[["KH"], ["5S"], ["6S"]], stock=["AC", "AD", "AH"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_call(state)
    act(state, 0, {"type": "call"})
    act(state, 1, {"type": "draw"})
    act(state, 1, {"type": "discard"})
    pass_windows(state)
    assert state.phase == "turn"  # seat 1 was not asked to call


def test_ca7_any_time_lets_another_seat_call_at_the_end_of_a_turn():
    state = table(3, layouts=[["KH"], ["5S"], ["6S"]], stock=["AC", "AD", "AH"], call="any_time")
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_call(state)
    assert asked(state) == [0, 1, 2]
    answer_all(state, {2: {"type": "call"}})
    assert state.caller == 2
    # everyone but the caller plays one more turn, in order: 1, then 0
    assert state.player == 1
    act(state, 1, {"type": "draw"})
    act(state, 1, {"type": "discard"})
    pass_windows(state)
    assert state.player == 0


# -- CA-8 / CA-9 snaps and their priority -------------------------------------------------


def test_ca8_a_right_snap_goes_onto_the_discard_and_shrinks_the_layout():
    state = table(3, layouts=[["KH"], ["5S", "9D"], ["6S"]], stock=["5C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    assert state.phase == "snap" and asked(state) == [1, 2, 0]
    answer_all(state, {1: {"type": "snap", "slot": 0}})
    assert names(state.discard) == ["5C", "5S"]
    assert layout(state, 1) == {1: "9D"}
    assert state.phase == "snap"  # a new window opens on the snapped card


def test_ca8_a_window_closes_once_every_eligible_seat_has_answered():
    state = table(2, layouts=[["KH"], ["5S"]], stock=["AC", "5C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    assert state.phase == "snap"
    answer_all(state, {})  # all pass: the next turn action will cover the 5
    act(state, 0, {"type": "pass"})
    assert state.phase == "turn" and state.player == 1
    assert all(a["type"] != "snap" for a in legal(state, 1))


@pytest.mark.parametrize(
    ("top_owner", "snappers", "winner"),
    [
        (0, {1, 2}, 1),  # clockwise from the seat after the owner
        (0, {2, 0}, 2),  # the owner itself last
        (1, {0, 1}, 0),
        (2, {1, 2}, 1),
    ],
)
def test_ca9_the_first_snap_in_priority_order_is_kept(top_owner, snappers, winner):
    state = table(
        3, layouts=[["5H", "KD"], ["5S", "KS"], ["5D", "KC"]], stock=["5C"], player=top_owner
    )
    act(state, top_owner, {"type": "draw"})
    act(state, top_owner, {"type": "discard"})
    answer_all(state, {s: {"type": "snap", "slot": 0} for s in snappers})
    assert 0 not in state.layouts[winner]
    for loser in snappers - {winner}:
        assert 0 in state.layouts[loser]  # it may throw again in the next window


def test_ca9_random_priority_uses_the_match_generator():
    orders = set()
    for seed in range(12):
        state = table(4, layouts=[["5H"], ["5S"], ["5D"], ["KC"]], stock=["5C"],
                      reaction_priority="random")  # fmt: skip
        state.rng.seed(seed)
        act(state, 0, {"type": "draw"})
        act(state, 0, {"type": "discard"})
        orders.add(tuple(asked(state)))
        again = table(4, layouts=[["5H"], ["5S"], ["5D"], ["KC"]], stock=["5C"],
                      reaction_priority="random")  # fmt: skip
        again.rng.seed(seed)
        act(again, 0, {"type": "draw"})
        act(again, 0, {"type": "discard"})
        assert asked(again) == asked(state)  # same seed, same order
    assert len(orders) > 1


# -- CA-10 / CA-11 end of round and the dealer ---------------------------------------------


def test_ca10_all_layouts_are_revealed_and_an_empty_layout_totals_zero():
    state = table(2, layouts=[[], ["QS", "3D"]])
    GAME._end_round(state)
    reveal = next(e for e in state.events if e.data["type"] == "reveal")
    assert reveal.to is None
    assert reveal.data["totals"] == [0, 13]
    assert reveal.data["layouts"][1] == [{"slot": 0, "card": "QS"}, {"slot": 1, "card": "3D"}]


def test_ca11_seat_after_the_dealer_starts_and_the_dealer_moves_on():
    state = GAME.new_state(3, 9)
    assert (state.dealer, state.player) == (0, 1)
    GAME._end_round(state)
    assert (state.dealer, state.player, state.round) == (1, 2, 2)


# -- CL-1 initial peek ----------------------------------------------------------------------


def test_cl1_classic_players_see_their_bottom_row():
    state = GAME.new_state(3, 4)
    for seat in range(3):
        mine = GAME.view(state, seat)["layouts"][seat]
        assert [s["card"] is not None for s in mine] == [False, False, True, True]
        assert [s["card"] for s in mine[2:]] == [cards.name(state.layouts[seat][2]),
                                                 cards.name(state.layouts[seat][3])]  # fmt: skip


# -- CL-2 / CL-3 the 8 -------------------------------------------------------------------------


def test_cl2_a_stock_drawn_8_may_peek_and_is_then_discarded():
    state = table(2, layouts=[["5H", "9S"], ["5S"]], stock=["8C"])
    act(state, 0, {"type": "draw"})
    assert {"type": "peek", "slot": 1} in legal(state, 0)
    act(state, 0, {"type": "peek", "slot": 1})
    assert names(state.discard) == ["8C"]
    assert GAME.view(state, 0)["layouts"][0][1]["card"] == "9S"
    assert GAME.view(state, 1)["layouts"][0][1]["card"] is None


def test_cl2_an_8_from_the_discard_has_no_power():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C"], discard=["8C"])
    act(state, 0, {"type": "take_discard"})
    assert all(a["type"] == "swap" for a in legal(state, 0))


def test_cl2_pagat_8_is_a_power_of_the_discard_not_of_the_draw():
    state = table(2, preset="pagat", layouts=[["5H"], ["5S"]], stock=["8C"])
    act(state, 0, {"type": "draw"})
    assert legal(state, 0) == [SWAP0, {"type": "discard"}]


def test_cl3_the_passed_on_8_lets_the_next_player_peek_then_play():
    state = table(2, layouts=[["5H"], ["5S", "QD"]], stock=["2C", "8C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})  # the 8's power was not used
    pass_windows_until_call(state)
    act(state, 0, {"type": "pass"})
    assert {"type": "peek", "slot": 1} in legal(state, 1)
    assert GAME.view(state, 1)["eight_offer"] is True
    act(state, 1, {"type": "peek", "slot": 1})
    assert names(state.discard) == ["8C"]  # the 8 stays
    assert legal(state, 1) == [{"type": "draw"}, {"type": "take_discard"}]  # turn goes on
    assert GAME.view(state, 1)["layouts"][1][1]["card"] == "QD"


def test_cl3_the_offer_lapses_when_a_snap_covers_the_8():
    state = table(3, layouts=[["5H"], ["5S"], ["8D"]], stock=["2C", "8C"])
    state.known[2][2][0] = "8D"
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {2: {"type": "snap", "slot": 0}})
    pass_windows(state)
    assert state.player == 1
    assert legal(state, 1) == [{"type": "draw"}, {"type": "take_discard"}]


def test_cl3_the_offer_lapses_when_the_player_takes_another_action():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C", "8C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows(state)
    act(state, 1, {"type": "draw"})
    act(state, 1, {"type": "discard"})
    pass_windows(state)
    assert all(a["type"] != "peek" for a in legal(state, 0))


def test_cl2_cl3_power_is_used_once_per_physical_card():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C", "8C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "peek", "slot": 0})
    pass_windows(state)
    assert all(a["type"] != "peek" for a in legal(state, 1))  # used: nothing passes on


# -- CL-4 / CL-5 snaps in the classic preset ---------------------------------------------------


def test_cl4_several_cards_on_one_rank_one_per_window():
    state = table(3, layouts=[["KH"], ["5S", "5D"], ["5H"]], stock=["5C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}, 2: {"type": "snap", "slot": 0}})
    assert layout(state, 2) == {0: "5H"}  # seat 1 had priority in that window
    assert asked(state) == [2, 0, 1]  # the new window is owned by seat 1
    answer_all(state, {2: {"type": "snap", "slot": 0}, 1: {"type": "snap", "slot": 1}})
    assert layout(state, 2) == {} and layout(state, 1) == {1: "5D"}
    assert names(state.discard) == ["5C", "5S", "5H"]


@pytest.mark.parametrize(("penalty_cards", "new_slots"), [(1, {0, 1}), (2, {0, 1, 4})])
def test_cl5_wrong_snap_card_stays_and_penalty_cards_come_unseen(penalty_cards, new_slots):
    state = table(
        2, layouts=[["KH"], ["QS", "9D"]], stock=["3H", "4H", "5C"], penalty_cards=penalty_cards
    )
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}})  # QS on 5C: wrong
    assert names(state.discard) == ["5C", "QS"]  # the wrong card stays
    assert set(state.layouts[1]) == new_slots
    assert layout(state, 1)[0] == "4H"  # the penalty card takes the emptied slot
    assert all(s["card"] is None for s in GAME.view(state, 1)["layouts"][1] if s["slot"] != 1)
    # a window opens on the queen; the penalty card may not be thrown in it
    assert state.phase == "snap"
    assert {"type": "snap", "slot": 0} not in legal(state, 1)
    assert {"type": "snap", "slot": 1} in legal(state, 1)


def test_cl5_a_penalty_card_waits_for_its_owners_next_turn_not_anyone_elses():
    """CL-5: "il doit attendre le tour suivant" (French rules): seat 2's penalty card, received
    in seat 0's turn, stays locked through seat 1's turn and may be thrown once seat 2's
    own turn has begun."""
    state = table(
        3, layouts=[["KH"], ["AS", "3C"], ["QS", "9D"]], stock=["2H", "5D", "5H", "5S", "5C"]
    )
    act(state, 0, {"type": "draw"})  # 5C
    act(state, 0, {"type": "discard"})
    answer_all(state, {2: {"type": "snap", "slot": 0}})  # QS on 5C: wrong, 5S comes in
    assert layout(state, 2) == {0: "5S", 1: "9D"}
    pass_windows(state)
    assert state.player == 1
    act(state, 1, {"type": "draw"})  # 5H
    act(state, 1, {"type": "discard"})
    assert state.phase == "snap"
    assert legal(state, 2) == [{"type": "pass"}, {"type": "snap", "slot": 1}]
    assert GAME.view(state, 2)["locked_slots"] == [0]
    pass_windows(state)
    assert state.player == 2
    act(state, 2, {"type": "draw"})  # 5D
    act(state, 2, {"type": "discard"})
    assert {"type": "snap", "slot": 0} in legal(state, 2)  # its own turn began: unlocked
    answer_all(state, {2: {"type": "snap", "slot": 0}})
    assert layout(state, 2) == {1: "9D"}


def test_cl5_the_lock_follows_the_card_through_a_blind_swap():
    """CL-5 with PG-3: a blind swap that takes a locked penalty card from its owner leaves
    it throwable by its new holder, and the card its owner gets in exchange is not locked."""
    state = table(3, preset="pagat", layouts=[["5H", "QD"], ["7S"], ["9S", "2D"]],
                  stock=["4C", "2C", "QC"])  # fmt: skip
    state.locked.add((2, card("2D")))  # seat 2's penalty card
    act(state, 0, {"type": "draw"})  # QC
    act(state, 0, {"type": "discard"})
    pass_windows_until_power(state)
    act(state, 0, {"type": "blind_swap", "slot": 0, "player": 2, "other_slot": 1})
    pass_windows(state)
    assert state.player == 1
    act(state, 1, {"type": "draw"})  # 2C
    act(state, 1, {"type": "discard"})
    assert {"type": "snap", "slot": 0} in legal(state, 0)  # the 2D, now seat 0's
    assert legal(state, 2) == [{"type": "pass"}] + [{"type": "snap", "slot": s} for s in (0, 1)]


# -- CL-6 / CL-7 calling and round results ---------------------------------------------------


def test_cl6_the_call_is_not_checked():
    state = table(2, layouts=[["QH", "QS"], ["KS"]], stock=["9C", "9D", "9H"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_call(state)
    assert {"type": "call"} in legal(state, 0)  # a total of 20 may still call


@pytest.mark.parametrize(
    ("hands", "winners", "cactus"),
    [
        ([["2H", "3H"], ["AS", "AD"], ["QS"]], [1], [True, True, False]),  # lowest cactus
        ([["2H"], ["AS", "AD"], ["KS"]], [2], [True, True, True]),  # cactus royal at 0
        ([["2H", "AH"], ["3D"], ["QS"]], [0, 1], [True, True, False]),  # ties share
        ([["6H"], ["7D"], ["QS"]], [], [False, False, False]),  # nobody has cactus
    ],
)
def test_cl7_round_result(hands, winners, cactus):
    state = table(3, layouts=hands)
    GAME._end_round(state)
    assert state.round_results[0]["winners"] == winners
    assert state.round_results[0]["cactus"] == cactus
    assert state.wins == [int(s in winners) for s in range(3)]


# -- CL-8 match scoring --------------------------------------------------------------------------


def finish_round(state, hands):
    """End the current round with these layouts and the given caller."""
    state.layouts = [{i: card(c) for i, c in enumerate(h)} for h in hands]
    GAME._end_round(state)


def test_cl8_wins_ranks_by_rounds_won_then_by_summed_totals():
    state = table(3, rounds=3)
    finish_round(state, [["AH"], ["2H"], ["QS"]])  # seat 0 wins
    finish_round(state, [["QH"], ["AS"], ["QD"]])  # seat 1 wins
    finish_round(state, [["9H"], ["9S"], ["KS"]])  # seat 2 wins
    outcome = GAME.outcome(state)
    assert outcome.scores == [1, 1, 1]
    # totals 20, 12, 20: seat 1 first, seats 0 and 2 share second
    assert outcome.ranks == [2, 1, 2]


def test_cl8_tas_de_merde_seven_resets_except_a_first_draw():
    state = table(2, scoring="tas_de_merde", rounds=3)
    draws = iter([cards.NAMES.index("7H"), cards.NAMES.index("4C"), cards.NAMES.index("7S")])
    state.rng.randrange = lambda n: next(draws)  # the draws seat 0 gets, in order
    finish_round(state, [["QH"], ["AS"]])  # first ever draw: a 7 counts 7
    assert state.tally == [7, 0]
    finish_round(state, [["QH"], ["AS"]])
    assert state.tally == [11, 0]
    finish_round(state, [["QH"], ["AS"]])  # a later 7 flushes the tally
    assert state.tally == [0, 0]
    assert GAME.outcome(state).ranks == [1, 1]


def test_cl8_maximus_points_wrong_call_and_play_on_until_one_leads():
    state = table(3, scoring="maximus")
    state.points = [4, 4, 0]
    state.caller = 2
    finish_round(state, [["AH"], ["AS"], ["QS"]])  # both reach 5; caller is wrong
    assert state.round_results[-1]["points"] == [1, 1, -1]
    assert GAME.outcome(state) is None  # 5 and 5: nobody leads alone
    state.caller = 1
    finish_round(state, [["QH"], ["KS"], ["QD"]])  # royal for seat 1
    assert state.points == [5, 7, -1]
    assert GAME.outcome(state).ranks == [2, 1, 3]


def test_cl8_maximus_grand_cactus_starts_the_next_round_from_the_seat_after():
    state = table(4, scoring="maximus")
    state.caller = 2
    finish_round(state, [["QH"], ["QS"], ["AS"], ["QD"]])
    assert state.player == 3


@pytest.mark.parametrize(
    ("caller_cards", "points", "starter"),
    [
        (["2H", "3S"], [0, 1, 1, 0], 3),  # a total of exactly 5: cactus, the grand cactus
        (["2H", "4S"], [0, 1, -1, 0], 2),  # 6: a wrong call, the usual rotation (CA-11)
    ],
)
def test_cl8_maximus_a_caller_at_exactly_five_is_the_grand_cactus(caller_cards, points, starter):
    """CL-8 maximus at its boundary: a caller whose total is exactly 5 has cactus (CL-7:
    "5 or less"), so the call is right: 1 point, not the wrong call's -1 ("more than 5"),
    and the seat after them starts the next round ("grand cactus")."""
    state = table(4, scoring="maximus")
    state.caller = 2
    finish_round(state, [["QH"], ["AS"], caller_cards, ["QD"]])
    result = state.round_results[-1]
    assert result["totals"][2] == sum(int(c[:-1]) for c in caller_cards)
    assert result["points"] == points
    assert state.points == points
    assert state.round == 2 and state.player == starter


# -- PG-1 .. PG-6 the pagat preset ---------------------------------------------------------------


def test_pg1_every_seat_chooses_two_cards_at_once():
    state = GAME.new_state(3, 8, {"preset": "pagat"})
    assert asked(state) == [0, 1, 2]
    assert len(legal(state, 0)) == 6  # any two of four
    answers = {0: {"type": "initial_peek", "slots": [0, 3]}}
    answer_all(state, answers)
    mine = GAME.view(state, 0)["layouts"][0]
    assert [s["card"] is not None for s in mine] == [True, False, False, True]
    assert state.phase == "turn"


def test_pg2_a_card_taken_from_the_discard_must_be_swapped_in():
    """PG-2: a card taken from the discard must be swapped in."""
    state = table(2, preset="pagat", layouts=[["5H"], ["5S"]], stock=["2C"], discard=["KC"])
    act(state, 0, {"type": "take_discard"})
    assert legal(state, 0) == [SWAP0]


@pytest.mark.parametrize(
    ("rank", "power"),
    [("6", "peek"), ("7", "peek"), ("8", "peek"), ("9", "peek_other"), ("10", "peek_other"),
     ("J", "peek_other"), ("Q", "blind_swap")],
)  # fmt: skip
def test_pg3_power_cards(rank, power):
    """PG-3: the power of each rank, offered once the discard's windows closed."""
    state = table(2, preset="pagat", layouts=[["5H", "9S"], ["KS", "2D"]], stock=[rank + "C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_power(state)
    assert GAME.view(state, 0)["power"] == power
    kinds = {a["type"] for a in legal(state, 0)}
    assert kinds == {"skip", power}


def pass_windows_until_power(state):
    while state.phase == "snap":
        answer_all(state, {})
    assert state.phase == "power"


def test_pg3_peek_other_shows_one_card_to_the_user_only():
    state = table(3, preset="pagat", layouts=[["5H"], ["KS", "2D"], ["3C"]], stock=["9C"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_power(state)
    act(state, 0, {"type": "peek_other", "player": 1, "slot": 1})
    assert GAME.view(state, 0)["layouts"][1][1]["card"] == "2D"
    assert GAME.view(state, 1)["layouts"][1][1]["card"] is None
    assert GAME.view(state, 2)["layouts"][1][1]["card"] is None


def test_pg3_blind_swap_makes_both_cards_unknown_even_to_who_knew_them():
    state = table(2, preset="pagat", layouts=[["5H", "9S"], ["KS", "2D"]], stock=["QC"])
    state.known[0][0][1] = "9S"
    state.known[1][1][0] = "KS"
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    pass_windows_until_power(state)
    act(state, 0, {"type": "blind_swap", "slot": 1, "player": 1, "other_slot": 0})
    assert layout(state, 0) == {0: "5H", 1: "KS"}
    assert layout(state, 1) == {0: "9S", 1: "2D"}
    assert GAME.view(state, 0)["layouts"][0][1]["card"] is None
    assert GAME.view(state, 1)["layouts"][1][0]["card"] is None


def test_pg3_the_power_of_a_physical_card_is_used_once_per_round():
    state = table(2, preset="pagat", layouts=[["5H", "9S"], ["KS", "2D"]], stock=["4C", "2C", "7C"])
    act(state, 0, {"type": "draw"})  # 7C
    act(state, 0, {"type": "discard"})
    pass_windows_until_power(state)
    act(state, 0, {"type": "peek", "slot": 0})
    pass_windows(state)
    act(state, 1, {"type": "take_discard"})  # the same 7 goes into seat 1's layout
    act(state, 1, SWAP0)
    pass_windows(state)
    act(state, 0, {"type": "draw"})  # 2C
    act(state, 0, {"type": "discard"})
    pass_windows(state)
    act(state, 1, {"type": "draw"})  # 4C
    act(state, 1, SWAP0)  # the 7 is discarded in a turn again: its power is spent
    pass_windows_until_call(state)


def test_pg3_a_snapped_card_grants_no_power():
    state = table(2, preset="pagat", layouts=[["5H"], ["7S", "2D"]], stock=["7C"])
    state.powers_used.add(card("7C"))  # the discarded 7 itself has no power left
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}})  # 7S lands by a snap
    pass_windows(state)
    assert state.phase in ("call", "turn")


def test_pg4_wrong_snap_card_goes_back_and_two_cards_come_in_new_slots():
    state = table(3, preset="pagat", layouts=[["5H"], ["QS", "2D"], ["5D"]],
                  stock=["3H", "4H", "5C"])  # fmt: skip
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}, 2: {"type": "snap", "slot": 0}})
    assert layout(state, 1) == {0: "QS", 1: "2D", 4: "4H", 5: "3H"}
    assert names(state.discard) == ["5C"]
    # the miss showed the queen to everybody
    assert all(GAME.view(state, s)["layouts"][1][0]["card"] == "QS" for s in range(3))
    assert state.phase == "power" or state.phase == "call"  # no throw after a miss


def test_pg4_snap_after_miss_lets_others_throw_on_the_same_card():
    state = table(3, preset="pagat", layouts=[["5H"], ["QS", "2D"], ["5D"]],
                  stock=["3H", "4H", "5C"], snap_after_miss=True)  # fmt: skip
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}})
    assert state.phase == "snap" and 1 not in asked(state)
    answer_all(state, {2: {"type": "snap", "slot": 0}})
    assert layout(state, 2) == {}


def test_pg4_one_throw_per_discarded_card_a_correct_throw_opens_no_window():
    """PG-4: a second J on the first player's J is not accepted in pagat (CA-8: a thrown
    card opens no window there), unlike CL-4's chain in classic."""
    hands = [["5H"], ["JS", "2D"], ["JD", "9C"]]
    state = table(3, preset="pagat", layouts=hands, stock=["3H", "JC"])
    act(state, 0, {"type": "draw"})  # JC
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}, 2: {"type": "snap", "slot": 0}})
    assert names(state.discard) == ["JC", "JS"]
    assert layout(state, 2) == {0: "JD", 1: "9C"}  # the second J stays in its slot
    assert state.phase != "snap"  # no window on the thrown J
    state = table(3, preset="classic", layouts=hands, stock=["3H", "JC"])
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}})
    assert state.phase == "snap" and 2 in asked(state)  # CL-4: the thrown J opens one
    answer_all(state, {2: {"type": "snap", "slot": 0}})
    assert names(state.discard) == ["JC", "JS", "JD"]


def test_pg4_snap_chain_is_the_option_that_decides():
    """PG-4 / CL-4: `snap_chain` overrides either preset."""
    assert GAME.resolve_options({"preset": "pagat"}).snap_chain is False
    assert GAME.resolve_options({"preset": "classic"}).snap_chain is True
    state = table(3, preset="pagat", layouts=[["5H"], ["JS"], ["JD"]], stock=["JC"],
                  snap_chain=True)  # fmt: skip
    act(state, 0, {"type": "draw"})
    act(state, 0, {"type": "discard"})
    answer_all(state, {1: {"type": "snap", "slot": 0}})
    assert state.phase == "snap" and asked(state) == [2, 0]


@pytest.mark.parametrize(
    ("totals", "caller", "expected"),
    [
        ([3, 8, 9], 0, [0, 8, 9]),  # strictly lowest caller scores 0
        ([3, 3, 9], 0, [13, 0, 9]),  # a tie is not enough; the tied non-caller scores 0
        ([7, 2, 9], 0, [17, 0, 9]),
        ([7, 2, 9], None, [7, 2, 9]),  # no call (turn cap): totals
    ],
)
def test_pg5_penalty_scoring(totals, caller, expected):
    """PG-5: the penalty points of a deal."""
    assert _pagat_penalties(totals, caller) == expected


def test_pg6_deals_until_a_hundred_and_the_lowest_deal_starts_next():
    state = table(3, preset="pagat")
    state.penalty = [60, 10, 30]
    state.caller = 1
    finish_round(state, [["QH", "QS", "QD"], ["AH"], ["KS"]])  # 30, 1 (caller), 0
    assert state.penalty == [90, 21, 30]
    assert state.starter == 2 and state.phase == "initial_peek"  # seat 2 scored 0
    assert GAME.outcome(state) is None
    state.caller = None
    finish_round(state, [["QH"], ["AH"], ["KS"]])
    assert state.penalty == [100, 22, 30]
    assert GAME.outcome(state).ranks == [3, 1, 2]


# -- edges the rule text pins (boundaries, empty layouts, options and their interplay) ----

DRAW = {"type": "draw"}
DISCARD = {"type": "discard"}
CALL = {"type": "call"}
SKIP = {"type": "skip"}


def snap(slot):
    return {"type": "snap", "slot": slot}


def kinds(state):
    """Who is asked now, and for what."""
    return [(r.seat, r.kind) for r in GAME.pending(state)]


def shown(state, seat, owner):
    """What ``seat``'s view shows of ``owner``'s layout: slot -> card name or None."""
    return {s["slot"]: s["card"] for s in GAME.view(state, seat)["layouts"][owner]}


def draw_and_discard(state, seat):
    act(state, seat, DRAW)
    act(state, seat, DISCARD)


def snaps_in(state):
    return [e.data for e in state.events if e.data["type"] == "snap"]


@pytest.mark.parametrize(
    ("players", "options", "copies"),
    [(6, {}, 1), (7, {}, 2), (7, {"decks": 1}, 1), (2, {"decks": 3}, 3), (8, {"decks": 2}, 2)],
)
def test_ca1_the_decks_option_overrides_the_player_count(players, options, copies):
    """CA-1: one deck up to 6 players, two for 7-8, unless `decks` says otherwise; each
    card name is in the match once per deck."""
    state = GAME.new_state(players, 4, options)
    assert Counter(names(GAME.all_cards(state))) == {n: copies for n in cards.NAMES}


@pytest.mark.parametrize(
    ("rank", "value"),
    [("A", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5), ("6", 6), ("7", 7), ("8", 8),
     ("9", 9), ("10", 10), ("J", 10), ("Q", 10), ("K", 0)],
)  # fmt: skip
def test_ca2_the_value_of_every_rank(rank, value):
    """CA-2: King 0, Ace 1, 2-10 their pips, Jack and Queen 10."""
    state = table(2, layouts=[[rank + "H"], [rank + "S", rank + "D"]])
    GAME._end_round(state)
    assert state.round_results[0]["totals"] == [value, 2 * value]


@pytest.mark.parametrize(
    ("stock", "discard", "hand", "discard_after"),
    [
        (["9H"], ["2C", "4C"], "9H", ["2C", "4C"]),  # the stock has a card: no reshuffle
        ([], ["2C", "4C"], "2C", ["4C"]),  # one card under the top: it is the new stock
        ([], ["4C"], None, ["4C"]),  # only the top: no card can be had, the draw is skipped
        ([], [], None, []),
    ],
)
def test_ca4_the_last_card_of_the_stock_and_the_reshuffle(stock, discard, hand, discard_after):
    """CA-4 at its boundaries: the discard except its top card becomes the stock when the
    stock is empty; with nothing under the top the draw is skipped and the turn ends."""
    state = table(2, layouts=[["5H"], ["5S"]], stock=stock, discard=discard)
    act(state, 0, DRAW)
    assert names(state.discard) == discard_after and state.stock == []
    if hand is None:
        assert state.hand is None and kinds(state) == [(0, "call")]
    else:
        assert cards.name(state.hand) == hand and kinds(state) == [(0, "drawn")]
    reshuffled = [e.data for e in state.events if e.data["type"] == "reshuffle"]
    assert reshuffled == ([{"type": "reshuffle", "stock": 1}] if not stock and hand else [])


def test_ca4_the_new_stock_is_shuffled_with_the_match_generator():
    """CA-4: the cards under the top are shuffled (seeded): the card drawn after a reshuffle
    depends on the match's generator, and the same generator gives the same stock."""
    under = ["2C", "3C", "4C", "5C", "6C", "7C", "9C", "10C"]
    drawn = set()
    for seed in range(8):
        stocks = []
        for _ in range(2):
            state = table(2, layouts=[[], []], stock=[], discard=[*under, "KD"])
            state.rng.seed(seed)
            act(state, 0, DRAW)
            stocks.append((cards.name(state.hand), names(state.stock)))
            assert names(state.discard) == ["KD"]
            assert sorted([stocks[-1][0], *stocks[-1][1]]) == sorted(under)
        assert stocks[0] == stocks[1]
        drawn.add(stocks[0][0])
    assert len(drawn) > 2


@pytest.mark.parametrize(
    ("preset", "discard", "penalised", "discard_after"),
    [
        # CL-5: the wrong card stays on top; the penalty card comes from the reshuffled rest
        ("classic", ["2C", "3D"], {0: {"2C", "3D", "5C"}, 1: {"9D"}}, ["QS"]),
        # ... even the card the window was about, when it is all there is under the queen
        ("classic", [], {0: {"5C"}, 1: {"9D"}}, ["QS"]),
        # PG-4: the card goes back; one penalty card from a reshuffle, the second none
        ("pagat", ["2C"], {0: {"QS"}, 1: {"9D"}, 4: {"2C"}}, ["5C"]),
        # PG-4 with only the top card left: no penalty card at all
        ("pagat", [], {0: {"QS"}, 1: {"9D"}}, ["5C"]),
    ],
)
def test_ca4_penalty_cards_come_from_a_reshuffle_or_not_at_all(
    preset, discard, penalised, discard_after
):
    """CA-4 with CL-5 and PG-4: a wrong snap on the stock's last card."""
    state = table(2, preset=preset, layouts=[["KH"], ["QS", "9D"]], stock=["5C"],
                  discard=discard)  # fmt: skip
    draw_and_discard(state, 0)  # 5C, the last stock card
    answer_all(state, {1: snap(0)})  # QS on 5C: wrong
    got = layout(state, 1)
    assert set(got) == set(penalised)
    assert all(got[slot] in allowed for slot, allowed in penalised.items())
    assert names(state.discard) == discard_after


@pytest.mark.parametrize(("source", "knowers"), [("draw", {0}), ("take_discard", {0, 1, 2})])
def test_ca5_who_knows_the_card_swapped_in(source, knowers):
    """CA-5 and the legal view: a card drawn from the stock is seen by its drawer only, so
    only they know it once swapped in; a card taken from the face-up discard is known to
    all where it goes.  The old card lands face up on the discard."""
    state = table(3, layouts=[["5H", "9S"], ["KS"], ["2D"]], stock=["JC"], discard=["AC", "4C"])
    state.known[0][0][1] = "9S"
    act(state, 0, {"type": source})
    act(state, 0, {"type": "swap", "slot": 1})
    new = "JC" if source == "draw" else "4C"  # the top of the discard
    for seat in range(3):
        assert shown(state, seat, 0) == {0: None, 1: new if seat in knowers else None}
    assert names(state.discard) == (["AC", "4C", "9S"] if source == "draw" else ["AC", "9S"])


@pytest.mark.parametrize("source", ["draw", "take_discard"])
def test_ca8_a_card_swapped_out_opens_a_window_on_itself(source):
    """CA-8: the old card a swap puts face up on the discard opens a snap window."""
    state = table(2, layouts=[["7H", "2S"], ["7S"]], stock=["QC"], discard=["QD"])
    act(state, 0, {"type": source})
    act(state, 0, {"type": "swap", "slot": 0})
    assert kinds(state) == [(1, "snap"), (0, "snap")]
    answer_all(state, {1: snap(0)})
    assert layout(state, 1) == {} and names(state.discard)[-2:] == ["7H", "7S"]


@pytest.mark.parametrize(
    ("top", "thrown", "right"),
    [
        ("JC", "JS", True),
        ("10C", "10D", True),
        ("KC", "KD", True),
        ("JC", "10S", False),  # same value, another rank
        ("JC", "QS", False),
        ("QH", "KH", False),  # same suit
        ("AC", "2C", False),
        ("6D", "9D", False),
    ],
)
def test_ca8_the_engine_checks_the_rank(top, thrown, right):
    """CA-8: a throw is right when its rank is the top card's rank, whatever the suit or
    the value."""
    state = table(3, layouts=[["3H"], [thrown, "2H"], []], stock=["7S", top])
    draw_and_discard(state, 0)
    assert kinds(state) == [(1, "snap"), (0, "snap")]  # seat 2 has no card to throw
    answer_all(state, {1: snap(0)})
    assert snaps_in(state)[-1]["correct"] is right
    assert names(state.discard) == [top, thrown]
    assert layout(state, 1) == ({1: "2H"} if right else {0: "7S", 1: "2H"})


def test_ca8_only_seats_with_a_card_are_asked_and_no_window_without_any():
    """CA-8: each player with at least one layout card may throw; with none anywhere no
    window opens and the turn goes on to the call."""
    state = table(4, layouts=[["5H"], [], ["KS"], ["2D"]], stock=["9C"])
    draw_and_discard(state, 0)
    assert kinds(state) == [(2, "snap"), (3, "snap"), (0, "snap")]
    state = table(3, layouts=[[], [], []], stock=["9C"])
    draw_and_discard(state, 0)
    assert kinds(state) == [(0, "call")]


def test_ca9_priority_at_the_largest_table():
    """CA-9 with 8 players: clockwise from the seat after the top card's owner, the owner
    last; the first throw in that order is kept, and the thrower owns the next window."""
    row = ["9H", "KC", "KD", "9S", "KH", "KS", "2D", "9D"]
    state = table(8, layouts=[[c] for c in row], stock=["9C"], player=5)
    draw_and_discard(state, 5)
    assert asked(state) == [6, 7, 0, 1, 2, 3, 4, 5]
    answer_all(state, {0: snap(0), 3: snap(0), 7: snap(0)})
    assert layout(state, 7) == {} and layout(state, 0) == {0: "9H"}
    assert asked(state) == [0, 1, 2, 3, 4, 5, 6]  # seat 7's card on top; it has none left
    answer_all(state, {3: snap(0), 0: snap(0)})
    assert layout(state, 0) == {} and layout(state, 3) == {0: "9S"}
    assert asked(state) == [1, 2, 3, 4, 5, 6]  # seats 0 and 7 have no card left


@pytest.mark.parametrize(
    ("players", "turns"),
    [(2, [(0, 1), (1, 0), (0, 1)]), (3, [(0, 1), (1, 2), (2, 0), (0, 1)]), (8, [(0, 1), (1, 2)])],
)
def test_ca11_the_dealer_moves_one_seat_each_round(players, turns):
    """CA-11: the seat after the dealer starts; the dealer moves on one seat a round."""
    state = GAME.new_state(players, 2, {"rounds": 9})
    for dealer, starter in turns:
        assert (state.dealer, state.player) == (dealer, starter)
        view = GAME.view(state, 0)
        assert (view["dealer"], view["to_move"], view["turn"]) == (dealer, starter, 1)
        GAME._end_round(state)


def test_cl1_every_round_starts_with_the_bottom_row_seen_again():
    """CL-1 each round: what a seat knew of the last deal is gone; it sees its slots 2
    and 3 of the new one."""
    state = GAME.new_state(3, 6)
    state.known[0][1][0] = "AS"  # as if seat 0 had seen a card of seat 1
    GAME._end_round(state)
    assert state.round == 2
    for seat in range(3):
        for owner in range(3):
            mine = {s: cards.name(c) for s, c in state.layouts[owner].items() if s in (2, 3)}
            assert shown(state, seat, owner) == {
                s: mine.get(s) if owner == seat else None for s in (0, 1, 2, 3)
            }


# -- CA-7 calling: the last turns, the cap, a new round --------------------------------------


@pytest.mark.parametrize(
    ("players", "call", "player", "callers", "asked_seats", "last_turns"),
    [
        (2, "end_of_turn", 0, [0], [0], [1]),
        (2, "end_of_turn", 1, [1], [1], [0]),
        (3, "end_of_turn", 2, [2], [2], [0, 1]),
        (8, "end_of_turn", 5, [5], [5], [6, 7, 0, 1, 2, 3, 4]),
        (4, "any_time", 0, [2], [0, 1, 2, 3], [1, 3, 0]),
        (4, "any_time", 3, [3], [3, 0, 1, 2], [0, 1, 2]),
        # several seats call at once: the seat whose turn ended first, then clockwise
        (3, "any_time", 1, [0, 2], [1, 2, 0], [0, 1]),
        (3, "any_time", 1, [0, 1], [1, 2, 0], [2, 0]),
    ],
)
def test_ca7_who_may_call_and_the_last_turns(
    players, call, player, callers, asked_seats, last_turns
):
    """CA-7: the call comes at the end of a turn (the player's own with `end_of_turn`,
    anyone's with `any_time`); then every other player plays exactly one more turn, in
    order, and the round ends without the caller playing again.  No call is asked once
    one is made."""
    state = table(players, layouts=[[] for _ in range(players)], call=call, player=player,
                  stock=[r + "C" for r in cards.RANKS])  # fmt: skip
    draw_and_discard(state, player)
    assert asked(state) == asked_seats and {k for _, k in kinds(state)} == {"call"}
    answer_all(state, {seat: CALL for seat in callers})
    played = []
    for _ in range(players):  # bounded: a round that never ends fails, it does not hang
        if state.round_results:
            break
        assert kinds(state) == [(state.player, "turn")]
        played.append(state.player)
        draw_and_discard(state, state.player)
    assert played == last_turns and state.round_results
    assert state.round_results[0]["caller"] == next(s for s in asked_seats if s in callers)


def test_ca7_ruling_a_round_nobody_calls_ends_after_max_turns():
    """CA-7 ruling (option `max_turns`): a round nobody calls ends once that many turns
    were played, not one sooner or later."""
    state = table(2, layouts=[[], []], stock=[r + "C" for r in cards.RANKS], max_turns=3)
    assert state.turns == 1
    for seat in (0, 1, 0):
        assert not state.round_results and state.player == seat
        draw_and_discard(state, seat)
        answer_all(state, {})  # no call
    assert len(state.round_results) == 1 and state.round_results[0]["caller"] is None


def test_ca7_the_turn_cap_does_not_cut_the_last_turns():
    """CA-7: a call made on the capped turn still gives every other player a last turn."""
    state = table(3, layouts=[[], [], []], stock=[r + "C" for r in cards.RANKS], max_turns=2)
    draw_and_discard(state, 0)
    answer_all(state, {})
    draw_and_discard(state, 1)  # turn 2, the cap
    answer_all(state, {1: CALL})
    for seat in (2, 0):
        assert not state.round_results and state.player == seat
        draw_and_discard(state, seat)
    assert state.round_results[0]["caller"] == 1


def test_ca7_a_new_round_starts_with_no_call_and_its_own_turn_count():
    """CA-7: the call is once per round: the next round may be called again, and its
    turns (and the turn cap) count from its own first turn."""
    state = table(2, layouts=[[], []], stock=[r + "C" for r in cards.RANKS])
    draw_and_discard(state, 0)
    answer_all(state, {0: CALL})
    draw_and_discard(state, 1)
    assert state.round == 2
    view = GAME.view(state, state.player)
    assert view["called_by"] is None and view["turn"] == 1
    act(state, state.player, DRAW)
    act(state, state.player, DISCARD)
    pass_windows_until_call(state)
    assert kinds(state) == [(state.player, "call")]


# -- CL-2 / CL-3 the 8 at its edges ----------------------------------------------------------


def test_cl2_an_8_drawn_with_no_layout_card_has_nothing_to_peek_and_passes_on():
    """CL-2 with CA-6: a drawer with no layout card cannot peek; the unused 8 passes on to
    the next player (CL-3)."""
    state = table(2, layouts=[[], ["5S", "QD"]], stock=["2C", "8C"])
    act(state, 0, DRAW)
    assert legal(state, 0) == [DISCARD]
    act(state, 0, DISCARD)
    pass_windows(state)
    assert state.player == 1 and {"type": "peek", "slot": 1} in legal(state, 1)


def test_cl2_cl3_no_power_when_the_option_is_off():
    """CL-2, CL-3: `eight_power` off: a stock-drawn 8 is a card like any other."""
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C", "8C"], eight_power=False,
                  passed_on_eight=False)  # fmt: skip
    act(state, 0, DRAW)
    assert legal(state, 0) == [SWAP0, DISCARD]
    act(state, 0, DISCARD)
    pass_windows(state)
    assert legal(state, 1) == [DRAW, {"type": "take_discard"}]


def test_cl2_an_8_drawn_again_after_a_reshuffle_has_its_power_again():
    """CL-2: every 8 just drawn from the stock has the power, even one whose power was
    used earlier in the round and that came back through a reshuffle (CA-4); classic
    tracks no power per physical card (unlike PG-3)."""
    state = table(2, layouts=[["5H"], ["5S"]], stock=["8C"], discard=["2C"])
    act(state, 0, DRAW)  # 8C
    act(state, 0, {"type": "peek", "slot": 0})
    pass_windows(state)
    act(state, 1, DRAW)  # reshuffle: 2C, the 8 stays on top
    act(state, 1, DISCARD)
    pass_windows(state)
    act(state, 0, DRAW)  # reshuffle: the 8 again
    assert cards.name(state.hand) == "8C"
    assert {"type": "peek", "slot": 0} in legal(state, 0)


def test_cl3_the_offer_follows_the_option():
    """CL-3: `passed_on_eight` off: the drawer keeps the 8's power, nobody inherits it."""
    state = table(2, layouts=[["5H"], ["5S", "QD"]], stock=["2C", "8C"], passed_on_eight=False)
    act(state, 0, DRAW)
    assert {"type": "peek", "slot": 0} in legal(state, 0)  # CL-2 still holds
    act(state, 0, DISCARD)
    pass_windows(state)
    assert legal(state, 1) == [DRAW, {"type": "take_discard"}]
    assert "eight_offer" not in GAME.view(state, 1)


def test_cl3_a_wrong_snap_on_the_8_also_covers_it():
    """CL-3: a wrong throw stays on the discard (CL-5) and covers the 8: the offer lapses."""
    state = table(3, layouts=[["5H"], ["5S"], ["QD", "2H"]], stock=["4C", "2C", "8C"])
    draw_and_discard(state, 0)
    answer_all(state, {2: snap(0)})  # QD on the 8: wrong
    pass_windows(state)
    assert state.player == 1 and names(state.discard) == ["8C", "QD"]
    assert legal(state, 1) == [DRAW, {"type": "take_discard"}]


def test_cl3_only_a_stock_drawn_8_is_passed_on_and_only_to_the_next_player():
    """CL-3: an 8 swapped out of a layout has no power to pass on; an unused stock-drawn 8
    goes to the next player only, and only while it is that player's turn."""
    state = table(3, layouts=[["8H"], ["5S"], ["2D"]], stock=["KC"])
    act(state, 0, DRAW)
    act(state, 0, SWAP0)  # the 8 leaves the layout
    pass_windows(state)
    assert legal(state, 1) == [DRAW, {"type": "take_discard"}]
    state = table(3, layouts=[["5H"], ["5S"], ["2D"]], stock=["3C", "2C", "8C"])
    draw_and_discard(state, 0)
    pass_windows(state)
    assert GAME.view(state, 1)["eight_offer"] is True
    assert "eight_offer" not in GAME.view(state, 0) | GAME.view(state, 2)
    draw_and_discard(state, 1)  # seat 1 lets it go
    pass_windows(state)
    assert state.player == 2 and legal(state, 2) == [DRAW, {"type": "take_discard"}]


def test_cl3_no_offer_to_a_next_player_with_no_card():
    """CL-3 with CA-6: a next player with no layout card has nothing to peek at."""
    state = table(2, layouts=[["5H"], []], stock=["2C", "8C"])
    draw_and_discard(state, 0)
    pass_windows(state)
    assert legal(state, 1) == [DRAW] and "eight_offer" not in GAME.view(state, 1)


# -- CL-4 / CL-5 at their edges ---------------------------------------------------------------


def test_cl4_a_player_may_throw_again_in_the_window_of_their_own_card():
    """CL-4: the same player may throw several cards of the rank, one per window; in the
    window of their own thrown card they come last."""
    state = table(3, layouts=[["KH"], ["5S", "5D"], ["QS"]], stock=["5C"])
    draw_and_discard(state, 0)
    answer_all(state, {1: snap(0)})
    assert asked(state) == [2, 0, 1]
    answer_all(state, {1: snap(1)})
    assert layout(state, 1) == {} and names(state.discard) == ["5C", "5S", "5D"]


@pytest.mark.parametrize(
    ("penalty_cards", "layout_after", "locked"),
    [
        (0, {1: "9D"}, []),  # no penalty card: the thrown card's slot stays empty
        (1, {0: "4H", 1: "9D"}, [0]),
        (2, {0: "4H", 1: "9D", 4: "3H"}, [0, 4]),
        (3, {0: "4H", 1: "9D", 4: "3H", 5: "2H"}, [0, 4, 5]),
    ],
)
def test_cl5_penalty_cards_and_their_slots(penalty_cards, layout_after, locked):
    """CL-5 option `penalty_cards`: the first in the emptied slot, the others in new slots,
    every one unseen and locked for its owner (`locked_slots`)."""
    state = table(2, layouts=[["KH"], ["QS", "9D"]], stock=["2H", "3H", "4H", "5C"],
                  penalty_cards=penalty_cards)  # fmt: skip
    state.known[1][1] = {0: "QS", 1: "9D"}
    draw_and_discard(state, 0)
    answer_all(state, {1: snap(0)})
    assert layout(state, 1) == layout_after
    assert shown(state, 1, 1) == {s: "9D" if s == 1 else None for s in layout_after}
    assert kinds(state) == [(0, "snap"), (1, "snap")]  # the queen's window, seat 1's card
    assert GAME.view(state, 1)["locked_slots"] == locked
    assert legal(state, 1) == [{"type": "pass"}] + [
        snap(s) for s in layout_after if s not in locked
    ]


@pytest.mark.parametrize(("card_of_seat_2", "right"), [("QD", True), ("5D", False)])
def test_cl5_the_wrong_card_opens_a_window_on_its_own_rank(card_of_seat_2, right):
    """CL-5: the wrongly thrown card stays on top and a new window opens on ITS rank: a
    queen may follow a queen thrown wrongly on a 5, a 5 may not."""
    state = table(3, layouts=[["KH"], ["QS", "9D"], [card_of_seat_2, "2S"]],
                  stock=["3H", "4H", "5C"])  # fmt: skip
    draw_and_discard(state, 0)
    answer_all(state, {1: snap(0)})
    assert asked(state) == [2, 0, 1]  # the thrower's card is on top: it comes last
    answer_all(state, {2: snap(0)})
    assert snaps_in(state)[-1]["correct"] is right
    assert names(state.discard) == ["5C", "QS", card_of_seat_2]


def test_cl5_ruling_penalty_cards_are_locked_in_every_preset():
    """CL-5 ruling: PG-4's penalty cards wait for their owner's next turn too."""
    state = table(3, preset="pagat", layouts=[["KH"], ["2D"], ["QS", "9D"]],
                  stock=["7C", "7D", "3H", "4H", "5C"])  # fmt: skip
    draw_and_discard(state, 0)  # 5C
    answer_all(state, {2: snap(0)})  # QS: wrong, back to its slot, 4H and 3H come in
    assert layout(state, 2) == {0: "QS", 1: "9D", 4: "4H", 5: "3H"}
    pass_windows(state)
    draw_and_discard(state, 1)  # 7D
    assert legal(state, 2) == [{"type": "pass"}, snap(0), snap(1)]
    assert GAME.view(state, 2)["locked_slots"] == [4, 5]
    pass_windows(state)
    act(state, 2, DRAW)  # 7C: seat 2's own turn has begun
    act(state, 2, DISCARD)
    assert legal(state, 2) == [{"type": "pass"}] + [snap(s) for s in (0, 1, 4, 5)]


def test_cl5_a_new_round_locks_nothing():
    """CL-5: the lock belongs to a round's penalty cards; a new deal starts unlocked."""
    state = GAME.new_state(3, 12)
    state.locked = {(seat, c) for seat in range(3) for c in range(52)}
    GAME._end_round(state)
    player = state.player
    act(state, player, DRAW)
    act(state, player, DISCARD)
    for seat in range(3):
        assert legal(state, seat)[1:] == [snap(s) for s in state.layouts[seat]]


@pytest.mark.parametrize(
    ("preset", "options", "layout_after", "discard", "asked_next"),
    [
        ("classic", {}, {0: "4H", 1: "9D"}, ["5C", "QS"], [(0, "snap"), (1, "snap")]),
        ("classic", {"wrong_snap": "returns"}, {0: "QS", 1: "9D", 4: "4H"}, ["5C"],
         [(0, "call")]),
        ("classic", {"penalty_cards": 2, "wrong_snap": "returns", "snap_after_miss": True},
         {0: "QS", 1: "9D", 4: "4H", 5: "3H"}, ["5C"], [(0, "snap")]),
        ("pagat", {}, {0: "QS", 1: "9D", 4: "4H", 5: "3H"}, ["5C"], [(0, "call")]),
        # CA-8: with snap_chain off a thrown card opens no window, a wrong one either
        ("pagat", {"wrong_snap": "stays"}, {0: "4H", 1: "9D", 4: "3H"}, ["5C", "QS"],
         [(0, "call")]),
        ("pagat", {"wrong_snap": "stays", "snap_chain": True}, {0: "4H", 1: "9D", 4: "3H"},
         ["5C", "QS"], [(0, "snap"), (1, "snap")]),
    ],
)  # fmt: skip
def test_cl5_pg4_wrong_snap_options_in_either_preset(
    preset, options, layout_after, discard, asked_next
):
    """CL-5 / PG-4 / CA-8, options `wrong_snap`, `penalty_cards`, `snap_after_miss` and
    `snap_chain` across the presets: where the wrong card goes, where the penalty cards go,
    and whether a window follows (on the wrong card when it stays and snap_chain is on, on
    the same card when it returns and snap_after_miss is on, else none)."""
    state = table(2, preset=preset, layouts=[["KH"], ["QS", "9D"]],
                  stock=["2H", "3H", "4H", "5C"], **options)  # fmt: skip
    draw_and_discard(state, 0)
    answer_all(state, {1: snap(0)})
    assert layout(state, 1) == layout_after and names(state.discard) == discard
    assert kinds(state) == asked_next


@pytest.mark.parametrize(
    ("preset", "option", "first", "seen"),
    [("classic", "choose_two", "initial_peek", []), ("pagat", "bottom_row", "turn", [2, 3])],
)
def test_cl1_pg1_the_initial_peek_option_in_either_preset(preset, option, first, seen):
    """CL-1 / PG-1 option `initial_peek`: either way of seeing two cards in either preset."""
    state = GAME.new_state(3, 4, {"preset": preset, "initial_peek": option})
    assert {kind for _, kind in kinds(state)} == {first}
    for seat in range(3):
        known = [s for s, c in shown(state, seat, seat).items() if c is not None]
        assert known == seen


# -- CL-7 / CL-8 scoring edges ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "winners", "cactus"),
    [
        ([["2H", "3H"], ["AS", "4D"], ["QS"]], [0, 1], [True, True, False]),  # 5 and 5
        ([[], ["KS"], ["AS"]], [0, 1], [True, True, True]),  # two cactus royal
        ([["6H"], ["3S", "3D"], ["KS", "10D"]], [], [False, False, False]),  # 6, 6, 10
        ([["KH", "KD", "KS", "KC"], ["5S"], ["JD"]], [0], [True, True, False]),
    ],
)
def test_cl7_round_result_at_the_boundaries(hands, winners, cactus):
    """CL-7: cactus is a total of 5 or less; the lowest such total wins, ties share."""
    state = table(3, layouts=hands)
    GAME._end_round(state)
    assert state.round_results[0]["winners"] == winners
    assert state.round_results[0]["cactus"] == cactus


def test_cl8_wins_rounds_won_come_before_the_summed_totals():
    """CL-8 `wins`: more rounds won ranks higher even with a larger sum of totals; the
    match is exactly `rounds` rounds long."""
    state = table(3, rounds=3)
    finish_round(state, [["2H", "3H"], ["6S"], ["QS", "QD"]])  # seat 0 wins with 5
    finish_round(state, [["2D", "3D"], ["6D"], ["QH", "QC"]])  # seat 0 again
    assert GAME.outcome(state) is None
    finish_round(state, [["QH", "QS"], ["KS"], ["JD", "JH"]])  # seat 1 with 0
    outcome = GAME.outcome(state)
    assert state.wins == [2, 1, 0] and state.sum_totals == [30, 12, 60]
    assert outcome.ranks == [1, 2, 3] and outcome.scores == [2, 1, 0]


@pytest.mark.parametrize(("values", "queen"), [({}, 10), ({"Q": 12}, 12)])
def test_cl8_tas_de_merde_lower_tally_ranks_higher(values, queen):
    """CL-8 `tas_de_merde`: the card drawn adds its value (CA-2, option `values`); the
    lowest tally wins."""
    state = table(3, scoring="tas_de_merde", rounds=1, values=values)
    draws = iter([cards.NAMES.index("QH"), cards.NAMES.index("3S")])
    state.rng.randrange = lambda n: next(draws)
    finish_round(state, [["AH"], ["9S"], ["9D"]])  # seat 0 has cactus and draws nothing
    outcome = GAME.outcome(state)
    assert state.tally == [0, queen, 3]
    assert outcome.ranks == [1, 3, 2] and outcome.scores == [0, queen, 3]


@pytest.mark.parametrize(
    ("hands", "caller", "points"),
    [
        ([["KH"], ["AS", "2S"], ["QS"]], None, [2, 1, 0]),  # royal 2, cactus 1, none 0
        ([["QH"], ["AS", "2S"], ["QS"]], 0, [-1, 1, 0]),  # a wrong call
        ([["KH"], ["KS"], ["6S"]], 2, [2, 2, -1]),
        ([["KH"], ["KS"], ["5S"]], 2, [2, 2, 1]),  # a caller at 5 is right
        ([["KH"], ["9S"], ["9D"]], 0, [2, 0, 0]),  # a royal caller scores 2
        ([["9H"], ["9S"], ["9D"]], None, [0, 0, 0]),
    ],
)
def test_cl8_maximus_points_of_a_round(hands, caller, points):
    """CL-8 `maximus`: no cactus 0, cactus 1, cactus royal 2, a wrong call -1."""
    state = table(3, scoring="maximus")
    state.caller = caller
    finish_round(state, hands)
    assert state.round_results[-1]["points"] == points and state.points == points


def test_cl8_maximus_target_and_the_round_cap():
    """CL-8 `maximus`: `maximus_target` sets the points that win; `max_rounds` ends the
    match after exactly that many rounds, ranked by points."""
    state = table(3, scoring="maximus", maximus_target=2)
    finish_round(state, [["AH"], ["9S"], ["9D"]])
    assert GAME.outcome(state) is None
    finish_round(state, [["AH"], ["9S"], ["9D"]])
    assert GAME.outcome(state).ranks == [1, 2, 2]
    state = table(3, scoring="maximus", max_rounds=2)
    finish_round(state, [["AH"], ["9S"], ["KD"]])
    assert GAME.outcome(state) is None
    finish_round(state, [["AH"], ["9S"], ["9D"]])
    outcome = GAME.outcome(state)
    assert outcome.scores == [2, 0, 2] and outcome.ranks == [1, 3, 1]


@pytest.mark.parametrize(
    ("caller", "caller_cards", "dealer", "starter"),
    [
        (3, ["AH"], 3, 0),  # the grand cactus at the last seat: seat 0 starts
        (1, ["QH"], 1, 2),  # a wrong call: the dealer moves on as usual (CA-11)
        (None, ["QH"], 1, 2),  # nobody called
    ],
)
def test_cl8_maximus_who_starts_the_next_round(caller, caller_cards, dealer, starter):
    """CL-8 `maximus`: the seat after the first correct caller starts the next round."""
    state = table(4, scoring="maximus")
    state.caller = caller
    hands = [["QS"], ["QD"], ["QC"], ["JH"]]
    if caller is not None:
        hands[caller] = caller_cards
    finish_round(state, hands)
    assert (state.round, state.dealer, state.player) == (2, dealer, starter)


# -- PG-3 powers at their edges ---------------------------------------------------------------


def test_pg3_a_power_card_swapped_out_of_the_layout_has_its_power():
    """PG-3: any card the player discards in their turn, the one a swap puts on the discard
    too, gives its power."""
    state = table(2, preset="pagat", layouts=[["9H", "5H"], ["KS", "2D"]], stock=["4C"])
    act(state, 0, DRAW)
    act(state, 0, SWAP0)
    pass_windows_until_power(state)
    assert GAME.view(state, 0)["power"] == "peek_other"


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        ("7", [("peek", s) for s in (0, 1)]),
        ("9", [("peek_other", q, s) for q, s in ((2, 0), (0, 0), (0, 1))]),
        ("Q", [("blind_swap", s, q, t) for s in (0, 1) for q, t in ((2, 0), (0, 0), (0, 1))]),
    ],
)
def test_pg3_the_targets_of_each_power(rank, expected):
    """PG-3: peek at one's own slots; peek_other at any slot of any other player, never
    one's own; blind_swap one own slot with any slot of another player."""
    state = table(3, preset="pagat", layouts=[["5H", "KD"], ["KS", "2D"], ["3C"]],
                  stock=[rank + "C"], player=1)  # fmt: skip
    draw_and_discard(state, 1)
    pass_windows_until_power(state)
    got = [tuple(a.values())[1:] for a in legal(state, 1)]
    assert got[0] == () and legal(state, 1)[0] == SKIP
    assert sorted(got[1:]) == sorted(tuple(e[1:]) for e in expected)
    assert {a["type"] for a in legal(state, 1)[1:]} == {expected[0][0]}


@pytest.mark.parametrize(
    ("rank", "layouts"),
    [
        ("7", [[], ["KS"], []]),  # peek: no own card
        ("9", [["5H"], [], []]),  # peek_other: no other card
        ("Q", [[], ["KS"], []]),  # blind_swap: no own card
        ("Q", [["5H"], [], []]),  # blind_swap: no other card
    ],
)
def test_pg3_no_power_when_there_is_nothing_to_use_it_on(rank, layouts):
    """PG-3 with CA-6: a power that has no slot to act on is not offered."""
    state = table(3, preset="pagat", layouts=layouts, stock=[rank + "C"])
    draw_and_discard(state, 0)
    while state.phase == "snap":
        answer_all(state, {})
    assert kinds(state) == [(0, "call")]


def test_pg3_a_card_thrown_by_a_snap_grants_no_power_even_unused():
    """PG-3: only the card discarded in the turn gives a power: a right throw of an
    unused power card on top of it gives none."""
    state = table(3, preset="pagat", layouts=[["5H"], ["7S", "2D"], ["3C"]], stock=["7C"])
    state.powers_used.add(card("7C"))
    draw_and_discard(state, 0)
    answer_all(state, {1: snap(0)})
    assert names(state.discard) == ["7C", "7S"]
    assert kinds(state) == [(0, "call")]


def test_pg3_ruling_a_snap_on_the_discarded_card_leaves_its_power():
    """PG-3 ruling: the power belongs to the card the player discarded; a throw on it in
    the snap window does not take it away (the power comes after the window)."""
    state = table(3, preset="pagat", layouts=[["5H"], ["9S", "2D"], ["3C"]], stock=["9C"])
    draw_and_discard(state, 0)
    answer_all(state, {1: snap(0)})
    assert kinds(state) == [(0, "power")]
    assert {(a["player"], a["slot"]) for a in legal(state, 0)[1:]} == {(1, 1), (2, 0)}


def test_pg3_a_skipped_power_is_not_used():
    """PG-3: a power is used only by using it; a skipped card keeps its power for the next
    time it is discarded in a turn."""
    state = table(2, preset="pagat", layouts=[["5H", "9S"], ["KS", "2D"]],
                  stock=["4C", "2C", "7C"])  # fmt: skip
    draw_and_discard(state, 0)  # 7C
    pass_windows_until_power(state)
    act(state, 0, SKIP)
    pass_windows(state)
    act(state, 1, {"type": "take_discard"})  # the 7 goes into seat 1's slot 0
    act(state, 1, SWAP0)
    pass_windows(state)
    draw_and_discard(state, 0)  # 2C
    pass_windows(state)
    act(state, 1, DRAW)  # 4C
    act(state, 1, SWAP0)  # the 7 is discarded in a turn again
    pass_windows_until_power(state)
    assert GAME.view(state, 1)["power"] == "peek"


def test_pg3_powers_are_fresh_each_round():
    """PG-3: the power of a card is tracked for the round only."""
    state = GAME.new_state(2, 8, {"preset": "pagat"})
    state.powers_used = set(range(52))
    GAME._end_round(state)
    answer_all(state, {})  # the initial peeks
    power_card = next(c for c in state.stock if cards.rank(c) in ("6", "7", "8"))
    state.stock.remove(power_card)
    state.stock.append(power_card)
    draw_and_discard(state, state.player)
    pass_windows_until_power(state)


def test_pg3_powers_in_the_classic_preset():
    """PG-3 option `powers` with the classic preset: the power comes after the windows."""
    state = table(2, layouts=[["5H"], ["KS"]], stock=["9C"], powers={"9": "peek_other"})
    draw_and_discard(state, 0)
    pass_windows_until_power(state)
    act(state, 0, {"type": "peek_other", "player": 1, "slot": 0})
    assert shown(state, 0, 1) == {0: "KS"} and shown(state, 1, 1) == {0: None}


# -- PG-4 / PG-5 / PG-6 at their edges ----------------------------------------------------------


def test_pg4_snap_after_miss_keeps_the_card_owners_priority():
    """PG-4 `snap_after_miss`: after a miss the same card's window asks the others again,
    in the priority of the card's owner; a right throw then closes it (no chain)."""
    state = table(4, preset="pagat", layouts=[["5H"], ["QS"], ["JS"], ["5D"]],
                  stock=["2H", "3H", "4H", "6H", "5C"], snap_after_miss=True)  # fmt: skip
    draw_and_discard(state, 0)
    assert asked(state) == [1, 2, 3, 0]
    answer_all(state, {1: snap(0)})  # wrong
    assert asked(state) == [2, 3, 0]
    answer_all(state, {2: snap(0)})  # wrong again
    assert asked(state) == [3, 0]
    answer_all(state, {3: snap(0), 0: snap(0)})  # the first in priority is right
    assert names(state.discard) == ["5C", "5D"] and layout(state, 0) == {0: "5H"}
    assert state.phase == "call"


@pytest.mark.parametrize(
    ("totals", "caller", "expected"),
    [
        ([0, 0], 0, [10, 0]),  # two players: a tie at 0 is not strictly lowest
        ([0, 5], 1, [0, 15]),
        ([4, 5, 5, 9], 0, [0, 5, 5, 9]),
        ([9, 2, 2], 1, [9, 12, 0]),
        ([6, 6, 6], 2, [0, 0, 16]),
    ],
)
def test_pg5_penalty_scoring_edges(totals, caller, expected):
    """PG-5 at its boundaries, played out to the round's result."""
    state = table(len(totals), preset="pagat")
    state.caller = caller
    hands = [_cards_worth(t, suit) for t, suit in zip(totals, "HSDC", strict=False)]
    finish_round(state, hands)
    assert state.round_results[-1]["totals"] == totals
    assert state.round_results[-1]["penalties"] == expected == state.penalty


def _cards_worth(total, suit):
    """Layout cards of one suit adding up to ``total`` (at most 39): tens, then the rest."""
    tens, rest = divmod(total, 10)
    layout = [rank + suit for rank in ("Q", "J", "10")[:tens]]
    return layout + ([("A" if rest == 1 else str(rest)) + suit] if rest else [])


@pytest.mark.parametrize(
    ("penalty", "totals", "over"),
    [([0, 0], [29, 0], False), ([0, 0], [30, 0], True), ([25, 29], [0, 0], False)],
)
def test_pg6_the_target_option_is_reached_not_passed(penalty, totals, over):
    """PG-6 option `target`: the match ends when a cumulative penalty reaches it."""
    state = table(2, preset="pagat", target=30)
    state.penalty = list(penalty)
    finish_round(state, [_cards_worth(t, s) for t, s in zip(totals, "HS", strict=True)])
    assert (GAME.outcome(state) is not None) is over


def test_pg6_the_round_cap_and_the_lowest_cumulative_penalty():
    """PG-6: `max_rounds` ends the match after exactly that many deals; the lowest
    cumulative penalty ranks first, ties sharing."""
    state = table(3, preset="pagat", max_rounds=2)
    finish_round(state, [["9H"], ["9S"], ["2D"]])
    assert GAME.outcome(state) is None
    finish_round(state, [["AH"], ["AS"], ["QD"]])
    outcome = GAME.outcome(state)
    assert outcome.scores == [10, 10, 12] and outcome.ranks == [1, 1, 3]


def test_pg6_a_tie_for_the_lowest_deal_penalty_is_broken_by_the_seeded_generator():
    """PG-6: the lowest penalty of the deal starts the next one; ties by the generator."""
    starters = set()
    for seed in range(12):
        state = table(3, preset="pagat")
        state.rng.seed(seed)
        finish_round(state, [["2H"], ["QS"], ["2D"]])
        assert state.starter in (0, 2) and state.dealer == (state.starter - 1) % 3
        starters.add(state.starter)
    assert starters == {0, 2}


@pytest.mark.parametrize(
    ("scoring", "fields", "scores"),
    [
        ("wins", {"wins": [2, 1], "sum_totals": [5, 9]}, {"wins": [2, 1], "sum_totals": [5, 9]}),
        ("tas_de_merde", {"tally": [7, 3]}, {"tally": [7, 3]}),
        ("maximus", {"points": [3, -1]}, {"points": [3, -1]}),
        ("penalty", {"penalty": [40, 12]}, {"penalty": [40, 12]}),
    ],
)
def test_view_public_counters_and_the_match_score(scoring, fields, scores):
    """The legal view's public part: the stock's size, the discard (top last), the round,
    the caller, the values (CA-2) and the match score in the shape of `scoring` (CL-8,
    PG-6)."""
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C", "3C", "4C"], discard=["KC", "JD"],
                  scoring=scoring, values={"K": -1})  # fmt: skip
    for name, value in fields.items():
        setattr(state, name, value)
    state.caller = 1
    assert (state.dealer, state.starter, state.player) == (0, 1, 0)
    for seat in (0, 1):
        view = GAME.view(state, seat)
        assert (view["game"], view["seat"], view["players"], view["round"]) == (
            "cactus", seat, 2, 1)  # fmt: skip
        assert (view["dealer"], view["to_move"], view["phase"]) == (0, 0, "turn")
        assert view["decision"] == ("turn" if seat == 0 else None)
        assert (view["stock"], view["discard"], view["called_by"]) == (3, ["KC", "JD"], 1)
        assert view["values"]["K"] == -1 and view["values"]["Q"] == 10
        assert view["scores"] == scores


def test_pg1_after_the_initial_peeks_the_starter_plays():
    """PG-1 then CA-11 / PG-6: once every seat chose its two cards, the round's starter
    plays first: the seat after the dealer in the first deal, the lowest scorer later."""
    state = GAME.new_state(3, 8, {"preset": "pagat"})
    answer_all(state, {})
    assert kinds(state) == [(1, "turn")]
    state = table(3, preset="pagat")
    finish_round(state, [["QH", "QS"], ["AH"], ["KS"]])  # no call: 20, 1, 0
    assert state.phase == "initial_peek" and asked(state) == [0, 1, 2]
    answer_all(state, {})
    assert kinds(state) == [(2, "turn")] and state.dealer == 1


@pytest.mark.parametrize(
    ("next_round", "dealer", "starter"), [("rotate", 1, 2), ("lowest_score", 0, 1)]
)
def test_ca11_pg6_the_next_round_option_in_the_classic_preset(next_round, dealer, starter):
    """CA-11 / PG-6 option `next_round` with classic scoring: the dealer moves on, or the
    round's lowest total starts."""
    state = table(3, next_round=next_round)
    finish_round(state, [["9H"], ["2S"], ["QD"]])
    assert (state.dealer, state.player) == (dealer, starter)


@pytest.mark.parametrize(
    ("rank", "answer", "public", "private"),
    [
        ("7", {"type": "peek", "slot": 1},
         {"type": "power", "power": "power_peek", "player": 0, "slots": [1]},
         [{"type": "power_peek", "player": 0, "seen": [{"slot": 1, "card": "9S"}]}]),
        ("9", {"type": "peek_other", "player": 1, "slot": 0},
         {"type": "power", "power": "peek_other", "player": 0, "target": 1, "slot": 0},
         [{"type": "seen", "player": 1, "slot": 0, "card": "KS"}]),
        ("Q", {"type": "blind_swap", "slot": 1, "player": 1, "other_slot": 0},
         {"type": "power", "power": "blind_swap", "player": 0, "slot": 1, "target": 1,
          "other_slot": 0}, []),
    ],
)  # fmt: skip
def test_pg3_a_power_used_is_public_what_it_shows_is_not(rank, answer, public, private):
    """PG-3 and the legal view: everyone sees which power was used on which slots, only
    its user sees the card a peek shows, and a blind swap shows nobody anything."""
    state = table(2, preset="pagat", layouts=[["5H", "9S"], ["KS", "2D"]], stock=[rank + "C"])
    draw_and_discard(state, 0)
    pass_windows_until_power(state)
    mark = len(state.events)
    act(state, 0, answer)
    got = [(e.data, e.to) for e in state.events[mark:]]
    assert got == [(public, None)] + [(data, frozenset({0})) for data in private]


def test_cl2_the_8_peek_is_public_what_it_shows_is_not():
    """CL-2: the peek is public (the 8 then lands on the discard); the card seen is the
    drawer's alone."""
    state = table(2, layouts=[["5H", "9S"], ["KS"]], stock=["8C"])
    act(state, 0, DRAW)
    mark = len(state.events)
    act(state, 0, {"type": "peek", "slot": 1})
    got = [(e.data, e.to) for e in state.events[mark:]]
    assert got == [
        ({"type": "power", "power": "eight_peek", "player": 0, "slots": [1]}, None),
        ({"type": "eight_peek", "player": 0, "seen": [{"slot": 1, "card": "9S"}]},
         frozenset({0})),
        ({"type": "discard", "player": 0, "card": "8C"}, None),
    ]  # fmt: skip


# -- the legal view, complete: each seat is shown all it knows, and only that --------------------


VIEW_MATCH_STEPS = 5_000  # these matches take at most about 200 steps


def _views_match(n, seed, options):
    """A random match (answers from a generator of its own) where, after every step, each
    event is tagged for exactly the seats the leak table's rule names (public events for
    everyone), and each seat's view shows every layout card the rules let it know there
    (tests/support/leak_tables.py, which never reads the engine's bookkeeping) and no other, and
    the card in hand to its holder only."""
    state = GAME.new_state(n, seed, options)
    oracle = contract.LeakOracle(GAME, n)
    rules = oracle.table.events
    chooser = random.Random(f"views:{seed}")
    requests, answers, audited = [], None, 0
    for _ in range(VIEW_MATCH_STEPS):
        oracle.update(state, requests, answers)
        for i in range(audited, len(state.events)):
            event = state.events[i]
            rule = rules[event.data["type"]]
            audience = rule.audience and frozenset(rule.audience(event.data, state.events, i))
            assert event.to == audience, f"{event.data} is shown to {event.to}, not {audience}"
        audited = len(state.events)
        if GAME.outcome(state) is not None:
            return
        for seat in range(n):
            view = GAME.view(state, seat)
            for owner, row in enumerate(view["layouts"]):
                for place in row:
                    where = ("layout", owner, place["slot"])
                    there = oracle.truth[where]
                    knows = oracle.known[seat].get(where) == there
                    expected = state.names[there[0]] if knows else None
                    assert place["card"] == expected, f"seat {seat} at {where}, step {state.steps}"
            holds = seat == state.player and state.hand is not None
            assert view["drawn"] == (state.names[state.hand] if holds else None)
        requests = GAME.pending(state)
        answers = {r.seat: chooser.choice(r.legal_actions) for r in requests}
        GAME.apply(state, answers)
    pytest.fail(f"the match did not end within {VIEW_MATCH_STEPS} steps")


@pytest.mark.parametrize(
    "options",
    [
        {"preset": "classic", "rounds": 2},
        {"preset": "pagat", "target": 40},
        {"preset": "pagat", "snap_after_miss": True, "target": 40},
        {"preset": "classic", "call": "any_time", "penalty_cards": 2, "rounds": 2,
         "powers": {"9": "peek_other", "Q": "blind_swap", "6": "peek"}},
    ],
)  # fmt: skip
def test_views_show_exactly_what_each_seat_knows(options):
    """The legal view (CA-3, CA-5, CL-1..CL-3, CL-5, PG-1, PG-3, PG-4): a seat's view names
    each layout card it saw and that has not moved unseen since, and nothing else."""
    for seed in range(8):
        _views_match(2 + seed % 7, seed, options)


# -- the legal view ------------------------------------------------------------------------------


def test_view_a_drawn_card_is_seen_by_its_drawer_only():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["JC"])
    act(state, 0, {"type": "draw"})
    assert GAME.view(state, 0)["drawn"] == "JC"
    assert GAME.view(state, 1)["drawn"] is None
    assert "JC" not in json.dumps(GAME.view(state, 1))


def test_view_a_card_taken_from_the_discard_is_known_to_all_where_it_goes():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C"], discard=["KC"])
    act(state, 0, {"type": "take_discard"})
    act(state, 0, SWAP0)
    assert GAME.view(state, 1)["layouts"][0][0]["card"] == "KC"


def test_view_events_are_those_since_the_seat_last_answered():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C", "JC"])
    act(state, 0, {"type": "draw"})
    events = GAME.view(state, 0)["events"]
    assert events == [{"type": "draw", "player": 0, "source": "stock"},
                      {"type": "drawn", "player": 0, "card": "JC"}]  # fmt: skip
    assert {"type": "drawn", "player": 0, "card": "JC"} not in GAME.view(state, 1)["events"]


# -- views and the leak oracle over random play (the contract: tests/test_contract.py) -----------


@pytest.mark.parametrize(
    "options",
    [{"preset": "classic"}, {"preset": "pagat"}, {"preset": "pagat", "snap_after_miss": True}],
)
def test_views_reuse_layout_rows_only_while_nothing_changed(options):
    """Views keep each seat's layout rows until a layout or a seat's knowledge changes:
    after every step, every seat's view equals rows built afresh."""

    def fresh(state):
        for seat in range(state.n_players):
            assert GAME.view(state, seat)["layouts"] == GAME._layout_rows(state, seat)

    for seed in range(15):
        contract.play_random(GAME, 2 + seed % 4, seed, options, oracle=False, on_step=fresh)


def test_the_leak_oracle_catches_a_view_that_shows_other_layouts(monkeypatch):
    """The oracle must be able to fail: a view() that shows every layout card is caught."""
    honest = type(GAME).view  # patch the class: undoing an instance patch would shadow it

    def leaky(self, state, seat):
        view = honest(self, state, seat)
        view["layouts"] = [
            [{"slot": s, "card": cards.name(c)} for s, c in layout.items()]
            for layout in state.layouts
        ]
        return view

    monkeypatch.setattr(type(GAME), "view", leaky)
    with pytest.raises(contract.Leak, match="cards it may not know there"):
        contract.play_random(GAME, 3, 1, {"preset": "classic"})


def test_the_leak_oracle_catches_a_view_that_keeps_a_blind_swapped_card(monkeypatch):
    """A subtler bug: a view that still shows your old card after a blind swap moved it
    away shows the card where it no longer is... and one you never saw where it is now."""
    honest = type(GAME).view  # patch the class: undoing an instance patch would shadow it

    def leaky(self, state, seat):
        view = honest(self, state, seat)
        for row, cards_at in zip(view["layouts"], state.layouts, strict=True):
            for slot in row:
                slot["card"] = slot["card"] or cards.name(cards_at[slot["slot"]])
        return view

    monkeypatch.setattr(type(GAME), "view", leaky)
    with pytest.raises(contract.Leak, match="cards it may not know there"):
        contract.play_random(GAME, 2, 3, {"preset": "pagat"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"preset": "house"}, "no preset 'house'"),
        ({"scoring": "golf"}, "must be one of"),
        ({"rounds": "5"}, "whole number"),
        ({"rounds": 0}, "at least 1"),
        ({"powers": {"8": "peek"}}, "both give the 8 a power"),
        ({"powers": {"9": "fly"}}, "maps ranks to"),
        ({"turbo": True}, "unknown cactus option"),
        ({"passed_on_eight": True, "eight_power": False}, "needs 'eight_power'"),
    ],
)
def test_bad_options_are_refused_with_a_message(options, message):
    with pytest.raises(OptionsError, match=message):
        GAME.new_state(3, 1, options)


def test_illegal_action_names_the_seat():
    state = table(2, layouts=[["5H"], ["5S"]], stock=["2C"])
    with pytest.raises(IllegalAction) as err:
        act(state, 0, {"type": "take_discard"})
    assert err.value.seat == 0


@pytest.mark.parametrize(("preset", "floor"), [("classic", 0.55), ("pagat", 0.8)])
def test_the_heuristic_beats_random_clearly(preset, floor):
    """200 four-player matches, the heuristic against three random policies, seats
    rotated; chance would give it a quarter of the wins.  The same figures are printed
    by `arena play cactus --preset P --bots heuristic,random,random,random --matches 200
    --seed 1` (classic 74%, pagat 95%)."""
    referee = Referee()
    wins = 0
    for m in range(200):
        seed = 1 + m
        names = ["heuristic", "random", "random", "random"]
        seating = [names[(m + seat) % 4] for seat in range(4)]
        clients = [
            PolicyClient(make_policy("cactus", name, policy_rng(seed, seat)), name)
            for seat, name in enumerate(seating)
        ]
        record = referee.run("cactus", clients, seed, {"preset": preset})
        wins += record.outcome["ranks"][seating.index("heuristic")] == 1
    print(f"cactus {preset}: the heuristic won {wins} of 200 matches")
    assert wins / 200 >= floor
