"""Events (a class, a hackathon): creating and changing one, who sees it, its
registration window and freeze, the bots one account may have in it, the event a new
bot enters by default, and what keeps events apart (an event's bots meet only each other
and the reference bots offered to every event: ``arena.services.bots``).  No Flask here."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select, true
from sqlalchemy.orm import Session

from arena.games import GAMES
from arena.games.base import OptionsError
from arena.models import EVENT_VISIBILITIES, Bot, Event, EventMember, aware, utcnow
from arena.services.access import Caller
from arena.services.errors import MAX_ID, ServiceError

# a join code is read from a board and typed by a class: capitals and digits without the
# look-alikes (0/O, 1/I/L, 5/S, 2/Z, 8/B); 8 of 25 symbols are 1.5e11 codes, and sign-up
# is rate limited
JOIN_CODE_ALPHABET = "34679ACDEFGHJKMNPQRTUVWXY"
JOIN_CODE_LENGTH = 8


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def typed_join_code(text: str) -> str:
    """A join code as a person typed it: without case and spaces."""
    return "".join(text.split()).upper()


def known_games(games: Sequence[str] | None, none_given: str) -> list[str]:
    """The games, known ones, sorted; ``none_given`` is the 400's message for none."""
    if not games:
        raise ServiceError(400, none_given)
    unknown = sorted(set(games) - set(GAMES))
    if unknown:
        raise ServiceError(
            400, f"unknown game(s) {', '.join(unknown)}; games: {', '.join(sorted(GAMES))}"
        )
    return sorted(set(games))


def _check_times(event: Event) -> None:
    opens, closes, freeze = (
        event.registration_opens_at,
        event.registration_closes_at,
        event.freeze_at,
    )
    if opens is not None and closes is not None and aware(closes) <= aware(opens):
        raise ServiceError(400, "registration must close after it opens")
    if opens is not None and freeze is not None and aware(freeze) <= aware(opens):
        raise ServiceError(400, "the freeze must come after registration opens")


EDITABLE = (
    "name",
    "games",
    "visibility",
    "bots_per_account",
    "registration_opens_at",
    "registration_closes_at",
    "freeze_at",
)


def create_event(session: Session, who: Caller, **fields: Any) -> Event:
    """A new event with a join code; its creator (an organiser's account) organises it."""
    if not who.organiser:
        raise who.refusal("creating an event needs an organiser's account or the organiser token")
    event = Event(join_code=new_join_code(), created_by=who.account_id, ladder={})
    _apply(event, fields)
    session.add(event)
    session.flush()
    if who.account_id is not None:
        session.add(EventMember(event_id=event.id, account_id=who.account_id, role="organiser"))
        session.flush()
    return event


def _apply(event: Event, fields: dict[str, Any]) -> None:
    for key in EDITABLE:
        if key in fields:
            value = fields[key]
            if key == "games":
                value = known_games(value, "an event plays at least one game")
            elif key == "visibility" and value not in EVENT_VISIBILITIES:
                raise ServiceError(400, f"visibility must be {' or '.join(EVENT_VISIBILITIES)}")
            setattr(event, key, value)
    _check_times(event)


def update_event(session: Session, who: Caller, event: Event, **fields: Any) -> Event:
    check_organises(who, event)
    if fields.pop("new_join_code", False):
        event.join_code = new_join_code()
    _apply(event, fields)
    session.flush()
    return event


def get_event(session: Session, event_id: int, who: Caller | None = None) -> Event:
    """The event, else 404 (also a private one the caller may not see: its existence is
    not told to strangers)."""
    event = session.get(Event, event_id) if 0 < event_id <= MAX_ID else None
    if event is None or (who is not None and not who.sees_event(event.id, event.visibility)):
        raise ServiceError(404, f"no event {event_id}")
    return event


def check_organises(who: Caller, event: Event) -> None:
    if who.organises_event(event.id):
        return
    if who.anonymous:
        raise ServiceError(401, "this needs a login or token of one of the event's organisers")
    raise ServiceError(403, f"only the organisers of event {event.id} may do this")


def visible_events(who: Caller) -> ColumnElement[bool]:
    """A clause on ``Event``: the events the caller sees (public ones, and private ones
    they joined)."""
    if who.admin:
        return Event.id.is_not(None)
    return or_(Event.visibility != "private", Event.id.in_(sorted(who.joined)))


def hidden_event_ids(session: Session, who: Caller) -> list[int]:
    """The private events the caller may not see: what every list leaves out."""
    if who.admin:
        return []
    query = select(Event.id).where(Event.visibility == "private")
    if who.joined:
        query = query.where(Event.id.not_in(sorted(who.joined)))
    return list(session.scalars(query))


def not_hidden(column: Any, hidden: Sequence[int]) -> ColumnElement[bool]:
    """A clause: ``column`` (an ``event_id``) is the open arena's or a visible event's."""
    if not hidden:
        return true()
    return or_(column.is_(None), column.not_in(list(hidden)))


def is_frozen(event: Event | None, now: Any = None) -> bool:
    return bool(
        event and event.freeze_at is not None and aware(event.freeze_at) <= (now or utcnow())
    )


def registration_problem(event: Event, now: Any = None) -> str | None:
    """Why no new bot may enter the event now, or None."""
    now = now or utcnow()
    opens, closes = event.registration_opens_at, event.registration_closes_at
    if opens is not None and now < aware(opens):
        return f"registration for event {event.id} opens at {aware(opens):%Y-%m-%d %H:%M} UTC"
    if closes is not None and now >= aware(closes):
        return f"registration for event {event.id} closed at {aware(closes):%Y-%m-%d %H:%M} UTC"
    if is_frozen(event, now):
        return f"event {event.id} is frozen: no new bots"
    return None


def check_can_enter(
    session: Session,
    who: Caller,
    event: Event,
    games: Sequence[str] | None,
    endpoint: str | None,
) -> None:
    """A bot may enter the event: the caller is a member with an account, registration is
    open and under the account's limit (organisers enter reference bots at any time and
    without a limit), it plays the event's games (``check_event_games``; None: not known
    until the bot answers), and its endpoint is no other bot's in the event."""
    if who.account_id is None and not who.admin:
        raise who.refusal(
            "a bot enters an event from its owner's account: log in or give its token"
        )
    if not who.admin and event.id not in who.joined:
        raise ServiceError(403, f"join event {event.id} first (with its join code)")
    organiser = who.organises_event(event.id)
    if not organiser:
        if problem := registration_problem(event):
            raise ServiceError(409, problem)
        have = session.scalar(
            select(func.count(Bot.id)).where(
                Bot.event_id == event.id,
                Bot.account_id == who.account_id,
                Bot.status != "deleted",
            )
        )
        if (have or 0) >= event.bots_per_account:
            raise ServiceError(
                409,
                f"event {event.id} allows {event.bots_per_account} bot(s) per account and "
                f"you have {have}: delete one (or ask an organiser) to register another",
            )
    if games is not None:
        check_event_games(event, games)
    if endpoint is not None:
        check_endpoint_free(session, event.id, endpoint)


def home_event_id(who: Caller) -> int | None:
    """The event a bot registered from an account enters when the request names none:
    the account's only event (as organiser or contestant); None for an account in no
    event or in several (the open arena, unless the request names one), and for a
    caller without an account (a free-text owner, an owner token, the organiser token)."""
    if who.account_id is None or len(who.joined) != 1:
        return None
    return next(iter(who.joined))


def is_member(session: Session, account_id: int | None, event_id: int) -> bool:
    """The account is in the event (as organiser or contestant)."""
    if account_id is None:
        return False
    found = session.scalar(
        select(EventMember.account_id).where(
            EventMember.event_id == event_id, EventMember.account_id == account_id
        )
    )
    return found is not None


def check_event_games(event: Event, games: Sequence[str]) -> None:
    """400 for a game the event does not play."""
    other = sorted(set(games) - set(event.games))
    if other:
        raise ServiceError(
            400, f"event {event.id} plays {', '.join(event.games)}, not {', '.join(other)}"
        )


def check_endpoint_free(
    session: Session, event_id: int, endpoint: str, bot_id: int | None = None
) -> None:
    """409 when another bot of the event (not ``bot_id``) has this endpoint: one program
    entered twice would play against itself."""
    query = select(Bot.id).where(
        Bot.event_id == event_id, Bot.endpoint == endpoint, Bot.status != "deleted"
    )
    if bot_id is not None:
        query = query.where(Bot.id != bot_id)
    taken = session.scalar(query.limit(1))
    if taken is not None:
        raise ServiceError(409, f"bot {taken} of event {event_id} already has this endpoint")


def check_not_frozen(session: Session, who: Caller, bot: Bot, what: str) -> None:
    """After its event's freeze a contestant may not change ``what`` (endpoint, transport);
    its organisers still may."""
    if bot.event_id is None or who.organises_event(bot.event_id):
        return
    if is_frozen(session.get(Event, bot.event_id)):
        raise ServiceError(409, f"event {bot.event_id} is frozen: a bot's {what} cannot change")


def set_event_ladder(
    event: Event, game: str, enabled: bool, seats_per_match: int
) -> dict[str, Any]:
    """Switch the event's ladder of ``game`` (Celery beat reads it with the open arena's)."""
    try:
        GAMES[game].check_players(seats_per_match)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None
    now = utcnow()
    # a new dict: the JSON column sees the change
    event.ladder = {
        **event.ladder,
        game: {
            "enabled": enabled,
            "seats_per_match": seats_per_match,
            "updated_at": now.isoformat(),
        },
    }
    return {"game": game, "enabled": enabled, "seats_per_match": seats_per_match, "updated_at": now}


def event_ladders(event: Event) -> list[dict[str, Any]]:
    """The event's ladder of each of its games (one never switched: off)."""
    return [
        {
            "game": game,
            "enabled": bool(event.ladder.get(game, {}).get("enabled")),
            "seats_per_match": event.ladder.get(game, {}).get(
                "seats_per_match", max(2, GAMES[game].min_players)
            ),
            "updated_at": _when(event.ladder.get(game, {}).get("updated_at")),
        }
        for game in event.games
    ]


def _when(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text else None
