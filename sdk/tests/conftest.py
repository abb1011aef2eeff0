"""Fixtures: bots served on a free loopback port, and a small signed-request client."""

from __future__ import annotations

import http.client
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from arenabot import Bot, BotServer, make_server, signed_headers

SECRET = "test-secret"


class EchoBot(Bot):
    """Plays the first legal action; ``{"type": "boom"}`` as first action makes it raise."""

    name = "echo"
    author = "tests"
    version = "1.2"
    games = ["cactus"]

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.ended: list[dict[str, Any]] = []

    def start(self, info: dict[str, Any]) -> None:
        self.started.append(info)

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        first = legal_actions[0]
        if first.get("type") == "boom":
            raise RuntimeError("boom")
        if first.get("type") == "memo":
            return first, "thinking"
        return first

    def end(self, info: dict[str, Any]) -> None:
        self.ended.append(info)


def act_body(**changes: Any) -> dict[str, Any]:
    body = {
        "match_id": "m1",
        "decision_id": "0:0",
        "game": "cactus",
        "seat": 0,
        "view": {"seat": 0},
        "legal_actions": [{"type": "draw"}, {"type": "take_discard"}],
        "deadline_ms": 2000,
    }
    body.update(changes)
    return body


class Client:
    """One keep-alive connection to a served bot."""

    def __init__(self, server: BotServer, secret: str | None = SECRET):
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        self.secret = secret

    def get(self, path: str = "/") -> tuple[int, Any, http.client.HTTPResponse]:
        self.conn.request("GET", path)
        return self._read()

    def post(
        self,
        path: str,
        body: Any,
        *,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
        sign: bool = True,
        request_id: bool = True,
    ) -> tuple[int, Any, http.client.HTTPResponse]:
        """A JSON body gets a fresh ``request_id`` as the arena's would (unless told not
        to, or it has one); bytes are sent as they are."""
        if isinstance(body, dict) and request_id and "request_id" not in body:
            body = {**body, "request_id": fresh_request_id()}
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json"}
        if sign and self.secret is not None:
            all_headers.update(signed_headers(self.secret, raw, timestamp))
        all_headers.update(headers or {})
        self.conn.request("POST", path, raw, all_headers)
        return self._read()

    def _read(self) -> tuple[int, Any, http.client.HTTPResponse]:
        response = self.conn.getresponse()
        data = response.read()
        return response.status, json.loads(data), response

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., BotServer]]:
    """``serve(bot, **make_server_options)``: a bot served in the background, closed
    after the test."""
    servers: list[BotServer] = []

    def start(bot: Bot, **options: Any) -> BotServer:
        options.setdefault("secret", SECRET)
        server = make_server(bot, "127.0.0.1", 0, **options)
        servers.append(server)
        server.serve_in_background()
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def client() -> Iterator[Callable[..., Client]]:
    clients: list[Client] = []

    def connect(server: BotServer, secret: str | None = SECRET) -> Client:
        c = Client(server, secret)
        clients.append(c)
        return c

    yield connect
    for c in clients:
        c.close()


def now() -> int:
    return int(time.time())


def fresh_request_id() -> str:
    """What the arena puts in every POST body: 32 lowercase hex digits."""
    return os.urandom(16).hex()
