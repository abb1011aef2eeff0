"""What a deal not yet over keeps hidden: a tournament's seed, a match's seed, replay,
frames and cards while any match that plays its deal is queued or running."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.models import MATCH_OPEN, Match, Tournament


def tournament_seed(tournament: Tournament, progress: dict[str, int]) -> int | None:
    """The tournament's seed, or None while it runs or any of its matches is queued or
    running (``progress``: ``tournament_progress``), whatever its status: every match's
    seed, and so every deal, follows from it (a cancelled tournament's running matches
    are still being played)."""
    if tournament.status in ("building", "running") or any(progress.get(s) for s in MATCH_OPEN):
        return None
    return tournament.seed


def deals_being_played(session: Session, matches: Iterable[Match]) -> dict[int, list[int]]:
    """Per match id: the ids of the matches that play its deal and are queued or running
    (itself included), ascending; empty once its deal is over.

    This owns the question "is this match's deal still being played?": while the list is
    not empty nothing that shows the deal is published, neither the seed nor the replay,
    the frames or the cards of any match that plays it.  A match's deal is its own unless
    it belongs to a duplicate deal: the matches of one tournament with the same ``deal``
    are dealt the same cards (their seats rotated).  One query, whatever the number of
    matches."""
    matches = list(matches)
    found: dict[int, set[int]] = {
        m.id: {m.id} if m.status in MATCH_OPEN else set() for m in matches
    }
    shared = {
        (m.tournament_id, m.deal)
        for m in matches
        if m.tournament_id is not None and m.deal is not None
    }
    if shared:
        playing: dict[tuple[int, int], set[int]] = {}
        for tournament_id, deal, match_id in session.execute(
            select(Match.tournament_id, Match.deal, Match.id).where(
                Match.tournament_id.in_({t for t, _ in shared}),
                Match.deal.in_({d for _, d in shared}),
                Match.status.in_(MATCH_OPEN),
            )
        ):
            playing.setdefault((tournament_id, deal), set()).add(match_id)
        for match in matches:
            found[match.id] |= playing.get((match.tournament_id, match.deal), set())
    return {match_id: sorted(ids) for match_id, ids in found.items()}


def deal_being_played(session: Session, match: Match) -> list[int]:
    """``deals_being_played`` of one match: the ids of the matches (itself included)
    still queued or running that play its deal; empty once the deal is over."""
    return deals_being_played(session, [match])[match.id]


def match_seed(match: Match, playing: Sequence[int]) -> int | None:
    """The match's seed, or None while its deal is being played (``playing``: what
    ``deals_being_played`` says of it): the seed gives every card of the deal."""
    return None if playing else match.seed


def deal_hidden_message(match: Match, playing: Sequence[int]) -> str:
    """Why a finished match's replay, frames and cards are not shown: the other matches
    of its deal, still to be played (``playing``)."""
    others = [i for i in playing if i != match.id]
    listed = ", ".join(str(i) for i in others[:10]) + (", ..." if len(others) > 10 else "")
    return (
        f"match {match.id} shares its deal with match{'es' if len(others) > 1 else ''} "
        f"{listed}, still queued or running: its seed, replay and cards are shown once "
        "every match of the deal is over"
    )
