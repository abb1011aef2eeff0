"""The mailboxes of connected bots in one web process (``arena.relay.hub``), alone:
requests handed to polls and answers taken from them, each request settled once (an
answer with the bot's latency, a timeout, a disconnection, or moved to another home)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from arena.relay.hub import Delivery, Hub, Replaced

BOT = 7


def delivery(request_id: str = "a" * 32, seconds: float = 5.0, **fields) -> Delivery:
    return Delivery(
        bot_id=BOT,
        request_id=request_id,
        path="/act",
        body=b'{"request_id": "%s"}' % request_id.encode(),
        timestamp="1700000000",
        signature="sha256=x",
        deadline=time.monotonic() + seconds,
        **fields,
    )


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(call()), daemon=True)
    thread.start()
    return thread, out


def test_a_request_goes_to_the_next_poll_and_its_answer_comes_back_with_its_latency():
    hub = Hub()
    hub.open(BOT, "s1", capacity=1)
    request = delivery()
    worker, _ = in_thread(lambda: hub.deliver(request))
    [handed] = hub.poll(BOT, "s1", [], wait=5)
    assert handed is request and handed.wire()["path"] == "/act"
    time.sleep(0.02)  # the bot thinks
    assert hub.poll(BOT, "s1", [(request.request_id, 200, b'{"action": 1}')], wait=0) == []
    worker.join(5)
    assert (request.outcome, request.status, request.answer) == ("answer", 200, b'{"action": 1}')
    assert request.latency_ms >= 20  # from the poll that took it to the one that answered


def test_a_poll_waits_for_a_request_and_takes_it_as_soon_as_it_comes():
    hub = Hub()
    hub.open(BOT, "s1", capacity=1)
    poller, got = in_thread(lambda: hub.poll(BOT, "s1", [], wait=10))
    time.sleep(0.05)
    request = delivery()
    worker, _ = in_thread(lambda: hub.deliver(request))
    poller.join(5)
    assert got == [[request]]
    hub.poll(BOT, "s1", [(request.request_id, 200, b"{}")], wait=0)
    worker.join(5)
    assert request.outcome == "answer"


def test_a_request_never_taken_is_a_disconnection_and_one_taken_and_not_answered_a_timeout():
    hub = Hub(away_seconds=0.0)
    hub.open(BOT, "s1", capacity=2)
    never = delivery("b" * 32, seconds=0.1)
    assert hub.deliver(never).outcome == "disconnected"  # no poll came for it
    taken = delivery("c" * 32, seconds=0.3)
    worker, _ = in_thread(lambda: hub.deliver(taken))
    assert hub.poll(BOT, "s1", [], wait=5) == [taken]
    # the bot is still there, polling
    poller, _ = in_thread(lambda: _replaced(lambda: hub.poll(BOT, "s1", [], wait=5)))
    worker.join(5)
    assert taken.outcome == "timeout" and "deadline" in taken.detail
    hub.leave(BOT, "s1", "closed", "closed by the bot")
    poller.join(5)


def test_a_bot_with_no_session_here_has_its_request_moved_at_once():
    request = Hub().deliver(delivery())
    assert request.outcome == "moved" and request.settled.is_set()


def test_a_new_session_replaces_the_old_one_whose_polls_and_requests_end():
    hub = Hub()
    hub.open(BOT, "old", capacity=1)
    waiting = delivery("d" * 32)
    worker, _ = in_thread(lambda: hub.deliver(waiting))
    assert hub.poll(BOT, "old", [], wait=5) == [waiting]  # seen by the old session
    poller, raised = in_thread(lambda: _replaced(lambda: hub.poll(BOT, "old", [], wait=10)))
    time.sleep(0.05)
    hub.open(BOT, "new", capacity=1)
    worker.join(5)
    poller.join(5)
    assert waiting.outcome == "moved"  # the worker sends it again, to the new session
    assert raised == ["replaced by a newer session"]
    with pytest.raises(Replaced):
        hub.poll(BOT, "old", [], wait=0)
    assert hub.holds(BOT) == "new"


def _replaced(call: Callable[[], object]) -> str | None:
    try:
        call()
    except Replaced as exc:
        return str(exc)
    return None


def test_a_poll_beyond_the_capacity_ends_the_oldest_open_one():
    hub = Hub()
    hub.open(BOT, "s1", capacity=1)
    first, got = in_thread(lambda: hub.poll(BOT, "s1", [], wait=10))
    time.sleep(0.05)
    second, later = in_thread(lambda: hub.poll(BOT, "s1", [], wait=10))
    first.join(5)
    assert got == [[]] and not first.is_alive()  # a dropped client's poll, say
    request = delivery()
    worker, _ = in_thread(lambda: hub.deliver(request))
    second.join(5)
    assert later == [[request]]
    hub.poll(BOT, "s1", [(request.request_id, 200, b"{}")], wait=0)
    worker.join(5)


def test_an_answer_given_to_a_lost_home_settles_the_request_sent_again_here():
    hub = Hub()
    hub.open(BOT, "s1", capacity=1)
    handed = time.time() - 0.05  # by a web process that died, which said so
    # the bot answers it here
    hub.poll(BOT, "s1", [("e" * 32, 200, b'{"action": 2}')], wait=0)
    again = delivery("f" * 32, previous="e" * 32, handed_wall=handed)
    assert hub.deliver(again).outcome == "answer"
    assert again.answer == b'{"action": 2}' and again.latency_ms >= 50


def test_requests_to_a_bot_of_capacity_three_reach_its_open_polls_one_each():
    """Each request wakes one open poll, which takes it; none is left waiting while a
    poll is open and the bot takes more."""
    hub = Hub()
    hub.open(BOT, "s1", capacity=3)
    polls = [in_thread(lambda: hub.poll(BOT, "s1", [], wait=10)) for _ in range(3)]
    time.sleep(0.2)  # all three are waiting
    requests = [delivery(request_id=c * 32, seconds=10) for c in "abc"]
    workers = [in_thread(lambda r=r: hub.deliver(r)) for r in requests]
    started = time.monotonic()
    for thread, _ in polls:
        thread.join(timeout=5)
    assert time.monotonic() - started < 5  # handed at once, not at the polls' timeout
    handed = sorted(d.request_id for _, got in polls for d in got[0])
    assert handed == sorted(r.request_id for r in requests)
    hub.poll(BOT, "s1", [(r.request_id, 200, b"{}") for r in requests], wait=0)
    for thread, _ in workers:
        thread.join(timeout=5)
    assert [r.outcome for r in requests] == ["answer"] * 3


def test_a_poll_woken_for_a_request_it_cannot_take_passes_the_wake_on():
    """A request wakes one open poll, not all.  When the one woken is ended at that moment
    (a newer poll beyond the capacity) it passes the wake on as it leaves, so the request
    goes out at once to another poll, never at the polls' timeout."""
    hub = Hub()

    def poll(token: str) -> list[Delivery]:
        try:
            return hub.poll(BOT, token, [], wait=10)
        except Replaced:  # the next round's session ended it
            return []

    for i in range(40):
        token = f"s{i}"
        hub.open(BOT, token, capacity=2)  # a new session: the last round's polls end
        polls = [in_thread(lambda t=token: poll(t)) for _ in range(2)]
        time.sleep(0.01)
        request = delivery(request_id=f"{i:032x}", seconds=10)
        started = time.monotonic()
        worker, _ = in_thread(lambda r=request: hub.deliver(r))
        polls.append(in_thread(lambda t=token: poll(t)))  # beyond the capacity: ends one
        while request.handed_at is None and time.monotonic() - started < 5:
            time.sleep(0.001)
        assert request.handed_at is not None and request.handed_at - started < 2, i
        hub.poll(BOT, token, [(request.request_id, 200, b"{}")], wait=0)
        worker.join(5)
        assert request.outcome == "answer"
    hub.leave(BOT, None, "closed", "the test is over")


def test_a_request_goes_to_the_newest_open_poll():
    """An older open poll may belong to a client whose connection dropped (it polls again
    before the server knows): the newest takes the request, so it is not lost there."""
    hub = Hub()
    hub.open(BOT, "s1", capacity=2)
    for i in range(10):
        older = in_thread(lambda: hub.poll(BOT, "s1", [], wait=0.5))
        time.sleep(0.02)
        newer = in_thread(lambda: hub.poll(BOT, "s1", [], wait=5))
        time.sleep(0.02)
        request = delivery(request_id=f"{i:032x}", seconds=5)
        worker, _ = in_thread(lambda r=request: hub.deliver(r))
        newer[0].join(5)
        older[0].join(5)
        assert newer[1] == [[request]] and older[1] == [[]], i
        hub.poll(BOT, "s1", [(request.request_id, 200, b"{}")], wait=0)
        worker.join(5)
