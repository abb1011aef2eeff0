"""The WSGI entry point for production servers: ``gunicorn arena.wsgi:app``.

The configuration comes from the environment (``arena.config``); the production profile
refuses to start without its secret, database and broker, and a configured service whose
package is not installed is named with what to install.  Either is one line on stderr and
exit status 4, which gunicorn takes for "App failed to load" and stops on, rather than a
traceback per process it starts.  ``ARENA_LOG_FORMAT=json`` writes the application's log
lines as JSON (gunicorn's access log has its own ``--access-logformat``)."""

import gc
import sys

from arena.app import create_app
from arena.config import ConfigError, from_env
from arena.logs import configure

APP_LOAD_ERROR = 4  # gunicorn's exit status for an application that cannot load
# Python's cyclic collector, as a web process holding thousands of long polls needs it:
# a young collection every 20,000 new objects (not 700), a full one considered a tenth as
# often as by default
COLLECT_EVERY = (20_000, 10, 100)


def quiet_collector() -> None:
    """The collector of a web process, once its app is loaded.  Every held poll keeps a
    request's objects alive for up to 25 s, so they reach the oldest generation, and each
    full collection went through all of them and the whole loaded app: 0.35 to 0.9 s with
    2,500 polls a process, during which the process answered nothing (measured with a
    ``gc.callbacks`` probe at 5,000 bots; it was the pages' p99).  The app's own objects,
    which live as long as the process, are frozen out of the collector's sight, and full
    collections come rarely; reference counting still frees nearly everything at once."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECT_EVERY)


try:
    config = from_env()
except ConfigError as exc:
    print(f"arena: {exc}", file=sys.stderr)
    sys.exit(APP_LOAD_ERROR)
configure(config.log_format)  # ARENA_LOG_FORMAT=json: the app's log lines as JSON
app = create_app(config)
quiet_collector()
