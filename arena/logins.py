"""Who is signed in, for the API and the pages alike: the bearer token, else the page's
login session (Flask-Login), else anyone; CSRF wherever a session is what signs a request
in; and the rate limits on sign-up, login and registration (``RateLimits``).

A login session is a row of ``web_sessions`` (``accounts.start_web_session``); the signed
cookie carries only its id, and every request looks the row up.  The cookie's signature
alone would keep a session alive wherever a copy of it went, whatever its owner did:
logging out deletes the row, and a new password or signing out everywhere deletes every
row of the account.

A bearer token travels only when a program sends it, so a request carrying one needs no
CSRF token; a session cookie travels with any request a browser makes, so a write that
a session signs in must carry the page's CSRF token (``X-CSRFToken``, which
``static/forms.js`` sends) or it is refused with 400.  The pages' own forms are checked
by Flask-WTF for every POST.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import Any

from flask import Flask, current_app, g, request
from flask_login import UserMixin, current_user, login_user, logout_user
from flask_wtf.csrf import CSRFError
from limits import parse_many
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from arena import services
from arena.config import Config
from arena.db import Database
from arena.extensions import csrf, login_manager
from arena.models import Account, bot_name_key
from arena.services import accounts, notices

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CONNECT_PREFIX = "/api/connect/"  # the connect transport: HMAC-signed, no session


class LoggedIn(UserMixin):
    """A page's signed-in account, and the id of its login session (what Flask-Login
    keeps in the cookie; the session's row keeps its hash)."""

    def __init__(self, account: Account, session_id: str, unread_notices: int = 0):
        self.account_id = account.id
        self.name = account.name
        self.role = account.role
        self.session_id = session_id
        # the top bar's badge (arena.web.pages.notices), counted with the account's load
        self.unread_notices = unread_notices

    def get_id(self) -> str:
        return self.session_id


@login_manager.user_loader
def _load(session_id: str) -> LoggedIn | None:
    """The session's account while its row lives (a cookie of before migration 0017,
    ``"<account>.<epoch>"``, names no row: logged out)."""
    database: Database = current_app.extensions["arena.db"]
    with database.session() as session:
        account = accounts.account_for_web_session(session, session_id)
        if account is None:
            return None
        # a page's top bar shows it; the API's answers do not
        page = not request.path.startswith("/api/")
        unread = notices.unread_count(session, account.id) if page else 0
        return LoggedIn(account, session_id, unread)


def log_in(session: Any, account: Account) -> None:
    """Start a login session of the account in this request's cookie (a new row); the
    one the cookie held before, if any, ends."""
    if current_user.is_authenticated:
        accounts.end_web_session(session, current_user.session_id)
    login_user(LoggedIn(account, accounts.start_web_session(session, account)))


def log_out(session: Any) -> None:
    """End this request's login session: its row, then the cookie's hold of it."""
    if current_user.is_authenticated:
        accounts.end_web_session(session, current_user.session_id)
    logout_user()


def bearer_token() -> str | None:
    """The token of ``Authorization: Bearer <token>``, or None."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def session_account_id() -> int | None:
    """The account signed in by the page's session, None for anyone; a write signed in
    this way must carry the CSRF token (else CSRFError: 400)."""
    if not current_user.is_authenticated:
        return None
    if request.method not in SAFE_METHODS and not g.get("csrf_checked"):
        csrf.protect()
        g.csrf_checked = True
    return current_user.account_id


def current_caller(session) -> services.Caller:  # type: ignore[no-untyped-def]
    """The request's caller (``services.caller``), read once per request."""
    found = g.get("arena_caller")
    if found is None:
        config: Config = current_app.extensions["arena.config"]
        token = bearer_token()
        found = services.caller(session, config, token, None if token else session_account_id())
        g.arena_caller = found
    return found


class RateLimits:
    """The limits of ``Config.limits``, each counted per key (a client address, an
    account's name) in a moving window in ``Config.ratelimit_storage`` (``limits``, the
    library under Flask-Limiter).

    Counted only where a view asks: Flask-Limiter's own hooks run on every request, the
    connect transport's long polls included, and with them a bot's poll that moved to
    another web process missed its deadline (a timeout fault, in the test of a web
    process killed mid-match); a few named checks need none of that."""

    def __init__(self, config: Config):
        self.enabled = config.rate_limits
        self.windows = MovingWindowRateLimiter(storage_from_string(config.ratelimit_storage))
        self.limits = {name: parse_many(text) for name, text in config.limits.items()}

    def hit(self, name: str, key: str) -> None:
        """Count one; over a limit, 429 with ``Retry-After`` (seconds until one is free)."""
        if self.enabled:
            for limit in self.limits.get(name, ()):  # one not configured counts nothing
                if not self.windows.hit(limit, name, key):
                    self._refuse(name, key, limit)

    def check(self, name: str, key: str) -> None:
        """429 if ``key`` is at a limit already, counting nothing."""
        if self.enabled:
            for limit in self.limits.get(name, ()):  # one not configured counts nothing
                if not self.windows.test(limit, name, key):
                    self._refuse(name, key, limit)

    def _refuse(self, name: str, key: str, limit: Any) -> None:
        reset = self.windows.get_window_stats(limit, name, key).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        what = "for this account" if name == "login-account" else "from this address"
        raise TooManyRequests(
            f"too many {NOUNS[name]} {what} ({limit}): try again in {wait} s",
            retry_after=wait,
        )


NOUNS = {
    "signup": "sign-ups",
    "login": "failed logins",
    "login-account": "failed logins",
    "register": "registrations",
}


def _limits() -> RateLimits:
    return current_app.extensions["arena.limits"]


def _client() -> str:
    """The client's address, the key of the per-address limits (arena.proxies)."""
    return request.remote_addr or "unknown"


def _exempt(who: services.Caller) -> bool:
    """The organisers and the admin are never limited."""
    return who.admin or who.role == "organiser"


@contextlib.contextmanager
def rate_limit(name: str) -> Iterator[None]:
    """Count this request against the limit ``name`` of ``Config.limits`` (per client
    address); over it, 429 with ``Retry-After``."""
    _limits().hit(name, _client())
    yield


def limit_signup(session: Any, who: services.Caller, join_code: str | None) -> None:
    """Count a sign-up per address unless it carries an event's valid join code or comes
    from an organiser or the admin: a class signs up from one school address, and a wrong
    code is what a guesser sends."""
    if _exempt(who):
        return
    if join_code:
        try:
            accounts.event_by_code(session, join_code)
        except services.ServiceError:
            pass
        else:
            return
    _limits().hit("signup", _client())


def limit_registration(who: services.Caller) -> None:
    """Count a registration per address, except the organisers' and the admin's."""
    if not _exempt(who):
        _limits().hit("register", _client())


@contextlib.contextmanager
def failed_logins(name: str) -> Iterator[None]:
    """Around a password check: refused at once (429) while the client's address or the
    account named is at its limit of failed logins; a failure (a 401 from inside) counts
    against both.  A login that succeeds counts nowhere, so a class logging in from one
    address is never held back by its own logins."""
    limits = _limits()
    address, account = _client(), bot_name_key(name)
    limits.check("login", address)
    limits.check("login-account", account)
    try:
        yield
    except services.ServiceError as exc:
        if exc.status == 401:
            limits.hit("login", address)
            limits.hit("login-account", account)
        raise


def init_app(app: Flask, config: Config) -> None:
    """Sessions, CSRF and the limiter of one app."""
    app.config.update(
        WTF_CSRF_CHECK_DEFAULT=False,  # checked in before_request below and for the API
        WTF_CSRF_TIME_LIMIT=None,  # a token lives as long as its session
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=config.profile == "production",
        # the signed cookie's lifetime, and the login session's in its row
        PERMANENT_SESSION_LIFETIME=accounts.SESSION_LIFETIME,
        REMEMBER_COOKIE_SAMESITE="Lax",
    )
    login_manager.init_app(app)
    login_manager.login_view = "web.login"
    login_manager.login_message = "Log in to see this page."
    csrf.init_app(app)
    app.extensions["arena.limits"] = RateLimits(config)

    @app.before_request
    def _load_login() -> None:
        """Read the login session's account before any view opens its own database
        session: on SQLite a session takes the write lock with its first statement, and
        the user loader's session, opened inside a view's, would wait for that lock
        until the busy timeout (a page read after a query, a PATCH that finds the bot
        before asking who calls).  The bot protocol's routes sign every request with
        the bot's key and never ask: a person playing while signed in costs no read."""
        if not request.path.startswith(CONNECT_PREFIX):
            _ = current_user.is_authenticated

    @app.before_request
    def _check_page_forms() -> None:
        """Every page form's POST carries its CSRF token (the API is checked where a
        session signs a request in: ``session_account_id``)."""
        if request.method not in SAFE_METHODS and not request.path.startswith("/api/"):
            csrf.protect()
            g.csrf_checked = True

    @app.errorhandler(CSRFError)
    def _csrf(exc: CSRFError):  # type: ignore[no-untyped-def]
        from werkzeug.exceptions import BadRequest

        error = BadRequest(
            f"{exc.description} A signed-in page's request needs its CSRF token "
            "(X-CSRFToken); a program signs in with Authorization: Bearer <token> instead."
        )
        return app.handle_http_exception(error)
