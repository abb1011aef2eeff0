"""Bots' signing secrets at rest: kept encrypted (Fernet: AES-128-CBC with an HMAC, from
``cryptography``), so that a copy of the database (a backup, a dump, a replica) does not
let its holder sign as a bot or forge the arena's requests to one.  The arena needs the
secrets themselves to sign, so a hash would not do; ``Bot.signing_secret`` is a
``SealedSecret`` column and every read and write goes through this module unseen.

The key is ``ARENA_SECRETS_KEY``: one or several Fernet keys, comma-separated, newest
first (``MultiFernet``; ``arena db new-secrets-key`` prints a new one).  New values are
sealed with the first; every listed key opens the values sealed with it, so a key is
rotated by putting the new one first, running ``arena db reseal`` and then dropping the
old one.  The production profile refuses to start without it (``arena.config``); the
local profile, so that nothing must be configured, makes one on first use and keeps it
in the data directory (``secrets.key``, readable by its owner only), where all the
processes of one machine find it.

Which key this process uses is set by ``use(config)`` (``create_app`` and the worker's
``configure`` call it); a process that never did reads its configuration from the
environment, and refuses to seal or open anything unless that names a key the arena
already has (``ARENA_SECRETS_KEY``, or the data dir's key file): a script that made a key
of its own would write secrets no arena process can open.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

KEY_ENV = "ARENA_SECRETS_KEY"
LOCAL_KEY_FILE = "secrets.key"  # in the data directory, local profile only
# a Fernet token of a 128-character secret is 268 characters; room for another scheme
SEALED_LENGTH = 512
OPENED_CACHE = 4096  # sealed values a process keeps opened (see Keyring)


class SealingError(RuntimeError):
    """A key that is not one, or a value no listed key opens: one line for the operator."""


def parse_keys(text: str) -> list[Fernet]:
    """The keys of ``ARENA_SECRETS_KEY`` (comma-separated, newest first)."""
    keys = [k.strip() for k in text.split(",") if k.strip()]
    if not keys:
        raise SealingError(f"{KEY_ENV} holds no key")
    try:
        return [Fernet(k) for k in keys]
    except ValueError:
        raise SealingError(
            f"{KEY_ENV} must hold Fernet keys (32 bytes in URL-safe base64, as "
            "`arena db new-secrets-key` prints), comma-separated, newest first"
        ) from None


def new_key() -> str:
    return Fernet.generate_key().decode()


def local_key(data_dir: Path) -> str:
    """The local profile's key, made on first use (``arena.config.kept_key``: two
    processes starting at once agree on one key)."""
    from arena.config import kept_key  # arena.config reads this module: imported late

    return kept_key(data_dir / LOCAL_KEY_FILE, new_key)


class Keyring:
    """Seals with the first key, opens with any."""

    def __init__(self, keys: list[str]):
        self.keys = keys
        self._fernet = MultiFernet(parse_keys(",".join(keys)))
        # opening costs tens of microseconds (an HMAC, AES, base64) and the same bots are
        # loaded again and again (pages, the ladder's matches): each sealed value is
        # opened once per process (a new secret is a new sealed value)
        self._opened = functools.lru_cache(maxsize=OPENED_CACHE)(self._open)

    @classmethod
    def for_config(cls, config: Any) -> Keyring:
        # from_env refuses a production configuration without the variable; one made
        # by hand (an embedding, a test) gets the data dir's key file as the local one
        text = config.secrets_key or local_key(config.data_dir)
        parse_keys(text)  # one line for a key that is not one
        return cls([k.strip() for k in text.split(",") if k.strip()])

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        return self._opened(sealed)

    def _open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise _unopened() from None

    def reseal(self, sealed: str) -> str:
        """The value sealed again with the newest key (``arena db reseal``)."""
        try:
            return self._fernet.rotate(sealed.encode()).decode()
        except InvalidToken:
            raise _unopened() from None


def _unopened() -> SealingError:
    return SealingError(
        f"a bot's signing secret cannot be opened with the keys of {KEY_ENV}: it was "
        "sealed with another key (set the one it was sealed with, or list both, newest "
        "first)"
    )


_lock = threading.Lock()
_state: dict[str, Any] = {}
# every key this process has used: a process that switches configurations (the tests
# do, one arena after another) still opens what it sealed before
_known: list[str] = []


def use(config: Any) -> None:
    """Seal and open with ``config``'s keys from now on, in this process (the key file
    of the local profile is made only when a secret is first sealed or opened)."""
    with _lock:
        _state.clear()
        _state["config"] = config


def keyring() -> Keyring:
    """This process's keyring (see ``use``)."""
    with _lock:
        found = _state.get("keyring")
        if found is None:
            config = _state.get("config")
            if config is None:
                config = _state["config"] = _configured_from_env()
            own = Keyring.for_config(config).keys
            _known[:] = own + [k for k in _known if k not in own]
            found = _state["keyring"] = Keyring(list(_known))
        return found


def _configured_from_env() -> Any:
    """The configuration of a process that never called ``use``: a script, or a task
    run outside the worker.  It may seal and open only with a key the arena has (one in
    ``ARENA_SECRETS_KEY``, or the key file of its data dir): making a key here would
    seal values that no arena process can open."""
    from arena.config import from_env

    config = from_env()
    if not config.secrets_key and not (config.data_dir / LOCAL_KEY_FILE).exists():
        raise SealingError(
            "no key to seal or open bots' signing secrets with: set "
            f"{KEY_ENV} to the arena's key, or ARENA_DATA_DIR to its data dir (which holds "
            f"{LOCAL_KEY_FILE}), or call arena.sealing.use(config) with its configuration; "
            f"{config.data_dir / LOCAL_KEY_FILE} does not exist"
        )
    return config


class SealedSecret(TypeDecorator[str]):
    """A string column whose values are stored sealed with this process's keyring."""

    impl = String(SEALED_LENGTH)
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else keyring().seal(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else keyring().open(value)
