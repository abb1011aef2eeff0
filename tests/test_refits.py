"""Refits of the fitted ratings: the history in one query, and debounced refits (one
running per game, none unless the history changed), on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event, select

from arena.competition.ratings import fit_ratings
from arena.db import Database
from arena.models import Bot, FittedRating, Match, MatchSeat, RatingFit, aware
from arena.worker import celery_app, refits
from arena.worker.housekeeping import refit_stale
from arena.worker.refits import (
    REFIT_STALE_AFTER,
    _claim_refit,
    rated_history,
    rebuild_ratings,
    refit_game,
    refit_ratings,
)

T0 = dt.datetime(2026, 11, 23, 8, 0, tzinfo=dt.UTC)


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    database.upgrade()
    yield database
    database.dispose()


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of matches of each fit the refits run."""
    runs: list[int] = []

    def counted(history: Any) -> Any:
        runs.append(len(history))
        return fit_ratings(history)

    monkeypatch.setattr(refits, "fit_ratings", counted)
    return runs


def add_bots(database: Database, n: int) -> list[int]:
    with database.session() as session:
        bots = [
            Bot(
                name=f"bot{i}",
                endpoint=f"http://127.0.0.1:9/{i}",
                owner="tests",
                owner_token_hash="-",
                signing_secret="-",
                games=["cactus", "president"],
            )
            for i in range(n)
        ]
        session.add_all(bots)
        session.flush()
        return [b.id for b in bots]


def add_match(
    database: Database,
    bots: list[int],
    ranks: list[int],
    seq: int | None,
    game: str = "cactus",
) -> None:
    """A finished match, rated as number ``seq`` (None: unrated)."""
    with database.session() as session:
        match = Match(
            game=game,
            seed=seq or 0,
            status="finished",
            rated=seq is not None,
            rating_seq=seq,
            finished_at=T0,
        )
        pairs = zip(bots, ranks, strict=True)
        match.seats = [MatchSeat(seat=s, bot_id=b, rank=r) for s, (b, r) in enumerate(pairs)]
        session.add(match)


def fit_row(database: Database, game: str = "cactus") -> RatingFit | None:
    with database.session() as session:
        return session.get(RatingFit, game)


def stored_fit(database: Database, game: str = "cactus") -> dict[int, tuple[float, float, float]]:
    with database.session() as session:
        rows = session.scalars(select(FittedRating).where(FittedRating.game == game))
        return {r.bot_id: (r.rating, r.low, r.high) for r in rows}


@pytest.fixture
def rated(db: Database) -> list[int]:
    """Four bots and a few rated four-seat matches of cactus (numbers 1 to 5)."""
    bots = add_bots(db, 4)
    for seq in range(1, 6):
        seats = bots[seq % 4 :] + bots[: seq % 4]
        add_match(db, seats, [1, 2, 3, 3] if seq % 2 else [2, 1, 4, 3], seq)
    return bots


def test_rated_history_is_one_query_in_the_order_of_rating(db: Database):
    a, b, c = add_bots(db, 3)
    # created out of their rating order, with an unrated match, a bot in two seats and
    # another game's match in between
    add_match(db, [c, a, b], [1, 2, 2], 3)
    add_match(db, [a, b], [2, 1], 1)
    add_match(db, [a, b], [1, 2], None)
    add_match(db, [b, c], [1, 2], 2, game="president")
    add_match(db, [a, c, a, b], [4, 1, 2, 3], 4)
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        with db.session() as session:
            history = rated_history(session, "cactus")
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    assert history == [([a, b], [2, 1]), ([c, a, b], [1, 2, 2]), ([a, c, a, b], [4, 1, 2, 3])]
    assert [s for s in statements if s.lstrip().upper().startswith("SELECT")] == statements[-1:]
    with db.session() as session:
        assert rated_history(session, "president") == [([b, c], [1, 2])]
        assert rated_history(session, "unknown") == []


def test_two_claims_at_once_one_wins(db: Database, rated: list[int]):
    # no rating_fits row yet: both may insert it, and one insert then fails quietly
    barrier = threading.Barrier(4)
    won: list[bool] = []

    def claim(k: int) -> None:
        barrier.wait()
        with db.session() as session:
            now = T0 + dt.timedelta(seconds=k)
            won.append(_claim_refit(session, "cactus", now, REFIT_STALE_AFTER))

    threads = [threading.Thread(target=claim, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False, False, False, True]
    row = fit_row(db)
    assert row is not None and row.running_since is not None and row.rating_seq is None


def test_a_refit_while_another_runs_does_nothing(db: Database, rated: list[int], fits: list[int]):
    with db.session() as session:
        assert _claim_refit(session, "cactus", T0, REFIT_STALE_AFTER)
    assert refit_game(db, "cactus", now=T0 + dt.timedelta(minutes=1)).status == "running"
    assert fits == [] and stored_fit(db) == {}
    assert aware(fit_row(db).running_since) == T0  # the claim is left alone


def test_a_second_refit_with_no_new_rated_match_does_not_fit(
    db: Database, rated: list[int], fits: list[int]
):
    assert refit_game(db, "cactus", now=T0) == ("fitted", 5)
    row = fit_row(db)
    assert (row.rating_seq, row.running_since) == (5, None) and row.fitted_at is not None
    with db.session() as session:
        expected = fit_ratings(rated_history(session, "cactus"))
    assert stored_fit(db) == {bot: (f.rating, f.low, f.high) for bot, f in expected.items()}
    assert refit_game(db, "cactus", now=T0 + dt.timedelta(seconds=1)).status == "unchanged"
    with pytest.MonkeyPatch.context() as patch:  # the task, called directly
        patch.setattr(celery_app, "_db", lambda: db)
        assert refit_ratings("cactus") == 0
    assert refit_stale(db) == []
    assert fits == [5]
    assert fit_row(db).running_since is None


def test_a_new_rated_match_makes_the_next_refit_fit(
    db: Database, rated: list[int], fits: list[int]
):
    assert refit_game(db, "cactus", now=T0).status == "fitted"
    add_match(db, rated[:2], [1, 2], None)  # unrated: changes nothing
    assert refit_game(db, "cactus", now=T0 + dt.timedelta(seconds=1)).status == "unchanged"
    add_match(db, rated[:2], [2, 1], 6)
    assert refit_game(db, "cactus", now=T0 + dt.timedelta(seconds=2)) == ("fitted", 6)
    assert fits == [5, 6] and fit_row(db).rating_seq == 6


def test_a_crashed_claim_older_than_stale_after_is_taken_over(
    db: Database, rated: list[int], fits: list[int]
):
    with db.session() as session:  # a refit claims, and its worker dies
        assert _claim_refit(session, "cactus", T0, REFIT_STALE_AFTER)
    just_before = T0 + REFIT_STALE_AFTER - dt.timedelta(seconds=1)
    assert refit_game(db, "cactus", now=just_before).status == "running"
    after = T0 + REFIT_STALE_AFTER + dt.timedelta(seconds=1)
    assert refit_game(db, "cactus", now=after) == ("fitted", 5)
    assert fits == [5] and fit_row(db).running_since is None


def test_a_refit_that_outlived_its_claim_stores_nothing(db: Database, rated: list[int]):
    late = T0 + REFIT_STALE_AFTER + dt.timedelta(seconds=1)

    def slow_fit(history: Any) -> Any:  # another refit takes the claim over meanwhile
        with db.session() as session:
            assert _claim_refit(session, "cactus", late, REFIT_STALE_AFTER)
        return fit_ratings(history)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refits, "fit_ratings", slow_fit)
        assert refit_game(db, "cactus", now=T0).status == "taken over"
    assert stored_fit(db) == {}
    assert aware(fit_row(db).running_since) == late  # the other one's claim stays


def test_a_failed_fit_releases_its_claim(db: Database, rated: list[int], fits: list[int]):
    def broken(history: Any) -> Any:
        raise RuntimeError("the fit broke")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refits, "fit_ratings", broken)
        with pytest.raises(RuntimeError, match="the fit broke"):
            refit_game(db, "cactus", now=T0)
    row = fit_row(db)
    assert (row.running_since, row.rating_seq) == (None, None)
    assert refit_game(db, "cactus", now=T0 + dt.timedelta(seconds=1)).status == "fitted"
    assert fits == [5]


def test_rebuild_fits_whatever_the_history_and_records_its_rating_seq(
    db: Database, rated: list[int], fits: list[int]
):
    assert refit_game(db, "cactus", now=T0).status == "fitted"
    report = rebuild_ratings(db, "cactus")
    assert report["matches"] == 5 and fits == [5, 5]  # unconditionally
    assert fit_row(db).rating_seq == 5
    assert len(stored_fit(db)) == 4
    add_match(db, rated[1:3], [1, 2], 6)
    rebuild_ratings(db, "cactus")
    assert fit_row(db).rating_seq == 6
    assert refit_game(db, "cactus").status == "unchanged"  # the rebuild's fit is current
    assert fits == [5, 5, 6]


def test_refit_stale_refits_the_games_whose_history_changed(
    db: Database, rated: list[int], fits: list[int]
):
    add_match(db, rated[:3], [3, 2, 1], 6, game="president")
    assert refit_stale(db) == ["cactus", "president"]
    assert refit_stale(db) == []
    add_match(db, rated[:2], [1, 2], 7, game="president")
    assert refit_stale(db) == ["president"]
    assert fits == [5, 1, 2]
    assert {fit_row(db, g).rating_seq for g in ("cactus", "president")} == {5, 7}
