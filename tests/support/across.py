"""The arena across hosts (``tests.support.hosts``), as an operator runs it: ``web``
(``arena serve``), ``w1`` and ``w2`` (``arena worker``, threads pool), ``bots`` (policy
bots behind a relay adding 25 ms each way) and ``db`` (PostgreSQL and Redis of their
own), in the production profile.  Shared by tests/test_across_hosts.py and
benchmarks/across_hosts.py: ``arena(folder)`` builds it all, ``Arena`` plays tournaments
on it and reads what was recorded, and by whom, from the database host.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from arena.config import from_env
from arena.db import Database
from arena.worker.celery_app import configure
from arena.worker.refits import rebuild_ratings
from tests.support import hosts

TOKEN = "organiser-token-across-hosts"
WEB_PORT = 8000
HOSTS = ["web", "w1", "w2", "bots", "db"]
# (backend, table) of a host's row locks on the tables a result's transaction writes
RESULT_LOCKS = (
    "SELECT DISTINCT a.pid, c.relname FROM pg_locks l "
    "JOIN pg_stat_activity a ON a.pid = l.pid JOIN pg_class c ON c.oid = l.relation "
    "WHERE l.granted AND host(a.client_addr) = %s "
    "AND c.relname IN ('counters', 'ratings', 'bots', 'replays') "
    "AND l.mode IN ('RowShareLock', 'RowExclusiveLock')"
)
SHARED = {"counters", "ratings", "bots"}  # what other results wait on
GAME = "cactus"


@dataclass
class Worker:
    host: hosts.Host
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def address(self) -> str:
        return self.host.address


@dataclass
class Arena:
    net: hosts.Network
    pg: hosts.Postgres
    env: dict[str, str]
    url: str  # the web server's
    db: Database
    workers: dict[str, Worker] = field(default_factory=dict)
    bot_ids: list[int] = field(default_factory=list)

    # -- the API -------------------------------------------------------------------------------
    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{method} {path}: {exc.code} {exc.read()[:2000]!r}") from None

    def tournament(self, name: str, games_per_pairing: int, seed: int) -> int:
        """A rated 4-seat Cactus round robin of every bot; its id."""
        made = self.api(
            "POST",
            "/api/tournaments",
            {"name": name, "game": GAME, "bot_ids": self.bot_ids, "seats_per_match": 4,
             "games_per_pairing": games_per_pairing, "seed": seed},
        )  # fmt: skip
        return int(made["id"])

    # -- the database host ---------------------------------------------------------------------
    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.pg.dsn, autocommit=True, connect_timeout=10) as conn:
            return list(conn.execute(query, params).fetchall())  # type: ignore[arg-type]

    def running_on(self, worker: str, tournament_id: int) -> dict[int, int]:
        """The matches of the tournament the worker is playing now: id -> attempt."""
        pid = self.workers[worker].proc.pid
        rows = self.sql(
            "SELECT id, attempts FROM matches WHERE tournament_id = %s AND status = 'running' "
            "AND lease_owner LIKE %s ORDER BY id",
            tournament_id,
            f"%:{pid}:%",
        )
        return dict(rows)

    def statuses(self, tournament_id: int) -> dict[str, int]:
        rows = self.sql(
            "SELECT status, count(*) FROM matches WHERE tournament_id = %s GROUP BY status",
            tournament_id,
        )
        return {status: count for status, count in rows}

    def finished(self, tournament_id: int) -> bool:
        rows = self.sql("SELECT status FROM tournaments WHERE id = %s", tournament_id)
        return rows[0][0] == "finished"

    def wait_finished(self, tournament_id: int, timeout: float) -> float:
        """Seconds until the tournament finished (an AssertionError after ``timeout``)."""
        start = time.monotonic()
        while not self.finished(tournament_id):
            if time.monotonic() - start > timeout:
                raise AssertionError(
                    f"tournament {tournament_id} not finished after {timeout:.0f}s: "
                    f"{self.statuses(tournament_id)}"
                )
            time.sleep(0.5)
        return time.monotonic() - start

    def results(self, since: dt.datetime | None = None) -> list[dict[str, Any]]:
        """Every recorded result (``hosts.RESULTS``), oldest first: match, attempt,
        the host that recorded it, its lease and commit time."""
        rows = self.sql(
            "SELECT match_id, attempts, owner, lease_expires_at, host(client), began_at, "
            "committed_at FROM recorded_results WHERE committed_at >= %s ORDER BY committed_at",
            since or dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
        )
        return [
            {"match": m, "attempt": a, "owner": o, "lease": lease, "host": self.host_of(c),
             "began": began, "at": at}
            for m, a, o, lease, c, began, at in rows
        ]  # fmt: skip

    def host_of(self, address: str | None) -> str:
        for name, host in self.net.hosts.items():
            if host.address == address:
                return name
        return address or "?"

    def now(self) -> dt.datetime:
        return self.sql("SELECT clock_timestamp()")[0][0]

    def rebuild_differences(self) -> dict[int, Any]:
        return rebuild_ratings(self.db, GAME)["differences"]

    def all_seat_faults(self, tournament_ids: list[int]) -> list[int]:
        """Recorded matches in which every seat faulted."""
        rows = self.sql(
            "SELECT m.id FROM matches m JOIN match_seats s ON s.match_id = m.id "
            "WHERE m.tournament_id = ANY(%s) AND m.status = 'finished' GROUP BY m.id "
            "HAVING bool_and(s.faults IS NOT NULL OR s.strikes > 0)",
            tournament_ids,
        )
        return [r[0] for r in rows]

    def charged(self) -> list[tuple[Any, ...]]:
        """Seats with a strike or a forfeit, and bots paused or on a forfeit streak."""
        seats = self.sql(
            "SELECT match_id, seat, strikes, forfeited FROM match_seats "
            "WHERE strikes > 0 OR forfeited"
        )
        bots = self.sql(
            "SELECT id, status, forfeit_streak FROM bots WHERE status <> 'active' "
            "OR forfeit_streak > 0"
        )
        return seats + bots

    def in_result(self, conn: Any, worker: str, shared_only: bool) -> list[int]:
        """The worker's backends (on psycopg's ``conn``) in a result's transaction:
        holding row locks on ``counters``, ``ratings`` or ``bots``, which other results
        wait on, or (unless ``shared_only``) writing the result's replay.  A claim's
        plain reads of ``bots`` take no such lock."""
        rows = conn.execute(RESULT_LOCKS, (self.workers[worker].address,)).fetchall()
        return sorted({pid for pid, table in rows if not shared_only or table in SHARED})

    def catch_in_result(
        self, worker: str, tournament_id: int, act: Any, timeout: float = 120
    ) -> int:
        """Call ``act()`` as soon as one of the worker's backends is in a result's
        transaction, and return that backend's pid.  ``act`` returns whether to keep it
        (False: try the next result).  Caught holding the locks other results wait on
        if possible; once 5 matches of the tournament are recorded without that (a
        worker that takes them last, for a moment only), writing the replay will do."""
        import psycopg

        deadline = time.monotonic() + timeout
        checked, shared_only = 0.0, True
        with psycopg.connect(self.pg.dsn, autocommit=True) as conn:
            while time.monotonic() < deadline:
                if time.monotonic() - checked > 1:  # a query a second, not a connection a poll
                    done = self.statuses(tournament_id).get("finished", 0)
                    assert not self.finished(tournament_id), f"{worker} never seen in a result"
                    shared_only, checked = done < 5, time.monotonic()
                for pid in self.in_result(conn, worker, shared_only)[:1]:
                    if act():
                        return pid
        raise AssertionError(f"{worker} never seen in a result's transaction")

    def backend_state(self, pid: int) -> str | None:
        rows = self.sql("SELECT state FROM pg_stat_activity WHERE pid = %s", pid)
        return rows[0][0] if rows else None

    # -- the workers ----------------------------------------------------------------------------
    def start_worker(self, name: str, folder: Path) -> Worker:
        host = self.net[name]
        log = folder / f"{name}.log"
        proc = host.start(
            [sys.executable, "-m", "arena", "worker", "--pool=threads", "--concurrency=10",
             "--loglevel=INFO", f"--hostname={name}@%h"],
            log=log, env=hosts.python_env(**self.env),
        )  # fmt: skip
        self.workers[name] = Worker(host, proc, log)
        return self.workers[name]

    def owners(self, worker: str) -> set[str]:
        """The lease owner names of the worker's process (``warden.new_owner``: host,
        process id, nonce) seen in the database so far."""
        pid = self.workers[worker].proc.pid
        rows = self.sql(
            "SELECT DISTINCT owner FROM recorded_results WHERE owner LIKE %s "
            "UNION SELECT DISTINCT lease_owner FROM matches WHERE lease_owner LIKE %s",
            f"%:{pid}:%", f"%:{pid}:%",
        )  # fmt: skip
        return {r[0] for r in rows}

    def answers(self, worker: str, timeout: float) -> bool:
        """Whether the worker answers a broadcast over the broker within ``timeout``
        seconds: its consumer is not stuck (on a link that was cut, say)."""
        from arena.worker.celery_app import celery

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            replies = celery.control.ping(timeout=1.0)
            if any(name.startswith(f"{worker}@") for reply in replies for name in reply):
                return True
        return False

    def back(self, worker: str, since: dt.datetime, timeout: float) -> bool:
        """Whether the worker, within ``timeout`` seconds, both used the database after
        ``since`` (a statement of one of its connections) and answers on the broker."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            used = self.sql(
                "SELECT count(*) FROM pg_stat_activity WHERE host(client_addr) = %s "
                "AND state_change >= %s",
                self.workers[worker].address,
                since,
            )[0][0]
            if used and self.answers(worker, max(1.0, deadline - time.monotonic())):
                return True
            time.sleep(0.5)
        return False

    def freeze(self, worker: str) -> None:
        os.kill(self.workers[worker].proc.pid, signal.SIGSTOP)

    def thaw(self, worker: str) -> None:
        os.kill(self.workers[worker].proc.pid, signal.SIGCONT)

    # -- the database's log ---------------------------------------------------------------------
    def slow_renewals(self, since: dt.datetime | None = None) -> list[tuple[str, float]]:
        """(host, milliseconds) of each lease renewal (the warden's UPDATE of
        ``lease_expires_at``) that PostgreSQL logged as slow, after ``since``."""
        found = []
        pattern = re.compile(
            r"^(\S+ \S+) \S+ \[\d+\] (\S+) [^:]*: LOG:  duration: ([\d.]+) ms  "
            r"(?:statement|execute [^:]*): UPDATE matches SET lease_expires_at"
        )
        for line in self.pg.log.read_text(errors="replace").splitlines():
            match = pattern.match(line)
            if match is None:
                continue
            when = dt.datetime.fromisoformat(match.group(1).replace(" UTC", "")).replace(
                tzinfo=dt.UTC
            )
            if since is None or when >= since:
                found.append((self.host_of(match.group(2)), float(match.group(3))))
        return found


def longest_pause(results: list[dict[str, Any]], start: dt.datetime, end: dt.datetime) -> float:
    """The longest time in seconds between start, the results recorded, and end."""
    times = [start, *(r["at"] for r in results if start <= r["at"] <= end), end]
    return max((b - a).total_seconds() for a, b in itertools.pairwise(times))


@contextlib.contextmanager
def arena(folder: Path, bots: int = 5, think: float = 0.0) -> Iterator[Arena]:
    """The whole arena across hosts, its bots registered; stopped and removed at the end."""
    with contextlib.ExitStack() as stack:
        net = stack.enter_context(hosts.network(HOSTS))
        pg = stack.enter_context(hosts.postgres(net["db"]))
        broker = stack.enter_context(hosts.redis(net["db"], folder))
        env = {
            "ARENA_PROFILE": "production",
            "ARENA_SECRET_KEY": "across-hosts-secret",
            # what seals the bots' signing secrets in the database (arena.sealing)
            "ARENA_SECRETS_KEY": Fernet.generate_key().decode(),
            "ARENA_ORGANISER_TOKEN": TOKEN,
            "ARENA_DATABASE_URL": pg.url,
            "ARENA_BROKER_URL": broker,
            "ARENA_ALLOWED_NETWORKS": str(net.subnet),
            "ARENA_DATA_DIR": str(folder),
            "ARENA_DEADLINE_MS": "3000",
            "ARENA_RATE_LIMITS": "0",
        }
        db = Database(pg.url)
        stack.callback(db.dispose)
        configure(from_env(env))  # this process asks the workers over the broker
        db.upgrade()
        hosts.note_results(pg)
        web = net["web"].start(
            [sys.executable, "-m", "arena", "serve", "--host", net["web"].address,
             "--port", str(WEB_PORT)],
            log=folder / "web.log", env=hosts.python_env(**env),
        )  # fmt: skip
        stack.callback(hosts.stop, web)
        the_bots = stack.enter_context(hosts.bots(net["bots"], bots, think, folder / "bots.log"))
        the_arena = Arena(net, pg, env, f"http://{net['web'].address}:{WEB_PORT}", db)
        for name in ("w1", "w2"):
            worker = the_arena.start_worker(name, folder)
            stack.callback(hosts.stop, worker.proc)
        try:
            hosts.wait_listening(net["web"].address, WEB_PORT, 60, "arena serve")
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {(folder / 'web.log').read_text()[-2000:]}") from None
        for i, url in enumerate(the_bots.urls):
            made = the_arena.api(
                "POST", "/api/bots", {"name": f"bot-{i}", "endpoint": url, "owner": "across"}
            )
            the_bots.set_secret(i, made["signing_secret"])
            the_arena.bot_ids.append(int(made["id"]))
        yield the_arena
