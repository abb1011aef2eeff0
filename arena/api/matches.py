"""``/api/matches``: matches, their seats and results, and their replays.

Nothing that shows a deal (a seed, a replay, frames) is answered while a match that plays
it is queued or running (``services.deals_being_played``); results are.  A private event's
matches are for its members (and the admin): to anyone else every route answers 404 and
the list leaves them out."""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from typing import Any

import orjson
from flask import Response, abort, request
from flask.views import MethodView

from arena import services
from arena.api.common import (
    OPTIONAL_BEARER,
    PAGINATION_HEADERS_DOC,
    ApiBlueprint,
    anyone,
    as_row,
    credentials_first,
    current_caller,
    database,
    paged,
)
from arena.api.schemas.matches import (
    FramesArgsSchema,
    MatchDetailSchema,
    MatchListArgsSchema,
    MatchSchema,
    ReplayArgsSchema,
)
from arena.match.frames import HiddenWhileLive, PerspectiveError, answer_frames
from arena.match.records import COMPRESSION_LEVEL, decode, seat_decisions, seat_events
from arena.models import Match, Replay
from arena.services import events
from arena.worker.live import steps_so_far

blp = ApiBlueprint(
    "matches", __name__, url_prefix="/api/matches", description="Matches and their replays."
)


def visible_match(session: Any, match_id: int) -> Match:
    """The match, else 404: also one of a private event the caller is not in (its
    existence is not told)."""
    match = services.get_match(session, match_id)
    services.check_visible(session, current_caller(session), match.event_id, f"match {match_id}")
    return match


def _rows(session: Any, matches: list[Match], schema: type[MatchSchema]) -> list[dict[str, Any]]:
    """The answer's fields of each match, its seed null while its deal is being played."""
    playing = services.deals_being_played(session, matches)
    return [as_row(m, schema, seed=services.match_seed(m, playing[m.id])) for m in matches]


@blp.route("")
class Matches(MethodView):
    @credentials_first(anyone)
    @blp.arguments(MatchListArgsSchema, location="query")
    @blp.response(200, MatchSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List matches, newest first

        Filters: ``game``, ``status``, ``tournament_id``, ``bot_id`` (a bot in any seat).
        A private event's matches are listed for its members only.
        """
        with database().session() as session:
            hidden = events.hidden_event_ids(session, current_caller(session))
            matches, total = services.list_matches(session, hidden_events=hidden, **query)
            rows = _rows(session, matches, MatchSchema)
        return paged(query, rows, total)


@blp.route("/<int:match_id>")
class MatchById(MethodView):
    @blp.response(200, MatchDetailSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, match_id: int) -> dict[str, Any]:
        """One match: seats with bot names, ranks, scores and strikes; status and attempts"""
        with database().session() as session:
            return _rows(session, [visible_match(session, match_id)], MatchDetailSchema)[0]


@blp.route("/<int:match_id>/replay")
class MatchReplay(MethodView):
    @credentials_first(anyone)
    @blp.arguments(ReplayArgsSchema, location="query")
    @blp.response(200)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any], match_id: int) -> Any:
        """The replay of a finished match

        Without ``seat``: the full record (format 3, or 2 for a match recorded before
        the time bank: seed, options, players, every step's decisions with their draws
        on the time bank, every event with its visibility, the outcome), enough to re-simulate
        the match; it is sent as stored, gzip-compressed with ``Content-Encoding: gzip``,
        to a client whose ``Accept-Encoding`` allows it.  With ``seat=k``: exactly what
        seat k received, ``{match_id, seat, game, players, options, events, decisions}``.
        Either is a 403 while another match of its deal (a duplicate deal's rotation) is
        queued or running: it shows that match's cards.
        """
        with database().session() as session:
            match = visible_match(session, match_id)
            replay = session.get(Replay, match.id)
            if match.status != "finished" or replay is None:
                abort(404, f"match {match.id} has no replay yet: it is {match.status}")
            playing = services.deal_being_played(session, match)
            if playing:
                abort(403, services.deal_hidden_message(match, playing))
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


@blp.route("/<int:match_id>/frames")
class MatchFrames(MethodView):
    @credentials_first(anyone)
    @blp.arguments(FramesArgsSchema, location="query")
    @blp.response(200)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any], match_id: int) -> Any:
        """The table at every step, from one perspective (what the replay viewer draws)

        Frame ``i`` is the table once ``i`` steps are played (frame 0: the deal), with
        the events the perspective observed in that step and the step's decisions as it
        may see them (``public``: who was asked, latency and fault, not the answer).  The
        first frame of the answer has the whole ``view``; each later one only the
        ``changes`` (and the ``gone`` keys) from the one before.  A finished match has
        every perspective; a running one, the frames played so far, and only ``public``
        unless its tournament's ``live_view`` is ``everyone``: poll with ``since`` set to
        the number of frames held.  ``complete`` is true once no frame will be added.
        A record this server cannot re-simulate has ``frames: null`` and its ``events``.
        Every perspective, public included, is a 403 while another match of its deal (a
        duplicate deal's rotation) is queued or running: it is dealt the same cards.
        """
        perspective, since = query["perspective"], query["since"]
        with database().session() as session:
            match = visible_match(session, match_id)
            # before the cache: a finished match's frames are kept, its deal may not be over
            playing = services.deal_being_played(session, match)
            if [i for i in playing if i != match.id]:
                abort(403, services.deal_hidden_message(match, playing))
            key = (database().url, match.id, perspective)
            if match.status == "finished" and since == 0:
                with _FRAMES_LOCK:
                    cached = _FRAMES.get(key)
                    if cached is not None:
                        _FRAMES.move_to_end(key)
                        return stored_json(cached)
            replay = session.get(Replay, match.id) if match.status == "finished" else None
            record = replay.record if replay is not None else None
            steps = (
                steps_so_far(session, match.id, match.attempts)
                if record is None and match.status == "running"
                else None
            )
            try:
                body = answer_frames(match, record, steps, perspective, since)
            except PerspectiveError as exc:
                abort(400, str(exc))
            except HiddenWhileLive as exc:
                abort(403, str(exc))
        data = gzip.compress(orjson.dumps(body), COMPRESSION_LEVEL, mtime=0)
        if record is not None and since == 0:
            with _FRAMES_LOCK:
                _FRAMES[key] = data
                while len(_FRAMES) > FRAMES_KEPT:
                    _FRAMES.popitem(last=False)
        return stored_json(data)


# a finished match's frames never change: the last few answers are kept, compressed
FRAMES_KEPT = 64
_FRAMES: OrderedDict[tuple[str, int, str], bytes] = OrderedDict()
_FRAMES_LOCK = threading.Lock()


def stored_json(data: bytes) -> Response:
    """gzip-compressed JSON as stored, to a client that accepts gzip; else decompressed."""
    if request.accept_encodings["gzip"] > 0:
        response = Response(data, mimetype="application/json")
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = Response(gzip.decompress(data), mimetype="application/json")
    response.vary.add("Accept-Encoding")
    return response
