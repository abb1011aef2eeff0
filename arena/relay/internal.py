"""One web process's relay: the hub of its connected bots and the internal listener
workers hand their requests to.

The listener speaks HTTP/1.1 on ``ARENA_RELAY_HOST`` (loopback unless the operator says
otherwise: workers on other machines must reach it; ``0.0.0.0`` listens everywhere and
gives the address the host's name resolves to) and a port of its own, started the
first time the process holds a session; its address is the session's *home* in the
database.  ``POST /relay/<bot id>/<act|start|end>`` carries exactly the signed request a
webhook bot would get (the signature, with the bot's secret, is what tells the listener
a worker sent it) plus ``X-Arena-Deadline-Ms``, and is answered once the request is
settled (``arena.relay.hub``): with the bot's own status and body and
``X-Arena-Relay: answer`` and its latency, or ``X-Arena-Relay: timeout``,
``disconnected`` or ``moved`` (the worker then asks the new home).
``POST /relay/<bot id>/moved``, signed the same way by the web process that took a
session over, tells this one to let it go.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from arena.relay.hub import Delivery, Hub

SECRET_TTL = 5.0  # seconds a bot's signing secret is cached (a rotation shows after it)
MAX_SKEW = 300  # seconds a signed request's timestamp may be off
MAX_BODY = 1024 * 1024
TIMESTAMP = "X-Arena-Timestamp"
SIGNATURE = "X-Arena-Signature"
DEADLINE = "X-Arena-Deadline-Ms"
PREVIOUS = "X-Arena-Previous"  # a re-sent request: the id the lost home had handed
HANDED_AT = "X-Arena-Handed-At"  # ... and when (time.time())
OUTCOME = "X-Arena-Relay"
LATENCY = "X-Arena-Latency-Ms"
PATHS = ("act", "start", "end")


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``X-Arena-Signature`` of ``body`` at ``timestamp``: the one signing scheme of the
    protocol, whichever way a request goes."""
    mac = hmac.new(secret.encode(), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def check_signature(secret: str, timestamp: str | None, signed: str | None, body: bytes) -> str:
    """Why a signed body is refused, or "" when it checks out."""
    if not timestamp or not signed:
        return f"missing {TIMESTAMP} or {SIGNATURE}"
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 15):
        return f"{TIMESTAMP} must be unix seconds"
    if abs(time.time() - int(timestamp)) > MAX_SKEW:
        return f"{TIMESTAMP} is more than {MAX_SKEW} s away from the arena's clock"
    expected = signature(secret, timestamp, body).encode()
    if not hmac.compare_digest(expected, signed.strip().encode("utf-8", "replace")):
        return "wrong signature"
    return ""


class Relay:
    """The relay of one web process: ``hub``, the listener's address (``home``, started
    on first use) and the bots' signing secrets (``secret_of(bot_id)``, cached)."""

    def __init__(self, secret_of: Callable[[int], str | None], host: str = "127.0.0.1",
                 port: int = 0):  # fmt: skip
        self.hub = Hub()
        self.host = host
        self.port = port
        self._secret_of = secret_of
        self._secrets: dict[int, tuple[float, str | None]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def secret(self, bot_id: int) -> str | None:
        now = time.monotonic()
        with self._lock:
            cached = self._secrets.get(bot_id)
        if cached is not None and now - cached[0] < SECRET_TTL:
            return cached[1]
        secret = self._secret_of(bot_id)
        with self._lock:
            self._secrets[bot_id] = (now, secret)
        return secret

    def home(self) -> str:
        """This process's address for workers (its listener started if it was not)."""
        with self._lock:
            if self._server is None:
                server = ThreadingHTTPServer((self.host, self.port), _Handler)
                server.daemon_threads = True
                server.relay = self  # type: ignore[attr-defined]
                threading.Thread(
                    target=server.serve_forever, name="arena-relay", daemon=True
                ).start()
                self._server = server
            host, port = self._server.server_address[:2]
        if host in ("0.0.0.0", "::"):  # every interface: the address of this host's name
            host = socket.gethostbyname(socket.gethostname())
        return f"http://[{host}]:{port}" if ":" in str(host) else f"http://{host}:{port}"

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # the web process logs enough
        pass

    def do_POST(self) -> None:
        relay: Relay = self.server.relay  # type: ignore[attr-defined]
        parts = self.path.strip("/").split("/")
        length = self.headers.get("Content-Length", "")
        if (
            len(parts) != 3
            or parts[0] != "relay"
            or not parts[1].isdigit()
            or not (length.isdigit() and int(length) <= MAX_BODY)
        ):
            self._reply(404, "refused", {"detail": "no such relay path"})
            return
        bot_id, what = int(parts[1]), parts[2]
        body = self.rfile.read(int(length))
        secret = relay.secret(bot_id)
        timestamp = self.headers.get(TIMESTAMP)
        problem = "no such bot" if secret is None else check_signature(
            secret, timestamp, self.headers.get(SIGNATURE), body
        )  # fmt: skip
        if problem:
            self._reply(401, "refused", {"detail": problem})
            return
        if what == "moved":
            token = orjson.loads(body).get("token")
            relay.hub.leave(bot_id, token, "moved", "taken over by another web process")
            self._reply(204, "moved", None)
            return
        if what not in PATHS:
            self._reply(404, "refused", {"detail": "no such relay path"})
            return
        self._deliver(relay, bot_id, what, body, timestamp or "")

    def _deliver(self, relay: Relay, bot_id: int, what: str, body: bytes, ts: str) -> None:
        try:
            request_id = str(orjson.loads(body)["request_id"])
            seconds = float(self.headers.get(DEADLINE, "")) / 1000.0
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            self._reply(400, "refused", {"detail": "a signed request with its deadline"})
            return
        handed = self.headers.get(HANDED_AT)
        delivery = Delivery(
            bot_id=bot_id,
            request_id=request_id,
            path="/" + what,
            body=body,
            timestamp=ts,
            signature=self.headers.get(SIGNATURE, ""),
            deadline=time.monotonic() + seconds,
            previous=self.headers.get(PREVIOUS),
        )
        with contextlib.suppress(ValueError):
            delivery.handed_wall = float(handed) if handed else None
        relay.hub.deliver(delivery)
        if delivery.outcome == "answer":
            headers = {LATENCY: f"{delivery.latency_ms:.3f}"} if delivery.latency_ms else {}
            self._send(delivery.status, "answer", delivery.answer, headers)
            return
        extra = {}
        if delivery.outcome == "moved" and delivery.handed_wall is not None:
            extra[HANDED_AT] = repr(delivery.handed_wall)
        status = 409 if delivery.outcome == "moved" else 504
        self._reply(status, delivery.outcome or "timeout", {"detail": delivery.detail}, extra)

    def _reply(
        self, status: int, outcome: str, body: Any, headers: dict[str, str] | None = None
    ) -> None:
        self._send(status, outcome, b"" if body is None else orjson.dumps(body), headers or {})

    def _send(self, status: int, outcome: str, body: bytes, headers: dict[str, str]) -> None:
        head = [f"HTTP/1.1 {status} -", f"{OUTCOME}: {outcome}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        if body:
            head.append("Content-Type: application/json")
        with contextlib.suppress(OSError):  # the worker gave up: nothing to tell it
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
