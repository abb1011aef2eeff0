"""A match record as one self-contained HTML page: the replay viewer of the match pages,
with its style, its scripts (the viewer's core and the game's drawing) and the frames of
each perspective inside the file, for ``arena view`` (a replay written by ``arena play
--replay``, opened without a server).

With ``seat`` the page holds that seat's frames alone: a file to hand to a bot's author
that shows exactly what their bot knew, and nothing it could not see.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from arena.match.frames import ALL, PUBLIC, compact, record_events, record_frames
from arena.web.viewer import core_script, drawing_script


def perspectives_of(record: dict[str, Any], seat: int | None) -> dict[str, dict[str, Any]]:
    """The frames answer (as ``GET /api/matches/<id>/frames`` gives it) of every
    perspective the page carries: one seat's, or all of them."""
    n_players = len(record["players"])
    chosen: list[Any] = [seat] if seat is not None else [ALL, PUBLIC, *range(n_players)]
    keys = [str(p) for p in chosen]
    out: dict[str, dict[str, Any]] = {}
    for perspective in chosen:
        frames = record_frames(record, perspective)
        body: dict[str, Any] = {
            "match_id": record.get("match_id"),
            "game": record["game"],
            "status": "finished",
            "perspective": perspective,
            "perspectives": keys,
            "complete": True,
            "frames": None if frames is None else compact(frames),
        }
        if frames is None:
            body["events"] = record_events(record, perspective)
        out[str(perspective)] = body
    return out


def render(record: dict[str, Any], seat: int | None = None) -> str:
    """The page of one match record (format 3), optionally from one seat only."""
    environment = Environment(
        loader=PackageLoader("arena.web", "templates"), autoescape=select_autoescape()
    )
    static = resources.files("arena.web") / "static"
    perspectives = perspectives_of(record, seat)
    return environment.get_template("replay_file.html").render(
        record=record,
        game=record["game"],
        players=record["players"],
        perspectives=list(perspectives),
        initial=next(iter(perspectives)),
        frames_url=None,
        data={"game": record["game"], "perspectives": perspectives},
        style=(static / "arena.css").read_text(encoding="utf-8"),
        script=core_script(),
        drawing=drawing_script(record["game"]),
        seat=seat,
    )
