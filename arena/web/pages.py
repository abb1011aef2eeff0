"""The server-rendered pages: leaderboards, bots, tournaments and the replay viewer.

Pages only read.  Everything that changes data (registering a bot, starting or
cancelling a tournament) goes through the JSON API from ``static/forms.js``, so the
rules for what is accepted live in one place.  Aggregates (leaderboards, progress,
standings, crosstables) come from ``arena.services``, the same functions the API uses.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, request
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from arena import services
from arena.db import Database
from arena.games import GAMES
from arena.models import Bot, Match, MatchSeat, Rating, Replay, Tournament
from arena.replay import describe_fault
from arena.web.replay_steps import step_positions

bp = Blueprint("web", __name__)

LATEST = 10  # rows of the overview's lists
RECENT_MATCHES = 25  # a bot's recent matches
LIST_LIMIT = 200  # rows of the bot and tournament lists
NOTHING = "\u2013"  # an en dash: no value
FINISHED = "finished"
POSITIONS_KEPT = 256  # replays whose decision positions are kept in memory

_POSITIONS: OrderedDict[tuple[str, int], dict[str, Any] | None] = OrderedDict()
_POSITIONS_LOCK = threading.Lock()


def _database() -> Database:
    return current_app.extensions["arena.db"]


@bp.app_template_global()
def game_title(game_id: str) -> str:
    game = GAMES.get(game_id)
    return game.title if game is not None else game_id


def _games() -> list[dict[str, Any]]:
    """The registered games as the pages and the tournament form need them."""
    return [
        {
            "id": game.id,
            "title": game.title,
            "min_players": game.min_players,
            "max_players": game.max_players,
            "presets": list(game.presets),
        }
        for game in GAMES.values()
    ]


def _matches_query() -> Any:
    return select(Match).options(selectinload(Match.seats).selectinload(MatchSeat.bot))


def _progress(session: Session, tournaments: list[Tournament]) -> dict[int, dict[str, int]]:
    return {t.id: services.tournament_progress(session, t) for t in tournaments}


@bp.app_template_filter("when")
def when(value: dt.datetime | None) -> str:
    """A timestamp as UTC, to the minute (naive values from SQLite are UTC already)."""
    if value is None:
        return ""
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC)
    return value.strftime("%Y-%m-%d %H:%M UTC")


@bp.app_template_filter("number")
def number(value: float | None, digits: int = 0) -> str:
    """A rating, score or mean with a fixed number of decimals; a dash for none."""
    if value is None:
        return NOTHING
    return f"{value:.{digits}f}"


@bp.app_template_filter("fault")
def fault_text(fault: dict[str, Any] | None) -> str:
    """A fault and its cause in one line (``arena.replay.describe_fault``)."""
    return describe_fault(fault or {})


@bp.app_template_filter("compact")
def compact(value: float | None) -> str:
    """Points and scores: whole numbers without decimals, others to two at most."""
    if value is None:
        return NOTHING
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0")


@bp.errorhandler(404)
def not_found(exc: Exception) -> tuple[str, int]:
    return render_template("404.html", message=getattr(exc, "description", "")), 404


@bp.get("/")
def index() -> str:
    with _database().session() as session:
        tournaments = list(
            session.scalars(select(Tournament).order_by(Tournament.id.desc()).limit(LATEST))
        )
        matches, _ = services.list_matches(session, page_size=LATEST)
        counts = dict(session.execute(select(Match.game, func.count()).group_by(Match.game)).all())
        bots = session.scalar(select(func.count()).select_from(Bot).where(Bot.status != "deleted"))
        return render_template(
            "index.html",
            games=_games(),
            match_counts=counts,
            bot_count=bots or 0,
            tournaments=tournaments,
            progress=_progress(session, tournaments),
            matches=matches,
        )


@bp.get("/leaderboard")
def leaderboards() -> str:
    with _database().session() as session:
        boards = [(game, _sorted_leaderboard(session, game["id"])[:5]) for game in _games()]
        return render_template("leaderboards.html", boards=boards)


def _sorted_leaderboard(session: Session, game_id: str) -> list[dict[str, Any]]:
    """The service's rows, best Elo first (ties keep the service's order)."""
    return sorted(services.leaderboard(session, game_id), key=lambda row: -row["elo"])


@bp.get("/leaderboard/<game_id>")
def leaderboard(game_id: str) -> str:
    if game_id not in GAMES:
        abort(404, f"There is no game {game_id!r}.")
    with _database().session() as session:
        rows = _sorted_leaderboard(session, game_id)
        return render_template("leaderboard.html", game=GAMES[game_id], rows=rows)


@bp.get("/bots")
def bots() -> str:
    with _database().session() as session:
        rows = list(
            session.scalars(
                select(Bot).where(Bot.status != "deleted").order_by(Bot.name).limit(LIST_LIMIT)
            )
        )
        played = dict(
            session.execute(select(MatchSeat.bot_id, func.count()).group_by(MatchSeat.bot_id)).all()
        )
        return render_template("bots.html", bots=rows, played=played)


@bp.get("/bots/register")
def bot_register() -> str:
    return render_template("bot_register.html", games=_games())


@bp.get("/bots/<int:bot_id>")
def bot(bot_id: int) -> str:
    with _database().session() as session:
        found = session.get(Bot, bot_id)
        if found is None:
            abort(404, f"There is no bot {bot_id}.")
        ratings = []
        for game in _games():
            board = _sorted_leaderboard(session, game["id"])
            for position, row in enumerate(board, start=1):
                if row["bot_id"] == bot_id:
                    ratings.append({"game": game, "row": row, "rank": position, "of": len(board)})
        listed = {r["game"]["id"] for r in ratings}
        for rating in session.scalars(select(Rating).where(Rating.bot_id == bot_id)):
            if rating.game not in listed and rating.game in GAMES:  # a bot not active
                row = {"elo": rating.elo, "matches": rating.matches, "fitted": None}
                game = next(g for g in _games() if g["id"] == rating.game)
                ratings.append({"game": game, "row": row, "rank": None, "of": None})
        recent, _ = services.list_matches(session, bot_id=bot_id, page_size=RECENT_MATCHES)
        return render_template(
            "bot.html",
            bot=found,
            ratings=ratings,
            matches=recent,
            faults=services.recent_faults(session, bot_id),
        )


@bp.get("/tournaments")
def tournaments() -> str:
    with _database().session() as session:
        rows = list(
            session.scalars(
                select(Tournament)
                .options(selectinload(Tournament.entries))
                .order_by(Tournament.id.desc())
                .limit(LIST_LIMIT)
            )
        )
        return render_template(
            "tournaments.html", tournaments=rows, progress=_progress(session, rows)
        )


@bp.get("/tournaments/new")
def tournament_new() -> str:
    with _database().session() as session:
        rows = list(session.scalars(select(Bot).where(Bot.status == "active").order_by(Bot.name)))
        return render_template("tournament_new.html", games=_games(), bots=rows)


@bp.get("/tournaments/<int:tournament_id>")
def tournament(tournament_id: int) -> str:
    with _database().session() as session:
        found = session.get(Tournament, tournament_id)
        if found is None:
            abort(404, f"There is no tournament {tournament_id}.")
        progress = services.tournament_progress(session, found)
        matches = list(
            session.scalars(
                _matches_query().where(Match.tournament_id == tournament_id).order_by(Match.id)
            )
        )
        return render_template(
            "tournament.html",
            tournament=found,
            progress=progress,
            standings=services.standings(session, found),
            crosstable=services.crosstable(session, found),
            matches=matches,
            live=_is_live(found, progress),
        )


def _is_live(tournament: Tournament, progress: dict[str, int]) -> bool:
    """Whether the page should refresh itself: matches are still to be played."""
    return tournament.status == "running" and progress["queued"] + progress["running"] > 0


@bp.get("/matches/<int:match_id>")
def match(match_id: int) -> str:
    with _database().session() as session:
        found = session.scalar(_matches_query().where(Match.id == match_id))
        if found is None:
            abort(404, f"There is no match {match_id}.")
        replay = session.get(Replay, match_id) if found.status == FINISHED else None
        record = replay.record if replay is not None else None
        positions = _positions(match_id, record) if record is not None else None
        outcome = (record or {}).get("outcome") or found.result or {}
        return render_template(
            "match.html",
            match=found,
            has_replay=record is not None,
            players=[_seat_name(found, seat) for seat in range(len(found.seats))],
            outcome=outcome,
            rounds=_rounds_table(outcome.get("rounds") or []),
            positions=positions,
            replay_url=f"{request.script_root}/api/matches/{match_id}/replay",
            live=found.status in ("queued", "running"),
        )


def _positions(match_id: int, record: dict[str, Any]) -> dict[str, Any] | None:
    """``step_positions`` of a finished match's record, which never changes again: kept for
    the next view (a long match takes a noticeable time to re-simulate)."""
    key = (_database().url, match_id)
    with _POSITIONS_LOCK:
        if key in _POSITIONS:
            _POSITIONS.move_to_end(key)
            return _POSITIONS[key]
    positions = step_positions(record)
    with _POSITIONS_LOCK:
        _POSITIONS[key] = positions
        while len(_POSITIONS) > POSITIONS_KEPT:
            _POSITIONS.popitem(last=False)
    return positions


def _seat_name(match: Match, seat: int) -> str:
    for entry in match.seats:
        if entry.seat == seat:
            return entry.bot.name
    return f"seat {seat}"


def _rounds_table(rounds: list[Any]) -> dict[str, Any] | None:
    """Per-round results as a table: the union of their keys as columns, in order."""
    if not rounds or not all(isinstance(r, dict) for r in rounds):
        return None
    columns: list[str] = []
    for result in rounds:
        columns.extend(key for key in result if key not in columns)
    return {
        "columns": columns,
        "rows": [[_cell(result.get(key)) for key in columns] for result in rounds],
    }


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return str(value)


@bp.after_request
def _nosniff(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    return response
