"""What sealing bots' signing secrets (``arena.sealing``) costs where it is paid: loading
whole ``Bot`` rows, as a page of bots or a match's plan does, against loading the same
rows without the secret column (the baseline: what a load cost before, less one short
string), in the same run.

    python benchmarks/sealed_secrets.py [--bots 2000] [--repeat 3] [--smoke]

A SQLite database (in a temporary directory) is brought to the newest schema and filled
with ``--bots`` bots, each with its secret sealed.  Timed, ``--repeat`` times each: every
bot loaded whole by a process that has opened none of the secrets yet (cold: each one
opened), the same again (warm: the process's opened values are reused), and every bot
loaded without its secret.  Printed: the times (min / median / max), the ratios to the
baseline (medians) and the cost of opening one secret.  ``--smoke``: 10 bots, once.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import defer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena import sealing
from arena.config import Config
from arena.db import Database
from arena.models import Bot


def timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def summary(times: list[float]) -> str:
    return " / ".join(f"{t * 1000:.1f}" for t in (min(times), statistics.median(times), max(times)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parse_args(parser, smoke={"bots": 10, "repeat": 1})
    print_versions("cryptography", "sqlalchemy", "sqlite")
    with tempfile.TemporaryDirectory() as folder:
        sealing.use(Config(data_dir=Path(folder)))
        database = Database(f"sqlite:///{folder}/arena.sqlite3")
        database.upgrade()
        with database.session() as session:
            for n in range(args.bots):
                session.add(
                    Bot(name=f"bot {n}", owner="o", owner_token_hash="h",
                        signing_secret=f"secret-of-bot-{n:06d}-0123456789abcdef")
                )  # fmt: skip

        def whole() -> None:
            with database.session() as session:
                assert len(session.scalars(select(Bot)).all()) == args.bots

        def without_secret() -> None:
            with database.session() as session:
                rows = session.scalars(select(Bot).options(defer(Bot.signing_secret))).all()
                assert len(rows) == args.bots

        def cold() -> None:
            sealing.use(Config(data_dir=Path(folder)))  # a new keyring: nothing opened yet
            whole()

        without_secret()  # the database's pages read once
        first = timed(cold, args.repeat)
        again = timed(whole, args.repeat)
        baseline = timed(without_secret, args.repeat)
        database.dispose()
    base = statistics.median(baseline)
    per_secret = (statistics.median(first) - base) / args.bots
    print(f"{args.bots} bots loaded, ms (min / median / max of {args.repeat})")
    print(f"  whole rows, each secret opened  : {summary(first)}")
    print(f"  whole rows, secrets opened before: {summary(again)}")
    print(f"  without the secret (baseline)   : {summary(baseline)}")
    print(f"  ratio cold / baseline           : {statistics.median(first) / base:.2f}")
    print(f"  ratio warm / baseline           : {statistics.median(again) / base:.2f}")
    print(f"  per secret opened               : {per_secret * 1e6:.1f} us")


if __name__ == "__main__":
    main()
