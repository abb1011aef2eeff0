"""Configuration from the environment, with safe local defaults.

With nothing set, everything runs on one machine with no server installed: a SQLite file
and a file-system Celery broker, both under ``ARENA_DATA_DIR``.  In the production
profile a missing secret, organiser token or embedded database is an error at start-up,
not later.

"a file (local)": without its variable the local profile makes the key once and keeps it
in the data dir (``flask-secret.key`` for ``ARENA_SECRET_KEY``, ``secrets.key`` for
``ARENA_SECRETS_KEY``; readable by its owner only), where every process of the machine
finds it: a restart of ``arena serve`` keeps everyone signed in, and each of several web
processes takes the cookies the others signed.

| variable | meaning | default |
| --- | --- | --- |
| ``ARENA_PROFILE`` | ``local`` or ``production`` | ``local`` |
| ``ARENA_DATA_DIR`` | where the embedded database and broker live | ``./arena-data`` |
| ``ARENA_DATABASE_URL`` | SQLAlchemy URL (PostgreSQL in production) | SQLite file |
| ``ARENA_BROKER_URL`` | Celery broker (``redis://``, ``amqp://``) | file-system broker |
| ``ARENA_SECRET_KEY`` | Flask secret (signs session cookies, CSRF tokens) | a file (local) |
| ``ARENA_SECRETS_KEY`` | keys sealing bots' signing secrets (``arena.sealing``) | a file (local) |
| ``ARENA_ORGANISER_TOKEN`` | needed to create tournaments (required in production) | unset: open |
| ``ARENA_ALLOWED_NETWORKS`` | comma-separated CIDRs bots may live in | none |
| ``ARENA_DEADLINE_MS`` | time a bot has for one answer | 2000 |
| ``ARENA_MAX_STRIKES`` | faults before a bot plays out on defaults | 3 |
| ``ARENA_PAUSE_AFTER_FORFEITS`` | forfeits in a row after which a bot is paused | 3 |
| ``ARENA_MAX_TOURNAMENT_MATCHES`` | the most matches one tournament may schedule | 100000 |
| ``ARENA_LADDER_INTERVAL`` | seconds between ladder rounds (Celery beat) | 30 |
| ``ARENA_WORKER_CONCURRENCY`` | matches one worker process plays at once | 100 |
| ``ARENA_CONNECTIONS_PER_BOT`` | keep-alive connections a worker opens to one endpoint | 32 |
| ``ARENA_LEASE_SECONDS`` | a claim on a match lapses this long after its last renewal | 15 |
| ``ARENA_MATCH_TIME_LIMIT`` | seconds a match may take before it is failed (a backstop) | 3600 |
| ``ARENA_OPEN_PLAY`` | anyone may sit down at ``/play`` | on (local), off (production) |
| ``ARENA_OPEN_SIGNUP`` | contestants sign up without a join code | on (local), off |
| ``ARENA_OPEN_REGISTRATION`` | bots registered without an account | on (local), off |
| ``ARENA_RATE_LIMITS`` | limits on failed logins, sign-ups without a join code, registration | on |
| ``ARENA_RATELIMIT_STORAGE`` | where they count (``redis://`` for many web processes) | memory |
| ``ARENA_TRUSTED_PROXIES`` | proxies that name the client (a count, or CIDRs) | none |
| ``ARENA_METRICS_TOKEN`` | bearer token of ``/metrics`` and workers' metrics ports | see below |
| ``ARENA_WORKER_METRICS_HOST`` | where ``arena worker --metrics-port`` listens | loopback |
| ``ARENA_LOG_FORMAT`` | ``text`` or ``json`` (one object per line, ``arena.logs``) | text |
| ``ARENA_HOSTED_CORES`` | the cores hosted bots' decisions take, one each (``0-3``) | all |
| ``ARENA_HOSTED_SEATS`` | sandboxed hosted bots a worker process runs at once | 32 |
| ``ARENA_HOSTED_DIR`` | where a host's workers unpack hosted code and lock cores | temp dir |
| ``ARENA_SCRIMMAGES_PER_HOUR`` | scrimmage matches one bot may play an hour | 30 |
| ``ARENA_SMTP_URL`` | SMTP server mailing notices (``smtp://user:pass@host:587``) | no e-mail |
| ``ARENA_SMTP_STARTTLS`` | upgrade an ``smtp://`` connection with STARTTLS | on |
| ``ARENA_MAIL_FROM`` | the notices' sender address (needed with ``ARENA_SMTP_URL``) | none |

Without ``ARENA_METRICS_TOKEN``, ``/metrics`` answers the local profile's anyone with
counts that leave out private events, and refuses everyone (403) in the production
profile, where Prometheus is given the token (``arena.metrics.web``).  A worker's
metrics port listens on ``127.0.0.1`` unless ``ARENA_WORKER_METRICS_HOST`` names another
address (a pod's IP, ``0.0.0.0``) for a Prometheus on another host.
"""

from __future__ import annotations

import importlib
import math
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.logs import LOG_FORMATS
from arena.match.netpolicy import AddressPolicy


class ConfigError(RuntimeError):
    pass


DEFAULT_DATA_DIR = "arena-data"
# what they count stops attackers, not a class behind one school address: failed logins
# (per address and per account: a successful one counts nowhere), sign-ups without a
# valid join code, registrations by anyone but the organisers and the admin
RATE_LIMITS = {
    "signup": "30 per minute;300 per hour",
    "login": "30 per minute;300 per hour",
    "login-account": "10 per minute;50 per hour",
    "register": "30 per minute;300 per hour",
}
DATABASE_FILE = "arena.sqlite3"  # the embedded database, in the data dir
SECRET_KEY_FILE = "flask-secret.key"  # the local profile's Flask secret, in the data dir


def embedded_database(env: Mapping[str, str]) -> Path | None:
    """The SQLite file the configuration uses, or None when ``ARENA_DATABASE_URL`` names
    another database; for commands that read an existing arena and must not create one."""
    url = env.get("ARENA_DATABASE_URL")
    if not url:
        return Path(env.get("ARENA_DATA_DIR", DEFAULT_DATA_DIR)).resolve() / DATABASE_FILE
    prefix = "sqlite:///"
    if url.startswith(prefix) and len(url) > len(prefix) and ":memory:" not in url:
        return Path(url[len(prefix) :].split("?")[0]).resolve()
    return None


def kept_key(path: Path, make: Callable[[], str]) -> str:
    """The key kept in ``path``, made with ``make()`` on first use: written whole to a file
    of its own (readable by its owner only) and linked into place, so that processes
    starting at once agree on one key and none reads a half-written file."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(make() + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # another process was first: its key is the one
        finally:
            draft.unlink()
    return path.read_text().strip()


def local_secret_key(data_dir: Path) -> str:
    """The local profile's Flask secret (``SECRET_KEY_FILE`` in the data dir): one secret
    random per process logged everyone out at every restart, and signed a person in on
    one of several web processes and out on the next."""
    return kept_key(data_dir / SECRET_KEY_FILE, lambda: secrets.token_hex(32))


@dataclass(frozen=True)
class Config:
    profile: str = "local"
    data_dir: Path = Path("arena-data")
    database_url: str = ""
    broker_url: str = ""
    # the Flask secret; "": the local profile's key file in the data dir (create_app)
    secret_key: str = ""
    # the keys bots' signing secrets are sealed with (arena.sealing); "": the local
    # profile's key file in the data dir
    secrets_key: str = ""
    organiser_token: str | None = None
    allowed_networks: tuple[str, ...] = ()
    deadline_ms: int = 2000
    max_strikes: int = 3
    pause_after_forfeits: int = 3
    max_tournament_matches: int = 100_000
    ladder_interval: float = 30.0
    worker_concurrency: int = 100
    # database connections a process keeps open (as many more at a peak): its threads
    # share them, and a thread that waits too long for one retries (PostgreSQL's
    # max_connections bounds them all: web processes, workers and beat together)
    database_pool: int = 5
    connections_per_bot: int = 32
    lease_seconds: float = 15.0
    match_time_limit: float = 3600.0
    live_interval: float = 1.0  # seconds between writes of a running match's steps; 0: none
    # the address a web process listens on for workers' requests to its connected bots
    # (arena.relay): loopback unless workers run on other machines
    relay_host: str = "127.0.0.1"
    # anyone may sit down at /play against house bots and bots their owners offer (the
    # local default); else starting a match with people needs the organiser token
    open_play: bool = True
    # anyone may make a contestant account without an event's join code, and register a
    # bot without an account (with a free-text owner): the local default
    open_signup: bool = True
    open_registration: bool = True
    # per client address: sign-up, login, registration (the ``limits`` library's notation)
    rate_limits: bool = True
    ratelimit_storage: str = "memory://"
    # the proxies whose X-Forwarded-For names the client: a count or networks (arena.proxies)
    trusted_proxies: Any = 0
    # the bearer token /metrics and a worker's metrics port want (None: /metrics open without
    # private events in the local profile, refused in production; arena.metrics.web), the
    # address a worker's metrics port listens on (loopback unless Prometheus is elsewhere),
    # and how processes write their logs
    metrics_token: str | None = None
    worker_metrics_host: str = "127.0.0.1"
    log_format: str = "text"
    # hosted bots (arena.worker.hosting): the cores their decisions take, one each (empty:
    # every core the worker may use), the sandboxed processes a worker process runs at
    # once, and where a host's workers unpack their code and lock the cores ("": a
    # folder of the user's in the temp dir)
    hosted_cores: tuple[int, ...] = ()
    hosted_seats: int = 32
    hosted_dir: str = ""
    # scrimmage matches one bot may play an hour, asked for or challenged
    # (arena.services.scrimmages)
    scrimmages_per_hour: int = 30
    # where notices are mailed through (arena.worker.notices; "": no e-mail), whether an
    # smtp:// connection is upgraded with STARTTLS, and the mails' sender
    smtp_url: str = ""
    smtp_starttls: bool = True
    mail_from: str = ""
    limits: Mapping[str, str] = field(default_factory=lambda: dict(RATE_LIMITS))
    testing: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def embedded_broker(self) -> bool:
        return self.broker_url.startswith("filesystem://")

    @property
    def address_policy(self) -> AddressPolicy:
        return AddressPolicy.for_profile(self.profile, self.allowed_networks)

    def broker_folders(self) -> dict[str, Any]:
        """The file-system broker's folders (created on demand)."""
        base = self.data_dir / "broker"
        folders = {"data_folder_in": base / "queue", "data_folder_out": base / "queue"}
        folders["processed_folder"] = base / "processed"
        folders["control_folder"] = base / "control"  # else kombu writes into the cwd
        for path in folders.values():
            path.mkdir(parents=True, exist_ok=True)
        # the broker polls its folder; a tenth of a second keeps the demo lively
        return {**{k: str(v) for k, v in folders.items()}, "polling_interval": 0.1}


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    text = env.get(name, "").strip().lower()
    if not text:
        return default
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0 (true or false), not {text!r}")


# the packages a configured service needs beyond the base install, and the extra of
# pyproject.toml that installs them: the base install runs the embedded default alone
REDIS_SCHEMES = ("redis", "rediss")
DRIVER_EXTRAS = {"redis": "redis", "psycopg": "postgres"}
BAD_DATABASE_URL = (
    "ARENA_DATABASE_URL is not a database URL "
    "(e.g. postgresql+psycopg://arena@db/arena, or unset for SQLite in the data dir)"
)


def _missing(module: str, variable: str, what: str) -> ConfigError:
    extra = DRIVER_EXTRAS.get(module)
    how = (
        f"install the arena with its {extra!r} extra "
        f"(pip install -c constraints.txt -e '.[{extra}]' in its checkout)"
        if extra
        else f"install {module}"
    )
    return ConfigError(f"{variable} names {what}, which needs the {module} package: {how}")


def _check_installed(database_url: str, urls: Mapping[str, str]) -> None:
    """One line naming what to install when a configured service's package is missing,
    before any process starts, instead of a traceback from deep inside kombu or
    SQLAlchemy when it first connects."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    for variable, url in urls.items():
        if url.partition("://")[0].lower() in REDIS_SCHEMES:
            try:
                importlib.import_module("redis")
            except ImportError:
                raise _missing("redis", variable, "a Redis server") from None
    try:
        dialect = make_url(database_url).get_dialect()
    except NoSuchModuleError:  # an ArgumentError too: first
        raise ConfigError(
            f"ARENA_DATABASE_URL names a database this arena does not know: {database_url!r}"
        ) from None
    except ArgumentError:
        raise ConfigError(BAD_DATABASE_URL) from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        module = (exc.name or dialect.driver).partition(".")[0]
        raise _missing(module, "ARENA_DATABASE_URL", f"{dialect.name} ({dialect.driver})") from None


def _cores(text: str) -> tuple[int, ...]:
    """``ARENA_HOSTED_CORES``: ``0-3,6`` as (0, 1, 2, 3, 6); empty: every core."""
    cores: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            first, last = int(low), int(high or low)
        except ValueError:
            first, last = 0, -1
        if first < 0 or last < first:
            raise ConfigError(f"ARENA_HOSTED_CORES: {part!r} is not a core or a range of them")
        cores.update(range(first, last + 1))
    return tuple(sorted(cores))


def _trusted_proxies(env: Mapping[str, str]) -> Any:
    from arena.proxies import parse

    text = env.get("ARENA_TRUSTED_PROXIES", "")
    try:
        return parse(text)
    except ValueError:
        raise ConfigError(
            "ARENA_TRUSTED_PROXIES must be a count of proxies (1) or networks "
            f"(10.0.0.0/8,fd00::/8), not {text!r}"
        ) from None


def _secrets_key(env: Mapping[str, str]) -> str:
    """``ARENA_SECRETS_KEY``, checked now: a key that is not one fails at start-up."""
    from arena.sealing import SealingError, parse_keys

    text = env.get("ARENA_SECRETS_KEY", "").strip()
    if text:
        try:
            parse_keys(text)
        except SealingError as exc:
            raise ConfigError(str(exc)) from None
    return text


def _smtp(env: Mapping[str, str]) -> tuple[str, str]:
    """``ARENA_SMTP_URL`` and ``ARENA_MAIL_FROM``, checked now: a mail server that cannot
    be one fails at start-up, not at the first notice."""
    from urllib.parse import urlsplit

    url = env.get("ARENA_SMTP_URL", "").strip()
    sender = env.get("ARENA_MAIL_FROM", "").strip()
    if not url:
        return "", sender
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port out of range raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ConfigError(
            "ARENA_SMTP_URL must be smtp://[user:password@]host[:port] (or smtps://), "
            "with the password's special characters %-encoded"
        )
    if "@" not in sender:
        raise ConfigError("ARENA_SMTP_URL needs ARENA_MAIL_FROM, the notices' sender address")
    return url, sender


def from_env(env: Mapping[str, str] | None = None, **overrides: Any) -> Config:
    env = os.environ if env is None else env
    profile = env.get("ARENA_PROFILE", "local")
    if profile not in ("local", "production"):
        raise ConfigError(f"ARENA_PROFILE must be local or production, not {profile!r}")
    data_dir = Path(env.get("ARENA_DATA_DIR", DEFAULT_DATA_DIR)).resolve()
    database_url = env.get("ARENA_DATABASE_URL") or f"sqlite:///{data_dir / DATABASE_FILE}"
    broker_url = env.get("ARENA_BROKER_URL") or "filesystem://"
    secret_key = env.get("ARENA_SECRET_KEY", "")
    organiser_token = env.get("ARENA_ORGANISER_TOKEN") or None
    if profile == "production":
        if not secret_key:
            raise ConfigError("ARENA_SECRET_KEY must be set in the production profile")
        if database_url.startswith("sqlite"):
            raise ConfigError("the production profile needs ARENA_DATABASE_URL (PostgreSQL)")
        if broker_url.startswith("filesystem"):
            raise ConfigError("the production profile needs ARENA_BROKER_URL (Redis, RabbitMQ)")
        if organiser_token is None or not organiser_token.strip():
            raise ConfigError(
                "ARENA_ORGANISER_TOKEN must be set in the production profile: without it "
                "anyone could start tournaments and switch ladders"
            )
        if not env.get("ARENA_SECRETS_KEY", "").strip():
            raise ConfigError(
                "ARENA_SECRETS_KEY must be set in the production profile: bots' signing "
                "secrets are sealed with it (`arena db new-secrets-key` makes one)"
            )
    ratelimit_storage = env.get("ARENA_RATELIMIT_STORAGE", "memory://")
    _check_installed(
        database_url,
        {"ARENA_BROKER_URL": broker_url, "ARENA_RATELIMIT_STORAGE": ratelimit_storage},
    )
    networks = tuple(n.strip() for n in env.get("ARENA_ALLOWED_NETWORKS", "").split(",") if n)
    log_format = env.get("ARENA_LOG_FORMAT", "").strip().lower() or "text"
    if log_format not in LOG_FORMATS:
        raise ConfigError(f"ARENA_LOG_FORMAT must be text or json, not {log_format!r}")

    smtp_url, mail_from = _smtp(env)

    def number(name: str, default: float, kind: type = int, minimum: float = 1) -> Any:
        text = env.get(name, "")
        try:
            value = kind(text) if text else kind(default)
        except ValueError:
            raise ConfigError(f"{name} must be a number, not {text!r}") from None
        if not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number, not {text!r}")
        if value < minimum:
            raise ConfigError(f"{name} must be at least {minimum:g}, not {text}")
        return value

    config = Config(
        profile=profile,
        data_dir=data_dir,
        database_url=database_url,
        broker_url=broker_url,
        secret_key=secret_key,  # "": the data dir's (local_secret_key), read by create_app
        secrets_key=_secrets_key(env),
        organiser_token=organiser_token,
        allowed_networks=networks,
        deadline_ms=number("ARENA_DEADLINE_MS", 2000),
        max_strikes=number("ARENA_MAX_STRIKES", 3),
        pause_after_forfeits=number("ARENA_PAUSE_AFTER_FORFEITS", 3),
        max_tournament_matches=number("ARENA_MAX_TOURNAMENT_MATCHES", 100_000),
        ladder_interval=number("ARENA_LADDER_INTERVAL", 30, float),
        worker_concurrency=number("ARENA_WORKER_CONCURRENCY", 100),
        database_pool=number("ARENA_DATABASE_POOL", 5),
        connections_per_bot=number("ARENA_CONNECTIONS_PER_BOT", 32),
        lease_seconds=number("ARENA_LEASE_SECONDS", 15, float),
        match_time_limit=number("ARENA_MATCH_TIME_LIMIT", 3600, float),
        live_interval=number("ARENA_LIVE_INTERVAL", 1, float, minimum=0),
        relay_host=env.get("ARENA_RELAY_HOST", "127.0.0.1"),
        open_play=_flag(env, "ARENA_OPEN_PLAY", default=profile == "local"),
        open_signup=_flag(env, "ARENA_OPEN_SIGNUP", default=profile == "local"),
        open_registration=_flag(env, "ARENA_OPEN_REGISTRATION", default=profile == "local"),
        rate_limits=_flag(env, "ARENA_RATE_LIMITS", default=True),
        ratelimit_storage=ratelimit_storage,
        metrics_token=env.get("ARENA_METRICS_TOKEN") or None,
        worker_metrics_host=env.get("ARENA_WORKER_METRICS_HOST", "").strip() or "127.0.0.1",
        trusted_proxies=_trusted_proxies(env),
        log_format=log_format,
        hosted_cores=_cores(env.get("ARENA_HOSTED_CORES", "")),
        hosted_seats=number("ARENA_HOSTED_SEATS", 32),
        hosted_dir=env.get("ARENA_HOSTED_DIR", "").strip(),
        scrimmages_per_hour=number("ARENA_SCRIMMAGES_PER_HOUR", 30),
        smtp_url=smtp_url,
        smtp_starttls=_flag(env, "ARENA_SMTP_STARTTLS", default=True),
        mail_from=mail_from,
    )
    try:
        AddressPolicy.for_profile(profile, networks)  # a bad CIDR fails here, at start-up
    except ValueError as exc:
        raise ConfigError(f"ARENA_ALLOWED_NETWORKS: {exc}") from None
    if database_url.startswith("sqlite"):
        data_dir.mkdir(parents=True, exist_ok=True)
    return replace(config, **overrides)
