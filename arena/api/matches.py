"""``/api/matches``: matches, their seats and results, and their replays."""

from __future__ import annotations

import gzip
from typing import Any

from flask import Response, abort, request
from flask.views import MethodView

from arena import services
from arena.api.common import PAGINATION_HEADERS_DOC, ApiBlueprint, database, paged
from arena.api.schemas import (
    MatchDetailSchema,
    MatchListArgsSchema,
    MatchSchema,
    ReplayArgsSchema,
)
from arena.models import Match, Replay
from arena.replay import decode, seat_decisions, seat_events

blp = ApiBlueprint(
    "matches", __name__, url_prefix="/api/matches", description="Matches and their replays."
)


@blp.route("")
class Matches(MethodView):
    @blp.arguments(MatchListArgsSchema, location="query")
    @blp.response(200, MatchSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    def get(self, query: dict[str, Any]) -> tuple[list[Match], int, dict[str, str]]:
        """List matches, newest first

        Filters: ``game``, ``status``, ``tournament_id``, ``bot_id`` (a bot in any seat).
        """
        with database().session() as session:
            matches, total = services.list_matches(session, **query)
        return paged(query, matches, total)


@blp.route("/<int:match_id>")
class MatchById(MethodView):
    @blp.response(200, MatchDetailSchema)
    def get(self, match_id: int) -> Match:
        """One match: seats with bot names, ranks, scores and strikes; status and attempts"""
        with database().session() as session:
            return services.get_match(session, match_id)


@blp.route("/<int:match_id>/replay")
class MatchReplay(MethodView):
    @blp.arguments(ReplayArgsSchema, location="query")
    @blp.response(200)
    def get(self, query: dict[str, Any], match_id: int) -> Any:
        """The replay of a finished match

        Without ``seat``: the full record (format 2: seed, options, players, every step's
        decisions, every event with its visibility, the outcome), enough to re-simulate
        the match; it is sent as stored, gzip-compressed with ``Content-Encoding: gzip``,
        to a client whose ``Accept-Encoding`` allows it.  With ``seat=k``: exactly what
        seat k received, ``{match_id, seat, game, players, options, events, decisions}``.
        """
        with database().session() as session:
            match = services.get_match(session, match_id)
            replay = session.get(Replay, match.id)
            if match.status != "finished" or replay is None:
                abort(404, f"match {match.id} has no replay yet: it is {match.status}")
            data = replay.data
        if "seat" not in query:
            return stored_json(data)
        record = decode(data)
        seat = query["seat"]
        if not 0 <= seat < len(record["players"]):
            abort(
                400,
                f"seat {seat} is out of range: match {match_id} has seats 0 to "
                f"{len(record['players']) - 1}",
            )
        return {
            "match_id": match_id,
            "seat": seat,
            "game": record["game"],
            "players": record["players"],
            "options": record["options"],
            "events": seat_events(record, seat),
            "decisions": seat_decisions(record, seat),
        }


def stored_json(data: bytes) -> Response:
    """gzip-compressed JSON as stored, to a client that accepts gzip; else decompressed."""
    if request.accept_encodings["gzip"] > 0:
        response = Response(data, mimetype="application/json")
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = Response(gzip.decompress(data), mimetype="application/json")
    response.vary.add("Accept-Encoding")
    return response
