"""The WSGI entry point for production servers: ``gunicorn arena.wsgi:app``.

The configuration comes from the environment (``arena.config``); the production profile
refuses to start without its secret, database and broker."""

from arena.app import create_app

app = create_app()
