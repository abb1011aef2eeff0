"""A client of the connect transport written from docs/protocol.md alone: the status
tables of "Playing from a laptop" are read out of the document, and every endpoint is
driven into every status its table lists, the answer's status and body shape checked
against the table's row.  A status reached here that no table lists, or a row that no
scenario here reaches, fails: the document and the server cannot drift apart.

Beside the tables: a session refused for its ``info`` leaves the live session as it was
(its open poll and its pending request go on); a session token the arena never gave is
not "replaced", which the document tells a bot to obey by stopping; and the same, with
``poll_seconds`` a JSON integer, over real HTTP against ``arena serve``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
from flask import Flask

from arena.api import connect as connect_api
from arena.relay.internal import SIGNATURE, TIMESTAMP, signature
from tests.support.lanes import free_port, wait_for
from tests.support.protocol import DOC
from tests.test_connect_api import INFO, hand, in_thread, register, signed
from tests.test_connect_replays import serve, signed_request
from tests.test_install import seal_with_a_stranger_key

SESSION, POLL, CLOSE = "/api/connect/session", "/api/connect/poll", "/api/connect/close"


# -- the document's tables ------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One row of an endpoint's status table."""

    path: str
    status: int
    reason: str | None  # the body's "reason", for the rows that name one
    shape: dict[str, str]  # key -> "string", "integer", "boolean", "object", "array",
    # one of those "or null" or "or absent", or a JSON string literal ('"replaced"')
    retry_after: bool  # the answer carries a Retry-After header
    what: str  # what the bot should do

    @property
    def key(self) -> tuple[str, int, str | None]:
        return self.path, self.status, self.reason


TABLE = re.compile(r"<!-- connect-statuses: (\S+) -->\s*\n((?:\|.*\n)+)")
PAIR = re.compile(r'"(\w+)": ("[^"]*"|\w+ or (?:null|absent)|\w+)')
ERROR = {"code": "integer", "status": "string", "message": "string"}


def documented() -> dict[tuple[str, int, str | None], Row]:
    """Every row of the connect status tables of docs/protocol.md, by (path, status,
    reason)."""
    rows: dict[tuple[str, int, str | None], Row] = {}
    for path, table in TABLE.findall(DOC.read_text(encoding="utf-8")):
        lines = table.strip().splitlines()
        header = [cell.strip() for cell in lines[0].strip("|").split("|")]
        assert header == ["status", "when", "body", "what the bot does"], header
        for line in lines[2:]:
            status, _when, body, what = (
                cell.strip() for cell in line.strip().strip("|").split("|")
            )
            body = body.replace("`", "")
            shape = dict(ERROR) if body.startswith("error") else {}
            shape.update(PAIR.findall(body))
            reason = shape.get("reason", "").strip('"') or None
            row = Row(path, int(status), reason, shape, "Retry-After" in body, what)
            assert row.key not in rows, f"{row.key} is in the tables twice"
            rows[row.key] = row
    return rows


def check_shape(row: Row, answer: Any) -> None:
    """The answer has the status of ``row`` and the body its table gives: every key
    listed, of its type, and no other."""
    assert answer.status_code == row.status, (row.key, answer.get_data(as_text=True))
    if row.status == 204:
        assert answer.get_data() == b""
        return
    body = answer.get_json()
    assert isinstance(body, dict), body
    optional = {key for key, kind in row.shape.items() if kind.endswith(" or absent")}
    assert set(row.shape) - optional <= set(body) <= set(row.shape), (row.key, body)
    for key, kind in row.shape.items():
        if key not in body:
            continue
        value, kind = body[key], kind.removesuffix(" or absent")
        if kind.startswith('"'):
            assert value == json.loads(kind), (row.key, key, value)
        elif kind == "integer or null":
            assert value is None or type(value) is int, (row.key, key, value)
        else:
            types = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}
            assert type(value) is types[kind], (row.key, key, value)  # 25.0 is not 25
    if row.retry_after:
        assert answer.headers["Retry-After"].isdigit()


# -- driving each endpoint into each status -------------------------------------------------
class Arena:
    """The app under test and a connect bot of it, with what a scenario needs."""

    def __init__(self, make_app: Callable[..., Flask], info_bot: Callable[..., str]) -> None:
        self.make_app = make_app
        self.info_bot = info_bot
        self.app = make_app()
        self.client = self.app.test_client()
        self.bot = register(self.client)

    def post(self, path: str, body: dict[str, Any], secret: str | None = None, **kw: Any):
        return signed(self.client, path, secret or self.bot["signing_secret"], body, **kw)

    def open(self, info: dict[str, Any] | None = None, bot: dict | None = None):
        bot = bot or self.bot
        body = {"bot_id": bot["id"], "info": info or INFO}
        return self.post(SESSION, body, bot["signing_secret"])

    def session(self) -> str:
        answer = self.open()
        assert answer.status_code == 200, answer.get_json()
        return answer.get_json()["session"]

    def poll(self, token: str, **fields: Any):
        return self.post(POLL, {"bot_id": self.bot["id"], "session": token, **fields})

    def close(self, token: str):
        return self.post(CLOSE, {"bot_id": self.bot["id"], "session": token})

    def raw(self, path: str, raw: bytes):
        """A body as it is, signed (the signature is not what it is refused for)."""
        ts = str(int(time.time()))
        headers = {TIMESTAMP: ts, SIGNATURE: signature(self.bot["signing_secret"], ts, raw)}
        return self.client.post(path, data=raw, headers=headers, content_type="application/json")

    def body(self, path: str, token: str = "s") -> dict[str, Any]:
        """A well-formed body of ``path`` (no request_id: ``post`` adds a fresh one)."""
        if path == SESSION:
            return {"bot_id": self.bot["id"], "info": INFO}
        if path == POLL:
            return {"bot_id": self.bot["id"], "session": token, "answers": []}
        return {"bot_id": self.bot["id"], "session": token}

    def no_store(self):
        """An arena whose replay store (Redis here) does not answer, and its bot."""
        down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
        app = self.make_app(ratelimit_storage=down, rate_limits=False)
        return app.test_client(), register(app.test_client())


Scenario = Callable[[Arena], list[Any]]  # the answers of one documented row
SCENARIOS: dict[tuple[str, int, str | None], Scenario] = {}


def scenario(path: str, status: int, reason: str | None = None):
    def add(run: Scenario) -> Scenario:
        SCENARIOS[path, status, reason] = run
        return run

    return add


def _each(run: Callable[[Arena, str], list[Any]], status: int, *paths: str) -> None:
    """One scenario for the same status of several endpoints."""
    for path in paths:
        SCENARIOS[path, status, None] = lambda arena, path=path: run(arena, path)


# every endpoint: what is refused before the body is read as a request of the bot's
def _not_json(arena: Arena, path: str) -> list[Any]:
    deep = b'{"bot_id": ' + b"[" * 40 + b"]" * 40 + b"}"
    return [arena.raw(path, b"not json"), arena.raw(path, deep)]


def _unsigned(arena: Arena, path: str) -> list[Any]:
    token = arena.session()
    once = {**arena.body(path, token), "request_id": os.urandom(16).hex()}
    wrong = arena.post(path, arena.body(path, token), secret="x" * 32)
    late = arena.post(path, arena.body(path, token), timestamp=str(int(time.time()) - 3600))
    unsigned = arena.client.post(path, json={**once, "request_id": os.urandom(16).hex()})
    first = arena.post(path, once)
    assert first.status_code in (200, 204), first.get_data(as_text=True)
    replayed = arena.post(path, once)
    assert "replayed request" in replayed.get_json()["message"]
    return [wrong, late, unsigned, replayed]


def _no_bot(arena: Arena, path: str) -> list[Any]:
    body = {**arena.body(path), "bot_id": 99999}
    return [arena.post(path, body)]


def _too_large(arena: Arena, path: str) -> list[Any]:
    body = {**arena.body(path), "padding": "x" * (256 * 1024)}
    return [arena.post(path, body)]


def _malformed(arena: Arena, path: str) -> list[Any]:
    """Point (3) of issue 34: a missing request_id, a bot_id as a string."""
    token = arena.session()
    body = arena.body(path, token)
    no_id = arena.raw(path, json.dumps(body).encode())  # no request_id
    text_id = arena.post(path, {**body, "bot_id": str(arena.bot["id"])})
    assert "request_id" in no_id.get_json()["errors"]["json"]
    assert "bot_id" in text_id.get_json()["errors"]["json"]
    if path != POLL:
        return [no_id, text_id]
    answer = {"request_id": "b" * 32, "status": 200.0, "body": {"action": 1}}
    float_status = arena.post(path, {**body, "answers": [answer]})
    assert "answers" in float_status.get_json()["errors"]["json"]
    return [no_id, text_id, float_status]


def _store_down(arena: Arena, path: str) -> list[Any]:
    """The replay store does not answer; the bot's secret is sealed with a key this arena
    lacks (an operator's mistake)."""
    client, bot = arena.no_store()
    body = {**arena.body(path, "s"), "bot_id": bot["id"]}
    answer = signed(client, path, bot["signing_secret"], body)
    assert "Redis" in answer.get_json()["message"]
    seal_with_a_stranger_key(arena.app, arena.bot["id"])
    sealed = arena.post(path, arena.body(path))
    assert "signing secret" in sealed.get_json()["message"]
    return [answer, sealed]


_each(_not_json, 400, SESSION, POLL, CLOSE)
_each(_unsigned, 401, SESSION, POLL, CLOSE)
_each(_too_large, 413, SESSION, POLL, CLOSE)
_each(_malformed, 422, SESSION, POLL, CLOSE)
_each(_store_down, 503, SESSION, POLL, CLOSE)
_each(_no_bot, 404, SESSION)


@scenario(SESSION, 200)
def _opened(arena: Arena) -> list[Any]:
    first, second = arena.open(), arena.open()
    assert first.get_json()["replaced"] is False and second.get_json()["replaced"] is True
    # a game played here that the bot is not registered for: accepted, as the table says
    more = arena.open({**INFO, "games": ["cactus", "president"]})
    return [first, second, more]  # "poll_seconds": an integer, as documented (point 4)


@scenario(SESSION, 400)
def _info_refused(arena: Arena) -> list[Any]:
    arena.session()
    answers = [
        arena.open({**INFO, "games": ["cactus", "go"]}),  # point (1): a game not played here
        arena.open({**INFO, "games": ["president"]}),  # not the game it is registered for
        arena.open({**INFO, "apiversion": "2"}),
        arena.open({**INFO, "capacity": 0}),
        *_not_json(arena, SESSION),
    ]
    assert answers[0].status_code == 400, answers[0].get_json()
    assert "go" in answers[0].get_json()["message"]
    return answers


@scenario(SESSION, 409)
def _webhook_bot(arena: Arena) -> list[Any]:
    made = arena.client.post(
        "/api/bots", json={"name": "w", "owner": "o", "endpoint": arena.info_bot()}
    )
    return [arena.open(bot=made.get_json())]


@scenario(SESSION, 429)
def _too_many_sessions(arena: Arena) -> list[Any]:
    return [arena.open() for _ in range(connect_api.SESSIONS_PER_MINUTE + 1)][-1:]


@scenario(POLL, 200)
def _polled(arena: Arena) -> list[Any]:
    token = arena.session()
    hub = arena.app.extensions["arena.relay"].hub
    request = hand(arena.app, arena.bot["id"], "a" * 32)
    worker, _ = in_thread(lambda: hub.deliver(request))
    taken = arena.poll(token)
    [wire] = taken.get_json()["requests"]
    assert {k: type(v) for k, v in wire.items()} == dict.fromkeys(
        ("path", "body", "timestamp", "signature"), str
    )
    answer = {"request_id": "a" * 32, "status": 200, "body": {"action": {"type": "draw"}}}
    answered = arena.poll(token, answers=[answer])
    worker.join(5)
    assert request.outcome == "answer"
    drained = arena.poll(token, draining=True)
    assert drained.get_json() == {"requests": [], "playing": 0}
    return [taken, answered, drained]


@scenario(POLL, 404)
def _no_such_session(arena: Arena) -> list[Any]:
    """Point (2) of issue 34: a token the arena never gave this bot is not "replaced"."""
    arena.session()  # the bot has a live session: the token polled is not it
    other = register(arena.client, name="bea", owner="bea")
    theirs = arena.open(bot=other).get_json()["session"]
    answers = [arena.poll("never-existed"), arena.poll(theirs), *_no_bot(arena, POLL)]
    assert answers[0].status_code == 404, answers[0].get_json()
    assert "never" in answers[0].get_json()["message"]
    return answers


@scenario(POLL, 409, "replaced")
def _replaced(arena: Arena) -> list[Any]:
    first = arena.session()
    arena.session()
    return [arena.poll(first)]


@scenario(POLL, 409, "closed")
def _closed(arena: Arena) -> list[Any]:
    token = arena.session()
    assert arena.close(token).status_code == 204
    return [arena.poll(token)]


@scenario(POLL, 429)
def _spinning(arena: Arena) -> list[Any]:
    token = arena.session()
    limit = connect_api.IDLE_POLLS_PER_MINUTE + 2  # capacity 1
    return [arena.poll(token) for _ in range(limit + 1)][-1:]


@scenario(CLOSE, 204)
def _closes(arena: Arena) -> list[Any]:
    first = arena.session()
    second = arena.session()
    return [arena.close(second), arena.close(second), arena.close(first)]  # over already: 204


@scenario(CLOSE, 404)
def _close_no_such_session(arena: Arena) -> list[Any]:
    arena.session()
    return [arena.close("never-existed"), *_no_bot(arena, CLOSE)]


@pytest.fixture
def arena(make_app, info_bot, monkeypatch: pytest.MonkeyPatch) -> Arena:
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.0)  # an empty poll is not held
    return Arena(make_app, info_bot)


def _name(key: tuple[str, int, str | None]) -> str:
    return "-".join(str(part) for part in (key[0].rsplit("/", 1)[-1], *key[1:]) if part)


@pytest.mark.parametrize("key", list(SCENARIOS), ids=_name)
def test_each_status_is_answered_as_the_document_s_table_says(arena: Arena, key) -> None:
    """The scenario reaches the status; the table lists it, and the body has its shape."""
    answers = SCENARIOS[key](arena)
    for answer in answers:
        reason = (answer.get_json(silent=True) or {}).get("reason")
        said = f"HTTP {answer.status_code} {answer.get_data(as_text=True)}"
        assert (answer.status_code, reason) == key[1:], said
    row = documented().get(key)
    assert row is not None, f"docs/protocol.md lists no {key} in its connect status tables"
    assert row.what, f"{key}: the table does not say what the bot does"
    for answer in answers:
        check_shape(row, answer)


def test_every_row_of_the_tables_is_reached_by_a_scenario() -> None:
    """A status documented that no scenario reaches is a status the arena may never
    answer (or one nobody checks)."""
    rows = documented()
    assert {path for path, _, _ in rows} == {SESSION, POLL, CLOSE}
    assert set(rows) == set(SCENARIOS), set(rows) ^ set(SCENARIOS)


# -- a refused session leaves the live one alone ----------------------------------------------
def test_a_session_refused_for_its_info_leaves_the_live_session_and_its_polls(
    make_app, monkeypatch
) -> None:
    """Point (1) of issue 34: a session whose info declares a game the arena does not play
    is refused (400) before the live session is touched: that session's open poll goes
    on (and takes the next request), and its pending request is still answered."""
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 30.0)  # held until a request comes
    app = make_app()
    client = app.test_client()
    bot = register(client)
    secret = bot["signing_secret"]
    opened = signed(client, SESSION, secret, {"bot_id": bot["id"], "info": {**INFO, "capacity": 2}})
    token, hub = opened.get_json()["session"], app.extensions["arena.relay"].hub

    def poll(**fields: Any):
        return signed(client, POLL, secret, {"bot_id": bot["id"], "session": token, **fields})

    first = hand(app, bot["id"], "1" * 32, seconds=30)
    first_worker, _ = in_thread(lambda: hub.deliver(first))
    assert [r["body"] for r in poll().get_json()["requests"]] == [first.body.decode()]
    held, held_answer = in_thread(poll)  # nothing waits: held
    wait_for(lambda: hub.connected()[bot["id"]]["polls"] == 1, timeout=10, what="the held poll")

    refused = signed(
        client, SESSION, secret, {"bot_id": bot["id"], "info": {**INFO, "games": ["cactus", "go"]}}
    )
    assert refused.status_code == 400, refused.get_json()
    assert "go" in refused.get_json()["message"]
    assert hub.holds(bot["id"]) == token and hub.connected()[bot["id"]]["polls"] == 1
    detail = client.get(f"/api/bots/{bot['id']}").get_json()
    assert detail["connection"]["sessions_replaced"] == 0 and detail["connection"]["connected"]
    assert "go" not in detail["info"]["games"]

    second = hand(app, bot["id"], "2" * 32, seconds=30)
    second_worker, _ = in_thread(lambda: hub.deliver(second))
    held.join(10)
    [taken] = held_answer
    assert taken.status_code == 200, taken.get_json()
    assert [r["body"] for r in taken.get_json()["requests"]] == [second.body.decode()]
    answers = [
        {"request_id": "1" * 32, "status": 200, "body": {"action": {"type": "draw"}}},
        {"request_id": "2" * 32, "status": 200, "body": {"action": {"type": "pass"}}},
    ]
    assert poll(answers=answers, draining=True).status_code == 200
    first_worker.join(10)
    second_worker.join(10)
    assert (first.outcome, json.loads(first.answer)) == ("answer", {"action": {"type": "draw"}})
    assert (second.outcome, json.loads(second.answer)) == ("answer", {"action": {"type": "pass"}})


# -- over real HTTP -----------------------------------------------------------------------------
@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    with ExitStack() as stack:
        yield serve(stack, {"ARENA_DATA_DIR": str(tmp_path)})


def test_the_documented_client_over_http_against_arena_serve(served: str) -> None:
    """Points (1), (2) and (4) of issue 34 over the wire, as a bot in another language
    sees them: the raw bytes of the answers, every status from the tables."""
    rows = documented()
    made = requests.post(
        f"{served}/api/bots",
        json={"name": "ada", "owner": "ada", "games": ["cactus"], "connect": True},
        timeout=10,
    )
    assert made.status_code == 201, made.text
    bot_id, secret = made.json()["id"], made.json()["signing_secret"]

    def post(path: str, body: dict[str, Any]) -> requests.Response:
        raw, headers = signed_request(secret, {"bot_id": bot_id, **body})
        return requests.post(f"{served}{path}", data=raw, headers=headers, timeout=10)

    seen: list[tuple[requests.Response, str, int, str | None]] = []

    def expect(answer: requests.Response, path: str, status: int, reason: str | None = None):
        """The status (and reason) now; the body's shape against the tables at the end."""
        body = answer.json() if answer.content else None
        assert (answer.status_code, (body or {}).get("reason")) == (status, reason), answer.text
        seen.append((answer, path, status, reason))
        return body

    opened = post(SESSION, {"info": INFO})
    expect(opened, SESSION, 200)
    assert type(orjson.loads(opened.content)["poll_seconds"]) is int  # (4): 25, not 25.0
    assert orjson.loads(opened.content)["poll_seconds"] == 25
    token = opened.json()["session"]

    refused = post(SESSION, {"info": {**INFO, "games": ["cactus", "go"]}})  # (1)
    assert "go" in expect(refused, SESSION, 400)["message"]
    live = post(POLL, {"session": token, "answers": [], "draining": True})
    assert expect(live, POLL, 200) == {"requests": [], "playing": 0}
    connection = requests.get(f"{served}/api/bots/{bot_id}", timeout=10).json()["connection"]
    assert connection["connected"] is True and connection["sessions_replaced"] == 0

    unknown = post(POLL, {"session": "never-existed", "answers": []})  # (2)
    expect(unknown, POLL, 404)
    replacing = post(SESSION, {"info": INFO})
    assert expect(replacing, SESSION, 200)["replaced"] is True
    expect(post(POLL, {"session": token, "answers": []}), POLL, 409, "replaced")
    expect(post(CLOSE, {"session": "never-existed"}), CLOSE, 404)
    expect(post(CLOSE, {"session": replacing.json()["session"]}), CLOSE, 204)
    closed = post(POLL, {"session": replacing.json()["session"], "answers": []})
    expect(closed, POLL, 409, "closed")

    rows = documented()
    for answer, path, status, reason in seen:
        assert (path, status, reason) in rows, f"the tables list no {(path, status, reason)}"
        check_shape(rows[path, status, reason], _Answer(answer))


class _Answer:
    """A ``requests`` answer seen as the Flask test client's (what ``check_shape`` reads)."""

    def __init__(self, answer: requests.Response) -> None:
        self.status_code = answer.status_code
        self.headers = answer.headers
        self._answer = answer

    def get_data(self, as_text: bool = False) -> Any:
        return self._answer.text if as_text else self._answer.content

    def get_json(self) -> Any:
        return self._answer.json()


def test_the_document_has_pitfalls_for_clients_in_other_languages() -> None:
    """Points (6) and (7): what an author who never read the SDK needs to know."""
    text = DOC.read_text(encoding="utf-8")
    pitfalls = text[text.index("### Pitfalls") :]
    for words in ("TCP_NODELAY", "poll_seconds", "next poll", "one send"):
        assert words in pitfalls, words
    assert "`connection.sdk`" in text[text.index("POST /api/connect/session") :]  # (5)
