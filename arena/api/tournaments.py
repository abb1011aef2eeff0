"""``/api/tournaments``: tournaments in any format of ``arena.competition.formats``
(``/api/formats`` lists them), their progress, standings, crosstable and stop rule; the
standings and the crosstable also as flat tables (``standings``, ``crosstable``: JSON
rows, and the same as CSV; ``standings?by=version``: split by the version each bot
declared); a qualifier's grades (``grades``, ``grades.csv``); a final run of a
tournament (``final``: the same, with more matches)."""

from __future__ import annotations

import logging
from typing import Any

from flask import jsonify
from flask.views import MethodView
from sqlalchemy import func, select
from sqlalchemy.orm import Session, object_session, selectinload

from arena import services
from arena.api import exports
from arena.api.common import (
    BEARER,
    OPTIONAL_BEARER,
    PAGINATION_HEADERS_DOC,
    ApiBlueprint,
    anyone,
    as_row,
    config,
    credentials_first,
    current_caller,
    database,
    paged,
    unless_open,
)
from arena.api.schemas.exports import CrosstableRowSchema, StandingRowSchema
from arena.api.schemas.tournaments import (
    GradeRowSchema,
    StandingsArgsSchema,
    TournamentCreateSchema,
    TournamentDetailArgsSchema,
    TournamentDetailSchema,
    TournamentFinalSchema,
    TournamentListArgsSchema,
    TournamentSchema,
    VersionRowSchema,
    requested_options,
)
from arena.competition import standings
from arena.models import Match, Tournament
from arena.relay import sessions
from arena.services import events, grading, people, versions, workers
from arena.services.errors import ServiceError
from arena.worker import building, queue

log = logging.getLogger(__name__)

blp = ApiBlueprint(
    "tournaments",
    __name__,
    url_prefix="/api/tournaments",
    description="Tournaments between registered bots, in any format of /api/formats, "
    "with independent or duplicate deals.",
)


def _ids(tournament: Tournament) -> dict[str, list[int]]:
    return {
        "bot_ids": [e.bot_id for e in tournament.entries],
        "challenger_ids": [e.bot_id for e in tournament.entries if e.challenger],
    }


def _warnings(tournament: Tournament, progress: dict[str, int]) -> list[dict[str, str]]:
    """What keeps its matches from being played (no worker alive: ``stall_warnings``)."""
    session = object_session(tournament)
    if session is None:
        return []
    building = tournament.status == "building"
    return workers.stall_warnings(session, progress, tournament.created_at, building=building)


def _build(tournament: Tournament) -> dict[str, int] | None:
    """How far a "building" tournament's matches are written (``build_progress``)."""
    session = object_session(tournament)
    return None if session is None else services.build_progress(session, tournament)


def _summary(tournament: Tournament, progress: dict[str, int]) -> dict[str, Any]:
    return as_row(
        tournament,
        TournamentSchema,
        **_ids(tournament),
        progress=progress,
        build=_build(tournament),
        warnings=_warnings(tournament, progress),
        seed=services.tournament_seed(tournament, progress),
    )


def _detail(
    session: Session,
    tournament: Tournament,
    with_crosstable: bool = True,
    seat_links: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    progress = services.tournament_progress(session, tournament)
    ids = _ids(tournament)
    return as_row(
        tournament,
        TournamentDetailSchema,
        **ids,
        offline_bot_ids=sessions.offline(session, ids["bot_ids"]),
        progress=progress,
        build=_build(tournament),
        warnings=_warnings(tournament, progress),
        seed=services.tournament_seed(tournament, progress),
        standings=standings.standings(session, tournament),
        crosstable=standings.crosstable(session, tournament) if with_crosstable else None,
        sprt_status=standings.sprt_summary(session, tournament),
        seat_links=seat_links,
    )


def check_starts(session: Session, event_id: int | None) -> None:
    """Who starts and cancels tournaments: an event's organisers (and the admin) for the
    event's; the admin for the open arena's (anyone where no organiser token is set)."""
    who = current_caller(session)
    if event_id is None:
        services.check_admin(config(), who)
    else:
        events.check_organises(who, events.get_event(session, event_id, who))


@blp.route("")
class Tournaments(MethodView):
    @credentials_first(anyone)
    @blp.arguments(TournamentListArgsSchema, location="query")
    @blp.response(200, TournamentSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List tournaments, newest first"""
        statement = select(Tournament)
        for key in ("game", "status", "event_id"):
            if key in query:
                statement = statement.where(getattr(Tournament, key) == query[key])
        with database().session() as session:
            hidden = events.hidden_event_ids(session, current_caller(session))
            statement = statement.where(events.not_hidden(Tournament.event_id, hidden))
            total = session.scalar(select(func.count()).select_from(statement.subquery()))
            tournaments = session.scalars(
                statement.options(selectinload(Tournament.entries))
                .order_by(Tournament.id.desc())
                .offset((query["page"] - 1) * query["page_size"])
                .limit(query["page_size"])
            ).all()
            items = [_summary(t, services.tournament_progress(session, t)) for t in tournaments]
        return paged(query, items, total or 0)

    @credentials_first(unless_open)
    @blp.arguments(TournamentCreateSchema)
    @blp.response(201, TournamentDetailSchema)
    @blp.alt_response(
        202,
        schema=TournamentDetailSchema,
        description="Accepted: a big tournament, 'building' while a worker writes its "
        "matches (its 'build' says how far)",
    )
    @blp.doc(security=BEARER)
    def post(self, data: dict[str, Any]) -> Any:
        """Create a tournament (the organiser token when one is configured)

        ``format`` is one of ``GET /api/formats`` (``arena.competition.formats.FORMATS``),
        which lists the fields each takes besides ``bot_ids``, ``seats_per_match`` and
        ``deal``; a field of another format is refused.  ``balance`` reports what the
        schedule achieved: matches per bot, seat spread and pair meetings.  ``deal: duplicate``
        plays each deal once per rotation of its table.  Options: a ``preset`` and/or
        ``options`` overriding it; the stored options are complete.  All matches are
        queued at once, after the commit.  ``people`` play in the browser: each gets a
        seat (``seat_links``, shown this once), the matches wait until their people sit
        down, and they are unrated unless ``rated``.  With ``event_id`` it is the event's
        (its organisers start it, and only its bots enter); its people's seats are the
        event's too, hidden with it from those not in a private event.

        A tournament of more than ``BUILD_INLINE`` (2,000) matches is answered at once with
        ``202 Accepted`` and the status ``building``: a worker schedules it and writes its
        matches, queued as they are written (``build`` says how far; ``GET`` it again),
        then it is ``running``.  Whatever is wrong with the request is still answered now.
        """
        options = requested_options(data)
        data["challenger_ids"] = data.get("challenger_ids") or ()
        names, deadline = data.pop("people"), data.pop("person_deadline_s")
        rated = data.pop("rated")
        with database().session() as session:
            check_starts(session, data["event_id"])
            engine = services.game_engine(data["game"])
            # an event's tournament seats its people in the event, as its bots are
            links = [
                people.person_seat(
                    session, engine.id, name, "organiser", deadline, event_id=data["event_id"]
                )
                for name in names
            ]
            data["bot_ids"] = [*data["bot_ids"], *(link.bot_id for link in links)]
            rated = rated if rated is not None else not links
            tournament, match_ids = services.create_tournament(
                session,
                config(),
                options=options,
                rated=rated,
                build_inline=services.BUILD_INLINE,
                created_by=current_caller(session).account_id,  # told when it finishes
                **data,
            )
            seat_links = [link.json() for link in links]
            body = _detail(session, tournament, seat_links=seat_links)
        # committed: now the workers may see the matches
        return _started(body, match_ids, rated)


def _started(body: dict[str, Any], match_ids: list[int], rated: bool) -> Any:
    """After the commit that wrote a tournament: its matches sent to the workers (201),
    or, "building", the tournament sent to a worker that writes them (202)."""
    if body["status"] == "building":
        try:
            building.send_build(config(), body["id"], rated)
        except Exception:
            log.exception("tournament %s: sending it to be built failed", body["id"])
            raise ServiceError(
                503,
                f"tournament {body['id']} is written but no worker could be asked to build "
                "it (the broker is unreachable): cancel it and start it again",
            ) from None
        return body, 202
    try:
        queue.enqueue_matches(config(), match_ids)
    except Exception:
        # the matches stay queued in the database, where the wardens send them again
        log.exception("tournament %s: enqueueing its matches failed", body["id"])
    return body


@blp.route("/<int:tournament_id>")
class TournamentById(MethodView):
    @credentials_first(anyone)
    @blp.arguments(TournamentDetailArgsSchema, location="query")
    @blp.response(200, TournamentDetailSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any], tournament_id: int) -> dict[str, Any]:
        """One tournament with its progress, standings, crosstable and stop rule"""
        with database().session() as session:
            tournament = services.get_tournament(session, tournament_id)
            services.check_visible(
                session, current_caller(session), tournament.event_id, f"tournament {tournament_id}"
            )
            return _detail(session, tournament, with_crosstable=query["crosstable"])


@blp.route("/<int:tournament_id>/cancel", methods=["POST"])
@blp.response(200, TournamentDetailSchema)
@blp.doc(security=BEARER)
def cancel(tournament_id: int) -> dict[str, Any]:
    """Cancel a tournament (the organiser token when one is configured; an event's
    organisers for its tournaments)

    Its queued matches are cancelled; running ones finish and count, and its ``seed``
    stays null until they have.
    """
    with database().session() as session:
        tournament = services.get_tournament(session, tournament_id)
        services.check_visible(
            session, current_caller(session), tournament.event_id, f"tournament {tournament_id}"
        )
        check_starts(session, tournament.event_id)
        services.cancel_tournament(session, tournament, config().pause_after_forfeits)
        session.flush()
        return _detail(session, tournament)


@blp.route("/<int:tournament_id>/final", methods=["POST"])
@credentials_first(unless_open)
@blp.arguments(TournamentFinalSchema)
@blp.response(201, TournamentDetailSchema)
@blp.alt_response(202, schema=TournamentDetailSchema, description="Accepted: building")
@blp.doc(security=BEARER)
def final(data: dict[str, Any], tournament_id: int) -> Any:
    """Start a final run of a tournament (whoever may start it: ``check_starts``)

    A new tournament with the same entrants, game, options, format, deal, event, stop
    rule and pass rule, a new seed and more matches: ``matches_factor`` times its
    ``games_per_pairing`` (round robin) or ``matches_per_bot``, or the count given.  It
    is named "<name> (final)" and its ``cloned_from`` is this one; its matches are queued
    after the commit, as a new tournament's.
    """
    with database().session() as session:
        original = _visible_tournament(session, tournament_id)
        check_starts(session, original.event_id)
        tournament, match_ids = services.create_final(
            session,
            config(),
            original,
            build_inline=services.BUILD_INLINE,
            created_by=current_caller(session).account_id,
            **data,
        )
        rated = session.scalar(
            select(Match.rated).where(Match.tournament_id == original.id).limit(1)
        )
        body = _detail(session, tournament)
    return _started(body, match_ids, True if rated is None else rated)


GRADE_COLUMNS = tuple(GradeRowSchema().fields)


@blp.route("/<int:tournament_id>/grades")
@blp.response(200, GradeRowSchema(many=True))
def grades_json(tournament_id: int) -> list[dict[str, Any]]:
    """A qualifier's grades: per challenger pass, fail or pending under its pass rule,
    with the evidence (matches, wins, score, best run, the deciding match ids); 404 for a
    tournament without a pass rule (``grades.csv``: the same table)"""
    with database().session() as session:
        return grading.tournament_grades(session, _visible_tournament(session, tournament_id))


@blp.route("/<int:tournament_id>/grades.csv")
@blp.response(200, {"format": "binary", "type": "string"}, content_type="text/csv")
def grades_csv(tournament_id: int) -> Any:
    """A qualifier's grades as CSV (the columns and rows of ``grades``)"""
    with database().session() as session:
        rows = grading.tournament_grades(session, _visible_tournament(session, tournament_id))
    return exports.csv_response(
        GradeRowSchema(many=True).dump(rows),
        GRADE_COLUMNS,
        f"tournament-{tournament_id}-grades.csv",
    )


VERSION_COLUMNS = tuple(VersionRowSchema().fields)


def version_rows(session: Session, tournament_id: int) -> list[dict[str, Any]]:
    """The standings split by version, as the answer writes them (JSON and CSV alike)."""
    tournament = _visible_tournament(session, tournament_id)
    return VersionRowSchema(many=True).dump(versions.tournament_versions(session, tournament))


# -- flat tables: the standings and the crosstable as JSON rows and as CSV ------------------
STANDING_COLUMNS = tuple(StandingRowSchema().fields)
CROSSTABLE_COLUMNS = tuple(CrosstableRowSchema().fields)


def _visible_tournament(session: Session, tournament_id: int) -> Tournament:
    tournament = services.get_tournament(session, tournament_id)
    services.check_visible(
        session, current_caller(session), tournament.event_id, f"tournament {tournament_id}"
    )
    return tournament


def standing_rows(session: Session, tournament: Tournament) -> list[dict[str, Any]]:
    """The standings as flat rows, best first, numbered by ``rank``: every export of the
    standings (JSON and CSV) is built here.  ``deals`` and ``par_per_deal`` are null
    unless the deals are duplicate."""
    return [
        {
            "rank": rank,
            "bot": row["name"],
            "deals": None,
            "par_per_deal": None,
            **{k: v for k, v in row.items() if k != "name"},
        }
        for rank, row in enumerate(standings.standings(session, tournament), start=1)
    ]


def crosstable_rows(session: Session, tournament: Tournament) -> list[dict[str, Any]]:
    """One row per pair of bots that met (each pair twice: from either side), by bot
    then opponent id."""
    table = standings.crosstable(session, tournament)
    names = {bot["id"]: bot["name"] for bot in table["bots"]}
    return [
        {
            "bot_id": bot_id,
            "bot": names.get(bot_id),
            "opponent_id": opponent_id,
            "opponent": names.get(opponent_id),
            **cell,
        }
        for bot_id, row in sorted((int(k), v) for k, v in table["cells"].items())
        for opponent_id, cell in sorted((int(k), v) for k, v in row.items())
    ]


@blp.route("/<int:tournament_id>/standings")
@credentials_first(anyone)
@blp.arguments(StandingsArgsSchema, location="query")
@blp.response(200, StandingRowSchema(many=True))
@blp.doc(security=OPTIONAL_BEARER)
def standings_json(query: dict[str, Any], tournament_id: int) -> Any:
    """The standings as one flat row per bot, best first (``standings.csv``: the same
    table)

    ``by=version``: one row per bot and version it declared as its matches started
    (``VersionRow``: bot_id, bot, version, matches, points, wins, mean rank and score,
    first and last played), by bot name, then first played.
    """
    with database().session() as session:
        if query.get("by") == "version":
            return jsonify(version_rows(session, tournament_id))
        return standing_rows(session, _visible_tournament(session, tournament_id))


@blp.route("/<int:tournament_id>/standings.csv")
@credentials_first(anyone)
@blp.arguments(StandingsArgsSchema, location="query")
@blp.response(200, {"format": "binary", "type": "string"}, content_type="text/csv")
@blp.doc(security=OPTIONAL_BEARER)
def standings_csv(query: dict[str, Any], tournament_id: int) -> Any:
    """The standings as CSV (the columns and rows of ``standings``, ``by=version`` too)"""
    with database().session() as session:
        if query.get("by") == "version":
            return exports.csv_response(
                version_rows(session, tournament_id),
                VERSION_COLUMNS,
                f"tournament-{tournament_id}-standings-by-version.csv",
            )
        rows = standing_rows(session, _visible_tournament(session, tournament_id))
    return exports.csv_response(
        StandingRowSchema(many=True).dump(rows),
        STANDING_COLUMNS,
        f"tournament-{tournament_id}-standings.csv",
    )


@blp.route("/<int:tournament_id>/crosstable")
@blp.response(200, CrosstableRowSchema(many=True))
def crosstable_json(tournament_id: int) -> list[dict[str, Any]]:
    """The crosstable as flat rows: each bot's wins, draws and losses against each
    opponent it met (``crosstable.csv``: the same table)"""
    with database().session() as session:
        return crosstable_rows(session, _visible_tournament(session, tournament_id))


@blp.route("/<int:tournament_id>/crosstable.csv")
@blp.response(200, {"format": "binary", "type": "string"}, content_type="text/csv")
def crosstable_csv(tournament_id: int) -> Any:
    """The crosstable as CSV (the columns and rows of ``crosstable``)"""
    with database().session() as session:
        rows = crosstable_rows(session, _visible_tournament(session, tournament_id))
    return exports.csv_response(
        CrosstableRowSchema(many=True).dump(rows),
        CROSSTABLE_COLUMNS,
        f"tournament-{tournament_id}-crosstable.csv",
    )
