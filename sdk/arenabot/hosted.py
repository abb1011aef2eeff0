"""The runner of a hosted bot: what the arena starts, inside its sandbox, to play one
seat of one match with the code the bot's owner uploaded.

It is the first code of the process: it bounds the process (``resource`` limits given
by the arena), keeps the arena's pipes to itself (fd 0 and 1 become ``/dev/null`` and
stderr, so a ``print`` goes to the bot's log, not into the protocol), loads ``bot.py``
from the bot's folder as ``python -m arenabot.local bot.py:act`` would, and then answers
the arena's requests, one JSON object per line each way:

    arena -> {"path": "/act", "body": {...the /act request of the HTTP protocol...}}
    runner <- {"id": <its decision_id>, "answer": {"action": ...}}    or  {"id", "error"}

The first line the runner writes is ``{"booted": true}``, once the limits are set and
before the bot's code is loaded (what fails before it is the sandbox, the arena's); the
second is ``{"ready": true, "info": ...}`` (the bot's ``GET /`` answer) or
``{"ready": false, "error": ...}``; ``/start`` and ``/end`` are answered
``{"id": null, "answer": {}}`` and their failures are only logged.  An exception in the
bot's code is printed to stderr (the bot's log) and answered as an error.  Standard
library only, like the rest of the SDK.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, BinaryIO

BOT_FILE = "bot.py"
ERROR_CAP = 300  # characters of an exception's text sent back to the arena


def _limit(limits: dict[str, int]) -> None:
    """Apply ``resource`` limits (names as ``RLIMIT_AS``): soft and hard, so that the
    bot's code cannot raise them again."""
    import resource

    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))


def _private_pipes() -> tuple[BinaryIO, BinaryIO]:
    """The arena's pipes (fd 0 and 1) moved out of the bot's way: fd 0 reads /dev/null
    and fd 1 writes to stderr, so that ``input()`` and ``print`` cannot garble the
    protocol."""
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115 (the process's own, for its life)
    sys.stdout = sys.stderr
    return requests, answers


def load(folder: str) -> Any:
    """The bot in ``folder/bot.py``: its ``act`` function, else the bot class or object
    it defines (``arenabot.local``'s rules); ``arenabot.loading.UsageError`` says why not."""
    from arenabot import loading

    path = os.path.join(folder, BOT_FILE)
    if not os.path.isfile(path):
        raise loading.UsageError(f"there is no {BOT_FILE} at the top of the upload")
    module = loading.import_bot_module(path)
    names = ["act"] if callable(getattr(module, "act", None)) else loading.bots_in(module)
    if not names:
        raise loading.UsageError(
            f"{BOT_FILE} defines no bot: write a function act(view, legal_actions), or a "
            "class with an act method"
        )
    return loading.bot_named(module, names[0], f"{BOT_FILE}:{names[0]}")


def _send(answers: BinaryIO, message: dict[str, Any]) -> None:
    """One line to the arena: a JSON object."""
    answers.write(json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n")


def _said(exc: BaseException) -> str:
    return (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)[:ERROR_CAP]


def serve(bot: Any, requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer the arena's requests until it closes the pipe."""
    from arenabot.bot import make_answer

    for line in requests:
        try:
            message = json.loads(line)
            path, body = message["path"], message["body"]
        except (ValueError, KeyError, TypeError):
            print("the arena sent a line the runner does not understand", file=sys.stderr)
            continue
        reply: dict[str, Any] = {"id": body.get("decision_id") if path == "/act" else None}
        try:
            if path == "/act":
                reply["answer"] = make_answer(bot.on_act(body))
            elif path == "/start":
                bot.start(body)
                reply["answer"] = {}
            else:
                bot.end(body)
                reply["answer"] = {}
            data = json.dumps(reply, separators=(",", ":")).encode() + b"\n"
        except Exception as exc:  # the bot's bug: its log shows it, the arena a fault
            traceback.print_exc()
            sys.stderr.flush()
            _send(answers, {"id": reply["id"], "error": _said(exc)})
            continue
        answers.write(data)


def main() -> None:
    settings = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _limit(settings.get("limits", {}))
    requests, answers = _private_pipes()
    _send(answers, {"booted": True})
    folder = settings.get("folder", os.getcwd())
    try:
        bot = load(folder)
        info = bot.info()
    except BaseException as exc:  # start-up failed: say why, in the log and to the arena
        from arenabot.loading import UsageError

        traceback.print_exc()
        sys.stderr.flush()
        reason = str(exc) if isinstance(exc, UsageError) else _said(exc)
        _send(answers, {"ready": False, "error": reason[:ERROR_CAP]})
        return
    _send(answers, {"ready": True, "info": info})
    serve(bot, requests, answers)


if __name__ == "__main__":
    main()
