"""The bot's HTTP server: standard library only, HTTP/1.1 keep-alive.

Each response (status line, headers and body) leaves in one ``sendall`` on a socket with
``TCP_NODELAY``.  A server that writes the headers and the body separately, with Nagle's
algorithm on, waits for the client's delayed ACK between the two writes: about 40 ms per
round trip over loopback, for every decision of every match.

The request line and headers are read from bytes (``BotHandler.parse_request``): the
standard library hands every request's headers to its e-mail parser, which was 40% of
the CPU this server spent on a request.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any
from urllib.parse import urlsplit

from arenabot.bot import ActFunction, Bot, as_bot, make_answer
from arenabot.protocol import (
    DEFAULT_MAX_SKEW,
    MAX_BODY,
    MAX_JSON_DEPTH,
    REPLAY_MEMORY,
    REQUEST_ID_FIELD,
    REQUIRED_FIELDS,
    SDK_VERSION,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    ReplayGuard,
    SignatureError,
    json_depth,
    verify,
)

SECRET_ENV = "ARENA_BOT_SECRET"
DEFAULT_PORT = 9000  # not 8000: that is the arena's own web server
MAX_HEADER_LINE = 65536  # bytes of one request header line (the standard library's limit)
MAX_HEADERS = 100  # header lines of one request (likewise)
IDLE_TIMEOUT = 300.0  # seconds a keep-alive connection may stay idle before the bot closes it
ERROR_TEXT_CAP = 300  # characters of an exception message sent back in a 500


class BotHandler(BaseHTTPRequestHandler):
    """One connection: any number of requests (keep-alive) until the client closes it."""

    protocol_version = "HTTP/1.1"
    server_version = f"arenabot/{SDK_VERSION}"
    disable_nagle_algorithm = True  # TCP_NODELAY on every accepted socket
    server: BotServer

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout
        super().setup()
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    # -- requests ----------------------------------------------------------------------
    def parse_request(self) -> bool:
        """The request line and the headers (see the module's docstring); False, after
        answering an error if there is anybody to answer, when they are not HTTP/1.x."""
        self.command = None
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if not words:
            return False
        if len(words) != 3:
            self.send_error(HTTPStatus.BAD_REQUEST, f"bad request line {self.requestline[:80]!r}")
            return False
        command, path, version = words
        if version not in ("HTTP/1.0", "HTTP/1.1"):
            status = HTTPStatus.HTTP_VERSION_NOT_SUPPORTED
            if not version.startswith("HTTP/"):
                status = HTTPStatus.BAD_REQUEST
            self.send_error(status, f"not an HTTP/1.x request: {version[:20]!r}")
            return False
        self.command, self.request_version = command, version
        self.path = "/" + path.lstrip("/") if path.startswith("//") else path
        headers = Headers()
        for _ in range(MAX_HEADERS + 1):
            line = self.rfile.readline(MAX_HEADER_LINE + 1)
            if len(line) > MAX_HEADER_LINE:
                self.send_error(
                    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "a header line is too long"
                )
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            name, colon, value = line.decode("iso-8859-1").partition(":")
            if not colon or not name or name != name.strip():
                self.send_error(HTTPStatus.BAD_REQUEST, f"a malformed header line {line[:80]!r}")
                return False
            headers.add(name, value.strip())
        else:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "too many headers")
            return False
        self.headers = headers  # type: ignore[assignment]
        tokens = {t.strip() for t in headers.get("Connection", "").lower().split(",")}
        if version == "HTTP/1.1":
            self.close_connection = "close" in tokens
            if headers.get("Expect", "").lower() == "100-continue":
                return self.handle_expect_100()
        else:
            self.close_connection = "keep-alive" not in tokens
        return True

    def do_GET(self) -> None:
        if self._read_body() is None:
            return
        if self._path() == "/":
            self._reply(HTTPStatus.OK, self.server.bot.info())
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"error": f"no such path: {self._path()}"})

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None:
            return
        path = self._path()
        fields = REQUIRED_FIELDS.get(path)
        if fields is None:
            self._reply(HTTPStatus.NOT_FOUND, {"error": f"no such path: {path}"})
            return
        server = self.server
        timestamp = self.headers.get(TIMESTAMP_HEADER)
        if server.secret is not None:
            try:
                verify(
                    server.secret,
                    timestamp,
                    self.headers.get(SIGNATURE_HEADER),
                    body,
                    max_skew=server.max_skew,
                )
            except SignatureError as exc:
                self._reply(HTTPStatus.UNAUTHORIZED, {"error": str(exc)})
                return
        request, problem = _parse(body, fields)
        if problem is not None:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": problem})
            return
        if server.secret is not None:
            try:  # signed, well formed: is it new?
                server.replay_guard.check(request.get(REQUEST_ID_FIELD), timestamp)
            except SignatureError as exc:
                self._reply(HTTPStatus.UNAUTHORIZED, {"error": str(exc)})
                return
        try:
            with server.bot_lock:
                answer = server.dispatch(path, request)
            data = _encode(answer)
        except Exception as exc:
            traceback.print_exc()  # the bot's author wants to see their bug
            text = f"the bot raised {type(exc).__name__}: {exc}"[:ERROR_TEXT_CAP]
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": text})
            return
        self._write(HTTPStatus.OK, data)

    def _path(self) -> str:
        return urlsplit(self.path).path or "/"

    def _read_body(self) -> bytes | None:
        """The request body; None when it could not be read, after answering if the
        client is still there (the connection then closes: the rest of the request was
        not read)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._refuse(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
        raw = self.headers.get("Content-Length", "0").strip()
        if not (raw.isascii() and raw.isdigit()):
            return self._refuse(HTTPStatus.BAD_REQUEST, "bad Content-Length")
        length = int(raw)
        if length > self.server.max_body:
            return self._refuse(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body is larger than {self.server.max_body} bytes",
            )
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True  # the client went away mid-body
            return None
        return body

    def _refuse(self, status: HTTPStatus, reason: str) -> None:
        self._reply(status, {"error": reason}, close=True)

    # -- responses ---------------------------------------------------------------------
    def _reply(self, status: HTTPStatus, payload: dict[str, Any], close: bool = False) -> None:
        self._write(status, _encode(payload), close)

    def _write(self, status: HTTPStatus, body: bytes, close: bool = False) -> None:
        """The whole response in one ``sendall`` (see the module's docstring)."""
        if close:
            self.close_connection = True
        head = [
            f"HTTP/1.1 {status.value} {status.phrase}",
            f"Server: {self.server_version}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        if status == HTTPStatus.UNAUTHORIZED:
            head.append("WWW-Authenticate: Arena-HMAC-SHA256")
        if self.close_connection:
            head.append("Connection: close")
        self.connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        self.log_request(status.value, len(body))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the standard library detects itself (a malformed request line, an
        unsupported method): a JSON body too, in one write, and the connection closes."""
        status = HTTPStatus(code)
        self._reply(status, {"error": message or status.phrase}, close=True)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


class Headers(dict[str, str]):
    """A request's headers by lower-case name; a header sent twice has its values joined
    by commas, as HTTP says they mean."""

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        self[key] = f"{self[key]}, {value}" if key in self else value

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)


class BotServer(ThreadingHTTPServer):
    """A bot behind HTTP.  ``serve_in_background()`` runs it in a thread; ``close()`` stops
    it, closes the open keep-alive connections and waits for their threads."""

    daemon_threads = True
    block_on_close = False  # close() ends the connections itself, then waits

    def __init__(
        self,
        address: tuple[str, int],
        bot: Bot,
        *,
        secret: str | None = None,
        max_skew: float = DEFAULT_MAX_SKEW,
        max_body: int = MAX_BODY,
        idle_timeout: float | None = IDLE_TIMEOUT,
        verbose: bool = False,
        max_request_ids: int = REPLAY_MEMORY,
    ):
        self.bot = bot
        self.secret = secret
        self.max_skew = max_skew
        # while there is a secret (it may be set later), a signed request's request_id
        # must be new: one accepted already is a replay (401)
        self.replay_guard = ReplayGuard(max_skew, max_request_ids)
        self.max_body = max_body
        self.idle_timeout = idle_timeout
        self.verbose = verbose
        self.bot_lock: contextlib.AbstractContextManager[Any] = (
            contextlib.nullcontext() if bot.thread_safe else threading.Lock()
        )
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._connections_lock = threading.Lock()
        self._serving = False
        self._thread: threading.Thread | None = None
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, BotHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up (getfqdn), which can stall
        TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        host = self.server_address[0]
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def dispatch(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        """Call the bot for a checked request; the answer to send back."""
        if path == "/act":
            return make_answer(self.bot.on_act(request))
        if path == "/start":
            self.bot.start(request)
        else:
            self.bot.end(request)
        return {}

    # -- running and stopping ----------------------------------------------------------
    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._serving = True
        try:
            super().serve_forever(poll_interval)
        finally:
            self._serving = False

    def serve_in_background(self) -> threading.Thread:
        """Serve from a daemon thread (tests, notebooks); returns that thread."""
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread = thread
        thread.start()
        return thread

    def close(self) -> None:
        """Stop accepting, end every open connection and wait for its thread."""
        if self._serving:
            self.shutdown()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.server_close()
        with self._connections_lock:
            open_connections = list(self._connections.items())
        for sock, _ in open_connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # the handler reads EOF and returns
        for _, thread in open_connections:
            if thread is not threading.current_thread():
                thread.join(timeout=5)

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def track(self, sock: socket.socket) -> None:
        with self._connections_lock:
            self._connections[sock] = threading.current_thread()

    def untrack(self, sock: socket.socket) -> None:
        with self._connections_lock:
            self._connections.pop(sock, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # the client went away: nothing to answer, nobody to tell
        super().handle_error(request, client_address)


def _parse(body: bytes, fields: Sequence[str]) -> tuple[dict[str, Any], str | None]:
    """The request object, or a reason for a 400."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return {}, "the body is not UTF-8 JSON"
    # Python's parser recurses once per level: measure the nesting before parsing
    brackets = text.count("[") + text.count("{")  # fewer than the limit: nothing to measure
    if brackets > MAX_JSON_DEPTH and json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return {}, f"the body is nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        request = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: never past the check above
        return {}, "the body is not UTF-8 JSON"
    if not isinstance(request, dict):
        return {}, "the body must be a JSON object"
    missing = [f for f in fields if f not in request]
    if missing:
        return {}, f"missing field(s): {', '.join(missing)}"
    if "legal_actions" in fields and not (
        isinstance(request["legal_actions"], list) and request["legal_actions"]
    ):
        return {}, "legal_actions must be a non-empty list"
    return request, None


def _encode(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def make_server(
    bot: Bot | ActFunction,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    secret: str | None = None,
    max_skew: float = DEFAULT_MAX_SKEW,
    *,
    max_body: int = MAX_BODY,
    idle_timeout: float | None = IDLE_TIMEOUT,
    verbose: bool = False,
    max_request_ids: int = REPLAY_MEMORY,
) -> BotServer:
    """A bound server for ``bot`` (a ``Bot`` or a function ``act(view, legal_actions)``:
    see ``as_bot``), not yet serving (port 0 picks a free port).  Without
    a secret, requests are not checked: for local development only.  With one, every
    POST must be signed and carry a ``request_id`` not seen before (``max_request_ids``
    bounds the memory of those ids: see ``ReplayGuard``)."""
    bot = as_bot(bot)
    if not secret:
        secret = None
        print(
            f"arenabot: {bot.name} has no secret: request signatures are NOT checked "
            f"(local development only; pass --secret or set {SECRET_ENV})",
            file=sys.stderr,
        )
    return BotServer(
        (host, port),
        bot,
        secret=secret,
        max_skew=max_skew,
        max_body=max_body,
        idle_timeout=idle_timeout,
        verbose=verbose,
        max_request_ids=max_request_ids,
    )


def serve(
    bot: Bot | ActFunction,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    secret: str | None = None,
    max_skew: float = DEFAULT_MAX_SKEW,
    *,
    verbose: bool = False,
) -> None:
    """Serve ``bot`` until interrupted (Ctrl-C or SIGTERM), then close cleanly."""
    server = make_server(bot, host, port, secret, max_skew, verbose=verbose)
    print(
        f"arenabot: {server.bot.name} {server.bot.version} listening on {server.url}",
        file=sys.stderr,
    )
    previous = None
    if threading.current_thread() is threading.main_thread():
        # a container stops its process with SIGTERM: close as on Ctrl-C
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(bot: Bot | ActFunction, argv: Sequence[str] | None = None, **info: Any) -> None:
    """The command line of a bot module: ``--port`` (default 9000), ``--host``,
    ``--secret`` (default: the ``ARENA_BOT_SECRET`` environment variable),
    ``--max-skew``, ``--verbose``.  ``bot`` is a ``Bot`` or a function
    ``act(view, legal_actions)``; for a function, ``info`` gives its ``name``,
    ``author``, ``version`` and ``games`` (``run(act, name="mine", games=["cactus"])``)."""
    bot = as_bot(bot, **info)
    parser = argparse.ArgumentParser(description=f"Serve the bot {bot.name!r} over HTTP.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"the secret shared with the arena (default: ${SECRET_ENV})",
    )
    parser.add_argument(
        "--max-skew",
        type=float,
        default=DEFAULT_MAX_SKEW,
        help="seconds a request's timestamp may be away from this clock",
    )
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    try:
        serve(bot, args.host, args.port, args.secret, args.max_skew, verbose=args.verbose)
    except OSError as exc:  # binding: the port is taken, or the address is not this machine's
        parser.exit(
            2,
            f"{parser.prog}: error: cannot listen on {args.host}:{args.port}: "
            f"{exc.strerror or exc} (another port: --port N)\n",
        )
