"""``PolicyBot``: an in-process house policy of ``arena.games`` as an SDK bot."""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from arenabot import Bot, run

from arena import __version__ as arena_version
from arena.games import get_game, make_policy
from arena.games.policy import Policy

MAX_OPEN = 1024  # (match, seat) policies kept at once: a match that never ends is dropped


class PolicyBot(Bot):
    """Plays ``policy`` of ``game`` in every match and seat it is given.

    Each (match, seat) gets its own policy, whose generator is seeded from the match id
    and the seat in ``start``: the same match replays the same decisions.  Policies keep
    their own state per (match, seat), so concurrent matches need no global lock."""

    author = "card-bot arena"
    version = arena_version
    thread_safe = True

    def __init__(self, game: str, policy: str):
        self.game = get_game(game).id
        self.policy = policy
        self.name = f"{self.game}-{policy}"
        self.games = [self.game]
        make_policy(self.game, policy, random.Random(0))  # fail now on an unknown policy
        self._policies: OrderedDict[tuple[str, int], Policy] = OrderedDict()
        self._lock = threading.Lock()

    def _policy(self, match_id: str, seat: int) -> Policy:
        """The policy of this match and seat, made on first use (also when ``/start``
        never arrived, e.g. the bot restarted mid-match)."""
        key = (match_id, seat)
        with self._lock:
            policy = self._policies.get(key)
            if policy is None:
                rng = random.Random(f"{self.name}:{match_id}:{seat}")
                policy = self._policies[key] = make_policy(self.game, self.policy, rng)
                if len(self._policies) > MAX_OPEN:
                    self._policies.popitem(last=False)
            return policy

    def start(self, info: dict[str, Any]) -> None:
        with self._lock:  # a match id seen again starts afresh
            self._policies.pop((info["match_id"], info["seat"]), None)
        self._policy(info["match_id"], info["seat"]).start(info)

    def on_act(self, request: dict[str, Any]) -> Any:
        policy = self._policy(request["match_id"], request["seat"])
        return policy.act(request["view"], request["legal_actions"])

    def end(self, info: dict[str, Any]) -> None:
        with self._lock:
            policy = self._policies.pop((info["match_id"], info["seat"]), None)
        if policy is not None:
            policy.end(info)


def main(game: str, policy: str, argv: Sequence[str] | None = None) -> None:
    """The command line of one sample bot: ``--port``, ``--host``, ``--secret``... or
    ``--connect URL --bot-id ID`` (see ``arenabot.run``)."""
    run(PolicyBot(game, policy), argv)
