"""``/api/events``: events (a class, a hackathon), joining one with its code, its
organisers and its rated ladder.  A private event is for its members: to anyone else it
does not exist (404)."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask.views import MethodView
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena import services
from arena.api import exports, ratings
from arena.api.common import (
    BEARER,
    OPTIONAL_BEARER,
    PAGINATION_HEADERS_DOC,
    ApiBlueprint,
    anyone,
    credentials_first,
    current_caller,
    database,
    field_names,
    nobody,
    paged,
)
from arena.api.schemas.events import (
    EventCreateSchema,
    EventJoinSchema,
    EventListArgsSchema,
    EventOrganiserSchema,
    EventSchema,
    EventUpdateSchema,
    RosterRowSchema,
)
from arena.api.schemas.exports import LeaderboardArgsSchema, LeaderboardExportRowSchema
from arena.api.schemas.ratings import LadderSchema, LadderUpdateSchema
from arena.games import GAMES
from arena.models import Event
from arena.services import accounts, events, roster

blp = ApiBlueprint(
    "events",
    __name__,
    url_prefix="/api/events",
    description="Events (a class, a hackathon): their own bots, tournaments, ladder and "
    "ratings, never mixed with another's.",
)


def event_json(event: Event, who: services.Caller) -> dict[str, Any]:
    row = {
        name: getattr(event, name)
        for name in field_names(EventSchema)
        if name not in ("frozen", "registration_open", "join_code", "role")
    }
    row["frozen"] = events.is_frozen(event)
    row["registration_open"] = events.registration_problem(event) is None
    if who.organises_event(event.id):
        row["join_code"] = event.join_code
    row["role"] = who.member_role(event.id)
    return row


@blp.route("")
class Events(MethodView):
    @credentials_first(anyone)
    @blp.arguments(EventListArgsSchema, location="query")
    @blp.response(200, EventSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List the events you may see (public ones, and private ones you are in), newest
        first"""
        with database().session() as session:
            who = current_caller(session)
            statement = select(Event).where(events.visible_events(who))
            if query.get("mine"):
                statement = statement.where(Event.id.in_(sorted(who.joined)))
            total = session.scalar(select(func.count()).select_from(statement.subquery()))
            rows = session.scalars(
                statement.order_by(Event.id.desc())
                .offset((query["page"] - 1) * query["page_size"])
                .limit(query["page_size"])
            )
            items = [event_json(e, who) for e in rows]
        return paged(query, items, total or 0)

    @credentials_first(nobody)
    @blp.arguments(EventCreateSchema)
    @blp.response(201, EventSchema)
    @blp.doc(security=BEARER)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Create an event (an organiser's account, or the organiser token)

        The answer has its ``join_code``: contestants sign up with it
        (``POST /api/accounts``) or join with it (``POST /api/events/{id}/join``).
        """
        with database().session() as session:
            who = current_caller(session)
            event = events.create_event(session, who, **data)
            return event_json(event, dataclasses.replace(who, organises=who.organises | {event.id}))


@blp.route("/<int:event_id>")
class EventById(MethodView):
    @blp.response(200, EventSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, event_id: int) -> dict[str, Any]:
        """One event (a private one for its members only)"""
        with database().session() as session:
            who = current_caller(session)
            return event_json(events.get_event(session, event_id, who), who)

    @credentials_first(nobody)
    @blp.arguments(EventUpdateSchema)
    @blp.response(200, EventSchema)
    @blp.doc(security=BEARER)
    def patch(self, data: dict[str, Any], event_id: int) -> dict[str, Any]:
        """Change an event (its organisers): its window, freeze, limit, visibility, or a
        new join code"""
        with database().session() as session:
            who = current_caller(session)
            event = events.get_event(session, event_id, who)
            events.update_event(session, who, event, **data)
            return event_json(event, who)


@blp.route("/<int:event_id>/join", methods=["POST"])
@credentials_first(nobody)
@blp.arguments(EventJoinSchema)
@blp.response(200, EventSchema)
@blp.doc(security=BEARER)
def join(data: dict[str, Any], event_id: int) -> dict[str, Any]:
    """Join an event with its join code (an account)"""
    with database().session() as session:
        who = current_caller(session)
        who.check_account("joining an event")
        event = session.get(Event, event_id) if event_id <= services.MAX_ID else None
        if event is None or event.join_code != events.typed_join_code(data["join_code"]):
            raise services.ServiceError(404, f"no event {event_id} with this join code")
        accounts.join_event(session, accounts.get_account(session, who.account_id), event)
        return event_json(event, dataclasses.replace(who, joined=who.joined | {event.id}))


@blp.route("/<int:event_id>/organisers", methods=["POST"])
@credentials_first(nobody)
@blp.arguments(EventOrganiserSchema)
@blp.response(200, EventSchema)
@blp.doc(security=BEARER)
def add_organiser(data: dict[str, Any], event_id: int) -> dict[str, Any]:
    """Make an account one of the event's organisers (its organisers)"""
    with database().session() as session:
        who = current_caller(session)
        event = events.get_event(session, event_id, who)
        events.check_organises(who, event)
        account = accounts.account_by_name(session, data["account"])
        if account is None:
            raise services.ServiceError(404, f"no account named {data['account']!r}")
        accounts.join_event(session, account, event, role="organiser")
        return event_json(event, who)


@blp.route("/<int:event_id>/ladders/<game>", methods=["PUT"])
@credentials_first(nobody)
@blp.arguments(LadderUpdateSchema)
@blp.response(200, LadderSchema)
@blp.doc(security=BEARER)
def set_ladder(data: dict[str, Any], event_id: int, game: str) -> dict[str, Any]:
    """Switch the event's rated ladder of a game on or off (its organisers)

    Its matches seat only the event's bots, and its ratings are the event's.
    """
    with database().session() as session:
        who = current_caller(session)
        event = events.get_event(session, event_id, who)
        events.check_organises(who, event)
        if game not in event.games:
            raise services.ServiceError(
                404, f"event {event.id} plays {', '.join(event.games)}, not {game!r}"
            )
        seats = data["seats_per_match"] or max(2, GAMES[game].min_players)
        return events.set_event_ladder(event, game, data["enabled"], seats)


@blp.route("/<int:event_id>/roster")
@blp.response(200, RosterRowSchema(many=True))
@blp.doc(security=OPTIONAL_BEARER)
def roster_json(event_id: int) -> list[dict[str, Any]]:
    """The event's roster: every member and each of their bots, with its status, who
    paused it, whether it is connected and healthy, its version and matches played, and
    its grade in the event's latest qualifier (to its organisers for every row, to a
    contestant for their own rows) (``roster.csv``: the same table)"""
    with database().session() as session:
        who = current_caller(session)
        event = events.get_event(session, event_id, who)
        return roster.event_roster(session, event, who)


@blp.route("/<int:event_id>/roster.csv")
@blp.response(200, {"format": "binary", "type": "string"}, content_type="text/csv")
@blp.doc(security=OPTIONAL_BEARER)
def roster_csv(event_id: int) -> Any:
    """The event's roster as CSV (the columns and rows of ``roster``)"""
    with database().session() as session:
        who = current_caller(session)
        event = events.get_event(session, event_id, who)
        rows = roster.event_roster(session, event, who)
    return exports.csv_response(rows, roster.COLUMNS, f"event-{event_id}-roster.csv")


def _leaderboard(session: Session, event_id: int, query: dict[str, Any]) -> list[dict[str, Any]]:
    """The flat leaderboard of the event's games (or of ``query["game"]``, one of them)."""
    event = events.get_event(session, event_id, current_caller(session))
    game = query.get("game")
    if game is not None and game not in event.games:
        raise services.ServiceError(
            404, f"event {event.id} plays {', '.join(event.games)}, not {game!r}"
        )
    return ratings.leaderboard_rows(session, [game] if game else event.games, event_id=event.id)


@blp.route("/<int:event_id>/leaderboard")
@credentials_first(anyone)
@blp.arguments(LeaderboardArgsSchema, location="query")
@blp.response(200, LeaderboardExportRowSchema(many=True))
@blp.doc(security=OPTIONAL_BEARER)
def leaderboard_json(query: dict[str, Any], event_id: int) -> list[dict[str, Any]]:
    """The event's leaderboard: its active rated bots, game by game, by Elo, with the
    fitted rating and its 95% interval (one flat row per bot and game;
    ``leaderboard.csv``: the same table)"""
    with database().session() as session:
        return _leaderboard(session, event_id, query)


@blp.route("/<int:event_id>/leaderboard.csv")
@credentials_first(anyone)
@blp.arguments(LeaderboardArgsSchema, location="query")
@blp.response(200, {"format": "binary", "type": "string"}, content_type="text/csv")
@blp.doc(security=OPTIONAL_BEARER)
def leaderboard_csv(query: dict[str, Any], event_id: int) -> Any:
    """The event's leaderboard as CSV (the columns and rows of ``leaderboard``)"""
    with database().session() as session:
        rows = LeaderboardExportRowSchema(many=True).dump(_leaderboard(session, event_id, query))
    suffix = f"-{query['game']}" if query.get("game") else ""
    return exports.csv_response(
        rows, ratings.LEADERBOARD_COLUMNS, f"event-{event_id}-leaderboard{suffix}.csv"
    )
