"""The WSGI entry point for production servers: ``gunicorn arena.wsgi:app``.

The configuration comes from the environment (``arena.config``); the production profile
refuses to start without its secret, database and broker.  ``ARENA_LOG_FORMAT=json``
writes the application's log lines as JSON (gunicorn's access log has its own
``--access-logformat``)."""

from arena.app import create_app
from arena.config import from_env
from arena.logs import configure

config = from_env()
configure(config.log_format)  # ARENA_LOG_FORMAT=json: the app's log lines as JSON
app = create_app(config)
