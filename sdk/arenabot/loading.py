"""Loading a bot from its module or file (``bot.py:act``, ``mybot:MyBot``), as
``python -m arenabot.local`` and a hosted bot's runner (``arenabot.hosted``) do, with a
``UsageError`` in one line for every mistake.  Light on purpose: it imports no server,
no network module, so that a hosted bot starts fast."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

from arenabot.bot import Bot, as_bot


class UsageError(ValueError):
    """A mistake in how the runner was called (the bot, the game, an option, a number):
    the command line prints its text as one line and exits with status 2."""


def load_bot(spec: str) -> Bot:
    """``module:name`` or ``path/to/file.py:name``: a Bot subclass (built with no
    arguments), a Bot, a function ``act(view, legal_actions)`` or a factory of a Bot.
    ``UsageError`` saying what is wrong: no such module or file, a syntax error, an
    exception while importing it, no such name, not a bot."""
    if "://" in spec:
        raise UsageError(f"a bot URL starts with http:// or https://, not {spec!r}")
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr or not attr.isidentifier():
        raise UsageError(
            f"name the bot as module:name or file.py:name (e.g. mybot:act or bot.py:MyBot), "
            f"or give its URL, not {spec!r}"
        )
    return bot_named(import_bot_module(where), attr, spec)


def bot_named(module: ModuleType, attr: str, spec: str) -> Bot:
    """The bot ``attr`` of a loaded module (``spec`` names it in messages), as
    ``load_bot`` makes it."""
    where = spec.rpartition(":")[0] or spec
    if not hasattr(module, attr):
        found = bots_in(module)
        listed = f"bots in it: {', '.join(found)}" if found else "it defines no bot"
        raise UsageError(f"{where} has no {attr!r}; {listed}")
    obj = getattr(module, attr)
    if isinstance(obj, type) and issubclass(obj, Bot):
        try:
            obj = obj()
        except Exception as exc:  # arguments missing, or the bot's own constructor failed
            raise UsageError(f"{spec} could not be made: {_said(exc)}") from None
    try:
        if inspect.isfunction(obj) and _takes_two(obj):
            return as_bot(obj, **module_info(module))
        return as_bot(obj)
    except TypeError as exc:
        raise UsageError(f"{spec} is not a bot: {exc}") from None
    except Exception as exc:  # a factory that failed
        raise UsageError(f"{spec} could not be made: {_said(exc)}") from None


def import_bot_module(where: str) -> ModuleType:
    """The module of a bot: a file path (``.py`` or with a ``/``) or a module name."""
    is_file = where.endswith(".py") or "/" in where or os.sep in where
    try:
        if is_file:
            path = Path(where)
            if not path.is_file():
                raise UsageError(f"no such file: {where}")
            folder = str(path.resolve().parent)
            if folder not in sys.path:
                sys.path.insert(0, folder)  # the bot's own modules beside it
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise UsageError(f"{where} is not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[path.stem]
                raise
            return module
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # a bot module in the current directory
        return importlib.import_module(where)
    except UsageError:
        raise
    except SyntaxError as exc:
        raise UsageError(
            f"{_shown(exc.filename)}, line {exc.lineno}: {exc.msg} (the bot's code does not parse)"
        ) from None
    except ModuleNotFoundError as exc:
        if not is_file and exc.name is not None and (where + ".").startswith(exc.name + "."):
            raise UsageError(
                f"no module named {where!r} here or on the Python path (run from the bot's "
                "directory, or give its file: path/to/bot.py:act)"
            ) from None
        raise UsageError(f"importing {where} failed: {_said(exc)}") from None
    except Exception as exc:
        raise UsageError(f"importing {where} failed: {_said(exc)}") from None


def _said(exc: BaseException) -> str:
    """An exception in one line: its class, its text and where the bot's code raised it."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    sdk = str(Path(__file__).resolve().parent)
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith((sdk, "<frozen"))
    ]
    if frames:
        text += f" ({_shown(frames[-1].filename)}, line {frames[-1].lineno})"
    return text


def _shown(filename: str | None) -> str:
    """A file name as the user would type it: relative to here when it is below."""
    if not filename:
        return "?"
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive
        return filename
    return filename if relative.startswith("..") else relative


# a function bot's module declares what ``run(act, name=NAME, games=GAMES, ...)`` is given
# (as the starters of ``python -m arenabot new`` do): module name -> (keyword, type)
MODULE_INFO = {
    "NAME": ("name", str),
    "AUTHOR": ("author", str),
    "VERSION": ("version", str),
    "GAMES": ("games", list | tuple),
    "THREAD_SAFE": ("thread_safe", bool),
}


def module_info(module: ModuleType) -> dict[str, object]:
    """What a function bot's module declares about it (``MODULE_INFO``: its ``NAME``,
    ``GAMES``...), as the keywords of ``as_bot``; a value of the wrong type is left out."""
    info: dict[str, object] = {}
    for variable, (keyword, kind) in MODULE_INFO.items():
        value = getattr(module, variable, None)
        if isinstance(value, kind):
            if keyword == "games":
                if not all(isinstance(g, str) for g in value):  # type: ignore[attr-defined]
                    continue
                value = list(value)  # type: ignore[call-overload]
            info[keyword] = value
    return info


def _takes_two(function: object) -> bool:
    try:
        inspect.signature(function).bind(None, None)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def bots_in(module: ModuleType) -> list[str]:
    """The names in a module that are bots: Bot subclasses and instances defined there,
    and a function ``act(view, legal_actions)``; not the helpers a bot calls."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        kind = value if isinstance(value, type) else type(value)
        if issubclass(kind, Bot) and (kind.act is not Bot.act or kind.on_act is not Bot.on_act):
            names.append(name)  # a bot that decides (a base class with no act is not one)
        elif name == "act" and inspect.isfunction(value) and _takes_two(value):
            names.append(name)
    return names
