"""What an attacker may send a bot: malformed timestamps, replayed signed requests,
bodies nested to exhaust the parser.  Each is answered (401 or 400) over real HTTP, the
connection goes on, and the bot never sees the request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from arenabot import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    BotServer,
    ReplayGuard,
    SignatureError,
    sign,
    signed_headers,
    verify,
)
from arenabot.protocol import MAX_JSON_DEPTH, MAX_TIMESTAMP_DIGITS, json_depth
from conftest import SECRET, Client, EchoBot, act_body, fresh_request_id, now

Serve = Callable[..., BotServer]
Connect = Callable[..., Client]

START = {"match_id": "m1", "game": "cactus", "options": {}, "seat": 0, "players": ["a", "b"]}


def signed(body: dict[str, Any], timestamp: int | None = None) -> tuple[bytes, dict[str, str]]:
    """A body and its headers, frozen: what an eavesdropper captures and plays again."""
    raw = json.dumps(body).encode()
    return raw, signed_headers(SECRET, raw, timestamp)


def nested(depth: int) -> Any:
    """``depth`` lists inside one another."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# -- X-Arena-Timestamp -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timestamp", "reason"),
    [
        pytest.param("1" * 5000, f"at most {MAX_TIMESTAMP_DIGITS} digits", id="5000-digits"),
        pytest.param("9" * 4301, f"at most {MAX_TIMESTAMP_DIGITS} digits", id="4301-nines"),
        pytest.param("0" * 16, f"at most {MAX_TIMESTAMP_DIGITS} digits", id="16-zeros"),
        ("1e9", "decimal integer"),
        ("1700000000.5", "decimal integer"),
        ("+1700000000", "decimal integer"),
        ("-1", "decimal integer"),
        ("0x6553f100", "decimal integer"),
        ("17 00", "decimal integer"),
        ("\u00b9\u00b2", "decimal integer"),  # superscript digits: isdigit() says yes
        ("", "missing"),
    ],
)
def test_a_malformed_timestamp_is_401_over_http(
    serve: Serve, client: Connect, timestamp: str, reason: str
) -> None:
    bot = EchoBot()
    c = client(serve(bot))
    raw = json.dumps({**act_body(), "request_id": fresh_request_id()}).encode()
    signature = sign(SECRET, timestamp, raw) if timestamp.isascii() else "sha256=" + "0" * 64
    headers = {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature}
    status, body, response = c.post("/act", raw, headers=headers)
    assert status == 401
    assert reason in body["error"]
    assert response.getheader("WWW-Authenticate") == "Arena-HMAC-SHA256"
    assert c.post("/act", act_body())[0] == 200  # the same connection goes on


@pytest.mark.parametrize(
    "timestamp",
    ["1" * 5000, "0" * 16, "\u00b9\u00b2", "1.5", 10**5000, -1, b"1700000000", True],
    ids=["5000-digits", "16-zeros", "superscript", "fraction", "huge", "negative", "bytes", "bool"],
)
def test_verify_refuses_any_malformed_timestamp_with_a_signature_error(timestamp: Any) -> None:
    with pytest.raises(SignatureError, match="X-Arena-Timestamp"):
        verify(SECRET, timestamp, "sha256=" + "0" * 64, b"{}", now=1_700_000_000)


# -- replays ------------------------------------------------------------------------------


def test_a_replayed_signed_request_is_401_and_the_bot_never_sees_it(
    serve: Serve, client: Connect
) -> None:
    bot = EchoBot()
    server = serve(bot)
    c = client(server)
    raw, headers = signed({**START, "request_id": fresh_request_id()})
    assert c.post("/start", raw, headers=headers)[:2] == (200, {})
    status, body, _ = c.post("/start", raw, headers=headers)  # the same bytes, again
    assert status == 401
    assert "replayed request" in body["error"]
    assert len(bot.started) == 1  # the replay did not reset the match
    # an /act replayed later, on another connection
    raw, headers = signed({**act_body(), "request_id": fresh_request_id()})
    assert c.post("/act", raw, headers=headers)[0] == 200
    assert c.post("/act", act_body(decision_id="1:0"))[0] == 200
    assert client(server).post("/act", raw, headers=headers)[0] == 401


def test_a_request_id_signed_again_with_a_new_timestamp_is_still_a_replay(
    serve: Serve, client: Connect
) -> None:
    c = client(serve(EchoBot()))
    body = {**act_body(), "request_id": fresh_request_id()}
    assert c.post("/act", body, timestamp=now() - 10)[0] == 200
    status, answer, _ = c.post("/act", body, timestamp=now())
    assert (status, "replayed request" in answer["error"]) == (401, True)


@pytest.mark.parametrize("path", ["/start", "/act", "/end"])
@pytest.mark.parametrize(
    ("request_id", "reason"),
    [
        (None, "must carry a request_id"),
        ("", "must carry a request_id"),
        (12345, "must carry a request_id"),
        (["a"], "must carry a request_id"),
        ("x" * 129, "longer than 128"),
    ],
)
def test_a_signed_request_without_a_usable_request_id_is_401(
    serve: Serve, client: Connect, path: str, request_id: Any, reason: str
) -> None:
    bot = EchoBot()
    c = client(serve(bot))
    body = {
        "/start": START,
        "/act": act_body(),
        "/end": {"match_id": "m1", "game": "cactus", "seat": 0, "outcome": {}, "view": {}},
    }[path]
    if request_id is not None:
        body = {**body, "request_id": request_id}
    status, answer, _ = c.post(path, body, request_id=False)
    assert status == 401
    assert reason in answer["error"]
    assert bot.started == [] and bot.ended == []


def test_an_unsigned_bot_accepts_repeats_and_bodies_without_request_id(
    serve: Serve, client: Connect
) -> None:
    bot = EchoBot()
    c = client(serve(bot, secret=None), secret=None)
    raw = json.dumps(START).encode()
    assert c.post("/start", raw)[0] == 200
    assert c.post("/start", raw)[0] == 200
    assert len(bot.started) == 2


def test_concurrent_copies_of_one_request_are_accepted_once(serve: Serve, client: Connect) -> None:
    server = serve(EchoBot())
    raw, headers = signed({**act_body(), "request_id": fresh_request_id()})
    clients = [client(server) for _ in range(8)]
    barrier = threading.Barrier(len(clients), timeout=10)
    statuses: list[int] = []

    def send(c: Client) -> None:
        barrier.wait()
        statuses.append(c.post("/act", raw, headers=headers)[0])

    threads = [threading.Thread(target=send, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(statuses) == [200] + [401] * 7


# -- ReplayGuard on its own ---------------------------------------------------------------

T = 1_700_000_000


def test_the_guard_remembers_an_id_while_its_timestamp_is_in_the_window() -> None:
    guard = ReplayGuard(window=300)
    guard.check("a" * 32, str(T), now=T)
    with pytest.raises(SignatureError, match="replayed request"):
        guard.check("a" * 32, str(T), now=T + 300)
    # past the window the id is forgotten, and a request that old is refused anyway
    with pytest.raises(SignatureError, match="too old"):
        guard.check("a" * 32, str(T), now=T + 301)
    assert len(guard) == 0
    guard.check("b" * 32, T + 301, now=T + 301)  # an int timestamp does too
    assert len(guard) == 1


def test_the_guard_memory_is_capped_without_letting_a_replay_through() -> None:
    guard = ReplayGuard(window=300, max_ids=3)
    for i, ts in enumerate([T, T + 1, T + 2, T + 3]):
        guard.check(f"id-{i}", ts, now=T + 3)
    assert len(guard) == 3  # id-0, the oldest, is forgotten...
    with pytest.raises(SignatureError, match="older than the bot's memory"):
        guard.check("id-0", T, now=T + 3)  # ...but its replay is still refused
    with pytest.raises(SignatureError, match="replayed request"):
        guard.check("id-1", T + 1, now=T + 3)
    guard.check("id-4", T + 3, now=T + 3)  # fresh requests go on being accepted


def test_a_server_with_a_small_memory_still_refuses_replays(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot(), max_request_ids=2))
    first = signed({**act_body(), "request_id": fresh_request_id()}, now() - 5)
    assert c.post("/act", first[0], headers=first[1])[0] == 200
    for i in range(3):
        assert c.post("/act", act_body(decision_id=f"{i}:0"))[0] == 200
    assert c.post("/act", first[0], headers=first[1])[0] == 401


# -- nesting --------------------------------------------------------------------------------


@pytest.mark.parametrize("secret", [SECRET, None], ids=["signed", "unsigned"])
@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000,
        b'{"view":' * 50_000 + b"1" + b"}" * 50_000,
        json.dumps(act_body(view=nested(MAX_JSON_DEPTH))).encode(),  # 1 + 64 levels
    ],
    ids=["100000-brackets", "50000-objects", "one-past-the-limit"],
)
def test_json_nested_too_deep_is_400_never_a_traceback(
    serve: Serve,
    client: Connect,
    capsys: pytest.CaptureFixture[str],
    secret: str | None,
    raw: bytes,
) -> None:
    bot = EchoBot()
    c = client(serve(bot, secret=secret), secret=secret)
    status, body, _ = c.post("/act", raw)
    assert status == 400
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in body["error"]
    assert "Traceback" not in capsys.readouterr().err
    assert c.post("/act", act_body())[0] == 200  # the same connection goes on


def test_a_body_nested_to_the_limit_reaches_the_bot(serve: Serve, client: Connect) -> None:
    c = client(serve(EchoBot()))
    body = act_body(view={"deep": nested(MAX_JSON_DEPTH - 2)})  # 1 + 1 + 62 levels
    assert c.post("/act", body)[0] == 200


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ('"[[{{"', 0),
        ("[]", 1),
        ('{"a": [{"b": "]]"}], "c": {}}', 3),
        ('["\\"[", [["\\\\"]]]', 3),
        ('["open string [[[', 1),
    ],
)
def test_json_depth(text: str, depth: int) -> None:
    assert json_depth(text) == depth


def test_a_secret_set_after_start_also_refuses_replays(serve: Serve, client: Connect) -> None:
    """A bot started unsigned and given its secret once registered (the flow of
    sdk/README.md's "Signing your bot") refuses replays from then on."""
    server = serve(EchoBot(), secret=None)
    server.secret = SECRET
    c = client(server)
    raw, headers = signed({**START, "request_id": fresh_request_id()})
    assert c.post("/start", raw, headers=headers)[0] == 200
    assert c.post("/start", raw, headers=headers)[0] == 401
