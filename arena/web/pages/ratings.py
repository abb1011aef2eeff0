"""The leaderboards: every game's best five, and one game's with each fitted rating's
interval drawn as a bar (``arena.web.charts``).  These are the open arena's: an event's
bots are ranked among their event's only (events never mix)."""

from __future__ import annotations

from typing import Any

from flask import abort, render_template
from sqlalchemy.orm import Session

from arena import services
from arena.games import GAMES
from arena.web import charts
from arena.web.pages.common import bp, database, game_rows


@bp.get("/leaderboard")
def leaderboards() -> str:
    with database().session() as session:
        boards = [(game, sorted_leaderboard(session, game["id"])[:5]) for game in game_rows()]
        return render_template("leaderboards.html", boards=boards)


def sorted_leaderboard(
    session: Session, game_id: str, event_id: int | None = None
) -> list[dict[str, Any]]:
    """The service's rows of the open arena (``event_id`` None) or of one event, best Elo
    first (ties keep the service's order)."""
    rows = services.leaderboard(session, game_id, event_id=event_id)
    return sorted(rows, key=lambda row: -row["elo"])


@bp.get("/leaderboard/<game_id>")
def leaderboard(game_id: str) -> str:
    if game_id not in GAMES:
        abort(404, f"There is no game {game_id!r}.")
    with database().session() as session:
        rows = sorted_leaderboard(session, game_id)
        return render_template(
            "leaderboard.html", game=GAMES[game_id], rows=rows, **_interval_bars(rows)
        )


def _interval_bars(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each fitted row's 95% interval as a bar (by bot id), all on one scale that holds
    every interval of the page, and that scale's tick values for the column's heading."""
    fitted = [row for row in rows if row["fitted"]]
    scale = charts.scale_of([(row["fitted"]["low"], row["fitted"]["high"]) for row in fitted])
    if scale is None:
        return {"bars": {}, "bars_axis": None}
    return {
        "bars": {
            row["bot_id"]: charts.interval_bar(
                row["fitted"]["rating"],
                row["fitted"]["low"],
                row["fitted"]["high"],
                scale=scale,
                label=row["name"],
            )
            for row in fitted
        },
        "bars_axis": charts.interval_axis(scale),
    }
