"""The overview (``/``: the games, the latest tournaments and results) and each game's
drawing for the replay viewer."""

from __future__ import annotations

from flask import Response, abort, render_template, send_file
from sqlalchemy import func, select

from arena import services
from arena.models import Bot, Tournament
from arena.services import events
from arena.web.pages.common import (
    FINISHED,
    bp,
    database,
    game_rows,
    hidden_events,
    progress_by_id,
)
from arena.web.viewer import drawing_path

LATEST = 10  # rows of the overview's lists


@bp.get("/")
def index() -> str:
    with database().session() as session:
        hidden = hidden_events(session)  # a private event's are its members'
        tournaments = list(
            session.scalars(
                select(Tournament)
                .where(events.not_hidden(Tournament.event_id, hidden))
                .order_by(Tournament.id.desc())
                .limit(LATEST)
            )
        )
        # the latest results: queued and cancelled matches would hide them
        matches, _ = services.list_matches(
            session, status=FINISHED, page_size=LATEST, hidden_events=hidden
        )
        bots = session.scalar(
            select(func.count())
            .select_from(Bot)
            .where(Bot.status != "deleted", events.not_hidden(Bot.event_id, hidden))
        )
        return render_template(
            "index.html",
            games=game_rows(),
            played=services.played_by_game(session),
            bot_count=bots or 0,
            tournaments=tournaments,
            progress=progress_by_id(session, tournaments),
            matches=matches,
        )


@bp.get("/games/<game_id>/viewer.js")
def game_drawing(game_id: str) -> Response:
    """A game's drawing for the replay viewer: the ``viewer.js`` of its folder."""
    path = drawing_path(game_id)
    if path is None:
        abort(404, f"There is no game {game_id}.")
    return send_file(path, mimetype="text/javascript")
