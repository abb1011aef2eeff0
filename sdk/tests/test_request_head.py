"""The bot server reads a request's line and headers itself (``read_head``, owned code):
fuzzed here with well-formed heads, which it must read exactly, and with any bytes, which
it must read, wait for more of, or refuse with an HTTP error, never crash on."""

from __future__ import annotations

from http import HTTPStatus

import pytest
from arenabot.server import MAX_HEAD, MAX_HEADERS, Head, HeadError, _Requests, read_head
from hypothesis import given, settings
from hypothesis import strategies as st


def parse(data: bytes) -> tuple[Head | None, bytes, HTTPStatus | None]:
    """``read_head`` on ``data`` as the start of a connection: the head (None while it
    is incomplete or refused), what follows it, and the refusal's status."""
    try:
        found = read_head(data)
    except HeadError as exc:
        return None, b"", exc.status
    if found is None:
        return None, b"", None
    head, offset = found
    return head, data[offset:], None


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
    head, rest, refused = parse(nl.join(line.encode() for line in lines) + nl + nl + b"body")
    assert head is not None and refused is None
    assert (head.method, head.version) == (method, version)
    assert head.path == "/" + path.lstrip("/")
    expected: dict[str, str] = {}
    for n, v in headers:
        key = n.lower()
        expected[key] = f"{expected[key]}, {v}" if key in expected else v
    for n, _ in headers:
        assert head.headers.get(n.upper()) == expected[n.lower()]
    tokens = {t.strip().lower() for t in (conn or "").split(",")}
    keep = "keep-alive" in tokens if version == "HTTP/1.0" else "close" not in tokens
    assert head.close is not keep
    assert rest == b"body"  # the body is left for the connection


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=600))
def test_fuzz_any_bytes_are_read_or_refused_never_crash(data):
    _, _, refused = parse(b"POST /act HTTP/1.1\r\n" + data)
    assert refused is None or 400 <= refused < 600


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_any_request_line_is_read_or_refused_never_crash(line):
    head, _, refused = parse(line.replace(b"\n", b"") + b"\r\nHost: x\r\n\r\n")
    assert (head is None) is (refused is not None)
    assert refused is None or 400 <= refused < 600


def test_too_many_headers_or_a_head_too_long_is_431():
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1))
    assert parse(b"POST /act HTTP/1.1\r\n" + many + b"\r\n")[2] == 431
    assert parse(b"POST /act HTTP/1.1\r\nX: " + b"x" * 70000 + b"\r\n\r\n")[2] == 431
    # the cap is on the whole head: 70 lines of 1,000 bytes are as many bytes
    lines = b"".join(b"X-%d: %s\r\n" % (i, b"x" * 990) for i in range(70))
    assert parse(b"POST /act HTTP/1.1\r\n" + lines + b"\r\n")[2] == 431
    assert parse(b"POST /act HTTP/1.1\r\n" + lines)[2] == 431  # before its end arrives
    assert parse(b"POST /act HTTP/1.1\r\n" + lines[: MAX_HEAD - 100])[2] is None  # waits


def test_http_2_and_nonsense_versions_are_refused():
    assert parse(b"GET / HTTP/2.0\r\n\r\n")[2] == 505
    assert parse(b"GET / FTP/1.0\r\n\r\n")[2] == 400
    assert parse(b"GET /\r\n\r\n")[2] == 400


@pytest.mark.parametrize("value", ["100-continue", "100-Continue"])
def test_expect_100_continue_is_seen(value: str):
    head, _, _ = parse(f"POST /act HTTP/1.1\r\nExpect: {value}\r\n\r\n".encode())
    assert head is not None and head.expect_100


REQUEST = st.tuples(
    st.sampled_from(["GET", "POST"]),
    st.sampled_from(["/", "/act", "/start", "/end"]),
    st.lists(st.tuples(NAME, VALUE), max_size=6),
    st.binary(max_size=300),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(REQUEST, min_size=1, max_size=5),
    st.sampled_from([b"\r\n", b"\n"]),
    st.lists(st.integers(1, 200), min_size=1, max_size=50),
    st.booleans(),
)
def test_fuzz_requests_cut_anywhere_are_read_whole_and_in_order(requests, nl, cuts, blank):
    """However a connection's bytes arrive (one at a time, in pieces, all at once), the
    connection's reader (``_Requests``) gives back each request whole, in order."""
    stream = b""
    for method, path, headers, body in requests:
        headers = [(n, v) for n, v in headers if n.lower() not in ("content-length", "expect")]
        lines = [f"{method} {path} HTTP/1.1"] + [f"{n}: {v}" for n, v in headers]
        lines.append(f"Content-Length: {len(body)}")
        stream += (nl if blank else b"") + nl.join(line.encode() for line in lines)
        stream += nl + nl + body
    reader, got, at = _Requests(max_body=1000), [], 0
    for cut in cuts * (len(stream) // sum(cuts) + 1):
        reader.feed(stream[at : at + cut])
        at += cut
        while (found := reader.next()) is not None:
            got.append((found[0].method, found[0].path, found[1]))
        if at >= len(stream):
            break
    assert got == [(m, p, b) for m, p, _, b in requests]
    assert not reader.buffer and reader.head is None
