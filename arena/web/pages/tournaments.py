"""Tournaments' pages: the list, the form that starts one (its formats and their fields
come from ``GET /api/formats``, its games' options embedded in the page), and a
tournament's page: its format in words (``arena.competition.formats``), progress, standings,
crosstable and a gauntlet's stop rule from ``arena.competition.standings`` (rows kept as each match
finishes), a qualifier's grades (``arena.services.grading``), the standings split by
version when a bot changed its version (``arena.services.versions``), and its matches in
schedule order.  A private event's tournaments are for its members: the list leaves them
out, and to anyone else their pages do not exist (404)."""

from __future__ import annotations

from typing import Any

from flask import Response, abort, render_template, request
from sqlalchemy import func, or_, select
from werkzeug.http import quote_etag

from arena import services
from arena.competition import formats, standings
from arena.games import GAMES, POLICIES
from arena.models import Bot, Event, Match, Tournament, TournamentEntry
from arena.relay import sessions
from arena.services import events, grading, people, versions, workers
from arena.services.access import admin_open
from arena.web.pages.common import (
    LIST_PAGE,
    NOTHING,
    bp,
    check_visible,
    config,
    database,
    game_rows,
    hidden_events,
    matches_query,
    not_modified,
    page_etag,
    paginate,
    progress_by_id,
    reader,
    with_validators,
)

TOURNAMENT_MATCHES_PAGE = 50  # a tournament's matches, in schedule order
CROSSTABLE_MAX_BOTS = 40  # larger tournaments: the crosstable only through the API
DECISIONS = {"H1": "passed (H1)", "H0": "failed (H0)", None: "still open"}
LIVE_MATCHES_LISTED = 24  # the running matches a tournament page links to
EVIDENCE_LINKED = 12  # a grade's evidence: the first matches linked, the others counted


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


@bp.get("/tournaments")
def tournaments() -> str:
    with database().session() as session:
        listed = select(Tournament).where(
            events.not_hidden(Tournament.event_id, hidden_events(session))
        )
        pager = paginate(
            session.scalar(select(func.count()).select_from(listed.subquery())) or 0, LIST_PAGE
        )
        rows = list(
            session.scalars(
                listed.order_by(Tournament.id.desc()).offset(pager["offset"]).limit(LIST_PAGE)
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
            progress=progress_by_id(session, rows),
            pager=pager,
        )


@bp.get("/tournaments/new")
def tournament_new() -> str:
    with database().session() as session:
        who = reader(session)
        # an event's tournament is started by its organisers: theirs are offered
        organised = [
            e
            for e in session.scalars(select(Event).order_by(Event.id.desc()))
            if who.organises_event(e.id)
        ]
        if organised:
            # the house bots are every event's reference opponents: made on first use
            for policy in sorted({p for game in POLICIES.values() for p in game}):
                people.house_bot(session, policy)
        rows = list(
            session.scalars(
                select(Bot)
                .where(
                    Bot.status == "active",
                    Bot.kind != "person",
                    # a reference bot is offered to every event, whatever its own
                    or_(
                        events.not_hidden(Bot.event_id, hidden_events(session)),
                        Bot.reference.is_(True),
                    ),
                )
                .order_by(Bot.name)
            )
        )
        offline = set(sessions.offline(session, (b.id for b in rows)))
        chosen = request.args.get("event_id", type=int)
        return render_template(
            "tournament_new.html",
            games=game_rows(),
            events=organised,
            chosen_event=chosen if chosen in {e.id for e in organised} else None,
            bots=rows,
            offline=offline,
            game_options=_option_forms(),
            token_field=_token_field(who),
        )


@bp.get("/tournaments/<int:tournament_id>")
def tournament(tournament_id: int) -> Response:
    with database().session() as session:
        found = session.get(Tournament, tournament_id)
        if found is None:
            abort(404, f"There is no tournament {tournament_id}.")
        check_visible(session, found.event_id, f"tournament {tournament_id}")
        progress = services.tournament_progress(session, found)
        pager = paginate(progress["total"], TOURNAMENT_MATCHES_PAGE)
        who = reader(session)
        may_cancel = who.organises_event(found.event_id) or (
            found.event_id is None and admin_open(config())
        )
        token_field = not may_cancel and _token_field(who)
        # everything the page shows that changes does so with the status, the counts or
        # an entrant's name (a rename or a deletion changes its bot's updated_at)
        renamed = session.scalar(
            select(func.max(Bot.updated_at))
            .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
            .where(TournamentEntry.tournament_id == tournament_id)
        )
        offline = sessions.offline(session, (e.bot_id for e in found.entries))
        # no worker alive to play its matches
        stalls = workers.stall_warnings(
            session, progress, found.created_at, building=found.status == "building"
        )
        etag = page_etag(
            found.status, sorted(progress.items()), pager["page"], renamed, offline,
            [w["code"] for w in stalls], may_cancel, token_field,
        )  # fmt: skip
        unchanged = not_modified(etag)
        if unchanged is not None:
            return unchanged
        rows = standings.standings(session, found)
        matches = list(
            session.scalars(
                matches_query()
                .where(Match.tournament_id == tournament_id)
                .order_by(Match.id)
                .offset(pager["offset"])
                .limit(TOURNAMENT_MATCHES_PAGE)
            )
        )
        live = _is_live(found, progress)
        playing = list(
            session.scalars(
                matches_query()
                .where(Match.tournament_id == tournament_id, Match.status == "running")
                .order_by(Match.id)
                .limit(LIVE_MATCHES_LISTED)
            )
        )
        crosstable = (
            standings.crosstable(session, found) if len(rows) <= CROSSTABLE_MAX_BOTS else None
        )
        # split by version only when some bot changed its version: else it is the standings
        changed = versions.versions_changed(session, found)
        by_version = versions.tournament_versions(session, found) if changed else []
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
            has_challengers=_takes(found, "challenger_ids"),
            duplicate=found.deal == "duplicate",
            crosstable=crosstable,
            crosstable_rows=_crosstable_rows(crosstable),
            crosstable_max=CROSSTABLE_MAX_BOTS,
            stop_rule=_stop_rule(standings.sprt_summary(session, found)),
            grades=_grades(session, found),
            pass_rule=grading.pass_rule(found).text() if found.pass_rule else None,
            by_version=by_version,
            matches=matches,
            playing=playing,
            offline=[session.get(Bot, bot_id) for bot_id in offline],
            stalls=stalls,
            live_listed=LIVE_MATCHES_LISTED,
            pager=pager,
            live=live,
            may_cancel=may_cancel,
            token_field=token_field,
            build=services.build_progress(session, found),
            etag=quote_etag(etag, weak=True),  # the header's value, for forms.js
        )
        return with_validators(Response(body, mimetype="text/html"), etag)


def _token_field(who: services.Caller) -> bool:
    """Whether a form that starts or cancels tournaments offers a field for the organiser
    token: only to a visitor without an account where a token is configured (its holder
    acts with it; in the local profile without accounts, say).  A signed-in account acts
    with its login (an event's organisers, an admin) or may not act at all, and where no
    token is configured the admin's operations are open to anyone (``admin_open``)."""
    return who.anonymous and not admin_open(config())


def _grades(session: Any, tournament: Tournament) -> list[dict[str, Any]] | None:
    """A qualifier's grade rows with the evidence's first match ids to link (None: the
    tournament has no pass rule)."""
    if not tournament.pass_rule:
        return None
    rows = []
    for row in grading.tournament_grades(session, tournament):
        ids = [int(i) for i in row["evidence"].split()]
        rows.append(
            {
                **row,
                "evidence_ids": ids[:EVIDENCE_LINKED],
                "evidence_more": max(0, len(ids) - EVIDENCE_LINKED),
            }
        )
    return rows


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
    """Whether the page should refresh itself: matches are still to be written or played."""
    if tournament.status == "building":
        return True
    return tournament.status == "running" and progress["queued"] + progress["running"] > 0


def _takes(tournament: Tournament, field: str) -> bool:
    """Whether the tournament's format takes ``field`` (``Format.takes``)."""
    fmt = formats.FORMATS.get(tournament.format)
    return fmt is not None and fmt.takes(field)


def _format_text(tournament: Tournament) -> str:
    """The format and its parameters in words (``Format.describe``): "Balanced: 40
    matches per bot, 2 seats per match, independent deals"."""
    fmt = formats.FORMATS.get(tournament.format)
    if fmt is None:  # a format this version does not know: its name, as stored
        return f"{tournament.format}: {tournament.seats_per_match} seats per match"
    return fmt.describe(
        formats.Entry(
            bot_ids=(),
            seats_per_match=tournament.seats_per_match,
            deal=tournament.deal,
            games_per_pairing=tournament.games_per_pairing,
            matches_per_bot=tournament.matches_per_bot,
            sprt=None if not tournament.sprt else formats.Sprt(**tournament.sprt),
        )
    )


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
