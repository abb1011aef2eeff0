"""``arena bots``, ``tournaments``, ``ratings show`` and ``matches`` against a real
``arena serve`` and ``arena worker``, in processes of their own on a free loopback port
with a data folder of their own; and the client's failures (a server that is down,
failing, slow or not an arena) against small servers that misbehave on purpose."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from arenabot import make_server

from arena.cli import main
from arena.cli.processes import stop_processes, worker_command
from sample_bots.policy_bot import PolicyBot
from tests.support.lanes import free_port, wait_for

pytestmark = pytest.mark.xdist_group("server")

ORGANISER = "organiser-token-of-the-tests"
SECRETS = {"ada": "ada-signing-secret-01", "bob": "bob-signing-secret-02"}


def cli(*argv: str, **env: str) -> tuple[int, str, str]:
    """``arena argv`` in this process, with ``env`` on top of the environment (tokens)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, env),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"arena serve exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/api/games", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    pytest.fail("arena serve did not answer within 60 s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``arena serve`` with an organiser token, and one worker: the server's address,
    also in ``ARENA_SERVER`` while the module runs."""
    folder = tmp_path_factory.mktemp("remote")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_DATA_DIR=str(folder), ARENA_ORGANISER_TOKEN=ORGANISER)
    port = free_port()
    log_path = folder / "processes.log"
    with open(log_path, "ab") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        workers = []
        try:
            _wait_ready(url, serve, log_path)  # the schema is migrated: a worker may start
            workers.append(
                subprocess.Popen(
                    worker_command(f"remote-{uuid.uuid4().hex[:6]}@%h"),
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
            with mock.patch.dict(os.environ, {"ARENA_SERVER": url}):
                for name in ("ARENA_ORGANISER_TOKEN", "ARENA_OWNER_TOKEN"):
                    os.environ.pop(name, None)
                yield url
        finally:
            stop_processes(workers, timeout=20)
            stop_processes([serve], timeout=10)


@pytest.fixture(scope="module")
def bots(server: str) -> Iterator[dict[str, dict[str, Any]]]:
    """Two Cactus bots that sign from the start (their secrets chosen at registration),
    registered with ``arena bots register --json``: name -> the registration answer."""
    registered = {}
    with contextlib.ExitStack() as stack:
        for name, policy in (("ada", "heuristic"), ("bob", "random")):
            bot = make_server(PolicyBot("cactus", policy), "127.0.0.1", 0, secret=SECRETS[name])
            bot.serve_in_background()
            stack.callback(bot.close)
            code, out, err = cli(
                "bots",
                "register",
                name,
                bot.url,
                "--owner",
                "tests",
                "--games",
                "cactus",
                "--signing-secret",
                SECRETS[name],
                "--json",
            )
            assert (code, err) == (0, ""), err
            registered[name] = json.loads(out)
        yield registered


# -- bots ----------------------------------------------------------------------------------
def test_register_shows_the_owner_token_and_the_secret_once(server, bots):
    bot = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret="charlie-secret-03")
    bot.serve_in_background()
    try:
        argv = (
            "bots",
            "register",
            "charlie",
            bot.url,
            "--owner",
            "carol",
            "--games",
            "cactus",
            "--signing-secret",
            "charlie-secret-03",
        )
        code, out, err = cli(*argv)
        assert (code, err) == (0, "")
        first, token_line, secret_line, *note = out.splitlines()
        bot_id = int(
            re.fullmatch(r"bot (\d+) registered: charlie at (\S+), plays cactus", first)[1]
        )
        token = re.fullmatch(r"owner token:    (\S{20,})", token_line)[1]
        assert secret_line == "signing secret: charlie-secret-03"
        assert note[0].startswith("Both are shown this once")

        # the same name again: the server's refusal, in one line
        assert cli(*argv) == (
            2,
            "",
            f"arena: {server} answered 409: a bot named 'charlie' already exists\n",
        )

        # its owner rotates the secret with the owner token from the environment
        rotate = (
            "bots",
            "rotate",
            str(bot_id),
            "--only",
            "signing_secret",
            "--signing-secret",
            "charlie-secret-04",
        )
        assert cli(*rotate) == (
            2,
            "",
            f"arena: {server} answered 401: this needs the bot's owner token (or its "
            "account's, or an organiser's): Authorization: Bearer <token> "
            "(set $ARENA_OWNER_TOKEN)\n",
        )
        assert cli(*rotate, ARENA_OWNER_TOKEN="not-the-token") == (
            2,
            "",
            f"arena: {server} answered 401: the token is not valid: not an account's, a "
            "bot's owner token or the organiser's (check $ARENA_OWNER_TOKEN)\n",
        )
        code, out, err = cli(*rotate, ARENA_OWNER_TOKEN=token)
        assert (code, err) == (0, "")
        assert out.splitlines()[:2] == [
            f"bot {bot_id} (charlie): new signing_secret",
            "signing secret: charlie-secret-04",
        ]
    finally:
        bot.close()


def test_a_laptop_bot_is_registered_to_connect_out_and_shown_offline(server):
    argv = ("bots", "register", "laptop", "--connect", "--owner", "dee", "--games", "cactus")
    code, out, err = cli(*argv)
    assert (code, err) == (0, "")
    first, _token, secret_line, *rest = out.splitlines()
    bot_id = int(
        re.fullmatch(
            r"bot (\d+) registered: laptop connects out to the arena, "
            r"plays cactus",
            first,
        )[1]
    )
    secret = secret_line.removeprefix("signing secret: ")
    # started the SDK's way: the secret in its environment, not on its command line
    assert rest[-2:] == [
        f"  export ARENA_BOT_SECRET={secret}",
        f"  python bot.py --connect {server} --bot-id {bot_id}",
    ]
    code, out, err = cli("bots", "show", str(bot_id))
    assert (code, err) == (0, "")
    assert "  connection   connects out; not connected" in out.splitlines()
    # the mistakes: one line each, status 2, nothing registered
    assert cli("bots", "register", "lap2", "--connect", "--owner", "dee") == (
        2,
        "",
        "arena: a bot that connects out is registered with --games (it is not called)\n",
    )
    for extra in ((), ("http://127.0.0.1:9", "--connect", "--games", "cactus")):
        assert cli("bots", "register", "lap3", *extra, "--owner", "dee") == (
            2,
            "",
            "arena: give the bot's URL, or --connect for a bot that connects out, or --hosted "
            "for code the arena runs (one of the three)\n",
        )


def test_a_tournament_with_people_prints_each_person_s_link_once(server, bots):
    bot_ids = ",".join(str(b["id"]) for b in list(bots.values())[:2])
    argv = ("tournaments", "start", "cactus", "--bots", bot_ids, "--people", "Ann, Bob")
    token = {"ARENA_ORGANISER_TOKEN": ORGANISER}
    code, out, err = cli(*argv, "--seats", "2", "--person-deadline", "30", **token)
    assert (code, err) == (0, "")
    links = re.findall(r"^    (Ann|Bob) · person [0-9a-f]{6}: (\S+)$", out, re.MULTILINE)
    assert [who for who, _ in links] == ["Ann", "Bob"]
    for _, url in links:
        assert re.fullmatch(re.escape(server) + r"/play/seat/\d+#[\w-]{32,}", url)
    tournament = _tournament_id(out)
    code, out, err = cli("tournaments", "show", str(tournament))
    assert code == 0 and "/play/seat/" not in out  # shown once, at the start
    assert cli("tournaments", "cancel", str(tournament), **token)[0] == 0
    # the mistakes: one line each, status 2
    assert cli("tournaments", "start", "cactus") == (
        2, "", "arena: give the entrants: --bots IDS and/or --people NAMES\n"
    )  # fmt: skip
    code, out, err = cli("tournaments", "start", "cactus", "--people", "a", "--person-deadline=0")
    assert (code, err) == (2, "arena: --person-deadline must be at least 2, not 0\n")


def test_a_reader_that_stops_reading_gets_no_traceback():
    """``arena ... | head -1``: the pipe closes under the command, which ends quietly."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "play",
            "cactus",
            "--matches",
            "300",
            "--bots",
            "random,random",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what head does after its line
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0 and first.startswith(b"match")
    assert err == ""


def test_bots_list_and_show(server, bots):
    # no token: no endpoint (only a bot's owner and the organiser see it)
    code, out, err = cli("bots", "list")
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    assert header.split() == ["id", "name", "owner", "status", "games"]
    named = {row.split()[1]: row.split() for row in rows}
    for name in ("ada", "bob"):
        assert named[name] == [str(bots[name]["id"]), name, "tests", "active", "cactus"]
    # the organiser sees every endpoint, an owner its own
    for env, seen in (
        ({"ARENA_ORGANISER_TOKEN": ORGANISER}, {"ada", "bob"}),
        ({"ARENA_OWNER_TOKEN": bots["ada"]["owner_token"]}, {"ada"}),
    ):
        code, out, err = cli("bots", "list", **env)
        assert (code, err) == (0, "")
        header, *rows = out.splitlines()
        assert header.split() == ["id", "name", "owner", "status", "games", "endpoint"]
        named = {row.split()[1]: row.split() for row in rows}
        for name in ("ada", "bob"):
            assert named[name][-1] == (bots[name]["endpoint"] if name in seen else "-")
    assert cli("bots", "list", ARENA_OWNER_TOKEN="not-a-token")[0] == 2

    code, out, _ = cli("bots", "list", "--json")
    listed = json.loads(out)
    assert code == 0 and {"ada", "bob"} <= {b["name"] for b in listed}
    assert not any("owner_token" in b or "signing_secret" in b for b in listed)
    # neither plays President: only the arena's house bots (made for validation) are listed
    code, out, err = cli("bots", "list", "--game", "president", "--json")
    assert (code, err) == (0, "")
    assert {b["kind"] for b in json.loads(out)} <= {"house"}

    ada = bots["ada"]
    code, out, err = cli("bots", "show", str(ada["id"]))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"bot {ada['id']}: ada"
    assert lines[1].split() == ["status", "active"]
    assert lines[3].split() == ["games", "cactus"] and "endpoint" not in out
    code, out, _ = cli("bots", "show", str(ada["id"]), ARENA_OWNER_TOKEN=ada["owner_token"])
    assert code == 0 and out.splitlines()[3].split() == ["endpoint", ada["endpoint"]]
    code, out, _ = cli("bots", "show", str(ada["id"]), "--json")
    with urllib.request.urlopen(f"{server}/api/bots/{ada['id']}") as response:
        assert json.loads(out) == json.load(response)  # the API's JSON, as it is

    assert cli("bots", "show", "999") == (2, "", f"arena: {server} answered 404: no bot 999\n")


# -- tournaments, ratings, matches -----------------------------------------------------------
def _tournament_id(out: str) -> int:
    return int(re.match(r"tournament (\d+): ", out)[1])


def test_a_tournament_from_its_start_to_a_replay_file(server, bots, tmp_path):
    ids = f"{bots['ada']['id']},{bots['bob']['id']}"
    start = (
        "tournaments",
        "start",
        "cactus",
        "--bots",
        ids,
        "--games-per-pairing",
        "2",
        "--name",
        "cli cup",
        "--seed",
        "4",
    )
    assert cli(*start) == (
        2,
        "",
        f"arena: {server} answered 401: this needs the organiser token: "
        "Authorization: Bearer <token> (set $ARENA_ORGANISER_TOKEN)\n",
    )
    assert cli(*start, ARENA_ORGANISER_TOKEN="wrong") == (
        2,
        "",
        f"arena: {server} answered 401: the token is not valid: not an account's, a bot's "
        "owner token or the organiser's (check $ARENA_ORGANISER_TOKEN)\n",
    )
    code, out, err = cli(*start, ARENA_ORGANISER_TOKEN=ORGANISER)
    assert (code, err) == (0, "")
    tid = _tournament_id(out)
    assert (
        out.splitlines()[0] == f"tournament {tid}: cli cup (cactus, round robin, 2 seats), running"
    )

    def over() -> bool:
        code, out, _ = cli("tournaments", "show", str(tid), "--json")
        return code == 0 and json.loads(out)["status"] == "finished"

    wait_for(over, what="the tournament")
    code, out, err = cli("tournaments", "show", str(tid))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [
        f"tournament {tid}: cli cup (cactus, round robin, 2 seats), finished",
        "  matches: 2/2 over (2 finished)",
    ]
    assert lines[2].split() == [
        "#",
        "bot",
        "id",
        "matches",
        "points",
        "per",
        "match",
        "wins",
        "mean",
        "rank",
        "faults",
        "struck",
        "out",
        "forfeits",
    ]
    assert {line.split()[1] for line in lines[3:5]} == {"ada", "bob"}
    assert all(line.split()[-3:] == ["0", "0", "0"] for line in lines[3:5])  # no fault
    code, out, _ = cli("tournaments", "show", str(tid), "--json")
    assert json.loads(out)["crosstable"] is not None  # --json: the API's whole answer

    code, out, err = cli("ratings", "show", "cactus")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "Leaderboard — cactus"
    assert {line.split()[1] for line in out.splitlines()[2:]} >= {"ada", "bob"}
    code, out, _ = cli("ratings", "show", "cactus", "--json")
    assert {row["name"] for row in json.loads(out)} >= {"ada", "bob"}
    assert cli("ratings", "show", "poker") == (
        2,
        "",
        f"arena: {server} answered 404: unknown game 'poker'; games: cactus, "
        "cactus-game, president\n",
    )

    code, out, err = cli("matches", "list", "--tournament", str(tid))
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split() == [
        "id",
        "game",
        "status",
        "tournament",
        "seats",
        "ranks",
        "finished",
    ]
    code, out, _ = cli("matches", "list", "--tournament", str(tid), "--json")
    match_ids = sorted(m["id"] for m in json.loads(out))
    assert len(match_ids) == 2

    code, out, err = cli("matches", "show", str(match_ids[0]))
    assert (code, err) == (0, "")
    assert out.startswith(f"match {match_ids[0]}: cactus, finished, tournament {tid}, ")
    assert out.splitlines()[1].split() == [
        "seat",
        "bot",
        "id",
        "rank",
        "score",
        "strikes",
        "faults",
    ]

    path = tmp_path / "m.json"
    code, out, err = cli("matches", "replay", str(match_ids[0]), "-o", str(path))
    assert (code, err) == (0, "")
    assert out == (
        f"match {match_ids[0]}'s replay written to {path} (arena replay and arena view read it)\n"
    )
    assert cli("replay", str(path)) == (0, "match 1: ok\n", "")
    assert cli("view", str(path), "--seat", "0", "--html")[0] == 0
    assert cli("matches", "replay", "999999", "-o", str(path)) == (
        2,
        "",
        f"arena: {server} answered 404: no match 999999\n",
    )


def test_cancel_a_tournament(server, bots):
    ids = f"{bots['ada']['id']},{bots['bob']['id']}"
    code, out, err = cli(
        "tournaments",
        "start",
        "cactus",
        "--bots",
        ids,
        "--games-per-pairing",
        "40",
        ARENA_ORGANISER_TOKEN=ORGANISER,
    )
    assert (code, err) == (0, "")
    tid = _tournament_id(out)
    assert cli("tournaments", "cancel", str(tid))[0] == 2  # the organiser's only
    code, out, err = cli("tournaments", "cancel", str(tid), ARENA_ORGANISER_TOKEN=ORGANISER)
    assert (code, err) == (0, "")
    name = "cactus round robin"  # the default: the game and the format
    assert (
        out.splitlines()[0] == f"tournament {tid}: {name} (cactus, round robin, 2 seats), cancelled"
    )
    assert cli("tournaments", "cancel", str(tid), ARENA_ORGANISER_TOKEN=ORGANISER) == (
        2,
        "",
        f"arena: {server} answered 409: tournament {tid} is already cancelled\n",
    )
    assert cli("tournaments", "show", "99999") == (
        2,
        "",
        f"arena: {server} answered 404: no tournament 99999\n",
    )


# -- a server that is down, failing, slow or not an arena ----------------------------------
def test_a_server_that_is_down():
    url = f"http://127.0.0.1:{free_port()}"
    assert cli("bots", "list", "--server", url) == (
        2,
        "",
        f"arena: cannot reach {url} (connection refused): is the arena running "
        "there? (--server or $ARENA_SERVER)\n",
    )


def test_an_address_that_is_not_an_arena():
    bot = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret="a-bot-not-an-arena")
    bot.serve_in_background()
    try:
        assert cli("bots", "list", "--server", bot.url) == (
            2,
            "",
            f"arena: {bot.url} is not an arena: GET /api/bots answered 404 "
            "(application/json); check --server or $ARENA_SERVER\n",
        )
    finally:
        bot.close()


class _Misbehaving(BaseHTTPRequestHandler):
    """Answers by ``server.script``: ``(method, path) -> [(status, content type, body,
    delay), ...]``, one per request (the last one repeats); records every request."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        key = (self.command, self.path.split("?")[0])
        self.server.seen.append(key)  # type: ignore[attr-defined]
        answers = self.server.script[key]  # type: ignore[attr-defined]
        count = self.server.seen.count(key)  # type: ignore[attr-defined]
        status, kind, body, delay = answers[min(count, len(answers)) - 1]
        time.sleep(delay)
        data = body.encode()
        with contextlib.suppress(OSError):  # a client that gave up waiting
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    do_GET = do_POST = _answer


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (a timeout under test) leaves a broken pipe behind: not an
    error worth printing into the stderr the test reads."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@pytest.fixture
def misbehaving() -> Iterator[Callable[[dict[Any, Any]], tuple[str, list[Any]]]]:
    servers = []

    def start(script: dict[Any, Any]) -> tuple[str, list[Any]]:
        httpd = _QuietServer(("127.0.0.1", 0), _Misbehaving)
        httpd.daemon_threads = True
        httpd.script, httpd.seen = script, []  # type: ignore[attr-defined]
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_port}", httpd.seen  # type: ignore[attr-defined]

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


JSON = "application/json"


def test_a_get_is_retried_and_a_post_is_not(misbehaving):
    url, seen = misbehaving(
        {
            ("GET", "/api/bots"): [(503, "text/plain", "busy", 0)] * 2 + [(200, JSON, "[]", 0)],
            ("POST", "/api/tournaments"): [(503, "text/plain", "busy", 0)],
        }
    )
    assert cli("bots", "list", "--server", url) == (0, "no bot is registered\n", "")
    assert seen.count(("GET", "/api/bots")) == 3
    assert cli("tournaments", "start", "cactus", "--bots", "1,2", "--server", url) == (
        1,
        "",
        f"arena: {url} failed: 503 Service Unavailable (POST /api/tournaments; see "
        "the server's log)\n",
    )
    assert seen.count(("POST", "/api/tournaments")) == 1


def test_a_server_error_is_exit_status_1(misbehaving):
    body = json.dumps({"code": 500, "status": "Internal Server Error", "message": "oops"})
    url, _ = misbehaving({("GET", "/api/ratings/cactus"): [(500, JSON, body, 0)]})
    assert cli("ratings", "show", "cactus", "--server", url) == (
        1,
        "",
        f"arena: {url} failed: 500 oops (GET /api/ratings/cactus; see the server's log)\n",
    )


def test_a_slow_server_times_out(misbehaving):
    url, seen = misbehaving({("GET", "/api/bots/1"): [(200, JSON, "{}", 1.0)]})
    assert cli("bots", "show", "1", "--server", url, "--timeout", "0.2") == (
        2,
        "",
        f"arena: {url} did not answer GET /api/bots/1 within 0.2 s\n",
    )
    assert len(seen) == 4  # the first try and three retries


def test_a_web_page_is_not_an_arena(misbehaving):
    url, _ = misbehaving({("GET", "/api/ratings/cactus"): [(200, "text/html", "<html>", 0)]})
    assert cli("ratings", "show", "cactus", "--server", url) == (
        2,
        "",
        f"arena: {url} is not an arena: GET /api/ratings/cactus answered 200 "
        "(text/html); check --server or $ARENA_SERVER\n",
    )
