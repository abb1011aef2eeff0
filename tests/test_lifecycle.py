"""The life of a match row (``arena.worker.lifecycle``) on a real database, without a broker:
a match claimed again is dealt anew, a duplicate deal is dealt again as a whole, its
rotations are settled together, and a result is recorded only by the attempt that holds
the match.  On SQLite and PostgreSQL (row locks, ``RETURNING``)."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from arena import services
from arena.db import Database
from arena.games import make_policy
from arena.match.records import check
from arena.match.referee import MatchRecord, PolicyClient, Referee, policy_rng
from arena.models import (
    Bot,
    BotPin,
    BotSession,
    Ladder,
    Match,
    MatchSeat,
    RatingChange,
    Replay,
    Tournament,
    TournamentEntry,
    utcnow,
)
from arena.relay import sessions
from arena.worker import lifecycle
from arena.worker.lifecycle import Ended, Plan, attempt_id, redeal_seed
from tests.support.lanes import postgres_url

LEASE = dt.timedelta(seconds=15)
SEATS = 3


@pytest.fixture(params=["sqlite", "postgresql"])
def db(
    request: pytest.FixtureRequest, tmp_path: Path, migrated_database: Path
) -> Iterator[Database]:
    if request.param == "sqlite":
        path = tmp_path / "arena.sqlite3"
        shutil.copyfile(migrated_database, path)
        database = Database(f"sqlite:///{path}")
        yield database
        database.dispose()
        return
    with postgres_url() as url:
        database = Database(url)
        database.upgrade()
        yield database
        database.dispose()


def add_bots(db: Database, n: int) -> list[int]:
    with db.session() as session:
        bots = [
            Bot(
                name=f"bot{i}",
                endpoint=f"http://127.0.0.1:9/{i}",
                owner="tests",
                owner_token_hash=f"h{i}",
                signing_secret="s" * 16,
                games=["cactus"],
            )
            for i in range(n)
        ]
        session.add_all(bots)
        session.flush()
        return [b.id for b in bots]


def single_match(db: Database, bots: list[int], seed: int) -> int:
    with db.session() as session:
        match = Match(game="cactus", kind="ladder", seed=seed)
        match.seats = [MatchSeat(seat=k, bot_id=b) for k, b in enumerate(bots)]
        session.add(match)
        session.flush()
        return match.id


def duplicate_deal(db: Database, bots: list[int], seed: int = 77) -> tuple[int, list[int]]:
    """A tournament of one duplicate deal: its rotations, in schedule order."""
    with db.session() as session:
        tournament = Tournament(
            name="dup", game="cactus", seats_per_match=SEATS, deal="duplicate", seed=1
        )
        session.add(tournament)
        session.flush()
        session.add_all(TournamentEntry(tournament_id=tournament.id, bot_id=b) for b in bots)
        rotations = []
        for k in range(SEATS):
            match = Match(tournament_id=tournament.id, game="cactus", seed=seed, deal=0)
            seated = bots[k:] + bots[:k]
            match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(seated)]
            rotations.append(match)
        session.add_all(rotations)
        session.flush()
        return tournament.id, [m.id for m in rotations]


def claim(db: Database, match_id: int, owner: str, sent: list[int] | None = None) -> Plan:
    now = utcnow()
    with db.session() as session:
        match = session.get(Match, match_id, with_for_update=True)
        refused = lifecycle.claim(
            session, match, owner, now + LEASE, now, enqueue=None if sent is None else sent.extend
        )
        assert refused is None, refused
        for seat in match.seats:
            session.refresh(seat, ["bot"])
        return lifecycle.plan(match)


def lapse(db: Database, match_id: int) -> None:
    with db.session() as session:
        session.get(Match, match_id).lease_expires_at = utcnow() - dt.timedelta(seconds=1)


def play(plan: Plan) -> MatchRecord:
    """The attempt played by random policies, with the match id its bots are given."""
    clients = [
        PolicyClient(make_policy(plan.game, "random", policy_rng(plan.seed, k)), name=s.name)
        for k, s in enumerate(plan.seats)
    ]
    return Referee().run(plan.game, clients, plan.seed, plan.options, plan.bots_match_id)


def record(db: Database, match_id: int, result: MatchRecord, claimed: tuple[str, int]) -> bool:
    with db.session() as session:
        match = session.get(Match, match_id, with_for_update=True)
        return lifecycle.finish(session, match, result, 3, claimed) is not Ended.REFUSED


def row(db: Database, match_id: int) -> Match:
    with db.session() as session:
        return session.get(Match, match_id)


def rating_changes(db: Database, match_id: int) -> int:
    with db.session() as session:
        return session.scalar(select(func.count()).where(RatingChange.match_id == match_id))


def entries(db: Database, tournament_id: int) -> dict[int, tuple[int, int]]:
    """Per bot: (matches, complete deals) in the standings."""
    with db.session() as session:
        rows = session.scalars(
            select(TournamentEntry).where(TournamentEntry.tournament_id == tournament_id)
        )
        return {e.bot_id: (e.matches, e.deals) for e in rows}


def test_a_match_claimed_again_is_dealt_anew_and_its_bots_told_apart(db):
    bots = add_bots(db, 2)
    match_id = single_match(db, bots, seed=5)
    first = claim(db, match_id, "worker a")
    assert (first.seed, first.attempt, first.bots_match_id) == (5, 1, str(match_id))
    lapse(db, match_id)  # worker a is gone
    second = claim(db, match_id, "worker b")
    assert second.seed == redeal_seed(5, 2) != 5
    assert second.bots_match_id == attempt_id(match_id, 2) == f"{match_id}.2"
    match = row(db, match_id)
    assert (match.attempts, match.lost_leases, match.failures) == (2, 1, 0)
    # the first attempt's deal is never shown again: the bots' first views differ
    assert play(first).events[:8] != play(second).events[:8]
    # worker a comes back with a result: not its match any more
    assert not record(db, match_id, play(first), ("worker a", 1))
    done = play(second)
    assert record(db, match_id, done, ("worker b", 2))
    with db.session() as session:
        match = session.get(Match, match_id)
        stored = session.get(Replay, match_id).record
        assert match.status == "finished" and match.settled and match.seed == stored["seed"]
    assert stored["match_id"] == f"{match_id}.2"
    assert check(stored) == []  # the replay re-simulates from the seed it was dealt
    assert rating_changes(db, match_id) == 2


def test_a_worker_of_the_same_process_holding_an_old_attempt_records_nothing(db):
    bots = add_bots(db, 2)
    match_id = single_match(db, bots, seed=6)
    first = claim(db, match_id, "worker a")
    lapse(db, match_id)  # frozen past its lease: its own warden adopts the match again
    second = claim(db, match_id, "worker a")
    assert not record(db, match_id, play(first), ("worker a", first.attempt))
    assert record(db, match_id, play(second), ("worker a", second.attempt))


def test_the_rotations_of_a_deal_are_settled_together_once_the_last_one_ends(db):
    bots = add_bots(db, SEATS)
    tournament_id, rotations = duplicate_deal(db, bots)
    for n, match_id in enumerate(rotations):
        plan = claim(db, match_id, f"worker {n}")
        assert record(db, match_id, play(plan), (f"worker {n}", plan.attempt))
        settled = n == SEATS - 1
        assert [rating_changes(db, m) for m in rotations[: n + 1]] == [SEATS * settled] * (n + 1)
        assert entries(db, tournament_id) == dict.fromkeys(bots, (SEATS, 1) if settled else (0, 0))
    with db.session() as session:
        seqs = [session.get(Match, m).rating_seq for m in rotations]
        assert seqs == sorted(seqs)  # rated in schedule order
        assert session.get(Tournament, tournament_id).status == "finished"


def test_a_rotation_dealt_anew_takes_its_whole_deal_with_it(db):
    bots = add_bots(db, SEATS)
    tournament_id, (done, playing, abandoned) = duplicate_deal(db, bots, seed=77)
    plan = claim(db, done, "worker 0")
    assert record(db, done, play(plan), ("worker 0", 1))  # finished, waiting for its deal
    late = claim(db, playing, "worker 1")  # running under a live lease
    claim(db, abandoned, "worker 2")
    lapse(db, abandoned)  # worker 2 died mid-match: its bots saw deal 77
    sent: list[int] = []
    again = claim(db, abandoned, "worker 3", sent)
    assert again.seed == redeal_seed(77, 2)
    assert sent == [done, playing]  # queued again once the claim committed
    with db.session() as session:
        for match_id in (done, playing):
            match = session.get(Match, match_id)
            assert (match.status, match.seed, match.lease_owner) == ("queued", again.seed, None)
            assert not match.dealt and match.result is None
            assert all(s.rank is None and s.strikes == 0 for s in match.seats)
        assert session.get(Replay, done) is None  # never settled, never published: discarded
    assert rating_changes(db, done) == 0
    # worker 1 finishes the old deal before it notices: nothing is recorded
    assert not record(db, playing, play(late), ("worker 1", 1))
    # every rotation plays the new deal once, then the deal counts once
    for n, match_id in enumerate((done, playing), start=4):
        plan = claim(db, match_id, f"worker {n}")
        assert plan.seed == again.seed  # not dealt anew: nobody saw this deal yet
        assert record(db, match_id, play(plan), (f"worker {n}", plan.attempt))
    assert entries(db, tournament_id) == dict.fromkeys(bots, (0, 0))  # one rotation is left
    assert record(db, abandoned, play(again), ("worker 3", again.attempt))
    assert entries(db, tournament_id) == dict.fromkeys(bots, (SEATS, 1))
    with db.session() as session:
        records = [session.get(Replay, m).record for m in (done, playing, abandoned)]
    assert {r["seed"] for r in records} == {again.seed}
    assert all(check(r) == [] for r in records)


def test_cancelling_settles_the_rotations_that_waited_for_a_cancelled_one(db):
    bots = add_bots(db, SEATS)
    tournament_id, (done, *_) = duplicate_deal(db, bots)
    plan = claim(db, done, "worker 0")
    assert record(db, done, play(plan), ("worker 0", 1))
    assert rating_changes(db, done) == 0
    with db.session() as session:
        services.cancel_tournament(session, session.get(Tournament, tournament_id))
    assert rating_changes(db, done) == SEATS  # it counts, as a running one would
    assert entries(db, tournament_id) == dict.fromkeys(bots, (1, 0))  # not a whole deal
    with db.session() as session:
        statuses = sorted(session.scalars(select(Match.status)).all())
        assert statuses == ["cancelled", "cancelled", "finished"]
        assert session.get(Tournament, tournament_id).status == "cancelled"


def test_a_failed_rotation_settles_the_rest(db):
    bots = add_bots(db, SEATS)
    tournament_id, (done, failing, last) = duplicate_deal(db, bots)
    for match_id in (done, last):
        plan = claim(db, match_id, "worker")
        assert record(db, match_id, play(plan), ("worker", plan.attempt))
    assert rating_changes(db, done) == rating_changes(db, last) == 0
    claim(db, failing, "worker")
    with db.session() as session:
        lifecycle.fail(session, session.get(Match, failing), "bug", 3, final=True)
    assert rating_changes(db, done) == rating_changes(db, last) == SEATS
    with db.session() as session:
        assert session.get(Tournament, tournament_id).status == "finished"


def test_a_bot_that_declares_its_capacity_is_played_by_one_worker_at_a_time(db):
    bots = add_bots(db, 3)
    with db.session() as session:
        session.get(Bot, bots[0]).info = {"capacity": 1}  # one request at a time
    first, second, third = (
        single_match(db, [bots[a], bots[b]], seed=9) for a, b in ((0, 1), (0, 2), (1, 2))
    )
    claim(db, first, "worker a")
    now = utcnow()
    with db.session() as session:  # bot 0 plays in worker a: not in worker b for now
        match = session.get(Match, second, with_for_update=True)
        assert lifecycle.claim(session, match, "worker b", now + LEASE, now) == lifecycle.BUSY
    match = row(db, second)
    assert (match.status, match.attempts, match.dealt) == ("queued", 0, False)  # untouched
    claim(db, third, "worker b")  # bots that declare nothing are anybody's
    claim(db, second, "worker a")  # worker a sends all of bot 0's requests
    with db.session() as session:
        lifecycle.unpin_idle(session, "worker a", bots)
        assert session.get(BotPin, bots[0]).owner == "worker a"  # still playing it
        for match_id in (first, second):
            session.get(Match, match_id).status = "finished"
        lifecycle.unpin_idle(session, "worker a", bots)
    with db.session() as session:
        assert session.get(BotPin, bots[0]).owner is None
    fourth = single_match(db, [bots[0], bots[2]], seed=10)
    claim(db, fourth, "worker b")  # let go: another worker plays it at once
    fifth = single_match(db, [bots[0], bots[1]], seed=11)
    with db.session() as session:
        session.get(BotPin, bots[0]).expires_at = utcnow() - dt.timedelta(seconds=1)
    claim(db, fifth, "worker c")  # worker b died: its pin lapsed with its lease


def test_a_connect_bot_that_drained_has_no_new_match_until_it_connects_again(db):
    """A bot stopped with Ctrl-C drains its session: its queued matches wait (BUSY) until
    it opens a new session, instead of being played on defaults while it is gone."""
    bots = add_bots(db, 2)
    with db.session() as session:
        laptop = session.get(Bot, bots[0])
        laptop.endpoint = None  # it connects out
        laptop.info = {"capacity": 2}  # what it declared as it connected
        sessions.open_session(session, laptop.id, "http://127.0.0.1:1", {"capacity": 2})
    match_id = single_match(db, bots, seed=12)
    with db.session() as session:
        session.get(BotSession, bots[0]).draining = True
    now = utcnow()
    with db.session() as session:
        match = session.get(Match, match_id, with_for_update=True)
        assert lifecycle.claim(session, match, "worker a", now + LEASE, now) == lifecycle.BUSY
    assert (row(db, match_id).status, row(db, match_id).attempts) == ("queued", 0)
    with db.session() as session:  # back: a new session is not draining
        sessions.open_session(session, bots[0], "http://127.0.0.1:1", {"capacity": 2})
    plan = claim(db, match_id, "worker a")
    assert [s.endpoint for s in plan.seats] == [None, "http://127.0.0.1:9/1"]
    assert [s.bot_id for s in plan.seats] == bots
    assert plan.seats[0].capacity == 2


def test_the_ladder_seats_a_connect_bot_only_while_it_is_connected(db, enqueued, tmp_path):
    from arena.config import from_env
    from arena.worker import ladder

    bots = add_bots(db, 5)
    hooks, laptops = bots[:2], bots[2:]
    with db.session() as session:
        for bot_id in laptops:
            session.get(Bot, bot_id).endpoint = None
        online, drained, _never = laptops
        sessions.open_session(session, online, "http://127.0.0.1:1", {})
        sessions.open_session(session, drained, "http://127.0.0.1:1", {})
        session.get(BotSession, drained).draining = True  # stopped with Ctrl-C
        session.add(Ladder(game="cactus", enabled=True, seats_per_match=3))
    created = ladder.schedule_ladder(db, from_env({"ARENA_DATA_DIR": str(tmp_path)}), seed=1)
    assert created == enqueued and len(created) == 1
    with db.session() as session:
        seats = select(MatchSeat.bot_id).where(MatchSeat.match_id == created[0])
        seated = set(session.scalars(seats))
    assert seated == {*hooks, online}
