"""What a contestant writes: a ``Bot`` subclass, or a plain function ``act(view,
legal_actions)`` that ``as_bot`` turns into a ``FunctionBot``."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arenabot.protocol import API_VERSION

Action = dict[str, Any]
ActFunction = Callable[[dict[str, Any], list[Action]], Any]


class Bot:
    """Subclass it, set the attributes and write ``act``.

    ``act(view, legal_actions)`` returns one element of ``legal_actions`` (a dict), or a
    pair ``(action, memo)`` where the memo is a short text kept in the match replay.
    ``start(info)`` and ``end(info)`` receive the whole ``/start`` and ``/end`` bodies;
    override ``on_act(request)`` instead of ``act`` to read the whole ``/act`` body
    (``match_id``, ``seat``, ``deadline_ms``...).

    The arena plays many matches at once.  Unless ``thread_safe`` is true the server
    calls these methods one at a time, from one thread, and tells the arena so (its
    ``GET /`` declares ``"capacity": 1``): the arena then sends one request at a time and
    does not count the wait against the bot's deadline.  A thread-safe bot is called
    from several threads at once (``capacity``: the server's ``threads``).
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
    """The ``/act`` answer for what ``on_act`` returned: ``{"action": ...}``, plus
    ``"memo"`` for ``(action, memo)`` (public: kept in the replay), plus ``"debug"`` for
    ``(action, memo, debug)`` (private: shown only to the bot's owner and the organisers,
    beside the decision); any memo or debug that is not text is turned into text, None
    leaves it out."""
    memo = debug = None
    if isinstance(result, tuple):
        if len(result) not in (2, 3):
            raise TypeError(
                "act must return an action, or (action, memo), or (action, memo, debug)"
            )
        action, memo, debug = (*result, None) if len(result) == 2 else result
    else:
        action = result
    answer: dict[str, Any] = {"action": action}
    if memo is not None:
        answer["memo"] = memo if isinstance(memo, str) else str(memo)
    if debug is not None:
        answer["debug"] = debug if isinstance(debug, str) else str(debug)
    return answer


class FunctionBot(Bot):
    """A plain function ``act(view, legal_actions)`` as a bot: the simplest way to write
    one.  ``name`` defaults to the function's module name (its file's name when the file
    is run as a script); give ``games`` so that registration knows what it plays, and
    ``thread_safe=True`` when the function may be called from several threads at once
    (see ``Bot``)."""

    def __init__(
        self,
        act: ActFunction,
        *,
        name: str | None = None,
        author: str = "",
        version: str = "0",
        games: Sequence[str] = (),
        thread_safe: bool = False,
    ):
        if not callable(act):
            raise TypeError(f"a function bot needs a function, not {type(act).__name__}")
        self.function = act
        self.name = name or _default_name(act)
        self.author = author
        self.version = version
        self.games = list(games)
        if not isinstance(thread_safe, bool):
            raise TypeError(f"thread_safe is True or False, not {thread_safe!r}")
        self.thread_safe = thread_safe

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Any:
        return self.function(view, legal_actions)


def as_bot(obj: Any, **info: Any) -> Bot:
    """``obj`` as a ``Bot``: a ``Bot`` as it is, a ``Bot`` subclass built with no
    arguments, a function ``act(view, legal_actions)`` as a ``FunctionBot`` (``info``:
    its ``name``, ``author``, ``version``, ``games``, ``thread_safe``), or a function of
    no arguments that returns a ``Bot``.  TypeError for anything else."""
    if isinstance(obj, type) and issubclass(obj, Bot):
        obj = obj()
    elif callable(obj) and not isinstance(obj, Bot | type):
        if _accepts(obj, 2):
            return FunctionBot(obj, **info)
        if _accepts(obj, 0):
            obj = obj()
            if not isinstance(obj, Bot):
                raise TypeError(f"the bot factory returned {type(obj).__name__}, not a Bot")
    if not isinstance(obj, Bot):
        raise TypeError(
            "a bot is a Bot subclass, a Bot or a function act(view, legal_actions), "
            f"not {type(obj).__name__}"
        )
    if info:
        raise TypeError(
            f"{', '.join(sorted(info))}: set them as attributes of the Bot class instead"
        )
    return obj


def _accepts(function: Callable[..., Any], n_positional: int) -> bool:
    """Whether ``function`` can be called with that many positional arguments."""
    try:
        inspect.signature(function).bind(*([None] * n_positional))
    except TypeError:
        return False
    except ValueError:  # no signature to read (some builtins): assume it can
        return True
    return True


def _default_name(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None) or ""
    if module == "__main__":
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        module = Path(main_file).stem if main_file else ""
    return module.rpartition(".")[2] or getattr(function, "__name__", "bot")
