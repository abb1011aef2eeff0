"""The shared pieces of the engine contract: legality checks, ranks, options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from arena.games import get_game, make_policy
from arena.games.base import OptionsError, competition_ranks, find_legal
from arena.games.options import resolve, to_json

LEGAL = [{"type": "swap", "slot": 1}, {"type": "draw"}, {"type": "pick", "slots": [1, 2]}]


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ({"type": "swap", "slot": 1}, LEGAL[0]),
        ({"slot": 1, "type": "swap"}, LEGAL[0]),  # key order does not matter
        ({"type": "pick", "slots": [1, 2]}, LEGAL[2]),
        ({"type": "swap", "slot": 1.0}, None),  # 1.0 is not the slot 1
        ({"type": "swap", "slot": True}, None),  # nor is true
        ({"type": "pick", "slots": [1, 2.0]}, None),
        ({"type": "swap", "slot": 1, "x": 0}, None),
        ({"type": "swap"}, None),
        ("draw", None),
        (None, None),
        ([{"type": "draw"}], None),
    ],
)
def test_find_legal_matches_json_values_of_the_same_types(answer, found):
    assert find_legal(answer, LEGAL) == found
    if found is not None:
        assert find_legal(answer, LEGAL) is found  # the engine's own element


@pytest.mark.parametrize(
    ("keys", "ranks"),
    [
        ([3, 1, 2], [3, 1, 2]),
        ([1, 1, 2], [1, 1, 3]),
        ([(0, 5), (0, 5), (-1, 9), (0, 7)], [2, 2, 1, 4]),
        ([7], [1]),
    ],
)
def test_competition_ranks_share_ties(keys, ranks):
    assert competition_ranks(keys) == ranks


@dataclass(frozen=True)
class Demo:
    mode: Literal["a", "b"] = "a"
    count: int = 3
    flag: bool = False
    cap: int | None = None
    table: dict[str, int] = field(default_factory=dict)


PRESETS = {"fast": {"count": 1, "flag": True}}


def test_options_resolve_presets_then_overrides():
    options = resolve(Demo, "demo", PRESETS, {"preset": "fast", "count": 2})
    assert options == Demo(count=2, flag=True)
    assert resolve(Demo, "demo", PRESETS, to_json(options)) == options


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"mode": "c"}, "must be one of a, b"),
        ({"count": "3"}, "whole number"),
        ({"count": True}, "whole number"),
        ({"count": 10**9}, "out of range"),
        ({"flag": 1}, "true or false"),
        ({"cap": "x"}, "whole number"),
        ({"table": [1]}, "must be an object"),
        ({"table": {"k": "v"}}, "whole number"),
        ({"colour": "red"}, "unknown demo option"),
        ({"preset": "slow"}, "no preset 'slow'"),
    ],
)
def test_bad_options_are_refused_with_a_message(raw, message):
    with pytest.raises(OptionsError, match=message):
        resolve(Demo, "demo", PRESETS, raw)


def test_unknown_games_and_policies_are_refused_with_a_message():
    with pytest.raises(OptionsError, match="unknown game 'poker'"):
        get_game("poker")
    with pytest.raises(OptionsError, match="no in-process policy 'genius'"):
        make_policy("cactus", "genius", None)  # type: ignore[arg-type]
