"""``/api/bots``: registration and management of bot endpoints.

A bot's endpoint is in an answer only for those who manage it (``Caller.sees_endpoint``:
its owner, its account, its event's organisers, the admin): anyone else could knock a
contestant's bot over.  A private event's bots are for its members only."""

from __future__ import annotations

import logging
from typing import Any

from flask.views import MethodView
from sqlalchemy import func, select

from arena import services
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
    limit_registration,
    nobody,
    paged,
)
from arena.api.schemas.bots import (
    BotAttachSchema,
    BotCreateSchema,
    BotDetailSchema,
    BotListArgsSchema,
    BotRegisteredSchema,
    BotRotatedSchema,
    BotRotateSchema,
    BotSchema,
    BotUpdateSchema,
)
from arena.api.schemas.tournaments import BotVersionSchema
from arena.models import Bot, BotSession, bot_name_key
from arena.relay import sessions
from arena.services import bots as bot_rules
from arena.services import events, validation, versions
from arena.services.bots import started_validation
from arena.worker import queue

log = logging.getLogger(__name__)

blp = ApiBlueprint(
    "bots", __name__, url_prefix="/api/bots", description="Bot endpoints and their owners."
)


def _row(bot: Bot, schema: type[BotSchema], reader: services.Caller, **extra: Any) -> dict:
    """The answer's fields of ``bot``, its endpoint only for those who may see it."""
    row = as_row(bot, schema, **{"validation": validation.verdict(bot), **extra})
    row["reference"] = bool(bot.reference) or bot.kind == "house"
    if not reader.sees_endpoint(bot):
        del row["endpoint"]
    return row


@blp.route("")
class Bots(MethodView):
    @credentials_first(anyone)
    @blp.arguments(BotListArgsSchema, location="query")
    @blp.response(200, BotSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List bots (by name)

        Deleted bots only with ``status=deleted``; people's seats (``kind`` person) only
        with ``kind=person``.  No token or secret is ever listed.  ``mine=true``: the
        bots of the account signed in or whose token is given; ``q``: the name contains
        it; ``owner``: the owner is it (both without case).  A private event's bots are
        listed for its members only.  ``endpoint`` is there only with a credential that
        manages the bot (its owner token or account, an organiser of its event, the
        admin).  A token that is none of these is a 401.
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
        if "event_id" in query:
            statement = statement.where(Bot.event_id == query["event_id"])
        if "reference" in query:
            offered = (Bot.kind == "house") | Bot.reference.is_(True)
            statement = statement.where(offered if query["reference"] else ~offered)
        if "owner" in query:
            statement = statement.where(func.lower(Bot.owner) == query["owner"].strip().lower())
        with database().session() as session:
            reader = current_caller(session)
            if query.get("mine"):
                reader.check_account("mine=true")
                statement = statement.where(Bot.account_id == reader.account_id)
            hidden = events.hidden_event_ids(session, reader)
            # a reference bot is offered to every event: listed whatever its own event
            statement = statement.where(
                events.not_hidden(Bot.event_id, hidden) | Bot.reference.is_(True)
            )
            bots = list(session.scalars(statement.order_by(Bot.name)))
            if "game" in query:  # games is a JSON list: filtered here, portably
                bots = [b for b in bots if query["game"] in b.games]
            if "q" in query:  # a name key is case folded: so is the search
                bots = [b for b in bots if bot_name_key(query["q"]) in b.name_key]
            start = (query["page"] - 1) * query["page_size"]
            rows = [_row(b, BotSchema, reader) for b in bots[start : start + query["page_size"]]]
        return paged(query, rows, len(bots))

    @credentials_first(anyone)
    @blp.arguments(BotCreateSchema)
    @blp.response(201, BotRegisteredSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Register a bot

        The arena calls the endpoint's ``GET /`` first: it must answer apiversion "1" and
        the games it plays.  The answer holds the owner token and the signing secret: they
        are shown this once only.  Give ``signing_secret`` to choose the secret yourself
        (then the bot can run with it before it is registered).  Names are compared
        as they look: without case and surrounding spaces, with letters of other
        alphabets or widths drawn alike (a Cyrillic a, a fullwidth a) as one; a name
        that differs from a taken name only in those (of a bot not deleted: a deleted
        bot's name is free again) is a 409.  Registered from an account (its login or
        API token), the bot belongs to it and needs no ``owner``; ``event_id`` enters it
        in one of the account's events (while its registration is open, up to its bots
        per account).  Without ``event_id``, an account in exactly one event registers
        into that event; ``"event_id": null`` is the open arena.  Without an account a
        free-text ``owner`` is needed, where the server allows it (the open arena).
        """
        with database().session() as session:
            who = current_caller(session)
            services.check_may_register(config(), who)
        limit_registration(who)
        # the bot is called between two transactions: on SQLite a transaction holds
        # the write lock, which no request may wait for while a bot takes its time
        fetched = None
        if data.get("endpoint") is not None and not data.get("connect"):
            fetched = services.fetch_bot_info(config(), data["endpoint"])
        with database().session() as session:
            bot, owner_token, signing_secret = services.register_bot(
                session,
                config(),
                who=who,
                info_fetcher=None if fetched is None else (lambda _endpoint: fetched),
                # no event named: the account's only event (an explicit null: the open arena)
                **{"event_id": bot_rules.HOME_EVENT, **data},
            )
            started = started_validation(bot, None)
        send_validation(started)
        return as_row(
            bot,
            BotRegisteredSchema,
            owner_token=owner_token,
            signing_secret=signing_secret,
            validation=validation.verdict(bot),
        )


def send_validation(match_ids: list[int]) -> None:
    """Send a bot's new validation match to the workers, after the commit that wrote it;
    with the broker away it stays queued in the database, where the wardens send it."""
    if not match_ids:
        return
    try:
        queue.enqueue_matches(config(), match_ids)
    except Exception:
        log.exception("validation match %s: enqueueing it failed", match_ids)


def _bot_detail(session: Any, bot: Bot, reader: services.Caller) -> dict[str, Any]:
    ratings = services.bot_ratings(session, bot.id)  # as the pages show them
    return _row(
        bot,
        BotDetailSchema,
        reader,
        ratings=[{"game": game, **view} for game, view in ratings.items()],
        recent_faults=services.recent_faults(session, bot.id),
        connection=sessions.presence(session.get(BotSession, bot.id)) if bot.connect else None,
    )


@blp.route("/<int:bot_id>")
class BotById(MethodView):
    @blp.response(200, BotDetailSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, bot_id: int) -> dict[str, Any]:
        """One bot, with its Elo in each game and the faults of its recent matches

        ``endpoint`` is there only for those who manage it; a private event's bot only
        for its members; an invalid token is a 401.
        """
        with database().session() as session:
            reader = current_caller(session)
            bot = services.get_bot(session, bot_id)
            if not bot.reference:  # a reference bot is offered to every event: seen by all
                services.check_visible(session, reader, bot.event_id, f"bot {bot_id}")
            return _bot_detail(session, bot, reader)

    @credentials_first(nobody)
    @blp.arguments(BotUpdateSchema)
    @blp.response(200, BotDetailSchema)
    @blp.doc(security=BEARER)
    def patch(self, data: dict[str, Any], bot_id: int) -> dict[str, Any]:
        """Change a bot (its owner, or an organiser of its event)

        A new (or the same) endpoint is checked again with ``GET /``, which also refreshes
        what the bot declares.  An organiser of the bot's event (or the admin) may also
        rename it, pause it (``status: paused``; only an organiser resumes it) and, after
        the event's freeze, still change its endpoint; its owner may not.  A new name is
        checked against the bots not deleted only.

        ``event_id`` moves the bot into that event (null: the open arena).  Its owner
        moves it out of an event before that event's freeze, and into an event they are
        in from their account, within its rules as for a new bot (registration window,
        freeze, bots per account); an organiser of the event (or the admin) moves it out,
        or in (a bot of an account in the event) at any time.  The bot must play only the
        event's games (give ``games`` with the move).

        ``reference: true`` marks a reference bot, offered in every event's tournaments
        and qualifiers and never graded: an organiser of its event or the admin (for a
        bot of the open arena: the admin, or an organiser whose bot it is; anyone where
        no organiser token is set); its owner may also take the mark off.
        """
        moving = "event_id" in data
        target = data.pop("event_id", None)
        reference = data.pop("reference", None)
        info = None
        if "endpoint" in data:
            # the caller is checked before the arena calls anything, and the bot is called
            # outside the write transaction
            with database().session() as session:
                bot = services.get_bot(session, bot_id)
                services.check_manages(current_caller(session), bot)
                events.check_not_frozen(session, current_caller(session), bot, "endpoint")
            info = services.fetch_bot_info(config(), data["endpoint"])
        with database().session() as session:
            bot = services.get_bot(session, bot_id)
            before = bot.validation_match_id
            who = current_caller(session)
            if data:
                services.check_manages(who, bot)
                services.update_bot(session, config(), bot, info=info, who=who, **data)
            else:
                # moving or marking only: those rules say who may (an organiser of the
                # event it moves into does not manage it yet)
                services.check_visible(session, who, bot.event_id, f"bot {bot_id}")
            if moving:
                bot_rules.move_bot(session, who, bot, target)
            if reference is not None:
                bot_rules.set_reference(session, config(), who, bot, reference)
            detail = _bot_detail(session, bot, who)
            started = started_validation(bot, before)
        send_validation(started)  # its GET / checked again: a new version is validated
        return detail

    @blp.response(204)
    @blp.doc(security=BEARER)
    def delete(self, bot_id: int) -> None:
        """Delete a bot (its owner, or an organiser of its event)

        A soft delete: its matches, replays and rating history stay; its queued matches
        are cancelled and it is never called again.
        """
        with database().session() as session:
            bot = services.get_bot(session, bot_id)
            services.check_manages(current_caller(session), bot)
            services.delete_bot(session, bot, config().pause_after_forfeits)


@blp.route("/<int:bot_id>/versions")
@blp.response(200, BotVersionSchema(many=True))
@blp.doc(security=OPTIONAL_BEARER)
def bot_versions(bot_id: int) -> list[dict[str, Any]]:
    """Results per version the bot declared (as each match started): matches played,
    wins, mean score, first and last played; first played first"""
    with database().session() as session:
        bot = services.get_bot(session, bot_id)
        services.check_visible(session, current_caller(session), bot.event_id, f"bot {bot_id}")
        return versions.bot_versions(session, bot.id)


@blp.route("/<int:bot_id>/rotate")
class BotRotate(MethodView):
    @credentials_first(nobody)
    @blp.arguments(BotRotateSchema)
    @blp.response(200, BotRotatedSchema)
    @blp.doc(security=BEARER)
    def post(self, data: dict[str, Any], bot_id: int) -> dict[str, Any]:
        """Rotate the owner token and/or the signing secret (its owner, or an organiser)

        ``rotate`` lists what gets a new value (default: both); ``signing_secret`` is
        your own new secret, else the arena makes one.  The answer shows the new values
        this once only, and the old ones stop working: the old owner token is refused at
        once, and matches started from now on are signed with the new secret (a match
        already being played ends with the old one).  Restart the bot with the new secret:
        a bot that connects out is accepted with it at once, and a web process that read
        the old one within the last minute accepts that one until the minute is over.
        An organiser of the bot's event resets a lost owner token this way and hands the
        new one over.
        """
        with database().session() as session:
            # locked: of two rotations with the same token, the second is refused
            bot = services.get_bot(session, bot_id, lock=True)
            services.check_manages(current_caller(session), bot)
            rotated = services.rotate_credentials(
                session, bot, data["rotate"], data.get("signing_secret")
            )
            return {"id": bot.id, "name": bot.name, "rotated": sorted(rotated), **rotated}


@blp.route("/<int:bot_id>/attach")
class BotAttach(MethodView):
    @credentials_first(nobody)
    @blp.arguments(BotAttachSchema)
    @blp.response(200, BotDetailSchema)
    @blp.doc(security=BEARER)
    def post(self, data: dict[str, Any], bot_id: int) -> dict[str, Any]:
        """Attach a bot to your account (its owner token in the body)

        For a bot registered before you had an account: from now on your login and your
        account's tokens manage it too (its owner token keeps working).
        """
        with database().session() as session:
            bot = services.get_bot(session, bot_id, lock=True)
            who = current_caller(session)
            services.attach_bot(session, who, bot, data["owner_token"])
            return _bot_detail(session, bot, who)
