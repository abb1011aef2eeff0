"""The request signature: a fixed vector (also in the README, for other implementations)
and what ``verify`` refuses."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from arenabot import SIGNATURE_HEADER, TIMESTAMP_HEADER, SignatureError, sign, signed_headers
from arenabot.protocol import verify

SECRET = "arena-test-secret"
TIMESTAMP = 1700000000
BODY = b'{"match_id":"m1","seat":0}'
# computed once with `openssl dgst -sha256 -hmac arena-test-secret` over the message
# '1700000000.{"match_id":"m1","seat":0}'
VECTOR = "sha256=d8288690485e2c06ad3ff40d998e48dd69b0f2454ab2e062dd0a1b66a88ab984"


def test_sign_matches_the_fixed_vector() -> None:
    assert sign(SECRET, TIMESTAMP, BODY) == VECTOR
    assert sign(SECRET, str(TIMESTAMP), BODY) == VECTOR


def test_sign_is_hmac_sha256_of_timestamp_dot_body() -> None:
    inline = hmac.new(SECRET.encode("utf-8"), b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert sign(SECRET, TIMESTAMP, BODY) == "sha256=" + inline


def test_sign_keys_with_the_utf8_secret() -> None:
    secret = "sécret-✓"
    inline = hmac.new(secret.encode("utf-8"), b"5." + BODY, hashlib.sha256).hexdigest()
    assert sign(secret, 5, BODY) == "sha256=" + inline


def test_verify_accepts_a_fresh_signature() -> None:
    verify(SECRET, str(TIMESTAMP), VECTOR, BODY, now=TIMESTAMP + 299)
    headers = signed_headers(SECRET, BODY)
    verify(SECRET, headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER], BODY)


@pytest.mark.parametrize(
    ("timestamp", "signature", "body", "now", "reason"),
    [
        (None, VECTOR, BODY, TIMESTAMP, "missing"),
        (str(TIMESTAMP), None, BODY, TIMESTAMP, "missing"),
        (str(TIMESTAMP), VECTOR, BODY + b" ", TIMESTAMP, "wrong signature"),
        (str(TIMESTAMP), VECTOR.replace("sha256=", ""), BODY, TIMESTAMP, "wrong signature"),
        (str(TIMESTAMP), "sha256=é" + "0" * 63, BODY, TIMESTAMP, "wrong signature"),
        (str(TIMESTAMP), VECTOR, BODY, TIMESTAMP + 301, "away from the bot's clock"),
        (str(TIMESTAMP), VECTOR, BODY, TIMESTAMP - 301, "away from the bot's clock"),
        ("1.7e9", VECTOR, BODY, TIMESTAMP, "decimal integer"),
        ("-1", VECTOR, BODY, TIMESTAMP, "decimal integer"),
        ("\u0661\u0667", VECTOR, BODY, TIMESTAMP, "decimal integer"),  # Arabic-Indic digits
    ],
)
def test_verify_refuses(
    timestamp: str | None, signature: str | None, body: bytes, now: int, reason: str
) -> None:
    with pytest.raises(SignatureError, match=reason):
        verify(SECRET, timestamp, signature, body, now=now)


def test_verify_refuses_another_secret() -> None:
    with pytest.raises(SignatureError, match="wrong signature"):
        verify("other", str(TIMESTAMP), VECTOR, BODY, now=TIMESTAMP)


def test_max_skew_is_configurable() -> None:
    verify(SECRET, str(TIMESTAMP), VECTOR, BODY, now=TIMESTAMP + 1000, max_skew=1000)
    with pytest.raises(SignatureError):
        verify(SECRET, str(TIMESTAMP), VECTOR, BODY, now=TIMESTAMP + 11, max_skew=10)
