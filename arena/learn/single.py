"""One seat of a game as a Gymnasium ``Env``, the other seats played by opponents: house
policies (``"random"``, ``"heuristic"``), any :class:`arena.games.policy.Policy`, or any
function ``(view, legal_actions) -> action`` (a trained policy too).

For the usual single-agent libraries: ``reset`` deals a match and plays the opponents
until the learner is asked; ``step(index)`` answers for the learner and plays on until it
is asked again or the match ends.  An index outside the mask plays the request's default
action and says so in ``info["illegal_action"]``, as the referee plays a bot's default
action on a bad answer (no exception in the middle of someone's training run).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from arena.games import POLICIES, make_policy
from arena.games.base import Action, OptionsError
from arena.games.policy import Policy
from arena.learn.aec import ArenaEnv, Reward

Opponent = str | Policy | type[Policy] | Callable[[dict[str, Any], list[Action]], Action]


class _FunctionPolicy(Policy):
    name = "function"

    def __init__(self, act: Callable[[dict[str, Any], list[Action]], Action]):
        super().__init__(random.Random(0))
        self._act = act

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        return self._act(view, legal_actions)


class SingleAgentEnv(gymnasium.Env):
    """Seat ``seat`` (or a seat drawn at each reset when None) of ``game`` against
    ``opponents``: one opponent for every other seat, or one name for all of them.

    Observation and action space are the AEC environment's (:class:`ArenaEnv`); the
    reward is the learner's, at the end of the match; ``info`` holds the learner's
    ``seat`` and, at the end, the ``outcome``.  ``legal_actions()`` maps the legal indices
    to JSON actions, ``view()`` is the JSON view the observation encodes."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game: str,
        players: int | None = None,
        opponents: Opponent | Sequence[Opponent] = "random",
        seat: int | None = None,
        options: Mapping[str, Any] | None = None,
        preset: str | None = None,
        reward: str | Reward = "rank",
        render_mode: str | None = None,
    ):
        self.aec = ArenaEnv(game, players, options, preset, reward, render_mode)
        self.render_mode = render_mode
        n = self.aec.n_players
        if seat is not None and not (isinstance(seat, int) and 0 <= seat < n):
            raise OptionsError(f"seat must be None or 0..{n - 1}, not {seat!r}")
        self.fixed_seat = seat
        if isinstance(opponents, str | Policy | type) or callable(opponents):
            opponents = [opponents] * (n - 1)  # type: ignore[list-item]
        if not isinstance(opponents, Sequence):
            raise OptionsError(
                "opponents must be a policy name, a Policy, a function or a list of them, "
                f"not {opponents!r}"
            )
        self.opponents = list(opponents)
        if len(self.opponents) != n - 1:
            raise OptionsError(f"{n - 1} opponents are needed, not {len(self.opponents)}")
        for opponent in self.opponents:
            if not (isinstance(opponent, str | Policy | type) or callable(opponent)):
                raise OptionsError(
                    f"an opponent must be a policy name, a Policy or a function, not {opponent!r}"
                )
            if isinstance(opponent, str) and opponent not in POLICIES[self.aec.game.id]:
                names = ", ".join(POLICIES[self.aec.game.id])
                raise OptionsError(f"no house policy {opponent!r}; policies: {names}")
        agent = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent)
        self.action_space = self.aec.action_space(agent)
        self._seats = random.Random()
        self.seat = 0 if seat is None else seat
        self._policies: dict[int, Policy] = {}

    def _policy(self, opponent: Opponent, seat: int, seed: int) -> Policy:
        rng = random.Random(f"opponent:{seed}:{seat}")
        if isinstance(opponent, str):
            return make_policy(self.aec.game.id, opponent, rng)
        if isinstance(opponent, type) and issubclass(opponent, Policy):
            return opponent(rng)
        if isinstance(opponent, Policy):
            return opponent
        return _FunctionPolicy(opponent)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._seats = random.Random(seed)
        self.aec.reset(seed=seed if seed is not None else self._seats.getrandbits(63))
        match_seed = self.aec.seed
        n = self.aec.n_players
        self.seat = self.fixed_seat if self.fixed_seat is not None else self._seats.randrange(n)
        others = [s for s in range(n) if s != self.seat]
        self._policies = {
            s: self._policy(o, s, match_seed) for s, o in zip(others, self.opponents, strict=True)
        }
        names = [
            "learner" if s == self.seat else f"opponent-{s}" for s in range(n)
        ]  # what /start sends a bot: the seats' names
        for s, policy in self._policies.items():
            policy.start(
                {
                    "match_id": f"learn-{match_seed}",
                    "game": self.aec.game.id,
                    "options": self.aec.game.options_json(self.aec.match.options),
                    "seat": s,
                    "players": names,
                }
            )
        self._play_opponents()
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        me = aec.possible_agents[self.seat]
        if aec.agent_selection != me or aec.terminations[me]:
            raise RuntimeError("the match is over: call reset()")
        illegal = False
        try:
            index = int(action)
        except (TypeError, ValueError):
            index = -1
        if index in aec.legal_actions(me):
            aec.step(index)
        else:  # the referee's rule: the request's default action, noted
            illegal = True
            aec.step_action(aec.request(me).default_action)  # type: ignore[union-attr]
        self._play_opponents()
        terminated = bool(aec.terminations.get(me, True))
        reward = float(aec._cumulative_rewards.get(me, 0.0)) if terminated else 0.0
        info = self._info()
        if illegal:
            info["illegal_action"] = True
        if terminated:
            for s, policy in self._policies.items():  # what /end sends a bot
                policy.end(
                    {
                        "match_id": f"learn-{aec.seed}",
                        "game": aec.game.id,
                        "seat": s,
                        "outcome": aec.infos[me]["outcome"],
                        "view": aec.game.view(aec.match, s),
                    }
                )
        return self._observation(), reward, terminated, False, info

    def _play_opponents(self) -> None:
        """Opponents answer until the learner is asked or the match is over."""
        aec = self.aec
        me = aec.possible_agents[self.seat]
        while not aec.terminations[me] and aec.agent_selection != me:
            agent = aec.agent_selection
            request = aec.request(agent)
            assert request is not None
            policy = self._policies[request.seat]
            aec.step_action(policy.act(aec.view(agent), request.legal_actions))

    def legal_actions(self) -> dict[int, Action]:
        """The learner's legal actions now, by index (empty once the match is over)."""
        return self.aec.legal_actions(self.aec.possible_agents[self.seat])

    def view(self) -> dict[str, Any]:
        """The JSON view the learner's observation encodes."""
        return self.aec.view(self.aec.possible_agents[self.seat])

    def _observation(self) -> dict[str, np.ndarray]:
        return self.aec.observe(self.aec.possible_agents[self.seat])

    def _info(self) -> dict[str, Any]:
        me = self.aec.possible_agents[self.seat]
        info: dict[str, Any] = {"seat": self.seat}
        if self.aec.terminations[me]:
            info["outcome"] = self.aec.infos[me]["outcome"]
        return info

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


def single_agent_env(*args: Any, **kwargs: Any) -> SingleAgentEnv:
    """A Gymnasium environment of one seat of a game: ``single_agent_env(game, players=4,
    opponents="random", seat=None, options=None, preset=None, reward="rank",
    render_mode=None)``, the arguments of :class:`SingleAgentEnv`."""
    return SingleAgentEnv(*args, **kwargs)
