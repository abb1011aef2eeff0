"""Read models: the leaderboard and a bot's ratings (one view of a rating for every page
and answer), a tournament's progress, counts of matches played, pages of matches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, selectinload

from arena.competition.ratings import is_provisional, tie_groups
from arena.models import (
    MATCH_PLAYED,
    MATCH_STATUSES,
    Bot,
    FittedRating,
    Match,
    MatchSeat,
    Rating,
    Tournament,
)
from arena.services.errors import MAX_ID, ServiceError
from arena.services.events import not_hidden


def rating_view(rating: Rating, fitted: FittedRating | None) -> dict[str, Any]:
    """A bot's rating in a game as every page and answer shows it (the leaderboards, an
    event's, the bot's page, its table and its chart, ``GET /api/bots/{id}``): the live
    Elo and its matches, the fitted rating (None before the first fit) and whether that
    fit is ``provisional`` (``arena.competition.ratings.is_provisional``: too few matches
    or too wide an interval to be compared; no fit yet is provisional too)."""
    return {
        "elo": rating.elo,
        "matches": rating.matches,
        "fitted": None
        if fitted is None
        else {
            "rating": fitted.rating,
            "low": fitted.low,
            "high": fitted.high,
            "matches": fitted.matches,
        },
        "provisional": is_provisional(
            *((None, None, None) if fitted is None else (fitted.matches, fitted.low, fitted.high))
        ),
    }


def _with_fit(statement: Select) -> Select:
    return statement.outerjoin(
        FittedRating,
        (FittedRating.bot_id == Rating.bot_id) & (FittedRating.game == Rating.game),
    )


def bot_ratings(session: Session, bot_id: int) -> dict[str, dict[str, Any]]:
    """The bot's rating in each game it was rated in (``rating_view``), by game: what its
    page's table and its rating charts both read, whatever the bot's status."""
    rows = session.execute(
        _with_fit(select(Rating, FittedRating)).where(Rating.bot_id == bot_id).order_by(Rating.game)
    )
    return {rating.game: rating_view(rating, fitted) for rating, fitted in rows}


def leaderboard(session: Session, game: str, event_id: int | None = None) -> list[dict[str, Any]]:
    """Rated active bots of ``game`` by live Elo (``rating_view`` each): the open arena's
    (``event_id`` None) or one event's (events never mix).  ``tie_group`` numbers the
    runs of neighbours whose fitted ratings are not told apart at 95%
    (``arena.competition.ratings.tie_groups``; None: not tied, or provisional)."""
    rows = session.execute(
        _with_fit(select(Rating, Bot.name, FittedRating).join(Bot, Bot.id == Rating.bot_id))
        .where(
            Rating.game == game,
            Bot.status == "active",
            Bot.event_id.is_(None) if event_id is None else Bot.event_id == event_id,
        )
        .order_by(Rating.elo.desc(), Bot.name)
    )
    board = [
        {"bot_id": rating.bot_id, "name": name, **rating_view(rating, fitted)}
        for rating, name, fitted in rows
    ]
    groups = tie_groups(
        [
            None
            if row["provisional"]
            else (row["fitted"]["rating"], row["fitted"]["low"], row["fitted"]["high"])
            for row in board
        ]
    )
    for row, group in zip(board, groups, strict=True):
        row["tie_group"] = group
    return board


def tournament_progress(session: Session, tournament: Tournament) -> dict[str, int]:
    counts = dict.fromkeys(MATCH_STATUSES, 0)
    for status, n in session.execute(
        select(Match.status, func.count())
        .where(Match.tournament_id == tournament.id)
        .group_by(Match.status)
    ):
        counts[status] = n
    return {"total": sum(counts.values()), **counts}


def played_by_game(session: Session) -> dict[str, int]:
    """The number of matches played (finished) per game."""
    return dict(
        session.execute(
            select(Match.game, func.count())
            .where(Match.status == MATCH_PLAYED)
            .group_by(Match.game)
        ).all()
    )


def played_by_bot(session: Session, bot_ids: Sequence[int]) -> dict[int, int]:
    """The number of matches each bot played (finished), by bot id (none: absent)."""
    return dict(
        session.execute(
            select(MatchSeat.bot_id, func.count(MatchSeat.match_id.distinct()))
            .join(Match, Match.id == MatchSeat.match_id)
            .where(MatchSeat.bot_id.in_(bot_ids), Match.status == MATCH_PLAYED)
            .group_by(MatchSeat.bot_id)
        ).all()
    )


def bot_match_counts(session: Session, bot_id: int) -> dict[str, int]:
    """The bot's matches by status (every status of ``MATCH_STATUSES``, 0 when none)."""
    counts = dict.fromkeys(MATCH_STATUSES, 0)
    seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)
    for status, n in session.execute(
        select(Match.status, func.count()).where(Match.id.in_(seated)).group_by(Match.status)
    ):
        counts[status] = n
    return counts


_WITH_SEATS = selectinload(Match.seats).joinedload(MatchSeat.bot)


def list_matches(
    session: Session,
    *,
    game: str | None = None,
    status: str | None = None,
    statuses: Sequence[str] | None = None,
    tournament_id: int | None = None,
    bot_id: int | None = None,
    hidden_events: Sequence[int] = (),
    page: int = 1,
    page_size: int = 20,
) -> tuple[list[Match], int]:
    """One page of matches, newest first (seats and their bots loaded), and the number of
    matches that fit the filters (``statuses``: any of them); the matches of
    ``hidden_events`` (``events.hidden_event_ids``: private events the reader is not in)
    are left out."""
    query = select(Match).where(not_hidden(Match.event_id, hidden_events))
    if game is not None:
        query = query.where(Match.game == game)
    if status is not None:
        query = query.where(Match.status == status)
    if statuses is not None:
        query = query.where(Match.status.in_(statuses))
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if bot_id is not None:
        seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)
        query = query.where(Match.id.in_(seated))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    matches = session.scalars(
        query.options(_WITH_SEATS)
        .order_by(Match.id.desc())
        .offset((page - 1) * page_size)
        .limit(page_size)
    ).all()
    return list(matches), total


def get_match(session: Session, match_id: int) -> Match:
    """The match with its seats and their bots loaded."""
    match = session.get(Match, match_id, options=[_WITH_SEATS]) if 0 < match_id <= MAX_ID else None
    if match is None:
        raise ServiceError(404, f"no match {match_id}")
    return match
