"""The bot server: protocol answers, signatures, errors, keep-alive and one write per
response."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from arenabot import API_VERSION, Bot, BotServer, make_server
from arenabot import server as server_module
from conftest import SECRET, Client, EchoBot, act_body, fresh_request_id, now

Serve = Callable[..., BotServer]
Connect = Callable[..., Client]


def test_get_root_gives_the_bot_info_unsigned(serve: Serve, client: Connect) -> None:
    status, body, response = client(serve(EchoBot())).get("/")
    assert status == 200
    assert body == {
        "apiversion": API_VERSION,
        "name": "echo",
        "author": "tests",
        "version": "1.2",
        "games": ["cactus"],
        "capacity": 1,
    }
    assert response.getheader("Content-Type") == "application/json"


def test_a_signed_act_gets_an_action(serve: Serve, client: Connect) -> None:
    status, body, _ = client(serve(EchoBot())).post("/act", act_body())
    assert (status, body) == (200, {"action": {"type": "draw"}})


def test_act_may_return_a_memo(serve: Serve, client: Connect) -> None:
    status, body, _ = client(serve(EchoBot())).post(
        "/act", act_body(legal_actions=[{"type": "memo"}])
    )
    assert (status, body) == (200, {"action": {"type": "memo"}, "memo": "thinking"})


def test_start_and_end_reach_the_bot_and_answer_empty(serve: Serve, client: Connect) -> None:
    bot = EchoBot()
    c = client(serve(bot))
    start = {"match_id": "m1", "game": "cactus", "options": {}, "seat": 1, "players": ["a", "b"]}
    end = {"match_id": "m1", "game": "cactus", "seat": 1, "outcome": {"ranks": [1, 2]}, "view": {}}
    start["request_id"], end["request_id"] = fresh_request_id(), fresh_request_id()
    assert c.post("/start", start)[:2] == (200, {})
    assert c.post("/end", end)[:2] == (200, {})
    assert bot.started == [start]
    assert bot.ended == [end]


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"sign": False}, "missing"),
        ({"headers": {"X-Arena-Signature": "sha256=" + "0" * 64}}, "wrong signature"),
        ({"timestamp": 1_000_000_000}, "away from the bot's clock"),
        ({"headers": {"X-Arena-Timestamp": "soon"}}, "decimal integer"),
    ],
)
def test_bad_signatures_are_401(
    serve: Serve, client: Connect, kwargs: dict[str, Any], reason: str
) -> None:
    status, body, response = client(serve(EchoBot())).post("/act", act_body(), **kwargs)
    assert status == 401
    assert reason in body["error"]
    assert response.getheader("Connection") != "close"  # the body was read: keep-alive


def test_a_timestamp_too_far_for_max_skew_is_401(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot(), max_skew=10))
    assert c.post("/act", act_body(), timestamp=now() - 60)[0] == 401
    assert c.post("/act", act_body(), timestamp=now() - 5)[0] == 200


def test_another_secret_is_401(serve: Serve, client: Connect) -> None:
    assert client(serve(EchoBot()), secret="not-it").post("/act", act_body())[0] == 401


def test_without_a_secret_nothing_is_checked_and_a_warning_says_so(
    serve: Serve, client: Connect, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve(EchoBot(), secret=None)
    assert "NOT checked" in capsys.readouterr().err
    status, body, _ = client(server, secret=None).post("/act", act_body())
    assert (status, body) == (200, {"action": {"type": "draw"}})


def test_with_a_secret_there_is_no_warning(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    serve(EchoBot())
    assert "NOT checked" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("path", "raw", "reason"),
    [
        ("/act", b"{not json", "not UTF-8 JSON"),
        ("/act", b"\xff\xfe{}", "not UTF-8 JSON"),
        ("/act", b"", "not UTF-8 JSON"),
        ("/act", b"[1, 2]", "JSON object"),
        ("/act", json.dumps({"match_id": "m1"}).encode(), "missing field(s): decision_id"),
        ("/act", json.dumps(act_body(legal_actions=[])).encode(), "non-empty list"),
        ("/start", json.dumps({"match_id": "m1", "game": "cactus"}).encode(), "options"),
        ("/end", json.dumps({"match_id": "m1"}).encode(), "outcome"),
    ],
)
def test_bad_bodies_are_400(
    serve: Serve, client: Connect, path: str, raw: bytes, reason: str
) -> None:
    c = client(serve(EchoBot()))
    status, body, _ = c.post(path, raw)
    assert status == 400
    assert reason in body["error"]
    assert c.post("/act", act_body())[0] == 200  # the same connection goes on


def test_unknown_paths_are_404(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot()))
    assert c.get("/nothing")[0] == 404
    status, body, _ = c.post("/nothing", act_body())
    assert status == 404
    assert "error" in body


def test_an_unsupported_method_gets_a_json_error(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot()))
    c.conn.request("PUT", "/act", b"{}")
    status, body, response = c._read()
    assert status == 501
    assert "error" in body
    assert response.getheader("Connection") == "close"


def test_a_malformed_request_gets_a_json_error(serve: Serve) -> None:
    server = serve(EchoBot())
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        data = _read_all(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert "error" in json.loads(body)


def test_a_body_over_the_cap_is_413_and_closes(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot(), max_body=1000))
    status, body, response = c.post("/act", act_body(view={"pad": "x" * 2000}))
    assert status == 413
    assert "larger than 1000 bytes" in body["error"]
    assert response.getheader("Connection") == "close"
    assert c.post("/act", act_body())[0] == 200  # http.client opens a new connection


def test_chunked_bodies_are_refused(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot()))
    c.conn.request("POST", "/act", iter([b"{}"]), {"Transfer-Encoding": "chunked"})
    status, body, _ = c._read()
    assert status == 411
    assert "Content-Length" in body["error"]


def test_a_bot_exception_is_500_and_the_server_goes_on(
    serve: Serve, client: Connect, capsys: pytest.CaptureFixture[str]
) -> None:
    c = client(serve(EchoBot()))
    status, body, _ = c.post("/act", act_body(legal_actions=[{"type": "boom"}]))
    assert status == 500
    assert body == {"error": "the bot raised RuntimeError: boom"}
    assert "RuntimeError: boom" in capsys.readouterr().err  # the traceback, for the author
    assert c.post("/act", act_body())[:2] == (200, {"action": {"type": "draw"}})
    assert c.get("/")[0] == 200


def test_an_answer_that_is_not_json_is_500(serve: Serve, client: Connect) -> None:
    class SetBot(Bot):
        def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
            return {"type": {1, 2}}

    c = client(serve(SetBot()))
    status, body, _ = c.post("/act", act_body())
    assert status == 500
    assert "TypeError" in body["error"]


def test_keep_alive_serves_two_requests_on_one_connection(
    serve: Serve, client: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(EchoBot())
    accepted = _record_writes(server, monkeypatch)
    c = client(server)
    assert c.post("/act", act_body())[0] == 200
    sock = c.conn.sock
    assert sock is not None
    status, _, response = c.post("/act", act_body(decision_id="1:0"))
    assert status == 200
    assert c.conn.sock is sock
    assert response.version == 11
    assert response.getheader("Connection") is None
    assert len(accepted) == 1


def test_an_http_1_0_request_is_answered_then_closed(serve: Serve) -> None:
    server = serve(EchoBot())
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        data = _read_all(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"Connection: close" in head
    assert json.loads(body)["name"] == "echo"


def test_each_response_is_one_write_on_a_nodelay_socket(
    serve: Serve, client: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(EchoBot())
    sockets = _record_writes(server, monkeypatch)
    c = client(server)
    rounds = 50
    for i in range(rounds):
        legal = [{"type": "boom"}] if i == 7 else [{"type": "draw"}]  # a 500 too
        c.post("/act", act_body(decision_id=f"{i}:0", legal_actions=legal))
    c.post("/act", b"{not json")
    c.get("/")
    c.get("/missing")
    assert len(sockets) == 1
    (writes,) = sockets.values()
    assert all(nodelay for _, nodelay in writes)
    assert len(writes) == rounds + 3
    for write, _ in writes:  # each write is a whole response: head and body
        head, _, body = write.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 ")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.startswith(b"Content-Length")
        )
        assert length == len(body)
        json.loads(body)


def test_a_bot_that_is_not_thread_safe_is_called_one_at_a_time(
    serve: Serve, client: Connect
) -> None:
    class Counting(Bot):
        def __init__(self) -> None:
            self.inside = 0
            self.most = 0

        def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
            self.inside += 1
            self.most = max(self.most, self.inside)
            time.sleep(0.01)  # leaves room for another thread to come in if it could
            self.inside -= 1
            return legal_actions[0]

    bot = Counting()
    server = serve(bot)
    statuses = _in_parallel([client(server) for _ in range(4)], rounds=5)
    assert statuses == [200] * 20
    assert bot.most == 1


def test_a_thread_safe_bot_is_called_concurrently(serve: Serve, client: Connect) -> None:
    barrier = threading.Barrier(2, timeout=10)

    class Parallel(Bot):
        thread_safe = True

        def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
            barrier.wait()  # passes only when two calls are inside at once
            return legal_actions[0]

    server = serve(Parallel())
    assert _in_parallel([client(server) for _ in range(2)], rounds=1) == [200, 200]


def test_close_ends_idle_keep_alive_connections(client: Connect) -> None:
    server = make_server(EchoBot(), "127.0.0.1", 0, secret=SECRET)
    server.serve_in_background()
    c = client(server)
    assert c.post("/act", act_body())[0] == 200
    assert c.conn.sock is not None
    server.close()
    assert c.conn.sock.recv(1) == b""  # the server's end is closed
    assert not [t for t in threading.enumerate() if t.name.startswith("arenabot-")]
    with pytest.raises(OSError):
        c.post("/act", act_body())


def test_a_server_that_never_served_closes(client: Connect) -> None:
    with make_server(EchoBot(), "127.0.0.1", 0, secret=SECRET) as server:
        assert server.url == f"http://127.0.0.1:{server.port}"


def test_run_reads_the_command_line_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_serve(*args: Any, **kwargs: Any) -> None:
        calls.append((*args, kwargs))

    monkeypatch.setattr(server_module, "serve", fake_serve)
    monkeypatch.setenv(server_module.SECRET_ENV, "from-env")
    bot = EchoBot()
    server_module.run(bot, ["--port", "9001", "--host", "0.0.0.0"])
    server_module.run(bot, ["--port", "9002", "--secret", "given", "--max-skew", "60"])
    assert calls == [
        (bot, "0.0.0.0", 9001, "from-env", 300, {"verbose": False}),
        (bot, "127.0.0.1", 9002, "given", 60, {"verbose": False}),
    ]


# -- helpers -----------------------------------------------------------------------------


def _record_writes(
    server: BotServer, monkeypatch: pytest.MonkeyPatch
) -> dict[Any, list[tuple[bytes, bool]]]:
    """Every write the server makes on the sockets it accepted from now on, by client
    address: its bytes, and whether TCP_NODELAY was on."""
    writes: dict[Any, list[tuple[bytes, bool]]] = {}

    def recording(name: str) -> Callable[..., Any]:
        original = getattr(socket.socket, name)

        def write(sock: socket.socket, data: Any, *args: Any) -> Any:
            tcp = sock.family in (socket.AF_INET, socket.AF_INET6)
            if tcp and sock.getsockname()[1] == server.port:
                nodelay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
                writes.setdefault(sock.getpeername(), []).append((bytes(data), nodelay))
            return original(sock, data, *args)

        return write

    for name in ("send", "sendall", "sendmsg"):
        monkeypatch.setattr(socket.socket, name, recording(name))
    return writes


def _in_parallel(clients: list[Client], rounds: int) -> list[int]:
    statuses: list[int] = []
    lock = threading.Lock()

    def work(c: Client) -> None:
        for i in range(rounds):
            status = c.post("/act", act_body(decision_id=f"{i}:0"))[0]
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
