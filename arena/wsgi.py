"""The WSGI entry point for production servers: ``gunicorn arena.wsgi:app``.

The configuration comes from the environment (``arena.config``); the production profile
refuses to start without its secret, database and broker, and a configured service whose
package is not installed is named with what to install.  Either is one line on stderr and
exit status 4, which gunicorn takes for "App failed to load" and stops on, rather than a
traceback per process it starts.  ``ARENA_LOG_FORMAT=json`` writes the application's log
lines as JSON (gunicorn's access log has its own ``--access-logformat``)."""

import sys

from arena.app import create_app
from arena.config import ConfigError, from_env
from arena.logs import configure

APP_LOAD_ERROR = 4  # gunicorn's exit status for an application that cannot load

try:
    config = from_env()
except ConfigError as exc:
    print(f"arena: {exc}", file=sys.stderr)
    sys.exit(APP_LOAD_ERROR)
configure(config.log_format)  # ARENA_LOG_FORMAT=json: the app's log lines as JSON
app = create_app(config)
