"""The bot protocol, version 1: paths, required fields and request signatures.

Every ``POST`` from the arena carries two headers::

    X-Arena-Timestamp: 1700000000
    X-Arena-Signature: sha256=<hex>

where ``<hex>`` is HMAC-SHA256 with the bot's secret (UTF-8) as the key over the
timestamp text, a ``.`` and the raw body bytes.  Signing the timestamp with the body
keeps an old request from being replayed once it is more than ``max_skew`` seconds old.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SDK_VERSION = "0.1.0"
API_VERSION = "1"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
SIGNATURE_HEADER = "X-Arena-Signature"
SIGNATURE_PREFIX = "sha256="
DEFAULT_MAX_SKEW = 300  # seconds between the request's timestamp and the bot's clock
MAX_BODY = 1 << 20  # bytes of a request body the bot server accepts

# the fields each POST body must have
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "/start": ("match_id", "game", "options", "seat", "players"),
    "/act": ("match_id", "decision_id", "game", "seat", "view", "legal_actions", "deadline_ms"),
    "/end": ("match_id", "game", "seat", "outcome", "view"),
}


class SignatureError(Exception):
    """A request whose signature or timestamp does not check out (answered with 401)."""


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
    saying what is wrong, else return None."""
    if not timestamp or not signature:
        raise SignatureError(f"missing {TIMESTAMP_HEADER} or {SIGNATURE_HEADER} header")
    timestamp = timestamp.strip()
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise SignatureError(f"{TIMESTAMP_HEADER} must be unix seconds as a decimal integer")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > max_skew:
        raise SignatureError(
            f"{TIMESTAMP_HEADER} is more than {max_skew:g} s away from the bot's clock"
        )
    expected = sign(secret, timestamp, body).encode("ascii")
    # bytes, not str: compare_digest refuses non-ASCII str, and a header may hold anything
    if not hmac.compare_digest(expected, signature.strip().encode("utf-8", "replace")):
        raise SignatureError("wrong signature")
