"""What the SDK tells the bot's author in the bot's own output: each request it refused
(which check, and what to do) and each answer it gave past the request's deadline (its
own time, the deadline, the time bank left), a few lines and then a count, whatever the
flood; over HTTP (the logger ``arenabot``) and over connect (the client's own lines)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from arenabot import Bot, BotServer, ConnectClient, signed_headers
from arenabot.service import BotService, Notices
from conftest import SECRET, Client, EchoBot, act_body, fresh_request_id

Serve = Callable[..., BotServer]
Connect = Callable[..., Client]


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "arenabot"]


def test_a_request_signed_with_another_secret_is_told_with_what_to_do(
    serve: Serve, client: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(EchoBot())
    wrong = client(server, secret="not-the-secret-the-bot-has")
    caplog.set_level("WARNING", logger="arenabot")
    for _ in range(5):
        assert wrong.post("/act", act_body())[0] == 401
    lines = said(caplog)
    # one clear line each for the first few, then they are counted (none of the 5 more)
    assert len(lines) == 3
    assert lines[0].startswith("arenabot: refused a request to POST /act: wrong signature; ")
    assert "the signing secret differs from the arena's: set ARENA_BOT_SECRET" in lines[0]
    assert lines[2].endswith("(more of these are counted: one line every 100)")


def test_a_stale_timestamp_a_bad_body_and_an_unknown_path_each_say_their_check(
    serve: Serve, client: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    c = client(serve(EchoBot()))
    caplog.set_level("WARNING", logger="arenabot")
    assert c.post("/act", act_body(), timestamp=int(time.time()) - 3600)[0] == 401
    assert c.post("/act", {"match_id": "m1"})[0] == 400
    assert c.post("/nope", act_body())[0] == 404
    skew, body, path = said(caplog)
    assert "more than 300 s away from the bot's clock; clock skew" in skew
    assert "missing field(s): decision_id" in body and "protocol 1" in body
    assert path.startswith("arenabot: refused a request to POST /nope: no such path;")


def test_a_flood_is_a_few_lines_and_a_count() -> None:
    lines: list[str] = []
    notices = Notices(lines.append, first=2, every=10)
    for _ in range(35):
        notices.refused("POST /act", "signature", "wrong signature")
    assert len(lines) == 2 + 3  # two in full, then at 10, 20 and 30
    assert lines[-1].endswith("[30 so far]")


class Slow(Bot):
    games = ["cactus"]

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        time.sleep(0.05)  # at least 50 ms: past a deadline of 10
        return legal_actions[0]


def _answer_late(notices: Notices, bank: int) -> None:
    service = BotService(Slow(), notices=notices)
    request = service.check("/act", None, None, _raw(act_body(deadline_ms=10, time_bank_ms=bank)))
    assert isinstance(request, dict)
    assert service.answer("/act", request)[0] == 200


def test_an_answer_past_its_deadline_says_the_time_and_the_bank_left() -> None:
    lines: list[str] = []
    _answer_late(Notices(lines.append), bank=5000)
    _answer_late(Notices(lines.append), bank=0)
    banked, unbanked = lines
    assert banked.startswith("answered decision 0:0 of match m1 after ")
    assert "past its deadline_ms of 10: " in banked and "drawn from the time bank, about" in banked
    assert "no time bank, the arena counts a timeout (a strike)" in unbanked


def test_a_connected_bot_says_its_refusals_where_it_says_the_rest() -> None:
    lines: list[str] = []
    client = ConnectClient(EchoBot(), "http://127.0.0.1:9", 1, SECRET, stderr=lines.append)
    raw = _raw({**act_body(), "request_id": fresh_request_id()})
    headers = signed_headers("another-secret", raw)
    item = {
        "path": "/act",
        "body": raw.decode(),
        "timestamp": headers["X-Arena-Timestamp"],
        "signature": headers["X-Arena-Signature"],
    }
    assert client._answer(item) is not None  # the 401 goes back to the arena
    assert len(lines) == 1 and lines[0].startswith("arenabot: refused a request to POST /act")
    assert "the signing secret differs from the arena's" in lines[0]


def _raw(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()
