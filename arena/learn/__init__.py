"""Learning environments: every game of the arena as a PettingZoo ``AECEnv``
(:func:`env`) and one seat of it as a Gymnasium ``Env`` against house policies or any
opponents (:func:`single_agent_env`).

Optional: ``pip install -e ".[learn]"`` (PettingZoo, Gymnasium); the server never imports
this package.  Observations and actions come from each game's encoding
(``arena/games/<game>/encoding.py``), documented in docs/learn/.
"""

from __future__ import annotations

try:
    import gymnasium  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as missing:  # pragma: no cover - depends on the install
    raise ImportError(
        f"arena.learn needs the 'learn' extra ({missing.name} is missing): "
        'pip install -c constraints.txt -e ".[learn]"'
    ) from missing

from arena.learn.aec import REWARDS, ArenaEnv, env, legal, rank_reward, win_reward
from arena.learn.single import SingleAgentEnv, single_agent_env

__all__ = [
    "REWARDS",
    "ArenaEnv",
    "SingleAgentEnv",
    "env",
    "legal",
    "rank_reward",
    "single_agent_env",
    "win_reward",
]
