"""Standings, crosstable and the gauntlet's stop rule, kept as each match finishes.

A page or an API answer reads a handful of rows, whatever the size of the tournament:
``record_result`` adds each finished match to its tournament's entries (points, wins,
ranks, faults, forfeits), to the pairs of the crosstable, to the duplicate deal it
belongs to once every rotation of that deal has finished, and to a gauntlet
challenger's sequential test, which cancels the challenger's queued matches once it has
decided.  It runs in the transaction that writes the result, under a lock on the
tournament's row, so two results of one tournament are added one after the other.

The sequential test takes a challenger's results in the order its matches were
scheduled, not in the order they finish: a bot that forfeits at once would otherwise
hand it a run of quick wins before any slow match ends.  A result waits until every
match scheduled before it has ended; a match that ended without a result is skipped.
``skip_unplayed`` goes past such matches when they end (failed, cancelled).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from arena.competition.formats import Sprt, sprt_decision, sprt_llr
from arena.models import (
    MATCH_OPEN,
    Bot,
    Match,
    MatchSeat,
    Tournament,
    TournamentEntry,
    TournamentPair,
)

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
    """Add a finished match (its seats ranked, their faults recorded) to its tournament's
    standings, and feed the stop rule of its challengers what is now in order."""
    if match.tournament_id is None:
        return
    tournament = session.get(Tournament, match.tournament_id, with_for_update=True)
    if tournament is None:
        return
    ordered = sorted(match.seats, key=lambda s: s.seat)
    seats = [(s.bot_id, s.rank) for s in ordered]
    if any(rank is None for _, rank in seats):
        return
    bot_ids = sorted({bot for bot, _ in seats})
    entries = _entries(session, tournament.id, bot_ids)
    points = pairwise_points(seats)
    firsts = sum(rank == 1 for _, rank in seats)
    struck_out = set((match.result or {}).get("struck_out") or ())
    for seat in ordered:
        entry = entries.get(seat.bot_id)
        if entry is not None:
            entry.matches += 1
            entry.rank_sum += seat.rank
            entry.wins += seat.rank == 1 and firsts == 1  # a shared first place is no win
            entry.faults += int((seat.faults or {}).get("count", 0))
            entry.forfeits += bool(seat.forfeited)
            entry.struck_out += seat.seat in struck_out
    for bot, value in points.items():
        if bot in entries:
            entries[bot].points += value
    _add_pairs(session, tournament.id, seats)
    if match.deal is not None:
        _add_deal(session, tournament, entries, match.deal)
    if tournament.sprt:
        sprt = Sprt(**tournament.sprt)
        for entry in entries.values():
            if entry.challenger and entry.sprt_decision is None:
                if match.id > entry.sprt_through:
                    entry.sprt_waiting += 1
                _advance(session, tournament, entry, sprt, finished=match.id)


def skip_unplayed(session: Session, tournament_id: int | None) -> None:
    """Call in the transaction that ends matches of a tournament without a result
    (failed, cancelled), after it changed their status: the stop rule of each
    challenger goes past them and takes the results that were waiting behind them.
    Takes the tournament's row lock, as ``record_result`` does; cheap when no result
    waits."""
    if tournament_id is None:
        return
    session.flush()  # the statuses the caller has just changed
    tournament = session.get(Tournament, tournament_id, with_for_update=True)
    if tournament is None or not tournament.sprt:
        return
    waiting = session.scalars(
        select(TournamentEntry)
        .where(
            TournamentEntry.tournament_id == tournament_id,
            TournamentEntry.challenger,
            TournamentEntry.sprt_decision.is_(None),
            TournamentEntry.sprt_waiting > 0,
        )
        .order_by(TournamentEntry.bot_id)
    ).all()
    sprt = Sprt(**tournament.sprt)
    for entry in waiting:
        _advance(session, tournament, entry, sprt)


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


def _add_deal(
    session: Session, tournament: Tournament, entries: dict[int, TournamentEntry], deal: int
) -> None:
    """Once every rotation of a duplicate deal has finished: its bots' points above par."""
    rotations = _finished_deal(session, tournament, deal)
    if rotations is None:
        return
    totals: dict[int, float] = {}
    for deal_seats in rotations:
        for bot, value in pairwise_points(deal_seats).items():
            totals[bot] = totals.get(bot, 0.0) + value
    par = len(rotations) * (tournament.seats_per_match - 1) / 2  # what an equal bot scores
    # every rotation of a deal seats the same bots as this match: its entries are loaded
    for bot, total in totals.items():
        if bot in entries:
            entries[bot].deals += 1
            entries[bot].par_points += total - par


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


# -- the stop rule, in schedule order -----------------------------------------------------
# Match ids read at a time past a challenger's place, doubling while there is more to
# read.  A range of both tables' keys is a plan both databases take whatever their
# statistics; the bot's own index is kept out ("bot_id + 0").  Measured on a gauntlet
# of 1,200 matches: the tournament's index with ORDER BY id LIMIT went through all of
# the tournament's matches for every result on PostgreSQL (2.5 ms), SQLite went through
# every seat the bot ever had for each match (10 ms), and without the range on the
# seats PostgreSQL scanned the whole seat table.
SPAN_FIRST, SPAN_MOST = 16, 1024

Unit = list[tuple[int, str]]  # (match id, status) of one observation: a match, or a deal


def _advance(
    session: Session,
    tournament: Tournament,
    entry: TournamentEntry,
    sprt: Sprt,
    finished: int | None = None,
) -> None:
    """Feed the challenger's test from the first match past ``sprt_through``, in
    schedule order (match ids; with duplicate deals, whole deals), up to the first
    observation with a match still open.  An observation whose matches all finished is
    added; one with a match that ended without a result (failed, cancelled: with
    duplicate deals the whole deal) is skipped.  ``finished`` is the match being
    recorded: finished, whatever the session says of its status yet."""
    with session.no_autoflush:  # what the queries read is written; the counts wait
        _walk(session, tournament, entry, sprt, finished)


def _walk(
    session: Session,
    tournament: Tournament,
    entry: TournamentEntry,
    sprt: Sprt,
    finished: int | None,
) -> None:
    duplicate = tournament.deal == "duplicate"
    span = SPAN_FIRST
    newest: int | None = None  # the tournament's last match id, read when needed
    while entry.sprt_decision is None:
        end = entry.sprt_through + span
        units = _units(session, tournament, entry, end, finished)
        # a deal cut by the end of the range is judged once the range holds all of it
        cut = bool(
            duplicate
            and units
            and len(units[-1]) < tournament.seats_per_match
            and span < SPAN_MOST  # its rotations are consecutive: it cannot be this long
        )
        judged = units[:-1] if cut else units
        ended = list(itertools.takewhile(_ended, judged))
        ranks = _ranks(session, [m for unit in ended for m, status in unit if status == "finished"])
        for unit in ended:
            _pass(session, tournament, entry, sprt, unit, ranks)
            if entry.sprt_decision is not None:
                return
        if len(ended) < len(judged) or (cut and not _ended(units[-1])):
            return
        if not cut:
            entry.sprt_through = end  # nothing of the challenger's is left before it
            if newest is None:
                newest = session.scalar(
                    select(func.max(Match.id)).where(Match.tournament_id == tournament.id)
                )
            if newest is None or end >= newest:
                return
        span = min(2 * span, SPAN_MOST)


def _units(
    session: Session,
    tournament: Tournament,
    entry: TournamentEntry,
    end: int,
    finished: int | None,
) -> list[Unit]:
    """The challenger's observations among the matches past ``sprt_through`` up to
    ``end`` (match ids), in schedule order."""
    start = entry.sprt_through
    rows = session.execute(
        select(Match.id, Match.tournament_id, Match.status, Match.deal)
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(
            # the range on both keys and "+ 0" on the bot: see SPAN_FIRST
            Match.id > start,
            Match.id <= end,
            MatchSeat.match_id > start,
            MatchSeat.match_id <= end,
            MatchSeat.bot_id + 0 == entry.bot_id,
        )
        .order_by(Match.id)
    )
    units: dict[Any, Unit] = {}
    for match_id, tournament_id, status, deal in rows:
        if tournament_id == tournament.id:  # another's match may fall in the range
            key = deal if tournament.deal == "duplicate" and deal is not None else match_id
            units.setdefault(key, []).append(
                (match_id, "finished" if match_id == finished else status)
            )
    return list(units.values())


def _ended(unit: Unit) -> bool:
    return not any(status in MATCH_OPEN for _, status in unit)


def _pass(
    session: Session,
    tournament: Tournament,
    entry: TournamentEntry,
    sprt: Sprt,
    unit: Unit,
    ranks: dict[int, list[tuple[int, int]]],
) -> None:
    """Go past an observation whose matches have all ended: add it to the test if each
    finished with its seats ranked (with duplicate deals, every rotation), else skip it."""
    entry.sprt_through = unit[-1][0]
    done = [match_id for match_id, status in unit if status == "finished"]
    entry.sprt_waiting = max(0, entry.sprt_waiting - len(done))
    if len(done) < len(unit):
        return
    if tournament.deal == "duplicate" and len(unit) < tournament.seats_per_match:
        return
    if all(match_id in ranks for match_id in done):
        _observe(session, tournament, entry, sprt, [ranks[match_id] for match_id in done])


def _ranks(session: Session, match_ids: list[int]) -> dict[int, list[tuple[int, int]]]:
    """(bot, rank) by seat of each match that has every seat ranked."""
    seats: dict[int, list[tuple[int, int | None]]] = {}
    if match_ids:
        for match_id, bot, rank in session.execute(
            select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank)
            .where(MatchSeat.match_id.in_(match_ids))
            .order_by(MatchSeat.match_id, MatchSeat.seat)
        ):
            seats.setdefault(match_id, []).append((bot, rank))
    return {
        match_id: ranked  # type: ignore[misc]  # every rank is there
        for match_id, ranked in seats.items()
        if all(rank is not None for _, rank in ranked)
    }


def _observe(
    session: Session,
    tournament: Tournament,
    entry: TournamentEntry,
    sprt: Sprt,
    matches: list[list[tuple[int, int]]],
) -> None:
    """Add one observation to a challenger's sequential test: its score against the
    field (its points over the seats-1 field opponents, in [0, 1]), averaged over the
    rotations of a duplicate deal.  On a decision, cancel its queued matches (the
    tournament ends when its last open match is done); nothing waits any more."""
    bot = entry.bot_id
    mean = sum(pairwise_points(seats)[bot] for seats in matches) / len(matches)
    score = mean / (tournament.seats_per_match - 1)
    entry.sprt_n += 1
    entry.sprt_total += score
    entry.sprt_total_sq += score * score
    entry.sprt_llr = sprt_llr(entry.sprt_n, entry.sprt_total, entry.sprt_total_sq, sprt)
    entry.sprt_decision = sprt_decision(entry.sprt_llr, sprt)
    if entry.sprt_decision is not None:
        entry.sprt_waiting = 0
        seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot)
        queued = (Match.tournament_id == tournament.id, Match.status == "queued")
        # a queued match another transaction holds (a worker claiming it, or failing
        # it, which then waits for this tournament's lock) is left to it rather than
        # waited for: it plays, or ends, and counts in the standings only
        held_back = select(Match.id).where(*queued, Match.id.in_(seated))
        session.execute(
            update(Match)
            .where(*queued, Match.id.in_(held_back.with_for_update(skip_locked=True)))
            .values(status="cancelled")
            .execution_options(synchronize_session=False)
        )


# -- reading ------------------------------------------------------------------------------
def standings(session: Session, tournament: Tournament) -> list[dict[str, Any]]:
    """Per entry: matches, points, points per match, wins, mean rank, faults, forfeits
    and matches struck out; with duplicate deals also the complete deals and the points
    above par per deal.  Best first: by points per match (a balanced schedule gives some
    bots one match more), or, with duplicate deals, by points above par per complete
    deal."""
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
            "faults": entry.faults,
            "struck_out": entry.struck_out,
            "forfeits": entry.forfeits,
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
    a pair that has not met has no cell.  Each entry comes with its faults, forfeits and
    matches struck out, what its row's results owe to a broken bot."""
    bots = session.execute(
        select(
            Bot.id,
            Bot.name,
            TournamentEntry.faults,
            TournamentEntry.struck_out,
            TournamentEntry.forfeits,
        )
        .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
        .where(TournamentEntry.tournament_id == tournament.id)
        .order_by(Bot.id)
    ).all()
    cells: dict[str, dict[str, dict[str, int]]] = {str(row.id): {} for row in bots}
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
    return {
        "bots": [
            {"id": i, "name": n, "faults": f, "struck_out": s, "forfeits": out}
            for i, n, f, s, out in bots
        ],
        "cells": cells,
    }


def sprt_summary(session: Session, tournament: Tournament) -> dict[str, Any] | None:
    """A gauntlet's stop rule and where each challenger stands: observations, mean score
    against the field, log-likelihood ratio, decision, and the finished results waiting
    for a match scheduled before them to end."""
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
                "waiting": entry.sprt_waiting if entry.sprt_decision is None else 0,
            }
            for entry, name in rows
        ],
    }
