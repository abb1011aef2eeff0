"""``/api/tournaments``: tournaments in any format of ``arena.competition.formats``
(``/api/formats`` lists them), their progress, standings, crosstable and stop rule."""

from __future__ import annotations

import logging
from typing import Any

from flask.views import MethodView
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from arena import services
from arena.api.common import (
    BEARER,
    PAGINATION_HEADERS_DOC,
    ApiBlueprint,
    as_row,
    config,
    current_caller,
    database,
    paged,
)
from arena.api.schemas import (
    TournamentCreateSchema,
    TournamentDetailArgsSchema,
    TournamentDetailSchema,
    TournamentListArgsSchema,
    TournamentSchema,
    requested_options,
)
from arena.competition import standings
from arena.models import Tournament
from arena.relay import sessions
from arena.services import events, people
from arena.worker import queue

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


def _summary(tournament: Tournament, progress: dict[str, int]) -> dict[str, Any]:
    return as_row(
        tournament,
        TournamentSchema,
        **_ids(tournament),
        progress=progress,
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
    @blp.arguments(TournamentListArgsSchema, location="query")
    @blp.response(200, TournamentSchema(many=True), headers=PAGINATION_HEADERS_DOC)
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

    @blp.arguments(TournamentCreateSchema)
    @blp.response(201, TournamentDetailSchema)
    @blp.doc(security=BEARER)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
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
        (its organisers start it, and only its bots enter).
        """
        options = requested_options(data)
        data["challenger_ids"] = data.get("challenger_ids") or ()
        names, deadline = data.pop("people"), data.pop("person_deadline_s")
        rated = data.pop("rated")
        with database().session() as session:
            check_starts(session, data["event_id"])
            engine = services.game_engine(data["game"])
            links = [
                people.person_seat(session, engine.id, name, "organiser", deadline)
                for name in names
            ]
            data["bot_ids"] = [*data["bot_ids"], *(link.bot_id for link in links)]
            tournament, match_ids = services.create_tournament(
                session,
                config(),
                options=options,
                rated=rated if rated is not None else not links,
                **data,
            )
            seat_links = [link.json() for link in links]
            body = _detail(session, tournament, seat_links=seat_links)
        # committed: now the workers may see the matches
        try:
            queue.enqueue_matches(config(), match_ids)
        except Exception:
            # the matches stay queued in the database, where the wardens send them again
            log.exception("tournament %s: enqueueing its matches failed", body["id"])
        return body


@blp.route("/<int:tournament_id>")
class TournamentById(MethodView):
    @blp.arguments(TournamentDetailArgsSchema, location="query")
    @blp.response(200, TournamentDetailSchema)
    def get(self, query: dict[str, Any], tournament_id: int) -> dict[str, Any]:
        """One tournament with its progress, standings, crosstable and stop rule"""
        with database().session() as session:
            tournament = services.get_tournament(session, tournament_id)
            events.check_visible(
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
        events.check_visible(
            session, current_caller(session), tournament.event_id, f"tournament {tournament_id}"
        )
        check_starts(session, tournament.event_id)
        services.cancel_tournament(session, tournament, config().pause_after_forfeits)
        session.flush()
        return _detail(session, tournament)
