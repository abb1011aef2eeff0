"""Prometheus metrics: the web's ``/metrics`` (the arena's state, read from the database at
each scrape, behind an optional bearer token) and a real ``arena worker --metrics-port``
that plays a small tournament of loopback bots and is scraped: its decisions, their
latency, faults, match durations and results agree with the stored replays."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from arenabot import make_server
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select, text

from arena.app import create_app
from arena.cli import main
from arena.cli.output import UsageError
from arena.cli.processes import stop_processes, worker_command
from arena.cli.server import check_metrics_port
from arena.config import from_env
from arena.metrics import worker as worker_metrics
from arena.metrics.worker import fault_kind
from arena.models import Bot, BotSession, Event, Match, Replay, Tournament, utcnow
from arena.services import workers
from arena.worker.lifecycle import SeatPlan
from sample_bots.policy_bot import PolicyBot
from tests.support.api import auth, tournament_body
from tests.support.lanes import free_port, lane, wait_for


def samples(text_format: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape: (name, labels) -> value."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text_format)
        for s in family.samples
    }


def value(scraped: dict, name: str, **labels: str) -> float:
    return scraped[(name, frozenset(labels.items()))]


# -- the web's /metrics --------------------------------------------------------------------


def _bot(name: str, **fields: Any) -> Bot:
    return Bot(name=name, owner="tests", owner_token_hash="x", signing_secret="s", **fields)


def test_the_web_metrics_count_the_arena_from_its_database(make_app):
    app = make_app()
    now = utcnow()
    with app.extensions["arena.db"].session() as s:
        s.add_all(
            [
                _bot("hooked", endpoint="http://127.0.0.1:9/"),
                _bot("hooked-paused", endpoint="http://127.0.0.1:9/", status="paused"),
                _bot("online"),
                _bot("gone quiet"),
                _bot("closed"),
                _bot("house", kind="house"),
            ]
        )
        s.flush()
        ids = {name: id_ for name, id_ in s.execute(select(Bot.name, Bot.id))}
        s.add_all(
            [
                BotSession(bot_id=ids["online"], token="a", home="h", seen_at=now),
                BotSession(
                    bot_id=ids["gone quiet"],
                    token="b",
                    home="h",
                    seen_at=now - dt.timedelta(hours=1),
                ),
                BotSession(bot_id=ids["closed"], token="c", home="h", seen_at=now, closed_at=now),
            ]
        )
        s.add_all(
            [
                Tournament(name="t", game="cactus", seats_per_match=2, seed=1),
                Tournament(name="u", game="cactus", seats_per_match=2, seed=2, status="finished"),
            ]
        )
        waited = now - dt.timedelta(seconds=90)
        statuses = ["queued", "queued", "running", "finished", "finished", "finished"]
        for k, status in enumerate(statuses):
            created = waited if k == 0 else now
            s.add(Match(game="cactus", seed=k, status=status, created_at=created))
        workers.beat(s, "alive@host", capacity=100)
        workers.beat(s, "dead@host", capacity=100, now=now - dt.timedelta(minutes=5))
        workers.beat(s, "a-beat@host", kind="beat")

    answer = app.test_client().get("/metrics")

    assert answer.status_code == 200
    assert answer.content_type.startswith("text/plain")
    scraped = samples(answer.get_data(as_text=True))
    matches = {status: value(scraped, "arena_matches", status=status) for status in
               ("queued", "running", "finished", "failed", "cancelled")}  # fmt: skip
    assert matches == {"queued": 2, "running": 1, "finished": 3, "failed": 0, "cancelled": 0}
    assert value(scraped, "arena_tournaments", status="running") == 1
    assert value(scraped, "arena_tournaments", status="finished") == 1
    assert value(scraped, "arena_bots", status="active", transport="webhook") == 1
    assert value(scraped, "arena_bots", status="paused", transport="webhook") == 1
    assert value(scraped, "arena_bots", status="active", transport="connect") == 3
    assert value(scraped, "arena_bots", status="active", transport="house") == 1
    assert value(scraped, "arena_connected_bots") == 1  # not the quiet one, not the closed one
    assert value(scraped, "arena_workers") == 1  # the dead worker and the beat are not
    assert value(scraped, "arena_worker_capacity") == 100
    assert 90 <= value(scraped, "arena_queued_match_age_seconds") < 90 + 600


def test_the_web_metrics_want_the_bearer_token_when_one_is_set(make_app):
    client = make_app(metrics_token="scrape-me").test_client()

    for headers in ({}, auth("wrong"), {"Authorization": "Basic scrape-me"}):
        refused = client.get("/metrics", headers=headers)
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"] == "Bearer"
    answer = client.get("/metrics", headers=auth("scrape-me"))
    assert answer.status_code == 200
    assert 'arena_matches{status="finished"} 0.0' in answer.get_data(as_text=True)
    # Prometheus's text for a scraper: not an operation of the JSON API's document
    assert "/metrics" not in client.get("/api/openapi.json").get_json()["paths"]


def _private_event_with_a_bot(app) -> None:
    """A private event with a bot, a session, a tournament and a queued match of its own;
    a public event's bot; nothing else."""
    now = utcnow()
    with app.extensions["arena.db"].session() as s:
        private = Event(name="secret class", games=["cactus"], visibility="private",
                        join_code="P", ladder={})  # fmt: skip
        public = Event(name="open class", games=["cactus"], join_code="Q", ladder={})
        s.add_all([private, public])
        s.flush()
        hidden = _bot("hidden", event_id=private.id)
        s.add_all([hidden, _bot("shown", event_id=public.id)])
        s.flush()
        s.add(BotSession(bot_id=hidden.id, token="a", home="h", seen_at=now))
        s.add(Tournament(name="t", game="cactus", seats_per_match=2, seed=1, event_id=private.id))
        old = now - dt.timedelta(hours=2)
        s.add(Match(game="cactus", seed=1, status="queued", created_at=old, event_id=private.id))


def test_an_open_scrape_counts_nothing_of_a_private_event(make_app):
    """The local profile without a token: open, as for a class's afternoon, but what it
    counts is what anyone may see: a private event's bots, tournaments, matches and
    sessions are not there (its bot would be told by the count of connect bots)."""
    app = make_app()
    _private_event_with_a_bot(app)

    answer = app.test_client().get("/metrics")

    assert answer.status_code == 200
    scraped = samples(answer.get_data(as_text=True))
    assert value(scraped, "arena_bots", status="active", transport="connect") == 1  # the public
    assert value(scraped, "arena_connected_bots") == 0
    assert value(scraped, "arena_tournaments", status="running") == 0
    assert value(scraped, "arena_matches", status="queued") == 0
    assert value(scraped, "arena_queued_match_age_seconds") == 0


def test_the_tokens_bearer_counts_the_private_events_too(make_app):
    app = make_app(metrics_token="scrape-me")
    _private_event_with_a_bot(app)

    answer = app.test_client().get("/metrics", headers=auth("scrape-me"))

    scraped = samples(answer.get_data(as_text=True))
    assert value(scraped, "arena_bots", status="active", transport="connect") == 2
    assert value(scraped, "arena_connected_bots") == 1
    assert value(scraped, "arena_tournaments", status="running") == 1
    assert value(scraped, "arena_matches", status="queued") == 1
    assert value(scraped, "arena_queued_match_age_seconds") >= 2 * 3600


def test_production_serves_the_metrics_to_the_token_only(make_app):
    """Without ARENA_METRICS_TOKEN the production profile answers nobody (a scrape set up
    without it fails where its operator sees it); with it, a token-less request is a 401."""
    client = make_app(profile="production").test_client()
    for headers in ({}, auth("anything")):
        refused = client.get("/metrics", headers=headers)
        assert refused.status_code == 403
        assert "ARENA_METRICS_TOKEN" in refused.get_data(as_text=True)
        assert "arena_" not in refused.get_data(as_text=True)
    client = make_app(profile="production", metrics_token="scrape-me").test_client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=auth("scrape-me")).status_code == 200


def test_the_web_metrics_fail_the_scrape_when_the_database_cannot_be_read(make_app):
    app = make_app()
    with app.extensions["arena.db"].session() as s:
        s.execute(text("DROP TABLE worker_beats"))

    answer = app.test_client().get("/metrics")

    # a failed scrape (Prometheus's up == 0), never gauges saying all is well
    assert answer.status_code == 503
    assert answer.get_data(as_text=True) == "the database cannot be read\n"


# -- a worker's --metrics-port -------------------------------------------------------------


def test_metrics_port_refuses_a_prefork_pool_and_a_port_in_use(capsys):
    assert main(["worker", "--pool", "prefork", "--metrics-port", "9100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: --metrics-port needs --pool threads or solo")
    assert err.count("\n") == 1
    with ExitStack() as stack:
        import socket

        taken = stack.enter_context(socket.socket())
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["worker", "--metrics-port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err == f"arena: --metrics-port {port}: cannot listen there (Address already in use)\n"


@pytest.fixture
def forget_served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The servers a test starts, shut at its end; this process's heartbeat never
    advertises them."""
    monkeypatch.setattr(worker_metrics, "_served", {})
    servers: list[Any] = []
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_workers_metrics_listen_on_loopback_unless_told(forget_served, tmp_path):
    server = worker_metrics.serve(0)
    forget_served.append(server)

    assert server.server_address[0] == "127.0.0.1"
    assert worker_metrics.served_host() == "127.0.0.1"
    assert "arena_results_total" in scrape(server.server_port)
    # the setting, and the command's check of it
    assert from_env({"ARENA_DATA_DIR": str(tmp_path)}).worker_metrics_host == "127.0.0.1"
    env = {"ARENA_DATA_DIR": str(tmp_path), "ARENA_WORKER_METRICS_HOST": "0.0.0.0"}
    assert from_env(env).worker_metrics_host == "0.0.0.0"
    with pytest.raises(UsageError, match=r"^ARENA_WORKER_METRICS_HOST 'nowhere\.invalid' is not"):
        check_metrics_port(free_port(), "threads", "nowhere.invalid")


def test_a_workers_metrics_want_the_token_when_one_is_set(forget_served):
    server = worker_metrics.serve(0, token="scrape-me")
    forget_served.append(server)
    url = f"http://127.0.0.1:{server.server_port}/metrics"

    for headers in ({}, auth("wrong")):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10)
        assert refused.value.code == 401
        assert refused.value.headers["WWW-Authenticate"] == "Bearer"
        refused.value.close()
    request = urllib.request.Request(url, headers=auth("scrape-me"))
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert "arena_results_total" in answer.read().decode()


def test_a_match_is_counted_from_its_record_for_programs_answers_only():
    """House policies and people are not bots' latency; a struck-out seat was not asked;
    an in-process bot's exception is the kind ``error``."""
    seats = [
        SeatPlan("http://127.0.0.1:9/", "s", "webhook", None, 1),
        SeatPlan(None, "s", "house", None, 2, policy="random"),
        SeatPlan(None, "s", "person", None, 3, deadline_ms=60_000),
        SeatPlan(None, "s", "connected", None, 4),
    ]
    steps = [
        [
            {"seat": 0, "action": "a", "latency_ms": 20.0},
            {"seat": 1, "action": "a", "latency_ms": 0.1},
            {"seat": 2, "action": "a", "latency_ms": 9000.0},
            {"seat": 3, "action": "a", "latency_ms": 2250.0, "fault": "timeout"},
        ],
        [
            {"seat": 0, "action": "a", "latency_ms": 30.0, "fault": "error: ValueError"},
            {"seat": 3, "action": "a", "fault": "struck_out"},
        ],
    ]

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, {"game": "president", **labels}) or 0.0

    names = [("arena_decisions_total", {}), ("arena_decision_seconds_sum", {}),
             ("arena_match_seconds_count", {}), ("arena_faults_total", {"kind": "timeout"}),
             ("arena_faults_total", {"kind": "error"}),
             ("arena_decision_seconds_bucket", {"le": "0.025"})]  # fmt: skip
    before = [sample(name, **labels) for name, labels in names]

    worker_metrics.match_played("president", steps, 12.5, worker_metrics.counted_seats(seats))

    after = [sample(name, **labels) for name, labels in names]
    changes = [round(b - a, 6) for a, b in zip(before, after, strict=True)]
    assert changes == [3, 2.3, 1, 1, 1, 1]


class SloppyBot(PolicyBot):
    """Every third answer is not a legal action: faults of a kind the worker counts."""

    def __init__(self, game: str, policy: str):
        super().__init__(game, policy)
        self._answers = itertools.count(1)

    def on_act(self, request: dict[str, Any]) -> Any:
        if next(self._answers) % 3 == 0:
            return "not a move"
        return super().on_act(request)


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[Any]:
    with lane("embedded", tmp_path, workers=0) as the_lane:
        yield the_lane


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        return answer.read().decode()


def test_a_worker_serves_its_metrics_of_a_tournament_it_plays(embedded, tmp_path: Path):
    port = free_port()
    printed, logged = tmp_path / "worker.out", tmp_path / "worker.err"
    app = create_app(embedded.config)
    api = app.test_client()
    with ExitStack() as stack, printed.open("wb") as out, logged.open("wb") as err:
        stack.callback(app.extensions["arena.db"].dispose)
        ids = []
        for i, bot in enumerate([PolicyBot("cactus", "heuristic"), SloppyBot("cactus", "random")]):
            server = make_server(bot, "127.0.0.1", 0, secret=None)
            server.serve_in_background()
            stack.callback(server.close)
            answer = api.post(
                "/api/bots", json={"name": f"metrics-{i}", "endpoint": server.url, "owner": "t"}
            )
            assert answer.status_code == 201, answer.json
            server.secret = answer.json["signing_secret"]
            ids.append(answer.json["id"])
        command = worker_command("metrics@%h", "--metrics-port", str(port), "--loglevel", "INFO",
                                 "--log-format", "json")  # fmt: skip
        worker = subprocess.Popen(
            command, env={**os.environ, **embedded.env}, stdout=out, stderr=err
        )
        stack.callback(stop_processes, [worker], 20)
        created = api.post("/api/tournaments", json=tournament_body(ids, games_per_pairing=4))
        assert created.status_code == 201, created.json

        def all_finished() -> bool:
            with embedded.db.session() as s:
                return s.scalar(select(func.count()).where(Match.status != "finished")) == 0

        wait_for(all_finished, what="the tournament")
        with embedded.db.session() as s:
            records = [replay.record for replay in s.scalars(select(Replay))]
        played = 4 + len(ids)  # the tournament's, and each bot's validation match
        assert len(records) == played
        # the decisions of the bots asked over the network: the house bot of the validation
        # matches is played in the worker, and not counted
        decisions = [
            d
            for r in records
            for step in r["steps"]
            for d in step
            if "latency_ms" in d and not r["players"][d["seat"]].startswith("house ")
        ]
        faults: dict[str, int] = {}
        for d in decisions:
            if "fault" in d:
                faults[fault_kind(d["fault"])] = faults.get(fault_kind(d["fault"]), 0) + 1
        assert faults.get("illegal_action", 0) >= 3

        def counted() -> dict:
            scraped = samples(scrape(port))
            # a result is counted once it is committed: the last one may lag the database
            done = value(scraped, "arena_results_total", outcome="recorded") == played
            return scraped if done else {}

        wait_for(lambda: counted() != {}, timeout=30, what="the worker's counts")
        text_format = scrape(port)
        web = app.test_client().get("/metrics").get_data(as_text=True)

    scraped = samples(text_format)
    assert value(scraped, "arena_decisions_total", game="cactus") == len(decisions)
    assert value(scraped, "arena_decision_seconds_count", game="cactus") == len(decisions)
    total_ms = sum(d["latency_ms"] for d in decisions)
    assert value(scraped, "arena_decision_seconds_sum", game="cactus") == pytest.approx(
        total_ms / 1000
    )
    buckets = [line for line in text_format.splitlines() if line.startswith("arena_decision")]
    assert any(
        line.startswith('arena_decision_seconds_bucket{game="cactus",le="') for line in buckets
    )
    assert value(scraped, "arena_decision_seconds_bucket", game="cactus", le="+Inf") == len(
        decisions
    )
    for kind, count in faults.items():
        assert value(scraped, "arena_faults_total", game="cactus", kind=kind) == count
    assert value(scraped, "arena_match_seconds_count", game="cactus") == played
    assert value(scraped, "arena_results_total", outcome="refused") == 0
    assert value(scraped, "arena_matches_in_flight") == 0
    # every game has its series from the start
    assert value(scraped, "arena_decisions_total", game="president") == 0
    # the web's side of the same arena
    web_scraped = samples(web)
    assert value(web_scraped, "arena_matches", status="finished") == played
    assert value(web_scraped, "arena_workers") == 1
    # every line the worker logged was a JSON object (Celery's banner is printed apart)
    parsed = [json.loads(line) for line in logged.read_text().splitlines() if line.strip()]
    assert all({"time", "level", "logger", "message"} <= set(line) for line in parsed)
    assert any(line["message"].endswith(" ready.") for line in parsed), parsed[:20]
    # on loopback: ARENA_WORKER_METRICS_HOST is not set
    assert f"arena: metrics on http://127.0.0.1:{port}/metrics" in printed.read_text()
