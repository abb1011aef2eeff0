"""The command line at its edges: a reader that stops reading (``arena ... | head -1``)
and an address given the wrong way (``--server`` with the API's prefix, a server that
is not an arena) each end with one line or none, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import pytest
from flask import Flask
from werkzeug.serving import make_server

from arena.cli import main


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


class _Empty(BaseHTTPRequestHandler):
    """An arena with nothing in it: every list is empty."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def empty_arena() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Empty)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "president", "--matches", "2"],
        ["bots", "list"],
        ["bots", "list", "--json"],
        ["ratings", "show", "cactus"],
        ["tournaments", "list"],
    ],
)
def test_a_reader_gone_before_the_output_is_written_gets_no_traceback(argv, empty_arena):
    """Short output sits in the buffer until the command ends: a reader gone by then
    (``| head -1`` that has its line, ``| true``) must not turn the exit into a
    traceback and status 120.  The environment is a user's: stdout buffered."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before anything is written
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena",
                *argv,
                *(["--server", empty_arena] * (argv[0] != "play")),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.stderr.decode() == ""
    assert proc.returncode == 0


@pytest.fixture
def live_arena(make_app: Callable[..., Flask]) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, make_app(), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_the_api_prefix_in_server_is_the_arena_itself(live_arena):
    """``--server http://host:port/api`` (the address the API's documentation shows)
    reaches the same arena as ``http://host:port``."""
    with mock.patch.dict(os.environ, {"ARENA_SERVER": ""}):
        plain = cli("bots", "list", "--server", live_arena)
        for server in (f"{live_arena}/api", f"{live_arena}/api/"):
            assert (
                cli("bots", "list", "--server", server)
                == plain
                == (
                    0,
                    "no bot is registered\n",
                    "",
                )
            )
        # and an arena's own 404 (a bot that is not there) is still its own message
        assert cli("bots", "show", "7", "--server", f"{live_arena}/api") == (
            2,
            "",
            f"arena: {live_arena} answered 404: no bot 7\n",
        )


def test_a_path_that_is_none_of_the_api_s_routes_is_one_line_naming_the_address(live_arena):
    """An arena's JSON 404 for a path that is none of its routes means a wrong address
    (a versioned prefix that does not exist, a typo), not a missing bot: one line that
    says so, not Flask's paragraph about spelling."""
    server = f"{live_arena}/api/v1"
    code, out, err = cli("bots", "list", "--server", server)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"arena: {server} is not an arena")
    assert "--server" in err


class _JsonNotFound(BaseHTTPRequestHandler):
    """Another Flask app, not an arena: Flask's own 404 words, in JSON.  (A server that
    answers HTML is tests/test_remote.py's.)"""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        from werkzeug.exceptions import NotFound

        body = json.dumps({"code": 404, "message": NotFound.description}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_flask_server_that_is_not_an_arena_is_one_clear_line():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _JsonNotFound)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_port}"
    try:
        for argv in (["bots", "list"], ["ratings", "show", "cactus"], ["bots", "show", "3"]):
            code, out, err = cli(*argv, "--server", url)
            assert (code, out) == (2, "")
            assert err.startswith(f"arena: {url} is not an arena") and err.count("\n") == 1
            assert "check --server or $ARENA_SERVER" in err
    finally:
        httpd.shutdown()
        httpd.server_close()
