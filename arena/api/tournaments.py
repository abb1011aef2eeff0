"""``/api/tournaments``: round robins, their progress, standings and crosstable."""

from __future__ import annotations

import logging
from typing import Any

from flask.views import MethodView
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from arena import services, tasks
from arena.api.common import (
    BEARER,
    PAGINATION_HEADERS_DOC,
    ApiBlueprint,
    as_row,
    bearer_token,
    config,
    database,
    paged,
)
from arena.api.schemas import (
    TournamentCreateSchema,
    TournamentDetailSchema,
    TournamentListArgsSchema,
    TournamentSchema,
)
from arena.models import Tournament

log = logging.getLogger(__name__)

blp = ApiBlueprint(
    "tournaments",
    __name__,
    url_prefix="/api/tournaments",
    description="Round-robin tournaments between registered bots.",
)


def _summary(tournament: Tournament, progress: dict[str, int]) -> dict[str, Any]:
    return as_row(
        tournament,
        TournamentSchema,
        bot_ids=[e.bot_id for e in tournament.entries],
        progress=progress,
    )


def _detail(session: Session, tournament: Tournament) -> dict[str, Any]:
    return as_row(
        tournament,
        TournamentDetailSchema,
        bot_ids=[e.bot_id for e in tournament.entries],
        progress=services.tournament_progress(session, tournament),
        standings=services.standings(session, tournament),
        crosstable=services.crosstable(session, tournament),
    )


@blp.route("")
class Tournaments(MethodView):
    @blp.arguments(TournamentListArgsSchema, location="query")
    @blp.response(200, TournamentSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List tournaments, newest first"""
        statement = select(Tournament)
        for key in ("game", "status"):
            if key in query:
                statement = statement.where(getattr(Tournament, key) == query[key])
        with database().session() as session:
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
        """Create a round robin (the organiser token when one is configured)

        For each combination of ``seats_per_match`` bots, ``games_per_pairing`` matches
        (a multiple of ``seats_per_match``: every bot plays every seat equally often).
        Options: a ``preset`` and/or ``options`` overriding it; the stored options are
        complete.  All matches are queued at once.
        """
        services.check_organiser(config(), bearer_token())
        options = dict(data.pop("options") or {})
        if data.get("preset") is not None:
            options["preset"] = data.pop("preset")
        with database().session() as session:
            tournament = services.create_round_robin(session, config(), options=options, **data)
            match_ids = [m.id for m in tournament.matches]
            body = _detail(session, tournament)
        # committed: now the workers may see the matches
        try:
            tasks.enqueue_matches(config(), match_ids)
        except Exception:
            # the matches stay queued in the database, where housekeeping finds them again
            log.exception("tournament %s: enqueueing its matches failed", body["id"])
        return body


@blp.route("/<int:tournament_id>")
class TournamentById(MethodView):
    @blp.response(200, TournamentDetailSchema)
    def get(self, tournament_id: int) -> dict[str, Any]:
        """One tournament with its progress, standings and crosstable"""
        with database().session() as session:
            return _detail(session, services.get_tournament(session, tournament_id))


@blp.route("/<int:tournament_id>/cancel", methods=["POST"])
@blp.response(200, TournamentDetailSchema)
@blp.doc(security=BEARER)
def cancel(tournament_id: int) -> dict[str, Any]:
    """Cancel a tournament (the organiser token when one is configured)

    Its queued matches are cancelled; running ones finish and count.
    """
    services.check_organiser(config(), bearer_token())
    with database().session() as session:
        tournament = services.get_tournament(session, tournament_id)
        services.cancel_tournament(session, tournament)
        session.flush()
        return _detail(session, tournament)
