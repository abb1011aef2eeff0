"""The HTTP client of the referee: its response parser (fuzzed: it is owned code), its
connection pools (bounded, shared, never deadlocked) and its deadline (one per answer)."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import make_policy
from arena.match import pools as pools_module
from arena.match.answers import MAX_ANSWER_BYTES, MAX_HEAD_BYTES, MAX_HEADER_LINES, ResponseParser
from arena.match.faults import BotFault
from arena.match.http_client import HttpClient
from arena.match.pools import Connection, EndpointPool, Pools
from arena.match.records import check
from arena.match.referee import PolicyClient, Referee, policy_rng

# what the parser may raise: a fault, or the end of a stream that held no answer (the
# client turns it into a fault); never an IndexError, a ValueError...
EXPECTED = (BotFault, EOFError)


def pieces(data: bytes, cuts: list[int] = ()) -> list[bytes]:  # type: ignore[assignment]
    """``data`` cut at ``cuts``, as the reads of a socket could hand it out."""
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def parse(data: bytes, cuts: list[int] = (), cap: int = MAX_ANSWER_BYTES):  # type: ignore[assignment]
    """The response ``data`` holds, fed to a parser in pieces, then the end of stream."""
    parser = ResponseParser(cap)
    for piece in pieces(data, cuts):
        response = parser.feed(piece)
        if response is not None:
            return response
    return parser.feed_eof()


# -- the parser, case by case --------------------------------------------------------------
def test_a_content_length_answer():
    r = parse(b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{"action": 1}')
    assert (r.status, r.body, r.keep_alive) == (200, b'{"action": 1}', True)


def test_a_chunked_answer_with_extensions_and_trailers():
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    data += b'4;x=y\r\n{"a"\r\n5\r\n: 12}\r\n0\r\nX-Trailer: 1\r\n\r\n'
    r = parse(data)
    assert (r.body, r.keep_alive) == (b'{"a": 12}', True)


def test_an_answer_ended_by_the_connection_is_not_kept_alive():
    r = parse(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}")
    assert (r.body, r.keep_alive) == (b"{}", False)


def test_http_1_0_and_connection_close_are_not_kept_alive():
    assert not parse(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}").keep_alive
    assert parse(
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}"
    ).keep_alive
    assert not parse(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    ).keep_alive


def test_bare_line_feeds_interim_answers_and_no_content():
    r = parse(b"HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\nContent-Length: 2\n\n{}")
    assert (r.status, r.body) == (200, b"{}")
    assert parse(b"HTTP/1.1 204 No Content\r\n\r\n").body == b""
    # the head ends at its first empty line, even when the body holds the other kind
    r = parse(b"HTTP/1.1 200 OK\nContent-Length: 4\n\n\r\n\r\n")
    assert (r.status, r.body, r.keep_alive) == (200, b"\r\n\r\n", True)


def test_bytes_after_the_answer_close_the_connection():
    assert not parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}junk").keep_alive


def test_a_header_seen_twice_means_its_values_joined():
    r = parse(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n{}")
    assert not r.keep_alive
    with pytest.raises(BotFault) as fault:  # two lengths are "2, 2": not a length
        parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}")
    assert fault.value.kind == "bad_answer"


def test_a_head_of_more_than_max_header_lines_is_too_large():
    def head(lines: int) -> bytes:
        return b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * (lines - 1) + b"Content-Length: 2\r\n\r\n{}"

    assert parse(head(MAX_HEADER_LINES)).body == b"{}"
    with pytest.raises(BotFault) as fault:
        parse(head(MAX_HEADER_LINES + 1))
    assert fault.value.kind == "too_large"
    assert fault.value.detail == f"an answer head of more than {MAX_HEADER_LINES} header lines"
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
    with pytest.raises(BotFault) as fault:
        parse(chunked + b"X: y\r\n" * (MAX_HEADER_LINES + 1) + b"\r\n")
    assert fault.value.kind == "too_large"


def test_interim_answers_count_towards_the_head_cap():
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    data = interim * (MAX_HEAD_BYTES // len(interim) + 1) + b"HTTP/1.1 204 No\r\n\r\n"
    with pytest.raises(BotFault) as fault:
        parse(data, list(range(0, len(data), 4096)))
    assert fault.value.kind == "too_large"


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n", "too_large"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1" + b"0" * 40 + b"\r\n\r\n", "too_large"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n12345", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "bad_answer"),
        (b"HTTP/1.1 101 Switching\r\n\r\n", "bad_answer"),
        (b"HTTP/2 200\r\n\r\n", "bad_answer"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\n folded: header\r\n\r\n", "bad_answer"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"x" * (MAX_HEAD_BYTES + 10), "too_large"),
    ],
)
def test_a_malformed_or_oversized_answer_is_a_fault(data, kind):
    with pytest.raises(BotFault) as fault:
        parse(data)
    assert fault.value.kind == kind


def test_a_body_over_the_cap_is_a_fault_however_it_is_framed():
    body = b"x" * 101
    framings = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n" + body,
        b"HTTP/1.1 200 OK\r\n\r\n" + body,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" + body + b"\r\n0\r\n\r\n",
    ]
    for data in framings:
        with pytest.raises(BotFault) as fault:
            parse(data, cap=100)
        assert fault.value.kind == "too_large"
        assert parse(data, cap=101).body == body


def test_an_answer_cut_short_is_a_fault_and_no_answer_at_all_is_an_end_of_stream():
    with pytest.raises(BotFault) as fault:
        parse(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n123")
    assert fault.value.kind == "connection_closed"
    with pytest.raises(EOFError):
        parse(b"")


# -- the parser, fuzzed ----------------------------------------------------------------------
TOKEN = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12).filter(
    lambda t: t.lower() not in ("content-length", "transfer-encoding", "connection")
)
VALUE = st.text("abcdefghijklmnopqrstuvwxyz0123456789 ;=/.", max_size=30).map(str.strip)


@st.composite
def responses(draw):
    """A well-formed answer, the body it carries, and whether it keeps the connection."""
    status = draw(st.sampled_from([200, 201, 202, 400, 401, 404, 500, 503]))
    body = draw(st.binary(max_size=3000))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    newline = draw(st.sampled_from([b"\r\n", b"\n"]))
    headers = [
        (n.encode(), v.encode()) for n, v in draw(st.lists(st.tuples(TOKEN, VALUE), max_size=6))
    ]
    if framing == "length":
        headers.append((b"Content-Length", str(len(body)).encode()))
    elif framing == "chunked":
        headers.append((b"Transfer-Encoding", b"chunked"))
    head = [b"HTTP/1.1 %d Reason Phrase" % status] + [n + b": " + v for n, v in headers]
    data = newline.join(head) + newline + newline
    if framing == "chunked":
        sizes = draw(st.lists(st.integers(1, 700), max_size=8))
        rest, pieces = body, []
        for size in sizes:
            if rest:
                pieces.append(rest[:size])
                rest = rest[size:]
        if rest:
            pieces.append(rest)
        for piece in pieces:
            data += b"%x" % len(piece) + newline + piece + newline
        data += b"0" + newline + newline
    else:
        data += body
    cuts = draw(st.lists(st.integers(0, len(data)), max_size=12))
    return data, cuts, status, body, framing != "close"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses())
def test_fuzz_a_well_formed_answer_parses_to_its_body_however_it_arrives(case):
    data, cuts, status, body, keep_alive = case
    r = parse(data, cuts)
    assert (r.status, r.body, r.keep_alive) == (status, body, keep_alive)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses(), st.data())
def test_fuzz_a_damaged_answer_is_parsed_or_refused_never_crashes(case, data):
    raw = bytearray(case[0])
    for _ in range(data.draw(st.integers(1, 6))):
        where = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        what = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        if what == "flip" and raw:
            raw[where] = data.draw(st.integers(0, 255))
        elif what == "insert":
            raw[where:where] = data.draw(st.binary(min_size=1, max_size=8))
        elif raw:
            del raw[where]
    try:
        r = parse(bytes(raw), case[1])
    except EXPECTED:
        return
    assert isinstance(r.status, int) and len(r.body) <= MAX_ANSWER_BYTES


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=5))
def test_fuzz_any_bytes_are_parsed_or_refused_never_crash(raw, cuts):
    with suppress(*EXPECTED):
        parse(b"HTTP/1.1 200 OK\r\n" + raw, cuts)


def outcome(data: bytes, cuts: list[int]) -> tuple:
    try:
        r = parse(data, cuts)
    except BotFault as fault:
        return ("fault", fault.kind, fault.detail)
    except EOFError:
        return ("no answer",)
    return ("answer", r.status, r.body)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses(), st.data())
def test_fuzz_the_parser_ends_the_same_however_the_bytes_are_cut(case, data):
    """The parser is fed what each read of the socket hands out: whole, cut anywhere,
    damaged or not, it reaches the same answer or the same fault."""
    raw = bytearray(case[0])
    for _ in range(data.draw(st.integers(0, 4))):
        where = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        raw[where:where] = data.draw(st.sampled_from([b"\n", b"\r\n", b"\n\n", b"0", b"x:"]))
    cuts = data.draw(st.lists(st.integers(0, len(raw)), max_size=20))
    assert outcome(bytes(raw), cuts) == outcome(bytes(raw), [])
    assert outcome(bytes(raw), list(range(len(raw)))) == outcome(bytes(raw), [])  # byte by byte


# -- pools, over real loopback sockets ------------------------------------------------------
@contextmanager
def bot_server(
    answer_delay: float = 0.0,
    answers_per_connection: int | None = None,
    then: str = "close",
    hangup_delay: float = 0.0,
) -> Iterator[dict]:
    """A loopback bot answering every POST with the last legal action; it counts its
    connections (open now, at most at once, in all) and the requests it received.  After
    ``answers_per_connection`` answers on a connection it either closes it at once
    (``then="close"``: an idle keep-alive connection the bot dropped), or reads the next
    request, waits ``hangup_delay`` and hangs up without a word (``"hang_up"``)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stats = {"open": 0, "peak": 0, "accepted": 0, "requests": [], "url": ""}
    stats["url"] = f"http://127.0.0.1:{listener.getsockname()[1]}"
    lock = threading.Lock()
    stopping = threading.Event()

    def serve(conn: socket.socket) -> None:
        served = 0
        reader = conn.makefile("rb")
        try:
            while True:
                if served == answers_per_connection and then == "close":
                    return
                line = reader.readline()
                if not line:
                    return
                length = 0
                while (header := reader.readline()) not in (b"\r\n", b""):
                    if header.lower().startswith(b"content-length:"):
                        length = int(header.split(b":")[1])
                body = json.loads(reader.read(length)) if length else {}
                with lock:
                    stats["requests"].append(body.get("decision_id"))
                if served == answers_per_connection:
                    time.sleep(hangup_delay)
                    return
                time.sleep(answer_delay)
                legal = body.get("legal_actions")
                answer = json.dumps({"action": legal[-1]} if legal else {}).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(answer) + answer
                )
                served += 1
        except OSError:
            return
        finally:
            reader.close()
            conn.close()
            with lock:
                stats["open"] -= 1

    def accept() -> None:
        listener.settimeout(0.05)
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with lock:
                stats["open"] += 1
                stats["accepted"] += 1
                stats["peak"] = max(stats["peak"], stats["open"])
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield stats
    finally:
        stopping.set()
        thread.join()
        listener.close()


def act(client: HttpClient, n: int, deadline_ms: int = 2000) -> object:
    return client.act(
        {"decision_id": str(n), "legal_actions": [{"n": n}], "deadline_ms": deadline_ms}
    )


def test_connections_to_an_endpoint_are_bounded_and_shared_across_matches():
    pools = Pools(max_connections=3)
    with bot_server(answer_delay=0.02) as bot:
        answers: list[object] = []

        def match(m: int) -> None:  # each "match" has a client of its own
            client = HttpClient(bot["url"], "s3cret", f"m{m}", pool=pools.get(bot["url"]))
            answers.extend(act(client, 10 * m + k) for k in range(5))
            client.close()  # a shared pool outlives the match

        threads = [threading.Thread(target=match, args=(m,)) for m in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        pools.close()
    assert sorted(a["action"]["n"] for a in answers) == sorted(  # type: ignore[index]
        10 * m + k for m in range(12) for k in range(5)
    )
    assert bot["peak"] <= 3  # requests waited for a connection rather than open a fourth
    assert bot["accepted"] <= 3  # and the connections were kept alive across matches


@pytest.mark.parametrize("seen_before_sending", [True, False])
def test_an_idle_connection_the_bot_closed_is_replaced_without_a_fault(
    monkeypatch, seen_before_sending
):
    """The bot drops the idle connection.  Either the arena sees that before it sends,
    or (the race every keep-alive client has) the bot closed it just after the arena
    looked and before the request arrived: the bot's system answers the request with a
    reset, so it was never read, and it is sent once more within its deadline."""
    if not seen_before_sending:
        monkeypatch.setattr(Connection, "stale", lambda self: False)
    with bot_server(answers_per_connection=1, then="close") as bot:
        client = HttpClient(bot["url"])
        try:
            for n in range(3):
                assert act(client, n)["action"]["n"] == n  # type: ignore[index]
                time.sleep(0.05)  # the bot drops the connection while it is idle
        finally:
            client.close()
    assert bot["accepted"] == 3 and bot["requests"] == ["0", "1", "2"]


def test_a_bot_gets_one_deadline_for_an_answer_even_on_a_reused_connection():
    """The bot answers once; on the kept-alive connection it then thinks for the whole
    deadline and hangs up.  That is a timeout: the request is not sent again on a new
    connection with a fresh deadline."""
    with bot_server(answers_per_connection=1, then="hang_up", hangup_delay=0.5) as bot:
        client = HttpClient(bot["url"])
        try:
            act(client, 1)
            started = time.monotonic()
            with pytest.raises(BotFault) as fault:
                act(client, 2, deadline_ms=200)
            took = time.monotonic() - started
        finally:
            client.close()
    assert fault.value.kind == "timeout"
    assert bot["requests"] == ["1", "2"]  # asked once, not again on a new connection
    assert took < 0.2 + 0.25 + 0.2  # the deadline and its grace, not twice that


def test_a_bot_that_answers_only_on_the_resend_is_a_timeout():
    """The bot reads the request on its kept-alive connection, thinks for most of the
    deadline and hangs up, ready to answer the same request at once on a new connection.
    It had the request: it is not sent again, and no answer came within the deadline."""
    with bot_server(answers_per_connection=1, then="hang_up", hangup_delay=0.3) as bot:
        client = HttpClient(bot["url"])
        try:
            act(client, 1)
            with pytest.raises(BotFault) as fault:
                act(client, 2, deadline_ms=200)
        finally:
            client.close()
    assert fault.value.kind == "timeout"
    assert bot["requests"] == ["1", "2"] and bot["accepted"] == 1


def test_an_answer_cut_by_a_reset_is_a_fault_not_a_resend():
    """A bot that began to answer had the request: a reset mid-answer is a fault."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            for answer in (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", b"HTTP/1.1 2"):
                seen.append(conn.recv(65536))
                conn.sendall(answer)
            time.sleep(0.05)
            # close with a reset (linger 0) instead of a FIN
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = HttpClient(f"http://127.0.0.1:{listener.getsockname()[1]}")
    try:
        act(client, 1)
        with pytest.raises(BotFault) as fault:
            act(client, 2)
    finally:
        client.close()
        thread.join(5)
        listener.close()
    assert fault.value.kind == "connection_closed" and fault.value.received == 10
    assert len(seen) == 2


def test_a_fault_keeps_its_cause():
    """Status, bytes received, what was refused and the exception that ended it."""

    def answer_with(data: bytes):
        listener = socket.create_server(("127.0.0.1", 0))

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(data)
                time.sleep(1.0)

        threading.Thread(target=serve, daemon=True).start()
        client = HttpClient(f"http://127.0.0.1:{listener.getsockname()[1]}")
        try:
            with pytest.raises(BotFault) as fault:
                act(client, 1, deadline_ms=50)
        finally:
            client.close()
            listener.close()
        return fault.value

    body = b'{"error": "wrong signature"}'
    unauthorised = answer_with(
        b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    )
    assert unauthorised.kind == "http_status"
    assert unauthorised.cause() == {
        "detail": "HTTP 401",
        "status": 401,
        "received": len(body),
        "excerpt": body.decode(),
    }
    deep = b"[" * 5000
    nested = answer_with(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(deep) + deep)
    assert nested.kind == "not_json" and "depth limit exceeded" in nested.detail
    assert nested.cause()["excerpt"].startswith("[[[") and len(nested.cause()["excerpt"]) <= 200
    slow = answer_with(b"HTTP/1.1 200 OK\r\nContent-")  # headers cut by the deadline
    assert slow.kind == "timeout" and slow.received == 25 and slow.error == "TimeoutError"


def test_a_head_of_sixteen_thousand_header_lines_is_a_fault():
    """A legal-looking answer under the head cap in bytes, made of 16,000 ``X:`` lines
    (each repeated header once cost a join of all the values so far): refused on the
    count of its lines."""
    listener = socket.create_server(("127.0.0.1", 0))
    head = b"HTTP/1.1 200 OK\r\n" + b"X:\r\n" * 16_000 + b"Content-Length: 13\r\n\r\n"
    assert len(head) <= MAX_HEAD_BYTES

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(head + b'{"action": 1}')
            time.sleep(0.5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = HttpClient(f"http://127.0.0.1:{listener.getsockname()[1]}")
    try:
        with pytest.raises(BotFault) as fault:
            act(client, 1)
    finally:
        client.close()
        thread.join(5)
        listener.close()
    assert fault.value.kind == "too_large"
    assert fault.value.detail == f"an answer head of more than {MAX_HEADER_LINES} header lines"


def test_a_connection_that_never_completes_is_a_timeout_of_its_own():
    """The bot's system never accepts the connection (its backlog is full): the connect
    gives up after ``connect_timeout``, within the deadline, as a timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    queued = []
    for _ in range(3):  # fill the backlog: later connections are never answered
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        queued.append(s)
    client = HttpClient(f"http://127.0.0.1:{port}", connect_timeout=0.2)
    try:
        with pytest.raises(BotFault) as fault:
            act(client, 1)
    finally:
        client.close()
        for s in queued:
            s.close()
        listener.close()
    assert fault.value.kind == "timeout" and fault.value.detail == "connect: timed out"


@pytest.fixture
def certificate(tmp_path) -> tuple[str, str]:
    """A self-signed certificate for ``localhost`` and its key (files)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed: no certificate to test TLS with")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    request = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    subject = ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
    files = ["-keyout", str(key), "-out", str(cert)]
    subprocess.run([openssl, *request, *subject, *files], check=True, capture_output=True)
    return str(cert), str(key)


def test_an_https_bot_is_asked_over_one_kept_alive_connection(certificate):
    """TLS through the non-blocking exchange: handshake, request and answers, the
    connection kept alive between requests; a certificate the arena does not trust is a
    fault."""
    cert, key = certificate
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def serve(conn: socket.socket) -> None:
        with suppress(OSError), server_side.wrap_socket(conn, server_side=True) as tls:
            reader = tls.makefile("rb")
            while reader.readline():
                length = 0
                while (header := reader.readline()) not in (b"\r\n", b""):
                    if header.lower().startswith(b"content-length:"):
                        length = int(header.split(b":")[1])
                body = json.loads(reader.read(length))
                answer = json.dumps({"action": body["legal_actions"][-1]}).encode()
                tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(answer) + answer)

    def accept() -> None:
        with suppress(OSError):
            while True:
                conn, _ = listener.accept()
                accepted.append(1)
                threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    url = f"https://localhost:{listener.getsockname()[1]}"
    trusting = HttpClient(url)
    trusting.pool._tls = ssl.create_default_context(cafile=cert)  # trust this one
    doubting = HttpClient(url)
    try:
        assert [act(trusting, n)["action"]["n"] for n in range(3)] == [0, 1, 2]  # type: ignore[index]
        with pytest.raises(BotFault) as fault:
            act(doubting, 9)
    finally:
        trusting.close()
        doubting.close()
        listener.close()
    assert accepted.count(1) == 2  # one connection for three answers, one refused
    assert fault.value.kind == "connection_error"
    assert "CERTIFICATE_VERIFY_FAILED" in fault.value.detail


def _house(game: str, seat: int) -> PolicyClient:
    return PolicyClient(make_policy(game, "random", policy_rng(1, seat)), f"house{seat}")


def test_two_matches_in_reaction_windows_never_wait_on_each_other():
    """One connection per endpoint, two matches seating the same two bots in opposite
    seats: each reaction window needs both bots at once.  A window waiting for one bot's
    connection still reads the other's answer, and gives that connection back: no
    window holds a connection while it waits for another."""
    pools = Pools(max_connections=1)
    with bot_server() as a, bot_server() as b:
        records: dict[int, object] = {}

        def match(m: int, urls: list[str]) -> None:
            clients = [
                HttpClient(u, None, f"{m}-{i}", pool=pools.get(u)) for i, u in enumerate(urls)
            ]
            records[m] = Referee().run("cactus", [*clients, _house("cactus", 2)], seed=m)

        threads = [
            threading.Thread(
                target=match, args=(m, [a["url"], b["url"]][:: 1 if m % 2 else -1]), daemon=True
            )
            for m in range(4)
        ]
        for t in threads:
            t.start()
        given_up = time.monotonic() + 30
        for t in threads:
            t.join(max(given_up - time.monotonic(), 0))
        hung = [t for t in threads if t.is_alive()]
        pools.close()
    assert not hung, "matches waited on each other's connections"
    assert len(records) == 4
    assert all(check(r.to_json()) == [] and r.strikes == [0, 0, 0] for r in records.values())


def test_a_bot_seated_twice_with_one_connection_allowed_still_plays():
    pools = Pools(max_connections=1)
    with bot_server() as bot:
        clients = [
            HttpClient(bot["url"], None, f"twin{i}", pool=pools.get(bot["url"])) for i in range(2)
        ]
        record = Referee().run("cactus", clients, seed=7)
        pools.close()
    assert record.strikes == [0, 0] and check(record.to_json()) == []


def test_a_connection_left_idle_for_long_is_closed(monkeypatch):
    monkeypatch.setattr(pools_module, "IDLE_CLOSE", 0.1)
    with bot_server(answer_delay=0.05) as bot:
        pool = EndpointPool(bot["url"])
        both = [
            threading.Thread(target=act, args=(HttpClient(bot["url"], pool=pool), n))
            for n in range(2)
        ]
        for t in both:
            t.start()
        for t in both:
            t.join()
        assert bot["open"] == 2  # two answers at once: two connections, both kept
        time.sleep(0.2)
        act(HttpClient(bot["url"], pool=pool), 3)  # on one of them; the other is closed
        deadline = time.monotonic() + 5
        while bot["open"] != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert bot["open"] == 1
        pool.close()
    assert bot["accepted"] == 2 and bot["peak"] == 2
    assert bot["requests"][-1] == "3"
