"""What every page shares: the blueprint, the database, the games as pages list them,
paging of long lists (``?page=N``), the ETags of live pages, and the template filters.

A live page (a tournament or a match still being played, or waiting for its deal to be
over) carries an ETag built from what can change on it, computed before the page is
rendered: a request whose ``If-None-Match`` matches gets ``304 Not Modified`` without
rendering, which is what ``forms.js`` polls with.  Long lists are paginated (``?page=N``;
a page that is not a number is the first, one past the end the last; the other
arguments are kept from page to page).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, request, url_for
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

import arena
from arena import services
from arena.competition import formats
from arena.config import Config
from arena.db import Database
from arena.games import GAMES
from arena.logins import current_caller
from arena.match.faults import describe_fault, seat_fault_reason
from arena.models import MATCH_PLAYED, Match, MatchSeat, Tournament
from arena.services import events

bp = Blueprint("web", __name__)

LIST_PAGE = 100  # rows of the bot and tournament lists
NOTHING = "\u2013"  # an en dash: no value
FINISHED = MATCH_PLAYED


def database() -> Database:
    return current_app.extensions["arena.db"]


def config() -> Config:
    return current_app.extensions["arena.config"]


@bp.app_template_global()
def game_title(game_id: str) -> str:
    game = GAMES.get(game_id)
    return game.title if game is not None else game_id


def game_rows() -> list[dict[str, Any]]:
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


def matches_query() -> Any:
    return select(Match).options(selectinload(Match.seats).selectinload(MatchSeat.bot))


def progress_by_id(session: Session, tournaments: list[Tournament]) -> dict[int, dict[str, int]]:
    return {t.id: services.tournament_progress(session, t) for t in tournaments}


# -- who reads a page: a private event's things are its members' ---------------------------
def reader(session: Session) -> services.Caller:
    """The page's reader (``arena.logins.current_caller``: its login session, or a bearer
    token); a token that is no one's is told, as the API tells it."""
    try:
        return current_caller(session)
    except services.ServiceError as exc:
        abort(exc.status, exc.message)


def hidden_events(session: Session) -> list[int]:
    """The private events the page's reader is not in: what its lists leave out."""
    return events.hidden_event_ids(session, reader(session))


def check_visible(session: Session, event_id: int | None, what: str) -> None:
    """The 404 page for a thing (``what``: "bot 3") of a private event the reader is not
    in: to them it does not exist."""
    try:
        services.check_visible(session, reader(session), event_id, what)
    except services.ServiceError:
        abort(404, f"There is no {what}.")


# -- pages of long lists ------------------------------------------------------------------
def _requested_page() -> int:
    """``?page=N``: anything that is not a whole number of at least 1 is the first page."""
    try:
        page = int(request.args.get("page", "1"))
    except ValueError:
        return 1
    return max(page, 1)


@bp.app_template_global()
def page_url(page: int, anchor: str = "") -> str:
    """The address of this page of the list with page ``page``, its other query
    arguments (a filter) kept."""
    args = {**request.args.to_dict(), **(request.view_args or {}), "page": page}
    return url_for(request.endpoint or "web.index", **args) + anchor


def paginate(total: int, per_page: int) -> dict[str, Any]:
    """The requested page of ``total`` rows, one past the end the last: its number, the
    number of pages, the offset of its first row and the neighbours' numbers."""
    pages = max(1, math.ceil(total / per_page))
    page = min(_requested_page(), pages)
    return {
        "page": page,
        "pages": pages,
        "total": total,
        "per_page": per_page,
        "offset": (page - 1) * per_page,
        "prev": page - 1 if page > 1 else None,
        "next": page + 1 if page < pages else None,
    }


# -- conditional requests of live pages -----------------------------------------------------
def page_etag(*parts: Any) -> str:
    """A weak entity tag of what a page shows that can change (and the code's version):
    the same parts, the same page."""
    data = json.dumps([arena.__version__, request.path, *parts], default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def not_modified(etag: str) -> Response | None:
    """``304 Not Modified`` when the request already has this version of the page."""
    if request.if_none_match.contains_weak(etag):
        response = Response(status=304)
        with_validators(response, etag)
        return response
    return None


def with_validators(response: Response, etag: str) -> Response:
    # a browser keeps the page but asks whether it changed before showing it again
    response.set_etag(etag, weak=True)
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.app_template_global()
def format_name(format_id: str) -> str:
    """A format's title (``arena.competition.formats.FORMATS``); an unknown one's name as stored."""
    fmt = formats.FORMATS.get(format_id)
    return fmt.title if fmt is not None else format_id


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


@bp.app_template_filter("signed")
def signed(value: float | None, digits: int = 2) -> str:
    """A difference from par with its sign: +0.25, 0.00, and a minus sign (U+2212) below."""
    if value is None:
        return NOTHING
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return text
    return ("+" if value > 0 else "\u2212") + text


@bp.app_template_filter("fault")
def fault_text(fault: dict[str, Any] | None) -> str:
    """A fault and its cause in one line (``arena.match.faults.describe_fault``)."""
    return describe_fault(fault or {})


@bp.app_template_filter("compact")
def compact(value: float | None) -> str:
    """Points and scores: whole numbers without decimals, others to two at most."""
    if value is None:
        return NOTHING
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0")


@bp.app_template_filter("seat_reason")
def seat_reason(faults: dict[str, Any] | None) -> str:
    """Why a seat was struck out or forfeited (``arena.match.faults.seat_fault_reason``)."""
    return seat_fault_reason(faults) or ""


@bp.errorhandler(404)
def not_found(exc: Exception) -> tuple[str, int]:
    return render_template("404.html", message=getattr(exc, "description", "")), 404


@bp.after_request
def _nosniff(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    return response
