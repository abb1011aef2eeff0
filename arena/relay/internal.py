"""One web process's relay: the hub of its connected bots and the internal listener
workers hand their requests to.

The listener speaks HTTP/1.1 on ``ARENA_RELAY_HOST`` (loopback unless the operator says
otherwise: workers on other machines must reach it; ``0.0.0.0`` listens everywhere and
gives the address the host's name resolves to) and a port of its own, started the
first time the process holds a session; its address is the session's *home* in the
database.  ``POST /relay/<bot id>/<act|start|end>`` carries exactly the signed request a
webhook bot would get (signed with the bot's secret, passed on unchanged: the bot checks
it) plus ``X-Arena-Deadline-Ms``, and is answered once the request is settled
(``arena.relay.hub``): with the bot's own status and body and ``X-Arena-Relay: answer``
and its latency, or ``X-Arena-Relay: timeout``, ``disconnected`` or ``moved`` (the
worker then asks the new home).  ``POST /relay/<bot id>/moved``, from the web process
that took a session over, tells this one to let it go.

Every hop is signed with the *relay key* (``X-Arena-Relay-Signature``, ``sign_hop``): an
HMAC the workers and web processes make with a key derived from the arena's secrets key
(``arena.sealing``, ``ARENA_SECRETS_KEY``), which bots never see, over the method, the
path, a timestamp, a nonce, the body's SHA-256 and the relay headers (deadline, previous,
handed-at).  It is checked from the head alone, before the body is read, the bot's secret
looked up or the hub touched: anything else is refused (401, ``X-Arena-Relay: refused``)
and its connection closed.  A timestamp more than ``HOP_SKEW`` seconds off this host's
clock is refused (the hosts' clocks are kept by NTP), and a signature is taken once.

The listener is bounded: a request's head and body must come within ``READ_SECONDS`` of
its first byte (of the connection's opening, for its first request), the head in
``MAX_HEAD`` bytes, the body with its ``Content-Length`` of at most ``MAX_BODY``; it
serves ``MAX_CONNECTIONS`` connections at once, and one more closes the oldest that has
not shown the relay's signature yet, or itself when all have (``_Server``).  Once
the body is read, the wait for the bot's answer is the deadline's, not the read time's.
Only a connection whose request had the relay's signature is kept alive, for
``IDLE_SECONDS`` between requests: longer than a worker keeps an idle connection in its
pool (``arena.match.pools.IDLE_CLOSE``); one the listener closed first is seen by the
worker before it sends, or sent again on a new connection (``HttpExchange._fail``).
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hashlib
import hmac
import io
import logging
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from arena import sealing
from arena.relay.forward import serve_poll
from arena.relay.hub import Delivery, Hub

SECRET_TTL = 60.0  # seconds a bot's signing secret is cached (an old one refused after it)
SECRET_REREAD = 1.0  # a signature the cached secret refuses rereads it, once a second at most
NO_BOT = "no such bot"
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
# the hop itself (see the module's docstring)
RELAY_SIGNATURE = "X-Arena-Relay-Signature"
HOP_LABEL = b"card-bot-arena relay hop v1"  # what the relay key is derived for
HOP_SIGNED = (DEADLINE, PREVIOUS, HANDED_AT)  # the relay headers the signature covers
HOP_SKEW = 60  # seconds a hop's timestamp may be off this host's clock
SEEN_HOPS = 131_072  # signatures remembered (for 2 x HOP_SKEW) so that none is taken twice
READ_SECONDS = 5.0  # a request's head and body come within this of its first byte
IDLE_SECONDS = 75.0  # a worker's kept-alive connection waits this long for its next request
WRITE_SECONDS = 5.0  # an answer is taken within this
MAX_HEAD = 16 * 1024  # bytes of request line and headers
# connections served at once, any more closed as they come: a worker's hand-off per
# request in flight, and the polls other web processes pass on (one per bot's poll that
# reached them: as many as the bots' polls at a crowd, as gunicorn takes connections)
MAX_CONNECTIONS = 4096
BACKLOG = 128  # connections the kernel holds until the listener takes them
EVICTING = 64  # connections closed for room whose threads may not have ended yet
_log = logging.getLogger("arena.relay")


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


# -- the relay key: the hop's signature --------------------------------------------------------
def derive_hop_key(secrets_key: str) -> bytes:
    """The relay key of one of ``ARENA_SECRETS_KEY``'s keys: HKDF-SHA256 of its 32 bytes
    for ``HOP_LABEL``, so that the key sealing the bots' secrets is not used as is."""
    raw = base64.urlsafe_b64decode(secrets_key.strip().encode("ascii"))
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HOP_LABEL).derive(raw)


_derived: tuple[Any, list[bytes]] = (None, [])
_own_key = os.urandom(32)  # a process with no arena key: its own hops only
_keyless: list[Any] = [object()]  # the configuration no keyring could be made for
_no_key_told = threading.Event()


def hop_keys() -> list[bytes]:
    """This process's relay keys, newest first: one per key of its keyring
    (``arena.sealing``, set by ``sealing.use(config)``), so that a hop is signed with the
    first and heard with any (``ARENA_SECRETS_KEY`` rotated: new first, old second).  A
    process with no arena key has one of its own, which no other process shares."""
    global _derived
    configured = sealing._state.get("config")  # what sealing.use set (None: nothing yet)
    if _keyless[0] is configured:  # tried: not again until sealing.use is called
        return [_own_key]
    try:
        ring = sealing.keyring()
    except (sealing.SealingError, OSError) as exc:
        _keyless[0] = configured
        if not _no_key_told.is_set():
            _no_key_told.set()
            _log.warning("relay hops are signed with a key of this process only: %s", exc)
        return [_own_key]
    found = _derived
    if found[0] is not ring:
        found = _derived = (ring, [derive_hop_key(key) for key in ring.keys])
    return found[1]


def _hop_message(
    method: str, path: str, at: str, nonce: str, digest: str, headers: Mapping[str, str] | Any
) -> bytes:
    relayed = "\n".join(headers.get(name) or "" for name in HOP_SIGNED)
    text = f"{method}\n{path}\n{at}\n{nonce}\n{digest}\n{relayed}"
    return HOP_LABEL + b"\n" + text.encode("latin-1", "replace")


def sign_hop(
    method: str,
    path: str,
    body: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    key: bytes | None = None,
    at: float | None = None,
    nonce: str | None = None,
) -> str:
    """``X-Arena-Relay-Signature`` of a hop to a relay listener: ``t=<unix seconds>;
    n=<nonce>;b=<SHA-256 of the body>;v1=<HMAC-SHA256>`` with the relay key, over
    ``HOP_LABEL``, ``method``, ``path``, those three and the relay headers of ``headers``
    (``HOP_SIGNED``, exactly as sent), one a line."""
    when = str(int(time.time() if at is None else at))
    nonce = nonce or os.urandom(8).hex()
    digest = hashlib.sha256(body).hexdigest()
    message = _hop_message(method, path, when, nonce, digest, headers or {})
    mac = hmac.new(key or hop_keys()[0], message, hashlib.sha256).hexdigest()
    return f"t={when};n={nonce};b={digest};v1={mac}"


def hop_headers(
    method: str, path: str, body: bytes, headers: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The header that signs a hop (to be sent with ``headers``' relay headers)."""
    return {RELAY_SIGNATURE: sign_hop(method, path, body, headers)}


_HOP = re.compile(r"t=([0-9]{1,15});n=([0-9a-f]{16,64});b=([0-9a-f]{64});v1=([0-9a-f]{64})")


def check_hop(
    method: str, path: str, headers: Mapping[str, str] | Any, keys: list[bytes]
) -> tuple[str, str, str]:
    """Why a hop is refused ("" when the relay key signed it), the body's SHA-256 it
    names and its signature, from its head alone."""
    value = headers.get(RELAY_SIGNATURE)
    if not value:
        return f"no {RELAY_SIGNATURE}: only the arena's workers hand requests here", "", ""
    found = _HOP.fullmatch(value.strip())
    if found is None:
        return f"{RELAY_SIGNATURE} is not t=..;n=..;b=..;v1=..", "", ""
    when, nonce, digest, mac = found.groups()
    off = int(when) - time.time()
    if abs(off) > HOP_SKEW:
        return (
            f"{RELAY_SIGNATURE} is {off:+.0f} s off this host's clock (at most {HOP_SKEW}): "
            "are the hosts' clocks synchronised?", "", "",
        )  # fmt: skip
    message = _hop_message(method, path, when, nonce, digest, headers)
    for key in keys:
        if hmac.compare_digest(hmac.new(key, message, hashlib.sha256).hexdigest(), mac):
            return "", digest, mac
    return "wrong relay signature (is ARENA_SECRETS_KEY the same in every process?)", "", ""


class Relay:
    """The relay of one web process: ``hub``, the listener's address (``home``, started
    on first use) and the bots' signing secrets (``secret_of(bot_id)``, cached); the
    listener serves ``max_connections`` at once and hears the relay keys of ``keys()``
    (``hop_keys``: this process's)."""

    def __init__(self, secret_of: Callable[[int], str | None], host: str = "127.0.0.1",
                 port: int = 0, *, max_connections: int = MAX_CONNECTIONS,
                 keys: Callable[[], list[bytes]] = hop_keys):  # fmt: skip
        self.hub = Hub()
        self.host = host
        self.port = port
        self.max_connections = max_connections
        self._secret_of = secret_of
        self._secrets: dict[int, tuple[float, str | None]] = {}
        self._keys = keys
        self._hops: collections.deque[tuple[float, int]] = collections.deque()
        self._hops_seen: set[int] = set()
        self._told: dict[tuple[int, str], float] = {}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._home: str | None = None  # the listener's address, once found

    def secret(self, bot_id: int, fresher_than: float = SECRET_TTL) -> str | None:
        """The bot's signing secret (None: no such bot), as read at most
        ``fresher_than`` seconds ago: a poll every 25 s from each of thousands of bots
        does not read the database each time."""
        now = time.monotonic()
        with self._lock:
            cached = self._secrets.get(bot_id)
        if cached is not None and now - cached[0] < fresher_than:
            return cached[1]
        secret = self._secret_of(bot_id)
        with self._lock:
            self._secrets[bot_id] = (now, secret)
        return secret

    def verify(self, bot_id: int, timestamp: str | None, signed: str | None, body: bytes) -> str:
        """Why ``body`` is not the bot's (``NO_BOT``, or ``check_signature``'s reason), or
        "" when the bot's secret signed it.  A signature that the cached secret refuses is
        checked again with the secret read afresh (the bot's owner has just rotated it), at
        most once a second per bot: wrong signatures cannot make every request a read.  A
        rotated-out secret is therefore still accepted for up to ``SECRET_TTL`` seconds by
        a process that read it before the rotation."""
        secret = self.secret(bot_id)
        problem = NO_BOT if secret is None else check_signature(secret, timestamp, signed, body)
        if problem in (NO_BOT, "wrong signature"):
            again = self.secret(bot_id, fresher_than=SECRET_REREAD)
            if again != secret:
                problem = NO_BOT if again is None else check_signature(
                    again, timestamp, signed, body
                )  # fmt: skip
        return problem

    def check_hop(self, method: str, path: str, headers: Any) -> tuple[str, str]:
        """Why a hop is refused ("" when the relay key signed it and it was not taken
        before), and the SHA-256 its body must have."""
        problem, digest, mac = check_hop(method, path, headers, self._keys())
        if problem:
            return problem, ""
        seen = int(mac[:16], 16)
        now = time.monotonic()
        with self._lock:
            hops, ids = self._hops, self._hops_seen
            while hops and (len(hops) >= SEEN_HOPS or now - hops[0][0] > 2 * HOP_SKEW):
                ids.discard(hops.popleft()[1])
            if seen in ids:
                return "a relay signature already taken (a replay)", ""
            hops.append((now, seen))
            ids.add(seen)
        return "", digest

    def tell(self, status: int, peer: Any, problem: str) -> None:
        """A refusal, logged once a minute per kind at most (an attack is not a flood of
        the web process's log, nor does it hide a refusal of another kind)."""
        now, kind = time.monotonic(), (status, problem[:24])
        with self._lock:
            if now - self._told.get(kind, -60.0) < 60.0:
                return
            self._told[kind] = now
        _log.warning("relay listener: %d to %s: %s (once a minute at most)", status, peer, problem)

    def home(self) -> str:
        """This process's address for workers (its listener started if it was not); found
        once per listener, since a poll that reached another process compares its bot's
        home with it."""
        with self._lock:
            if self._server is None:
                server = _Server((self.host, self.port), self)
                threading.Thread(
                    target=server.serve_forever, name="arena-relay", daemon=True
                ).start()
                self._server = server
            if self._home is None:
                host, port = self._server.server_address[:2]
                if host in ("0.0.0.0", "::"):  # every interface: the address of this host's name
                    host = socket.gethostbyname(socket.gethostname())
                self._home = (
                    f"http://[{host}]:{port}" if ":" in str(host) else f"http://{host}:{port}"
                )
            return self._home

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
            self._home = None
        if server is not None:
            server.shutdown()
            server.server_close()


class _Server(ThreadingHTTPServer):
    """The listener: a thread per connection, ``relay.max_connections`` at once.  A
    connection past them makes room by closing the oldest one that has not shown the
    relay's signature yet (an attacker's, since a worker's shows it within a round
    trip), or, when every one has, is closed as it comes, nothing read."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], relay: Relay):
        self.relay = relay
        self._serving = 0  # connections with a thread
        self._unheard: collections.OrderedDict[Any, None] = collections.OrderedDict()
        self._evicted: set[Any] = set()  # closed to make room, their threads ending
        self._count_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        victim = None
        with self._count_lock:
            if self._serving >= self.relay.max_connections:
                if not self._unheard or len(self._evicted) >= EVICTING:
                    victim = request
                else:
                    victim, _ = self._unheard.popitem(last=False)
                    self._evicted.add(victim)
            if victim is not request:
                self._serving += 1
                self._unheard[request] = None
        if victim is not None:
            what = "this one" if victim is request else "one not shown to be a worker's"
            limit = self.relay.max_connections
            self.relay.tell(503, client_address, f"more than {limit} at once: {what} closed")
            with contextlib.suppress(OSError):  # its thread's read ends: the thread too
                victim.shutdown(socket.SHUT_RDWR)
            if victim is request:
                self.close_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._over(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._over(request)

    def heard(self, request: Any) -> None:
        """``request``'s connection showed the relay's signature: never closed for room."""
        with self._count_lock:
            self._unheard.pop(request, None)

    def _over(self, request: Any) -> None:
        with self._count_lock:
            self._serving -= 1
            self._unheard.pop(request, None)
            self._evicted.discard(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a peer gone, a head too long: no news
            _log.exception("relay listener: a request from %s failed", client_address)


class _Timed(io.RawIOBase):
    """A connection's reads, each within what is left of the time to read the request
    (``_Handler.read_by``), which the first byte after an idle wait starts; at most
    ``_Handler.limit`` bytes a request."""

    def __init__(self, handler: _Handler):
        self._handler = handler
        self._raw = handler.connection.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        handler = self._handler
        left = handler.read_by - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not come in time")
        handler.connection.settimeout(left)
        got = self._raw.readinto(buffer)
        if got:
            if handler.idle:  # a new request: its time starts
                handler.idle, handler.got = False, 0
                handler.read_by = time.monotonic() + READ_SECONDS
            handler.got += got
            if handler.got > handler.limit:
                raise ConnectionAbortedError(f"a request head of more than {MAX_HEAD} bytes")
        return got

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Headers(dict[str, str]):
    """A request's headers by name, whatever its case (the last of a repeated one)."""

    def __setitem__(self, name: str, value: str) -> None:
        super().__setitem__(name.lower(), value)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the web process logs enough
        pass

    def parse_request(self) -> bool:
        """``http.server``'s, without the ``email`` package it parses headers with: a hop's
        head is a request line and a few plain headers (``MAX_HEAD`` bytes in all, which
        ``_Timed`` enforces), and that parser was a twentieth of a web process's CPU per
        relayed decision (measured with py-spy)."""
        self.command, self.request_version = None, self.default_request_version  # type: ignore[assignment]
        self.requestline = self.raw_requestline.decode("latin-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or not words[2].startswith("HTTP/1."):
            self._refuse(400, "a request line is METHOD PATH HTTP/1.x")
            return False
        self.command, self.path, self.request_version = words
        headers = _Headers()
        while (line := self.rfile.readline(MAX_HEAD)) not in (b"\r\n", b"\n", b""):
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or not name.strip():
                self._refuse(400, "a header line is Name: value")
                return False
            headers[name.strip()] = value.strip()
        self.headers = headers  # type: ignore[assignment]
        self.close_connection = headers.get("Connection", "").lower() == "close"
        return True

    def setup(self) -> None:
        super().setup()
        self.idle, self.got, self.limit = False, 0, MAX_HEAD
        self.read_by = time.monotonic() + READ_SECONDS
        self.trusted = False  # this request had the relay's signature
        self.rfile.close()
        self.rfile = io.BufferedReader(_Timed(self))

    def handle_one_request(self) -> None:
        self.trusted = False
        super().handle_one_request()
        if not self.trusted:  # only a worker's connection is kept alive ...
            self.close_connection = True
        # ... for its next request
        self.idle, self.got, self.limit = True, 0, MAX_HEAD
        self.read_by = time.monotonic() + IDLE_SECONDS

    def _refuse(self, status: int, problem: str) -> None:
        """Refused before the body is read: said, and the connection closed."""
        self.close_connection = True
        self.server.relay.tell(status, self.client_address[0], problem)
        self._reply(status, "refused", {"detail": problem}, {"Connection": "close"})

    def do_POST(self) -> None:
        relay = self.server.relay
        length = self.headers.get("Content-Length", "")
        if not (length.isascii() and length.isdigit()) or "Transfer-Encoding" in self.headers:
            self._refuse(411, "a relay request has a Content-Length")
            return
        if len(length) > 15 or int(length) > MAX_BODY:
            self._refuse(413, f"a relay request's body is {MAX_BODY} bytes at most")
            return
        problem, digest = relay.check_hop(self.command, self.path, self.headers)
        if problem:
            self._refuse(401, problem)
            return
        self.trusted, self.limit = True, sys.maxsize  # a worker's: its body is read
        self.server.heard(self.request)
        body = self.rfile.read(int(length))
        if len(body) != int(length):
            self.close_connection = True  # cut short
            return
        if not hmac.compare_digest(hashlib.sha256(body).hexdigest(), digest):
            self._refuse(401, "the body is not the one the relay signature names")
            return
        parts = self.path.strip("/").split("/")
        if len(parts) != 3 or parts[0] != "relay" or not parts[1].isdigit():
            self._reply(404, "refused", {"detail": "no such relay path"})
            return
        bot_id, what = int(parts[1]), parts[2]
        timestamp = self.headers.get(TIMESTAMP)
        problem = relay.verify(bot_id, timestamp, self.headers.get(SIGNATURE), body)
        if problem:
            self._reply(401, "refused", {"detail": problem})
            return
        if what == "moved":
            token = orjson.loads(body).get("token")
            relay.hub.leave(bot_id, token, "moved", "taken over by another web process")
            self._reply(204, "moved", None)
            return
        if what == "poll":  # a poll that reached another web process (arena.relay.forward)
            status, answer = serve_poll(relay.hub, bot_id, body)
            self._send(status, "poll", answer, {})
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
        try:
            self.connection.settimeout(WRITE_SECONDS)
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        except OSError:  # the worker gave up, or does not read: nothing to tell it
            self.close_connection = True
