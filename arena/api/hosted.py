"""Hosted bots' code (``/api/bots/<id>/code``) and every bot's private match logs
(``/api/matches/<id>/logs/<seat>``): upload a version, list them, download one, make
one play again; read what a bot wrote (its stderr when hosted, its answers' ``debug``
text on any transport).  Code and logs are for the bot's owner, its account, its
event's organisers and the admin only."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify, request
from flask.views import MethodView
from marshmallow import Schema, fields

from arena import services
from arena.api.common import (
    BEARER,
    ApiBlueprint,
    config,
    credentials_first,
    current_caller,
    database,
    nobody,
)
from arena.api.schemas.fields import UtcDateTime
from arena.hosted import bundles
from arena.models import CODE_STATUSES, Match
from arena.services import hosted
from arena.worker import queue

blp = ApiBlueprint(
    "hosted",
    __name__,
    url_prefix="/api",
    description="Hosted bots' code and versions; bots' private match logs.",
)


class CodeVersionSchema(Schema):
    version = fields.String(metadata={"description": "the first 12 hex digits of its SHA-256"})
    sha256 = fields.String()
    media_type = fields.String(metadata={"description": "text/x-python or application/zip"})
    size = fields.Integer(metadata={"description": "bytes as uploaded"})
    files = fields.Integer()
    uploaded_at = UtcDateTime()
    status = fields.String(
        metadata={
            "description": "one of "
            + ", ".join(CODE_STATUSES)
            + ": validating until its validation match is played, then passed or failed"
        }
    )
    reason = fields.String(allow_none=True, metadata={"description": "why it failed"})
    match_id = fields.Integer(allow_none=True, metadata={"description": "its validation match"})
    active = fields.Boolean(metadata={"description": "the version that plays"})


UPLOAD_DOC = {
    "requestBody": {
        "required": True,
        "description": f"the code as the raw body: one Python file, {bundles.PYTHON} (it "
        f"becomes bot.py), or a zip with bot.py at its root, {bundles.ZIP}; at most "
        f"{bundles.MAX_UPLOAD} bytes, {bundles.MAX_FILES} files and {bundles.MAX_UNPACKED} "
        "bytes unpacked",
        "content": {
            bundles.PYTHON: {"schema": {"type": "string"}},
            bundles.ZIP: {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def _body() -> bytes:
    """The raw body, read no further than an upload may be (a larger one is refused
    without being kept)."""
    length = request.content_length
    if length is not None and length > bundles.MAX_UPLOAD:
        raise services.ServiceError(
            413, f"the upload is {length} bytes; at most {bundles.MAX_UPLOAD} are taken"
        )
    data = request.stream.read(bundles.MAX_UPLOAD + 1)
    if len(data) > bundles.MAX_UPLOAD:
        raise services.ServiceError(413, f"the upload is over {bundles.MAX_UPLOAD} bytes")
    return data


@blp.route("/bots/<int:bot_id>/code")
class BotCode(MethodView):
    @credentials_first(nobody)
    @blp.response(200, CodeVersionSchema(many=True))
    @blp.doc(security=BEARER)
    def get(self, bot_id: int) -> list[dict[str, Any]]:
        """A hosted bot's code versions, newest first (its owner, or an organiser)"""
        with database().session() as session:
            who = current_caller(session)  # a token that is no one's: 401 first
            bot = services.get_bot(session, bot_id)
            services.check_manages(who, bot)
            return hosted.versions(session, bot)

    @credentials_first(nobody)
    @blp.response(202, CodeVersionSchema)
    @blp.doc(security=BEARER, **UPLOAD_DOC)
    def put(self, bot_id: int) -> dict[str, Any]:
        """Upload a new version of a hosted bot's code (its owner, or an organiser)

        The version plays a short unrated validation match against the house random
        bot; if its seat has no fault it becomes the version that plays (``status``
        passed, ``active``), else it fails (``reason`` says why, with the end of its log)
        and the version that played before goes on.  The same bytes again are the same
        version (validated again only if it failed).  An event's freeze applies.
        """
        with database().session() as session:
            who = current_caller(session)
            bot = services.get_bot(session, bot_id, lock=True)
            services.check_manages(who, bot)
            data = _body()
            code, matches = hosted.upload(session, who, bot, data, request.content_type)
            answer = hosted.version_row(bot, code)
        if matches:
            queue.enqueue_matches(config(), matches)
        return answer


@blp.route("/bots/<int:bot_id>/code/<string:version>")
class BotCodeVersion(MethodView):
    @blp.response(200)
    @blp.doc(
        security=BEARER,
        responses={"200": {"description": "the code as uploaded", "content": {
            bundles.PYTHON: {"schema": {"type": "string"}},
            bundles.ZIP: {"schema": {"type": "string", "format": "binary"}},
        }}},
    )  # fmt: skip
    def get(self, bot_id: int, version: str) -> Response:
        """Download a version of a hosted bot's code, as uploaded (its owner, or an organiser)"""
        with database().session() as session:
            who = current_caller(session)  # a token that is no one's: 401 first
            bot = services.get_bot(session, bot_id)
            services.check_manages(who, bot)
            code = hosted.get_code(session, bot, version)
            suffix = "py" if code.media_type == bundles.PYTHON else "zip"
            filename = f"bot-{bot.id}-{code.version}.{suffix}"
            return Response(
                code.data,
                mimetype=code.media_type,
                headers={"Content-Disposition": f'attachment; filename="{filename}"'},
            )


@blp.route("/bots/<int:bot_id>/code/<string:version>/activate")
class BotCodeActivate(MethodView):
    @blp.response(200, CodeVersionSchema)
    @blp.doc(security=BEARER)
    def post(self, bot_id: int, version: str) -> dict[str, Any]:
        """Make a version that passed its validation the one that plays (a roll-back)"""
        with database().session() as session:
            who = current_caller(session)
            bot = services.get_bot(session, bot_id, lock=True)
            code = hosted.activate(session, who, bot, version)
            return hosted.version_row(bot, code)


@blp.route("/matches/<int:match_id>/logs/<string:seat>")
class MatchSeatLog(MethodView):
    @blp.response(200)
    @blp.doc(
        security=BEARER,
        responses={"200": {"description": "the log as text", "content": {"text/plain": {}}}},
    )
    def get(self, match_id: int, seat: str) -> Response:
        """A seat's private log of a match (its bot's owner, or an organiser)

        Each decision's ``debug`` text (any transport may send one with its answer) and
        what a hosted bot wrote to stderr, decision by decision, as text.  With
        ``?format=json``, the entries: ``step``, ``decision_id``, ``debug``, ``stderr``.
        """
        if not seat.isdecimal() or len(seat) > 3:
            raise services.ServiceError(404, f"match {match_id} has no seat {seat}")
        with database().session() as session:
            match = session.get(Match, match_id)
            if match is None:
                raise services.ServiceError(404, f"no match {match_id}")
            services.check_visible(
                session, current_caller(session), match.event_id, f"match {match_id}"
            )
            number = int(seat)
            hosted.check_reads_log(session, current_caller(session), match, number)
            if request.args.get("format") == "json":
                return jsonify(hosted.log_entries(session, match, number))
            return Response(hosted.log_text(session, match, number), mimetype="text/plain")
