"""The bot server's HTTP/1.1 wire format, standard library only: a request's head read
from bytes within its caps (``MAX_HEAD`` bytes of line and headers together, at most
``MAX_HEADERS`` header lines, HTTP/1.x only), the length of its body, the cutting of a
connection's bytes into requests (``_Requests``, used by the front end and by a verified
connection's thread), and a whole response as one write (see ``arenabot.server``)."""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from arenabot.protocol import (
    SDK_VERSION,
)

MAX_HEAD = 64 * 1024  # bytes of a request's line and headers, together

MAX_HEADERS = 100  # header lines of one request

SERVER_HEADER = f"arenabot/{SDK_VERSION}"

_HEAD_END = re.compile(rb"\r?\n\r?\n")  # the empty line after the headers (CRLF or LF)

_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class HeadError(Exception):
    """A request head that cannot be served: answered with ``status`` and ``reason``,
    then the connection closes."""

    def __init__(self, status: HTTPStatus, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Headers(dict[str, str]):
    """A request's headers by lower-case name; a header sent twice has its values joined
    by commas, as HTTP says they mean."""

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        self[key] = f"{self[key]}, {value}" if key in self else value

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)


class Head:
    """A parsed request line and headers."""

    __slots__ = ("close", "expect_100", "headers", "method", "path", "requestline", "version")

    def __init__(self, requestline: str, method: str, target: str, version: str, headers: Headers):
        self.requestline = requestline
        self.method = method
        self.version = version
        self.headers = headers
        # "//act" is a path, not a network location
        target = "/" + target.lstrip("/") if target.startswith("//") else target
        self.path = urlsplit(target).path or "/"
        tokens = {t.strip() for t in headers.get("Connection", "").lower().split(",")}
        if version == "HTTP/1.1":
            self.close = "close" in tokens
        else:
            self.close = "keep-alive" not in tokens
        self.expect_100 = headers.get("Expect", "").lower() == "100-continue"


def read_head(buffer: bytes | bytearray, start: int = 0) -> tuple[Head, int] | None:
    """The head at the start of ``buffer`` and the offset of what follows it (the body),
    or None while its end has not arrived (``start``: where to look for that end, bytes
    before it having been searched already).  ``HeadError`` for a head that is over
    ``MAX_HEAD`` bytes, has over ``MAX_HEADERS`` lines, or is not HTTP/1.x."""
    end = _HEAD_END.search(buffer, max(start - 3, 0))
    if end is None:
        if len(buffer) > MAX_HEAD:
            raise HeadError(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                f"the request head is larger than {MAX_HEAD} bytes",
            )
        return None
    if end.end() > MAX_HEAD:
        raise HeadError(
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            f"the request head is larger than {MAX_HEAD} bytes",
        )
    lines = bytes(buffer[: end.start()]).split(b"\n")
    requestline = str(lines[0], "iso-8859-1").rstrip("\r")
    words = requestline.split()
    if len(words) != 3:
        raise HeadError(HTTPStatus.BAD_REQUEST, f"bad request line {requestline[:80]!r}")
    method, target, version = words
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        status = HTTPStatus.HTTP_VERSION_NOT_SUPPORTED
        if not version.startswith("HTTP/"):
            status = HTTPStatus.BAD_REQUEST
        raise HeadError(status, f"not an HTTP/1.x request: {version[:20]!r}")
    if len(lines) - 1 > MAX_HEADERS:
        raise HeadError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "too many headers")
    headers = Headers()
    for line in lines[1:]:
        name, colon, value = line.decode("iso-8859-1").partition(":")
        if not colon or not name or name != name.strip():
            raise HeadError(HTTPStatus.BAD_REQUEST, f"a malformed header line {line[:80]!r}")
        headers.add(name, value.strip())
    return Head(requestline, method, target, version, headers), end.end()


def _response(status: HTTPStatus, body: bytes, close: bool) -> bytes:
    """A whole response: it leaves in one write (see the module's docstring)."""
    head = (
        f"HTTP/1.1 {status.value} {status.phrase}\r\nServer: {SERVER_HEADER}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    )
    if status == HTTPStatus.UNAUTHORIZED:
        head += "WWW-Authenticate: Arena-HMAC-SHA256\r\n"
    if close:
        head += "Connection: close\r\n"
    return (head + "\r\n").encode("latin-1") + body


def _body_length(head: Head, max_body: int) -> int:
    """The length of a request's body; ``HeadError`` for a request that cannot be read
    (a method other than GET and POST, a chunked or oversized body, a bad length)."""
    if head.method not in ("GET", "POST"):
        raise HeadError(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({head.method!r})")
    if "chunked" in head.headers.get("Transfer-Encoding", "").lower():
        raise HeadError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
    raw = head.headers.get("Content-Length", "0").strip()
    if not (raw.isascii() and raw.isdigit()):
        raise HeadError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
    if int(raw) > max_body:
        raise HeadError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body is larger than {max_body} bytes"
        )
    return int(raw)


class _Requests:
    """Cuts the bytes of one connection into requests: a head, then a body of
    ``Content-Length`` bytes.  Used by the front end and by a connection's thread."""

    __slots__ = ("buffer", "head", "length", "max_body", "searched", "started", "wants_continue")

    def __init__(self, max_body: int):
        self.max_body = max_body
        self.buffer = bytearray()
        self.searched = 0  # bytes of the buffer searched for the end of the head
        self.head: Head | None = None  # a request whose body is being read
        self.length = 0  # the bytes of that body
        self.started = False  # bytes of the next request have arrived
        self.wants_continue = False  # a client waits for "100 Continue" to send the body

    def feed(self, data: bytes) -> None:
        self.buffer += data
        self.started = True

    def next(self) -> tuple[Head, bytes] | None:
        """The next complete request, or None until more bytes arrive; ``HeadError``
        for one that cannot be served (answer it, then close the connection)."""
        if self.head is None:
            if self.buffer[:1] in (b"\r", b"\n"):  # empty lines before a request
                del self.buffer[: len(self.buffer) - len(self.buffer.lstrip(b"\r\n"))]
            if not self.buffer:
                return None
            found = read_head(self.buffer, self.searched)
            if found is None:
                self.searched = len(self.buffer)
                return None
            head, offset = found
            del self.buffer[:offset]
            self.searched = 0
            self.length = _body_length(head, self.max_body)
            self.head = head
            self.wants_continue = head.expect_100 and len(self.buffer) < self.length
        if len(self.buffer) < self.length:
            return None
        head, self.head = self.head, None
        body = bytes(self.buffer[: self.length])
        del self.buffer[: self.length]
        self.started = bool(self.buffer)
        return head, body
