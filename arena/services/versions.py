"""Results per version: what each version a bot declared (``MatchSeat.version``, recorded
as a match is claimed: ``arena.worker.lifecycle.declared_version``) did, over all its
matches (a bot's page and ``/api/bots/<id>/versions``) or in one tournament (its
standings split by version).  Counted by the database, as the standings count them:
points are 1 per opponent ranked below and 1/2 per opponent ranked equal, a win is
first place alone, a match's score its points over its opponents.  Rows are flat.  No
Flask here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Float, and_, case, cast, func, select
from sqlalchemy.orm import Session, aliased

from arena.models import MATCH_PLAYED, Bot, Match, MatchSeat, Tournament

# the columns of a tournament's standings by version, in order
TOURNAMENT_COLUMNS = (
    "bot_id",
    "bot",
    "version",
    "matches",
    "points",
    "points_per_match",
    "wins",
    "mean_rank",
    "mean_score",
    "forfeits",
    "first_played",
    "last_played",
)


def _per_version(where: Callable[[Any], tuple[Any, ...]]) -> Any:
    """(bot id, version) -> matches, points, wins, rank sum, mean score, forfeits, first
    and last played, over the finished matches ``where(me)`` selects (clauses on
    ``Match`` and ``me``, the seat counted)."""
    me, other = aliased(MatchSeat, name="me"), aliased(MatchSeat, name="other")
    points = func.sum(case((other.rank > me.rank, 1.0), (other.rank == me.rank, 0.5), else_=0.0))
    per_match = (
        select(
            me.bot_id.label("bot_id"),
            me.version.label("version"),
            me.rank.label("rank"),
            me.forfeited.label("forfeited"),
            cast(points, Float).label("points"),
            func.count(other.seat).label("opponents"),
            func.sum(case((other.rank == 1, 1), else_=0)).label("others_first"),
            Match.started_at.label("started_at"),
            Match.finished_at.label("finished_at"),
        )
        .join(Match, Match.id == me.match_id)
        .join(
            other,
            and_(
                other.match_id == me.match_id,
                other.bot_id != me.bot_id,  # a bot in two seats does not play itself
                other.rank.is_not(None),
            ),
        )
        .where(Match.status == MATCH_PLAYED, me.rank.is_not(None), *where(me))
        .group_by(
            me.match_id,
            me.seat,
            me.bot_id,
            me.version,
            me.rank,
            me.forfeited,
            Match.started_at,
            Match.finished_at,
        )
        .subquery()
    )
    first = func.min(func.coalesce(per_match.c.started_at, per_match.c.finished_at))
    return (
        select(
            per_match.c.bot_id,
            per_match.c.version,
            func.count().label("matches"),
            cast(func.sum(per_match.c.points), Float).label("points"),
            func.sum(
                case((and_(per_match.c.rank == 1, per_match.c.others_first == 0), 1), else_=0)
            ).label("wins"),
            func.sum(per_match.c.rank).label("rank_sum"),
            cast(func.avg(per_match.c.points / per_match.c.opponents), Float).label("mean_score"),
            func.sum(case((per_match.c.forfeited, 1), else_=0)).label("forfeits"),
            first.label("first_played"),
            func.max(per_match.c.finished_at).label("last_played"),
        )
        .group_by(per_match.c.bot_id, per_match.c.version)
        .order_by(per_match.c.bot_id, first, per_match.c.version)
    )


def bot_versions(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """Per version the bot declared (null: matches played before versions were recorded,
    or with none declared), first played first: its matches played, wins, mean score and
    when it first and last played."""
    rows = session.execute(_per_version(lambda me: (me.bot_id == bot_id,))).all()
    return [
        {
            "version": row.version,
            "matches": row.matches,
            "wins": int(row.wins or 0),
            "mean_score": row.mean_score,
            "forfeits": int(row.forfeits or 0),
            "first_played": row.first_played,
            "last_played": row.last_played,
        }
        for row in rows
    ]


def versions_changed(session: Session, tournament: Tournament) -> bool:
    """Whether some entrant played the tournament's matches with more than one version
    (a cheap look before ``tournament_versions``: no join of the seats with each other)."""
    changed = (
        select(MatchSeat.bot_id)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.tournament_id == tournament.id, Match.status == MATCH_PLAYED)
        .group_by(MatchSeat.bot_id)
        .having(func.count(func.distinct(func.coalesce(MatchSeat.version, ""))) > 1)
        .limit(1)
    )
    return session.scalar(changed) is not None


def tournament_versions(session: Session, tournament: Tournament) -> list[dict[str, Any]]:
    """The tournament's standings split by version: one flat row per entrant and version
    it played with (``TOURNAMENT_COLUMNS``), over its settled matches (those the standings
    count), by bot name, then first played."""
    rows = session.execute(
        _per_version(
            lambda me: (
                Match.tournament_id == tournament.id,
                Match.settled.is_(True),
            )
        )
    ).all()
    names = {
        bot_id: name
        for bot_id, name in session.execute(
            select(Bot.id, Bot.name).where(Bot.id.in_({r.bot_id for r in rows}))
        )
    }
    result = [
        {
            "bot_id": row.bot_id,
            "bot": names.get(row.bot_id),
            "version": row.version,
            "matches": row.matches,
            "points": row.points,
            "points_per_match": row.points / row.matches,
            "wins": int(row.wins or 0),
            "mean_rank": int(row.rank_sum) / row.matches,
            "mean_score": row.mean_score,
            "forfeits": int(row.forfeits or 0),
            "first_played": row.first_played,
            "last_played": row.last_played,
        }
        for row in rows
    ]
    # the database's order within a bot (first played), the bots by name
    result.sort(key=lambda r: (r["bot"] or "", r["bot_id"]))
    return result
