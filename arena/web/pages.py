"""The server-rendered pages: leaderboards, bots, tournaments and the replay viewer.

Pages only read.  Everything that changes data (registering a bot, starting or
cancelling a tournament) goes through the JSON API from ``static/forms.js``, so the
rules for what is accepted live in one place.  Aggregates come from the functions the
API uses: leaderboards and progress from ``arena.services``, standings, crosstables and
a gauntlet's stop rule from ``arena.competition.standings`` (rows kept as each match
finishes).  What
only the pages show, a bot's rating history, results by opponent and faults by kind, is
read here and drawn as inline SVG on the server (``arena.web.charts``: no script).

Counts of matches are of matches played (finished); a bot's matches are filtered by
status (``?status=``: by default every one but cancelled).  Long lists are paginated
(``?page=N``; a page that is not a number is the first, one past the end the last; the
other arguments are kept from page to page).  A bot's endpoint is on no page: only its
owner and the organiser see it, through the API.  A match whose deal is still being
played elsewhere (``services.deals_being_played``) shows its result, not its seed,
replay or cards.

A live page (a tournament or a match still being played, or waiting for its deal to be
over) carries an ETag built from what can change on it, computed before the page is
rendered: a request whose ``If-None-Match`` matches gets ``304 Not Modified`` without
rendering, which is what ``forms.js`` polls with.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    render_template,
    request,
    send_file,
    url_for,
)
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session, aliased, selectinload
from werkzeug.http import quote_etag

import arena
from arena import services
from arena.competition import standings
from arena.db import Database
from arena.games import GAMES
from arena.match.faults import describe_fault, fault_reason, seat_fault_reason
from arena.models import (
    MATCH_OPEN,
    MATCH_STATUSES,
    Bot,
    FittedRating,
    Match,
    MatchSeat,
    Rating,
    RatingChange,
    Replay,
    Tournament,
    TournamentEntry,
)
from arena.web import charts
from arena.web.viewer import drawing_path

bp = Blueprint("web", __name__)

LATEST = 10  # rows of the overview's lists
BOT_MATCHES_PAGE = 25  # a bot's matches, newest first
TOURNAMENT_MATCHES_PAGE = 50  # a tournament's matches, in schedule order
LIST_PAGE = 100  # rows of the bot and tournament lists
CROSSTABLE_MAX_BOTS = 40  # larger tournaments: the crosstable only through the API
FORMAT_NAMES = {"round_robin": "Round robin", "balanced": "Balanced", "gauntlet": "Gauntlet"}
DECISIONS = {"H1": "passed (H1)", "H0": "failed (H0)", None: "still open"}
NOTHING = "\u2013"  # an en dash: no value
FINISHED = "finished"
LIVE_MATCHES_LISTED = 24  # the running matches a tournament page links to
# a bot page's filters of its matches (?status=): each status, every one, and the default,
# every status but cancelled (a challenger stopped early has many cancelled matches)
NOT_CANCELLED = tuple(s for s in MATCH_STATUSES if s != "cancelled")
EVERY_STATUS = "all"
FILTER_ORDER = ("finished", "running", "queued", "failed", "cancelled")


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


def _option_forms() -> dict[str, dict[str, Any]]:
    """Per game, what the tournament form builds its Options fields from, embedded in the
    page (no request of its own): each option (``Game.option_list``), the default options,
    and each preset with the complete options it plays with (what the fields show once
    it is chosen)."""
    return {
        game.id: {
            "options": game.option_list(),
            "defaults": game.default_options(),
            "presets": [
                {
                    "name": preset["name"],
                    "description": preset["description"],
                    "values": game.options_json(game.resolve_options({"preset": preset["name"]})),
                }
                for preset in game.preset_list()
            ],
        }
        for game in GAMES.values()
    }


def _matches_query() -> Any:
    return select(Match).options(selectinload(Match.seats).selectinload(MatchSeat.bot))


def _progress(session: Session, tournaments: list[Tournament]) -> dict[int, dict[str, int]]:
    return {t.id: services.tournament_progress(session, t) for t in tournaments}


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


def _pager(total: int, per_page: int) -> dict[str, Any]:
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
def _etag(*parts: Any) -> str:
    """A weak entity tag of what a page shows that can change (and the code's version):
    the same parts, the same page."""
    data = json.dumps([arena.__version__, request.path, *parts], default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def _not_modified(etag: str) -> Response | None:
    """``304 Not Modified`` when the request already has this version of the page."""
    if request.if_none_match.contains_weak(etag):
        response = Response(status=304)
        _validators(response, etag)
        return response
    return None


def _validators(response: Response, etag: str) -> Response:
    # a browser keeps the page but asks whether it changed before showing it again
    response.set_etag(etag, weak=True)
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.app_template_global()
def format_name(format_id: str) -> str:
    return FORMAT_NAMES.get(format_id, format_id)


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


@bp.errorhandler(404)
def not_found(exc: Exception) -> tuple[str, int]:
    return render_template("404.html", message=getattr(exc, "description", "")), 404


@bp.get("/")
def index() -> str:
    with _database().session() as session:
        tournaments = list(
            session.scalars(select(Tournament).order_by(Tournament.id.desc()).limit(LATEST))
        )
        # the latest results: queued and cancelled matches would hide them
        matches, _ = services.list_matches(session, status=FINISHED, page_size=LATEST)
        bots = session.scalar(select(func.count()).select_from(Bot).where(Bot.status != "deleted"))
        return render_template(
            "index.html",
            games=_games(),
            played=services.played_by_game(session),
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


@bp.get("/bots")
def bots() -> str:
    with _database().session() as session:
        listed = select(Bot).where(Bot.status != "deleted")
        pager = _pager(
            session.scalar(select(func.count()).select_from(listed.subquery())) or 0, LIST_PAGE
        )
        rows = list(
            session.scalars(
                listed.order_by(Bot.name, Bot.id).offset(pager["offset"]).limit(LIST_PAGE)
            )
        )
        played = services.played_by_bot(session, [b.id for b in rows])
        return render_template("bots.html", bots=rows, played=played, pager=pager)


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
        counts = services.bot_match_counts(session, bot_id)
        shown, statuses = _status_filter()
        pager = _pager(sum(counts[s] for s in statuses), BOT_MATCHES_PAGE)
        matches, _ = services.list_matches(
            session,
            bot_id=bot_id,
            statuses=statuses,
            page=pager["page"],
            page_size=BOT_MATCHES_PAGE,
        )
        return render_template(
            "bot.html",
            bot=found,
            ratings=ratings,
            matches=matches,
            match_counts=counts,
            filters=_status_filters(counts),
            shown=shown,
            pager=pager,
            faults=services.recent_faults(session, bot_id),
            **_bot_charts(session, found),
        )


def _status_filter() -> tuple[str, tuple[str, ...]]:
    """``?status=`` of a bot page: the filter shown ("" for the default) and the statuses
    it lists; anything else is the default, every status but cancelled."""
    wanted = request.args.get("status", "")
    if wanted in MATCH_STATUSES:
        return wanted, (wanted,)
    if wanted == EVERY_STATUS:
        return wanted, MATCH_STATUSES
    return "", NOT_CANCELLED


def _status_filters(counts: dict[str, int]) -> list[dict[str, Any]]:
    """The bot page's filter links: value (of ``?status=``), label and count."""
    return [
        {"value": "", "label": "not cancelled", "count": sum(counts[s] for s in NOT_CANCELLED)},
        *(
            {"value": status, "label": "played" if status == FINISHED else status, "count": n}
            for status in FILTER_ORDER
            if (n := counts[status]) or status == FINISHED
        ),
        {"value": EVERY_STATUS, "label": "all", "count": sum(counts.values())},
    ]


# -- the charts of a bot's page ------------------------------------------------------------
def _bot_charts(session: Session, bot: Bot) -> dict[str, Any]:
    """What the bot page draws: its rating history per game, its results by opponent and
    its faults by kind, each as rows and as a chart: four queries, whatever the number
    of games, opponents and matches."""
    opponents = _opponents(session, bot.id)
    kinds = _fault_kinds(session, bot.id)
    return {
        "history": _rating_history(session, bot),
        "opponents": opponents,
        "opponents_chart": charts.results_chart(
            [(o["name"], o["ahead"], o["tied"], o["behind"]) for o in opponents],
            label=f"Results of {bot.name} against the opponents it met most",
        )
        if opponents
        else None,
        "fault_kinds": kinds,
        "faults_chart": charts.bar_chart(
            [(k["kind"], k["faults"]) for k in kinds],
            label=f"Faults of {bot.name} by kind, over all its finished matches",
        )
        if kinds
        else None,
    }


def _rating_history(session: Session, bot: Bot) -> list[dict[str, Any]]:
    """Per game with rated matches (in the order of ``GAMES``): the number of matches and
    the chart of the bot's Elo over them (``charts.rating_history``), with its fitted
    rating and interval when it has one.  The changes come in the order they were made
    (the rating sequence; then finish time and match id for results without one)."""
    rows = session.execute(
        select(RatingChange.game, RatingChange.before, RatingChange.after)
        .join(Match, Match.id == RatingChange.match_id)
        .where(RatingChange.bot_id == bot.id)
        .order_by(
            RatingChange.game,
            Match.rating_seq.asc().nulls_last(),
            Match.finished_at,
            Match.id,
        )
    ).all()
    elos: dict[str, list[float]] = {}
    for game, before, after in rows:
        elos.setdefault(game, [before]).append(after)
    fitted = {
        f.game: (f.rating, f.low, f.high)
        for f in session.scalars(select(FittedRating).where(FittedRating.bot_id == bot.id))
    }
    return [
        {
            "game": game_id,
            "matches": len(elos[game_id]) - 1,
            "fitted": fitted.get(game_id),
            "chart": charts.rating_history(
                elos[game_id],
                label=f"Rating history of {bot.name} in {game_title(game_id)}",
                fitted=fitted.get(game_id),
            ),
        }
        for game_id in sorted(elos, key=_game_order)
    ]


def _game_order(game_id: str) -> tuple[int, str]:
    order = list(GAMES)
    return (order.index(game_id) if game_id in order else len(order), game_id)


OPPONENTS = 20  # opponents listed on a bot's page: the most met


def _opponents(session: Session, bot_id: int, limit: int = OPPONENTS) -> list[dict[str, Any]]:
    """The bots this one met most in finished matches, with how often it finished ahead
    of, level with and behind each, from one query over pairs of seats of the same match
    (a bot seated twice in a match counts each pair of its seats)."""
    me, them = aliased(MatchSeat), aliased(MatchSeat)
    met = func.count(me.match_id.distinct())
    rows = session.execute(
        select(
            them.bot_id,
            Bot.name,
            Bot.status,
            met,
            func.sum(case((me.rank < them.rank, 1), else_=0)),
            func.sum(case((me.rank == them.rank, 1), else_=0)),
            func.sum(case((me.rank > them.rank, 1), else_=0)),
        )
        .select_from(me)
        .join(them, (them.match_id == me.match_id) & (them.bot_id != me.bot_id))
        .join(Match, Match.id == me.match_id)
        .join(Bot, Bot.id == them.bot_id)
        .where(
            me.bot_id == bot_id,
            Match.status == FINISHED,
            me.rank.is_not(None),
            them.rank.is_not(None),
        )
        .group_by(them.bot_id, Bot.name, Bot.status)
        .order_by(met.desc(), Bot.name, them.bot_id)
        .limit(limit)
    ).all()
    return [
        {
            "bot_id": opponent,
            "name": name,
            "status": status,
            "matches": matches,
            "ahead": int(ahead or 0),
            "tied": int(tied or 0),
            "behind": int(behind or 0),
        }
        for opponent, name, status, matches, ahead, tied, behind in rows
    ]


def _fault_kinds(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """The bot's faults over all its finished matches, by kind, most frequent first: the
    number of faults, of matches they happened in, and the kind in words.  Seats stored
    before faults were kept by kind count their strikes as "not recorded"."""
    faults: dict[str, int] = {}
    matches: dict[str, int] = {}
    for seat_faults, strikes in session.execute(
        select(MatchSeat.faults, MatchSeat.strikes)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot_id, MatchSeat.strikes > 0, Match.status == FINISHED)
    ):
        kinds = (seat_faults or {}).get("kinds") or {"not recorded": strikes}
        for kind, n in kinds.items():
            faults[kind] = faults.get(kind, 0) + n
            matches[kind] = matches.get(kind, 0) + 1
    return [
        {
            "kind": kind,
            "faults": n,
            "matches": matches[kind],
            "reason": "" if kind == "not recorded" else fault_reason({"kind": kind}),
        }
        for kind, n in sorted(faults.items(), key=lambda item: (-item[1], item[0]))
    ]


@bp.app_template_filter("seat_reason")
def seat_reason(faults: dict[str, Any] | None) -> str:
    """Why a seat was struck out or forfeited (``arena.match.faults.seat_fault_reason``)."""
    return seat_fault_reason(faults) or ""


@bp.get("/tournaments")
def tournaments() -> str:
    with _database().session() as session:
        pager = _pager(session.scalar(select(func.count()).select_from(Tournament)) or 0, LIST_PAGE)
        rows = list(
            session.scalars(
                select(Tournament)
                .order_by(Tournament.id.desc())
                .offset(pager["offset"])
                .limit(LIST_PAGE)
            )
        )
        entrants = dict(
            session.execute(
                select(TournamentEntry.tournament_id, func.count())
                .where(TournamentEntry.tournament_id.in_([t.id for t in rows]))
                .group_by(TournamentEntry.tournament_id)
            ).all()
        )
        return render_template(
            "tournaments.html",
            tournaments=rows,
            entrants=entrants,
            progress=_progress(session, rows),
            pager=pager,
        )


@bp.get("/tournaments/new")
def tournament_new() -> str:
    with _database().session() as session:
        rows = list(session.scalars(select(Bot).where(Bot.status == "active").order_by(Bot.name)))
        return render_template(
            "tournament_new.html", games=_games(), bots=rows, game_options=_option_forms()
        )


@bp.get("/tournaments/<int:tournament_id>")
def tournament(tournament_id: int) -> Response:
    with _database().session() as session:
        found = session.get(Tournament, tournament_id)
        if found is None:
            abort(404, f"There is no tournament {tournament_id}.")
        progress = services.tournament_progress(session, found)
        pager = _pager(progress["total"], TOURNAMENT_MATCHES_PAGE)
        # everything the page shows that changes does so with the status, the counts or
        # an entrant's name (a rename or a deletion changes its bot's updated_at)
        renamed = session.scalar(
            select(func.max(Bot.updated_at))
            .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
            .where(TournamentEntry.tournament_id == tournament_id)
        )
        etag = _etag(found.status, sorted(progress.items()), pager["page"], renamed)
        unchanged = _not_modified(etag)
        if unchanged is not None:
            return unchanged
        rows = standings.standings(session, found)
        matches = list(
            session.scalars(
                _matches_query()
                .where(Match.tournament_id == tournament_id)
                .order_by(Match.id)
                .offset(pager["offset"])
                .limit(TOURNAMENT_MATCHES_PAGE)
            )
        )
        live = _is_live(found, progress)
        playing = list(
            session.scalars(
                _matches_query()
                .where(Match.tournament_id == tournament_id, Match.status == "running")
                .order_by(Match.id)
                .limit(LIVE_MATCHES_LISTED)
            )
        )
        crosstable = (
            standings.crosstable(session, found) if len(rows) <= CROSSTABLE_MAX_BOTS else None
        )
        body = render_template(
            "tournament.html",
            tournament=found,
            seed=services.tournament_seed(found, progress),
            format_text=_format_text(found),
            balance_text=_balance_text(found.balance),
            progress=progress,
            standings=rows,
            challengers=[
                {**row, "position": n} for n, row in enumerate(rows, start=1) if row["challenger"]
            ],
            duplicate=found.deal == "duplicate",
            crosstable=crosstable,
            crosstable_rows=_crosstable_rows(crosstable),
            crosstable_max=CROSSTABLE_MAX_BOTS,
            stop_rule=_stop_rule(standings.sprt_summary(session, found)),
            matches=matches,
            playing=playing,
            live_listed=LIVE_MATCHES_LISTED,
            pager=pager,
            live=live,
            etag=quote_etag(etag, weak=True),  # the header's value, for forms.js
        )
        return _validators(Response(body, mimetype="text/html"), etag)


def _crosstable_rows(crosstable: dict[str, Any] | None) -> list[tuple[Any, list[Any]]]:
    """Each row's bot and its cells as (class, text): the template only writes them out
    (a thousand cells cost little more than a thousand strings)."""
    if crosstable is None:
        return []
    rows = []
    for row in crosstable["bots"]:
        cells = crosstable["cells"].get(str(row["id"]), {})
        line = []
        for col in crosstable["bots"]:
            cell = cells.get(str(col["id"]))
            if col["id"] == row["id"]:
                line.append(("self", "\u2014"))
            elif cell is None:
                line.append(("muted", "\u00b7"))
            else:
                wins, draws, losses = cell["wins"], cell["draws"], cell["losses"]
                lead = "ahead" if wins > losses else "behind" if wins < losses else "level"
                line.append((f"wdl {lead}", f"{wins}\u2013{draws}\u2013{losses}"))
        rows.append((row, line))
    return rows


def _is_live(tournament: Tournament, progress: dict[str, int]) -> bool:
    """Whether the page should refresh itself: matches are still to be played."""
    return tournament.status == "running" and progress["queued"] + progress["running"] > 0


def _plural(n: int | None, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def _format_text(tournament: Tournament) -> str:
    """The format and its parameters in words: "Balanced: 40 matches per bot, ..."."""
    seats = f"{tournament.seats_per_match} seats per match"
    if tournament.format == "balanced":
        parameter = f"{_plural(tournament.matches_per_bot, 'match', 'matches')} per bot"
    elif tournament.format == "gauntlet":
        budget = _plural(tournament.matches_per_bot, "match", "matches")
        parameter = (
            f"up to {budget} per challenger (the stop rule ends it sooner)"
            if tournament.sprt
            else f"{budget} per challenger"
        )
    else:
        parameter = f"{_plural(tournament.games_per_pairing, 'game')} per pairing"
    deals = "duplicate deals" if tournament.deal == "duplicate" else "independent deals"
    return f"{format_name(tournament.format)}: {parameter}, {seats}, {deals}"


def _span(values: Any, one: str, many: str) -> str | None:
    """A [min, max] pair in words: "40 matches", or "2 to 3 matches" with an en dash."""
    if not isinstance(values, list | tuple) or len(values) != 2:
        return None
    low, high = values
    if low == high:
        return f"{low} {one if low == 1 else many}"
    return f"{low}{NOTHING}{high} {many}"


def _balance_text(balance: dict[str, Any] | None) -> str | None:
    """What the schedule achieved, in words: matches per bot, seat spread, pair meetings."""
    if not balance:
        return None
    parts = []
    matches = _span(balance.get("matches_per_bot"), "match", "matches")
    if matches:
        parts.append(f"{matches} per bot")
    if balance.get("seat_spread") is not None:
        parts.append(f"seat spread {balance['seat_spread']}")
    meetings = _span(balance.get("pair_meetings"), "time", "times")
    if meetings:
        parts.append(f"two bots meet {meetings}")
    return ", ".join(parts) or None


def _stop_rule(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """``standings.sprt_summary`` with, per challenger, the decision in words and where
    its log-likelihood ratio stands between the bounds (percent, for the gauge)."""
    if summary is None:
        return None
    lower, upper = summary["lower"], summary["upper"]
    span = (upper - lower) or 1.0

    def at(value: float) -> float:
        return max(0.0, min(100.0, 100 * (value - lower) / span))

    return {
        **summary,
        "zero": at(0.0),
        "challengers": [
            {**row, "gauge": at(row["llr"]), "decision_text": DECISIONS.get(row["decision"], "")}
            for row in summary["challengers"]
        ],
    }


@bp.get("/matches/<int:match_id>")
def match(match_id: int) -> Response:
    with _database().session() as session:
        found = session.scalar(_matches_query().where(Match.id == match_id))
        if found is None:
            abort(404, f"There is no match {match_id}.")
        # the other matches of its deal still to be played: while there are any, its
        # seed, replay and cards stay hidden (its result is shown)
        playing = services.deal_being_played(session, found)
        others = [i for i in playing if i != found.id]
        renamed = max((seat.bot.updated_at for seat in found.seats), default=None)
        etag = _etag(
            found.status, found.started_at, found.finished_at, found.error, renamed, others
        )
        unchanged = _not_modified(etag)
        if unchanged is not None:
            return unchanged
        replay = session.get(Replay, match_id) if found.status == FINISHED and not others else None
        record = replay.record if replay is not None else None
        outcome = (record or {}).get("outcome") or found.result or {}
        live = found.status in MATCH_OPEN
        players = [_seat_name(found, seat) for seat in range(len(found.seats))]
        everyone = found.tournament is not None and found.tournament.live_view == "everyone"
        perspectives: list[str] = ["public"]
        if not live or everyone:
            perspectives = ["all", "public", *map(str, range(len(players)))]
        body = render_template(
            "match.html",
            match=found,
            seed=services.match_seed(found, playing),
            deal_others=others,
            etag=quote_etag(etag, weak=True),
            viewer=not others and (record is not None or live),
            game=found.game,
            drawing=drawing_path(found.game) is not None,
            players=players,
            perspectives=perspectives,
            initial="public" if live and not everyone else "all",
            outcome=outcome,
            rounds=_rounds_table(outcome.get("rounds") or []),
            frames_url=f"{request.script_root}/api/matches/{match_id}/frames",
            live=live,
        )
        return _validators(Response(body, mimetype="text/html"), etag)


@bp.get("/games/<game_id>/viewer.js")
def game_drawing(game_id: str) -> Response:
    """A game's drawing for the replay viewer: the ``viewer.js`` of its folder."""
    path = drawing_path(game_id)
    if path is None:
        abort(404, f"There is no game {game_id}.")
    return send_file(path, mimetype="text/javascript")


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
