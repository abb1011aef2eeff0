"""Who may do what: owner tokens (made, hashed, checked), signing secrets chosen by
their owners, the organiser token, and ``Caller``: who a request's credential makes its
caller (anyone, the admin, an account, a bot's owner) and every permission that follows."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session, object_session

from arena.config import Config
from arena.models import Bot, Event
from arena.services.errors import ServiceError

# a signing secret its owner chooses: printable ASCII without spaces (it goes on a command
# line or into an environment variable), long enough not to be guessed, and it must fit
# the column
SECRET_MIN_LENGTH = 16
SECRET_MAX_LENGTH = 128
SECRET_PATTERN = re.compile(r"[\x21-\x7e]+")
ROTATABLE = ("owner_token", "signing_secret")


def new_token() -> str:
    # never starting with "-": a bot started with ``--secret <token>`` would read it as
    # an option
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def hash_token(token: str) -> str:
    # Tokens are 256 random bits, not passwords: nothing can be guessed, so a plain
    # (unsalted, fast) hash is enough, and being deterministic it can be looked up.
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, hashed: str) -> bool:
    return hmac.compare_digest(hash_token(token), hashed)


def signing_secret_problem(secret: str) -> str | None:
    """Why a signing secret chosen by its owner is refused, or None."""
    if not SECRET_MIN_LENGTH <= len(secret) <= SECRET_MAX_LENGTH:
        return (
            f"a signing secret must be {SECRET_MIN_LENGTH} to {SECRET_MAX_LENGTH} characters "
            f"long (this one has {len(secret)})"
        )
    if not SECRET_PATTERN.fullmatch(secret):
        return "a signing secret may contain only printable ASCII characters, without spaces"
    return None


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who makes a request, and what that lets them do.

    One of: anyone (no credential); the admin (the organiser token, or an account of role
    admin); an account (its API token, or its login session on the pages), with the events
    it organises and the ones it joined; the owner of one bot (that bot's owner token).
    Every permission below is a question to this object, so the API and the pages answer
    it the same way."""

    admin: bool = False
    account_id: int | None = None
    name: str | None = None
    role: str | None = None  # the account's (ACCOUNT_ROLES)
    bot_id: int | None = None  # the bot whose owner token was given
    organises: frozenset[int] = frozenset()  # event ids
    joined: frozenset[int] = frozenset()  # event ids (organised ones included)

    @property
    def anonymous(self) -> bool:
        return not (self.admin or self.account_id is not None or self.bot_id is not None)

    @property
    def organiser(self) -> bool:
        """May create events: the admin, or an account of role organiser."""
        return self.admin or self.role == "organiser"

    def owns(self, bot: Bot) -> bool:
        """The bot's owner: its owner token, or the account it belongs to."""
        if self.bot_id is not None and bot.id == self.bot_id:
            return True
        return self.account_id is not None and bot.account_id == self.account_id

    def organises_event(self, event_id: int | None) -> bool:
        """The admin, or an organiser of that event (None: the open arena, the admin's)."""
        return self.admin or (event_id is not None and event_id in self.organises)

    def member_role(self, event_id: int) -> str | None:
        """What the caller is in the event: organiser, contestant, or None (not in it)."""
        if event_id in self.organises:
            return "organiser"
        return "contestant" if event_id in self.joined else None

    def manages(self, bot: Bot) -> bool:
        """May change, pause, rename, delete the bot or reset its credentials."""
        return self.owns(bot) or self.organises_event(bot.event_id)

    def sees_endpoint(self, bot: Bot) -> bool:
        """A bot's endpoint is an address anyone could flood: only those who manage it."""
        return self.manages(bot)

    def refusal(self, message: str) -> ServiceError:
        """The error refusing this caller: 401 without a credential (give one), 403 with
        one that is not enough (another will not help)."""
        return ServiceError(401 if self.anonymous else 403, message)

    def check_account(self, doing: str) -> None:
        """``doing`` ("attaching a bot") needs an account's login or API token."""
        if self.account_id is None:
            raise self.refusal(f"{doing} needs an account: log in, or give its API token")

    def sees_event(self, event_id: int | None, visibility: str) -> bool:
        """A private event's pages and API are for its members (and the admin)."""
        return event_id is None or visibility != "private" or self.admin or event_id in self.joined


def caller(
    session: Session,
    config: Config,
    token: str | None,
    account_id: int | None = None,
) -> Caller:
    """Who a request's bearer token makes the caller, else its logged-in account
    (``account_id``, from the page's session), else anyone.  A token is the organiser
    token (the admin), an account's API token or a bot's owner token; any other token
    is a 401 (a mistyped token is told, not read as no token)."""
    from arena.services import accounts  # accounts reads Caller: imported late

    if token:
        organiser = config.organiser_token
        if organiser is not None and hmac.compare_digest(token.encode(), organiser.encode()):
            return Caller(admin=True, name="admin")
        found = accounts.account_for_token(session, token)
        if found is not None:
            return accounts.account_caller(session, found)
        owned = session.execute(
            select(Bot.id, Bot.event_id).where(Bot.owner_token_hash == hash_token(token)).limit(1)
        ).first()
        if owned is None:
            raise ServiceError(
                401,
                "the token is not valid: not an account's, a bot's owner token or the organiser's",
            )
        # a private event's bot is its owner's to read: its token reads the event as the
        # member who registered it does
        event = frozenset() if owned.event_id is None else frozenset({owned.event_id})
        return Caller(bot_id=owned.id, joined=event)
    if account_id is not None:
        found = accounts.get_account(session, account_id, missing=None)
        if found is not None:
            return accounts.account_caller(session, found)
    return Caller()


def admin_open(config: Config) -> bool:
    """The admin's operations are open to anyone when no organiser token is configured
    (the local default)."""
    return config.organiser_token is None


def check_admin(config: Config, who: Caller) -> None:
    """The admin's: open when no organiser token is configured (``admin_open``); else 401
    for anyone, 403 for an account or an owner that is not the admin."""
    if who.admin or admin_open(config):
        return
    if who.anonymous:
        raise ServiceError(401, "this needs the organiser token: Authorization: Bearer <token>")
    raise ServiceError(403, "only the admin may do this")


def check_visible(session: Session, who: Caller, event_id: int | None, what: str) -> None:
    """404 for a thing (``what``: "bot 3") of a private event the caller may not see."""
    if event_id is None:
        return
    event = session.get(Event, event_id)
    if event is not None and not who.sees_event(event.id, event.visibility):
        raise ServiceError(404, f"no {what}")


def check_manages(who: Caller, bot: Bot) -> None:
    """401 without a credential, 403 for one that does not manage the bot; 404 for anyone
    who may not see it (a private event's bot: its existence is not told)."""
    if who.manages(bot):
        return
    session = object_session(bot)
    if session is not None:
        check_visible(session, who, bot.event_id, f"bot {bot.id}")
    if who.anonymous:
        raise ServiceError(
            401,
            "this needs the bot's owner token (or its account's, or an organiser's): "
            "Authorization: Bearer <token>",
        )
    raise ServiceError(403, f"bot {bot.id} belongs to another owner")
