"""The time bank: a tournament's time per bot per match to draw on past its decisions'
deadlines.  A late answer draws its overage and is no fault until the bank is spent;
every /act says what is left; the transports wait for the deadline and the bank; the
replay keeps each draw and re-simulates as before; old replays still load."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from arena.games import make_policy
from arena.match import records
from arena.match.exchanges import Waker, act_seconds
from arena.match.faults import BotFault
from arena.match.http_client import DEADLINE_GRACE, HttpClient
from arena.match.pools import Pools
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Match
from arena.relay.client import RelayClient
from arena.worker import lifecycle
from tests.support.api import error, register_many

DEADLINE_MS = 2000


class LateExchange:
    """An answer that takes ``latency_ms``, judged as a transport judges it: a timeout
    past the deadline and what is left of the bank (``act_seconds``, no network here)."""

    def __init__(self, payload: dict[str, Any], latency_ms: float):
        self.payload = payload
        self.waited_ms = act_seconds(payload, 0.0) * 1000.0
        self.latency_ms = latency_ms
        self.done = False
        self.started = self.finished = 0.0

    def advance(self, waker: Waker) -> None:
        self.finished = min(self.latency_ms, self.waited_ms) / 1000.0
        self.done = True

    def watch(self) -> None:
        return None

    def due(self) -> None:
        return None

    def result(self) -> Any:
        if self.latency_ms > self.waited_ms:
            raise BotFault("timeout", "no answer within the deadline")
        return {"action": self.payload["legal_actions"][0]}

    def cancel(self) -> None:
        self.done = True


class LateBot:
    """Every answer takes ``latency_ms``; keeps the requests it was sent."""

    def __init__(self, latency_ms: float):
        self.name = "late"
        self.latency_ms = latency_ms
        self.requests: list[dict[str, Any]] = []

    def start(self, info: dict[str, Any]) -> None:
        pass

    def begin_act(self, payload: dict[str, Any]) -> LateExchange:
        self.requests.append(payload)
        return LateExchange(payload, self.latency_ms)

    def act(self, payload: dict[str, Any]) -> Any:
        raise AssertionError("asked through begin_act")

    def end(self, info: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


def late_match(time_bank_ms: int | None) -> tuple[LateBot, dict[str, Any]]:
    late = LateBot(latency_ms=2600)  # 600 ms past every deadline
    house = PolicyClient(make_policy("cactus", "random", policy_rng(4, 1)), "house")
    referee = Referee(max_strikes=1000, deadline_ms=DEADLINE_MS, time_bank_ms=time_bank_ms)
    record = referee.run("cactus", [late, house], seed=4, options={"rounds": 1})
    return late, record.to_json()


def mine(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for step in record["steps"] for d in step if d["seat"] == 0]


def test_a_late_answer_draws_on_the_bank_and_is_a_fault_only_once_it_is_spent() -> None:
    late, record = late_match(time_bank_ms=1500)
    decisions = mine(record)
    assert len(decisions) >= 5
    # each request says what is left; each late answer draws its 600 ms until 300 are left
    assert [r["time_bank_ms"] for r in late.requests[:5]] == [1500, 900, 300, 0, 0]
    assert [d.get("bank_ms") for d in decisions[:5]] == [600, 600, 300, None, None]
    assert [d.get("fault") for d in decisions[:5]] == [None, None, "timeout", "timeout", "timeout"]
    assert record["time_bank_ms"] == 1500
    # the same record without a bank: every late answer is a fault, every request says 0
    late, unbanked = late_match(time_bank_ms=None)
    assert {r["time_bank_ms"] for r in late.requests} == {0}
    assert all(d.get("fault") == "timeout" and "bank_ms" not in d for d in mine(unbanked))
    assert "time_bank_ms" not in unbanked


def test_a_replay_with_bank_draws_re_simulates_and_old_replays_still_load() -> None:
    _, record = late_match(time_bank_ms=1500)
    assert records.check(record) == []
    assert records.decode(records.encode(record)) == record
    # a format 2 record (before the bank): read as the current format, with no bank
    old = {k: v for k, v in record.items() if k != "time_bank_ms"}
    old["format"] = 2
    old["steps"] = [
        [{k: v for k, v in d.items() if k != "bank_ms"} for d in step] for step in record["steps"]
    ]
    upgraded = records.upgrade(old)
    assert upgraded["format"] == record["format"] == 3
    assert "time_bank_ms" not in upgraded and records.check(upgraded) == []


def test_the_transports_wait_for_the_deadline_and_what_is_left_of_the_bank() -> None:
    payload = {"decision_id": "0:0", "legal_actions": [{}], "deadline_ms": 2000}
    webhook = HttpClient("http://127.0.0.1:9", "a-secret-of-sixteen")
    pools = Pools()
    relay = RelayClient(1, "a-secret-of-sixteen", "bot", locate=lambda: None, pools=pools)
    try:
        for client in (webhook, relay):
            banked = client.begin_act({**payload, "time_bank_ms": 1500})
            assert banked.seconds == pytest.approx(3.5 + DEADLINE_GRACE)
            assert client.begin_act({**payload, "time_bank_ms": 0}).seconds == pytest.approx(
                2.0 + DEADLINE_GRACE
            )
    finally:
        webhook.close()
        pools.close()


def test_a_tournament_gives_its_matches_its_time_bank(app, client, info_bot, enqueued) -> None:
    ids = register_many(client, info_bot(), 2)
    body = {
        "name": "cup",
        "game": "cactus",
        "bot_ids": ids,
        "seats_per_match": 2,
        "games_per_pairing": 2,
    }
    response = client.post("/api/tournaments", json={**body, "time_bank_ms": 5000})
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    assert created["time_bank_ms"] == 5000
    plain = client.post("/api/tournaments", json=body).get_json()
    assert plain["time_bank_ms"] is None
    with app.extensions["arena.db"].session() as session:
        for tournament, bank in ((created, 5000), (plain, None)):
            match = session.scalars(
                select(Match).where(Match.tournament_id == tournament["id"]).limit(1)
            ).one()
            assert lifecycle.plan(match).time_bank_ms == bank  # what the worker plays with
    page = client.get(f"/tournaments/{created['id']}").get_data(as_text=True)
    assert "5,000 ms per bot per match" in page
    assert "Time bank" not in client.get(f"/tournaments/{plain['id']}").get_data(as_text=True)
    for bad in (-1, 600_001, "lots", 1.5, True):
        error(
            client.post("/api/tournaments", json={**body, "time_bank_ms": bad}), 422, "time_bank_ms"
        )
