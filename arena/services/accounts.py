"""Accounts: signing up (with an event's join code, or openly where the operator allows
it), passwords (argon2, a memory-hard hash), API tokens, the pages' login sessions, one-time
reset links an organiser makes, signing out everywhere, and the ``Caller`` an account is.
No Flask here.

What ends what: logging out ends that login session (its row: a copy of its cookie is
refused afterwards); a new password (a reset link, or any other way) and signing out
everywhere end every login session and every API token of the account, so that whoever
learned the old password keeps nothing it made."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.config import Config
from arena.green import NativeThreads
from arena.models import (
    ACCOUNT_ROLES,
    Account,
    ApiToken,
    Event,
    EventMember,
    WebSession,
    aware,
    bot_name,
    bot_name_key,
    utcnow,
)
from arena.services.access import Caller, check_admin, hash_token, new_token
from arena.services.errors import MAX_ID, ServiceError
from arena.services.events import typed_join_code

PASSWORD_MIN_LENGTH = 10
PASSWORD_MAX_LENGTH = 200  # argon2 takes any length; a bound keeps a request cheap
RESET_LINK_LIFETIME = dt.timedelta(hours=24)
TOKEN_USE_GRANULARITY = dt.timedelta(hours=1)  # how precisely a token's last use is kept
# a page's login session ends this long after its login (Flask's lifetime of the signed
# cookie is set to the same, arena.logins)
SESSION_LIFETIME = dt.timedelta(days=31)
# argon2id with OWASP's first recommended parameters (Password Storage Cheat Sheet:
# 19 MiB, 2 passes, 1 lane), about 40 ms and 19 MiB a check here.  The library's default
# (RFC 9106's second option: 64 MiB, 3 passes, 4 lanes) took 160 ms, 64 MiB and four
# threads a check.  60 logins at once on the image's command (4 gthread processes,
# PostgreSQL) took the web from 532 to 3,052-3,096 MiB, p99 9.5-17 s (30 of 60 answered
# 500 in one run of 3); with these parameters, the bound below and its threads, 606 to
# 686-705 MiB, p99 3.4-4.0 s, every one 201.  Hashes made with other parameters still
# verify, and are made again at the next login.
_hasher = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
# checks one process runs at once (each holds its 19 MiB while it runs); a sign-in waits
# its turn up to PASSWORD_CHECK_WAIT seconds, then is told to come back (503)
PASSWORD_CHECKS_AT_ONCE = 2
PASSWORD_CHECK_WAIT = 5.0
PASSWORD_RETRY_AFTER = 2  # seconds, in the 503's Retry-After
_checks = threading.BoundedSemaphore(PASSWORD_CHECKS_AT_ONCE)
_password_threads = NativeThreads(PASSWORD_CHECKS_AT_ONCE, "password")
T = TypeVar("T")
# a hash to verify against when the account does not exist, so that a wrong name and a
# wrong password take the same time
_NO_ACCOUNT = _hasher.hash("no account has this password")


def _checked(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``, a hash or a verification, in its turn (see PASSWORD_CHECKS_AT_ONCE)
    and on one of the process's own password threads: glibc keeps the memory a thread's
    malloc arena once held (argon2's 19 MiB taken by any of 64 request threads left a
    gigabyte behind after a class's logins; two threads hold two), and under gevent a
    check on the request's greenlet would stop every other request of the process."""
    if not _checks.acquire(timeout=PASSWORD_CHECK_WAIT):
        raise ServiceError(
            503,
            "too many sign-ins at this moment: try again in a few seconds",
            retry_after=PASSWORD_RETRY_AFTER,
        )
    try:
        return _password_threads.run(call, *args)
    finally:
        _checks.release()


def password_problem(password: str, name: str) -> str | None:
    if not PASSWORD_MIN_LENGTH <= len(password) <= PASSWORD_MAX_LENGTH:
        return (
            f"a password must be {PASSWORD_MIN_LENGTH} to {PASSWORD_MAX_LENGTH} characters "
            f"long (this one has {len(password)})"
        )
    if password.casefold() == bot_name_key(name):
        return "a password must not be the account's name"
    return None


def get_account(session: Session, account_id: int, missing: Any = ServiceError) -> Any:
    found = session.get(Account, account_id) if 0 < account_id <= MAX_ID else None
    if found is None and missing is ServiceError:
        raise ServiceError(404, f"no account {account_id}")
    return found if found is not None else missing


def account_by_name(session: Session, name: str) -> Account | None:
    return session.scalar(select(Account).where(Account.name_key == bot_name_key(name)))


def account_caller(session: Session, account: Account) -> Caller:
    memberships = session.execute(
        select(EventMember.event_id, EventMember.role).where(EventMember.account_id == account.id)
    ).all()
    return Caller(
        admin=account.role == "admin",
        account_id=account.id,
        name=account.name,
        role=account.role,
        organises=frozenset(e for e, role in memberships if role == "organiser"),
        joined=frozenset(e for e, _ in memberships),
    )


def issue_token(session: Session, account: Account, label: str = "") -> str:
    """A new API token of the account, in clear: the only time it is available."""
    token = new_token()
    session.add(ApiToken(account_id=account.id, token_hash=hash_token(token), label=label[:64]))
    session.flush()
    return token


def account_for_token(session: Session, token: str) -> Account | None:
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None:
        return None
    now = utcnow()
    if row.last_used_at is None or aware(row.last_used_at) < now - TOKEN_USE_GRANULARITY:
        row.last_used_at = now  # at most one write an hour per token
    return session.get(Account, row.account_id)


def revoke_token(session: Session, account: Account, token_id: int) -> None:
    row = session.get(ApiToken, token_id) if 0 < token_id <= MAX_ID else None
    if row is None or row.account_id != account.id:
        raise ServiceError(404, f"no token {token_id} of yours")
    session.delete(row)


def start_web_session(session: Session, account: Account) -> str:
    """A new login session of the account for the pages: its id in clear, for the signed
    cookie only (the row keeps its hash).  Sessions past their lifetime, anyone's, are
    deleted here: a login is rare enough to pay for it, and nothing else needs to."""
    now = utcnow()
    session.execute(delete(WebSession).where(WebSession.created_at < now - SESSION_LIFETIME))
    secret = new_token()
    session.add(WebSession(account_id=account.id, token_hash=hash_token(secret), created_at=now))
    session.flush()
    return secret


def account_for_web_session(session: Session, secret: str) -> Account | None:
    """The account of a live login session (the id its cookie carries), else None: logged
    out, ended by a new password or by signing out everywhere, or too old."""
    row = session.scalar(select(WebSession).where(WebSession.token_hash == hash_token(secret)))
    if row is None or aware(row.created_at) < utcnow() - SESSION_LIFETIME:
        return None
    return session.get(Account, row.account_id)


def end_web_session(session: Session, secret: str) -> None:
    """Log out: the session's row goes, and with it every copy of its cookie."""
    session.execute(delete(WebSession).where(WebSession.token_hash == hash_token(secret)))


def sign_out_everywhere(session: Session, account: Account) -> dict[str, int]:
    """End every login session and revoke every API token of the account; how many of
    each.  Its password stays: whoever knows it logs in again."""
    ended = session.execute(delete(WebSession).where(WebSession.account_id == account.id))
    revoked = session.execute(delete(ApiToken).where(ApiToken.account_id == account.id))
    return {
        "account_id": account.id,
        "sessions_ended": ended.rowcount or 0,  # type: ignore[attr-defined]
        "tokens_revoked": revoked.rowcount or 0,  # type: ignore[attr-defined]
    }


def event_by_code(session: Session, join_code: str) -> Event:
    event = session.scalar(select(Event).where(Event.join_code == typed_join_code(join_code)))
    if event is None:
        raise ServiceError(400, "no event has this join code")
    return event


def join_event(session: Session, account: Account, event: Event, role: str = "contestant") -> None:
    """Make the account a member of the event (an organiser stays one)."""
    member = session.get(EventMember, (event.id, account.id))
    if member is None:
        session.add(EventMember(event_id=event.id, account_id=account.id, role=role))
    elif role == "organiser":
        member.role = role
    session.flush()


def create_account(
    session: Session,
    config: Config,
    who: Caller,
    *,
    name: str,
    password: str,
    role: str = "contestant",
    join_code: str | None = None,
) -> tuple[Account, Event | None]:
    """Sign up.  A contestant signs up with an event's join code (joining it), or without
    one where the operator opened sign-up (``config.open_signup``); only the admin makes
    organisers and admins."""
    if role not in ACCOUNT_ROLES:
        raise ServiceError(400, f"role must be one of {', '.join(ACCOUNT_ROLES)}")
    if role != "contestant":
        check_admin(config, who)
    name = bot_name(name)
    if not name:
        raise ServiceError(400, "an account needs a name")
    if problem := password_problem(password, name):
        raise ServiceError(400, problem)
    event = event_by_code(session, join_code) if join_code else None
    if role == "contestant" and event is None and not config.open_signup and not who.admin:
        raise ServiceError(
            403, "sign-up needs an event's join code here: ask your organiser for it"
        )
    if account_by_name(session, name) is not None:
        raise ServiceError(409, f"an account named {name!r} already exists")
    password_hash = _checked(_hasher.hash, password)
    account = Account(name=name, password_hash=password_hash, role=role)
    session.add(account)
    try:
        session.flush()
    except IntegrityError:
        raise ServiceError(409, f"an account named {name!r} already exists") from None
    if event is not None:
        join_event(session, account, event)
    return account, event


def authenticate(session: Session, name: str, password: str) -> Account:
    """The account with this name and password, else a 401 that does not say which was
    wrong."""
    account = account_by_name(session, name)
    try:
        _checked(_hasher.verify, account.password_hash if account else _NO_ACCOUNT, password)
    except (VerificationError, InvalidHashError):
        account = None
    if account is None:
        raise ServiceError(401, "wrong name or password")
    if _hasher.check_needs_rehash(account.password_hash):
        account.password_hash = _checked(_hasher.hash, password)
    return account


def set_password(session: Session, account: Account, password: str) -> None:
    """A new password, and everything the old one opened ends: every login session and
    every API token of the account (a token minted with a stolen password, the sign-up
    token).  A page that set it starts a session afresh; a program logs in again
    (``POST /api/accounts/tokens``) for a new token."""
    if problem := password_problem(password, account.name):
        raise ServiceError(400, problem)
    account.password_hash = _checked(_hasher.hash, password)
    account.session_epoch += 1
    account.reset_token_hash = None
    account.reset_expires_at = None
    session.flush()
    sign_out_everywhere(session, account)


def _check_organises(session: Session, who: Caller, account: Account, refusal: str) -> None:
    """The admin, or an organiser of an event the account is a contestant of (an
    organiser's or the admin's own account is the admin's alone)."""
    if who.admin:
        return
    if who.anonymous:
        raise ServiceError(401, "this needs an organiser's login or token")
    shared = session.scalars(
        select(EventMember.event_id).where(
            EventMember.account_id == account.id, EventMember.role == "contestant"
        )
    )
    if account.role != "contestant" or not set(shared) & who.organises:
        raise ServiceError(403, refusal)


def check_resets(session: Session, who: Caller, account: Account) -> None:
    """The admin resets anyone's password; an organiser, a contestant's of their events."""
    _check_organises(
        session, who, account, "only an organiser of one of their events may reset this password"
    )


def check_signs_out(session: Session, who: Caller, account: Account) -> None:
    """Who may sign an account out everywhere: the account itself, the admin, and an
    organiser of an event it is a contestant of (the one who would hand out a reset link
    to it)."""
    if who.account_id is not None and who.account_id == account.id:
        return
    _check_organises(
        session, who, account, "only an organiser of one of their events may sign this account out"
    )


def make_reset_link(session: Session, who: Caller, account: Account) -> str:
    """A one-time secret for ``/reset/<secret>``, valid ``RESET_LINK_LIFETIME``: the
    organiser hands it over (no mail server needed).  A newer one replaces it."""
    check_resets(session, who, account)
    secret = new_token()
    account.reset_token_hash = hash_token(secret)
    account.reset_expires_at = utcnow() + RESET_LINK_LIFETIME
    session.flush()
    return secret


def account_for_reset(session: Session, secret: str) -> Account:
    account = session.scalar(select(Account).where(Account.reset_token_hash == hash_token(secret)))
    if (
        account is None
        or account.reset_expires_at is None
        or aware(account.reset_expires_at) < utcnow()
    ):
        raise ServiceError(404, "this reset link is not valid (used, replaced or expired)")
    return account


def account_json(session: Session, account: Account) -> dict[str, Any]:
    events = session.execute(
        select(Event.id, Event.name, EventMember.role)
        .join(EventMember, EventMember.event_id == Event.id)
        .where(EventMember.account_id == account.id)
        .order_by(Event.id)
    ).all()
    return {
        "id": account.id,
        "name": account.name,
        "role": account.role,
        "created_at": account.created_at,
        "events": [{"id": e, "name": n, "role": r} for e, n, r in events],
    }
