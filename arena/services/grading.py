"""A qualifier's grades: each challenger's matches read in schedule order and graded by
the tournament's pass rule (``arena.competition.grading``), as flat rows (scalars only)
so that the JSON answer and its CSV export are one table; and the grades of an event's
latest qualifier, for its roster.  No Flask here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.competition import grading
from arena.models import MATCH_OPEN, Account, Bot, Match, MatchSeat, Tournament, TournamentEntry
from arena.services.errors import ServiceError

# the grades' columns, in order (the CSV's header)
COLUMNS = (
    "tournament_id",
    "bot_id",
    "bot",
    "account",
    "grade",
    "rule",
    "matches",
    "remaining",
    "wins",
    "score",
    "best_window",
    "reason",
    "evidence",
)


def pass_rule(tournament: Tournament) -> grading.PassRule:
    """The tournament's pass rule, else a 404: it is no qualifier."""
    if not tournament.pass_rule:
        raise ServiceError(404, f"tournament {tournament.id} has no grades: it has no pass rule")
    return grading.PassRule.from_json(tournament.pass_rule)


def challenger_results(
    session: Session, tournament_id: int, bot_ids: Iterable[int]
) -> dict[int, list[grading.Result]]:
    """Each challenger's matches in schedule order (match ids): played ones (finished,
    settled, every seat ranked) with its score, open ones (queued, running, or finished
    and waiting for the other rotations of its deal) without; matches that ended with no
    result (failed, cancelled) are left out."""
    wanted = set(bot_ids)
    rows = session.execute(
        select(
            Match.id,
            Match.status,
            Match.settled,
            MatchSeat.bot_id,
            MatchSeat.rank,
            MatchSeat.forfeited,
        )
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(
            Match.tournament_id == tournament_id,
            # only the matches that seat one of them (a notice asks for one bot's)
            Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.bot_id.in_(sorted(wanted)))),
        )
        .order_by(Match.id, MatchSeat.seat)
    ).all()
    matches: dict[int, dict[str, Any]] = {}
    for match_id, status, settled, bot_id, rank, forfeited in rows:
        match = matches.setdefault(
            match_id, {"status": status, "settled": settled, "seats": [], "forfeited": set()}
        )
        match["seats"].append((bot_id, rank))
        if forfeited:
            match["forfeited"].add(bot_id)
    results: dict[int, list[grading.Result]] = {bot_id: [] for bot_id in wanted}
    for match_id, match in matches.items():
        seated = [bot for bot, _ in match["seats"] if bot in wanted]
        played = (
            match["status"] == "finished"
            and match["settled"]
            and all(rank is not None for _, rank in match["seats"])
        )
        open_ = match["status"] in MATCH_OPEN or (match["status"] == "finished" and not played)
        for bot_id in dict.fromkeys(seated):
            if played:
                score, win = grading.match_score(match["seats"], bot_id)
                forfeited = bot_id in match["forfeited"]
                results[bot_id].append(grading.Result(match_id, score, win, forfeited))
            elif open_:
                results[bot_id].append(grading.Result(match_id))
    return results


def tournament_grades(session: Session, tournament: Tournament) -> list[dict[str, Any]]:
    """One flat row per challenger (by bot id): its grade under the pass rule and the
    evidence (``COLUMNS``; ``evidence``: the deciding match ids, space-separated;
    ``best_window``: "wins/matches" of the consecutive rule's best run).  A reference
    bot (a house bot, a bot marked ``reference``) is never graded, even ticked as a
    challenger: it is an opponent, not a contestant."""
    rule = pass_rule(tournament)
    challengers = session.execute(
        select(TournamentEntry.bot_id, TournamentEntry.sprt_decision, Bot.name, Account.name)
        .join(Bot, Bot.id == TournamentEntry.bot_id)
        .outerjoin(Account, Account.id == Bot.account_id)
        .where(
            TournamentEntry.tournament_id == tournament.id,
            TournamentEntry.challenger,
            Bot.kind != "house",
            Bot.reference.is_not(True),
        )
        .order_by(TournamentEntry.bot_id)
    ).all()
    results = challenger_results(session, tournament.id, [c[0] for c in challengers])
    rows = []
    for bot_id, decision, bot_name, account in challengers:
        graded = grading.grade(rule, results[bot_id], decision)
        window = graded.window
        rows.append(
            {
                "tournament_id": tournament.id,
                "bot_id": bot_id,
                "bot": bot_name,
                "account": account,
                "grade": graded.grade,
                "rule": rule.text(),
                "matches": graded.matches,
                "remaining": graded.remaining,
                "wins": graded.wins,
                "score": graded.score,
                "best_window": f"{window.wins}/{window.matches}" if window else None,
                "reason": graded.reason(rule),
                "evidence": " ".join(map(str, graded.evidence)),
            }
        )
    return rows


def latest_qualifier(session: Session, event_id: int) -> Tournament | None:
    """The event's newest qualifier (not cancelled)."""
    return session.scalars(
        select(Tournament)
        .where(
            Tournament.event_id == event_id,
            # the format, not the JSON column: a JSON null is not SQL NULL everywhere
            Tournament.format == "qualifier",
            Tournament.status != "cancelled",
        )
        .order_by(Tournament.id.desc())
        .limit(1)
    ).first()


def event_grades(session: Session, event_id: int) -> tuple[int | None, dict[int, dict[str, Any]]]:
    """The event's latest qualifier (its id, None without one) and its grade rows by bot."""
    qualifier = latest_qualifier(session, event_id)
    if qualifier is None:
        return None, {}
    return qualifier.id, {row["bot_id"]: row for row in tournament_grades(session, qualifier)}
