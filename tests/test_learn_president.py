"""The Président learning encoding (arena/games/president/encoding.py, docs/learn/president.md).

- The leak oracle over random play (``check_encoding``): every observation, explained back
  into view-shaped JSON, names only cards its seat may know (PR-3, PR-5, PR-10, PV-15), for
  every player count, every preset and every variant of docs/rules/president.md.
- Table-driven checks on views of constructed positions (``PresidentState.set_hands``) and
  of recorded random play: what a slice holds, that another seat's cards are never encoded,
  the relative seats, the strength slots (PR-2, PV-7, 32-card deck), the exchange (PR-10)
  and menteur (PV-15) slices, action indices that map back to their actions.
- The observation's size and the action space are the same for every option, and the
  contestants' document quotes ``field_table()`` verbatim.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.games.president import ENCODING, GAME
from arena.games.president.encoding import CARD_ID, ID_NAMES, N_IDS, N_SLOTS, PresidentEncoding
from arena.games.president.engine import PRESETS, PresidentState
from tests.support.contract import check_encoding
from tests.support.president import SINGLES, seats_for
from tests.support.president_table import table

DOC = Path(__file__).resolve().parent.parent / "docs" / "learn" / "president.md"
# a few options worth their own leak check: every variant family together, where allowed
COMBOS: dict[str, tuple[int, dict[str, Any]]] = {
    "two decks, wild Jokers, coups": (
        7,
        {"decks": 2, "jokers": True, "joker_wild": True, "coup_d_etat": True, "guillotine": True},
    ),
    "32 cards, suites, rapidite, revolution": (
        4,
        {"deck": 32, "suites": True, "rapidite": True, "revolution": True},
    ),
    "menteur with suites and wild Jokers": (
        3,
        {"menteur": True, "suites": True, "jokers": True, "joker_wild": True},
    ),
    "menteur, 32 cards, two decks, revolution": (
        6,
        {"menteur": True, "deck": 32, "decks": 2, "revolution": True, "revolution_lasts": True},
    ),
    "tabula rasa and wizz": (5, {"tabula_rasa": True, "wizz": True, "raise_count": True}),
    "putsch, guillotine, 3 players": (
        3,
        {"preset": "revolutionnaire", "later_lead": "after_dealer"},
    ),
}


def observe(view: dict[str, Any]) -> list[float]:
    values = [0.0] * ENCODING.size
    ENCODING.encode(view, values)
    return values


def part(values: list[float], name: str) -> list[float]:
    f = ENCODING.field(name)
    return values[f.start : f.stop]


def answer(state: PresidentState, seat: int, wanted: dict[str, Any]) -> None:
    """``seat``, the one asked, answers ``wanted`` (one of its legal actions)."""
    [request] = GAME.pending(state)
    assert request.seat == seat and wanted in request.legal_actions
    GAME.apply(state, {seat: request.legal_actions[request.legal_actions.index(wanted)]})


def recorded(
    n: int, options: dict[str, Any] | None, seed: int
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every (view, legal actions) a seat is asked with in one seeded random match."""
    state = GAME.new_state(n, seed, options)
    rng = random.Random(seed)
    out = []
    while GAME.outcome(state) is None:
        answers = {}
        for request in GAME.pending(state):
            out.append((GAME.view(state, request.seat), request.legal_actions))
            answers[request.seat] = rng.choice(request.legal_actions)
        GAME.apply(state, answers)
    return out


# -- the leak oracle over random play --------------------------------------------------------


@pytest.mark.parametrize("n", range(3, 9))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_and_player_count_passes_the_leak_oracle(preset: str, n: int) -> None:
    for seed in (1, 2):
        assert check_encoding(GAME, ENCODING, n, seed, {"preset": preset, "rounds": 2}) > 0


@pytest.mark.parametrize("name", sorted(SINGLES))
def test_every_variant_passes_the_leak_oracle(name: str) -> None:
    options = dict(SINGLES[name])
    if "target" not in options:  # PR-12: rounds and target exclude each other
        options["rounds"] = 2
    seats = seats_for(options)
    for n in (seats[0], seats[-1]):  # PV-5, PV-16 need more players
        assert check_encoding(GAME, ENCODING, n, 3, options) > 0


@pytest.mark.parametrize("name", sorted(COMBOS))
def test_variant_combinations_pass_the_leak_oracle(name: str) -> None:
    n, options = COMBOS[name]
    for seed in (4, 5):
        assert check_encoding(GAME, ENCODING, n, seed, {"rounds": 2, **options}) > 0


# -- what the slices hold ------------------------------------------------------------------


def test_own_cards_are_one_hot_by_identity_and_counted_by_strength_slot() -> None:
    # PR-2: 3 is slot 0 ... 2 is slot 12; identity 4 * rank + suit (C, D, H, S)
    state = table([["3C", "9D", "9H", "2S"], ["4C", "4D", "KH"], ["5C", "AS"]])
    values = observe(GAME.view(state, 0))
    hand = part(values, "hand_cards")
    for name, index in (("3C", 0), ("9D", 4 * 6 + 1), ("9H", 4 * 6 + 2), ("2S", 4 * 12 + 3)):
        assert CARD_ID[name] == index and hand[index] == 0.5, name
    assert sum(hand) == 4 * 0.5
    ranks = part(values, "hand_ranks")
    assert ranks == [1 / 8] + [0] * 5 + [2 / 8] + [0] * 5 + [1 / 8] + [0, 0]


@pytest.mark.parametrize(
    ("seat", "theirs"),
    [(0, ["4C", "4D", "KH", "5C", "AS"]), (1, ["3C", "9D", "9H", "2S", "5C", "AS"])],
)
def test_another_seats_cards_are_not_encoded_as_known(seat: int, theirs: list[str]) -> None:
    # PR-3: hands are private; they count only as unseen cards of their rank
    state = table([["3C", "9D", "9H", "2S"], ["4C", "4D", "KH"], ["5C", "AS"]])
    values = observe(GAME.view(state, seat))
    for name in ("hand_cards", "played_cards", "exchange_gave", "exchange_received"):
        known = part(values, name)
        assert all(known[CARD_ID[c]] == 0 for c in theirs), name
    # the 43 cards nobody holds are set aside face up (PR-3): known, never unseen
    assert sum(part(values, "leftover_cards")) == 43 * 0.5
    unseen = Counter(c[:-1] for c in theirs)
    slots = {"3": 0, "4": 1, "5": 2, "9": 6, "K": 10, "A": 11, "2": 12}
    got = part(values, "unseen_ranks")
    assert {s: got[s] for s in range(N_SLOTS) if got[s]} == {
        slots[r]: k / 8 for r, k in unseen.items()
    }
    assert sum(got) == len(theirs) / 8


def test_two_decks_count_two_cards_of_one_name() -> None:
    # PV-16: two 9H are one identity counted twice
    hands = [["9H", "9H", "9S"], ["3C"], ["3D"], ["4C"], ["4D"], ["5C"]]
    values = observe(GAME.view(table(hands, {"decks": 2}), 0))
    assert part(values, "hand_cards")[CARD_ID["9H"]] == 1.0
    assert part(values, "hand_ranks")[6] == 3 / 8
    assert part(values, "config") == [0, 1, 0]
    assert part(values, "players") == [0, 0, 0, 1, 0, 0]  # 6 players


@pytest.mark.parametrize(
    ("options", "reverse", "expected"),
    [
        ({}, False, {"3": 0, "10": 7, "2": 12}),  # PR-2
        ({}, True, {"3": 12, "10": 5, "2": 0}),  # PV-7: the order reversed
        ({"deck": 32}, False, {"8": 5, "A": 11, "7": 12}),  # PR-2: the 7s strongest
        ({"deck": 32}, True, {"8": 12, "7": 5}),
    ],
)
def test_strength_slots_follow_the_order_in_force(
    options: dict[str, Any], reverse: bool, expected: dict[str, int]
) -> None:
    hands = [[r + "H" for r in expected], ["8C" if "3" in expected else "9C"], ["KC"]]
    state = table(hands, options)
    state.reversed = reverse
    for seat in range(3):
        state.refresh_hand(seat)
    view = GAME.view(state, 0)
    values = observe(view)
    ranks = part(values, "hand_ranks")
    assert [s for s in range(N_SLOTS) if ranks[s]] == sorted(expected.values())
    assert part(values, "reversed") == [float(reverse)]
    for rank, slot in expected.items():  # actions name ranks by the same slots
        index = ENCODING.action_index(view, {"type": "play", "rank": rank, "count": 1})
        assert ENCODING.actions.keys[index] == ("play", slot, 1, 0)


def test_seats_are_relative_to_the_observer_in_table_order() -> None:
    state = table([["3C"], ["4C"], ["5C", "5D"], ["6C", "6D", "6H"]], lead=3)
    values = observe(GAME.view(state, 2))
    assert part(values, "seat_present") == [1, 1, 1, 1, 0, 0, 0, 0]
    assert part(values, "seat_turn") == [0, 1, 0, 0, 0, 0, 0, 0]  # seat 3: the next one
    assert part(values, "seat_dealer") == [0, 0, 1, 0, 0, 0, 0, 0]  # seat 0 (PR-4)
    assert part(values, "seat_hand_size")[:4] == [2 / 36, 3 / 36, 1 / 36, 1 / 36]
    # PR-9: no roles in round 1
    assert sum(part(values, "seat_role")) == 0


def test_the_trick_slices_hold_the_play_to_beat() -> None:
    state = table([["3C"], ["9C", "9D", "KS"], ["5C", "5D"], ["6C", "6D", "6H"]])
    answer(state, 1, {"type": "play", "rank": "9", "count": 2})  # PR-5
    answer(state, 2, {"type": "pass"})  # PR-6
    view = GAME.view(state, 3)
    values = observe(view)
    assert part(values, "trick_rank") == [0] * 6 + [1] + [0] * 8
    assert part(values, "trick") == [2 / 9, 0, 0, 1 / 7, 0]
    assert part(values, "seat_trick_by") == [0, 0, 1, 0, 0, 0, 0, 0]  # seat 1, two after 3
    played = part(values, "played_cards")
    assert played[CARD_ID["9C"]] + played[CARD_ID["9D"]] == 1.0 and sum(played) == 1.0
    assert part(values, "played_ranks")[6] == 2 / 8
    assert ENCODING.explain(values)["trick"] == {"rank": "9"}


def test_a_joker_on_the_trick_is_explained_by_its_name() -> None:
    # PV-3: a Joker's rank is its name, a card of the pile the leak table checks
    state = table([["3C"], ["RJ", "KS"], ["5C"]], {"jokers": True})
    answer(state, 1, {"type": "play", "rank": "RJ", "count": 1})
    values = observe(GAME.view(state, 2))
    assert part(values, "config") == [0, 0, 1]
    explained = ENCODING.explain(values)
    assert explained["played"] == {"cards": ["RJ"]}
    # RJ cuts (PV-3): the trick is over, but the card stays on the pile
    assert explained["trick"] == {"rank": None}


def first(
    n: int, options: dict[str, Any], seed: int, wanted: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    for view, legal in recorded(n, options, seed):
        if wanted(view):
            return view, legal
    raise AssertionError("no such view in the match")


def test_the_exchange_slices_hold_the_cards_given_and_received() -> None:
    # PR-10: the Président gets the Trou du Cul's two best cards, then gives two back
    view, legal = first(4, {"rounds": 2}, 1, lambda v: v["phase"] == "exchange")
    values = observe(view)
    received = view["exchange"]["received"]
    assert received["forced"] and view["exchange"]["gave"] is None
    assert part(values, "exchange") == [0, 0, 1, 1]
    got = part(values, "exchange_received")
    assert Counter({ID_NAMES[i]: round(2 * x) for i, x in enumerate(got) if x}) == Counter(
        received["cards"]
    )
    assert part(values, "phase")[1] == 1.0
    assert all(a["type"] == "give" for a in legal)
    for index, action in ENCODING.legal_indices(view, legal).items():
        key = ENCODING.actions.keys[index]
        slots = ENCODING.rank_slot[view["rank_order"][0]]
        assert key == ("give", tuple(sorted(slots[r] for r in action["ranks"])))


def test_menteur_slices_hold_own_face_down_cards_and_the_announcement() -> None:
    # PV-15: the announcement's rank is public, the cards laid are the layer's own
    state = table([["3C"], ["9C", "4D", "KS"], ["5C", "5D"]], {"menteur": True})
    answer(state, 1, {"type": "play", "rank": "9", "count": 2})
    view = GAME.view(state, 1)
    assert view["phase"] == "lay"
    values = observe(view)
    assert part(values, "announcing_rank")[6] == 1.0
    assert part(values, "announcing_shape") == [2 / 9, 0, 0]
    answer(state, 1, {"type": "lay", "rank": "9", "count": 1})
    answer(state, 1, {"type": "lay", "rank": "4", "count": 1})
    mine, theirs = observe(GAME.view(state, 1)), observe(GAME.view(state, 2))
    assert part(mine, "variant") == [0, 0, 1]
    face_down = part(mine, "face_down_cards")
    assert face_down[CARD_ID["9C"]] == face_down[CARD_ID["4D"]] == 0.5 and sum(face_down) == 1
    assert sum(part(theirs, "face_down_cards")) == 0  # never another seat's
    assert sum(part(theirs, "played_cards")) == 0
    assert part(theirs, "pile_face_down") == [2 / 108]
    assert part(theirs, "announced_rank")[6] == 1.0
    assert part(theirs, "seat_announcer") == [0, 0, 1, 0, 0, 0, 0, 0]  # seat 1, after 2
    assert ENCODING.explain(theirs)["announced"] == {"rank": "9"}
    assert ENCODING.explain(theirs)["played"] == {"cards": [], "face_down": 2}


# -- the explanation and the actions over recorded play ---------------------------------------


def card_paths(view: dict[str, Any]) -> dict[str, Any]:
    exchange = view["exchange"]
    out = {
        "cards": Counter(view["cards"]),
        "played": Counter(view["played"]["cards"]),
        "leftover": Counter(view["leftover"]["cards"]),
        "trick": view["trick"]["rank"],
        "gave": exchange and exchange["gave"] and Counter(exchange["gave"]["cards"]),
        "received": exchange and exchange["received"] and Counter(exchange["received"]["cards"]),
    }
    if "face_down" in view:
        out["face_down"] = Counter(view["face_down"]["cards"])
        out["pile_down"] = view["played"]["face_down"]
        out["announced"] = view["announced"] and view["announced"]["rank"]
    return out


@pytest.mark.parametrize(
    ("n", "options"),
    [
        (4, {"preset": "classique"}),
        (6, {"preset": "revolutionnaire"}),
        (4, {"preset": "menteur", "suites": True, "jokers": True, "joker_wild": True}),
        (8, {"decks": 2, "jokers": True, "joker_wild": True, "suites": True}),
        (3, {"deck": 32, "rapidite": True, "putsch": True, "guillotine": True, "jokers": True}),
    ],
)
def test_explain_gives_back_the_views_cards_and_indices_map_back(
    n: int, options: dict[str, Any]
) -> None:
    seen: set[str] = set()
    for view, legal in recorded(n, {"rounds": 2, **options}, 7):
        explained = ENCODING.explain(observe(view))
        assert card_paths(explained) == card_paths(view)
        indices = ENCODING.legal_indices(view, legal)
        assert len(indices) == len(legal)  # no cap is reached: every action is named
        slots = ENCODING.rank_slot[view["rank_order"][0]]
        for index, action in indices.items():
            assert ENCODING.action_index(view, action) == index
            key = ENCODING.actions.keys[index]
            assert key[0] == action["type"]
            if "rank" in action:
                assert key[1] == slots[action["rank"]]
            seen.add(action["type"])
    assert {"pass", "play"} <= seen


def test_every_action_type_of_the_schema_has_indices() -> None:
    from arena.games.president.schema import ACTIONS

    kinds = Counter(key[0] for key in ENCODING.actions.keys)
    assert set(kinds) == set(ACTIONS)
    # PR-10 and PV-9: every multiset of up to 4 natural ranks; PV-8: 13 ranks x (5|6, 1|2)
    assert kinds["give"] == 1 + 13 + 91 + 455 + 1820
    assert kinds["coup_d_etat"] == kinds["guillotine"] == 13 * 4
    assert kinds["name"] == 7 + 7 * 6  # PR-9: 3 players name no Vice-Président
    assert len(ENCODING.actions) == len(set(ENCODING.actions.keys)) == 3469
    assert all(ENCODING.actions.docs)


def test_guillotine_names_seats_relative_to_the_player() -> None:
    view: dict[str, Any] = {"seat": 2, "table": [2, 0, 3, 1], "rank_order": ["3"]}
    action = {"type": "name", "vice_president": 0, "trou_du_cul": 1}
    index = ENCODING.action_index(view, action)
    assert ENCODING.actions.keys[index] == ("name", 1, 3)
    index = ENCODING.action_index(view, {"type": "name", "trou_du_cul": 3})
    assert ENCODING.actions.keys[index] == ("name", None, 2)


# -- fixed shape and the document ----------------------------------------------------------


def test_the_size_and_the_action_space_are_the_same_for_every_option() -> None:
    fresh = PresidentEncoding()
    assert (fresh.size, fresh.actions.keys) == (ENCODING.size, ENCODING.actions.keys)
    stop = 0
    for f in ENCODING.fields:  # contiguous, documented slices
        assert f.start == stop and f.doc and "|" not in f.doc
        stop = f.stop
    assert stop == ENCODING.size == 572
    assert len(ID_NAMES) == N_IDS == 54
    for n, options in ((3, {}), (8, {"decks": 2, "jokers": True}), (5, {"preset": "menteur"})):
        view, _ = recorded(n, {"rounds": 1, **options}, 2)[-1]
        assert len(observe(view)) == ENCODING.size


def test_the_document_quotes_the_field_table() -> None:
    assert ENCODING.field_table() in DOC.read_text(encoding="utf-8")


def test_the_documents_index_ranges_are_the_codes() -> None:
    text = DOC.read_text(encoding="utf-8")
    spans: dict[str, list[int]] = {}
    for i, key in enumerate(ENCODING.actions.keys):
        kind = "joker" if key[0] == "play" and key[1] >= 13 else key[0]
        spans.setdefault(kind, []).append(i)
    for kind, indices in spans.items():
        low, high = indices[0], indices[-1]
        assert indices == list(range(low, high + 1)), kind
        row = f"| {low} |" if low == high else f"| {low}, {high} |" if kind == "joker" else None
        assert (row or f"| {low}..{high} |") in text, kind
