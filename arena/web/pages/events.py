"""The event pages: the list of events the caller may see, the form of a new event, and an
event's page (its window and freeze, joining it, its roster and the reference bots it is
offered, its leaderboard per game
and its tournaments; for its organisers its join code, its settings, its ladders, and a
password reset link and a pause per contestant).

A private event is for its members: to anyone else its page is a 404, as in the API
(``events.get_event``).  Reads call the services; every change goes through the JSON API
from ``static/forms.js``, so the rules of what is accepted stay in one place.
"""

from __future__ import annotations

from typing import Any

from flask import abort, render_template
from sqlalchemy import select

from arena import services
from arena.models import EVENT_VISIBILITIES, Event, Tournament, aware
from arena.services import events, roster
from arena.web.pages.accounts import login_redirect
from arena.web.pages.common import bp, database, game_rows, progress_by_id, reader


def _event_row(event: Event, who: services.Caller) -> dict[str, Any]:
    """What the list and the page say of an event besides its own fields."""
    return {
        "event": event,
        "frozen": events.is_frozen(event),
        "registration": events.registration_problem(event),
        # the admin organises every event: the page offers them its organisers' tools
        "role": "organiser" if who.organises_event(event.id) else who.member_role(event.id),
    }


@bp.get("/events")
def events_list() -> str:
    with database().session() as session:
        who = reader(session)
        rows = [
            _event_row(e, who)
            for e in session.scalars(
                select(Event).where(events.visible_events(who)).order_by(Event.id.desc())
            )
        ]
        return render_template("events.html", rows=rows, organiser=who.organiser)


@bp.get("/events/new")
def event_new() -> Any:
    with database().session() as session:
        who = reader(session)
        if who.anonymous:
            return login_redirect()
        return render_template(
            "event_new.html",
            forbidden=not who.organiser,
            games=game_rows(),
            visibilities=EVENT_VISIBILITIES,
        ), (200 if who.organiser else 403)


@bp.get("/events/<int:event_id>")
def event(event_id: int) -> str:
    with database().session() as session:
        who = reader(session)
        try:
            found = events.get_event(session, event_id, who)
        except services.ServiceError as exc:  # a private event is not told to strangers
            abort(404, exc.message)
        organiser = who.organises_event(found.id)
        tournaments = list(
            session.scalars(
                select(Tournament)
                .where(Tournament.event_id == found.id)
                .order_by(Tournament.id.desc())
            )
        )
        return render_template(
            "event.html",
            **_event_row(found, who),
            organiser=organiser,
            member=found.id in who.joined,
            signed_in=who.account_id is not None,
            join_code=found.join_code if organiser else None,
            times={
                name: aware(getattr(found, name))
                for name in ("registration_opens_at", "registration_closes_at", "freeze_at")
                if getattr(found, name) is not None
            },
            ladders=events.event_ladders(found),
            roster=roster.event_roster(session, found, who),
            references=roster.reference_bots(session, found),
            boards=[
                {"game": game, "rows": services.leaderboard(session, game, event_id=found.id)}
                for game in found.games
            ],
            tournaments=tournaments,
            progress=progress_by_id(session, tournaments),
            games=game_rows(),
            visibilities=EVENT_VISIBILITIES,
        )
