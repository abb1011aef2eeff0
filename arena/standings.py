"""Standings, crosstable and the gauntlet's stop rule, kept as each match finishes.

A page or an API answer reads a handful of rows, whatever the size of the tournament:
``record_result`` adds each finished match to its tournament's entries (points, wins,
ranks), to the pairs of the crosstable, to the duplicate deal it belongs to once every
rotation of that deal has finished, and to a gauntlet challenger's sequential test,
which cancels the challenger's queued matches once it has decided.  It runs in the
transaction that writes the result, under a lock on the tournament's row, so two results
of one tournament are added one after the other.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.formats import Sprt, sprt_decision, sprt_llr
from arena.models import Bot, Match, MatchSeat, Tournament, TournamentEntry, TournamentPair

Seats = Sequence[tuple[int, int]]  # (bot id, rank) by seat


def pairwise_points(seats: Seats) -> dict[int, float]:
    """Each bot's points in one match: 1 per opponent ranked below, 1/2 per opponent
    ranked equal (a bot in two seats does not play itself)."""
    points = {bot: 0.0 for bot, _ in seats}
    for (a, rank_a), (b, rank_b) in itertools.permutations(seats, 2):
        if a != b:
            points[a] += 1.0 if rank_a < rank_b else 0.5 if rank_a == rank_b else 0.0
    return points


def record_result(session: Session, match: Match) -> None:
    """Add a finished match (its seats ranked) to its tournament's standings."""
    if match.tournament_id is None:
        return
    tournament = session.get(Tournament, match.tournament_id, with_for_update=True)
    if tournament is None:
        return
    seats = [(s.bot_id, s.rank) for s in sorted(match.seats, key=lambda s: s.seat)]
    if any(rank is None for _, rank in seats):
        return
    bot_ids = sorted({bot for bot, _ in seats})
    entries = _entries(session, tournament.id, bot_ids)
    points = pairwise_points(seats)
    firsts = sum(rank == 1 for _, rank in seats)
    for bot, rank in seats:
        entry = entries.get(bot)
        if entry is not None:
            entry.matches += 1
            entry.rank_sum += rank
            entry.wins += rank == 1 and firsts == 1  # a shared first place is no win
    for bot, value in points.items():
        if bot in entries:
            entries[bot].points += value
    _add_pairs(session, tournament.id, seats)
    if match.deal is None:
        if tournament.sprt:
            _observe(session, tournament, entries, points, len(seats))
        return
    deal = _finished_deal(session, tournament, match.deal)
    if deal is None:
        return
    totals: dict[int, float] = {}
    for deal_seats in deal:
        for bot, value in pairwise_points(deal_seats).items():
            totals[bot] = totals.get(bot, 0.0) + value
    par = len(deal) * (tournament.seats_per_match - 1) / 2  # what an equal bot scores
    # every rotation of a deal seats the same bots as this match: its entries are loaded
    for bot, total in totals.items():
        if bot in entries:
            entries[bot].deals += 1
            entries[bot].par_points += total - par
    if tournament.sprt:
        mean = {bot: total / len(deal) for bot, total in totals.items()}
        _observe(session, tournament, entries, mean, tournament.seats_per_match)


def _entries(session: Session, tournament_id: int, bot_ids: list[int]) -> dict[int, Any]:
    rows = session.scalars(
        select(TournamentEntry)
        .where(TournamentEntry.tournament_id == tournament_id, TournamentEntry.bot_id.in_(bot_ids))
        .order_by(TournamentEntry.bot_id)
    )
    return {entry.bot_id: entry for entry in rows}


def _add_pairs(session: Session, tournament_id: int, seats: Seats) -> None:
    results: dict[tuple[int, int], list[int]] = {}
    for (a, rank_a), (b, rank_b) in itertools.permutations(seats, 2):
        if a != b:
            cell = results.setdefault((a, b), [0, 0, 0])
            cell[0 if rank_a < rank_b else 1 if rank_a == rank_b else 2] += 1
    if not results:
        return
    bots = sorted({a for a, _ in results})
    rows = {
        (row.bot_id, row.opponent_id): row
        for row in session.scalars(
            select(TournamentPair).where(
                TournamentPair.tournament_id == tournament_id,
                TournamentPair.bot_id.in_(bots),
                TournamentPair.opponent_id.in_(bots),
            )
        )
    }
    for (a, b), (wins, draws, losses) in sorted(results.items()):
        row = rows.get((a, b))
        if row is None:
            row = TournamentPair(
                tournament_id=tournament_id, bot_id=a, opponent_id=b, wins=0, draws=0, losses=0
            )
            session.add(row)
        row.wins += wins
        row.draws += draws
        row.losses += losses


def _finished_deal(
    session: Session, tournament: Tournament, deal: int
) -> list[list[tuple[int, int]]] | None:
    """The seats of every rotation of a duplicate deal, once all of them have finished
    and been settled (they are settled together, the last one counting the deal)."""
    rows = session.execute(
        select(Match.id, Match.status, Match.settled, MatchSeat.bot_id, MatchSeat.rank)
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.tournament_id == tournament.id, Match.deal == deal)
        .order_by(Match.id, MatchSeat.seat)
    ).all()
    matches: dict[int, list[tuple[int, int]]] = {}
    for match_id, status, settled, bot, rank in rows:
        if status != "finished" or not settled or rank is None:
            return None
        matches.setdefault(match_id, []).append((bot, rank))
    if len(matches) < tournament.seats_per_match:
        return None
    return list(matches.values())


def _observe(
    session: Session,
    tournament: Tournament,
    entries: dict[int, TournamentEntry],
    points: dict[int, float],
    seats: int,
) -> None:
    """Add a challenger's score against the field (its points over the seats-1 field
    opponents, in [0, 1]) to its sequential test; on a decision, cancel its queued
    matches (the tournament ends when its last open match is done)."""
    sprt = Sprt(**tournament.sprt)
    for bot, entry in entries.items():
        if not entry.challenger or entry.sprt_decision is not None or bot not in points:
            continue
        score = points[bot] / (seats - 1)
        entry.sprt_n += 1
        entry.sprt_total += score
        entry.sprt_total_sq += score * score
        entry.sprt_llr = sprt_llr(entry.sprt_n, entry.sprt_total, entry.sprt_total_sq, sprt)
        entry.sprt_decision = sprt_decision(entry.sprt_llr, sprt)
        if entry.sprt_decision is not None:
            seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot)
            session.execute(
                update(Match)
                .where(
                    Match.tournament_id == tournament.id,
                    Match.status == "queued",
                    Match.id.in_(seated),
                )
                .values(status="cancelled")
                .execution_options(synchronize_session=False)
            )


# -- reading ------------------------------------------------------------------------------
def standings(session: Session, tournament: Tournament) -> list[dict[str, Any]]:
    """Per entry: matches, points, points per match, wins, mean rank; with duplicate deals
    also the complete deals and the points above par per deal.  Best first: by points
    per match (a balanced schedule gives some bots one match more), or, with duplicate
    deals, by points above par per complete deal."""
    rows = session.execute(
        select(TournamentEntry, Bot.name)
        .join(Bot, Bot.id == TournamentEntry.bot_id)
        .where(TournamentEntry.tournament_id == tournament.id)
        .order_by(TournamentEntry.bot_id)
    ).all()
    duplicate = tournament.deal == "duplicate"
    result = []
    for entry, name in rows:
        row: dict[str, Any] = {
            "bot_id": entry.bot_id,
            "name": name,
            "matches": entry.matches,
            "points": entry.points,
            "points_per_match": entry.points / entry.matches if entry.matches else None,
            "wins": entry.wins,
            "mean_rank": entry.rank_sum / entry.matches if entry.matches else None,
            "challenger": entry.challenger,
        }
        if duplicate:
            row["deals"] = entry.deals
            row["par_per_deal"] = entry.par_points / entry.deals if entry.deals else None
        result.append(row)

    def order(row: dict[str, Any]) -> tuple[Any, ...]:
        per_match = row["points_per_match"]
        par = row.get("par_per_deal")
        return (
            par is None if duplicate else False,
            -(par or 0.0) if duplicate else 0.0,
            per_match is None,
            -(per_match or 0.0),
            row["mean_rank"] or 0.0,
            row["name"],
        )

    result.sort(key=order)
    return result


def crosstable(session: Session, tournament: Tournament) -> dict[str, Any]:
    """Pairwise wins, draws and losses of each entry (row) against each other (column);
    a pair that has not met has no cell."""
    bots = session.execute(
        select(Bot.id, Bot.name)
        .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
        .where(TournamentEntry.tournament_id == tournament.id)
        .order_by(Bot.id)
    ).all()
    cells: dict[str, dict[str, dict[str, int]]] = {str(bot_id): {} for bot_id, _ in bots}
    pairs = session.execute(
        select(
            TournamentPair.bot_id,
            TournamentPair.opponent_id,
            TournamentPair.wins,
            TournamentPair.draws,
            TournamentPair.losses,
        ).where(TournamentPair.tournament_id == tournament.id)
    )
    for bot_id, opponent_id, wins, draws, losses in pairs:  # rows, not objects: 1,000s
        cells.setdefault(str(bot_id), {})[str(opponent_id)] = {
            "wins": wins,
            "draws": draws,
            "losses": losses,
        }
    return {"bots": [{"id": i, "name": n} for i, n in bots], "cells": cells}


def sprt_summary(session: Session, tournament: Tournament) -> dict[str, Any] | None:
    """A gauntlet's stop rule and where each challenger stands: observations, mean score
    against the field, log-likelihood ratio and decision."""
    if not tournament.sprt:
        return None
    sprt = Sprt(**tournament.sprt)
    lower, upper = sprt.bounds()
    rows = session.execute(
        select(TournamentEntry, Bot.name)
        .join(Bot, Bot.id == TournamentEntry.bot_id)
        .where(TournamentEntry.tournament_id == tournament.id, TournamentEntry.challenger)
        .order_by(TournamentEntry.bot_id)
    ).all()
    return {
        **tournament.sprt,
        "lower": lower,
        "upper": upper,
        "challengers": [
            {
                "bot_id": entry.bot_id,
                "name": name,
                "observations": entry.sprt_n,
                "score": entry.sprt_total / entry.sprt_n if entry.sprt_n else None,
                "llr": entry.sprt_llr if entry.sprt_llr is not None else 0.0,
                "decision": entry.sprt_decision,
            }
            for entry, name in rows
        ],
    }
