"""What the SDK's local runner (``arenabot.local``) uses of the arena: one small, stable
interface for playing matches in process, so that the SDK never reaches into the
referee's or the transports' modules, which change with the arena.

- the games: ``get_game(game_id)``, ``make_policy(game_id, name, rng)`` (a house policy)
  and ``OptionsError`` (options a game refuses);
- a match in process: ``Referee(max_strikes=, deadline_ms=).run(game, clients, seed,
  options)``, ``PolicyClient(policy, name)`` (a house policy seated as a client) and
  ``policy_rng(seed, seat)`` (its generator, fixed by the match seed and the seat);
- a bot already running: ``HttpClient(url, secret, pool=)`` (``info()`` is its ``GET /``),
  ``EndpointPool(url, max_connections=)`` (the requests in flight to it) and
  ``BotFault`` (what a bot's failed answer raises, with its ``kind``).

A change to any of these names or signatures is a change to the SDK too.
"""

from __future__ import annotations

from arena.games import get_game, make_policy
from arena.games.base import OptionsError
from arena.match.faults import BotFault
from arena.match.http_client import HttpClient
from arena.match.pools import EndpointPool
from arena.match.referee import PolicyClient, Referee, policy_rng

__all__ = [
    "BotFault",
    "EndpointPool",
    "HttpClient",
    "OptionsError",
    "PolicyClient",
    "Referee",
    "get_game",
    "make_policy",
    "policy_rng",
]
