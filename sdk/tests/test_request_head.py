"""The bot server reads a request's line and headers itself (``BotHandler.parse_request``,
owned code): fuzzed here with well-formed heads, which it must read exactly, and with any
bytes, which it must read or refuse with an HTTP error, never crash on."""

from __future__ import annotations

import io
from types import SimpleNamespace

from arenabot.server import MAX_HEADERS, BotHandler
from hypothesis import given, settings
from hypothesis import strategies as st


class Sent:
    def __init__(self) -> None:
        self.data = b""

    def sendall(self, data: bytes) -> None:
        self.data += data


def parse(data: bytes) -> tuple[bool, BotHandler, bytes]:
    """Run the handler's parse_request on ``data`` as the start of a connection."""
    handler = BotHandler.__new__(BotHandler)
    handler.rfile = io.BytesIO(data)
    handler.wfile = io.BytesIO()
    handler.raw_requestline = handler.rfile.readline(65537)
    handler.connection = Sent()  # type: ignore[assignment]
    handler.server = SimpleNamespace(verbose=False)  # type: ignore[assignment]
    handler.client_address = ("127.0.0.1", 1)
    ok = handler.parse_request()
    return ok, handler, handler.connection.data + handler.wfile.getvalue()  # type: ignore[attr-defined]


NAME = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_", min_size=1, max_size=16)
VALUE = st.text("abcdefghijklmnopqrstuvwxyz0123456789 =;,./:-", max_size=40).map(str.strip)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["GET", "POST"]),
    st.sampled_from(["/", "/act", "/start", "//end"]),
    st.sampled_from(["HTTP/1.0", "HTTP/1.1"]),
    st.lists(st.tuples(NAME, VALUE), max_size=12),
    st.sampled_from([None, "close", "keep-alive", "Keep-Alive, foo"]),
    st.sampled_from([b"\r\n", b"\n"]),
)
def test_fuzz_a_well_formed_head_is_read_exactly(method, path, version, headers, conn, nl):
    headers = [(n, v) for n, v in headers if n.lower() not in ("connection", "expect")]
    if conn is not None:
        headers.append(("Connection", conn))
    lines = [f"{method} {path} {version}"] + [f"{n}: {v}" for n, v in headers]
    ok, handler, sent = parse(nl.join(line.encode() for line in lines) + nl + nl + b"body")
    assert ok and sent == b""
    assert (handler.command, handler.request_version) == (method, version)
    assert handler.path == "/" + path.lstrip("/")
    expected: dict[str, str] = {}
    for n, v in headers:
        key = n.lower()
        expected[key] = f"{expected[key]}, {v}" if key in expected else v
    for n, _ in headers:
        assert handler.headers.get(n.upper()) == expected[n.lower()]
    tokens = {t.strip().lower() for t in (conn or "").split(",")}
    keep = "keep-alive" in tokens if version == "HTTP/1.0" else "close" not in tokens
    assert handler.close_connection is not keep
    assert handler.rfile.read() == b"body"  # the body is left for the handler


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=600))
def test_fuzz_any_bytes_are_read_or_refused_never_crash(data):
    ok, _, sent = parse(b"POST /act HTTP/1.1\r\n" + data)
    if not ok:
        assert sent.startswith((b"HTTP/1.1 4", b"HTTP/1.1 5")), sent[:40]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_any_request_line_is_read_or_refused_never_crash(line):
    ok, _, sent = parse(line.replace(b"\n", b"") + b"\r\nHost: x\r\n\r\n")
    if not ok:
        assert sent == b"" or sent.startswith((b"HTTP/1.1 4", b"HTTP/1.1 5")), sent[:40]


def test_too_many_or_too_long_headers_are_431():
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1))
    ok, _, sent = parse(b"POST /act HTTP/1.1\r\n" + many + b"\r\n")
    assert not ok and sent.startswith(b"HTTP/1.1 431 ")
    ok, _, sent = parse(b"POST /act HTTP/1.1\r\nX: " + b"x" * 70000 + b"\r\n\r\n")
    assert not ok and sent.startswith(b"HTTP/1.1 431 ")


def test_http_2_and_nonsense_versions_are_refused():
    assert parse(b"GET / HTTP/2.0\r\n\r\n")[2].startswith(b"HTTP/1.1 505 ")
    assert parse(b"GET / FTP/1.0\r\n\r\n")[2].startswith(b"HTTP/1.1 400 ")
    assert parse(b"GET /\r\n\r\n")[2].startswith(b"HTTP/1.1 400 ")


def test_expect_100_continue_is_answered_before_the_body():
    ok, _, sent = parse(b"POST /act HTTP/1.1\r\nExpect: 100-continue\r\n\r\n")
    assert ok and sent.startswith(b"HTTP/1.1 100 ")
