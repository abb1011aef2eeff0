"""The connect transport, bot side: a bot plays with no listening socket by polling the
arena (docs/protocol.md, "Playing from a laptop"), against a fake arena that checks its
signatures and hands out the golden requests, signed with the SDK's own code.

Same answers as over the webhook, no listening socket, ``capacity`` polls and never more
calls at once, 401 for what the webhook refuses, answers carried again after a dropped
connection, 409 (replaced) stops with status 1, refusals at start are one line and
status 2, Ctrl-C drains."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from arenabot import Bot, BotServer, ConnectClient, as_bot, make_server, sign
from arenabot.server import run
from arenabot.starters import write
from fake_arena import ROOT, BotProcess, FakeArena, golden_requests, listening_sockets

SECRET = "connect-test-secret-0123"
GOLDEN = golden_requests()


# -- bots -------------------------------------------------------------------------------------
class Recorder(Bot):
    """The last legal action with a memo; keeps what it was given."""

    name, author, version, games = "recorder", "tests", "1.0", ["cactus", "president"]

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def start(self, info: dict[str, Any]) -> None:
        self.calls.append(("start", info))

    def on_act(self, request: dict[str, Any]) -> Any:
        self.calls.append(("act", request))
        return request["legal_actions"][-1], f"seat {request['seat']}"

    def end(self, info: dict[str, Any]) -> None:
        self.calls.append(("end", info))


def first_legal(view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
    return legal_actions[0]


class Concurrency(Bot):
    """Counts its calls in progress; with a barrier, each call waits for ``parties``."""

    name, games, thread_safe = "concurrency", ["cactus"], True

    def __init__(self, parties: int | None = None) -> None:
        self.barrier = threading.Barrier(parties, timeout=20) if parties else None
        self.lock = threading.Lock()
        self.now = self.most = self.calls = 0

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
        try:
            if self.barrier is not None:
                self.barrier.wait()  # every call of the round at once, or BrokenBarrierError
            return legal_actions[0]
        finally:
            with self.lock:
                self.now -= 1


class OneAtATime(Concurrency):
    thread_safe = False


# -- running a bot over connect, in-process ---------------------------------------------------
@dataclass
class Running:
    client: ConnectClient
    thread: threading.Thread
    lines: list[str]
    status: list[int] = field(default_factory=list)

    def join(self) -> int:
        self.thread.join(20)
        assert not self.thread.is_alive(), self.lines
        return self.status[0]


@pytest.fixture
def arena() -> Iterator[FakeArena]:
    fake = FakeArena(SECRET)
    yield fake
    fake.close()


@pytest.fixture
def connect(arena: FakeArena) -> Iterator[Callable[..., Running]]:
    """``connect(bot, **options)``: the bot connected to the fake arena, its polls open."""
    running: list[Running] = []

    def start(bot: Any, *, url: str | None = None, wait: bool = True, **options: Any) -> Running:
        lines: list[str] = []
        options.setdefault("backoff_cap", 0.2)
        options.setdefault("secret", SECRET)
        client = ConnectClient(bot, url or arena.url, 1, stderr=lines.append, **options)
        result = Running(client, threading.Thread(target=lambda: None), lines)
        result.thread = threading.Thread(target=lambda: result.status.append(client.run()))
        running.append(result)
        result.thread.start()
        if wait:
            capacity = client.service.capacity
            arena.wait(lambda: arena.stats.open_polls == capacity, what="the bot's polls")
        return result

    yield start
    for result in running:
        result.client.stop()
        result.thread.join(20)


def webhook_answers(bot: Bot, requests: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """(status, body) of each request sent to ``bot`` served over HTTP, signed."""
    server: BotServer = make_server(bot, "127.0.0.1", 0, secret=SECRET)
    server.serve_in_background()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        answers = []
        for path, body in requests:
            raw = json.dumps({**body, "request_id": os.urandom(16).hex()}).encode()
            timestamp = str(int(time.time()))
            headers = {
                "X-Arena-Timestamp": timestamp,
                "X-Arena-Signature": sign(SECRET, timestamp, raw),
            }
            conn.request("POST", path, raw, headers)
            response = conn.getresponse()
            answers.append((response.status, json.loads(response.read())))
        return answers
    finally:
        conn.close()
        server.close()


def connect_answers(arena: FakeArena, requests: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    answers = []
    for path, body in requests:
        answer = arena.answer(arena.submit(path, body))
        answers.append((answer["status"], answer["body"]))
    return answers


# -- the same answers as over the webhook -----------------------------------------------------
def test_a_class_bot_answers_every_golden_request_as_over_the_webhook(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    requests = list(GOLDEN.values())
    over_http = Recorder()
    expected = webhook_answers(over_http, requests)
    bot = Recorder()
    connect(bot)
    assert connect_answers(arena, requests) == expected
    assert [status for status, _ in expected] == [200] * len(requests)
    assert {"action": GOLDEN["act"][1]["legal_actions"][-1], "memo": "seat 1"} in [
        body for _, body in expected
    ]
    # the bot was given exactly what the webhook bot was given, request ids aside
    assert without_ids(bot.calls) == without_ids(over_http.calls)
    assert [body for _, body in without_ids(bot.calls)] == [body for _, body in requests]


def without_ids(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return [(kind, {k: v for k, v in b.items() if k != "request_id"}) for kind, b in calls]


def test_a_function_bot_answers_as_over_the_webhook(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    requests = list(GOLDEN.values())
    expected = webhook_answers(as_bot(first_legal), requests)
    running = connect(first_legal, threads=None)
    assert running.client.bot.name == "test_connect"  # named after its module, as served
    assert connect_answers(arena, requests) == expected


def test_the_bot_opens_no_listening_socket(
    arena: FakeArena, connect: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    for name in ("bind", "listen"):
        original = getattr(socket.socket, name)

        def spy(self: socket.socket, *args: Any, _name: str = name, _f: Any = original) -> Any:
            opened.append(_name)
            return _f(self, *args)

        monkeypatch.setattr(socket.socket, name, spy)
    make_server(first_legal, "127.0.0.1", 0).close()  # the spy sees a server's socket...
    assert opened == ["bind", "listen"]
    opened.clear()
    connect(first_legal)  # ...and none of the connect client's
    assert connect_answers(arena, [GOLDEN["act"]])[0][0] == 200
    assert opened == []


# -- capacity ---------------------------------------------------------------------------------
def test_a_thread_safe_bot_keeps_capacity_polls_and_gets_no_more_calls(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    bot = Concurrency(parties=3)
    connect(bot, threads=3)
    assert arena.session is not None and arena.session.info["capacity"] == 3
    ids = [arena.submit(*GOLDEN["act"]) for _ in range(3)]
    assert [arena.answer(i)["status"] for i in ids] == [200] * 3  # three calls at once
    bot.barrier = None
    ids = [arena.submit(*GOLDEN["act"]) for _ in range(9)]
    assert [arena.answer(i)["status"] for i in ids] == [200] * 9
    assert bot.calls == 12 and bot.most == 3
    arena.wait(lambda: arena.stats.open_polls == 3)
    assert arena.stats.most_open == 3 and arena.stats.bumps == 0  # never a poll too many


def test_a_bot_that_is_not_thread_safe_keeps_one_poll(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    bot = OneAtATime()
    connect(bot)
    assert arena.session is not None and arena.session.info["capacity"] == 1
    ids = [arena.submit(*GOLDEN["act"]) for _ in range(5)]
    assert [arena.answer(i)["status"] for i in ids] == [200] * 5
    assert bot.calls == 5 and bot.most == 1
    assert arena.stats.most_open == 1 and arena.stats.bumps == 0


# -- refusals ---------------------------------------------------------------------------------
def _entry(body: dict[str, Any], *, secret: str = SECRET, skew: int = 0) -> dict[str, Any]:
    raw = json.dumps({**body, "request_id": os.urandom(16).hex()}).encode()
    timestamp = str(int(time.time()) + skew)
    return {
        "path": "/act",
        "body": raw.decode(),
        "timestamp": timestamp,
        "signature": sign(secret, timestamp, raw),
    }


def _tampered(body: dict[str, Any]) -> dict[str, Any]:
    entry = _entry(body)
    return {**entry, "body": entry["body"].replace('"seat": 1', '"seat": 0', 1)}


REFUSED = {
    "the wrong secret": lambda b: _entry(b, secret="another-secret-98765"),
    "a changed body": _tampered,
    "301 s old": lambda b: _entry(b, skew=-301),
    "no signature": lambda b: {k: v for k, v in _entry(b).items() if k != "signature"},
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_request_the_webhook_refuses_is_answered_401_and_not_played(
    arena: FakeArena, connect: Callable[..., Running], case: str
) -> None:
    entry = REFUSED[case](GOLDEN["act"][1])
    raw = entry["body"].encode()
    headers = {"X-Arena-Timestamp": entry["timestamp"]}
    if "signature" in entry:
        headers["X-Arena-Signature"] = entry["signature"]
    server = make_server(Recorder(), "127.0.0.1", 0, secret=SECRET)
    server.serve_in_background()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", "/act", raw, headers)
        response = conn.getresponse()
        over_http = (response.status, json.loads(response.read()))
    finally:
        conn.close()
        server.close()
    bot = Recorder()
    connect(bot)
    arena.resubmit(entry)
    request_id = json.loads(raw)["request_id"]
    answer = arena.answer(request_id)
    assert (answer["status"], answer["body"]) == over_http
    assert answer["status"] == 401 and answer["request_id"] == request_id
    assert bot.calls == []


def test_a_replayed_request_is_answered_401_and_played_once(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    bot = Recorder()
    connect(bot)
    entry = _entry(GOLDEN["act"][1])
    request_id = json.loads(entry["body"])["request_id"]
    arena.resubmit(entry)
    arena.answer(request_id)
    arena.resubmit(entry)  # the same bytes, id, timestamp and signature again
    arena.wait(lambda: len(arena.answers[request_id]) == 2)
    first, second = arena.answers[request_id]
    assert first["status"] == 200
    assert second["status"] == 401 and "replayed" in second["body"]["error"]
    assert len(bot.calls) == 1


# -- network drops, sessions ------------------------------------------------------------------
def test_a_dropped_connection_is_polled_again_with_the_answer_it_carried(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    bot = Recorder()
    running = connect(bot)
    arena.cut_next_answers = True  # the poll carrying the answer arrives, its 200 is lost
    request_id = arena.submit(*GOLDEN["act"])
    arena.wait(lambda: len(arena.answers.get(request_id, [])) == 2, what="the answer again")
    first, again = arena.answers[request_id]
    assert first == again and first["status"] == 200
    assert arena.stats.cut == 1 and arena.stats.sessions == 1  # the same session
    assert len(bot.calls) == 1
    assert connect_answers(arena, [GOLDEN["act_snap"]])[0][0] == 200
    assert any("lost the connection to the arena" in line for line in running.lines)
    assert any("reconnected to the arena" in line for line in running.lines)


def test_a_session_the_arena_ended_is_opened_again(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    running = connect(Recorder())
    arena.end_session()  # 409 "closed": not another copy of the bot
    arena.wait(lambda: arena.stats.sessions == 2 and arena.stats.open_polls == 1)
    assert connect_answers(arena, [GOLDEN["act"]])[0][0] == 200
    assert running.thread.is_alive()
    assert "arenabot: the arena closed the session: opening a new one" in running.lines


def test_a_replaced_session_stops_the_bot_with_status_1(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    running = connect(Recorder())
    arena.replace_session()
    assert running.join() == 1
    assert running.lines[-1] == (
        "arenabot: another copy of bot 1 connected to the arena and replaced this one "
        "(the session was replaced): stopping"
    )
    assert arena.stats.closes == 0  # not this copy's session any more


def test_draining_plays_the_matches_in_play_then_closes(
    arena: FakeArena, connect: Callable[..., Running]
) -> None:
    arena.set_playing(1)
    bot = Concurrency()
    running = connect(bot, threads=2)
    running.client.drain()
    arena.wait(lambda: arena.draining, what="a draining poll")
    assert arena.answer(arena.submit(*GOLDEN["act"]))["status"] == 200  # still played
    arena.wait(lambda: arena.stats.open_polls == 2)
    arena.set_playing(0)
    assert running.join() == 0
    assert arena.stats.closes == 1 and bot.calls == 1
    drained_from = next(i for i, b in enumerate(arena.stats.poll_bodies) if b["draining"])
    assert all(b["draining"] for b in arena.stats.poll_bodies[drained_from:])
    assert running.lines[-1] == "arenabot: drained: every match is over, session closed"


# -- refusals at start: one line, status 2 ----------------------------------------------------
class NotAnArena(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b"<html>no</html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("wrong secret", "the arena refused bot 1's signature (wrong signature): check the bot "
         "id and the secret (--bot-id, --secret or $ARENA_BOT_SECRET) and this machine's clock"),
        ("404", "the arena has no bot 1 that connects (no such bot)"),
        ("409", 'bot 1 is registered with an endpoint, not to connect (an endpoint): its owner '
         'sets {"connect": true} with PATCH /api/bots/1'),
        ("400", "the arena refused the bot's info (not registered for cactus): it declares "
         "games [cactus,president], capacity 1, apiversion 1"),
        ("down", "cannot reach the arena at http://127.0.0.1:{port}: connection refused "
         "(tried for 0.3 s)"),
        ("not an arena", "http://127.0.0.1:{port} is not an arena: POST "
         "/api/connect/session answered HTTP 404 (text/html); check the address (--connect "
         "or $ARENA_SERVER)"),
        # a JSON 404 of some other server (here a bot's own endpoint) is no arena either
        ("a bot's endpoint", "http://127.0.0.1:{port} is not an arena: POST "
         "/api/connect/session answered HTTP 404 (application/json); check the address "
         "(--connect or $ARENA_SERVER)"),
    ],
)  # fmt: skip
def test_a_refused_or_unreachable_session_is_one_line_and_status_2(
    arena: FakeArena, connect: Callable[..., Running], setup: str, words: str
) -> None:
    options: dict[str, Any] = {}
    port = 0
    other: ThreadingHTTPServer | None = None
    endpoint: BotServer | None = None
    if setup == "wrong secret":
        options["secret"] = "not-the-bots-secret"
    elif setup == "down":
        port = _free_port()
        options.update(url=f"http://127.0.0.1:{port}", start_wait=0.3)
    elif setup == "not an arena":
        other = ThreadingHTTPServer(("127.0.0.1", 0), NotAnArena)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        port = other.server_address[1]
        options["url"] = f"http://127.0.0.1:{port}"
    elif setup == "a bot's endpoint":
        endpoint = make_server(as_bot(first_legal), "127.0.0.1", 0, secret=SECRET)
        endpoint.serve_in_background()
        port = endpoint.port
        options["url"] = endpoint.url
    else:
        message = {"404": "no such bot", "409": "an endpoint", "400": "not registered for cactus"}
        arena.refuse_session = (int(setup), {"code": int(setup), "message": message[setup]})
    try:
        running = connect(Recorder(), wait=False, **options)
        assert running.join() == 2
    finally:
        if other is not None:
            other.shutdown()
            other.server_close()
        if endpoint is not None:
            endpoint.close()
    final = "arenabot: " + words.replace("{port}", str(port))
    if setup == "down":  # a first line says it is trying again
        assert running.lines[0].endswith(": trying again")
        assert running.lines[1:] == [final]
    else:
        assert running.lines == [final]


# -- the command line -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--connect", "http://a.example"], {}, "to connect, give the bot's id at the arena: "
         "--bot-id ID (or $ARENA_BOT_ID)"),
        (["--bot-id", "7", "--secret", SECRET], {}, "to connect, give the arena's address: "
         "--connect URL (or $ARENA_SERVER)"),
        (["--connect", "http://a.example", "--bot-id", "seven"], {}, "--bot-id is the bot's "
         "number at the arena, not 'seven'"),
        (["--connect", "http://a.example", "--bot-id", "7"], {}, "to connect, give the bot's "
         "signing secret: --secret S (or $ARENA_BOT_SECRET); the bot signs its polls with it"),
        (["--connect", "http://a.example", "--bot-id", "7", "--port", "9001"], {}, "--port: a "
         "bot that connects to the arena listens on no port (to serve on a port, leave out "
         "--connect and --bot-id)"),
        (["--port", "9001"], {"ARENA_BOT_ID": "7"}, "--port: a bot that connects to the arena "
         "listens on no port (to serve on a port, unset $ARENA_BOT_ID)"),
        (["--connect", "ftp://a.example", "--bot-id", "7", "--secret", SECRET], {},
         "'ftp://a.example' is not an arena's address: give http://host:port or https://host "
         "(--connect or $ARENA_SERVER)"),
    ],
)  # fmt: skip
def test_a_connect_mistake_is_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    for name in ("ARENA_SERVER", "ARENA_BOT_ID", "ARENA_BOT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exited:
        run(first_legal, args, name="first")
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"error: {message}\n") and err.count("\n") == 1


def test_the_environment_alone_connects(arena: FakeArena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SERVER", arena.url)
    monkeypatch.setenv("ARENA_BOT_ID", "1")
    monkeypatch.setenv("ARENA_BOT_SECRET", SECRET)
    made: list[ConnectClient] = []

    def fake_run(self: ConnectClient) -> int:
        made.append(self)
        return 0

    monkeypatch.setattr(ConnectClient, "run", fake_run)
    run(first_legal, [], name="first")
    (client,) = made
    assert (client.url, client.bot_id, client.secret) == (arena.url, 1, SECRET)


# -- as a user runs it: a process, its exit status, its stderr, its sockets -------------------
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc here")


@needs_proc
def test_the_starter_connects_with_no_port_and_drains_on_ctrl_c(
    arena: FakeArena, tmp_path: Path
) -> None:
    write("president", tmp_path / "p", name="shed-low")
    served = BotProcess(["bot.py", "--port", "0"], tmp_path / "p")
    try:
        served.wait_for("listening on")
        assert listening_sockets(served.proc.pid)[1] == 1  # the check sees a listening port
    finally:
        served.kill()
    arena.set_playing(1)
    bot = BotProcess(
        ["bot.py", "--connect", arena.url, "--bot-id", "1"],
        tmp_path / "p",
        {"ARENA_BOT_SECRET": SECRET},
    )
    try:
        bot.wait_for("shed-low 0 connected to")
        arena.wait(lambda: arena.stats.open_polls == 1)
        held, listening = listening_sockets(bot.proc.pid)
        assert held >= 1 and listening == 0  # its poll's connection, and no port
        path, body = GOLDEN["act_president"]
        answer = arena.answer(arena.submit(path, body))
        assert answer["status"] == 200 and answer["body"]["action"] in body["legal_actions"]
        bot.proc.send_signal(signal.SIGINT)
        bot.wait_for("draining: the arena starts no new match; matches in play: 1")
        arena.wait(lambda: arena.draining)
        assert arena.answer(arena.submit(path, body))["status"] == 200  # the match goes on
        arena.set_playing(0)
        status, lines = bot.finish()
    finally:
        bot.kill()
    assert status == 0, lines
    assert lines[-1] == "arenabot: drained: every match is over, session closed"
    assert arena.stats.closes == 1
    assert not any("Traceback" in line for line in lines)


@needs_proc
def test_a_second_ctrl_c_stops_at_once(arena: FakeArena, tmp_path: Path) -> None:
    write("cactus", tmp_path / "c")
    arena.set_playing(2)
    bot = BotProcess(
        ["bot.py"], tmp_path / "c",
        {"ARENA_SERVER": arena.url, "ARENA_BOT_ID": "1", "ARENA_BOT_SECRET": SECRET},
    )  # fmt: skip
    try:
        bot.wait_for("connected to")
        bot.proc.send_signal(signal.SIGINT)
        bot.wait_for("draining")
        bot.proc.send_signal(signal.SIGINT)
        status, lines = bot.finish()
    finally:
        bot.kill()
    assert status == 130 and arena.stats.closes == 0
    assert not any("Traceback" in line for line in lines)


@needs_proc
def test_a_replaced_bot_process_exits_1_with_one_line(arena: FakeArena, tmp_path: Path) -> None:
    write("cactus", tmp_path / "c", name="twin")
    bot = BotProcess(
        ["bot.py", "--connect", arena.url, "--bot-id", "1", "--secret", SECRET], tmp_path / "c"
    )
    try:
        bot.wait_for("connected to")
        arena.wait(lambda: arena.stats.open_polls == 1)
        arena.replace_session()
        status, lines = bot.finish()
    finally:
        bot.kill()
    assert status == 1
    assert lines[1:] == [
        "arenabot: another copy of bot 1 connected to the arena and replaced this one "
        "(the session was replaced): stopping"
    ]


@needs_proc
def test_a_wrong_secret_at_start_is_one_line_and_status_2(arena: FakeArena, tmp_path: Path) -> None:
    write("cactus", tmp_path / "c")
    bot = BotProcess(
        ["bot.py", "--connect", arena.url, "--bot-id", "1", "--secret", "a-wrong-secret-123"],
        tmp_path / "c",
    )
    status, lines = bot.finish()
    assert status == 2
    assert len(lines) == 1 and "the arena refused bot 1's signature (wrong signature)" in lines[0]


@needs_proc
def test_a_sample_bot_plays_over_connect_as_over_the_webhook(arena: FakeArena) -> None:
    pytest.importorskip("arena")
    from sample_bots.policy_bot import PolicyBot

    requests = [GOLDEN[name] for name in ("start", "act", "act_snap", "end")]
    expected = webhook_answers(PolicyBot("cactus", "random"), requests)
    bot = BotProcess(
        ["-m", "sample_bots.cactus_random", "--connect", arena.url, "--bot-id", "1"],
        ROOT,
        {"ARENA_BOT_SECRET": SECRET},
    )
    try:
        bot.wait_for("cactus-random")
        arena.wait(lambda: arena.stats.open_polls == 8)  # a thread-safe bot: 8 polls
        assert listening_sockets(bot.proc.pid)[1] == 0
        assert connect_answers(arena, requests) == expected
        bot.proc.send_signal(signal.SIGTERM)  # as a container is stopped: drains too
        status, lines = bot.finish()
    finally:
        bot.kill()
    assert status == 0, lines
    assert arena.stats.closes == 1


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed: no certificate to test TLS with")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_an_https_arena_is_trusted_as_the_system_trusts_it(
    tmp_path: Path, connect: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = self_signed(tmp_path)
    tls_arena = FakeArena(SECRET, tls=(cert, key))
    try:
        url = tls_arena.url
        assert url.startswith("https://")
        untrusted = connect(Recorder(), url=url, wait=False)
        assert untrusted.join() == 2
        assert len(untrusted.lines) == 1 and untrusted.lines[0].startswith(
            f"arenabot: the arena at {url} has a certificate this machine does not trust: "
        )
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # as if the system trusted it
        connect(Recorder(), url=url, wait=False)
        tls_arena.wait(lambda: tls_arena.stats.open_polls == 1)
        answer = tls_arena.answer(tls_arena.submit(*GOLDEN["act"]))
        assert answer["status"] == 200
    finally:
        tls_arena.close()
