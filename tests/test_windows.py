"""Reaction windows over real sockets: each answer judged on its own deadline, and a
bot's declared capacity respected (never more of its requests in flight, and the time
spent waiting for its free slot never charged to it)."""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pytest

from arena import services
from arena.config import Config
from arena.games import GAMES
from arena.games.base import Outcome, Request
from arena.match import http_client
from arena.match.faults import BotFault
from arena.match.http_client import HttpClient
from arena.match.pools import Pools
from arena.match.referee import MatchRecord, Referee

PASS, SNAP = {"type": "pass"}, {"type": "snap"}


@dataclass
class WindowsState:
    players: int
    left: int
    options: dict = field(default_factory=dict)
    events: list = field(default_factory=list)


class Windows:
    """A game that is nothing but reaction windows: every step asks every seat at once
    whether it snaps, ``windows`` times (``options["windows"]``)."""

    id = "windows"

    def new_state(self, players: int, seed: int, options: dict | None) -> WindowsState:
        return WindowsState(players, (options or {}).get("windows", 10))

    def options_json(self, options: dict) -> dict:
        return options

    def pending(self, state: WindowsState) -> list[Request]:
        if not state.left:
            return []
        return [Request(seat, "snap", [PASS, SNAP], PASS) for seat in range(state.players)]

    def view(self, state: WindowsState, seat: int) -> dict:
        return {"seat": seat, "left": state.left}

    def apply(self, state: WindowsState, answers: dict) -> None:
        state.left -= 1

    def outcome(self, state: WindowsState) -> Outcome | None:
        if state.left:
            return None
        return Outcome(ranks=[1] * state.players, scores=[0.0] * state.players)


@pytest.fixture(autouse=True)
def windows_game(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GAMES, "windows", Windows())


class Snapper:
    """An in-process bot (like a house bot): it snaps at once."""

    name = "snapper"

    def start(self, info: dict[str, Any]) -> None:
        pass

    def act(self, payload: dict[str, Any]) -> Any:
        return {"action": SNAP}

    def end(self, info: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def bot(
    think: float | None = 0.0, trickle: float | None = None, one_at_a_time: bool = False
) -> Iterator[dict[str, Any]]:
    """A loopback bot that snaps ``think`` seconds after reading an ``/act`` (None: it
    never answers one), one byte every ``trickle`` seconds if given, and answers anything
    else at once.  ``one_at_a_time``: it thinks about one request at a time, as a bot
    that is not thread-safe does.  It counts the ``/act`` requests it has read and not
    yet answered: now (``in_flight``) and at most at once (``peak``)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stats: dict[str, Any] = {"in_flight": 0, "peak": 0, "asked": 0}
    stats["url"] = f"http://127.0.0.1:{listener.getsockname()[1]}"
    lock, thinking = threading.Lock(), threading.Lock()
    stopping = threading.Event()

    def answer(conn: socket.socket, body: bytes) -> None:
        data = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        if trickle is None:
            conn.sendall(data)
            return
        for i in range(len(data)):
            conn.sendall(data[i : i + 1])
            if stopping.wait(trickle):
                return

    def serve(conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        with conn, reader:
            try:
                while (line := reader.readline()) and not stopping.is_set():
                    length = 0
                    while (header := reader.readline()) not in (b"\r\n", b""):
                        if header.lower().startswith(b"content-length:"):
                            length = int(header.split(b":")[1])
                    reader.read(length)
                    if not line.startswith(b"POST /act "):
                        answer(conn, b"{}")
                        continue
                    with lock:
                        stats["asked"] += 1
                        stats["in_flight"] += 1
                        stats["peak"] = max(stats["peak"], stats["in_flight"])
                    if think is None:
                        stopping.wait()
                        return
                    with thinking if one_at_a_time else nullcontext():
                        time.sleep(think)
                        with lock:
                            stats["in_flight"] -= 1
                    answer(conn, json.dumps({"action": SNAP}).encode())
            except OSError:
                return

    def accept() -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield stats
    finally:
        stopping.set()
        thread.join()
        listener.close()


def decisions(record: MatchRecord, seat: int) -> list[dict[str, Any]]:
    return [d for step in record.steps for d in step if d["seat"] == seat]


# -- each answer judged on its own deadline ------------------------------------------------
DEADLINE_MS = 50
GRACE = 0.02


@pytest.mark.parametrize("slow_first", [True, False], ids=["slow seat first", "slow seat last"])
@pytest.mark.parametrize(("slow", "windows"), [("silent", 100), ("trickling", 30)])
def test_a_slow_seat_never_costs_a_fast_seat_a_strike_or_its_latency(
    monkeypatch, slow, windows, slow_first
):
    """A window asks a bot that never answers (or trickles its answer a byte at a time)
    and a bot that answers at once.  In whichever order their connection pools were made
    (the order the referee once read answers in), the fast bot's answer is taken when it
    arrives: no fault, and its latency is its own, not the slow bot's wait."""
    monkeypatch.setattr(http_client, "DEADLINE_GRACE", GRACE)
    trickle = 0.005 if slow == "trickling" else None  # ~250 ms for its answer
    with bot(None if slow == "silent" else 0.0, trickle) as slow_bot, bot() as fast_bot:
        urls = [slow_bot["url"], fast_bot["url"]]
        made = {u: HttpClient(u, None, u) for u in (urls if slow_first else urls[::-1])}
        record = Referee(max_strikes=10**6, deadline_ms=DEADLINE_MS).run(
            "windows", [made[u] for u in urls], seed=1, options={"windows": windows}
        )
        for client in made.values():
            client.close()
    slow_seat, fast_seat = decisions(record, 0), decisions(record, 1)
    assert len(fast_seat) == windows
    assert [d["fault"] for d in slow_seat] == ["timeout"] * windows
    assert [d for d in fast_seat if "fault" in d] == []
    waited = [d["latency_ms"] for d in slow_seat]  # the slow seat's deadline, each window
    fast = [d["latency_ms"] for d in fast_seat]
    assert all(f < w for f, w in zip(fast, waited, strict=True))
    assert statistics.median(fast) < statistics.median(waited) / 4


class Handed:
    """An exchange answered by another thread (as a bot that connects out to the arena
    and takes its requests from a queue would): nothing to poll, woken when the answer
    is handed over, due at its deadline."""

    def __init__(self, answer_after: float, seconds: float):
        self.answer_after, self.seconds = answer_after, seconds
        self.done, self.started, self.finished = False, 0.0, 0.0
        self.at: float | None = None
        self.answer: Any = None

    def advance(self, waker: Any) -> None:
        if self.done:
            return
        if self.at is None:  # first advance: hand the request over, be woken for the answer
            self.started, self.at = time.perf_counter(), time.monotonic() + self.seconds
            waker.arm()

            def answer() -> None:
                time.sleep(self.answer_after)
                self.answer = {"action": SNAP}
                waker.wake(self)

            threading.Thread(target=answer, daemon=True).start()
        elif self.answer is not None or time.monotonic() >= self.at:
            self.done, self.finished = True, time.perf_counter()

    def watch(self) -> None:
        return None

    def due(self) -> float | None:
        return self.at

    def result(self) -> Any:
        if self.answer is None:
            raise BotFault("timeout", f"no answer within {self.seconds:.2f}s")
        return self.answer

    def cancel(self) -> None:
        self.done = True


class HandedClient(Snapper):
    name = "handed"

    def begin_act(self, payload: dict[str, Any]) -> Handed:
        return Handed(0.002, payload["deadline_ms"] / 1000)


def test_an_exchange_woken_by_another_thread_takes_part_in_a_window(monkeypatch):
    """The window's wait is not HTTP's own: an exchange answered through a queue by
    another thread is taken as soon as it is woken, beside a silent HTTP bot."""
    monkeypatch.setattr(http_client, "DEADLINE_GRACE", GRACE)
    with bot(None) as silent:
        client = HttpClient(silent["url"])
        record = Referee(max_strikes=10**6, deadline_ms=DEADLINE_MS).run(
            "windows", [client, HandedClient()], seed=1, options={"windows": 10}
        )
        client.close()
    handed, waited = decisions(record, 1), [d["latency_ms"] for d in decisions(record, 0)]
    assert [d for d in handed if "fault" in d] == []
    assert all(d["latency_ms"] < w for d, w in zip(handed, waited, strict=True))


# -- a bot's capacity -------------------------------------------------------------------------
CAPACITY_DEADLINE_MS = 200


def test_a_bot_of_capacity_one_is_asked_one_request_at_a_time_by_every_match(monkeypatch):
    """A bot that takes one request at a time, thinking for half the deadline, seated in
    four matches played at once by one process: the arena never has two of its requests
    in flight, and the time a request waits for the bot to be free is not the bot's."""
    monkeypatch.setattr(http_client, "DEADLINE_GRACE", 0.05)
    pools = Pools()
    with bot(CAPACITY_DEADLINE_MS / 2000, one_at_a_time=True) as slow:
        records: list[MatchRecord] = []

        def match(m: int) -> None:
            client = HttpClient(slow["url"], None, "one", pool=pools.get(slow["url"], capacity=1))
            referee = Referee(deadline_ms=CAPACITY_DEADLINE_MS)
            records.append(referee.run("windows", [client, Snapper()], m, {"windows": 4}))

        threads = [threading.Thread(target=match, args=(m,)) for m in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        pools.close()
    assert len(records) == 4 and slow["asked"] == 16
    assert slow["peak"] == 1
    assert [d for r in records for step in r.steps for d in step if "fault" in d] == []


def test_a_bot_seated_twice_is_asked_in_turn_without_stopping_its_window(monkeypatch):
    """Capacity 1, the bot seated twice in one window beside a fast bot: its two requests
    go one after the other, the second's deadline starting when it is sent (two answers
    in a row take longer than one deadline), and the fast bot is read meanwhile."""
    monkeypatch.setattr(http_client, "DEADLINE_GRACE", 0.05)
    think = 0.7 * CAPACITY_DEADLINE_MS / 1000  # two in a row: past deadline and grace
    pools = Pools(max_connections=4)
    with bot(think) as twin, bot() as fast:
        seats = [
            HttpClient(twin["url"], None, "twin", pool=pools.get(twin["url"], capacity=1)),
            HttpClient(twin["url"], None, "twin", pool=pools.get(twin["url"], capacity=1)),
            HttpClient(fast["url"], None, "fast", pool=pools.get(fast["url"])),
        ]
        record = Referee(deadline_ms=CAPACITY_DEADLINE_MS).run(
            "windows", seats, seed=3, options={"windows": 5}
        )
        pools.close()
    assert twin["peak"] == 1 and twin["asked"] == 10
    assert [d for step in record.steps for d in step if "fault" in d] == []
    assert all(d["latency_ms"] < think * 1000 for d in decisions(record, 2))


def test_a_bot_that_declares_more_capacity_gets_it_at_once(monkeypatch):
    """The pool follows the bot's latest declaration: requests waiting for its one slot
    are all sent once it declares three, while the first is still in flight."""
    pools = Pools(max_connections=8)
    with bot(0.4) as slow:
        pool = pools.get(slow["url"], capacity=1)
        answers: list[Any] = []
        threads = [
            threading.Thread(
                target=lambda n=n: answers.append(
                    HttpClient(slow["url"], None, "b", pool=pool).act(
                        {"legal_actions": [PASS, SNAP], "decision_id": str(n)}
                    )
                )
            )
            for n in range(3)
        ]
        for t in threads:
            t.start()
        time.sleep(0.15)
        assert slow["in_flight"] == 1
        assert pools.get(slow["url"], capacity=3) is pool
        for t in threads:
            t.join(10)
        pools.close()
    assert answers == [{"action": SNAP}] * 3
    assert slow["peak"] == 3


def test_a_pool_is_sized_by_the_declared_capacity_within_the_process_bound():
    pools = Pools(max_connections=8)
    url = "http://127.0.0.1:9"
    assert pools.get(url, capacity=2).max_connections == 2
    assert pools.get(url, capacity=100).max_connections == 8
    assert pools.get(url, capacity=1).max_connections == 1
    assert pools.get(url).max_connections == 8  # no declaration (any more): the bound
    for wrong in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError):
            pools.get(url, capacity=wrong)  # type: ignore[arg-type]


def test_registration_keeps_a_valid_capacity_and_refuses_a_wrong_one():
    config = Config()

    def declaring(**extra: Any) -> dict[str, Any]:
        answer = {"apiversion": "1", "games": ["cactus"], **extra}
        return services.fetch_bot_info(config, "http://127.0.0.1:9", lambda _: answer)

    assert declaring(capacity=1)["capacity"] == 1
    assert declaring(capacity=1024)["capacity"] == 1024
    assert "capacity" not in declaring()
    assert "capacity" not in declaring(capacity=None)
    for wrong in (0, 1025, -3, 2.5, "4", True, [1]):
        with pytest.raises(services.ServiceError) as refused:
            declaring(capacity=wrong)
        assert refused.value.status == 400
        assert "capacity" in str(refused.value) and "1 to 1024" in str(refused.value)
