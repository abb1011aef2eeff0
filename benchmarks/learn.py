"""Training speed: environment steps per second, observation encoding included, for every
game, against OpenSpiel's C++ ``dou_dizhu`` with ``observation_tensor`` in the same run.

    python benchmarks/learn.py [--seconds 3] [--repeat 3] [--games cactus,president] [--smoke]

A *step* is one decision of one agent: PettingZoo's loop (``agent_iter``, ``last``,
``step``) with a uniform choice among the indices of the action mask; the steps that
remove finished agents are not counted.  The baseline asks, per decision, the acting
player's ``observation_tensor`` as a numpy array and its ``legal_actions`` (dou_dizhu's
legal-action mask is 26,057 wide, so a learner asks the list), then applies a uniform
choice; chance nodes are not counted.  Each figure is measured ``--repeat`` times,
interleaved with the baseline, and the ratio printed as min/median/max.  Pinned to one
core.  Needs ``pip install -e ".[learn,bench]"``.  ``--smoke``: one measurement of 0.05 s
(one game at least) per figure.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import parse_args, print_versions

from arena.learn import env, legal
from benchmarks.engine import CONFIGS, measure, play_dou_dizhu  # the same games and loops


def env_steps(e, seed: int) -> int:
    """One random match through the environment; returns the decisions made."""
    randrange = random.Random(seed).randrange
    e.reset(seed=seed)
    steps = 0
    last, step = e.last, e.step
    for _ in e.agent_iter():
        observation, _, terminated, truncated, _ = last()
        if terminated or truncated:
            step(None)
            continue
        indices = legal(observation["action_mask"])
        step(int(indices[randrange(indices.size)]))
        steps += 1
    return steps


def observation_tensor(state: Any, player: int) -> np.ndarray:
    return np.asarray(state.observation_tensor(player), np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements per figure")
    parser.add_argument("--games", help="comma-separated game ids to run")
    args = parse_args(parser, smoke={"seconds": 0.05, "repeat": 1})
    print_versions("open_spiel", "pettingzoo", "numpy")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    try:
        import pyspiel
    except ImportError:
        sys.exit('OpenSpiel is the baseline: pip install -e ".[bench]"')
    ddz = pyspiel.load_game("dou_dizhu")
    wanted = set(args.games.split(",")) if args.games else None
    configs = [c for c in CONFIGS if not wanted or c[1] in wanted]
    envs = {
        label: env(game, players=players, options=options)
        for label, game, players, options in configs
    }

    baseline: list[float] = []
    ours: dict[str, list[float]] = {label: [] for label, *_ in configs}
    ratios: dict[str, list[float]] = {label: [] for label, *_ in configs}
    for _ in range(args.repeat):
        base = measure(lambda i: play_dou_dizhu(ddz, observation_tensor, i), args.seconds)[1]
        baseline.append(base)
        for label, *_ in configs:
            r = measure(lambda i, e=envs[label]: env_steps(e, i), args.seconds)[1]
            ours[label].append(r)
            ratios[label].append(r / base)

    def spread(values: list[float], fmt: str) -> str:
        return "/".join(
            format(v, fmt) for v in (min(values), statistics.median(values), max(values))
        )

    print(f"{'environment':<30}{'steps/s min/median/max':>28}{'vs dou_dizhu min/median/max':>30}")
    print(f"{'openspiel dou_dizhu (C++)':<30}{spread(baseline, '.0f'):>28}{'1.00x':>30}")
    for label, _, players, _ in configs:
        name = f"{label} ({players}p)"
        print(f"{name:<30}{spread(ours[label], '.0f'):>28}{spread(ratios[label], '.2f') + 'x':>30}")


if __name__ == "__main__":
    main()
