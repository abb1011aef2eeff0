"""The worker process: the Celery app and its tasks (matches, refits, the ladder,
housekeeping), the leases its warden keeps, live steps, the broker's transports, and a
match's lifecycle in the database.

This package's own import is light: ``arena.worker.queue`` (what the web process needs
to send matches) imports no referee and no transport.
"""
