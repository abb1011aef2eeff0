"""The arena across hosts, and what a network partition or a frozen process does to it.

Five hosts on one machine (``tests.support.across``): ``web`` runs ``arena serve``, ``w1``
and ``w2`` an ``arena worker`` each, ``bots`` five policy bots behind a relay adding 25 ms
each way, ``db`` a PostgreSQL and a Redis of their own; the production profile, the bots'
private network allowed.  Every test plays a rated 4-seat Cactus round robin and checks
what a user relies on: every match recorded exactly once, the stored ratings equal to
their rebuild from the history, no result recorded by a worker whose lease had lapsed
(``recorded_results``: a trigger on the database host notes each result's lease and
commit time), and no bot charged a strike or forfeit for a fault of the arena's own.

The faults: ``w1`` cut off from every host for 60 s mid-match; ``w1`` frozen (SIGSTOP)
while it holds a result's transaction; ``w1`` cut off from the database only, then from
the broker only.  A cut drops packets on arrival at both ends: nothing, not even a FIN
or RST, crosses, as in a real partition.

It needs root, ``ip``, ``iptables``, ``redis-server`` and PostgreSQL's server programs:
on CI (``CI`` set) a missing one fails the test; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator

import pytest

from tests.support import across, hosts

pytestmark = pytest.mark.xdist_group("across-hosts")

CUT = 60.0  # seconds w1 is cut off from everything
LINK_CUT = 25.0  # seconds w1 is cut off from the database, then the broker: over a lease
TAKEN_OVER = 60.0  # seconds from the cut to the results of the cut worker's matches
FROZEN_RESULT = 20.0  # seconds w1 stays frozen; another worker records meanwhile
BACK = 90.0  # seconds after a heal within which w1 uses the database and the broker again


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[across.Arena]:
    """The hosts and the arena on them, shared by the module's tests: each plays a
    tournament of its own, and leaves no fault behind (its cut healed, w1 resumed)."""
    reason = hosts.missing()
    if reason is not None:
        reason = f"{reason}: the test across hosts needs it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with across.arena(tmp_path_factory.mktemp("across")) as the_arena:
        yield the_arena


def _start(arena: across.Arena, name: str, seed: int) -> tuple[int, dt.datetime]:
    """A tournament of 20 matches (10 for each worker at once); its id and start."""
    for worker in ("w1", "w2"):  # an earlier test's fault is over
        assert arena.answers(worker, timeout=BACK), f"{worker} does not answer on the broker"
    since = arena.now()
    return arena.tournament(name, games_per_pairing=4, seed=seed), since


def _wait_running(arena: across.Arena, worker: str, tournament_id: int) -> None:
    """Until the worker plays matches of the tournament, a few seconds into them."""
    deadline = time.monotonic() + 60
    while not arena.running_on(worker, tournament_id):
        assert time.monotonic() < deadline, f"{worker} plays no match of the tournament"
        time.sleep(0.2)
    time.sleep(3)  # mid-match: the bots have been asked, nothing is recorded yet


def _wait_back(arena: across.Arena, worker: str, healed_at: dt.datetime, what: str) -> None:
    """Until the worker uses the database and answers on the broker again, and then a
    few seconds: whatever it still had to write has been tried."""
    assert arena.back(worker, healed_at, BACK), f"{worker} is not back {BACK:.0f}s after {what}"
    time.sleep(5)


def _check_recorded(arena: across.Arena, tournament_id: int, since: dt.datetime) -> None:
    """Every match of the tournament recorded exactly once, each while its recorder held
    the lease; ratings equal to their rebuild; no bot charged for the arena's faults."""
    statuses = arena.statuses(tournament_id)
    assert statuses == {"finished": 20}, statuses
    results = [r for r in arena.results(since) if r["match"] in _ids(arena, tournament_id)]
    per_match: dict[int, int] = {}
    for r in results:
        per_match[r["match"]] = per_match.get(r["match"], 0) + 1
    assert sorted(per_match) == _ids(arena, tournament_id)
    assert set(per_match.values()) == {1}, per_match
    without = [r for r in results if r["lease"] is None or r["at"] > r["lease"]]
    assert without == [], f"results recorded without the lease: {without}"
    changes = arena.sql(
        "SELECT count(*) FROM rating_changes c JOIN matches m ON m.id = c.match_id "
        "WHERE m.tournament_id = %s",
        tournament_id,
    )[0][0]
    assert changes == 20 * 4
    assert arena.rebuild_differences() == {}
    assert arena.all_seat_faults([tournament_id]) == []
    assert arena.charged() == []


def _ids(arena: across.Arena, tournament_id: int) -> list[int]:
    rows = arena.sql("SELECT id FROM matches WHERE tournament_id = %s ORDER BY id", tournament_id)
    return [r[0] for r in rows]


def test_a_tournament_across_hosts_records_every_match_once(arena: across.Arena) -> None:
    since = arena.now()
    tid = arena.tournament("across hosts", games_per_pairing=8, seed=1)
    arena.wait_finished(tid, timeout=240)
    assert arena.statuses(tid) == {"finished": 40}
    results = [r for r in arena.results(since) if r["match"] in _ids(arena, tid)]
    assert len(results) == 40 == len({r["match"] for r in results})
    assert {r["host"] for r in results} == {"w1", "w2"}  # both workers played
    assert [r for r in results if r["at"] > r["lease"]] == []
    assert arena.rebuild_differences() == {}
    assert arena.all_seat_faults([tid]) == []
    assert arena.charged() == []


def test_a_worker_cut_off_from_every_host_loses_its_matches_and_records_nothing(
    arena: across.Arena,
) -> None:
    tid, since = _start(arena, "w1 cut off", seed=2)
    _wait_running(arena, "w1", tid)
    in_hand = arena.running_on("w1", tid)
    cut_at = arena.now()
    arena.net["w1"].cut()
    try:
        time.sleep(CUT)
    finally:
        arena.net["w1"].heal()
    healed_at = arena.now()
    arena.wait_finished(tid, timeout=120)
    results = {r["match"]: r for r in arena.results(since)}
    during = [r for r in results.values() if cut_at <= r["at"] <= healed_at]
    assert [r for r in during if r["host"] != "w2"] == []
    assert during, "w2 recorded nothing while w1 was cut off"
    # w1's matches were finished by w2, within a minute of the cut
    for match_id in in_hand:
        taken = results[match_id]
        assert taken["host"] == "w2", taken
        assert (taken["at"] - cut_at).total_seconds() < TAKEN_OVER, taken
    # back on the network, w1 records none of the matches it had in hand
    _wait_back(arena, "w1", healed_at, "the cut")
    results = {r["match"]: r for r in arena.results(since)}
    assert [r for r in results.values() if r["host"] == "w1" and r["at"] >= cut_at] == []
    _check_recorded(arena, tid, since)


def test_a_worker_frozen_in_a_result_transaction_holds_no_one_up(arena: across.Arena) -> None:
    tid, since = _start(arena, "w1 frozen", seed=3)
    backend = _freeze_in_result(arena, "w1", tid)
    frozen_at = arena.now()
    try:
        # frozen longer than a lease: the result it holds must not be recorded after it
        time.sleep(FROZEN_RESULT)
        state = arena.backend_state(backend)
        recorded = [r for r in arena.results(frozen_at) if r["host"] == "w2"]
    finally:
        arena.thaw("w1")
    assert recorded, (
        f"w2 recorded no result within {FROZEN_RESULT:.0f}s of w1 freezing in a result's "
        f"transaction (w1's backend: {state})"
    )
    arena.wait_finished(tid, timeout=150)
    _check_recorded(arena, tid, since)


def _freeze_in_result(arena: across.Arena, worker: str, tournament_id: int) -> int:
    """SIGSTOP the worker while one of its backends is in a result's transaction and
    waits on the worker ('idle in transaction'); that backend's pid."""

    def freeze() -> bool:
        arena.freeze(worker)
        time.sleep(0.2)  # what was on the wire arrives
        for pid in arena.in_result(conn, worker, shared_only=False):
            if arena.backend_state(pid) == "idle in transaction":
                return True
        arena.thaw(worker)  # it committed in between: the next result
        return False

    import psycopg

    with psycopg.connect(arena.pg.dsn, autocommit=True) as conn:
        return arena.catch_in_result(worker, tournament_id, freeze)


@pytest.mark.parametrize(
    ("link", "port"), [("database", hosts.PG_PORT), ("broker", hosts.REDIS_PORT)]
)
def test_a_worker_cut_off_from_one_service_records_nothing_without_its_lease(
    arena: across.Arena, link: str, port: int
) -> None:
    tid, since = _start(arena, f"w1 cut off from the {link}", seed=4 + port)
    if link == "database":  # inside a result's transaction: its locks stay behind

        def cut() -> bool:
            arena.net["w1"].cut(arena.net["db"], port)
            return True

        arena.catch_in_result("w1", tid, cut)
    else:
        _wait_running(arena, "w1", tid)
        arena.net["w1"].cut(arena.net["db"], port)
    cut_at = arena.now()
    in_hand = arena.running_on("w1", tid)
    try:
        time.sleep(LINK_CUT)
    finally:
        arena.net["w1"].heal()
    healed_at = arena.now()
    arena.wait_finished(tid, timeout=150)
    _wait_back(arena, "w1", healed_at, f"the {link} cut")
    if link == "database":  # the leases it held lapsed: none of those attempts is recorded
        # (back on the network, w1 may claim a lapsed match again, as a new attempt, and
        # record that one: it then holds the lease)
        late = [
            r
            for r in arena.results(cut_at)
            if r["host"] == "w1" and in_hand.get(r["match"]) == r["attempt"]
        ]
        assert late == [], f"w1 recorded the matches it had in hand after the cut: {late}"
    _check_recorded(arena, tid, since)
