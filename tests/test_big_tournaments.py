"""Big tournaments are built by a worker, off the request (202, "building", resumable), with
the schedules of before; a registration's health check cannot hold the web for long."""

from __future__ import annotations

import hashlib
import socket
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from arena import services
from arena.competition import formats
from arena.config import Config
from arena.db import Database
from arena.models import Match, Tournament
from arena.services import bots as bot_services
from arena.services import tournaments
from arena.worker import building
from tests.support.api import error
from tests.support.lanes import postgres_url
from tests.support.web import add_many_bots

BODY = {
    "name": "big cup",
    "game": "cactus",
    "format": "balanced",
    "seats_per_match": 2,
    "matches_per_bot": 10,
}


def seatings(database: Database, tournament_id: int) -> list[tuple[int, int | None, list[int]]]:
    """(seed, deal, bot by seat) of every match, in schedule order."""
    with database.session() as session:
        matches = session.scalars(
            select(Match).where(Match.tournament_id == tournament_id).order_by(Match.id)
        ).all()
        return [(m.seed, m.deal, [s.bot_id for s in m.seats]) for m in matches]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, enqueued: list[int]) -> list[tuple[int, bool]]:
    """The tournaments sent to be built, (id, rated), none built: the tests build them."""
    builds: list[tuple[int, bool]] = []
    monkeypatch.setattr(building, "send_build", lambda config, i, rated: builds.append((i, rated)))
    monkeypatch.setattr(services, "BUILD_INLINE", 50)
    return builds


def db(app: Flask) -> Database:
    return app.extensions["arena.db"]


def test_a_big_tournament_is_answered_at_once_then_built_by_a_worker(app, client, sent, enqueued):
    """Over the inline size the answer is 202 with the tournament "building" (its seed
    hidden, no match yet); the worker's build writes the schedule the request would have
    written, queues and sends every match, and sets it running."""
    ids = add_many_bots(db(app), 12)
    response = client.post("/api/tournaments", json={**BODY, "bot_ids": ids, "seed": 5})
    assert response.status_code == 202, response.get_json()
    created = response.get_json()
    assert created["status"] == "building" and created["seed"] is None
    assert created["build"] == {"written": 0, "total": 60}
    assert created["progress"]["total"] == 0 and enqueued == []
    assert sent == [(created["id"], True)]
    shown = client.get(f"/api/tournaments/{created['id']}").get_json()
    assert shown["status"] == "building" and shown["build"]["total"] == 60
    assert client.get("/api/tournaments").get_json()[0]["build"] == {"written": 0, "total": 60}

    written = tournaments.build_tournament(
        db(app), created["id"], rated=True, enqueue=enqueued.extend, batch=7
    )
    assert written == 60
    built = client.get(f"/api/tournaments/{created['id']}").get_json()
    assert built["status"] == "running" and built["build"] is None
    assert built["progress"]["queued"] == 60 and built["balance"]["matches_per_bot"] == [10, 10]
    with db(app).session() as session:
        in_order = list(
            session.scalars(
                select(Match.id).where(Match.tournament_id == created["id"]).order_by(Match.id)
            )
        )
    assert enqueued == in_order

    # the same request, small enough to be written inline: the same matches
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(services, "BUILD_INLINE", 1000)
    try:
        inline = client.post("/api/tournaments", json={**BODY, "bot_ids": ids, "seed": 5})
    finally:
        monkeypatch.undo()
    assert inline.status_code == 201
    assert seatings(db(app), created["id"]) == seatings(db(app), inline.get_json()["id"])
    assert built["balance"] == inline.get_json()["balance"]


def test_what_is_wrong_with_a_big_tournament_is_answered_at_once(app, client, sent):
    """Validation happens in the request, before any 202: nothing is written or sent."""
    ids = add_many_bots(db(app), 24)
    error(
        client.post("/api/tournaments", json={**BODY, "bot_ids": [*ids, 999]}), 400, "no bot(s) 999"
    )
    error(
        client.post("/api/tournaments", json={**BODY, "bot_ids": ids, "matches_per_bot": 10_000}),
        400,
        "the limit is",
    )
    with db(app).session() as session:
        assert session.scalar(select(func.count()).select_from(Tournament)) == 0
    assert sent == []


def test_a_build_cut_short_resumes_without_a_duplicate(app, client, sent, enqueued, monkeypatch):
    """A worker that dies mid-build leaves whole batches; the build delivered again goes
    on after them, and one delivered after the end writes nothing."""
    ids = add_many_bots(db(app), 12)
    created = client.post("/api/tournaments", json={**BODY, "bot_ids": ids}).get_json()
    real = tournaments._write_matches
    calls = []

    def dies_on_the_third(*args: Any, **kwargs: Any) -> list[int]:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("worker killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(tournaments, "_write_matches", dies_on_the_third)
    with pytest.raises(RuntimeError):
        tournaments.build_tournament(
            db(app), created["id"], rated=True, enqueue=enqueued.extend, batch=8
        )
    monkeypatch.setattr(tournaments, "_write_matches", real)
    assert len(seatings(db(app), created["id"])) == 16
    assert client.get(f"/api/tournaments/{created['id']}").get_json()["build"]["written"] == 16

    again = tournaments.build_tournament(
        db(app), created["id"], rated=True, enqueue=enqueued.extend, batch=8
    )
    assert again == 44
    assert (
        tournaments.build_tournament(db(app), created["id"], rated=True, enqueue=enqueued.extend)
        == 0
    )
    with db(app).session() as session:
        tournament = session.get(Tournament, created["id"])
        plan = tournaments.stored_plan(tournament)
        expected = tournaments.schedule_tournament(plan, tournament.seed).tables
        assert tournament.status == "running"
    assert seatings(db(app), created["id"]) == [(t.seed, t.deal, list(t.seats)) for t in expected]
    assert sorted(enqueued) == sorted(set(enqueued)) and len(enqueued) == 60


def test_cancelling_a_building_tournament_stops_its_build(app, client, sent, enqueued):
    ids = add_many_bots(db(app), 12)
    created = client.post("/api/tournaments", json={**BODY, "bot_ids": ids}).get_json()
    cancelled = client.post(f"/api/tournaments/{created['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.get_json()["status"] == "cancelled"
    assert (
        tournaments.build_tournament(db(app), created["id"], rated=True, enqueue=enqueued.extend)
        == 0
    )
    assert seatings(db(app), created["id"]) == [] and enqueued == []


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_database(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Database]:
    def opened(url: str) -> Iterator[Database]:
        database = Database(url)
        database.upgrade()
        try:
            yield database
        finally:
            database.dispose()

    if request.param == "sqlite":
        yield from opened(f"sqlite:///{tmp_path / 'arena.sqlite3'}")
    else:
        with postgres_url() as url:
            yield from opened(url)


def test_two_deliveries_at_once_write_each_match_once(fresh_database: Database) -> None:
    """The build task delivered twice, both running together: every match once."""
    ids = add_many_bots(fresh_database, 16)
    config = Config(database_url=fresh_database.url)
    with fresh_database.session() as session:
        tournament, match_ids = tournaments.create_tournament(
            session,
            config,
            name="twice",
            game="cactus",
            options=None,
            bot_ids=ids,
            seats_per_match=2,
            format="balanced",
            matches_per_bot=15,
            build_inline=10,
        )
        assert match_ids == [] and tournament.status == "building"
        tournament_id = tournament.id
    sent: list[int] = []
    failures: list[BaseException] = []

    def build() -> None:
        try:
            tournaments.build_tournament(
                fresh_database, tournament_id, rated=True, enqueue=sent.extend, batch=6
            )
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    rows = seatings(fresh_database, tournament_id)
    assert len(rows) == 120 and sorted(sent) == sorted(set(sent)) and len(sent) == 120
    with fresh_database.session() as session:
        tournament = session.get(Tournament, tournament_id)
        expected = tournaments.schedule_tournament(
            tournaments.stored_plan(tournament), tournament.seed
        ).tables
    assert rows == [(t.seed, t.deal, list(t.seats)) for t in expected]


# -- the scheduler: faster, and the same schedules -------------------------------------------
# Digests of schedules built before the optimiser was made faster: stored tournaments and
# seeds given again must give the same matches.
PINNED = {
    ("balanced", 7, 3, 6, "independent", 1): "e1b24817688adac1",
    ("balanced", 12, 4, 12, "independent", 2): "4911413e65ecc548",
    ("balanced", 13, 3, 9, "duplicate", 3): "9555bfa207b1d37e",
    ("balanced", 30, 2, 40, "independent", 4): "684e9eaab14a8972",
    ("balanced", 61, 6, 30, "independent", 5): "da5fe9139c158c57",
    ("balanced", 100, 4, 120, "independent", 6): "962829f44657bbcc",
    ("balanced", 300, 4, 40, "independent", 7): "5bdc6c421b1ab5cf",
    ("balanced", 200, 8, 80, "duplicate", 8): "21a31c1837eb6af8",
    ("gauntlet", 20, 3, 30, "independent", 9): "8ef1fafaacff3d0a",
    ("round_robin", 8, 2, 4, "independent", 10): "a4764ba78eb1f817",
}


def digest(tables: list[formats.Table]) -> str:
    h = hashlib.sha256()
    for t in tables:
        h.update(repr((t.seats, t.seed, t.deal, t.round)).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(PINNED))
def test_schedules_are_those_of_before(case: tuple[Any, ...]) -> None:
    kind, n, k, per_bot, deal, seed = case
    bots = list(range(1, n + 1))
    if kind == "balanced":
        tables = formats.balanced(bots, k, per_bot, seed=seed, deal=deal)
    elif kind == "gauntlet":
        tables = formats.gauntlet(bots[:4], bots[4:], k, per_bot, seed=seed, deal=deal)
    else:
        tables = formats.round_robin(bots, k, per_bot, seed=seed, deal=deal)
    assert digest(tables) == PINNED[case]
    challengers = bots[:4] if kind == "gauntlet" else []
    achieved = formats.balance(tables, bots, k, challenger_ids=challengers)
    assert achieved == counted_balance(tables, bots, k, challengers)


def counted_balance(
    tables: list[formats.Table], bots: list[int], k: int, challengers: list[int]
) -> formats.Balance:
    """``formats.balance`` as it was computed before, one table at a time."""
    played: dict[int, list[int]] = {b: [0] * k for b in bots}
    met: dict[tuple[int, int], int] = {}
    for table in tables:
        for s, bot in enumerate(table.seats):
            played[bot][s] += 1
        for x in table.seats:
            for y in table.seats:
                met[x, y] = met.get((x, y), 0) + 1
    rows = challengers or bots
    field = [b for b in bots if b not in challengers]
    pairs = (
        [met.get((c, f), 0) for c in challengers for f in field]
        if challengers
        else [met.get((x, y), 0) for i, x in enumerate(bots) for y in bots[i + 1 :]]
    )
    return formats.Balance(
        (min(sum(played[b]) for b in rows), max(sum(played[b]) for b in rows)),
        max(max(played[b]) - min(played[b]) for b in rows),
        (min(pairs), max(pairs)),
    )


# -- registration's health check --------------------------------------------------------------
class Tarpit:
    """An endpoint that accepts connections and never answers (``accepted`` is set once
    it has accepted one) until ``release``, which hangs up on them."""

    def __init__(self, endpoint: str, accepted: threading.Event, held: list[socket.socket]):
        self.endpoint, self.accepted, self._held = endpoint, accepted, held

    def release(self) -> None:
        for conn in self._held:
            conn.close()


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted = threading.Event()
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)
            accepted.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    pit = Tarpit(f"http://127.0.0.1:{listener.getsockname()[1]}", accepted, held)
    yield pit
    stop.set()
    thread.join()
    pit.release()
    listener.close()


def test_a_silent_bot_fails_its_registration_within_the_check_time(client, tarpit, monkeypatch):
    monkeypatch.setattr(bot_services, "REGISTRATION_CHECK_SECONDS", 0.3)
    body = {"name": "mute", "endpoint": tarpit.endpoint, "owner": "ann"}
    error(client.post("/api/bots", json=body), 400, "did not answer GET /")


def test_registrations_past_the_limit_are_refused_at_once(app, tarpit, monkeypatch):
    """While as many checks as allowed wait on a silent bot, one more is a 503 at once
    rather than another web thread held."""
    monkeypatch.setattr(bot_services, "_registration_checks", threading.BoundedSemaphore(1))
    monkeypatch.setattr(bot_services, "REGISTRATION_CHECK_SECONDS", 30.0)
    endpoint = tarpit.endpoint
    statuses: list[int] = []

    def register(name: str) -> None:
        body = {"name": name, "endpoint": endpoint, "owner": "ann"}
        statuses.append(app.test_client().post("/api/bots", json=body).status_code)

    first = threading.Thread(target=register, args=("first",))
    first.start()
    assert tarpit.accepted.wait(30)
    response = app.test_client().post(
        "/api/bots", json={"name": "second", "endpoint": endpoint, "owner": "ann"}
    )
    error(response, 503, "try again")
    tarpit.release()
    first.join(60)
    assert statuses == [400]


def test_the_page_of_a_building_tournament_shows_how_far_it_is(app, client, sent, enqueued):
    ids = add_many_bots(db(app), 12)
    created = client.post("/api/tournaments", json={**BODY, "bot_ids": ids}).get_json()
    page = client.get(f"/tournaments/{created['id']}").get_data(as_text=True)
    assert "status-building" in page and 'data-refresh="5"' in page
    assert "Being built: 0 of 60 matches written (0%)" in page

    tournaments.build_tournament(db(app), created["id"], rated=True, enqueue=enqueued.extend)
    page = client.get(f"/tournaments/{created['id']}").get_data(as_text=True)
    assert "status-running" in page and "Being built" not in page


def test_the_cli_waits_for_a_build_and_shows_how_far_it_is(monkeypatch, capsys):
    """``arena tournaments start`` of a big tournament: a line on stderr each time the
    build moves, then the tournament as built (with the created answer's seat links)."""
    from arena.cli import tournaments as cli_tournaments

    answers = iter(
        [
            {"id": 4, "status": "building", "build": {"written": 500, "total": 1500}},
            {"id": 4, "status": "building", "build": {"written": 500, "total": 1500}},
            {"id": 4, "status": "running", "build": None, "name": "big"},
        ]
    )

    class Client:
        def get_object(self, path: str, token: Any, **params: Any) -> dict[str, Any]:
            assert path == "/api/tournaments/4"
            return next(answers)

    monkeypatch.setattr(cli_tournaments, "BUILD_POLL_SECONDS", 0)
    created = {"id": 4, "status": "building", "build": {"written": 0, "total": 1500}}
    built = cli_tournaments._wait_built(Client(), {**created, "seat_links": [{"name": "ann"}]})
    assert built["status"] == "running" and built["seat_links"] == [{"name": "ann"}]
    assert capsys.readouterr().err.splitlines() == [
        "tournament 4: building, 0 of 1,500 matches written",
        "tournament 4: building, 500 of 1,500 matches written",
    ]


def test_a_bot_checked_at_registration_holds_no_database_lock(app, tarpit, monkeypatch):
    """The bot is called between two transactions: on SQLite a transaction holds the
    write lock, and a registration from an account (whose token is looked up first) used
    to hold it for as long as the bot took to answer, every other request waiting."""
    monkeypatch.setattr(bot_services, "REGISTRATION_CHECK_SECONDS", 30.0)
    client = app.test_client()
    signed_up = client.post("/api/accounts", json={"name": "ann", "password": "a long password"})
    assert signed_up.status_code == 201, signed_up.get_json()
    token = signed_up.get_json()["token"]
    statuses: list[int] = []

    def register() -> None:
        body = {"name": "slow", "endpoint": tarpit.endpoint}
        headers = {"Authorization": f"Bearer {token}"}
        statuses.append(app.test_client().post("/api/bots", json=body, headers=headers).status_code)

    thread = threading.Thread(target=register)
    thread.start()
    try:
        assert tarpit.accepted.wait(30)  # the bot is being called now
        path = app.extensions["arena.config"].database_url.removeprefix("sqlite:///")
        other = sqlite3.connect(path, timeout=0.5, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer gets the lock at once
        other.execute("ROLLBACK")
        other.close()
    finally:
        tarpit.release()
        thread.join(60)
    assert statuses == [400]
