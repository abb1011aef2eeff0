"""Train a :class:`~sample_bots.learned.policy.LinearPolicy` with numpy only::

    python -m sample_bots.learned.train --game president --players 4 --minutes 3 \\
        --out president.npz [--seed 0] [--workers 2]

REINFORCE with a baseline: each batch plays matches of ``single_agent_env`` against house
random players (``--opponents heuristic``: the house heuristic; ``--init FILE``: start from
saved weights), the learner's seat drawn each match, sampling from the softmax; every
decision of a match is credited with the match's reward (``rank``: +1 first ... -1 last)
minus a running mean of the rewards, over a running deviation.  Workers play the matches
of a batch in parallel processes (each with the current weights); the main process sums
their gradients and takes one Adam step.  Progress is printed every few seconds; the file
is written at the end (and at an interrupt).

The boundary: the learner sees only what ``arena.learn`` gives a seat (its encoded view
and action mask), as a bot would.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.games.base import OptionsError
from sample_bots.learned.policy import LinearPolicy, WeightsError

DEFAULT_GAME = "president"
DEFAULT_PLAYERS = 4
BATCH = 16  # matches per worker per Adam step


class Adam:
    """Adam ascent on a list of arrays (in place)."""

    def __init__(self, params: list[np.ndarray], lr: float, b1: float = 0.9, b2: float = 0.999):
        self.params, self.lr, self.b1, self.b2 = params, lr, b1, b2
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        scale = self.lr * np.sqrt(1 - self.b2**self.t) / (1 - self.b1**self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            p += scale * m / (np.sqrt(v) + 1e-8)


# -- playing matches (in a worker process, or in the main one) --------------------------------
_ENV: dict[tuple[Any, ...], Any] = {}


def _env(game: str, players: int, options: Mapping[str, Any], reward: str, opponents: str) -> Any:
    """One environment per process and configuration (made once: it checks the options)."""
    from arena.learn import single_agent_env

    key = (game, players, json.dumps(options, sort_keys=True), reward, opponents)
    if key not in _ENV:
        _ENV[key] = single_agent_env(game, players, opponents, None, options, reward=reward)
    return _ENV[key]


def play_batch(job: dict[str, Any]) -> dict[str, Any]:
    """Play ``job["seeds"]`` matches with the job's weights, sampling; return the reward of
    each match and the REINFORCE gradient sums (rows of the actions met only)."""
    from arena.learn import legal

    policy = LinearPolicy(job["game"], job["players"], job["options"], job["weights"], job["bias"])
    env = _env(job["game"], job["players"], job["options"], job["reward"], job["opponents"])
    rng = np.random.default_rng(job["rng"])
    baseline, scale = job["baseline"], job["scale"]
    grad_w = np.zeros_like(policy.weights)
    grad_b = np.zeros_like(policy.bias)
    touched = np.zeros(policy.n_actions, bool)
    rewards, decisions = [], 0
    for seed in job["seeds"]:
        obs, _ = env.reset(seed=int(seed))
        steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        done, reward = False, 0.0
        while not done:
            observation = obs["observation"]
            indices = legal(obs["action_mask"])
            if indices.size == 1:  # a forced move teaches nothing
                obs, reward, done, _, _ = env.step(int(indices[0]))
                continue
            j, p = policy.sample(observation, indices, rng)
            g = -p
            g[j] += 1.0  # d log softmax_j / d logits
            steps.append((observation, indices, g))
            obs, reward, done, _, _ = env.step(int(indices[j]))
        rewards.append(reward)
        decisions += len(steps)
        advantage = (reward - baseline) / scale
        for observation, indices, g in steps:
            g = g * advantage
            grad_w[indices] += np.outer(g, observation)
            grad_b[indices] += g
            touched[indices] = True
    rows = np.flatnonzero(touched)
    return {
        "rewards": rewards,
        "decisions": decisions,
        "rows": rows,
        "grad_w": grad_w[rows],
        "grad_b": grad_b[rows],
    }


# -- the loop ---------------------------------------------------------------------------------
def train(
    game: str = DEFAULT_GAME,
    players: int = DEFAULT_PLAYERS,
    seconds: float = 180.0,
    out: str | None = None,
    seed: int = 0,
    workers: int = 2,
    options: Mapping[str, Any] | None = None,
    reward: str = "rank",
    lr: float = 0.01,
    batch: int = BATCH,
    quiet: bool = False,
    command: str | None = None,
    max_steps: int | None = None,
    opponents: str = "random",
    init: str | None = None,
) -> LinearPolicy:
    """Train for ``seconds`` of wall time (at least one batch), or ``max_steps`` Adam
    steps when given (a run that replays exactly: the same seed, the same weights), and
    return the policy; save it to ``out`` when given."""
    options = dict(options or {})
    policy = LinearPolicy(game, players, options)
    if init is not None:  # go on from saved weights (e.g. random, then heuristic opponents)
        start = LinearPolicy.load(init)
        if start.game != policy.game:
            raise OptionsError(f"--init {init} is a {start.game} policy, not {policy.game}")
        policy.weights, policy.bias = start.weights, start.bias
    _env(policy.game, players, options, reward, opponents)  # bad options fail here, not in the pool
    adam = Adam([policy.weights, policy.bias], lr)
    pool = None
    if workers > 1:
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        pool = context.Pool(workers)
    log = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    log(
        f"training a linear policy for {policy.game}, {players} players, options {options}: "
        f"{policy.size} values -> {policy.n_actions} actions; against {opponents}; "
        f"{workers} worker(s), "
        f"{batch} matches per worker per step, lr {lr}"
    )
    start = time.monotonic()
    baseline, spread = 0.0, 1.0  # running mean and deviation of the rewards
    matches, decisions, step = 0, 0, 0
    recent: list[float] = []
    shown = start
    try:
        while step == 0 or (
            step < max_steps if max_steps is not None else time.monotonic() - start < seconds
        ):
            jobs = [
                {
                    "game": policy.game,
                    "players": players,
                    "options": options,
                    "reward": reward,
                    "opponents": opponents,
                    "weights": policy.weights,
                    "bias": policy.bias,
                    "baseline": baseline,
                    "scale": spread,
                    # seeds apart from the evaluation's (sample_bots.learned.evaluate)
                    "seeds": [seed * 10**9 + matches + w * batch + i for i in range(batch)],
                    "rng": [seed, step, w],
                }
                for w in range(max(1, workers))
            ]
            results = pool.map(play_batch, jobs) if pool else [play_batch(j) for j in jobs]
            grad_w = np.zeros_like(policy.weights)
            grad_b = np.zeros_like(policy.bias)
            rewards = []
            for r in results:
                grad_w[r["rows"]] += r["grad_w"]
                grad_b[r["rows"]] += r["grad_b"]
                rewards += r["rewards"]
                decisions += r["decisions"]
            n = len(rewards)
            adam.step([grad_w / n, grad_b / n])
            matches += n
            step += 1
            recent = (recent + rewards)[-500:]
            mean = float(np.mean(rewards))
            baseline = 0.9 * baseline + 0.1 * mean if step > 1 else mean
            spread = max(0.1, 0.9 * spread + 0.1 * float(np.std(rewards)))
            now = time.monotonic()
            if now - shown >= 10:
                shown = now
                wins = float(np.mean(np.isclose(recent, 1.0)))
                log(
                    f"[{now - start:6.1f}s] step {step:5d}  matches {matches:6d}  "
                    f"decisions {decisions:8d}  last {len(recent)}: mean reward "
                    f"{np.mean(recent):+.3f}, alone first {wins:.3f}"
                )
    except KeyboardInterrupt:
        log("interrupted: saving what was learned")
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    elapsed = time.monotonic() - start
    policy.info = {
        "command": command,
        "algorithm": "REINFORCE, running-mean baseline, Adam",
        "opponents": opponents,
        "reward": reward,
        "seed": seed,
        "init": init,
        "workers": workers,
        "lr": lr,
        "batch": batch,
        "seconds": round(elapsed, 1),
        "matches": matches,
        "decisions": decisions,
        "final_mean_reward": round(float(np.mean(recent)), 4) if recent else None,
    }
    log(
        f"{matches} matches ({decisions} decisions) in {elapsed:.0f} s, {step} steps; "
        f"last {len(recent)} matches: mean reward {policy.info['final_mean_reward']:+.3f}"
    )
    if out:
        policy.save(out)
        log(f"saved {out}")
    return policy


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sample_bots.learned.train",
        description="Train a linear softmax policy (numpy, REINFORCE) against random players.",
    )
    parser.add_argument("--game", default=DEFAULT_GAME, help="president (default), cactus...")
    parser.add_argument("--players", type=int, default=DEFAULT_PLAYERS, help="seats (default 4)")
    parser.add_argument("--minutes", type=float, default=3.0, help="wall time (default 3)")
    parser.add_argument("--out", required=True, help="the weights file to write (.npz)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the matches and draws")
    parser.add_argument("--workers", type=int, default=2, help="processes playing matches")
    parser.add_argument("--options", default=None, help='game options as JSON: {"rounds": 3}')
    parser.add_argument("--preset", default=None, help="a preset of the game")
    parser.add_argument("--reward", default="rank", choices=["rank", "win"])
    parser.add_argument(
        "--opponents", default="random", help="house policy of the other seats (default random)"
    )
    parser.add_argument("--init", default=None, help="start from these weights (.npz)")
    parser.add_argument("--lr", type=float, default=0.01, help="Adam step size (default 0.01)")
    parser.add_argument("--batch", type=int, default=BATCH, help="matches per worker per step")
    args = parser.parse_args(argv)
    try:
        import arena.learn  # noqa: F401  (the learn extra: its message says what to install)
    except ImportError as exc:
        parser.error(str(exc))
    if args.minutes <= 0 or args.workers < 1 or args.batch < 1 or args.players < 1:
        parser.error("--minutes, --workers, --batch and --players must be positive")
    try:
        options = json.loads(args.options) if args.options else {}
    except ValueError:
        options = None
    if not isinstance(options, dict):
        parser.error('--options must be a JSON object, e.g. {"rounds": 3}')
    if args.preset:
        options["preset"] = args.preset
    folder = Path(args.out).resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        parser.error(f"--out {args.out}: cannot write into {folder} (no such folder, or no right)")
    try:
        train(
            args.game,
            args.players,
            args.minutes * 60,
            args.out,
            args.seed,
            args.workers,
            options,
            args.reward,
            args.lr,
            args.batch,
            opponents=args.opponents,
            init=args.init,
            command=" ".join(["python -m sample_bots.learned.train", *(argv or sys.argv[1:])]),
        )
    except (OptionsError, WeightsError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
