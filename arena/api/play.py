"""``/api/play``: matches with people at the table (docs/play.md).

A person's seat is played from a browser page over the connect transport, like a bot
that connects out; starting such a match gives one link per person's seat (its key in
the link's fragment).  The match waits until every person has opened their link.  A
play match is the open arena's: a private event's bots are never offered nor seated
(their matches are their event's, seen by its members only).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema
from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.exceptions import HTTPException

from arena import services
from arena.api.common import BEARER, ApiBlueprint, bearer_token, config, database
from arena.api.schemas.fields import StrictInteger
from arena.api.schemas.tournaments import GameRulesSchema, SeatLinkSchema, requested_options
from arena.games import GAMES, POLICIES
from arena.models import Bot, Event
from arena.services import people
from arena.services.errors import MAX_ID, MAX_SEED
from arena.worker import queue

log = logging.getLogger(__name__)

blp = ApiBlueprint(
    "play",
    __name__,
    url_prefix="/api/play",
    description="Matches with people at the table: a person plays a seat in the browser.",
)


class PlaySeat(Schema):
    person = fields.String(
        validate=validate.Length(min=1, max=people.PERSON_NAME_MAX),
        metadata={"description": "a person's name: this seat is played in a browser"},
    )
    house = fields.String(
        validate=validate.OneOf(sorted({p for g in POLICIES.values() for p in g})),
        metadata={"description": "one of the arena's own policies"},
    )
    bot_id = StrictInteger(
        validate=validate.Range(min=1, max=MAX_ID),
        metadata={"description": "a registered bot (its owner lets people pick it)"},
    )

    @validates_schema
    def _one(self, data: dict[str, Any], **_: Any) -> None:
        if len(data) != 1:
            raise ValidationError("give exactly one of person, house or bot_id")


class PlayCreate(GameRulesSchema):
    game = fields.String(required=True, validate=validate.OneOf(sorted(GAMES)))
    seats = fields.List(
        fields.Nested(PlaySeat),
        required=True,
        validate=validate.Length(min=2, max=8),
        metadata={"description": "every seat, in order"},
    )
    deadline_s = StrictInteger(
        load_default=people.DEFAULT_DEADLINE_SECONDS,
        validate=validate.Range(min=people.MIN_DEADLINE_SECONDS, max=people.MAX_DEADLINE_SECONDS),
        metadata={"description": "each person's time per decision, in seconds"},
    )
    rated = fields.Boolean(
        load_default=False, metadata={"description": "rate the match (organiser only)"}
    )
    seed = StrictInteger(load_default=None, validate=validate.Range(min=0, max=MAX_SEED))
    owner = fields.String(load_default="", validate=validate.Length(max=64))


class SeatOut(Schema):
    seat = fields.Integer()
    bot_id = fields.Integer()
    name = fields.String()
    kind = fields.String(metadata={"description": "bot, house or person"})


class LinkOut(SeatLinkSchema):
    seat = fields.Integer()


class PlayCreated(Schema):
    match_id = fields.Integer()
    game = fields.String()
    options = fields.Dict()
    rated = fields.Boolean()
    deadline_s = fields.Integer()
    seats = fields.List(fields.Nested(SeatOut))
    links = fields.List(fields.Nested(LinkOut))


class OpponentOut(Schema):
    # null for a house policy: it is picked by its policy, its bot row made on first use
    bot_id = fields.Integer(allow_none=True)
    name = fields.String()
    kind = fields.String()
    policy = fields.String(allow_none=True)


def private_bot_ids(session: Session, bot_ids: list[int]) -> set[int]:
    """Those of ``bot_ids`` that play in a private event."""
    if not bot_ids:
        return set()
    return set(
        session.scalars(
            select(Bot.id)
            .join(Event, Event.id == Bot.event_id)
            .where(Bot.id.in_(bot_ids), Event.visibility == "private")
        )
    )


def _organiser() -> bool:
    """Whether the caller may seat any bot and rate the match: the admin's token (the
    organiser token, or an admin account's), or no organiser token configured (the local
    default).  Without that, /play must be open (``ARENA_OPEN_PLAY``).  Only a token
    counts: the page's login session is not asked, so the seat pages post no CSRF token."""
    try:
        with database().session() as session:
            services.check_admin(config(), services.caller(session, config(), bearer_token()))
    except services.ServiceError:
        if bearer_token() or not config().open_play:
            raise
        return False
    return True


def _credentials_first(view: Callable[..., Any]) -> Callable[..., Any]:
    """Invalid arguments are judged by the credential first, as ``common.credentials_first``
    does, but as this route judges callers (``_organiser``: the token only, never the
    page's session)."""

    @functools.wraps(view)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except HTTPException as exc:
            if getattr(exc, "of_arguments", False):
                _organiser()  # a token not the admin's, or none where play is closed: 401
            raise

    return checked


@blp.route("", methods=["POST"])
@_credentials_first
@blp.arguments(PlayCreate)
@blp.response(201, PlayCreated)
@blp.doc(security=BEARER)
def create(data: dict[str, Any]) -> dict[str, Any]:
    """Start a match with people's seats: one link per person

    Seats are ``{"person": name}``, ``{"house": policy}`` or ``{"bot_id": id}``, in seat
    order.  Anyone may start one against house bots and bots whose owners let people
    pick them (``playable``) where play is open; the organiser may seat any bot and rate
    the match.  The match is queued at once and waits until every person has opened
    their link; a person who leaves gets the default action at each deadline.
    """
    organiser = _organiser()
    if data["rated"] and not organiser:
        raise services.ServiceError(403, "only the organiser may rate a match with people")
    options = requested_options(data)
    with database().session() as session:
        wanted = [seat["bot_id"] for seat in data["seats"] if "bot_id" in seat]
        private = sorted(private_bot_ids(session, wanted))
        if private:
            # as for a bot that does not exist (people's answer): a stranger learns nothing
            raise services.ServiceError(400, f"no bot {private[0]}")
        made = people.create_play_match(
            session,
            game=data["game"],
            seats=data["seats"],
            options=options,
            deadline_seconds=data["deadline_s"],
            rated=data["rated"],
            organiser=organiser,
            owner=data["owner"],
            seed=data["seed"],
        )
        match = made.match
        seats = [
            {"seat": s.seat, "bot_id": s.bot_id, "name": bot.name, "kind": bot.kind}
            for s in sorted(match.seats, key=lambda s: s.seat)
            if (bot := session.get(Bot, s.bot_id)) is not None
        ]
        body = {
            "match_id": match.id,
            "game": match.game,
            "options": match.options,
            "rated": match.rated,
            "deadline_s": data["deadline_s"],
            "seats": seats,
            "links": [{"seat": seat, **link.json()} for seat, link in made.links],
        }
    try:
        queue.enqueue_matches(config(), [body["match_id"]])
    except Exception:  # queued in the database: the wardens send it again
        log.exception("play match %s: enqueueing it failed", body["match_id"])
    return body


@blp.route("/<game_id>/opponents", methods=["GET"])
@blp.response(200, OpponentOut(many=True))
def opponents(game_id: str) -> list[dict[str, Any]]:
    """Who a person may pick as an opponent in a game: the house policies, then the
    registered bots whose owners allow it"""
    engine = services.game_engine(game_id)
    with database().session() as session:
        bots = people.playable_bots(session, engine.id)
        private = private_bot_ids(session, [b.id for b in bots])
        bots = [b for b in bots if b.id not in private]
        listed = [{"bot_id": b.id, "name": b.name, "kind": b.kind, "policy": None} for b in bots]
    house = [
        {"bot_id": None, "name": f"house {p}", "kind": "house", "policy": p}
        for p in POLICIES[engine.id]
    ]
    return house + listed
