"""The JavaScript starter bot (``sample_bots/js/bot.js``): the golden requests of
docs/protocol.md, signed, get the same answers from it as from an SDK bot (accepted, or
refused with the same status); the worked signing example gives the same bytes; and it
plays full matches of every game it declares through ``arena play --bot`` with no fault.

Needs Node (Debian package ``nodejs``).  Without it these tests fail on CI (``CI=true``)
and are skipped elsewhere, saying why.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from arenabot import Bot, BotServer, make_server, sign

from tests.support.protocol import DOC, GOLDEN, signing_example

ROOT = Path(__file__).resolve().parent.parent
BOT_JS = ROOT / "sample_bots" / "js" / "bot.js"
SECRET = "js-bot-secret-0123456789"
HOUSE_BOTS = {"cactus": "heuristic", "cactus-game": "heuristic", "president": "heuristic,random"}


def _require_node() -> str:
    node = shutil.which("node")
    if node:
        return node
    reason = "Node is not installed (node not on PATH): apt-get update && apt-get install -y nodejs"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@contextmanager
def js_bot(*args: str) -> Iterator[str]:
    """``node bot.js --port 0 ARGS...`` running; yields its URL."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SECRET"}
    proc = subprocess.Popen(
        [_require_node(), str(BOT_JS), "--port", "0", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:  # read stderr to the end, so the pipe never fills
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put("")

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + 15
        url = None
        while url is None:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line, f"bot.js stopped (status {proc.wait()}) before listening"
            if " listening on " in line:
                url = line.rsplit(" ", 1)[1].strip()
        yield url
    finally:
        proc.terminate()
        assert proc.wait(10) == 0  # SIGTERM: a clean exit
        assert proc.stderr is not None
        proc.stderr.close()


@pytest.fixture(scope="module")
def signed_js() -> Iterator[str]:
    with js_bot("--secret", SECRET) as url:
        yield url


class FirstLegal(Bot):
    """An SDK bot to compare with: the first legal action."""

    name, games = "first-legal", ["cactus"]

    def act(self, view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        return legal_actions[0]


@pytest.fixture(scope="module")
def signed_sdk() -> Iterator[str]:
    server: BotServer = make_server(FirstLegal(), "127.0.0.1", 0, secret=SECRET)
    server.serve_in_background()
    yield server.url
    server.close()


def golden() -> dict[str, dict[str, Any]]:
    return {name: json.loads(body) for name, body in GOLDEN.findall(DOC.read_text())}


def send(url: str, method: str, path: str, body: bytes = b"", headers: Any = None) -> Any:
    """One request on its own connection: (status, the JSON answer)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, body, {"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


# -- signatures, against the golden requests ---------------------------------------------


@dataclass
class Case:
    """A request made from a golden one: ``build(body)`` gives (path, raw body, headers)."""

    name: str
    status: int
    build: Callable[[dict[str, Any]], tuple[str, bytes, dict[str, str]]]


def fresh(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "request_id": os.urandom(16).hex()}


def signed(
    body: Any, *, secret: str = SECRET, skew: int = 0, path: str = "/act", **headers: str
) -> tuple[str, bytes, dict[str, str]]:
    raw = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
    timestamp = str(int(time.time()) + skew)
    all_headers = {
        "X-Arena-Timestamp": timestamp,
        "X-Arena-Signature": sign(secret, timestamp, raw),
    }
    all_headers.update(headers)
    return path, raw, {k: v for k, v in all_headers.items() if v != "-"}


def tampered(body: dict[str, Any]) -> tuple[str, bytes, dict[str, str]]:
    path, raw, headers = signed(fresh(body))
    return path, raw.replace(b'"seat":1', b'"seat":0', 1), headers


def uppercase(body: dict[str, Any]) -> tuple[str, bytes, dict[str, str]]:
    path, raw, headers = signed(fresh(body))
    return path, raw, {**headers, "X-Arena-Signature": headers["X-Arena-Signature"].upper()}


def timestamp_as(form: str) -> Callable[[dict[str, Any]], tuple[str, bytes, dict[str, str]]]:
    """A timestamp of the right time written in another ``form`` (``{}``: the seconds)."""

    def build(body: dict[str, Any]) -> tuple[str, bytes, dict[str, str]]:
        raw = json.dumps(fresh(body)).encode()
        text = form.format(int(time.time()))
        return (
            "/act",
            raw,
            {"X-Arena-Timestamp": text, "X-Arena-Signature": sign(SECRET, text, raw)},
        )

    return build


def without_request_id(body: dict[str, Any]) -> tuple[str, bytes, dict[str, str]]:
    return signed({k: v for k, v in body.items() if k != "request_id"})


CASES = [
    Case("signed now", 200, lambda b: signed(fresh(b))),
    Case("299 s ago", 200, lambda b: signed(fresh(b), skew=-299)),
    Case("299 s ahead", 200, lambda b: signed(fresh(b), skew=299)),
    Case("the wrong secret", 401, lambda b: signed(fresh(b), secret="another-secret-98765")),
    Case("a changed body", 401, tampered),
    Case("upper-case hex", 401, uppercase),
    Case("301 s old", 401, lambda b: signed(fresh(b), skew=-301)),
    Case("301 s ahead", 401, lambda b: signed(fresh(b), skew=301)),
    Case("no signature", 401, lambda b: signed(fresh(b), **{"X-Arena-Signature": "-"})),
    Case("no timestamp", 401, lambda b: signed(fresh(b), **{"X-Arena-Timestamp": "-"})),
    Case("the same timestamp", 200, timestamp_as("{}")),
    Case("a signed timestamp", 401, timestamp_as("+{}")),
    Case("a fractional timestamp", 401, timestamp_as("{}.0")),
    Case("an exponent", 401, timestamp_as("{}e0")),
    Case("16 digits", 401, timestamp_as("000000{}")),
    Case("two timestamps", 401, timestamp_as("{0}, {0}")),
    Case("no request_id", 401, without_request_id),
    Case("a request_id of 129", 401, lambda b: signed({**b, "request_id": "a" * 129})),
    Case("not JSON", 400, lambda b: signed(b"{not json")),
    Case("not an object", 400, lambda b: signed([fresh(b)])),
    Case(
        "a field missing", 400, lambda b: signed(fresh({k: v for k, v in b.items() if k != "view"}))
    ),
    Case("no legal action", 400, lambda b: signed(fresh({**b, "legal_actions": []}))),
    Case("an unknown path", 404, lambda b: signed(fresh(b), path="/move")),
]


def test_the_js_bot_answers_get_like_a_bot(signed_js: str) -> None:
    status, info = send(signed_js, "GET", "/")  # never signed, even with a secret
    assert status == 200
    assert set(info) == set(golden()["info"])
    assert info["apiversion"] == "1" and info["name"] == "js-starter"
    assert info["games"] == sorted(HOUSE_BOTS)
    assert send(signed_js, "GET", "/nowhere")[0] == 404


@pytest.mark.parametrize("name", ["start", "act", "act_snap", "end"])
def test_every_golden_request_signed_is_accepted(signed_js: str, name: str) -> None:
    body = golden()[name]
    path = "/" + name.split("_")[0]
    status, answer = send(signed_js, "POST", *signed(fresh(body), path=path))
    assert status == 200, answer
    if path == "/act":
        assert answer["action"] in body["legal_actions"]
    else:
        assert answer == {}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_js_bot_refuses_what_the_sdk_refuses(
    signed_js: str, signed_sdk: str, case: Case
) -> None:
    body = golden()["act"]
    for url in (signed_sdk, signed_js):
        path, raw, headers = case.build(body)
        status, answer = send(url, "POST", path, raw, headers)
        assert status == case.status, f"{url}: {answer}"
        if status != 200:
            assert isinstance(answer.get("error"), str) and answer["error"]


def test_a_replayed_request_is_refused(signed_js: str, signed_sdk: str) -> None:
    _, raw, headers = signed(fresh(golden()["act_snap"]))
    for url in (signed_sdk, signed_js):
        assert send(url, "POST", "/act", raw, headers)[0] == 200
        status, answer = send(url, "POST", "/act", raw, headers)
        assert status == 401 and "replayed" in answer["error"]


def test_a_body_over_a_megabyte_is_refused(signed_js: str, signed_sdk: str) -> None:
    for url in (signed_sdk, signed_js):
        host, port = url.removeprefix("http://").rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:  # the length alone is refused: no need to send the body (nor race its refusal)
            conn.putrequest("POST", "/act")
            conn.putheader("Content-Length", str((1 << 20) + 1))
            conn.endheaders()
            response = conn.getresponse()
            assert response.status == 413 and b"larger than" in response.read()
        finally:
            conn.close()


def test_without_a_secret_nothing_is_checked() -> None:
    with js_bot() as url:
        body = golden()["act"]
        status, answer = send(url, "POST", "/act", json.dumps(body).encode())
        assert status == 200 and answer["action"] in body["legal_actions"]


def test_the_worked_signing_example_in_javascript() -> None:
    example = signing_example()
    script = (
        "const {sign, verify} = require(process.argv[1]);"
        "const [secret, timestamp, body] = process.argv.slice(2);"
        "const raw = Buffer.from(body, 'utf8');"
        "const signature = sign(secret, timestamp, raw);"
        "verify(secret, timestamp, signature, raw, 300, Number(timestamp));"
        "process.stdout.write(signature);"
    )
    result = subprocess.run(
        [_require_node(), "-e", script, str(BOT_JS),
         example["secret"], example["timestamp"], example["body"]],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    assert result.stdout == example["signature"]


def test_bad_arguments_are_one_line_and_status_2() -> None:
    result = subprocess.run(
        [_require_node(), str(BOT_JS), "--port", "http"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (result.returncode, result.stderr) == (
        2,
        "bot.js: error: --port must be a port number, not http\n",
    )


# -- full matches through arena play ---------------------------------------------------------


def arena_play(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", "play", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("game", sorted(HOUSE_BOTS))
def test_full_matches_of_every_game_with_no_fault(signed_js: str, game: str) -> None:
    _, info = send(signed_js, "GET", "/")
    assert game in info["games"]
    result = arena_play(
        game, "--bot", signed_js, "--secret", SECRET, "--bots", HOUSE_BOTS[game],
        "--matches", "2", "--seed", "3",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "fault" not in result.stdout, result.stdout
    played = [line for line in result.stdout.splitlines() if line.startswith("match ")]
    assert len(played) == 2 and all("js-starter:" in line for line in played), result.stdout


def test_a_wrong_secret_shows_as_401_faults(signed_js: str) -> None:
    result = arena_play(
        "cactus", "--bot", signed_js, "--secret", "not-the-bots-secret", "--bots", "heuristic"
    )
    assert result.returncode == 0, result.stderr
    assert "faults)" in result.stdout
    assert "HTTP 401: the bot refused the arena's signature" in result.stdout


# -- over connect: no listening socket, against the SDK's fake arena --------------------------

sys.path.insert(0, str(ROOT / "sdk" / "tests"))  # the fake arena of the SDK's connect tests
from fake_arena import BotProcess, FakeArena, golden_requests, listening_sockets  # noqa: E402


@pytest.fixture
def arena() -> Iterator[FakeArena]:
    fake = FakeArena(SECRET)
    yield fake
    fake.close()


INFO_OF_JS = {
    "apiversion": "1",
    "name": "js-starter",
    "author": "card-bot arena",
    "version": "0.1.0",
    "games": sorted(HOUSE_BOTS),
    "capacity": 1,
}


def js_connected(arena: FakeArena, *args: str) -> BotProcess:
    """``node bot.js --connect URL --bot-id 1 ARGS...``, its poll open."""
    bot = BotProcess(
        [_require_node(), str(BOT_JS), "--connect", arena.url, "--bot-id", "1", *args], ROOT
    )
    bot.wait_for("js-starter 0.1.0 connected to")
    arena.wait(lambda: arena.stats.open_polls == 1)
    return bot


def test_the_js_bot_plays_over_connect_and_drains_on_ctrl_c(arena: FakeArena) -> None:
    arena.set_playing(1)
    bot = js_connected(arena, "--secret", SECRET)
    try:
        held, listening = listening_sockets(bot.proc.pid)
        assert held >= 1 and listening == 0  # its poll's connection, and no port
        assert arena.session is not None
        sent = dict(arena.session.info)
        assert sent.pop("sdk").startswith("node v")  # what the bot's page shows it runs on
        assert sent == INFO_OF_JS
        for name, (path, body) in golden_requests().items():
            answer = arena.answer(arena.submit(path, body))
            assert answer["status"] == 200, (name, answer)
            if path == "/act":
                assert answer["body"]["action"] in body["legal_actions"], name
            else:
                assert answer["body"] == {}
        bot.proc.send_signal(signal.SIGINT)
        bot.wait_for("draining: the arena starts no new match; matches in play: 1")
        arena.wait(lambda: arena.draining)
        path, body = golden_requests()["act"]
        assert arena.answer(arena.submit(path, body))["status"] == 200  # the match goes on
        arena.set_playing(0)
        status, lines = bot.finish()
    finally:
        bot.kill()
    assert status == 0, lines
    assert lines[-1] == "bot.js: drained: every match is over, session closed"
    assert arena.stats.closes == 1
    # beyond its one poll, only the drain's notice: it ends the open poll, whose next poll
    # (draining too) ends the notice in turn
    assert arena.stats.most_open == 1 and arena.stats.bumps <= 2


def test_the_js_bot_refuses_over_connect_what_it_refuses_over_http(arena: FakeArena) -> None:
    bot = js_connected(arena, "--secret", SECRET)
    try:
        body = golden()["act"]
        for case, (secret, skew) in {
            "the wrong secret": ("another-secret-98765", 0),
            "301 s old": (SECRET, -301),
        }.items():
            request_id = arena.submit(
                "/act", fresh(body), secret=secret, timestamp=int(time.time()) + skew
            )
            answer = arena.answer(request_id)
            assert (answer["status"], answer["request_id"]) == (401, request_id), case
        _, raw, headers = signed(fresh(body))
        entry = {
            "path": "/act",
            "body": raw.decode(),
            "timestamp": headers["X-Arena-Timestamp"],
            "signature": headers["X-Arena-Signature"],
        }
        request_id = json.loads(raw)["request_id"]
        arena.resubmit(entry)
        arena.resubmit(entry)  # the same bytes again: a replay
        arena.wait(lambda: len(arena.answers.get(request_id, [])) == 2)
        first, again = arena.answers[request_id]
        assert first["status"] == 200
        assert again["status"] == 401 and "replayed" in again["body"]["error"]
    finally:
        bot.kill()


def test_a_replaced_js_bot_exits_1_with_one_line(arena: FakeArena) -> None:
    bot = js_connected(arena, "--secret", SECRET)
    try:
        arena.replace_session()
        status, lines = bot.finish()
    finally:
        bot.kill()
    assert status == 1
    assert lines[1:] == [
        "bot.js: another copy of bot 1 connected to the arena and replaced this one "
        "(the session was replaced): stopping"
    ]


def test_a_js_bot_with_the_wrong_secret_is_one_line_and_status_2(arena: FakeArena) -> None:
    bot = BotProcess(
        [_require_node(), str(BOT_JS), "--connect", arena.url, "--bot-id", "1",
         "--secret", "not-the-bots-secret"], ROOT,
    )  # fmt: skip
    status, lines = bot.finish()
    assert status == 2
    assert lines == [
        "bot.js: the arena refused bot 1's signature (wrong signature): check the bot id and "
        "the secret (--bot-id, --secret or $ARENA_BOT_SECRET) and this machine's clock"
    ]


def test_a_js_bot_that_connects_takes_no_port() -> None:
    result = subprocess.run(
        [_require_node(), str(BOT_JS), "--port", "9001"],
        env={**os.environ, "ARENA_BOT_ID": "3"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (result.returncode, result.stderr) == (
        2,
        "bot.js: error: --port: a bot that connects to the arena listens on no port "
        "(to serve on a port, unset $ARENA_BOT_ID)\n",
    )
