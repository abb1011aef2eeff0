"""The bot protocol, version 1: paths, required fields and request signatures.

Every ``POST`` from the arena carries two headers::

    X-Arena-Timestamp: 1700000000
    X-Arena-Signature: sha256=<hex>

where ``<hex>`` is HMAC-SHA256 with the bot's secret (UTF-8) as the key over the
timestamp text, a ``.`` and the raw body bytes.  Signing the timestamp with the body
keeps an old request from being replayed once it is more than ``max_skew`` seconds old.

Within those seconds, the body's ``request_id`` (fresh for every request, and signed with
the rest of the body) tells a replayed request from a new one: ``ReplayGuard`` remembers
the ids it has accepted for as long as their timestamp is within the window.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import re
import threading
import time

SDK_VERSION = "0.1.0"
API_VERSION = "1"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
SIGNATURE_HEADER = "X-Arena-Signature"
SIGNATURE_PREFIX = "sha256="
DEFAULT_MAX_SKEW = 300  # seconds between the request's timestamp and the bot's clock
MAX_BODY = 1 << 20  # bytes of a request body the bot server accepts
MAX_JSON_DEPTH = 64  # arrays and objects inside one another in a request body (400 if deeper)
MAX_TIMESTAMP_DIGITS = 15  # digits of X-Arena-Timestamp (unix seconds need 10 until 2286)
REQUEST_ID_FIELD = "request_id"  # in every POST body: fresh for each request, signed
MAX_REQUEST_ID = 128  # characters of a request id (the arena sends 32 hex digits)
REPLAY_MEMORY = 100_000  # request ids a ReplayGuard remembers at most (about 20 MB)

# the fields each POST body must have
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "/start": ("match_id", "game", "options", "seat", "players"),
    "/act": ("match_id", "decision_id", "game", "seat", "view", "legal_actions", "deadline_ms"),
    "/end": ("match_id", "game", "seat", "outcome", "view"),
}


class SignatureError(Exception):
    """A request whose signature or timestamp does not check out (answered with 401).
    ``kind`` says which check: ``"unsigned"`` (a header missing), ``"timestamp"`` (a
    malformed one), ``"clock"`` (too far from the bot's clock, or too old to tell a
    replay), ``"signature"`` (the secret differs), ``"replay"`` (a request id seen
    already)."""

    def __init__(self, message: str, kind: str = "signature"):
        super().__init__(message)
        self.kind = kind


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    """The ``X-Arena-Signature`` value of ``body`` sent at ``timestamp`` (unix seconds).

    An int timestamp is written in decimal; a str is used as it is, so it must be the
    exact text of the ``X-Arena-Timestamp`` header."""
    message = str(timestamp).encode("ascii") + b"." + body
    digest = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def signed_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The two signature headers for ``body``, timestamped now unless told otherwise."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    return {TIMESTAMP_HEADER: ts, SIGNATURE_HEADER: sign(secret, ts, body)}


def verify(
    secret: str,
    timestamp: str | None,
    signature: str | None,
    body: bytes,
    *,
    max_skew: float = DEFAULT_MAX_SKEW,
    now: float | None = None,
) -> None:
    """Check the two headers of a request against its raw body; raise SignatureError
    saying what is wrong (a malformed header included), else return None.

    A request that passes may still be a replay of one seen in the last ``max_skew``
    seconds: give its ``request_id`` to a ``ReplayGuard`` too (the SDK's server does)."""
    if not timestamp or not signature:
        raise SignatureError(f"missing {TIMESTAMP_HEADER} or {SIGNATURE_HEADER} header", "unsigned")
    if not isinstance(signature, str):
        raise SignatureError(f"{SIGNATURE_HEADER} must be text", "unsigned")
    seconds = parse_timestamp(timestamp)
    current = time.time() if now is None else now
    if abs(current - seconds) > max_skew:
        raise SignatureError(
            f"{TIMESTAMP_HEADER} is more than {max_skew:g} s away from the bot's clock", "clock"
        )
    expected = sign(secret, str(timestamp).strip(), body).encode("ascii")
    # bytes, not str: compare_digest refuses non-ASCII str, and a header may hold anything
    if not hmac.compare_digest(expected, signature.strip().encode("utf-8", "replace")):
        raise SignatureError("wrong signature")


def parse_timestamp(timestamp: str | int | None) -> int:
    """The unix seconds of an ``X-Arena-Timestamp`` value; SignatureError for anything but
    1 to ``MAX_TIMESTAMP_DIGITS`` ASCII digits (a sign, a fraction, a 5,000-digit number)."""
    if isinstance(timestamp, int) and not isinstance(timestamp, bool):
        if 0 <= timestamp < 10**MAX_TIMESTAMP_DIGITS:
            return timestamp
        raise SignatureError(
            f"{TIMESTAMP_HEADER} must be unix seconds of at most {MAX_TIMESTAMP_DIGITS} digits",
            "timestamp",
        )
    if timestamp is None or timestamp == "":
        raise SignatureError(f"missing {TIMESTAMP_HEADER} header", "unsigned")
    if not isinstance(timestamp, str):
        raise SignatureError(f"{TIMESTAMP_HEADER} must be text", "timestamp")
    text = timestamp.strip()
    if not (text.isascii() and text.isdigit()):
        raise SignatureError(
            f"{TIMESTAMP_HEADER} must be unix seconds as a decimal integer", "timestamp"
        )
    if len(text) > MAX_TIMESTAMP_DIGITS:
        raise SignatureError(
            f"{TIMESTAMP_HEADER} must be unix seconds as a decimal integer of at most "
            f"{MAX_TIMESTAMP_DIGITS} digits",
            "timestamp",
        )
    return int(text)


class ReplayGuard:
    """Refuses a signed request played again: remembers the ``request_id`` of every
    request it accepts while that request's timestamp is within ``window`` seconds of the
    clock (the ``max_skew`` of ``verify``: later, ``verify`` refuses the request anyway).

    ``check(request_id, timestamp)`` after ``verify`` succeeded, with the request's
    ``request_id`` field and its ``X-Arena-Timestamp``; it raises SignatureError (answer
    401) for a repeat, a missing id or a timestamp outside what it can vouch for, and
    otherwise remembers the id.  Memory is bounded: at most ``max_ids`` ids; when more
    arrive within the window, the ids with the oldest timestamps are forgotten and
    requests that old or older are refused from then on (a fresh request never is).
    Thread-safe.
    """

    def __init__(self, window: float = DEFAULT_MAX_SKEW, max_ids: int = REPLAY_MEMORY):
        if max_ids < 1:
            raise ValueError("max_ids must be at least 1")
        self.window = window
        self.max_ids = max_ids
        self._seen: dict[str, int] = {}  # request id -> its timestamp
        self._by_time: list[tuple[int, str]] = []  # a heap of (timestamp, request id)
        self._floor: int | None = None  # the newest timestamp of an id forgotten early
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._seen)

    def check(
        self, request_id: object, timestamp: str | int | None, *, now: float | None = None
    ) -> None:
        """Accept ``request_id`` (and remember it) or raise SignatureError saying why."""
        if not isinstance(request_id, str) or not request_id:
            raise SignatureError(
                f"a signed request must carry a {REQUEST_ID_FIELD} (text)", "replay"
            )
        if len(request_id) > MAX_REQUEST_ID:
            raise SignatureError(
                f"{REQUEST_ID_FIELD} is longer than {MAX_REQUEST_ID} characters", "replay"
            )
        seconds = parse_timestamp(timestamp)
        current = time.time() if now is None else now
        with self._lock:
            while self._by_time and current - self._by_time[0][0] > self.window:
                del self._seen[heapq.heappop(self._by_time)[1]]
            if current - seconds > self.window:
                raise SignatureError(
                    f"{TIMESTAMP_HEADER} is more than {self.window:g} s old: "
                    "too old to tell a replay",
                    "clock",
                )
            if self._floor is not None and seconds <= self._floor:
                raise SignatureError(
                    f"{TIMESTAMP_HEADER} is older than the bot's memory of request ids: "
                    "too old to tell a replay",
                    "replay",
                )
            if request_id in self._seen:
                raise SignatureError(
                    "replayed request: this request_id was already accepted", "replay"
                )
            self._seen[request_id] = seconds
            heapq.heappush(self._by_time, (seconds, request_id))
            while len(self._seen) > self.max_ids:
                oldest, forgotten = heapq.heappop(self._by_time)
                del self._seen[forgotten]
                self._floor = oldest if self._floor is None else max(self._floor, oldest)


# a JSON string (also one left open at the end), or a bracket outside strings; possessive
# repeats and the optional closing quote keep the scan linear whatever the input
_JSON_TOKENS = re.compile(r'"(?:[^"\\]++|\\.?)*+"?|[\[{]|[\]}]', re.S)


def json_depth(text: str, limit: int | None = None) -> int:
    """How deeply the arrays and objects of a JSON text nest (0 for a scalar, 1 for
    ``[]``), without parsing it: Python's parser recurses once per level and a body of
    100,000 ``[`` exhausts its stack.  Brackets inside strings do not count; with
    ``limit``, counting stops at the first level past it."""
    depth = deepest = 0
    for token in _JSON_TOKENS.finditer(text):
        char = text[token.start()]
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    break
        elif char != '"':  # a closing bracket; a string changes nothing
            depth -= 1
    return deepest
