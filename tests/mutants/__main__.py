"""Run the planted bugs of tests/mutants: each one alone, against its game's tests.

    python -m tests.mutants [--game president] [--match TEXT] [--workers 2]

Prints one line per mutant (caught or SURVIVED, and how long its tests took) and a
summary per game.  The file is restored after each mutant, also on Ctrl-C or a kill
(SIGTERM).  Exit status 1 when a mutant survived that is not judged equivalent.
"""

from __future__ import annotations

import argparse
import glob
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.mutants import GAME_TESTS, MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[2]


def plant(mutant: Mutant) -> str:
    """Write the mutant into its file; returns the original text to restore."""
    path = ROOT / mutant.path
    original = path.read_text(encoding="utf-8")
    found = original.count(mutant.before)
    if found != 1:
        raise SystemExit(f"{mutant.name}: its text is found {found} times in {mutant.path}")
    path.write_text(original.replace(mutant.before, mutant.after), encoding="utf-8")
    return original


def caught(mutant: Mutant, workers: int) -> tuple[bool, float]:
    files: list[str] = []
    for pattern in GAME_TESTS[mutant.game]:  # in the catalogue's order
        files += [f for f in sorted(glob.glob(pattern, root_dir=ROOT)) if f not in files]
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *files]
    command[4:4] = ["-n", str(workers)] if workers > 1 else ["-p", "no:xdist"]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    return done.returncode != 0, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutants", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--game", choices=sorted(GAME_TESTS), help="only this game's mutants")
    parser.add_argument("--match", default="", help="only the mutants whose name holds this text")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (1: none)")
    args = parser.parse_args(argv)
    # a kill restores the planted file as Ctrl-C does (``finally`` below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    chosen = [m for m in MUTANTS if (args.game in (None, m.game)) and args.match in m.name]
    survivors: list[Mutant] = []
    per_game: dict[str, list[int]] = {}
    for mutant in chosen:
        original = plant(mutant)
        try:
            hit, seconds = caught(mutant, args.workers)
        finally:
            (ROOT / mutant.path).write_text(original, encoding="utf-8")
        tally = per_game.setdefault(mutant.game, [0, 0])
        tally[0] += hit
        tally[1] += 1
        verdict = "caught" if hit else "SURVIVED" + (" (equivalent)" if mutant.equivalent else "")
        print(f"{verdict:24} {seconds:6.1f} s  {mutant.name}", flush=True)
        if not hit:
            survivors.append(mutant)
    for game, (hit, total) in per_game.items():
        print(f"{game}: {hit}/{total} caught ({100 * hit / total:.1f} %)")
    for mutant in survivors:
        why = mutant.equivalent or "not judged: a gap in the tests?"
        print(f"survivor: {mutant.name}\n  {why}")
    return 1 if any(not m.equivalent for m in survivors) else 0


if __name__ == "__main__":
    raise SystemExit(main())
