"""A bot's pages: the list, the registration form, and a bot's page with its ratings, its
matches (filtered by status, ``?status=``: by default every one but cancelled) and what
only the pages show, read here and drawn as inline SVG on the server
(``arena.web.charts``: no script): its rating history, results by opponent and faults by
kind.  A bot's endpoint is on no page: only its owner and the organiser see it, through
the API.  A private event's bots are for its members: the list leaves them out, and to
anyone else their pages do not exist (404); an event's bot is ranked in its event's
leaderboards.

A hosted bot's page says so and names the version of its code that plays; to those who
manage it (``Caller.manages``, as for its buttons) it also lists every version with its
validation's verdict, and offers the upload and roll-back forms, which ``forms.js`` sends
to the API (``/api/bots/<id>/code``): no one else sees a version's reason or its code.

Its "Challenge" section asks ``POST /api/scrimmages`` for unrated matches: its owner
plays the bot against house bots and the bots it may challenge, and on a bot that
accepts challenges a reader with a bot of its event challenges it; those who manage the
bot switch its challenges on and off (``_challenge``)."""

from __future__ import annotations

from typing import Any

from flask import abort, render_template, request
from sqlalchemy import String, case, cast, func, select, true
from sqlalchemy.orm import Session, aliased

from arena import services
from arena.games import GAMES, POLICIES
from arena.hosted import bundles
from arena.match.faults import fault_reason
from arena.models import (
    MATCH_STATUSES,
    Bot,
    BotSession,
    Event,
    Match,
    MatchSeat,
    RatingChange,
    bot_name_key,
)
from arena.relay import sessions
from arena.services import bots as bot_rules
from arena.services import events, hosted, scrimmages, versions
from arena.web import charts
from arena.web.pages.common import (
    FINISHED,
    LIST_PAGE,
    bp,
    check_visible,
    config,
    database,
    game_rows,
    game_title,
    hidden_events,
    paginate,
    reader,
)
from arena.web.pages.ratings import sorted_leaderboard

BOT_MATCHES_PAGE = 25  # a bot's matches, newest first
# a bot page's filters of its matches (?status=): each status, every one, and the default,
NOT_CANCELLED = tuple(s for s in MATCH_STATUSES if s != "cancelled")
EVERY_STATUS = "all"
FILTER_ORDER = ("finished", "running", "queued", "failed", "cancelled")


@bp.get("/bots")
def bots() -> str:
    with database().session() as session:
        listed = select(Bot).where(
            Bot.status != "deleted",
            Bot.kind != "person",
            events.not_hidden(Bot.event_id, hidden_events(session)),
        )
        listed, search = _search(listed)
        pager = paginate(
            session.scalar(select(func.count()).select_from(listed.subquery())) or 0, LIST_PAGE
        )
        rows = list(
            session.scalars(
                listed.order_by(Bot.name, Bot.id).offset(pager["offset"]).limit(LIST_PAGE)
            )
        )
        played = services.played_by_bot(session, [b.id for b in rows])
        return render_template(
            "bots.html",
            bots=rows,
            played=played,
            pager=pager,
            search=search,
            games=game_rows(),
            statuses=LISTED_STATUSES,
        )


# the list's search (GET arguments, kept from page to page): the name contains ``q``, the
# owner contains ``owner`` (both without case), it plays ``game``, its ``status``
LISTED_STATUSES = ("active", "paused", "disabled")


def _search(listed: Any) -> tuple[Any, dict[str, str]]:
    """The bot list's query narrowed by the search, and the search as understood (an
    unknown game or status is no filter)."""
    wanted = {k: request.args.get(k, "").strip()[:64] for k in ("q", "owner", "game", "status")}
    if wanted["q"]:
        listed = listed.where(Bot.name_key.contains(bot_name_key(wanted["q"]), autoescape=True))
    if wanted["owner"]:
        owner = wanted["owner"].lower()
        listed = listed.where(func.lower(Bot.owner).contains(owner, autoescape=True))
    if wanted["game"] in GAMES:
        # games is a JSON list of ids: its text holds the id in quotes (portable, no JSON
        # operators), and the count and the page stay one query each
        listed = listed.where(cast(Bot.games, String).contains(f'"{wanted["game"]}"'))
    else:
        wanted["game"] = ""
    if wanted["status"] in LISTED_STATUSES:
        listed = listed.where(Bot.status == wanted["status"])
    else:
        wanted["status"] = ""
    return listed, wanted


@bp.get("/bots/register")
def bot_register() -> str:
    with database().session() as session:
        who = reader(session)
        # signed in: the owner is the account and the bot may enter one of its events
        joined = list(
            session.scalars(
                select(Event).where(Event.id.in_(sorted(who.joined))).order_by(Event.name)
            )
        )
        # the event it enters: the one the link came from (an event's page passes it),
        # else the account's only event, as the API does when no event is named
        chosen = request.args.get("event_id", type=int) or request.args.get("event", type=int)
        if chosen not in who.joined:
            chosen = events.home_event_id(who)
        return render_template(
            "bot_register.html",
            games=game_rows(),
            account=who.name if who.account_id is not None else None,
            joined=joined,
            chosen=chosen,
        )


@bp.get("/bots/<int:bot_id>")
def bot(bot_id: int) -> str:
    with database().session() as session:
        found = session.get(Bot, bot_id)
        if found is None:
            abort(404, f"There is no bot {bot_id}.")
        if not found.reference:  # a reference bot is offered to every event: seen by all
            check_visible(session, found.event_id, f"bot {bot_id}")
        # one view of each rating for the table and the charts alike, whatever the bot's
        # status; the leaderboard (active bots only) gives the position alone
        views = services.bot_ratings(session, bot_id)
        ratings = []
        for game in game_rows():
            # every game's board, rated in it or not: the page asks as many queries whatever
            # it shows
            board = sorted_leaderboard(session, game["id"], found.event_id)
            if game["id"] not in views:
                continue
            position = next((i for i, r in enumerate(board, 1) if r["bot_id"] == bot_id), None)
            ratings.append(
                {
                    "game": game,
                    "row": views[game["id"]],
                    "rank": position,
                    "of": len(board) if position else None,
                }
            )
        counts = services.bot_match_counts(session, bot_id)
        shown, statuses = _status_filter()
        pager = paginate(sum(counts[s] for s in statuses), BOT_MATCHES_PAGE)
        matches, _ = services.list_matches(
            session,
            bot_id=bot_id,
            statuses=statuses,
            # a reference bot plays in every event, a moved bot played in another: a
            # private event's matches stay its members'
            hidden_events=hidden_events(session),
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
            versions=versions.bot_versions(session, bot_id),
            connection=(
                sessions.presence(session.get(BotSession, bot_id)) if found.connect else None
            ),
            **_powers(session, found),
            **_challenge(session, found),
            **_bot_charts(session, found, views),
        )


def _powers(session: Session, bot: Bot) -> dict[str, Any]:
    """What the bot page offers its reader: its event, and for those who manage the bot
    (its owner's account or token, its event's organisers, the admin) the buttons to
    rename, activate, delete and reset its owner token, and a hosted bot's versions of
    its code; to its event's organisers, pause."""
    who = reader(session)
    manages = who.manages(bot)
    return {
        "event": session.get(Event, bot.event_id) if bot.event_id is not None else None,
        "manages": manages,
        **_move_powers(session, who, bot),
        "pauses": who.organises_event(bot.event_id),
        # a hosted bot's versions, their reasons and their code: for those who manage it
        "code_versions": hosted.versions(session, bot) if bot.hosted and manages else None,
        "upload_limits": {
            "bytes": bundles.MAX_UPLOAD,
            "files": bundles.MAX_FILES,
            "unpacked": bundles.MAX_UNPACKED,
        },
    }


def _move_powers(session: Session, who: services.Caller, bot: Bot) -> dict[str, Any]:
    """What the bot page's "Move to event" control offers: the events the reader may try
    to move the bot into (theirs, as its owner or as an organiser; every event to the
    admin), and the open arena to its owner and its event's organisers; and whether
    the reader may mark it as a reference bot (or take the mark off).  The API judges
    the move itself (the freeze, the window, the bots per account) and says why not."""
    if bot.status == "deleted" or bot.kind != "bot":
        return {"move_events": [], "moves_out": False, "marks_reference": False}
    owns = who.owns(bot)
    wanted = select(Event).where(Event.id != bot.event_id if bot.event_id else true())
    if not who.admin:
        reachable = who.joined if owns and who.account_id is not None else who.organises
        wanted = wanted.where(Event.id.in_(sorted(reachable)))
    return {
        "move_events": list(session.scalars(wanted.order_by(Event.name))),
        "moves_out": bot.event_id is not None and (owns or who.organises_event(bot.event_id)),
        "marks_reference": bot_rules.may_mark_reference(config(), who, bot)
        or (bot.reference and owns),
    }


CHALLENGE_SEATS = 5  # opponents the bot page's challenge form offers at most (the API: more)


def _challenge(session: Session, bot: Bot) -> dict[str, Any]:
    """The bot page's "Challenge" section, which ``forms.js`` sends to ``POST
    /api/scrimmages`` (``services.scrimmages`` judges it and says why not): to the bot's
    owner, scrimmages of this bot against house bots, the bots it may challenge and the
    owner's other bots of its event; on a bot that accepts challenges, to a reader with
    bots of its event, scrimmages of one of those against it.  To those who manage the
    bot, the switch that lets others challenge it."""
    who = reader(session)
    shown: dict[str, Any] = {"challenge": None, "accepts_switch": False}
    if bot.kind != "bot" or bot.status == "deleted":
        return shown
    shown["accepts_switch"] = who.manages(bot)
    games = [g for g in bot.games or [] if g in GAMES]
    if who.owns(bot):
        mine, fixed = [bot], None
        others = scrimmages.challengeable(session, bot)
        listed = {b.id for b in others}
        others += [b for b in _readers_bots(session, who, bot) if b.id not in listed]
    elif bot.accepts_challenges and bot.status == "active":
        mine, fixed, others = _readers_bots(session, who, bot), bot, []
    else:
        return shown
    if not mine or not games:
        return shown
    seats = min(max(GAMES[g].max_players for g in games) - 1, CHALLENGE_SEATS)
    shown["challenge"] = {
        "mine": mine,
        "fixed": fixed,
        "bots": sorted(others, key=lambda b: b.name_key),
        "houses": sorted({p for g in games for p in POLICIES[g]}),
        "games": games,
        "seats": seats - (1 if fixed is not None else 0),
        "per_hour": config().scrimmages_per_hour,
    }
    return shown


def _may_meet(one: Bot, other: Bot) -> bool:
    """Two bots may sit at one scrimmage: one event, or both the open arena, or one of them
    a reference bot and the other an event's."""
    if one.event_id == other.event_id:
        return True
    return (one.reference and other.event_id is not None) or (
        other.reference and one.event_id is not None
    )


def _readers_bots(session: Session, who: services.Caller, bot: Bot) -> list[Bot]:
    """The reader's own active bots that may sit at a scrimmage with ``bot`` (``_may_meet``)
    and play one of its games; by name."""
    if who.account_id is not None:
        owned = Bot.account_id == who.account_id
    elif who.bot_id is not None:
        owned = Bot.id == who.bot_id
    else:
        return []
    rows = session.scalars(
        select(Bot)
        .where(owned, Bot.id != bot.id, Bot.kind == "bot", Bot.status == "active")
        .order_by(Bot.name_key)
    )
    return [b for b in rows if _may_meet(b, bot) and set(b.games or []) & set(bot.games or [])]


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
def _bot_charts(session: Session, bot: Bot, ratings: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the bot page draws: its rating history per game (with ``ratings``, the
    bot's ``services.bot_ratings``, the table's own), its results by opponent and its
    faults by kind, each as rows and as a chart: three queries, whatever the number of
    games, opponents and matches."""
    opponents = _opponents(session, bot.id)
    kinds = _fault_kinds(session, bot.id)
    return {
        "history": _rating_history(session, bot, ratings),
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


def _rating_history(
    session: Session, bot: Bot, ratings: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per game with rated matches (in the order of ``GAMES``): the number of matches,
    the bot's rating there (``ratings``: the page's table reads the same) and the chart
    of its Elo over them (``charts.rating_history``), with the fitted rating and its
    interval unless they are provisional.  The changes come in the order they were made
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
    history = []
    for game_id in sorted(elos, key=_game_order):
        rating = ratings.get(game_id)
        fitted = None if rating is None or rating["provisional"] else rating["fitted"]
        history.append(
            {
                "game": game_id,
                "matches": len(elos[game_id]) - 1,
                "rating": rating,
                "chart": charts.rating_history(
                    elos[game_id],
                    label=f"Rating history of {bot.name} in {game_title(game_id)}",
                    fitted=None
                    if fitted is None
                    else (fitted["rating"], fitted["low"], fitted["high"]),
                ),
            }
        )
    return history


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
            # a private event's bots are named to its members only
            events.not_hidden(Match.event_id, hidden_events(session)),
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
