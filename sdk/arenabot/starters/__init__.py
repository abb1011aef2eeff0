"""Starter bots, one per game, written by ``python -m arenabot new GAME DIR``.

Each module here is a complete bot: a plain function ``act(view, legal_actions)`` built on
that game's view helpers, served by ``run`` when the file is run as a script.  ``write``
copies one into a new directory with a README saying how to try, serve and register it.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

# game id -> (starter module, the game's name in the README)
STARTERS: dict[str, tuple[str, str]] = {
    "cactus": ("cactus", "Cactus"),
    "cactus-game": ("cactus_game", "Cactus Game"),
    "president": ("president", "Président"),
}
BOT_FILE = "bot.py"
NAME_LINE = re.compile(r'^NAME = "[^"\n]*"$', re.M)
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

README = """\
# {name}: a {title} bot

Written by `python -m arenabot new {game} {folder}`. `{file}` is the whole bot: the
function `act(view, legal_actions)` returns one of `legal_actions`. The keys of a view
are named by the helpers of `arenabot.views.{module}` (`python -m pydoc
arenabot.views.{module}`); `print(view)` in `act` shows the rest.

## Try it

Against the house bots, in-process (this needs the arena package installed next to
the SDK: `pip install -e .` in a checkout of the arena):

```sh
python -m arenabot.local {file}:act --game {game} --opponents {opponents} --matches 20
```

## Serve it

```sh
python {file}                          # http://127.0.0.1:9000/, signatures NOT checked
curl http://127.0.0.1:9000/            # what the arena sees at registration
```

`--port` (default 9000), `--host` (`0.0.0.0` to be reachable from other machines),
`--secret` (default: the `ARENA_BOT_SECRET` environment variable).

## Time

Each decision must be answered within its `deadline_ms` (2000 on a standard arena, plus
a small network grace). A late answer is a fault: the arena plays a default action for
the bot and counts a strike; after 3 strikes the bot plays the rest of the match on
default actions and ranks last. The arena plays many matches at once: `act` is called
for one decision at a time (`THREAD_SAFE = False` in `{file}`), and the arena, told so
by `GET /`, sends one request at a time and does not count the wait against the
deadline. A slow `act` makes its matches longer; it does not make them time out. Try it
as the arena plays it, several matches at once:

```sh
python -m arenabot.local {file}:act --game {game} --opponents {opponents} --concurrent 4
```

## Enter it in an arena

1. Choose a signing secret: 16 to 128 printable ASCII characters, no spaces
   (`python -c "import secrets; print(secrets.token_urlsafe(32))"`), and start the
   bot with it where the arena can reach it:
   `ARENA_BOT_SECRET=<secret> python {file} --host 0.0.0.0`.
2. Register it (the arena's `/bots/register` page, or `POST /api/bots`) with its name,
   endpoint, owner, `"games": ["{game}"]` and `"signing_secret": "<secret>"`. The arena
   calls `GET /` (never signed) first, then answers with an owner token: keep it.
3. Registered without a `signing_secret`, the bot gets one from the arena, shown once:
   restart the bot with it.

A wrong secret shows as faults on every decision, "HTTP 401: the bot refused the arena's
signature"; see "Signing your bot" in the SDK's README for that and for rotating a
secret.

## Play from a laptop

An arena cannot call a bot on a laptop, behind a home router or a campus network.
Register it with `"connect": true` instead of an endpoint (`POST /api/bots` with its
name, owner, `"games": ["{game}"]` and `"connect": true`: the answer holds its id, its
owner token and its signing secret, each shown once), and the bot connects out to the
arena itself, opening no port at all:

```sh
ARENA_BOT_SECRET=<secret> python {file} --connect https://arena.example --bot-id <id>
```

(or `ARENA_SERVER`, `ARENA_BOT_ID` and `ARENA_BOT_SECRET` in the environment; `--host`
and `--port` are for serving, not here). The same `act` plays, called one decision at a
time as above. A dropped network is reconnected by itself. Ctrl-C drains: the arena
starts no new match with the bot, the matches in play are played to their end, then
the bot says "drained" and exits; a second Ctrl-C stops at once. "another copy of bot
N connected to the arena and replaced this one" (exit status 1) means the bot was
started a second time, somewhere else: the arena plays with the newest copy only.
"""


class StarterError(Exception):
    """Why a starter cannot be written (an unknown game, a directory in the way)."""


def write(game: str, directory: str | Path, name: str | None = None) -> list[Path]:
    """Write the starter bot of ``game`` and its README into ``directory`` (created; it
    must not hold anything yet); the files written.  ``name`` (what ``GET /`` answers)
    defaults to the directory's name."""
    if game not in STARTERS:
        raise StarterError(f"unknown game {game!r}; games: {', '.join(STARTERS)}")
    module, title = STARTERS[game]
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise StarterError(f"{directory} is a file, not a directory")
    if folder.is_dir() and any(folder.iterdir()):
        raise StarterError(f"{directory} is not empty: give a new directory")
    if name is None:
        default = folder.resolve().name
        name = default if SAFE_NAME.fullmatch(default) else f"my-{game}-bot"
    elif not SAFE_NAME.fullmatch(name):
        raise StarterError(f"a bot name is 1 to 64 letters, digits, '.', '_' and '-', not {name!r}")
    source = resources.files(__name__).joinpath(f"{module}.py").read_text(encoding="utf-8")
    source, found = NAME_LINE.subn(f"NAME = {json.dumps(name)}", source, count=1)
    assert found == 1, f"the {module} starter has no NAME line"
    readme = README.format(
        name=name,
        title=title,
        game=game,
        module=module,
        folder=directory,
        file=BOT_FILE,
        opponents="heuristic,random" if game == "president" else "heuristic",
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        bot = folder / BOT_FILE
        bot.write_text(source, encoding="utf-8")
        notes = folder / "README.md"
        notes.write_text(readme, encoding="utf-8")
    except OSError as exc:
        raise StarterError(f"cannot write into {directory}: {exc.strerror or exc}") from None
    return [bot, notes]
