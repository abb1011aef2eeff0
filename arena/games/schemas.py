"""Each game's JSON Schemas (draft 2020-12) of what a bot receives and answers.

A game describes its wire in ``arena/games/<game>/schema.py``: the ``view`` (every key,
its type, the game's fixed sets as enums, a description per key, no other key), each
action type and each event type.  This module assembles them into one document per game
(served at ``GET /api/games/<id>/schema`` and shipped as ``docs/schemas/<id>.json``), and
builds the real example of each rules document's section "What your bot receives and
answers".  tests/test_game_schemas.py is what keeps the schemas true: it validates the
views and legal actions of random matches under every option and preset against them.

Regenerate the shipped files after changing a schema::

    python -m arena.games.schemas --write docs/schemas
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from arena.games import GAMES, get_game
from arena.games.base import JSON
from arena.games.cactus import schema as cactus_schema
from arena.games.cactus_game import schema as cactus_game_schema
from arena.games.options import JSON_SCHEMA_DIALECT
from arena.games.president import schema as president_schema
from arena.games.schema_kit import DEFS, Schema, action_ref, array, integer, obj, ref, string

# the wire schema module of each game, by game id (an explicit list, as the registry's)
_MODULES: dict[str, ModuleType] = {
    "cactus": cactus_schema,
    "cactus-game": cactus_game_schema,
    "president": president_schema,
}
DOCUMENT_KEYS = ("game", "title", "view", "actions", "act_request")


def document(game_id: str) -> dict[str, JSON]:
    """The schemas of ``game_id`` (an OptionsError names the games if it is unknown):

    - ``view``: the ``view`` of every request and of ``/end``;
    - ``actions``: action type -> the schema of that action (every legal action is valid
      against the one its ``type`` names);
    - ``act_request``: the body of ``POST /act`` (its answer is ``{"action": <one of
      legal_actions>}``, docs/protocol.md).

    Each event type's schema is the view's definition ``event_<type>``.  Each schema holds
    for every option and preset of the game, and is complete on its own: it carries, under
    ``$defs``, every definition it refers to.  Pure: a new document each time (the caller
    may change it)."""
    game = get_game(game_id)
    wire = _MODULES[game.id]
    defs: dict[str, Schema] = {
        **wire.DEFS,
        **{f"action_{kind}": schema for kind, schema in wire.ACTIONS.items()},
        **{f"event_{kind}": schema for kind, schema in wire.EVENTS.items()},
        "view": wire.VIEW,
        "action": {
            "description": "One of the game's actions.",
            "anyOf": [action_ref(kind) for kind in wire.ACTIONS],
        },
    }
    act_request = obj(
        f"The body of POST /act for {game.title} (docs/protocol.md).",
        {
            "match_id": string("The match."),
            "decision_id": {
                **string("This decision, step:seat; the same id asked again is a retry."),
                "pattern": "^[0-9]+:[0-9]+$",
            },
            "game": {"const": game.id, "description": "The game id."},
            "seat": integer("Your seat.", 0, game.max_players - 1),
            "view": ref("view", "What your seat may know."),
            "legal_actions": array(
                ref("action"), "Every action allowed now; answer with exactly one of them.", 1
            ),
            "deadline_ms": integer("Milliseconds you have to answer, from the request.", 0),
            "time_bank_ms": integer(
                "Milliseconds left of your time bank in this match (0: none): an answer "
                "past deadline_ms draws the overage from it instead of being a fault.",
                0,
            ),
        },
        {
            "request_id": {
                **string(
                    "Fresh for every HTTP request (32 hex digits): a bot that checks "
                    "signatures refuses one it has seen."
                ),
                "pattern": "^[0-9a-f]{32}$",
            }
        },
    )
    title = game.title
    return {
        "game": game.id,
        "title": title,
        "view": _bundle(wire.VIEW, defs, f"{title} view"),
        "actions": {
            kind: _bundle(s, defs, f"{title} action {kind}") for kind, s in wire.ACTIONS.items()
        },
        "act_request": _bundle(act_request, defs, f"{title} POST /act"),
    }


def _bundle(schema: Schema, defs: Mapping[str, Schema], title: str) -> Schema:
    """``schema`` as a document of its own (a copy): the dialect and a title first, then
    the schema, then the definitions it refers to, directly or not, in ``defs``'s order."""
    needed: set[str] = set()
    todo = [schema]
    while todo:
        for name in _references(todo.pop()):
            if name not in needed:
                needed.add(name)
                todo.append(defs[name])
    body = {k: v for k, v in copy.deepcopy(schema).items() if k != "title"}
    bundled: Schema = {"$schema": JSON_SCHEMA_DIALECT, "title": title, **body}
    if needed:
        bundled["$defs"] = {name: copy.deepcopy(s) for name, s in defs.items() if name in needed}
    return bundled


def _references(schema: JSON) -> list[str]:
    """The names of the definitions ``schema`` refers to (``ref``), in order."""
    found: list[str] = []
    todo = [schema]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            target = item.get("$ref")
            if isinstance(target, str) and target.startswith(DEFS):
                found.append(target[len(DEFS) :])
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


# -- the rules documents' examples -------------------------------------------------------------
# (players, seed, options, which request): the first request of seat 0 that ``shows``
# accepts, in a match whose seats answer at random from a generator seeded with the seed
EXAMPLES: dict[str, tuple[int, int, dict[str, JSON], Callable[[dict[str, JSON]], bool]]] = {
    "cactus": (3, 5, {}, lambda view: view["decision"] == "drawn"),
    "cactus-game": (3, 3, {}, lambda view: view["decision"] == "turn" and view["turn"] > 3),
    "president": (4, 2, {}, lambda view: view["phase"] == "play" and view["trick"]["plays"] != []),
}


def example(game_id: str) -> dict[str, JSON]:
    """The example of a rules document: ``view`` and ``legal_actions`` of one real request
    of seat 0 (``EXAMPLES``) and ``answer``, a legal answer to it.  Deterministic: the same
    engine gives the same example."""
    players, seed, options, shows = EXAMPLES[game_id]
    game = get_game(game_id)
    state = game.new_state(players, seed, options)
    chooser = random.Random(seed)
    while game.outcome(state) is None:
        requests = game.pending(state)
        for request in requests:
            if request.seat == 0 and shows(view := game.view(state, 0)):
                legal = request.legal_actions
                return json.loads(
                    json.dumps(
                        {
                            "view": view,
                            "legal_actions": legal,
                            "answer": {"action": legal[len(legal) // 2]},
                        }
                    )
                )
        game.apply(state, {r.seat: chooser.choice(r.legal_actions) for r in requests})
    raise LookupError(f"the {game_id} example match ended before its example request")


# -- JSON text ---------------------------------------------------------------------------------
def pretty(value: JSON, width: int = 88) -> str:
    """JSON text for people: a container on one line when it fits in ``width``, else one
    item a line (a long list of scalars filled line by line); keys in their order."""
    return _pretty(value, 0, 0, width)


def _pretty(value: JSON, level: int, used: int, width: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or not value or level * 2 + used + len(flat) <= width:
        return flat
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            head = json.dumps(key, ensure_ascii=False) + ": "
            lines.append(inner + head + _pretty(item, level + 1, len(head), width))
        return "{\n" + ",\n".join(lines) + "\n" + pad + "}"
    if all(not isinstance(item, dict | list) for item in value):
        rows: list[str] = []
        for item in value:
            text = json.dumps(item, ensure_ascii=False)
            if rows and len(inner) + len(rows[-1]) + 2 + len(text) <= width:
                rows[-1] += ", " + text
            else:
                rows.append(text)
        return "[\n" + ",\n".join(inner + row for row in rows) + "\n" + pad + "]"
    lines = [inner + _pretty(item, level + 1, 0, width) for item in value]
    return "[\n" + ",\n".join(lines) + "\n" + pad + "]"


def file_text(game_id: str) -> str:
    """What ``docs/schemas/<game_id>.json`` holds."""
    return pretty(document(game_id)) + "\n"


def stale_files(directory: Path) -> list[Path]:
    """The files of ``directory`` that differ from what :func:`write` would write."""
    return [
        path
        for game_id in GAMES
        if not (path := directory / f"{game_id}.json").is_file()
        or path.read_text(encoding="utf-8") != file_text(game_id)
    ]


def write(directory: Path) -> list[Path]:
    """Write ``<game_id>.json`` of every game into ``directory``; the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for game_id in GAMES:
        path = directory / f"{game_id}.json"
        path.write_text(file_text(game_id), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None, out: Callable[[str], Any] = print) -> int:
    """The command line: ``--write DIR``, ``--check DIR`` (1 if out of date), ``--example
    GAME``; ``out`` prints."""
    parser = argparse.ArgumentParser(
        prog="python -m arena.games.schemas",
        description="Each game's JSON Schemas of what a bot receives and answers.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", metavar="DIR", type=Path, help="write DIR/<game>.json")
    what.add_argument("--check", metavar="DIR", type=Path, help="exit 1 if DIR is out of date")
    what.add_argument(
        "--example",
        metavar="GAME",
        choices=sorted(GAMES),
        help="print the example of GAME's rules document (its golden fixtures)",
    )
    args = parser.parse_args(argv)
    if args.write is not None:
        for path in write(args.write):
            out(f"wrote {path}")
        return 0
    if args.check is not None:
        stale = stale_files(args.check)
        for path in stale:
            out(f"out of date: {path} (python -m arena.games.schemas --write {args.check})")
        return 1 if stale else 0
    for name, value in example(args.example).items():
        out(f"<!-- golden: {name} -->\n```json\n{pretty(value)}\n```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
