"""The card-bot arena SDK: write a ``Bot``, serve it over HTTP, try it locally.

::

    from arenabot import Bot, run

    class MyBot(Bot):
        name, games = "my-bot", ["cactus"]

        def act(self, view, legal_actions):
            return legal_actions[0]

    run(MyBot())  # python mybot.py --port 9000 --secret ...
                  # or, from a laptop: python mybot.py --connect URL --bot-id ID --secret ...

or, as a plain function::

    def act(view, legal_actions):
        return legal_actions[0]

    run(act, name="my-bot", games=["cactus"])

``python -m arenabot new GAME DIR`` writes a starter bot for a game.
"""

from typing import Any

from arenabot.bot import Action, Bot, FunctionBot, as_bot, make_answer
from arenabot.protocol import (
    API_VERSION,
    SDK_VERSION,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    ReplayGuard,
    SignatureError,
    sign,
    signed_headers,
    verify,
)

# the HTTP server and the outbound transport are imported when first used: a bot the
# arena hosts (arenabot.hosted) needs neither, and starts without their modules
_LAZY = {
    "DEFAULT_PORT": "arenabot.server",
    "BotServer": "arenabot.server",
    "BotService": "arenabot.server",
    "make_server": "arenabot.server",
    "serve": "arenabot.server",
    "ConnectClient": "arenabot.connect",
    "ConnectError": "arenabot.connect",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'arenabot' has no attribute {name!r}")


def run(bot: Any, argv: Any = None, **info: Any) -> None:
    """Serve ``bot`` from its module's command line: ``arenabot.server.run`` (its
    options: ``python mybot.py --help``)."""
    from arenabot.server import run as serve_from_command_line

    serve_from_command_line(bot, argv, **info)


__version__ = SDK_VERSION

__all__ = [
    "API_VERSION",
    "DEFAULT_PORT",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Action",
    "Bot",
    "BotServer",
    "BotService",
    "ConnectClient",
    "ConnectError",
    "FunctionBot",
    "ReplayGuard",
    "SignatureError",
    "__version__",
    "as_bot",
    "make_answer",
    "make_server",
    "run",
    "serve",
    "sign",
    "signed_headers",
    "verify",
]
