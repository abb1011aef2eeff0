"""The worker's side of the connect transport (``arena.relay.client``) against real web
process relays (``arena.relay.internal``, each with its listener on loopback) and a bot
taking its requests from their hubs as the connect endpoints do: the bot gets the
webhook's signed body, its answer and its own latency come back, and a session that moves
between homes, or a home that dies, costs the bot no fault while it is back in time."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.match.exchanges import settle
from arena.match.faults import BotFault
from arena.match.http_client import HttpClient
from arena.match.pools import Pools
from arena.relay.client import RelayClient
from arena.relay.hub import Hub, Replaced
from arena.relay.internal import Relay, check_signature

BOT, SECRET = 7, "s3cret-s3cret-s3cret"
PAYLOAD = {"match_id": "m-1", "seat": 0, "deadline_ms": 800, "legal_actions": [{"type": "pass"}]}


class Bot:
    """A connected bot in a thread: polls ``hub`` with session ``token`` and answers each
    request after ``think`` seconds with ``answer(body)``; keeps what it received."""

    def __init__(self, hub: Hub, token: str, think: float = 0.0,
                 answer: Callable[[dict[str, Any]], Any] | None = None):  # fmt: skip
        self.hub, self.token, self.think = hub, token, think
        self.answer = answer or (lambda body: {"action": body["legal_actions"][0]})
        self.received: list[dict[str, Any]] = []
        self.raw_bodies: list[bytes] = []
        self.stop = threading.Event()
        hub.open(BOT, token, capacity=4)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        answers: list[tuple[str, int, bytes]] = []
        while not self.stop.is_set():
            try:
                handed = self.hub.poll(BOT, self.token, answers, wait=0.2)
            except Replaced:
                return
            answers = []
            for delivery in handed:
                wire = delivery.wire()
                assert not check_signature(SECRET, wire["timestamp"], wire["signature"],
                                           wire["body"].encode())  # fmt: skip
                body = orjson.loads(wire["body"])
                self.raw_bodies.append(wire["body"].encode())
                self.received.append(body)
                if self.stop.wait(self.think):
                    return  # stopped while thinking: never answers
                answers.append((body["request_id"], 200, orjson.dumps(self.answer(body))))
        if answers:
            with contextlib.suppress(Replaced):  # the session left meanwhile
                self.hub.poll(BOT, self.token, answers, wait=0)


@pytest.fixture
def homes():
    relays = [Relay(lambda bot_id: SECRET if bot_id == BOT else None) for _ in range(2)]
    yield relays
    for relay in relays:
        relay.close()


@pytest.fixture(autouse=True)
def pools():
    """The worker's pools of connections to the homes, closed after each test."""
    made = Pools()
    _POOLS.append(made)
    yield made
    _POOLS.remove(made)
    made.close()


_POOLS: list[Pools] = []


def client(locate: Callable[[], str | None]) -> RelayClient:
    return RelayClient(BOT, SECRET, "laptop", locate=locate, pools=_POOLS[-1], capacity=4)


def ask(relay_client: RelayClient, payload: dict[str, Any] = PAYLOAD) -> tuple[Any, float]:
    """The answer (or the fault) and the latency the referee would record, in ms."""
    exchange = relay_client.begin_act(payload)
    settle([exchange])
    latency = (exchange.finished - exchange.started) * 1000.0
    try:
        return exchange.result(), latency
    except BotFault as fault:
        return fault, latency


def test_the_bot_gets_the_webhook_body_and_its_own_latency_is_recorded(homes):
    home = homes[0]
    bot = Bot(home.hub, "s1", think=0.05)
    try:
        answer, latency = ask(client(home.home))
    finally:
        bot.stop.set()
    assert answer == {"action": {"type": "pass"}}
    [body] = bot.received
    assert body == {**PAYLOAD, "request_id": body["request_id"]}  # what a webhook gets
    assert 50 <= latency < 250  # the bot's thinking, not the poll's wait or the relay's hop


def connect_later(
    home: Relay, where: list[str | None], delay: float, then: Callable[[], None] | None = None
) -> list[Bot]:
    """After ``delay`` seconds the bot polls ``home``, which becomes its home in ``where``
    (what ``locate`` reads), then ``then()``; the bot is in the list returned by then."""
    came: list[Bot] = []

    def run() -> None:
        time.sleep(delay)
        came.append(Bot(home.hub, "s1"))
        where[0] = home.home()
        if then is not None:
            then()

    threading.Thread(target=run, daemon=True).start()
    return came


def test_a_bot_not_connected_yet_has_the_rest_of_its_deadline_to_come(homes):
    where: list[str | None] = [None]
    late = connect_later(homes[0], where, 0.3)
    answer, _ = ask(client(lambda: where[0]))
    late[0].stop.set()
    assert answer == {"action": {"type": "pass"}}


def test_a_bot_that_never_connects_is_a_disconnected_fault_at_its_deadline():
    started = time.monotonic()
    fault, _ = ask(client(lambda: None))
    assert isinstance(fault, BotFault) and fault.kind == "disconnected"
    assert "not connected" in fault.detail
    assert time.monotonic() - started >= 0.8  # the whole deadline was given


def test_a_session_moved_to_another_home_mid_request_is_asked_there_without_a_fault(homes):
    first, second = homes
    where: list[str | None] = [first.home()]
    Bot(first.hub, "s1", think=10.0).stop.set()  # takes the request, never answers

    def left_first() -> None:  # the other process took the session over
        first.hub.leave(BOT, "s1", "moved", "taken over by another web process")

    moved = connect_later(second, where, 0.2, then=left_first)
    answer, _ = ask(client(lambda: where[0]))
    moved[0].stop.set()
    assert answer == {"action": {"type": "pass"}}
    assert moved[0].received and moved[0].received[0]["request_id"]


def test_a_home_that_dies_is_replaced_by_the_next_one_the_bot_polls(homes):
    first, second = homes
    where: list[str | None] = [first.home()]
    first.close()  # the web process holding the session is gone
    back = connect_later(second, where, 0.2)
    answer, _ = ask(client(lambda: where[0]))
    back[0].stop.set()
    assert answer == {"action": {"type": "pass"}}


class Doomed:
    """A home's process as the worker reaches it, until it dies: a TCP forwarder to the
    home whose ``die()`` cuts every connection at once, as a killed process's kernel does
    (closing the relay's listener alone leaves a request in flight to finish)."""

    def __init__(self, home: str):
        self.target = int(home.rsplit(":", 1)[1])
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.home = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.target))
                self.sockets += [client, upstream]
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)

    def die(self) -> None:
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_a_home_that_dies_late_in_a_request_costs_the_bot_no_fault(homes):
    """The arena's crash never costs a bot a fault: the home dies when most of the
    deadline (1.05 s) is spent and the bot is back past it; it is given a whole deadline
    to come back, and a whole one again once the request is handed to it."""
    first, second = homes
    doomed = Doomed(first.home())
    where: list[str | None] = [doomed.home]
    held = Bot(first.hub, "s1", think=10.0)  # takes the request, is still thinking

    def crash() -> None:
        time.sleep(0.7)
        doomed.die()  # the web process dies under the request

    threading.Thread(target=crash, daemon=True).start()
    back = connect_later(second, where, 1.3)  # 0.25 s past the first deadline
    started = time.monotonic()
    answer, _ = ask(client(lambda: where[0]))
    held.stop.set()
    assert answer == {"action": {"type": "pass"}}
    back[0].stop.set()
    assert time.monotonic() - started > 1.05  # it was answered past the first deadline


def test_a_bot_gone_for_good_is_a_disconnected_fault_saying_it_was_lost(homes):
    first = homes[0]
    home = first.home()
    first.close()
    fault, _ = ask(client(lambda: home))
    assert isinstance(fault, BotFault) and fault.kind == "disconnected"
    assert "lost" in fault.detail


def test_a_bot_that_takes_too_long_is_a_timeout_like_a_webhook_bot(homes):
    home = homes[0]
    bot = Bot(home.hub, "s1", think=1.5)
    try:
        fault, latency = ask(client(home.home))
    finally:
        bot.stop.set()
    assert isinstance(fault, BotFault) and fault.kind == "timeout"
    assert latency < 2000


# -- the same bodies as a webhook bot ------------------------------------------------------
GOLDEN = re.compile(r"<!-- golden: ([a-z_]+) -->\s*```json\n(.*?)```", re.S)
DOCS = Path(__file__).resolve().parent.parent / "docs"


def golden_requests() -> dict[str, tuple[str, dict[str, Any]]]:
    """The protocol's golden requests, and an /act of each game from its rules' golden
    view and legal actions: name -> (path, body without its request_id)."""
    protocol = {n: json.loads(b) for n, b in GOLDEN.findall((DOCS / "protocol.md").read_text())}
    found = {
        name: (f"/{name.split('_')[0]}", {k: v for k, v in body.items() if k != "request_id"})
        for name, body in protocol.items()
        if name != "info"
    }
    for rules in sorted((DOCS / "rules").glob("*.md")):
        parts = {n: json.loads(b) for n, b in GOLDEN.findall(rules.read_text())}
        body = dict(found["act"][1])
        body.update(game=rules.stem, view=parts["view"],
                    legal_actions=parts["legal_actions"])  # fmt: skip
        found[f"act_{rules.stem}"] = ("/act", body)
    return found


class Recorder(BaseHTTPRequestHandler):
    """A webhook bot that keeps the raw body of every request."""

    bodies: list[bytes] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Recorder.bodies.append(body)
        reply = b'{"action": {"type": "pass"}}' if self.path == "/act" else b"{}"
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


@pytest.mark.parametrize("name", sorted(golden_requests()))
def test_a_connect_bot_receives_the_bytes_a_webhook_bot_receives(homes, pools, name):
    path, body = golden_requests()[name]
    webhook = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=webhook.serve_forever, args=(0.05,), daemon=True).start()
    home = homes[0]
    bot = Bot(home.hub, "s1", answer=lambda b: {"action": {"type": "pass"}} if "view" in b else {})
    try:
        Recorder.bodies.clear()
        address = f"http://127.0.0.1:{webhook.server_address[1]}"
        hook = HttpClient(address, SECRET, "hook", pool=pools.get(address))
        relayed = client(home.home)
        for transport in (hook, relayed):
            transport.finish(transport.begin(path, body, 5.0))
    finally:
        bot.stop.set()
        webhook.shutdown()
        webhook.server_close()
    [sent] = Recorder.bodies
    [received] = bot.raw_bodies
    ids = (json.loads(sent)["request_id"], json.loads(received)["request_id"])
    assert ids[0] != ids[1]  # each request its own id ...
    assert received == sent.replace(ids[0].encode(), ids[1].encode())  # ... else the same bytes
