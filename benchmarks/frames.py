"""What drawing the table costs: a match's frames (``arena.match.frames``) against re-simulating
the same match from its record, measured in the same run.

    python benchmarks/frames.py [--repeat 3] [--seed 1] [--smoke]

For one long match of each game (house bots, fixed seeds), timed ``--repeat`` times:

- the baseline: re-simulating the record (``arena.match.records.resimulate``: every answer
  applied, nothing else), what checking a replay already costs;
- the frames of a finished match for ``all``, ``public`` and one seat (the match page's
  first request for a perspective; the answer is then kept, compressed);
- a live poll: the frames since the viewer's last one, of a match at its last step
  (re-simulated from its steps so far, then one frame).

Printed: each time (min / median / max, ms), its ratio to the baseline's median, and the
answer's size (JSON, compact frames, gzip) per perspective.  ``--smoke``: each timed once.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena.games import make_policy
from arena.match.frames import compact, live_frames, record_frames
from arena.match.records import resimulate
from arena.match.referee import PolicyClient, Referee, policy_rng

MATCHES = [("cactus", 4, "classic"), ("cactus-game", 4, None), ("president", 6, None)]


def timed(run: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return times, result


def spread(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    return f"{ms[0]:8.1f} {statistics.median(ms):8.1f} {ms[-1]:8.1f}"


def measure(game: str, players: int, preset: str | None, seed: int, repeat: int) -> None:
    clients = [
        PolicyClient(make_policy(game, "heuristic" if s == 0 else "random", policy_rng(seed, s)))
        for s in range(players)
    ]
    options = {"preset": preset} if preset else None
    record = Referee().run(game, clients, seed, options).to_json()
    steps = len(record["steps"])
    print(f"{game}: {players} players, {steps} steps")
    base_times, _ = timed(partial(resimulate, record), repeat)
    base = statistics.median(base_times)
    print(f"  {'re-simulate (baseline)':<32}{spread(base_times)}   1.00")
    for perspective in ("all", "public", 0):
        times, frames = timed(partial(record_frames, record, perspective), repeat)
        raw = orjson.dumps(frames)
        slim = orjson.dumps(compact(frames))
        packed = gzip.compress(slim, 6)
        size = f"{len(raw) // 1024} KB, {len(slim) // 1024} KB, {len(packed) // 1024} KB gz"
        ratio = statistics.median(times) / base
        print(f"  {'frames, ' + str(perspective):<32}{spread(times)}  {ratio:5.2f}   {size}")
    live = (game, players, seed, record["options"], record["steps"], "public")
    poll, _ = timed(partial(live_frames, *live, since=steps), repeat)
    ratio = statistics.median(poll) / base
    print(f"  {'live poll at the last step':<32}{spread(poll)}  {ratio:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parse_args(parser, smoke={"repeat": 1})
    print_versions("orjson")
    print(f"{'game / what':<34}{'min':>8} {'median':>8} {'max':>8}   ratio   size")
    for game, players, preset in MATCHES:
        measure(game, players, preset, args.seed, args.repeat)


if __name__ == "__main__":
    main()
