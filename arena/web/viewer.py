"""Where the replay viewer's scripts are: the core (``static/replay.js``, no game in it)
and each game's drawing, ``viewer.js`` beside that game's rules in its own folder.

Only finds the files: the match page serves them (``pages``), a replay file inlines
them (``replay_file``).  A game is found through the registry, never by a list here.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from arena.games import GAMES

CORE = "replay.js"  # in the app's static folder
DRAWING = "viewer.js"  # in each game's folder


def core_script() -> str:
    """The text of the viewer's core."""
    return (resources.files("arena.web") / "static" / CORE).read_text(encoding="utf-8")


def drawing_path(game_id: str) -> Path | None:
    """The file of a registered game's drawing; None for an id the registry does not
    know or a game whose folder has no drawing."""
    game = GAMES.get(game_id)
    if game is None:
        return None
    # the game's folder: the package of the module its class is defined in
    module = sys.modules[type(game).__module__]
    path = Path(module.__file__ or "").parent / DRAWING
    return path if path.is_file() else None


def drawing_script(game_id: str) -> str | None:
    """The text of a game's drawing (see :func:`drawing_path`)."""
    path = drawing_path(game_id)
    return None if path is None else path.read_text(encoding="utf-8")
