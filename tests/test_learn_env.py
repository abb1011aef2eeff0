"""The learning environments (arena.learn): every game passes PettingZoo's own api_test
and seed_test, a match played through the environment is a match of the engine (same
seed and answers, same events, so it re-simulates like any record), reaction windows are
asked seat by seat and applied together, rewards follow the outcome, and the
single-agent wrapper passes Gymnasium's checker and answers a bad index as the referee
does."""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from arena.games import GAMES, OptionsError
from arena.games.base import Outcome
from arena.learn import env, legal, rank_reward, single_agent_env, win_reward

# (game, players, options): every game, both Cactus presets, and variants that open
# reaction windows (snaps, Stops, rapidité, menteur calls)
CONFIGS = [
    ("cactus", 4, {"preset": "classic"}),
    ("cactus", 3, {"preset": "pagat"}),
    ("cactus", 2, {"preset": "classic", "call": "any_time"}),
    ("cactus-game", 4, {}),
    ("cactus-game", 2, {}),
    ("president", 4, {}),
    ("president", 5, {"preset": "menteur"}),
]
# What api_test warns of every environment whose observation is PettingZoo's own masked
# form, {"observation", "action_mask"} (its classic games are exempted by name): the space
# is a Dict, and play_test hands the whole dict to its array check.  Any other warning
# fails the test.
DICT_OBSERVATION = {
    "Observation space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete",
    "Observation is not a NumPy array",
}


def _ids(config: tuple[str, int, dict[str, Any]]) -> str:
    game, players, options = config
    return f"{game}-{players}p-" + "-".join(f"{v}" for v in options.values())


def _play(
    e: Any, seed: int, chooser: random.Random, totals: dict[str, float] | None = None
) -> list[dict[int, Any]]:
    """A random match through the environment; returns the JSON answers per step and adds
    each agent's rewards, as ``last`` gives them, into ``totals``."""
    e.reset(seed=seed)
    steps: list[dict[int, Any]] = []
    answers: dict[int, Any] = {}
    for agent in e.agent_iter():
        observation, reward, terminated, truncated, _ = e.last()
        if totals is not None:
            totals[agent] = totals.get(agent, 0.0) + reward
        if terminated or truncated:
            e.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        index = int(chooser.choice(list(legal)))
        seat = int(agent.split("_")[1])
        answers[seat] = e.legal_actions(agent)[index]
        before = e.match.steps
        e.step(index)
        if e.match.steps != before:  # the step's answers were applied together
            steps.append(answers)
            answers = {}
    return steps


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_pettingzoo_api_test_passes(config: tuple[str, int, dict[str, Any]]) -> None:
    game, players, options = config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(game, players=players, options=options), num_cycles=300)
    assert {str(w.message) for w in caught} <= DICT_OBSERVATION


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_pettingzoo_seed_test_passes(config: tuple[str, int, dict[str, Any]]) -> None:
    game, players, options = config
    seed_test(lambda: env(game, players=players, options=options), num_cycles=300)


def test_the_acceptance_interface() -> None:
    """What a student types first: the three games by their ids, four players."""
    for game in ("cactus", "cactus-game", "president"):
        e = env(game, players=4)
        e.reset(seed=1)
        assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
        observation, *_ = e.last()
        assert observation["observation"].dtype == np.float32
        assert observation["action_mask"].sum() >= 1


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_a_match_in_the_environment_is_a_match_of_the_engine(
    config: tuple[str, int, dict[str, Any]],
) -> None:
    """Same seed, same answers: the engine alone plays the same events to the same
    outcome (so a match played in training re-simulates like any arena record), and each
    observation is the encoding of the view a bot would be sent."""
    game_id, players, options = config
    e = env(game_id, players=players, options=options)
    steps = _play(e, seed=7, chooser=random.Random(7))
    game = GAMES[game_id]
    state = game.new_state(players, 7, options)
    for answers in steps:
        game.apply(state, answers)
    assert [x.data for x in state.events] == [x.data for x in e.match.events]
    assert game.outcome(state).ranks == game.outcome(e.match).ranks
    assert e.agents == []


def test_same_seed_same_match_and_reset_without_seed_moves_on() -> None:
    e = env("president", players=4)
    first = _play(e, seed=3, chooser=random.Random(0))
    again = _play(e, seed=3, chooser=random.Random(0))
    assert first == again
    e.reset(seed=3)
    e.reset()
    a = e.match.seed
    e.reset(seed=3)
    e.reset()
    assert e.match.seed == a != 3, "the seeds after a seeded reset are fixed by it"


def test_a_reaction_window_is_asked_seat_by_seat_and_applied_together() -> None:
    """CA-8: a snap window asks several seats at once; the environment selects them one
    after another and changes nothing until the last has answered."""
    e = env("cactus", players=4, options={"preset": "classic"})
    e.reset(seed=5)
    chooser = random.Random(5)
    windows = 0
    for agent in e.agent_iter(5000):
        observation, _, terminated, _, _ = e.last()
        if terminated:
            e.step(None)
            continue
        asked = [r.seat for r in e.game.pending(e.match)]
        if len(asked) > 1 and e.request(agent).seat == asked[0]:
            windows += 1
            before = (e.match.steps, len(e.match.events))
            for seat in asked:
                assert e.agent_selection == f"player_{seat}"
                assert e.observe(f"player_{seat}")["action_mask"].sum() >= 1
                pass_index = next(
                    i for i, a in e.legal_actions(f"player_{seat}").items() if a["type"] == "pass"
                )
                if seat != asked[-1]:
                    e.step(pass_index)
                    assert (e.match.steps, len(e.match.events)) == before
            e.step(pass_index)
            assert e.match.steps == before[0] + 1
            if windows >= 3:
                break
            continue
        legal = np.flatnonzero(observation["action_mask"])
        e.step(int(chooser.choice(list(legal))))
    assert windows >= 3


def test_legal_lists_the_mask_indices_in_order() -> None:
    e = env("president", players=4)
    e.reset(seed=8)
    for agent in e.possible_agents:
        mask = e.observe(agent)["action_mask"]
        assert legal(mask).tolist() == np.flatnonzero(mask).tolist()
        assert legal(mask).tolist() == sorted(e.legal_actions(agent))


def test_a_seat_not_asked_sees_its_view_with_an_empty_mask() -> None:
    e = env("president", players=4)
    e.reset(seed=2)
    asked = e.agent_selection
    for agent in e.possible_agents:
        observation = e.observe(agent)
        assert observation["observation"].any()
        assert bool(observation["action_mask"].any()) == (agent == asked)


def test_rewards_follow_the_ranks() -> None:
    """Rank reward: +1 alone first, -1 alone last, shared places share; sums to zero."""
    outcome = Outcome(ranks=[1, 1, 3, 4], scores=[0, 0, 0, 0])
    assert [rank_reward(outcome, s) for s in range(4)] == [2 / 3, 2 / 3, -1 / 3, -1.0]
    assert [win_reward(outcome, s) for s in range(4)] == [1.0, 1.0, 0.0, 0.0]
    got: dict[str, list[float]] = {}
    for name, reward_of in (("rank", rank_reward), ("win", win_reward)):
        e = env("cactus-game", players=3, reward=name)
        totals: dict[str, float] = {}
        _play(e, seed=11, chooser=random.Random(1), totals=totals)
        ranks = GAMES["cactus-game"].outcome(e.match).ranks
        got[name] = [totals[f"player_{s}"] for s in range(3)]
        assert got[name] == pytest.approx([reward_of(Outcome(ranks, []), s) for s in range(3)])
    assert sum(got["rank"]) == pytest.approx(0.0)
    assert sum(got["win"]) >= 1.0, "somebody is first"


def test_mistakes_get_clear_errors() -> None:
    with pytest.raises(OptionsError, match="played by 2 to 8 players"):
        env("cactus", players=9)
    with pytest.raises(OptionsError, match="unknown game 'poker'"):
        env("poker")
    with pytest.raises(OptionsError, match="preset"):
        env("cactus", preset="vancouver")
    with pytest.raises(OptionsError, match="unknown reward"):
        env("cactus", reward="money")
    with pytest.raises(OptionsError, match="options must be a mapping"):
        env("cactus", options="pagat")
    e = env("cactus", players=4)
    e.reset(seed=0)
    observation, *_ = e.last()
    masked = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="is not legal now"):
        e.step(masked)
    with pytest.raises(ValueError, match="is not one of its legal actions"):
        e.step_action({"type": "fly"})


# -- the single-agent wrapper -------------------------------------------------------------


@pytest.mark.parametrize("game", ["cactus", "cactus-game", "president"])
def test_gymnasium_check_env_passes(game: str) -> None:
    check_env(single_agent_env(game, players=4, opponents="heuristic"), skip_render_check=True)


def test_single_agent_plays_against_the_opponents_given() -> None:
    """One opponent per other seat (house names, a Policy class or a function), the
    learner's seat drawn at each reset unless fixed, and the same seed gives the same
    match."""
    from arena.games.president.policies import PresidentHeuristic

    calls: list[int] = []

    def first_legal(view: dict[str, Any], legal: list[Any]) -> Any:
        calls.append(view["seat"])
        return legal[0]

    e = single_agent_env("president", 4, opponents=["random", PresidentHeuristic, first_legal])
    seats = set()
    for seed in range(8):
        observation, info = e.reset(seed=seed)
        seats.add(info["seat"])
        done = False
        while not done:
            index = int(np.flatnonzero(observation["action_mask"])[0])
            observation, reward, done, truncated, info = e.step(index)
            assert not truncated
        assert reward == rank_reward(Outcome(info["outcome"]["ranks"], []), info["seat"])
    assert len(seats) > 1 and calls
    a = e.reset(seed=4)[0]["observation"]
    b = e.reset(seed=4)[0]["observation"]
    assert np.array_equal(a, b)
    with pytest.raises(OptionsError, match="3 opponents are needed"):
        single_agent_env("president", 4, opponents=["random"])
    with pytest.raises(OptionsError, match="no house policy 'genius'"):
        single_agent_env("president", 4, opponents="genius")
    with pytest.raises(OptionsError, match="opponents must be a policy name"):
        single_agent_env("president", 4, opponents=3)
    with pytest.raises(OptionsError, match="an opponent must be a policy name"):
        single_agent_env("president", 4, opponents=["random", None, "random"])


def test_a_masked_index_plays_the_default_action_as_the_referee_does() -> None:
    e = single_agent_env("cactus", 4, seat=0)
    observation, info = e.reset(seed=1)
    request = e.aec.request("player_0")
    masked = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    events = len(e.aec.match.events)
    _, _, _, _, info = e.step(masked)
    assert info["illegal_action"] is True
    played = [x.data for x in e.aec.match.events[events:]]
    assert played, "the default action was played"
    assert request.default_action in request.legal_actions


def test_the_server_does_not_need_the_learn_extra() -> None:
    """The web process, the worker and the games import neither PettingZoo nor Gymnasium:
    the `learn` extra is optional."""
    import subprocess
    import sys

    code = (
        "import sys, arena.app, arena.worker.play, arena.games, arena.cli; "
        "print(sorted(m for m in ('pettingzoo', 'gymnasium') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
