"""The commands that run the arena's processes: ``arena serve`` (the web server),
``worker`` and ``beat`` (Celery), ``demo`` (all of them and the sample bots), ``db
upgrade`` and ``ratings rebuild`` (on the local database)."""

from __future__ import annotations

import argparse
import os
import resource
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from arena.cli.output import UsageError, at_least, check_port
from arena.config import BAD_DATABASE_URL, Config
from arena.games import GAMES, get_game


@contextmanager
def database_errors() -> Iterator[None]:
    """A database that cannot be used (a URL that is not one, a server that is down, a
    file without the arena's tables) is one line, not SQLAlchemy's page of traceback."""
    from sqlalchemy.exc import ArgumentError, DBAPIError

    try:
        yield
    except ArgumentError:
        raise UsageError(BAD_DATABASE_URL) from None
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else repr(exc)
        raise UsageError(f"the database cannot be used: {reason}") from None


def upgraded_database(config: Config) -> None:
    """The schema brought to the newest migration (serve, worker and db upgrade), with
    ``config``'s keys for the migrations that seal bots' signing secrets."""
    from arena import sealing
    from arena.db import Database

    sealing.use(config)
    with database_errors():
        database = Database(config.database_url)
        try:
            database.upgrade()
        finally:
            database.dispose()


def wait_for_database(config: Config, seconds: float) -> None:
    """Until the database accepts a connection, at most ``seconds``; then its error."""
    import time

    from sqlalchemy.exc import OperationalError

    from arena.db import make_engine

    deadline = time.monotonic() + seconds
    with database_errors():
        engine = make_engine(config.database_url)
        try:
            while True:
                try:
                    with engine.connect():
                        return
                except OperationalError:
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(1)
        finally:
            engine.dispose()


def configure_logging(args: argparse.Namespace, config: Config, level: str) -> None:
    """``--log-format``, else ``ARENA_LOG_FORMAT`` (``arena.logs``)."""
    from arena.logs import configure

    try:
        configure(args.log_format or config.log_format, level)
    except ValueError as exc:  # a --loglevel that is not a level
        raise UsageError(f"--loglevel: {exc}") from None


def check_metrics_port(port: int, pool: str, host: str | None = None) -> None:
    """``--metrics-port``: 0 (no endpoint), else a pool whose matches play in the worker's
    own process (``arena.metrics.worker``) and, given ``host`` (its listening address,
    ``ARENA_WORKER_METRICS_HOST``), a port this host lets the worker take there."""
    check_port("--metrics-port", port, lowest=0)
    if not port:
        return
    if pool == "prefork":
        raise UsageError(
            "--metrics-port needs --pool threads or solo: a prefork worker plays its matches "
            "in child processes, whose metrics its endpoint would not see"
        )
    if host is None:
        return
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as exc:
        raise UsageError(
            f"ARENA_WORKER_METRICS_HOST {host!r} is not an address of this host ({exc})"
        ) from None
    with socket.socket(family) as probe:  # taken now: one line here, not a log line later
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise UsageError(
                f"--metrics-port {port}: cannot listen there ({exc.strerror or exc})"
            ) from None


def cmd_serve(args: argparse.Namespace) -> int:
    from arena.app import create_app
    from arena.cli.processes import make_web_server
    from arena.config import from_env

    check_port("--port", args.port, lowest=0)
    config = from_env()
    configure_logging(args, config, "WARNING")
    upgraded_database(config)
    app = create_app(config)
    try:
        server = make_web_server(args.host, args.port, app)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}): "
            "choose another --port or --host"
        ) from None
    url = f"http://{args.host}:{server.port}/"
    print(f"arena: serving on {url} (profile {config.profile})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.worker.celery_app import worker_app

    at_least("--concurrency", args.concurrency, 1)
    check_metrics_port(args.metrics_port, args.pool)
    config = from_env()
    check_metrics_port(args.metrics_port, args.pool, config.worker_metrics_host)
    configure_logging(args, config, args.loglevel)
    upgraded_database(config)
    app = worker_app(config)  # every task registered
    quiet_root_warning(app.conf.accept_content)
    if args.metrics_port:
        from arena.metrics.worker import serve_when_ready

        serve_when_ready(args.metrics_port, config.worker_metrics_host, config.metrics_token)
    # a worker keeps connections to many bots open at once: as many files as allowed
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    concurrency = args.concurrency or config.worker_concurrency
    argv = ["worker", f"--pool={args.pool}", f"--concurrency={concurrency}",
            f"--loglevel={args.loglevel}"]  # fmt: skip
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    app.worker_main(argv)
    return 0


# Celery's words for a worker run as root (celery.platforms.ROOT_DISCOURAGED)
ROOT_WARNING = r"You're running the worker with superuser privileges"


def quiet_root_warning(accept_content: list[str]) -> None:
    """Leave out Celery's warning of a worker run as root (in a container, say) when the
    worker takes JSON messages only: what it warns of is a message unpickled as root,
    which such a worker never does (given pickle, Celery refuses to start as root).  The
    arena's own reason not to run a worker as root, its hosted bots' uid, is told in
    docs/hosted.md; the image runs it as a user of its own."""
    import warnings

    from celery.exceptions import SecurityWarning

    if set(accept_content) == {"json"}:
        warnings.filterwarnings("ignore", message=ROOT_WARNING, category=SecurityWarning)


def cmd_beat(args: argparse.Namespace) -> int:
    from arena.config import from_env
    from arena.worker.celery_app import worker_app

    config = from_env()
    configure_logging(args, config, args.loglevel)
    app = worker_app(config)  # every task registered
    schedule = config.data_dir / "celerybeat-schedule"
    # made only for an embedded database otherwise: beat on PostgreSQL died on a fresh host
    schedule.parent.mkdir(parents=True, exist_ok=True)
    app.start(["beat", f"--loglevel={args.loglevel}", f"--schedule={schedule}"])
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from arena import sealing
    from arena.config import from_env

    if args.action == "new-secrets-key":  # no configuration needed: it makes one
        print(sealing.new_key())
        return 0
    config = from_env()
    if args.wait:
        wait_for_database(config, args.wait)
    upgraded_database(config)
    if args.action == "reseal":
        print(f"arena: {reseal_secrets(config)} signing secrets sealed with the newest key")
        return 0
    print("arena: the database schema is up to date")
    return 0


def reseal_secrets(config: Config) -> int:
    """Every bot's signing secret sealed again with the newest key of ARENA_SECRETS_KEY
    (after a new key was put first): then the old key can be dropped.  Returns how many."""
    import sqlalchemy as sa

    from arena import sealing
    from arena.db import Database

    bots = sa.table("bots", sa.column("id", sa.Integer), sa.column("signing_secret", sa.String))
    keyring = sealing.Keyring.for_config(config)  # its keys alone, none known before
    with database_errors():
        database = Database(config.database_url)
        try:
            with database.engine.begin() as connection:
                rows = list(connection.execute(sa.select(bots.c.id, bots.c.signing_secret)))
                for bot_id, sealed in rows:
                    fresh = keyring.reseal(sealed)
                    connection.execute(
                        bots.update().where(bots.c.id == bot_id).values(signing_secret=fresh)
                    )
        finally:
            database.dispose()
    return len(rows)


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    from arena.config import embedded_database, from_env
    from arena.db import Database
    from arena.worker.refits import rebuild_ratings

    games = [get_game(args.game).id] if args.game else sorted(GAMES)
    path = embedded_database(os.environ)
    if path is not None and not path.is_file():  # connecting would create an empty one
        raise UsageError(
            f"no database at {path}: run this where the arena keeps its data, or point "
            "ARENA_DATA_DIR (or ARENA_DATABASE_URL) at it"
        )
    with database_errors():
        database = Database(from_env().database_url)
        try:
            reports = [rebuild_ratings(database, game_id, write=args.write) for game_id in games]
        finally:
            database.dispose()
    mismatched = 0
    for game_id, report in zip(games, reports, strict=True):
        differences = report["differences"]
        mismatched += bool(differences)
        state = "equal to what is stored" if not differences else f"{len(differences)} differ"
        print(f"{game_id}: {report['matches']} rated matches replayed; Elo {state}")
        for bot_id, (stored, rebuilt) in sorted(differences.items()):
            print(f"  bot {bot_id}: stored {stored}, rebuilt {rebuilt}")
    if mismatched and args.write:
        print("arena: the rebuilt ratings were written")
        return 0
    return 1 if mismatched else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.cli.demo import DemoError, run_demo

    try:
        return run_demo(args)
    except DemoError as exc:  # raised before anything started: a mistake in the arguments
        raise UsageError(str(exc)) from None


def add_commands(sub: Any) -> None:
    """``demo``, ``serve``, ``worker``, ``beat`` and ``db``."""
    demo = sub.add_parser(
        "demo",
        help="start the web server, a worker and the sample bots; run a round robin per game",
    )
    demo.add_argument("--host", default="127.0.0.1", help="the web server's address (127.0.0.1)")
    demo.add_argument("--port", type=int, default=8000, help="the web server's port (8000)")
    demo.add_argument("--games", help="comma-separated game ids (default: every game)")
    demo.add_argument(
        "--games-per-pairing",
        type=int,
        default=None,
        help="each round robin's games per pairing (default: the seats of its table)",
    )
    demo.add_argument("--workers", type=int, default=1, help="worker processes")
    demo.add_argument("--data-dir", help="keep the demo's database here (default: a new one)")
    demo.add_argument("--exit-when-done", action="store_true", help="do not serve afterwards")
    demo.add_argument(
        "--bot-port",
        type=int,
        default=0,
        metavar="N",
        help="the sample bots listen on N, N+1, ... (default: free ports)",
    )
    demo.set_defaults(func=cmd_demo)

    serve = sub.add_parser("serve", help="the web server (pages and JSON API)")
    serve.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (127.0.0.1; 0.0.0.0: all)"
    )
    serve.add_argument("--port", type=int, default=8000, help="the port (8000; 0: a free one)")
    add_log_format(serve)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="a Celery worker that plays matches")
    worker.add_argument(
        "--concurrency",
        type=int,
        help="matches played at once (default: $ARENA_WORKER_CONCURRENCY, else 100)",
    )
    worker.add_argument(
        "--pool",
        choices=["threads", "prefork", "solo"],
        default="threads",
        help="threads: many matches in this process (the default); prefork: one process "
        "per match, --concurrency of them; solo: one match at a time",
    )
    worker.add_argument(
        "--loglevel", default="WARNING", help="DEBUG, INFO, WARNING (the default) or ERROR"
    )
    worker.add_argument("--hostname", help="the worker's node name (default celery@host)")
    worker.add_argument(
        "--metrics-port",
        type=int,
        default=0,
        metavar="N",
        help="serve this worker's Prometheus metrics at http://<host>:N/metrics, <host> "
        "being $ARENA_WORKER_METRICS_HOST (default 127.0.0.1; with $ARENA_METRICS_TOKEN "
        "set, scrapes need it) (0, the default: not served; not with --pool prefork)",
    )
    add_log_format(worker)
    worker.set_defaults(func=cmd_worker)

    beat = sub.add_parser("beat", help="Celery beat: the rated ladder and housekeeping")
    beat.add_argument(
        "--loglevel", default="WARNING", help="DEBUG, INFO, WARNING (the default) or ERROR"
    )
    add_log_format(beat)
    beat.set_defaults(func=cmd_beat)

    db = sub.add_parser(
        "db",
        help="database schema; the key of bots' signing secrets",
        description="upgrade: bring the schema to the newest migration.  new-secrets-key: "
        "print a new key for ARENA_SECRETS_KEY.  reseal: seal every bot's signing secret "
        "with the newest key of ARENA_SECRETS_KEY (after putting a new key first), so that "
        "the old key can be dropped.",
    )
    db.add_argument(
        "action", choices=["upgrade", "new-secrets-key", "reseal"], help="what to do (above)"
    )
    db.add_argument(
        "--wait",
        type=float,
        default=0,
        metavar="SECONDS",
        help="wait up to SECONDS for the database to accept connections (a database "
        "started at the same time, as in a container stack) before failing",
    )
    db.set_defaults(func=cmd_db)


def add_log_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        help="json: one JSON object per log line (default: $ARENA_LOG_FORMAT, else text)",
    )


def add_ratings_commands(ratings_sub: Any) -> None:
    """``ratings rebuild``."""
    rebuild = ratings_sub.add_parser(
        "rebuild", help="replay the rated history and compare with the stored Elo (local data)"
    )
    rebuild.add_argument("--game", help="one game (default: every game)")
    rebuild.add_argument(
        "--write", action="store_true", help="store the rebuilt Elo where it differs"
    )
    rebuild.set_defaults(func=cmd_ratings_rebuild)
