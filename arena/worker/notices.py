"""Delivering notices beyond the app: a signed POST to the account's webhook and an e-mail
when the operator configured SMTP (``docs/notices.md``).  ``send`` is what a process calls
after the commit that wrote notices (``arena.services.notices`` does it); the task
``deliver_notice`` runs on a worker's control queue, never inside a match: a slow or dead
webhook delays nothing but its own notice.

The webhook's address is untrusted like a bot's endpoint: it must pass the arena's address
policy (``arena.match.netpolicy``), checked on every address its name resolves to at each
delivery, and the connection goes to an address that was checked.  No redirect is
followed (a 3xx is a failure), each step has a short timeout, at most ``RESPONSE_CAP``
bytes of the answer are read.  A failure that may pass (the network, a timeout, a 5xx, a
429) is tried again ``MAX_ATTEMPTS`` times in all, after ``BACKOFF`` seconds; each way's
outcome is kept on the notice (``Notice.deliveries``).  Delivery is at least once: a
worker killed mid-delivery leaves its message to be delivered again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
import json
import logging
import smtplib
import socket
import ssl
import time
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any
from urllib.parse import unquote, urlsplit

from arena import __version__
from arena.config import Config, from_env
from arena.db import Database
from arena.match.netpolicy import AddressPolicy
from arena.models import Account, Notice, aware, utcnow
from arena.worker import celery_app
from arena.worker.celery_app import _state, celery, configure

log = logging.getLogger(__name__)

TASK = "arena.deliver_notice"
MAX_ATTEMPTS = 4  # tries of one way, in all
BACKOFF = (10, 60, 300)  # seconds before the 2nd, 3rd and 4th
TIMEOUT = 5.0  # seconds to connect, and for each read or write after
RESPONSE_CAP = 64 * 1024  # bytes of the webhook's answer read at most
SMTP_TIMEOUT = 10.0
SIGNATURE_HEADER = "X-Arena-Signature"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
USER_AGENT = f"card-bot-arena/{__version__} (notices)"
SUBJECTS = {
    "bot_paused": "a bot of yours was paused",
    "bot_faults": "a bot of yours had faults",
    "validation_failed": "a bot of yours failed its validation",
    "tournament_finished": "a tournament finished",
    "grade_decided": "a grade was decided",
}


def send(config: Config | None, notice_ids: list[int]) -> None:
    """Send ``deliver_notice`` for each id.  Call only after the commit that wrote them.
    A process whose Celery app is bound already sends with it (a worker never rebinds
    its app to another configuration here); else it is bound to ``config``."""
    if _state.get("config") is None:
        configure(config if config is not None else from_env())
    with celery.producer_or_acquire() as producer:
        for notice_id in notice_ids:
            celery.send_task(TASK, (notice_id, 1), producer=producer, ignore_result=True)


@celery.task(name=TASK, acks_late=True, reject_on_worker_lost=True)
def deliver_notice(notice_id: int, attempt: int = 1) -> bool:
    """Deliver one notice (each way not delivered yet); sent again later while a way
    failed for a reason that may pass.  Whether everything is done."""
    again = deliver(celery_app._db(), celery_app._config(), notice_id, attempt)
    if again and attempt < MAX_ATTEMPTS:
        delay = BACKOFF[min(attempt, len(BACKOFF)) - 1]
        deliver_notice.apply_async((notice_id, attempt + 1), countdown=delay)
    return not again


def deliver(database: Database, config: Config, notice_id: int, attempt: int = 1) -> bool:
    """Try each way of delivering the notice that has not succeeded yet and record how it
    went; whether one failed for a reason worth another try.  No transaction is open
    while the network is used."""
    with database.session() as session:
        notice = session.get(Notice, notice_id)
        if notice is None:
            return False
        account = session.get(Account, notice.account_id)
        if account is None:
            return False
        done = dict(notice.deliveries or {})
        body = payload(notice)
        kind, text = notice.kind, notice.text
        url, secret, email = account.notify_url, account.notify_secret, account.email
    outcomes: dict[str, dict[str, Any]] = {}
    if url and secret and not (done.get("webhook") or {}).get("ok"):
        outcomes["webhook"] = post_webhook(url, secret, body, config.address_policy)
    if email and not (done.get("email") or {}).get("ok"):
        if config.smtp_url:
            outcomes["email"] = send_mail(config, email, kind, text, body)
        elif "email" not in done:
            outcomes["email"] = {"ok": False, "retry": False, "error": "no SMTP server set up"}
    if not outcomes:
        return False
    at = utcnow().isoformat()
    for outcome in outcomes.values():
        outcome.update(attempts=attempt, at=at)
        if attempt >= MAX_ATTEMPTS:
            outcome["retry"] = False
    with database.session() as session:
        notice = session.get(Notice, notice_id, with_for_update=True)
        if notice is not None:
            notice.deliveries = {**(notice.deliveries or {}), **outcomes}
    for way, outcome in outcomes.items():
        if not outcome["ok"]:
            log.info("notice %s: %s not delivered: %s", notice_id, way, outcome.get("error"))
    return any(o.get("retry") for o in outcomes.values())


def payload(notice: Notice) -> bytes:
    """The webhook's JSON body: ``content`` (what Discord shows) and ``text`` (Slack's)
    both hold the notice's text; the other fields are for a program."""
    created = aware(notice.created_at) if notice.created_at else utcnow()
    return json.dumps(
        {
            "content": notice.text,
            "text": notice.text,
            "kind": notice.kind,
            "id": notice.id,
            "bot_id": notice.bot_id,
            "tournament_id": notice.tournament_id,
            "match_id": notice.match_id,
            "created_at": created.astimezone(dt.UTC).isoformat().replace("+00:00", "Z"),
        },
        separators=(",", ":"),
    ).encode()


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``X-Arena-Signature``: as on the arena's requests to bots, ``sha256=`` and the hex
    HMAC-SHA256, keyed with the secret, of the timestamp's text, a ``.`` and the body."""
    message = timestamp.encode("ascii") + b"." + body
    return "sha256=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


class _Pinned(http.client.HTTPConnection):
    """A connection to one address already checked, whatever the name resolves to now."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def checked_address(url: str, policy: AddressPolicy) -> tuple[str, int, str]:
    """The webhook's host, port and an address to connect to, every address of its name
    passing ``policy``; ValueError (``AddressRefused`` for the policy) if not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("the webhook must be an http:// or https:// URL with a host")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"cannot resolve {parts.hostname}: {exc}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise ValueError(f"cannot resolve {parts.hostname}")
    for address in addresses:
        policy.check(address)
    return parts.hostname, port, addresses[0]


def post_webhook(url: str, secret: str, body: bytes, policy: AddressPolicy) -> dict[str, Any]:
    """POST ``body`` to ``url``, signed; the outcome (``ok``, ``status`` or ``error``, and
    whether to ``retry``)."""
    try:
        host, port, address = checked_address(url, policy)
    except ValueError as exc:  # the policy's refusal never says which check failed
        return {"ok": False, "retry": False, "error": str(exc)}
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    pinned = _PinnedTLS if parts.scheme == "https" else _Pinned
    connection = pinned(host, port, address, TIMEOUT)
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: signature(secret, timestamp, body),
    }
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(RESPONSE_CAP)
        status = response.status
    except (OSError, http.client.HTTPException) as exc:  # timeouts, resets, TLS, garbage
        return {"ok": False, "retry": True, "error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        connection.close()
    if 200 <= status < 300:
        return {"ok": True, "status": status}
    if 300 <= status < 400:
        return {
            "ok": False,
            "retry": False,
            "status": status,
            "error": "redirects are not followed",
        }
    retry = status >= 500 or status == 429
    return {"ok": False, "retry": retry, "status": status, "error": f"HTTP {status}"}


def send_mail(config: Config, to: str, kind: str, text: str, body: bytes) -> dict[str, Any]:
    """Mail the notice to ``to`` through the operator's SMTP server; the outcome."""
    parts = urlsplit(config.smtp_url)
    message = EmailMessage()
    message["From"] = config.mail_from
    message["To"] = to
    message["Subject"] = f"Card-bot arena: {SUBJECTS.get(kind, kind)}"
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=(config.mail_from.rpartition("@")[2] or None))
    fields = json.loads(body)
    refs = ", ".join(
        f"{name} {fields[key]}"
        for name, key in (("bot", "bot_id"), ("tournament", "tournament_id"), ("match", "match_id"))
        if fields.get(key) is not None
    )
    message.set_content(
        f"{text}\n\n"
        + (f"({refs})\n\n" if refs else "")
        + "You receive this because your account on the Card-bot arena has this e-mail "
        "address for its notices; change it or remove it on your account page.\n"
    )
    secure = parts.scheme == "smtps"
    port = parts.port or (465 if secure else 25)
    try:
        if secure:
            context = ssl.create_default_context()
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                parts.hostname or "", port, timeout=SMTP_TIMEOUT, context=context
            )
        else:
            client = smtplib.SMTP(parts.hostname or "", port, timeout=SMTP_TIMEOUT)
        with client:
            if not secure and config.smtp_starttls:
                client.starttls(context=ssl.create_default_context())
            if parts.username:
                client.login(unquote(parts.username), unquote(parts.password or ""))
            client.send_message(message)
    except (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused) as exc:
        return {"ok": False, "retry": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    except (OSError, smtplib.SMTPException) as exc:
        return {"ok": False, "retry": True, "error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ok": True}
