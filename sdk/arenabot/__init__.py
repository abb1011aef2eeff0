"""The card-bot arena SDK: write a ``Bot``, serve it over HTTP, try it locally.

::

    from arenabot import Bot, run

    class MyBot(Bot):
        name, games = "my-bot", ["cactus"]

        def act(self, view, legal_actions):
            return legal_actions[0]

    run(MyBot())  # python mybot.py --port 8000 --secret ...
"""

from arenabot.bot import Action, Bot, make_answer
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
from arenabot.server import BotServer, make_server, run, serve

__version__ = SDK_VERSION

__all__ = [
    "API_VERSION",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Action",
    "Bot",
    "BotServer",
    "ReplayGuard",
    "SignatureError",
    "__version__",
    "make_answer",
    "make_server",
    "run",
    "serve",
    "sign",
    "signed_headers",
    "verify",
]
