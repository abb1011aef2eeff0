"""A poll that reached a web process other than the bot's home, run at the home
(``arena.relay.forward.serve_poll``): the bot gets what a poll at the home would have
given it, and a session that is not held there is said so (the process then takes it
over).  The processes themselves: tests/test_connect_play.py, the image's command."""

from __future__ import annotations

import orjson

from arena.relay.forward import serve_poll
from arena.relay.hub import Hub
from tests.test_relay_hub import BOT, delivery, in_thread


def _poll(token: str, answers: list[dict] | None = None, wait: float = 5.0) -> bytes:
    return orjson.dumps({"token": token, "answers": answers or [], "draining": False, "wait": wait})


def test_a_poll_passed_on_takes_the_request_waiting_and_carries_its_answer_back():
    hub = Hub()
    hub.open(BOT, "s1", capacity=1)
    request = delivery()
    worker, _ = in_thread(lambda: hub.deliver(request))
    status, body = serve_poll(hub, BOT, _poll("s1"))
    assert status == 200
    [handed] = orjson.loads(body)["requests"]
    assert handed == request.wire()  # the signed webhook request, exactly
    answer = {"request_id": request.request_id, "status": 200, "body": {"action": 3}}
    status, body = serve_poll(hub, BOT, _poll("s1", [answer], wait=0))
    assert (status, orjson.loads(body)) == (200, {"requests": []})
    worker.join(5)
    assert (request.outcome, request.status) == ("answer", 200)
    assert orjson.loads(request.answer) == {"action": 3}


def test_a_session_not_held_at_the_home_is_answered_as_such_and_a_bad_body_refused():
    hub = Hub()
    hub.open(BOT, "s2", capacity=1)
    status, body = serve_poll(hub, BOT, _poll("s1"))
    assert status == 409 and orjson.loads(body)["reason"] == "moved"
    status, body = serve_poll(hub, BOT + 1, _poll("s2"))
    assert status == 409 and orjson.loads(body)["reason"] == "moved"
    for bad in (b"", b"[]", b'{"token": "s2"}', _poll("s2")[:-1]):
        status, _ = serve_poll(hub, BOT, bad)
        assert status == 400, bad
    status, _ = serve_poll(hub, BOT, b'{"token": "s2", "answers": 3, "draining": 0, "wait": 1}')
    assert status == 400


def test_a_poll_passed_on_waits_at_the_home_and_ends_with_nothing_after_its_wait():
    hub = Hub()
    hub.open(BOT, "s1", capacity=1)
    status, body = serve_poll(hub, BOT, _poll("s1", wait=0.05))
    assert (status, orjson.loads(body)) == (200, {"requests": []})
