"""The ``Bot`` base class: what a contestant writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arenabot.protocol import API_VERSION

Action = dict[str, Any]


class Bot:
    """Subclass it, set the attributes and write ``act``.

    ``act(view, legal_actions)`` returns one element of ``legal_actions`` (a dict), or a
    pair ``(action, memo)`` where the memo is a short text kept in the match replay.
    ``start(info)`` and ``end(info)`` receive the whole ``/start`` and ``/end`` bodies;
    override ``on_act(request)`` instead of ``act`` to read the whole ``/act`` body
    (``match_id``, ``seat``, ``deadline_ms``...).

    The server runs one thread per connection and the arena may play several matches at
    once, so these methods may be called from several threads.  Unless ``thread_safe``
    is true the server calls them one at a time.
    """

    name: str = "bot"
    author: str = ""
    version: str = "0"
    games: Sequence[str] = ()
    thread_safe: bool = False

    def start(self, info: dict[str, Any]) -> None:
        """A match begins: ``match_id``, ``game``, ``options``, ``seat``, ``players``."""

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Any:
        """One decision: return an element of ``legal_actions`` or ``(action, memo)``."""
        raise NotImplementedError(f"{type(self).__name__} must define act(view, legal_actions)")

    def end(self, info: dict[str, Any]) -> None:
        """A match is over: ``match_id``, ``game``, ``seat``, ``outcome`` and the final
        ``view``."""

    def on_act(self, request: dict[str, Any]) -> Any:
        """The whole ``/act`` body; by default hands its view and legal actions to ``act``."""
        return self.act(request["view"], request["legal_actions"])

    def info(self) -> dict[str, Any]:
        """The answer to ``GET /``."""
        return {
            "apiversion": API_VERSION,
            "name": self.name,
            "author": self.author,
            "version": self.version,
            "games": list(self.games),
        }


def make_answer(result: Any) -> dict[str, Any]:
    """The ``/act`` answer for what ``on_act`` returned: ``{"action": ...}`` plus
    ``"memo"`` when one was given (any non-string memo is turned into text)."""
    if isinstance(result, tuple):
        if len(result) != 2:
            raise TypeError("act must return an action or a pair (action, memo)")
        action, memo = result
    else:
        action, memo = result, None
    answer: dict[str, Any] = {"action": action}
    if memo is not None:
        answer["memo"] = memo if isinstance(memo, str) else str(memo)
    return answer
