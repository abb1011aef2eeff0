"""What a partition costs the arena across hosts: the figures of tests/test_across_hosts.py.

    sudo python benchmarks/across_hosts.py [--repeat 3] [--cut 60] [--fault-free-games 8]
        [--cut-games 4] [--smoke]

The hosts of ``tests.support.across`` (web, two workers, bots behind a 25 ms relay, a
PostgreSQL and a Redis of their own), built afresh for each run.  A run:

1. a fault-free rated tournament of 40 four-seat Cactus matches (``--fault-free-games``
   per table of the five bots, a multiple of 4) on both workers: its time, and the lease
   renewals that took over a second (PostgreSQL's log of statements of 1 s or more on
   the database host);
2. a tournament of 20 (``--cut-games`` per table) in which ``w1`` is cut off from every
   host (packets dropped at both ends) at the moment it holds a result's transaction, for
   ``--cut`` seconds:
   - the longest pause in recorded results, from the cut until the tournament is over;
   - the longest lease renewal logged meanwhile (0: none took a second);
   - recovery: seconds from the cut until the last match ``w1`` had in hand is recorded;
   - zombie writes: results recorded by ``w1`` after the cut for matches it had in hand;
   - results recorded without the lease (committed after the lease they were claimed
     under had lapsed), over the whole run, and of those the ones whose transaction
     began after it lapsed;
   - matches recorded in which every seat faulted (the bots unreachable from the cut
     worker: a fault of the arena's, charged to the bots).

Printed per run, then min / median / max of each figure over ``--repeat`` runs.  It needs
root and the programs ``tests.support.hosts.missing`` names.  ``--smoke``: one run, a
fault-free tournament of 20 matches, w1 cut off for 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from tests.support import across, hosts

FIGURES = [
    ("fault-free tournament (s)", "fault_free_seconds"),
    ("fault-free renewals over 1 s", "slow_renewals"),
    ("longest pause in results, w1 cut in a result (s)", "pause"),
    ("longest lease renewal meanwhile (s)", "longest_renewal"),
    ("recovery of w1's matches (s)", "recovery"),
    ("zombie writes", "zombies"),
    ("results committed after their lease lapsed", "without_lease"),
    ("  of which begun after it lapsed", "begun_without_lease"),
    ("matches recorded with every seat faulted", "all_faulted"),
]


def _cut_in_result(arena: across.Arena, tournament_id: int) -> list[int]:
    """Cut w1 off as soon as it is inside a result's transaction; the matches it had in
    hand then."""

    def cut() -> bool:
        arena.net["w1"].cut()
        return True

    arena.catch_in_result("w1", tournament_id, cut)
    return list(arena.running_on("w1", tournament_id))


def run_once(cut: float, fault_free_games: int, cut_games: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="arena-across-"))
    figures: dict[str, float] = {}
    with across.arena(folder) as arena:
        begin = arena.now()
        tid = arena.tournament("fault-free", games_per_pairing=fault_free_games, seed=11)
        figures["fault_free_seconds"] = arena.wait_finished(tid, timeout=600)
        figures["slow_renewals"] = len(arena.slow_renewals(begin))

        tid = arena.tournament("w1 cut in a result", games_per_pairing=cut_games, seed=12)
        since = arena.now()
        in_hand = _cut_in_result(arena, tid)
        cut_at = arena.now()
        try:
            time.sleep(cut)
        finally:
            arena.net["w1"].heal()
        arena.wait_finished(tid, timeout=900)
        end = arena.now()
        results = arena.results(since)
        figures["pause"] = across.longest_pause(results, cut_at, end)
        renewals = [ms for _, ms in arena.slow_renewals(cut_at)]
        figures["longest_renewal"] = max(renewals, default=0.0) / 1000
        by_match = {r["match"]: r for r in results}
        figures["recovery"] = max(
            ((by_match[m]["at"] - cut_at).total_seconds() for m in in_hand if m in by_match),
            default=0.0,
        )
        figures["zombies"] = sum(
            1 for r in results if r["match"] in in_hand and r["host"] == "w1" and r["at"] >= cut_at
        )
        everything = arena.results(begin)
        figures["without_lease"] = sum(
            1 for r in everything if r["lease"] is None or r["at"] > r["lease"]
        )
        figures["begun_without_lease"] = sum(
            1 for r in everything if r["lease"] is None or r["began"] > r["lease"]
        )
        figures["all_faulted"] = len(arena.all_seat_faults([tid]))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cut", type=float, default=60.0, help="seconds w1 is cut off")
    parser.add_argument(
        "--fault-free-games", type=int, default=8, help="games per table, fault-free tournament"
    )
    parser.add_argument(
        "--cut-games", type=int, default=4, help="games per table, the tournament w1 is cut in"
    )
    args = parse_args(
        parser, smoke={"repeat": 1, "cut": 1.0, "fault_free_games": 4, "cut_games": 4}
    )
    print_versions("celery", "redis", "psycopg")
    reason = hosts.missing()
    if reason is not None:
        print(f"across_hosts: needs {reason}", file=sys.stderr)
        return 2
    runs: list[dict[str, Any]] = []
    for i in range(args.repeat):
        figures = run_once(args.cut, args.fault_free_games, args.cut_games)
        runs.append(figures)
        print(f"run {i + 1}: " + ", ".join(f"{k}={v:.1f}" for k, v in figures.items()), flush=True)
    print(f"\n{'figure':<52} {'min':>8} {'median':>8} {'max':>8}")
    for label, key in FIGURES:
        values = [run[key] for run in runs]
        print(
            f"{label:<52} {min(values):>8.1f} {statistics.median(values):>8.1f} {max(values):>8.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
