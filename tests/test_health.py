"""Health and stalls: ``/healthz`` and ``/readyz`` for probes, the workers' and beat's
heartbeats, the warning of a tournament that no worker will play (API, page, CLI), and
the organisers' status (``/api/status``, ``/status``)."""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import io
import os
import socket
import subprocess
import time
from types import SimpleNamespace
from unittest import mock

import pytest
from celery.signals import beat_init
from flask import Flask
from sqlalchemy import select, update

from arena.cli import main
from arena.cli.processes import stop_processes, worker_command
from arena.config import Config
from arena.db import Database
from arena.models import Match, MatchSeat, Tournament, WorkerBeat, utcnow
from arena.services import workers
from arena.worker import celery_app, heartbeat
from tests.support.api import auth, register_many, tournament_body


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def db_of(app: Flask) -> Database:
    return app.extensions["arena.db"]


# -- probes ------------------------------------------------------------------------------
def test_healthz_answers_without_touching_the_database(app, client):
    db_of(app).dispose()
    touched = AssertionError("touched")
    engine = type(db_of(app).engine)
    with (
        mock.patch.object(Database, "session", side_effect=touched),
        mock.patch.object(engine, "connect", side_effect=touched),
    ):
        response = client.get("/healthz")
    assert (response.status_code, response.get_json()) == (200, {"status": "ok"})


def test_readyz_is_ready_with_the_database_and_the_embedded_broker(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.get_json() == {
        "status": "ok",
        "checks": {"database": "ok", "broker": "ok"},
        "failed": [],
    }


def test_readyz_is_503_naming_a_database_that_does_not_answer(make_app, tmp_path):
    app = make_app(database_url=f"sqlite:///{tmp_path / 'no such folder' / 'arena.sqlite3'}")
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["failed"] == ["database"] and body["status"] == "unavailable"
    assert body["checks"]["broker"] == "ok"
    assert body["checks"]["database"].startswith("the database does not answer: ")


def test_readyz_is_503_naming_a_broker_that_is_not_reachable(make_app):
    app = make_app(broker_url=f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["failed"] == ["broker"]
    assert body["checks"]["broker"].startswith("the broker is not reachable: ")


def test_readyz_is_503_when_the_embedded_broker_cannot_write(make_app, tmp_path):
    not_a_folder = tmp_path / "data-is-a-file"
    not_a_folder.write_text("")
    app = make_app(data_dir=not_a_folder)
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["failed"] == ["broker"]


def test_the_probes_and_the_status_are_in_the_openapi_document(client):
    spec = client.get("/api/openapi.json").get_json()
    for path in ("/healthz", "/readyz", "/api/status"):
        assert "get" in spec["paths"][path], path
    assert "503" in spec["paths"]["/readyz"]["get"]["responses"]
    tournament = spec["components"]["schemas"]["Tournament"]["properties"]
    assert "warnings" in tournament


# -- heartbeats --------------------------------------------------------------------------
def test_a_heartbeat_writes_its_row_until_stopped(app):
    database = db_of(app)
    heart = heartbeat.Heartbeat(database, "w1", load=lambda: (8, 3), interval=3600)
    heart.start()
    try:
        with database.session() as session:
            alive = workers.live(session)
            assert [(w.name, w.capacity, w.in_flight) for w in alive] == [("w1", 8, 3)]
    finally:
        heart.stop()
    with database.session() as session:
        assert workers.live(session) == []  # stopped cleanly: not alive, not a death
        assert session.get(WorkerBeat, "w1").stopped_at is not None


def test_a_heartbeat_whose_database_is_away_does_not_raise(tmp_path):
    gone = Database(f"sqlite:///{tmp_path / 'missing' / 'x.sqlite3'}")
    assert heartbeat.Heartbeat(gone, "w", interval=3600).beat() is False


@pytest.fixture
def worker_state(app):
    """The worker's process state bound to the app's database (as in a worker process),
    and put back after."""
    config: Config = app.extensions["arena.config"]
    saved = dict(celery_app._state)
    celery_app.configure(config)
    celery_app._state["db"] = db_of(app)
    yield celery_app._state
    heartbeat.stop()
    for key in ("warden", "beat_heartbeat"):
        found = celery_app._state.pop(key, None)
        if found is not None:
            found.stop()
    celery_app._state.clear()
    celery_app._state.update(saved)


def test_a_ready_worker_beats_under_its_warden_s_name_and_stops_at_shutdown(app, worker_state):
    from arena.worker import play

    pool = SimpleNamespace(limit=7)  # a threads pool of 7
    play._worker_ready(sender=SimpleNamespace(pool=pool))
    warden = worker_state["warden"]
    with db_of(app).session() as session:
        row = session.get(WorkerBeat, warden.owner)
        assert (row.kind, row.capacity, row.in_flight, row.stopped_at) == ("worker", 7, 0, None)
        assert [w.name for w in workers.live(session)] == [warden.owner]
    play._worker_shutdown()
    with db_of(app).session() as session:
        assert workers.live(session) == []


def test_beat_beats_from_its_start_signal(app, worker_state):
    beat_init.send(sender=None)
    heart = worker_state["beat_heartbeat"]
    atexit.unregister(heart.stop)
    with db_of(app).session() as session:
        assert [b.name for b in workers.live(session, "beat")] == [heartbeat.beat_name()]
        assert workers.live(session, "worker") == []


def wait_for(check, what: str, seconds: float = 120.0):  # a bound, not a timed assertion
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, f"no {what} in {seconds:g} s"
        time.sleep(0.2)
    return found


@pytest.mark.xdist_group("server")
def test_a_worker_process_beats_while_it_runs_and_is_stopped_when_it_stops(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_DATA_DIR"] = str(tmp_path)
    database = Database(f"sqlite:///{tmp_path / 'arena.sqlite3'}")
    database.upgrade()
    worker = subprocess.Popen(
        worker_command("beating@%h", "--concurrency=3"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def alive() -> list[WorkerBeat]:
            with database.session() as session:
                return workers.live(session)

        [row] = wait_for(alive, "heartbeat")
        assert (row.pid, row.capacity, row.in_flight) == (worker.pid, 3, 0)
    finally:
        stop_processes([worker], timeout=30)
    assert alive() == []  # a clean stop: not alive at once, without waiting LIVE_SECONDS
    database.dispose()


# -- a tournament that no worker plays ---------------------------------------------------
def start_tournament(app: Flask, info_bot, age: float = 60.0) -> int:
    """A round robin of three bots, made ``age`` seconds ago, its matches queued."""
    client = app.test_client()
    ids = register_many(client, info_bot(), 3)
    created = client.post("/api/tournaments", json=tournament_body(ids)).get_json()
    with db_of(app).session() as session:
        session.execute(
            update(Tournament)
            .where(Tournament.id == created["id"])
            .values(created_at=utcnow() - dt.timedelta(seconds=age))
        )
    return created["id"]


def beat_at(app: Flask, seconds_ago: float, name: str = "w") -> None:
    with db_of(app).session() as session:
        workers.beat(session, name, now=utcnow() - dt.timedelta(seconds=seconds_ago))


def test_a_queued_tournament_with_no_worker_ever_seen_warns(app, client, info_bot):
    tid = start_tournament(app, info_bot)
    body = client.get(f"/api/tournaments/{tid}").get_json()
    [warning] = body["warnings"]
    assert warning["code"] == "no_worker"
    assert "no worker has ever been seen" in warning["message"]
    assert f"{body['progress']['queued']} matches wait" in warning["message"]
    listed = {t["id"]: t for t in client.get("/api/tournaments").get_json()}
    assert listed[tid]["warnings"] == [warning]


def test_the_warning_says_when_the_last_worker_was_seen_and_goes_with_a_live_one(
    app, client, info_bot
):
    tid = start_tournament(app, info_bot)
    beat_at(app, 95)  # gone: older than LIVE_SECONDS
    [warning] = client.get(f"/api/tournaments/{tid}").get_json()["warnings"]
    assert "no worker has been seen for 95 s (last seen at " in warning["message"]
    beat_at(app, 1)
    assert client.get(f"/api/tournaments/{tid}").get_json()["warnings"] == []


def test_a_tournament_just_made_is_given_time_for_its_worker_to_start(app, client, info_bot):
    tid = start_tournament(app, info_bot, age=0)
    assert client.get(f"/api/tournaments/{tid}").get_json()["warnings"] == []
    later = utcnow() + workers.STALL_GRACE + dt.timedelta(seconds=1)
    with db_of(app).session() as session:
        found = session.get(Tournament, tid)
        progress = {"queued": 1, "running": 0}
        [warning] = workers.stall_warnings(session, progress, found.created_at, now=later)
    assert warning["code"] == "no_worker"
    # the acceptance check: warned within 45 s of its creation, polled every 5 s or so
    assert dt.timedelta(seconds=30) >= workers.STALL_GRACE


def test_a_finished_tournament_or_none_queued_has_no_warning(app, client, info_bot):
    tid = start_tournament(app, info_bot)
    with db_of(app).session() as session:
        session.execute(update(Match).where(Match.tournament_id == tid).values(status="cancelled"))
    assert client.get(f"/api/tournaments/{tid}").get_json()["warnings"] == []


def test_a_tournament_being_built_with_no_worker_warns_too(app, client, info_bot):
    tid = start_tournament(app, info_bot)
    with db_of(app).session() as session:  # its matches not written yet: a worker writes them
        session.execute(update(Match).where(Match.tournament_id == tid).values(status="cancelled"))
        session.execute(update(Tournament).where(Tournament.id == tid).values(status="building"))
    [warning] = client.get(f"/api/tournaments/{tid}").get_json()["warnings"]
    assert warning["message"].startswith("its matches wait to be written, but no worker has ")
    assert "wait to be written" in client.get(f"/tournaments/{tid}").get_data(as_text=True)


def test_the_tournament_page_shows_the_warning(app, client, info_bot):
    tid = start_tournament(app, info_bot)
    page = client.get(f"/tournaments/{tid}").get_data(as_text=True)
    assert "stall-note" in page and "no worker has ever been seen" in page
    notice = page.index("stall-note")
    assert page.index("This page updates every 5 seconds") > notice  # beside it
    beat_at(app, 1)
    page = client.get(f"/tournaments/{tid}").get_data(as_text=True)
    assert "no worker has ever been seen" not in page and "stall-note" not in page


def cli(*argv: str, server: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict("os.environ", {"ARENA_SERVER": server}),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def served(app):
    """The app on a loopback port, for the ``arena`` command."""
    import threading

    from arena.cli.processes import make_web_server

    server = make_web_server("127.0.0.1", 0, app)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.port}"
    server.shutdown()
    server.server_close()


def test_the_cli_tells_the_warning_on_stderr(app, served, info_bot):
    tid = start_tournament(app, info_bot)
    for argv in (["tournaments", "show", str(tid)], ["tournaments", "list"]):
        code, out, err = cli(*argv, server=served)
        assert code == 0 and f"{tid}" in out
        assert err.startswith(f"arena: warning: tournament {tid}: "), err
        assert "no worker has ever been seen" in err and err.count("\n") == 1
    code, out, err = cli("tournaments", "show", str(tid), "--json", server=served)
    assert '"no_worker"' in out and "no worker" in err  # the JSON carries it too
    beat_at(app, 1)
    assert cli("tournaments", "show", str(tid), server=served)[2] == ""


# -- the organisers' status --------------------------------------------------------------
def finish(app: Flask, match_ids: list[int], faults: int) -> None:
    with db_of(app).session() as session:
        session.execute(
            update(Match)
            .where(Match.id.in_(match_ids))
            .values(status="finished", finished_at=utcnow() - dt.timedelta(minutes=1))
        )
        seat = session.scalars(select(MatchSeat).where(MatchSeat.match_id == match_ids[0])).first()
        seat.faults = {"count": faults, "kinds": {"timeout": faults}}


def test_the_status_shows_workers_queues_beat_and_rates(app, client, info_bot):
    tid = start_tournament(app, info_bot)
    with db_of(app).session() as session:
        ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tid)))
        workers.beat(session, "host:1:ab", capacity=100, in_flight=2)
    finish(app, ids[:5], faults=10)
    status = client.get("/api/status").get_json()
    [worker] = status["workers"]
    assert (worker["name"], worker["capacity"], worker["in_flight"]) == ("host:1:ab", 100, 2)
    assert worker["host"] == socket.gethostname()[:100]
    # and the three bots' validation matches, queued too
    assert status["matches"]["queued"] == len(ids) - 5 + 3
    assert status["matches"]["running"] == 0
    assert status["matches"]["broker_waiting"] == 0  # the enqueue is the test's: none sent
    assert status["rates"]["5m"] == {"finished_per_minute": 1.0, "faults_per_minute": 2.0}
    assert status["rates"]["15m"] == {"finished_per_minute": 0.33, "faults_per_minute": 0.67}
    assert status["beat"] == {"alive": False, "last_seen": None}
    assert status["warnings"] == []  # a worker is alive
    page = client.get("/status").get_data(as_text=True)
    assert "host:1:ab" in page and "2/100" in page and "was never seen" in page
    assert 'href="/status"' in page  # in the top bar: the local profile reads it


def test_the_status_warns_of_queued_matches_with_no_worker(app, client, info_bot):
    start_tournament(app, info_bot)
    with db_of(app).session() as session:
        session.execute(update(Match).values(created_at=utcnow() - dt.timedelta(minutes=2)))
    [warning] = client.get("/api/status").get_json()["warnings"]
    assert warning["code"] == "no_worker"
    assert "no worker has ever been seen" in client.get("/status").get_data(as_text=True)


def test_in_production_the_status_is_the_organisers(make_app):
    app = make_app(profile="production", organiser_token="the-organiser")
    client = app.test_client()
    assert client.get("/api/status").status_code == 401
    assert client.get("/api/status", headers=auth("the-organiser")).status_code == 200
    page = client.get("/status")
    assert page.status_code == 302 and "/login" in page.headers["Location"]
    assert 'href="/status"' not in client.get("/").get_data(as_text=True)
    # the probes stay open: a load balancer has no token
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200


def test_in_production_readyz_names_what_failed_but_not_why(make_app):
    port = free_port()
    app = make_app(profile="production", broker_url=f"redis://127.0.0.1:{port}/0")
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"] == {"database": "ok", "broker": "failed"}
    assert str(port) not in response.get_data(as_text=True)  # the address is the log's


def test_the_status_and_the_warnings_on_postgresql(info_bot, tmp_path, enqueued):
    from arena.app import create_app
    from tests.support.lanes import postgres_url

    with postgres_url() as url:
        database = Database(url)
        database.upgrade()
        database.dispose()
        config = Config(
            database_url=url,
            data_dir=tmp_path,
            broker_url="filesystem://",
            secret_key="test-secret",
            testing=True,
        )
        app = create_app(config)
        try:
            client = app.test_client()
            tid = start_tournament(app, info_bot)
            with db_of(app).session() as session:
                ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tid)))
            finish(app, ids[:5], faults=10)
            [warning] = client.get(f"/api/tournaments/{tid}").get_json()["warnings"]
            assert "no worker has ever been seen" in warning["message"]
            beat_at(app, 2)
            status = client.get("/api/status").get_json()
            assert [w["name"] for w in status["workers"]] == ["w"]
            assert status["rates"]["5m"]["faults_per_minute"] == 2.0
            assert status["matches"]["queued"] == len(ids) - 5 + 3  # 3 validation matches
            assert client.get(f"/api/tournaments/{tid}").get_json()["warnings"] == []
            assert client.get("/readyz").status_code == 200
        finally:
            db_of(app).dispose()
