"""A bot's HTTP answer, parsed from bytes as they arrive (``ResponseParser``: small,
incremental, linear in the bytes received, and fuzzed by the tests).

Endpoints are untrusted: the parser caps the size of an answer's body, of its head (in
bytes and in lines) and of its trailers, reports redirects without following them, and
turns anything malformed into the ``BotFault`` it is.  The standard library's e-mail
parser cost a third of the worker's CPU per decision over loopback; this one parses the
bytes once.
"""

from __future__ import annotations

from arena.match.faults import BotFault

MAX_ANSWER_BYTES = 64 * 1024  # the body of an answer


MAX_HEAD_BYTES = 64 * 1024  # its status line and headers (interim answers and trailers too)


MAX_HEADER_LINES = 100  # header lines of a head, and trailer lines after chunks


class Response:
    __slots__ = ("body", "headers", "keep_alive", "status")

    def __init__(
        self, status: int, body: bytes, keep_alive: bool, headers: dict[bytes, bytes] | None = None
    ):
        self.status = status
        self.body = body
        self.keep_alive = keep_alive
        self.headers = headers or {}  # by lower-case name


def _cut_short() -> BotFault:
    # a fault, not a closed connection: the answer was begun, so it is not sent again
    return BotFault("connection_closed", "the bot closed the connection mid-answer")


# what the parser waits for next
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _TO_CLOSE, _DONE = range(8)


class ResponseParser:
    """One response to a GET or POST, parsed from bytes as they arrive (no I/O here):
    ``feed`` each piece read, ``feed_eof`` at the end of the stream; either returns the
    ``Response`` once it is complete (``feed`` returns None until then) or raises the
    ``BotFault`` it is.  The head (CRLF or bare LF line endings), then a body of
    ``Content-Length`` bytes, in chunks, or up to the end of the connection; never more
    than ``cap`` bytes of body, ``MAX_HEAD_BYTES`` of head and ``MAX_HEADER_LINES`` lines
    of it.  Interim 1xx answers are skipped; redirects are reported, never followed.

    Linear in the bytes received however they are cut: a search for the end of the head
    or of a line resumes where the last one stopped, and repeated headers are joined
    once.  ``EOFError`` means the stream ended before any byte of an answer."""

    __slots__ = (
        "body",
        "buffer",
        "cap",
        "head_bytes",
        "headers",
        "http11",
        "need",
        "scanned",
        "state",
        "status",
        "trailers",
    )

    def __init__(self, cap: int = MAX_ANSWER_BYTES):
        self.cap = cap
        self.buffer = bytearray()
        self.scanned = 0  # bytes at the buffer's start already searched for an end
        self.state = _HEAD
        self.head_bytes = 0  # bytes of heads and trailers consumed so far
        self.trailers = 0
        self.status = 0
        self.http11 = True
        self.headers: dict[bytes, bytes] = {}
        self.body = bytearray()
        self.need = 0  # bytes of body (or of the chunk) still to come

    def feed(self, data: bytes) -> Response | None:
        self.buffer += data
        return self._parse()

    def feed_eof(self) -> Response:
        if self.state == _TO_CLOSE:
            return self._done(bytes(self.buffer), keep_alive=False)
        if self.state == _HEAD and not self.buffer and not self.head_bytes:
            raise EOFError("the bot closed the connection without answering")
        raise _cut_short()

    def _parse(self) -> Response | None:
        buffer = self.buffer
        while True:
            state = self.state
            if state == _HEAD:
                head = self._head()
                if head is None:
                    return None
                self.status, self.http11, self.headers = _parse_head(head)
                if 100 <= self.status < 200:
                    if self.status == 101:
                        raise BotFault("bad_answer", "HTTP 101: the bot switched protocols")
                    continue  # an interim answer: the real one follows
                response = self._frame()
                if response is not None:
                    return response
            elif state == _LENGTH:
                if len(buffer) < self.need:
                    return None
                body = bytes(buffer[: self.need])
                del buffer[: self.need]
                return self._done(body)
            elif state == _TO_CLOSE:
                if len(buffer) > self.cap:
                    raise BotFault("too_large", f"more than {self.cap} bytes")
                return None
            elif state == _CHUNK_SIZE:
                line = self._line(1024, "a chunk line that never ends")
                if line is None:
                    return None
                size_text = line.split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise BotFault("bad_answer", f"a bad chunk size {size_text[:20]!r}") from None
                if size < 0:
                    raise BotFault("bad_answer", "a negative chunk size")
                if size == 0:
                    self.state = _TRAILERS
                elif len(self.body) + size > self.cap:
                    raise BotFault("too_large", f"more than {self.cap} bytes")
                else:
                    self.need, self.state = size, _CHUNK_DATA
            elif state == _CHUNK_DATA:
                if not buffer:
                    return None
                piece = buffer[: self.need]
                self.body += piece
                self.need -= len(piece)
                del buffer[: len(piece)]
                self.scanned = 0
                if self.need:
                    return None
                self.state = _CHUNK_END
            elif state == _CHUNK_END:  # the line ending after a chunk's bytes, and nothing else
                if buffer[:1] == b"\n" or buffer[:2] == b"\r\n":
                    del buffer[: buffer.index(b"\n") + 1]
                    self.scanned, self.state = 0, _CHUNK_SIZE
                elif buffer == b"\r" or not buffer:
                    return None
                else:
                    raise BotFault("bad_answer", "a chunk longer than its size")
            elif state == _TRAILERS:
                line = self._line(MAX_HEAD_BYTES - self.head_bytes, "trailers that never end")
                if line is None:
                    return None
                self.head_bytes += len(line) + 1
                if not line:
                    return self._done(bytes(self.body))
                self.trailers += 1
                if self.trailers > MAX_HEADER_LINES:
                    raise BotFault("too_large", f"more than {MAX_HEADER_LINES} trailer lines")
            else:  # _DONE: nothing more is read for this answer
                return None

    def _head(self) -> list[bytes] | None:
        """The next head's lines, once its empty line is in the buffer; the search
        starts where the last one stopped (the end may straddle the old boundary)."""
        buffer = self.buffer
        start = max(self.scanned - 2, 0)
        # the head ends at its first empty line, whichever line ending it uses (a body may
        # well contain the other kind of empty line)
        ends = [(i, len(t)) for t in (b"\n\n", b"\n\r\n") if (i := buffer.find(t, start)) >= 0]
        if not ends:
            self.scanned = len(buffer)
            # an end still to come starts at len(buffer) - 2 or later
            if self.head_bytes + len(buffer) - 2 > MAX_HEAD_BYTES:
                raise BotFault("too_large", f"an answer head of more than {MAX_HEAD_BYTES} bytes")
            return None
        end, size = min(ends)
        if self.head_bytes + end > MAX_HEAD_BYTES:
            raise BotFault("too_large", f"an answer head of more than {MAX_HEAD_BYTES} bytes")
        head = bytes(buffer[:end])
        del buffer[: end + size]
        self.scanned = 0
        self.head_bytes += end + size
        if head.count(b"\n") > MAX_HEADER_LINES:
            raise BotFault(
                "too_large", f"an answer head of more than {MAX_HEADER_LINES} header lines"
            )
        return [line.rstrip(b"\r") for line in head.split(b"\n")]

    def _line(self, limit: int, never_ends: str) -> bytes | None:
        """The next line without its ending, once it is in the buffer; a line longer
        than ``limit`` is refused, whether its end has come or not."""
        buffer = self.buffer
        end = buffer.find(b"\n", self.scanned)
        if end < 0:
            self.scanned = len(buffer)
            if len(buffer) > limit:
                raise BotFault("bad_answer", never_ends)
            return None
        if end > limit:
            raise BotFault("bad_answer", never_ends)
        line = bytes(buffer[:end]).rstrip(b"\r")
        del buffer[: end + 1]
        self.scanned = 0
        return line

    def _frame(self) -> Response | None:
        """After the final head: how its body is framed (a Response if it has none)."""
        headers = self.headers
        encoding = headers.get(b"transfer-encoding", b"").lower()
        length = headers.get(b"content-length")
        if self.status in (204, 304):
            return self._done(b"")
        if encoding:
            if encoding.rsplit(b",", 1)[-1].strip() != b"chunked":
                raise BotFault("bad_answer", f"an unsupported transfer encoding {encoding[:40]!r}")
            self.state = _CHUNK_SIZE
        elif length is not None:
            if not length.isdigit():  # also refuses two different lengths ("5, 6")
                raise BotFault("bad_answer", f"a bad Content-Length {length[:40]!r}")
            if len(length) > 12 or int(length) > self.cap:
                raise BotFault("too_large", f"Content-Length {length[:40].decode('latin-1')}")
            self.need, self.state = int(length), _LENGTH
        else:  # the body ends with the connection
            self.state = _TO_CLOSE
        return None

    def _done(self, body: bytes, keep_alive: bool = True) -> Response:
        if len(body) > self.cap:
            raise BotFault("too_large", f"more than {self.cap} bytes")
        self.state = _DONE
        tokens = {t.strip() for t in self.headers.get(b"connection", b"").lower().split(b",")}
        if keep_alive:
            keep_alive = b"keep-alive" in tokens if not self.http11 else b"close" not in tokens
        # bytes after the answer: nothing was asked for them, the connection is not reused
        return Response(self.status, body, keep_alive and not self.buffer, self.headers)


def _parse_head(lines: list[bytes]) -> tuple[int, bool, dict[bytes, bytes]]:
    """(status, HTTP/1.1 or later, headers by lower-case name); a header seen twice keeps
    its values joined by commas, as HTTP says they mean, joined once at the end."""
    version, _, rest = lines[0].partition(b" ")
    code = rest[:3]
    if (
        not version.startswith(b"HTTP/1.")
        or len(code) != 3
        or not code.isdigit()
        or rest[3:4] not in (b"", b" ")
    ):
        raise BotFault("bad_answer", f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[bytes, bytes] = {}
    repeated: dict[bytes, list[bytes]] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise BotFault("bad_answer", f"a malformed header line: {line[:80]!r}")
        name = name.lower()
        value = value.strip()
        if name in headers:
            repeated.setdefault(name, [headers[name]]).append(value)
        else:
            headers[name] = value
    for name, values in repeated.items():
        headers[name] = b", ".join(values)
    return int(code), version != b"HTTP/1.0", headers
