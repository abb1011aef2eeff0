"""What accounts cost a request: signing in, and who a request is.

    python benchmarks/accounts.py [--repeat 3] [--requests 300] [--smoke]

One app on a fresh SQLite database (in process, Flask's test client: no network) with
an event, an organiser, a contestant and 40 bots.  Timed, per request:

- ``anyone``: ``GET /api/bots`` without a credential (the baseline: what every read cost
  before accounts, plus the private-event filter it now has);
- ``api token``: the same with an account's API token (the token's lookup and the
  account's memberships);
- ``session``: the same from a page's login session (the cookie, the account loaded by
  Flask-Login, then the same caller);
- ``login``: ``POST /api/accounts/tokens`` (an argon2 verification, deliberately slow, and
  a new token written).

Printed: milliseconds per request, min / median / max over ``--repeat`` runs, and each
one's ratio to the baseline's median.  ``--smoke``: one run of 3 requests each.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena.app import create_app
from arena.config import Config
from arena.db import Database

ORGANISER = "bench-organiser-token-0123456789"


def scene(folder: Path) -> tuple[Any, dict[str, str]]:
    """The app and an account's bearer header."""
    path = folder / "arena.sqlite3"
    Database(f"sqlite:///{path}").upgrade()
    app = create_app(
        Config(
            database_url=f"sqlite:///{path}",
            broker_url="filesystem://",
            secret_key="bench",
            data_dir=folder,
            organiser_token=ORGANISER,
            rate_limits=False,
        )
    )
    client = app.test_client()
    admin = {"Authorization": f"Bearer {ORGANISER}"}
    event = client.post(
        "/api/events", json={"name": "bench", "games": ["cactus"]}, headers=admin
    ).get_json()
    made = client.post(
        "/api/accounts",
        json={"name": "student", "password": "a long password", "join_code": event["join_code"]},
    ).get_json()
    for i in range(40):
        answer = client.post(
            "/api/bots",
            json={"name": f"bench-{i}", "connect": True, "games": ["cactus"], "owner": "bench"},
        )
        assert answer.status_code == 201, answer.get_json()
    return app, {"Authorization": f"Bearer {made['token']}"}


def per_request(call: Callable[[], Any], n: int) -> float:
    began = time.perf_counter()
    for _ in range(n):
        answer = call()
        assert answer.status_code in (200, 201), answer.get_json()
    return (time.perf_counter() - began) / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300)
    args = parse_args(parser, smoke={"repeat": 1, "requests": 3})
    print_versions("flask", "sqlalchemy", "argon2-cffi", "sqlite")
    folder = Path(tempfile.mkdtemp(prefix="bench-accounts-"))
    try:
        app, bearer = scene(folder)
        anyone = app.test_client()
        with_token = app.test_client()
        signed_in = app.test_client()
        page = signed_in.get("/login").get_data(as_text=True)
        csrf = page.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
        signed_in.post(
            "/login", data={"name": "student", "password": "a long password", "csrf_token": csrf}
        )
        assert signed_in.get("/api/accounts/me").status_code == 200, "the login page failed"
        cases: dict[str, Callable[[], Any]] = {
            "anyone": lambda: anyone.get("/api/bots?page_size=20"),
            "api token": lambda: with_token.get("/api/bots?page_size=20", headers=bearer),
            "session": lambda: signed_in.get("/api/bots?page_size=20"),
            "login": lambda: anyone.post(
                "/api/accounts/tokens", json={"name": "student", "password": "a long password"}
            ),
        }
        results: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, call in cases.items():
                # a login is slow on purpose (argon2): a tenth as many, at least 10
                n = args.requests if name != "login" else max(10, args.requests // 10)
                n = min(n, args.requests)
                results[name].append(per_request(call, n))
        base = statistics.median(results["anyone"])
        print(f"{'request':<10} {'min':>8} {'median':>8} {'max':>8}  ratio to anyone (median)")
        for name, times in results.items():
            print(
                f"{name:<10} {min(times):8.2f} {statistics.median(times):8.2f} "
                f"{max(times):8.2f}  {statistics.median(times) / base:6.2f}x   (ms per request)"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
