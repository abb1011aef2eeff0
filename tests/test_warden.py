"""Leases on matches and the warden's three duties (renew, adopt, send again), on a real
database without a broker: what the worker processes of the server tests rely on."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.db import Database
from arena.models import Bot, Match, MatchSeat, Tournament, utcnow
from arena.worker import lifecycle
from arena.worker.lifecycle import LOST_LEASE_ALERT, MAX_FAILURES
from arena.worker.play import claim
from arena.worker.warden import Warden

LEASE = dt.timedelta(seconds=15)


@pytest.fixture
def database(tmp_path: Path, migrated_database: Path) -> Iterator[Database]:
    path = tmp_path / "arena.sqlite3"
    shutil.copyfile(migrated_database, path)
    database = Database(f"sqlite:///{path}")
    with database.session() as session:
        session.add(
            Bot(
                id=1,
                name="b",
                endpoint="http://b",
                owner="o",
                owner_token_hash="h",
                signing_secret="s",
                games=["cactus"],
            )
        )
    yield database
    database.dispose()


def new_matches(database: Database, n: int, **fields) -> list[int]:
    with database.session() as session:
        matches = [Match(game="cactus", seed=i, **fields) for i in range(n)]
        for match in matches:
            match.seats = [MatchSeat(seat=0, bot_id=1)]
        session.add_all(matches)
        session.flush()
        return [m.id for m in matches]


def claim_now(database: Database, match_id: int, owner: str) -> str | None:
    now = utcnow()
    with database.session() as session:
        return claim(session, session.get(Match, match_id), owner, now + LEASE, now)


def lapse(database: Database, match_id: int) -> None:
    with database.session() as session:
        session.get(Match, match_id).lease_expires_at = utcnow() - dt.timedelta(seconds=1)


def row(database: Database, match_id: int) -> Match:
    with database.session() as session:
        return session.get(Match, match_id)


def test_a_live_lease_keeps_a_match_from_a_second_worker_and_a_lapsed_one_does_not(database):
    [match_id] = new_matches(database, 1)
    assert claim_now(database, match_id, "a") is None
    match = row(database, match_id)
    assert (match.status, match.attempts, match.lease_owner) == ("running", 1, "a")
    # a second delivery while worker a plays it: nothing to do
    assert claim_now(database, match_id, "b") == "running under a live lease"
    assert claim_now(database, match_id, "a") == "running under a live lease"
    lapse(database, match_id)  # worker a is gone
    assert claim_now(database, match_id, "b") is None
    match = row(database, match_id)
    assert (match.status, match.attempts, match.lease_owner) == ("running", 2, "b")


def test_a_finished_match_is_never_claimed_and_lost_leases_never_fail_a_match(database):
    [done, tired] = new_matches(database, 2)
    with database.session() as session:
        session.get(Match, done).status = "finished"
    assert claim_now(database, done, "a") == "already finished"
    # its workers keep dying: a lost lease is never the match's fault
    for attempt in range(1, LOST_LEASE_ALERT + 3):
        assert claim_now(database, tired, f"worker {attempt}") is None
        lapse(database, tired)
    match = row(database, tired)
    assert (match.status, match.attempts, match.failures) == ("running", LOST_LEASE_ALERT + 2, 0)
    assert match.lost_leases == LOST_LEASE_ALERT + 1
    assert "lost its worker" in match.error  # the operator is told


def test_a_match_fails_after_failures_of_its_own(database):
    [match_id] = new_matches(database, 1)
    with database.session() as session:
        tournament = Tournament(
            name="t", game="cactus", seats_per_match=1, games_per_pairing=1, seed=1
        )
        session.add(tournament)
        session.flush()
        session.get(Match, match_id).tournament_id = tournament.id
    for failure in range(1, MAX_FAILURES + 1):
        assert claim_now(database, match_id, "a") is None
        with database.session() as session:
            match = session.get(Match, match_id)
            lifecycle.fail(session, match, f"bug {failure}", pause_after=3, final=False)
    match = row(database, match_id)
    assert (match.status, match.failures, match.error) == ("failed", MAX_FAILURES, "bug 3")
    with database.session() as session:
        assert session.get(Tournament, match.tournament_id).status == "finished"


def warden(
    database: Database, played: list[int], sent: list[int], capacity: int = 4, lease: float = 15
) -> Warden:
    return Warden(
        database,
        lease_seconds=lease,
        capacity=capacity,
        claim=claim,
        play=played.append,
        enqueue=sent.extend,
    )


def test_renewing_pushes_the_lease_and_tells_a_match_taken_over_to_stop(database):
    mine, taken = new_matches(database, 2)
    w = warden(database, [], [])
    for match_id in (mine, taken):
        assert claim_now(database, match_id, w.owner) is None
    stops = {match_id: w.hold(match_id) for match_id in (mine, taken)}
    with database.session() as session:
        before = session.get(Match, mine).lease_expires_at
        session.get(Match, taken).lease_owner = "another worker"
    time.sleep(0.01)
    assert w.renew() == [taken]
    assert stops[taken].is_set() and not stops[mine].is_set()
    assert row(database, mine).lease_expires_at > before


def test_a_lapsed_match_is_adopted_once_and_played_here(database):
    lapsed, live, queued = new_matches(database, 3)
    for match_id in (lapsed, live):
        assert claim_now(database, match_id, "dead worker") is None
    lapse(database, lapsed)
    played: list[int] = []
    first, second = warden(database, played, []), warden(database, played, [])
    assert first.adopt() == [lapsed]
    assert second.adopt() == []  # the lease is first's now
    deadline = time.monotonic() + 5
    while not played and time.monotonic() < deadline:
        time.sleep(0.01)
    assert played == [lapsed]
    match = row(database, lapsed)
    assert (match.lease_owner, match.attempts) == (first.owner, 2)
    assert row(database, live).lease_owner == "dead worker"
    assert row(database, queued).status == "queued"


def test_queued_matches_nobody_received_are_sent_again_only_by_an_idle_worker(database):
    old = new_matches(database, 3, created_at=utcnow() - dt.timedelta(minutes=1))
    new_matches(database, 2)  # just created: their messages may be on their way
    sent: list[int] = []
    full = warden(database, [], sent, capacity=1, lease=1)
    [playing] = new_matches(database, 1)
    claim_now(database, playing, full.owner)
    full.hold(playing)  # its one slot is taken
    idle = warden(database, [], sent, capacity=1, lease=1)
    assert idle.resend() == []  # it has not had room for a whole round yet
    time.sleep(idle.interval + 0.05)
    assert full.resend() == []
    idle.delivered()  # the broker is still handing out messages: they may be among them
    assert idle.resend() == []
    time.sleep(idle.interval + 0.05)
    assert idle.resend() == old
    assert sent == old
    assert idle.resend() == []  # sent: not again before another lease has passed
