"""A match's page: its result, and its replay viewer once its deal is over (a match
whose deal is still being played elsewhere, ``services.deals_being_played``, shows its
result, not its seed, replay or cards); followed live while it is played.  A private
event's match is for its members: to anyone else it does not exist (404).

A seat's private log (what its bot wrote to stderr when hosted, the ``debug`` text of its
answers on any transport) is in the page only for a reader who manages that seat's bot
(``Caller.manages``: its owner, its account, an organiser of its event, the admin), as
``arena.services.hosted.check_reads_log`` allows through the API: embedded as JSON for
the viewer to show beside each decision, its start and end entries listed below it.
Anyone else's page holds nothing of it, and the page's ETag says whose page it is."""

from __future__ import annotations

from typing import Any

from flask import Response, abort, render_template, request
from sqlalchemy.orm import Session
from werkzeug.http import quote_etag

from arena import services
from arena.models import MATCH_OPEN, Match, Replay
from arena.services import hosted
from arena.web.pages.common import (
    FINISHED,
    bp,
    check_visible,
    database,
    matches_query,
    not_modified,
    page_etag,
    reader,
    with_validators,
)
from arena.web.viewer import drawing_path


@bp.get("/matches/<int:match_id>")
def match(match_id: int) -> Response:
    with database().session() as session:
        found = session.scalar(matches_query().where(Match.id == match_id))
        if found is None:
            abort(404, f"There is no match {match_id}.")
        check_visible(session, found.event_id, f"match {match_id}")
        # the other matches of its deal still to be played: while there are any, its
        # seed, replay and cards stay hidden (its result is shown)
        playing = services.deal_being_played(session, found)
        others = [i for i in playing if i != found.id]
        renamed = max((seat.bot.updated_at for seat in found.seats), default=None)
        who = reader(session)
        readable = sorted(s.seat for s in found.seats if who.manages(s.bot))
        etag = page_etag(
            found.status,
            found.started_at,
            found.finished_at,
            found.error,
            renamed,
            others,
            readable,
        )
        unchanged = not_modified(etag)
        if unchanged is not None:
            return unchanged
        replay = session.get(Replay, match_id) if found.status == FINISHED and not others else None
        record = replay.record if replay is not None else None
        outcome = (record or {}).get("outcome") or found.result or {}
        live = found.status in MATCH_OPEN
        players = [_seat_name(found, seat) for seat in range(len(found.seats))]
        everyone = found.tournament is not None and found.tournament.live_view == "everyone"
        perspectives: list[str] = ["public"]
        if not live or everyone:
            perspectives = ["all", "public", *map(str, range(len(players)))]
        # the logs are written with the result: a replay shown has them, a live match not yet
        logs = _seat_logs(session, found, readable, players) if record is not None else []
        body = render_template(
            "match.html",
            match=found,
            seed=services.match_seed(found, playing),
            deal_others=others,
            etag=quote_etag(etag, weak=True),
            viewer=not others and (record is not None or live),
            game=found.game,
            drawing=drawing_path(found.game) is not None,
            players=players,
            perspectives=perspectives,
            initial="public" if live and not everyone else "all",
            outcome=outcome,
            rounds=_rounds_table(outcome.get("rounds") or []),
            frames_url=f"{request.script_root}/api/matches/{match_id}/frames",
            live=live,
            logs=logs,
        )
        response = with_validators(Response(body, mimetype="text/html"), etag)
        if readable:  # a page with someone's private log is for no shared cache
            response.headers["Cache-Control"] = "private, no-cache"
        return response


def _seat_logs(
    session: Session, match: Match, seats: list[int], players: list[str]
) -> list[dict[str, Any]]:
    """The private logs of the seats the reader may read: each seat's entries, how many
    decisions have one, those of no decision (as the bot started or ended), and the API's
    address of the whole log as text."""
    logs = []
    for seat in seats:
        entries = hosted.log_entries(session, match, seat)
        logs.append(
            {
                "seat": seat,
                "name": players[seat] if seat < len(players) else f"seat {seat}",
                "entries": entries,
                "decisions": len({e["decision_id"] for e in entries if e.get("decision_id")}),
                "outside": [e for e in entries if e.get("step") is None],
                "text_url": f"{request.script_root}/api/matches/{match.id}/logs/{seat}",
            }
        )
    return logs


def _seat_name(match: Match, seat: int) -> str:
    for entry in match.seats:
        if entry.seat == seat:
            return entry.bot.name
    return f"seat {seat}"


def _rounds_table(rounds: list[Any]) -> dict[str, Any] | None:
    """Per-round results as a table: the union of their keys as columns, in order."""
    if not rounds or not all(isinstance(r, dict) for r in rounds):
        return None
    columns: list[str] = []
    for result in rounds:
        columns.extend(key for key in result if key not in columns)
    return {
        "columns": columns,
        "rows": [[_cell(result.get(key)) for key in columns] for result in rounds],
    }


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return str(value)
