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

from arenabot.bot import Action, Bot, FunctionBot, as_bot, make_answer
from arenabot.connect import ConnectClient, ConnectError
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
from arenabot.server import DEFAULT_PORT, BotServer, BotService, make_server, run, serve

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
