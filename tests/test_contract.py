"""The engine contract (tests/support/contract.py), checked for every registered game.

Every game of the registry (``arena.games.GAMES``) is checked in the configurations its
table below lists: random matches under the leak oracle (cards conserved, legal requests
and defaults, JSON views that show no seat a card the rules keep from it, well-formed
outcomes, matches that end), recorded matches replayed to the same events and state
(the global ``random`` module having no say), and bad answers refused without changing
the state.  A game with no entry in ``CONFIGS`` is checked in its default options at
every player count it allows, so a newly registered game is checked as soon as it is
registered (and fails until tests/support/leak_tables.py has its table).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from arena.games import ENCODINGS, GAMES
from arena.games.base import Game
from tests.support.contract import (
    check_bad_input,
    check_determinism,
    check_encoding,
    play_random,
)
from tests.support.president import PAIRS, SINGLES, probe_every, seats_for


@dataclass(frozen=True)
class Config:
    """One configuration a game is checked in: its options and, per player count, the
    seeds of the random matches played under the leak oracle (``matches``), of the
    matches replayed (``replays``) and of the matches probed with bad answers at every
    ``every``-th step (``probes``; at least ``tried`` bad answers in all, per count; every
    bad answer tried must be refused without changing the state)."""

    name: str
    options: Mapping[str, Any] | None = None
    matches: Mapping[int, Sequence[int]] = field(default_factory=dict)
    replays: Mapping[int, Sequence[int]] = field(default_factory=dict)
    probes: Mapping[int, Sequence[int]] = field(default_factory=dict)
    every: int = 7
    tried: int = 1


def cactus() -> Iterator[Config]:
    # 301 random matches per preset, every player count 2..8; replays at 2, 5 and 8
    # players, bad answers at 3
    for preset in ("classic", "pagat"):
        for n in range(2, 9):
            yield Config(
                f"{preset}-{n}p",
                {"preset": preset},
                matches={n: range(43)},
                replays={n: [77 + n]} if n in (2, 5, 8) else {},
                probes={n: range(4)} if n == 3 else {},
                tried=101,
            )
    variants = [
        ("classic", {"scoring": "tas_de_merde"}),
        ("classic", {"scoring": "maximus", "max_rounds": 8}),
        ("classic", {"call": "any_time", "reaction_priority": "random"}),
        ("classic", {"penalty_cards": 2, "rounds": 2}),
        ("pagat", {"snap_after_miss": True}),
        ("pagat", {"call": "any_time", "target": 40}),
        ("classic", {"powers": {"9": "peek_other", "Q": "blind_swap"}, "rounds": 2}),
    ]
    for preset, extra in variants:
        seeds: dict[int, list[int]] = {}
        for i in range(30):
            seeds.setdefault(2 + i % 5, []).append(1000 + i)
        name = "+".join(
            [preset, *(k if isinstance(v, dict) else f"{k}={v}" for k, v in extra.items())]
        )
        yield Config(name, {"preset": preset, **extra}, matches=seeds)


def cactus_game() -> Iterator[Config]:
    # 300 random matches per player count (tests/test_cactus_game.py plays the same
    # matches under its knowledge oracle); a short match replayed too
    for n in range(2, 7):
        yield Config(f"{n}p", None, matches={n: range(300)}, replays={n: range(5)},
                     probes={n: [11]})  # fmt: skip
        yield Config(f"short-{n}p", {"target": 2, "max_turns": 30}, replays={n: [3]})


def president() -> Iterator[Config]:
    # every variant alone, and every compatible pair, at each count of seats it allows
    for name, options in SINGLES.items():
        short_match = options if "target" in options else {**options, "rounds": 3}
        seats = seats_for(options)
        players = seats[len(options) % len(seats)]
        yield Config(
            name,
            short_match,
            matches={n: [100 + n, 200 + n] for n in seats},
            replays={players: [5]},
            probes={players: [6]},
            every=probe_every(options, 11),
        )
    for name, options in PAIRS.items():
        seats = seats_for(options)
        yield Config(
            name,
            options,
            matches={n: [31 * n] for n in seats},
            replays={seats[-1]: [3]},
            probes={seats[0]: [4]},
            every=probe_every(options, 13),
            # a pair's probed match may end before its first probe (a coup d'état with
            # two decks, a short menteur match probed sparsely): each probe still must
            # refuse every bad answer, but none is required
            tried=0,
        )
    for preset in ("classique", "menteur", "regle_des_4", "revolutionnaire", "wizz"):
        yield Config(
            f"preset-{preset}", {"preset": preset, "rounds": 2}, matches={n: [n] for n in (3, 5, 8)}
        )


CONFIGS = {"cactus": cactus, "cactus-game": cactus_game, "president": president}


def default_configs(game: Game) -> Iterator[Config]:
    """A game with no entry in ``CONFIGS``: its default options, every player count."""
    counts = range(game.min_players, game.max_players + 1)
    yield Config(
        "defaults",
        None,
        matches={n: range(20) for n in counts},
        replays={n: [1] for n in counts},
        probes={n: [2] for n in counts},
    )


def cases(kind: str) -> list[Any]:
    """``pytest.param(game, config)`` for every registered game's configurations that
    have checks of ``kind``."""
    found = []
    for game_id, game in GAMES.items():
        configs = CONFIGS[game_id]() if game_id in CONFIGS else default_configs(game)
        for config in configs:
            if getattr(config, kind):
                found.append(pytest.param(game, config, id=f"{game_id}-{config.name}"))
    return found


@pytest.mark.parametrize(("game", "config"), cases("matches"))
def test_random_matches_keep_the_contract(game: Game, config: Config) -> None:
    """Conservation, legal requests, the leak oracle and well-formed outcomes over
    random play."""
    for n, seeds in config.matches.items():
        for seed in seeds:
            play_random(game, n, seed, config.options)


@pytest.mark.parametrize(("game", "config"), cases("replays"))
def test_recorded_matches_replay_the_same(game: Game, config: Config) -> None:
    for n, seeds in config.replays.items():
        for seed in seeds:
            check_determinism(game, n, config.options, seed)


@pytest.mark.parametrize(("game", "config"), cases("probes"))
def test_bad_answers_are_refused_and_change_nothing(game: Game, config: Config) -> None:
    for n, seeds in config.probes.items():
        tried = sum(check_bad_input(game, n, config.options, s, every=config.every) for s in seeds)
        assert tried >= config.tried, (n, tried)


@pytest.mark.parametrize("game", list(GAMES.values()), ids=list(GAMES))
def test_every_game_has_an_encoding_the_leak_oracle_accepts(game: Game) -> None:
    """A learner's observation (``ENCODING``, arena/games/encoding.py) names only the cards
    the seat may know, at every player count: the same oracle as for views; each game's
    own test (tests/test_learn_<game>.py) covers its presets and options."""
    encoding = ENCODINGS[game.id]
    assert encoding.game_id == game.id
    for n in range(game.min_players, game.max_players + 1):
        assert check_encoding(game, encoding, n, 100 + n, None) > 0


def test_every_configured_game_is_registered() -> None:
    """A table entry for a game that is no longer registered would check nothing."""
    assert set(CONFIGS) <= set(GAMES)
    for game_id, configs in CONFIGS.items():
        game = GAMES[game_id]
        for config in configs():
            game.resolve_options(dict(config.options or {}))
            for check in (config.matches, config.replays, config.probes):
                assert all(game.min_players <= n <= game.max_players for n in check), config


def test_a_game_without_an_entry_is_checked_in_its_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A newly registered game gets every check, at every player count it allows."""
    monkeypatch.setitem(GAMES, "newcomer", GAMES["cactus-game"])
    game = GAMES["newcomer"]
    counts = set(range(game.min_players, game.max_players + 1))
    for kind in ("matches", "replays", "probes"):
        [(checked, config)] = [p.values for p in cases(kind) if p.id == "newcomer-defaults"]
        assert checked is game and config.options is None
        assert set(getattr(config, kind)) == counts
