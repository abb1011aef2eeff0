"""The view helpers on views shaped as the engines write them (the repository's
tests/test_sdk_bots.py runs them on real views too)."""

from __future__ import annotations

from typing import Any

from arenabot.views import cactus, cactus_game, has_type, of_type, president

VALUES = {
    "A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7,
    "8": 8, "9": 9, "10": 10, "J": 10, "Q": 10, "K": 0,
}  # fmt: skip

CACTUS_VIEW: dict[str, Any] = {
    "game": "cactus",
    "seat": 1,
    "players": 2,
    "decision": "drawn",
    "layouts": [
        [{"slot": 0, "card": None}, {"slot": 1, "card": "QS"}],
        [
            {"slot": 0, "card": None},
            {"slot": 1, "card": None},
            {"slot": 2, "card": "10H"},
            {"slot": 4, "card": "KD"},
        ],
    ],
    "discard": ["3C", "AS"],
    "drawn": "7D",
    "values": VALUES,
}


def test_cactus_cards() -> None:
    assert cactus.rank("10H") == "10"
    assert cactus.suit("10H") == "H"
    assert cactus.card_value(CACTUS_VIEW, "10H") == 10
    assert cactus.card_value(CACTUS_VIEW, "KD") == 0
    assert cactus.average_value(CACTUS_VIEW) == 75 / 13


def test_cactus_layouts() -> None:
    assert cactus.my_layout(CACTUS_VIEW) == {0: None, 1: None, 2: "10H", 4: "KD"}
    assert cactus.layout(CACTUS_VIEW, 0) == {0: None, 1: "QS"}
    assert cactus.unknown_slots(CACTUS_VIEW) == [0, 1]
    assert cactus.unknown_slots(CACTUS_VIEW, 0) == [0]
    assert cactus.known_cards(CACTUS_VIEW) == {(0, 1): "QS", (1, 2): "10H", (1, 4): "KD"}


def test_cactus_totals_and_piles() -> None:
    assert cactus.estimated_total(CACTUS_VIEW, unknown=5) == 20
    assert cactus.estimated_total(CACTUS_VIEW, 0, unknown=0) == 10
    assert cactus.estimated_total(CACTUS_VIEW) == 10 + 2 * 75 / 13
    assert cactus.top_discard(CACTUS_VIEW) == "AS"
    assert cactus.top_discard({**CACTUS_VIEW, "discard": []}) is None
    assert cactus.drawn_card(CACTUS_VIEW) == "7D"


CACTUS_GAME_VIEW: dict[str, Any] = {
    "seat": 0,
    "players": 3,
    "target": 7,
    "decision": "turn",
    "hand": {"cards": ["charlie", "charlie", "joker", "stop"]},
    "hand_sizes": [4, 5, 2],
    "points": [2, 5, 5],
}
SET = {"type": "play_set", "cards": ["spike", "joker", "joker"]}
LEGAL = [{"type": "draw"}, {"type": "play_set", "cards": ["charlie", "charlie", "joker"]}, SET]


def test_cactus_game_hand_and_points() -> None:
    assert cactus_game.hand(CACTUS_GAME_VIEW) == ["charlie", "charlie", "joker", "stop"]
    assert cactus_game.hand_counts(CACTUS_GAME_VIEW) == {"charlie": 2, "joker": 1, "stop": 1}
    assert cactus_game.points(CACTUS_GAME_VIEW) == 2
    assert cactus_game.points(CACTUS_GAME_VIEW, 1) == 5
    assert cactus_game.target(CACTUS_GAME_VIEW) == 7
    assert cactus_game.points_to_win(CACTUS_GAME_VIEW) == 5
    assert cactus_game.points_to_win({**CACTUS_GAME_VIEW, "points": [9, 0, 0]}) == 0
    assert cactus_game.leaders(CACTUS_GAME_VIEW) == [1, 2]


def test_cactus_game_sets_and_chain() -> None:
    assert [cactus_game.set_points(a) for a in of_type(LEGAL, "play_set")] == [1, 2]
    assert cactus_game.set_points({"type": "play_set", "cards": ["joker"] * 3}) == 3
    assert cactus_game.chain(CACTUS_GAME_VIEW) is None
    chain = {"type": "play", "player": 2, "card": "free_point", "stops": [0]}
    assert cactus_game.chain({**CACTUS_GAME_VIEW, "chain": chain}) == chain


PRESIDENT_VIEW: dict[str, Any] = {
    "seat": 2,
    "cards": ["3H", "3S", "9C", "2D", "BJ"],
    "rank_order": ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"],
    "trick": {"rank": "8", "count": 2, "jokers": 0, "by": 1, "passes": 0, "forced": False},
}


def test_president_cards() -> None:
    assert president.rank("10H") == "10"
    assert president.rank("RJ") == "RJ"
    assert president.my_cards(PRESIDENT_VIEW) == ["3H", "3S", "9C", "2D", "BJ"]
    assert president.rank_counts(PRESIDENT_VIEW) == {"3": 2, "9": 1, "2": 1, "BJ": 1}
    strength = president.strength(PRESIDENT_VIEW)
    assert strength["3"] == 0 and strength["2"] == 12 and strength["RJ"] == 14
    reversed_view = {**PRESIDENT_VIEW, "rank_order": PRESIDENT_VIEW["rank_order"][::-1]}
    assert president.strength(reversed_view)["3"] == 12


def test_president_trick_and_pass() -> None:
    assert president.current_trick(PRESIDENT_VIEW) == PRESIDENT_VIEW["trick"]
    lead = {**PRESIDENT_VIEW, "trick": {**PRESIDENT_VIEW["trick"], "rank": None, "count": 0}}
    assert president.current_trick(lead) is None
    follow = [{"type": "pass"}, {"type": "play", "rank": "9", "count": 2}]
    assert president.can_pass(follow)
    assert not president.can_pass(follow[1:])


def test_generic_action_filters() -> None:
    assert of_type(LEGAL, "draw") == [{"type": "draw"}]
    assert of_type(LEGAL, "draw", "play_set") == LEGAL
    assert has_type(LEGAL, "play_set")
    assert not has_type(LEGAL, "pass")
