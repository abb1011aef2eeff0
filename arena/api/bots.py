"""``/api/bots``: registration and management of bot endpoints.

A bot's endpoint is in an answer only for its owner and the organiser
(``services.reader``): anyone else could knock a contestant's bot over."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from sqlalchemy import select

from arena import services
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
    BotCreateSchema,
    BotDetailSchema,
    BotListArgsSchema,
    BotRegisteredSchema,
    BotRotatedSchema,
    BotRotateSchema,
    BotSchema,
    BotUpdateSchema,
)
from arena.models import Bot, BotSession, Rating
from arena.relay import sessions

blp = ApiBlueprint(
    "bots", __name__, url_prefix="/api/bots", description="Bot endpoints and their owners."
)
# a read answers anyone; a token (optional) shows the endpoints it may see
OPTIONAL_BEARER = [{}, *BEARER]


def _row(bot: Bot, schema: type[BotSchema], reader: services.Reader, **extra: Any) -> dict:
    """The answer's fields of ``bot``, its endpoint only for those who may see it."""
    row = as_row(bot, schema, **extra)
    if not reader.sees_endpoint(bot):
        del row["endpoint"]
    return row


@blp.route("")
class Bots(MethodView):
    @blp.arguments(BotListArgsSchema, location="query")
    @blp.response(200, BotSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List bots (by name)

        Deleted bots only with ``status=deleted``; people's seats (``kind`` person) only
        with ``kind=person``.  No token or secret is ever listed.
        ``endpoint`` is there only with a token that may see it: the organiser token
        (every bot's), a bot's owner token (that bot's).  Any other token is a 401.
        """
        statement = select(Bot)
        if "status" in query:
            statement = statement.where(Bot.status == query["status"])
        else:
            statement = statement.where(Bot.status != "deleted")
        if "kind" in query:
            statement = statement.where(Bot.kind == query["kind"])
        else:
            statement = statement.where(Bot.kind != "person")
        with database().session() as session:
            reader = services.reader(session, config(), bearer_token())
            bots = list(session.scalars(statement.order_by(Bot.name)))
            if "game" in query:  # games is a JSON list: filtered here, portably
                bots = [b for b in bots if query["game"] in b.games]
            start = (query["page"] - 1) * query["page_size"]
            rows = [_row(b, BotSchema, reader) for b in bots[start : start + query["page_size"]]]
        return paged(query, rows, len(bots))

    @blp.arguments(BotCreateSchema)
    @blp.response(201, BotRegisteredSchema)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Register a bot

        The arena calls the endpoint's ``GET /`` first: it must answer apiversion "1" and
        the games it plays.  The answer holds the owner token and the signing secret: they
        are shown this once only.  Give ``signing_secret`` to choose the secret yourself
        (then the bot can run with it before it is registered).  Names are compared
        without case and surrounding spaces: one that differs from a taken name only in
        those is a 409.
        """
        with database().session() as session:
            bot, owner_token, signing_secret = services.register_bot(session, config(), **data)
            return as_row(
                bot,
                BotRegisteredSchema,
                owner_token=owner_token,
                signing_secret=signing_secret,
            )


def _bot_detail(session: Any, bot: Bot, reader: services.Reader) -> dict[str, Any]:
    ratings = session.scalars(select(Rating).where(Rating.bot_id == bot.id).order_by(Rating.game))
    return _row(
        bot,
        BotDetailSchema,
        reader,
        ratings=[{"game": r.game, "elo": r.elo, "matches": r.matches} for r in ratings],
        recent_faults=services.recent_faults(session, bot.id),
        connection=sessions.presence(session.get(BotSession, bot.id)) if bot.connect else None,
    )


@blp.route("/<int:bot_id>")
class BotById(MethodView):
    @blp.response(200, BotDetailSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, bot_id: int) -> dict[str, Any]:
        """One bot, with its Elo in each game and the faults of its recent matches

        ``endpoint`` is there only for its owner (its owner token) and the organiser
        (the organiser token); any other token is a 401.
        """
        with database().session() as session:
            reader = services.reader(session, config(), bearer_token())
            return _bot_detail(session, services.get_bot(session, bot_id), reader)

    @blp.arguments(BotUpdateSchema)
    @blp.response(200, BotDetailSchema)
    @blp.doc(security=BEARER)
    def patch(self, data: dict[str, Any], bot_id: int) -> dict[str, Any]:
        """Change a bot (its owner only)

        A new (or the same) endpoint is checked again with ``GET /``, which also refreshes
        what the bot declares.
        """
        token = bearer_token()
        info = None
        if "endpoint" in data:
            # the owner is checked before the arena calls anything, and the bot is called
            # outside the write transaction
            with database().session() as session:
                services.check_owner(session, services.get_bot(session, bot_id), token)
            info = services.fetch_bot_info(config(), data["endpoint"])
        with database().session() as session:
            bot = services.get_bot(session, bot_id)
            services.check_owner(session, bot, token)
            services.update_bot(session, config(), bot, info=info, **data)
            return _bot_detail(session, bot, services.Reader(bot_id=bot.id))

    @blp.response(204)
    @blp.doc(security=BEARER)
    def delete(self, bot_id: int) -> None:
        """Delete a bot (its owner only)

        A soft delete: its matches, replays and rating history stay; its queued matches
        are cancelled and it is never called again.
        """
        with database().session() as session:
            bot = services.get_bot(session, bot_id)
            services.check_owner(session, bot, bearer_token())
            services.delete_bot(session, bot, config().pause_after_forfeits)


@blp.route("/<int:bot_id>/rotate")
class BotRotate(MethodView):
    @blp.arguments(BotRotateSchema)
    @blp.response(200, BotRotatedSchema)
    @blp.doc(security=BEARER)
    def post(self, data: dict[str, Any], bot_id: int) -> dict[str, Any]:
        """Rotate the owner token and/or the signing secret (its owner only)

        ``rotate`` lists what gets a new value (default: both); ``signing_secret`` is
        your own new secret, else the arena makes one.  The answer shows the new values
        this once only, and the old ones stop working at once: the old owner token is
        refused, and matches started from now on are signed with the new secret (a match
        already being played ends with the old one).  Restart the bot with the new secret.
        """
        with database().session() as session:
            # locked: of two rotations with the same token, the second is refused
            bot = services.get_bot(session, bot_id, lock=True)
            services.check_owner(session, bot, bearer_token())
            rotated = services.rotate_credentials(
                session, bot, data["rotate"], data.get("signing_secret")
            )
            return {"id": bot.id, "name": bot.name, "rotated": sorted(rotated), **rotated}
