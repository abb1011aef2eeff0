"""People at the table: ``/play`` (the games), ``/play/<game>`` (pick the opponents and
sit down) and ``/play/seat/<id>`` (a person's seat: the page plays it over the connect
transport, ``static/play.js``).  Starting a match goes through the JSON API
(``POST /api/play``), like every change the pages make."""

from __future__ import annotations

import time

from flask import abort, render_template
from sqlalchemy import select

from arena.api.play import private_bot_ids
from arena.games import GAMES, POLICIES
from arena.models import Bot, Match, MatchSeat
from arena.services import people
from arena.web.pages.common import bp, config, database, game_rows, hidden_events
from arena.web.viewer import drawing_path

DEADLINES = (15, 30, 60, 120, 300)  # the choices of a person's time per decision, seconds


@bp.get("/play")
def play_index() -> str:
    return render_template("play_index.html", games=game_rows())


@bp.get("/play/<game_id>")
def play_game(game_id: str) -> str:
    game = GAMES.get(game_id)
    if game is None:
        abort(404, f"There is no game {game_id}.")
    with database().session() as session:
        playable = people.playable_bots(session, game.id)
        private = private_bot_ids(session, [b.id for b in playable])  # never offered
        bots = [(b.id, b.name) for b in playable if b.id not in private]
    return render_template(
        "play.html",
        game=game,
        policies=list(POLICIES[game.id]),
        bots=bots,
        presets=list(game.presets),
        deadlines=DEADLINES,
        default_deadline=people.DEFAULT_DEADLINE_SECONDS,
        person_name_max=people.PERSON_NAME_MAX,
        open_play=config().open_play,
    )


@bp.get("/play/seat/<int:bot_id>")
def play_seat(bot_id: int) -> str:
    """A person's seat.  Its key is in the link's fragment, which never reaches a server,
    so the page cannot tell the person from anyone who types the address: a seat of a
    private event the reader is not in is served (its person may be in no event at all)
    without what would tell a stranger about the event: the person's name and the
    event's match ids.  The person learns them by playing."""
    with database().session() as session:
        bot = session.get(Bot, bot_id)
        if bot is None or bot.kind != "person" or bot.status == "deleted":
            abort(404, f"There is no person's seat {bot_id}.")
        hidden = bot.event_id is not None and bot.event_id in hidden_events(session)
        matches: list[int] = []
        if not hidden:
            matches = list(
                session.scalars(
                    select(Match.id)
                    .join(MatchSeat, MatchSeat.match_id == Match.id)
                    .where(MatchSeat.bot_id == bot.id)
                    .order_by(Match.id)
                )
            )
        game = bot.games[0]
        return render_template(
            "play_seat.html",
            bot=bot,
            seat_name=None if hidden else people.shown_name(bot.name),
            game=GAMES[game],
            matches=matches,
            deadline_s=(bot.deadline_ms or 0) // 1000,
            server_time=int(time.time()),
            drawing=drawing_path(game) is not None,
        )
