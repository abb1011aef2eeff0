"""A match whose worker dies is played again within a minute, exactly once, in every
lane and without ``arena beat``; a broker restart mid-tournament loses nothing.

Real worker processes killed with SIGKILL mid-match: a worker of the default pool (its
matches are threads of the one process), a prefork worker's child (the process playing
the match) and a prefork worker's parent.  Bots answer after a think time, so that a
match lasts several seconds and is killed while it is being played."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from arenabot import make_server
from sqlalchemy import func, select

from arena.app import create_app
from arena.match.records import check
from arena.models import Match, MatchSeat, RatingChange, Replay
from arena.worker.lifecycle import attempt_id
from arena.worker.queue import enqueue_matches
from arena.worker.refits import rebuild_ratings
from sample_bots.policy_bot import PolicyBot
from tests.support.lanes import Lane, lane, wait_for

RECOVERY = 60.0  # seconds from the kill to the match's result, at the default lease
THINK = 0.03  # seconds a bot takes per answer


FIRST_VIEWS: dict[tuple[str, int], dict[str, Any]] = {}  # (match id, seat): its first view


class SlowBot(PolicyBot):
    def on_act(self, request: dict[str, Any]) -> Any:
        FIRST_VIEWS.setdefault((request["match_id"], request["seat"]), request["view"])
        time.sleep(THINK)
        return super().on_act(request)


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=pytest.mark.xdist_group(f"recovery-{name}"))
        for name in ("embedded", "services", "rabbitmq")
    ],
)
def server(request, tmp_path_factory) -> Iterator[Lane]:
    with lane(request.param, tmp_path_factory.mktemp(request.param), workers=0) as the_lane:
        yield the_lane


@pytest.fixture(scope="module")
def api(server: Lane) -> Iterator[Any]:
    app = create_app(server.config)
    yield app.test_client()
    app.extensions["arena.db"].dispose()


@pytest.fixture(scope="module")
def bots(server: Lane, api: Any) -> Iterator[list[int]]:
    """Four slow bots over HTTP on loopback, registered through the API, signing on."""
    ids = []
    with ExitStack() as stack:
        for i, policy in enumerate(["heuristic", "random", "random", "random"]):
            bot = make_server(SlowBot("cactus", policy), "127.0.0.1", 0, secret=None)
            bot.serve_in_background()
            stack.callback(bot.close)
            answer = api.post(
                "/api/bots",
                json={"name": f"{server.name}-slow-{i}", "endpoint": bot.url, "owner": "tests"},
            )
            assert answer.status_code == 201, answer.json
            bot.secret = answer.json["signing_secret"]
            ids.append(answer.json["id"])
        yield ids


@pytest.fixture(autouse=True)
def own_workers(server: Lane) -> Iterator[None]:
    """Each test starts the workers it needs; they are gone when it ends."""
    yield
    server.stop_workers()


def new_match(server: Lane, bots: list[int], seed: int) -> int:
    with server.db.session() as s:
        match = Match(game="cactus", kind="ladder", options={}, seed=seed)
        match.seats = [MatchSeat(seat=k, bot_id=b) for k, b in enumerate(bots[:2])]
        s.add(match)
        s.flush()
        return match.id


def claimed_by(server: Lane, match_id: int) -> int:
    """Wait until the match is being played; the pid of the process playing it."""
    owner: list[str] = []

    def claimed() -> bool:
        with server.db.session() as s:
            lease = s.scalar(select(Match.lease_owner).where(Match.id == match_id))
        owner[:] = [lease] if lease else []
        return bool(owner)

    wait_for(claimed, timeout=60, what="a worker claiming the match")
    time.sleep(1.0)  # some decisions in: the kill lands mid-match
    return int(owner[0].split(":")[1])


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def kill(pid: int) -> float:
    os.kill(pid, signal.SIGKILL)
    return time.monotonic()


def finished_once(server: Lane, match_ids: list[int], killed_at: float | None = None) -> None:
    """Every match finished (within RECOVERY of the kill), recorded exactly once, its
    replay re-simulating, and the ratings equal to a rebuild from the history."""

    def done() -> bool:
        with server.db.session() as s:
            statuses = s.scalars(select(Match.status).where(Match.id.in_(match_ids))).all()
        return all(status == "finished" for status in statuses)

    timeout = RECOVERY - (time.monotonic() - killed_at) if killed_at is not None else 240
    wait_for(done, timeout=timeout, what="the match that lost its worker")
    with server.db.session() as s:
        for match_id in match_ids:
            assert s.scalar(select(func.count()).where(Replay.match_id == match_id)) == 1
            seats = s.scalar(select(func.count()).where(MatchSeat.match_id == match_id))
            changes = s.scalar(select(func.count()).where(RatingChange.match_id == match_id))
            assert changes == seats
            assert s.get(Match, match_id).rating_seq is not None
            assert check(s.get(Replay, match_id).record) == []
    assert rebuild_ratings(server.db, "cactus")["differences"] == {}


def test_a_worker_killed_mid_match_has_its_match_played_again(server, bots):
    victim = server.start_worker()
    match_id = new_match(server, bots, seed=101)
    enqueue_matches(server.config, [match_id])
    pid = claimed_by(server, match_id)
    assert pid == victim.pid  # the default pool plays its matches in the worker itself
    server.start_worker()  # the rest of the fleet
    killed_at = kill(pid)
    finished_once(server, [match_id], killed_at)
    with server.db.session() as s:
        assert s.get(Match, match_id).attempts == 2


def test_a_prefork_child_killed_mid_match_has_its_match_played_again(server, bots):
    worker = server.start_worker("--pool=prefork", "--concurrency=1")
    match_id = new_match(server, bots, seed=102)
    enqueue_matches(server.config, [match_id])
    pid = claimed_by(server, match_id)
    assert pid != worker.pid and parent_of(pid) == worker.pid  # a child plays it
    killed_at = kill(pid)  # the parent replaces the child; nobody else is needed
    finished_once(server, [match_id], killed_at)


def test_a_prefork_parent_killed_mid_match_loses_nothing(server, bots):
    worker = server.start_worker("--pool=prefork", "--concurrency=1")
    match_id = new_match(server, bots, seed=103)
    enqueue_matches(server.config, [match_id])
    child = claimed_by(server, match_id)
    server.start_worker()
    killed_at = kill(worker.pid)
    try:
        finished_once(server, [match_id], killed_at)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)  # an orphan left playing, if any


def test_a_broker_restart_mid_tournament_loses_nothing(server, api, bots):
    for _ in range(2):
        server.start_worker("--concurrency=2")  # most matches wait in the broker
    answer = api.post(
        "/api/tournaments",
        json={
            "name": "restart",
            "game": "cactus",
            "bot_ids": bots,
            "seats_per_match": 2,
            "games_per_pairing": 2,
            "seed": 7,
        },
    )
    assert answer.status_code == 201, answer.json
    tid = answer.json["id"]
    with server.db.session() as s:
        match_ids = list(s.scalars(select(Match.id).where(Match.tournament_id == tid)))
    assert len(match_ids) == 12

    def some_finished() -> bool:
        return api.get(f"/api/tournaments/{tid}").json["progress"]["finished"] >= 2

    wait_for(some_finished, timeout=120, what="the first matches")
    progress = api.get(f"/api/tournaments/{tid}").json["progress"]
    assert progress["queued"] > 0  # messages were waiting in the broker
    server.restart_broker()
    finished_once(server, match_ids)
    assert api.get(f"/api/tournaments/{tid}").json["status"] == "finished"


def test_four_kills_in_a_row_lose_no_match_and_each_attempt_is_a_new_deal(server, bots):
    """The worker holding the matches is killed four times in a row, each time once every
    match's bots have seen its deal: no match fails (a lost lease is not the match's
    fault), each is recorded once, and no attempt deals what an earlier one showed."""
    quick = {"ARENA_LEASE_SECONDS": "4"}  # recovery in seconds, not the default 20
    FIRST_VIEWS.clear()  # another lane's matches had the same ids
    match_ids = [new_match(server, bots, seed=300 + i) for i in range(4)]
    worker = server.start_worker(env=quick)
    enqueue_matches(server.config, match_ids)
    for attempt in range(1, 5):
        ids = {m: attempt_id(m, attempt) for m in match_ids}

        def dealt(ids: dict[int, str] = ids) -> bool:  # every match's bots have a view
            return all((bots_id, 0) in FIRST_VIEWS for bots_id in ids.values())

        wait_for(dealt, timeout=60, what=f"attempt {attempt} of every match")
        with server.db.session() as s:
            owners = set(s.scalars(select(Match.lease_owner).where(Match.id.in_(match_ids))))
        assert {int(o.split(":")[1]) for o in owners} == {worker.pid}
        kill(worker.pid)
        worker = server.start_worker(env=quick)
    finished_once(server, match_ids)
    with server.db.session() as s:
        for match_id in match_ids:
            match = s.get(Match, match_id)
            assert (match.attempts, match.lost_leases, match.failures) == (5, 4, 0)
    for match_id in match_ids:
        for seat in range(2):
            views = [FIRST_VIEWS.get((attempt_id(match_id, a), seat)) for a in range(1, 6)]
            assert None not in views
            assert all(a != b for a, b in itertools.combinations(views, 2))
