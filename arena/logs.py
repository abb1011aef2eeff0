"""How the arena's processes write their logs: as text (the default) or as JSON, one
object per line, for a log collector (``ARENA_LOG_FORMAT=json``, or ``--log-format json``
on ``arena serve``, ``worker`` and ``beat``).

A JSON line has ``time`` (UTC, ISO 8601), ``level``, ``logger`` and ``message``, then every
field the log call passed in ``extra`` (the worker's main calls pass ``match_id`` or
``bot_id``), and ``exception`` with its traceback when there was one.  This module only
formats and installs the handler; what is logged, and at which level, is each module's.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from typing import Any, TextIO

LOG_FORMATS = ("text", "json")
# the access logs leave out the connected bots' polls that succeed: there is one or more
# per decision, and they would bury every other line
QUIET_PATHS = ("/api/connect/poll",)

# what every LogRecord has: anything else on a record came from the call's ``extra``
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_") and key not in line:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # default=str: an extra that is not JSON (a datetime, an object) is still a line
        return json.dumps(line, default=str, ensure_ascii=False)


def configure(
    log_format: str, level: str | int = logging.WARNING, stream: TextIO | None = None
) -> None:
    """Install the handler of ``log_format`` on the root logger of this process.

    ``text`` changes nothing: each process keeps the logging it always had (Celery's own
    for a worker and beat, werkzeug's and Python's defaults for the web).  ``json`` sends
    every logger's records, at ``level`` and above, to ``stream`` (stderr) as JSON lines,
    Python's warnings too, and tells Celery to leave the logging alone."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"the log format is text or json, not {log_format!r}")
    if log_format == "text":
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    logging.captureWarnings(True)
    _celery_keeps_off()


def _celery_keeps_off() -> None:
    """A receiver of ``setup_logging`` is Celery's sign that the process configured its
    logging itself: its worker and beat then add no handler of their own (they would
    write text lines between the JSON ones)."""
    from celery.signals import setup_logging

    setup_logging.connect(_logging_is_set_up, weak=False, dispatch_uid="arena.logs")


def _logging_is_set_up(**_: Any) -> None:
    """Celery asked who sets up the logging: ``configure`` did."""
