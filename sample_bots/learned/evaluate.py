"""How well a saved policy plays, against the random policy in the same seats and seeds::

    python -m sample_bots.learned.evaluate --weights president.npz --matches 2000 \\
        [--opponents random] [--policy both|learned|random] [--seed N]

Each match ``m`` is ``single_agent_env``'s match of seed ``seed + m`` (the same deal, the
same learner's seat, drawn from the seed, the same opponents' generators) played once by
the saved policy (greedy) and once by the random policy (uniform over the legal indices).
Printed for each: the first-place rate (shared or not, as the arena's tables count a
win) with a 95% Wilson interval, and the mean rank reward (+1 alone first ... -1 alone
last; 0 on average for a random player among random players) with a 95% normal interval.
A random player among random players is first in 1/players of matches plus its share of
the matches whose first place is shared (equal totals, PR-12): a little more than 1/4.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sample_bots.learned.policy import LinearPolicy, WeightsError

EVAL_SEED = 7_000_000  # far from the training seeds (seed * 10**9 + match number)
Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound near 0 and 1, unlike p +- z*se)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """The mean and its normal interval (z times the standard error)."""
    a = np.asarray(values, float)
    mean = float(a.mean())
    half = z * float(a.std(ddof=1)) / math.sqrt(a.size) if a.size > 1 else math.inf
    return mean, mean - half, mean + half


def evaluate(
    weights: str | Path | LinearPolicy,
    matches: int = 2000,
    opponents: str | Sequence[str] = "random",
    policy: str = "learned",
    seed: int = EVAL_SEED,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Play ``matches`` matches of ``single_agent_env`` with ``policy`` (``"learned"``: the
    weights, greedy; ``"random"``: uniform over the legal indices) in the seat each seed
    draws; players and options default to those the weights were trained with.  Returns
    the counts, the first-place rate with its 95% Wilson interval and the mean rank reward
    with its 95% normal interval."""
    from arena.learn import legal, single_agent_env

    learned = weights if isinstance(weights, LinearPolicy) else LinearPolicy.load(weights)
    if policy not in ("learned", "random"):
        raise ValueError(f"policy is 'learned' or 'random', not {policy!r}")
    players = learned.players if players is None else players
    options = learned.options if options is None else dict(options)
    env = single_agent_env(learned.game, players, opponents, None, options, reward="rank")
    draw = np.random.default_rng([seed, 1])  # the random policy's own generator
    rewards, wins, decisions = [], 0, 0
    for m in range(matches):
        obs, info = env.reset(seed=seed + m)
        done = False
        while not done:
            if policy == "learned":
                index = learned.choose(obs["observation"], obs["action_mask"])
            else:
                index = int(draw.choice(legal(obs["action_mask"])))
            obs, reward, done, _, info = env.step(index)
            decisions += 1
        rewards.append(reward)
        wins += info["outcome"]["ranks"][info["seat"]] == 1
    win_lo, win_hi = wilson(wins, matches)
    mean, lo, hi = mean_interval(rewards)
    return {
        "game": learned.game,
        "players": players,
        "options": options,
        "opponents": opponents,
        "policy": policy,
        "seed": seed,
        "matches": matches,
        "decisions": decisions,
        "wins": wins,
        "win_rate": wins / matches,
        "win_ci": (win_lo, win_hi),
        "mean_reward": mean,
        "reward_ci": (lo, hi),
        "chance_win_rate": 1 / players,
    }


def describe(result: dict[str, Any]) -> str:
    lo, hi = result["win_ci"]
    rlo, rhi = result["reward_ci"]
    return (
        f"{result['policy']:<8} {result['matches']} matches: first {result['wins']} "
        f"= {result['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]  mean rank reward "
        f"{result['mean_reward']:+.3f} [{rlo:+.3f}, {rhi:+.3f}]"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sample_bots.learned.evaluate",
        description="Win rate and mean rank reward of a saved policy, and of the random "
        "policy in the same seats and seeds, with 95%% intervals.",
    )
    parser.add_argument(
        "--weights",
        default=str(Path(__file__).resolve().parent / "president.npz"),
        help="the .npz written by train (default: the committed president.npz)",
    )
    parser.add_argument("--matches", type=int, default=2000, help="matches (default 2000)")
    parser.add_argument(
        "--opponents", default="random", help="house policy of the other seats (default random)"
    )
    parser.add_argument(
        "--policy",
        default="both",
        choices=["both", "learned", "random"],
        help="which to play: the saved policy, the random one, or both (default)",
    )
    parser.add_argument("--seed", type=int, default=EVAL_SEED, help="seed of the first match")
    parser.add_argument("--players", type=int, default=None, help="default: the file's")
    parser.add_argument(
        "--options", default=None, help="game options as JSON (default: the file's)"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    try:
        import arena.learn  # noqa: F401  (the learn extra: its message says what to install)
    except ImportError as exc:
        parser.error(str(exc))
    if args.matches < 2:
        parser.error("--matches must be at least 2")
    from arena.games.base import OptionsError

    try:
        options = json.loads(args.options) if args.options else None
    except ValueError:
        options = []
    if options is not None and not isinstance(options, dict):
        parser.error('--options must be a JSON object, e.g. {"rounds": 3}')
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    which = ["learned", "random"] if args.policy == "both" else [args.policy]
    try:
        learned = LinearPolicy.load(args.weights)
        players = learned.players if args.players is None else args.players
        if len(opponents) == 1:
            opponents = opponents * (players - 1)
        results = []
        for name in which:
            result = evaluate(
                learned, args.matches, opponents, name, args.seed, args.players, options
            )
            results.append(result)
            if not args.json:
                if len(results) == 1:
                    print(
                        f"{result['game']}, {result['players']} players, options "
                        f"{result['options']}, against {','.join(opponents)}; first = "
                        f"first place, shared or not (chance: {result['chance_win_rate']:.3f} "
                        "plus the shared first places)"
                    )
                print(describe(result), flush=True)
    except (WeightsError, OptionsError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
