"""Who may do what: owner tokens (made, hashed, checked), signing secrets chosen by
their owners, the organiser token, and who a read's bearer token makes the caller
(``Reader``: only a bot's owner and the organiser see its endpoint)."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.config import Config
from arena.models import Bot
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


def check_owner(session: Session, bot: Bot, token: str | None) -> None:
    """401 without a valid owner token, 403 for the token of another bot's owner."""
    if not token:
        raise ServiceError(401, "this needs the bot's owner token: Authorization: Bearer <token>")
    if token_matches(token, bot.owner_token_hash):
        return
    known = session.scalar(select(Bot.id).where(Bot.owner_token_hash == hash_token(token)).limit(1))
    if known is None:
        raise ServiceError(401, "the owner token is not valid")
    raise ServiceError(403, f"bot {bot.id} belongs to another owner")


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


def check_organiser(config: Config, token: str | None) -> None:
    """Open when no organiser token is configured; else 401 without the right token."""
    if config.organiser_token is None:
        return
    if not token:
        raise ServiceError(401, "this needs the organiser token: Authorization: Bearer <token>")
    if not hmac.compare_digest(token.encode(), config.organiser_token.encode()):
        raise ServiceError(401, "the organiser token is not valid")


@dataclasses.dataclass(frozen=True)
class Reader:
    """Who reads the bots: the organiser, the owner of one bot (by its owner token), or
    anyone.  A bot's endpoint is an address anyone could flood: only its owner and the
    organiser see it."""

    organiser: bool = False
    bot_id: int | None = None  # the bot whose owner token was given

    def sees_endpoint(self, bot: Bot) -> bool:
        return self.organiser or (self.bot_id is not None and bot.id == self.bot_id)


def reader(session: Session, config: Config, token: str | None) -> Reader:
    """Who a read's bearer token makes the caller: anyone without one, the organiser with
    the configured organiser token, a bot's owner with its owner token; 401 for any other
    token (a mistyped token is told, not read as no token).

    Unlike ``check_organiser``, a server without an organiser token has no organiser
    here: reading other people's endpoints is never open, only starting tournaments is."""
    if not token:
        return Reader()
    organiser = config.organiser_token
    if organiser is not None and hmac.compare_digest(token.encode(), organiser.encode()):
        return Reader(organiser=True)
    bot_id = session.scalar(
        select(Bot.id).where(Bot.owner_token_hash == hash_token(token)).limit(1)
    )
    if bot_id is None:
        raise ServiceError(401, "the token is neither a bot's owner token nor the organiser token")
    return Reader(bot_id=bot_id)
