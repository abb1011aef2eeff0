"""What the image's gunicorn command (``deploy/Dockerfile``) takes from the arena besides
the app: its access log (``--logger-class arena.serving.AccessLog``), which leaves out the
connected bots' polls that succeed, as ``arena serve``'s does.  Under a crowd of connected
bots, writing a line per poll was a twentieth of a web process's CPU (measured with
py-spy), and the lines buried every other request's.  Needs gunicorn (the ``server``
extra)."""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from arena.logs import QUIET_PATHS


class AccessLog(Logger):
    """gunicorn's logger, whose access log skips a successful poll."""

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        status = getattr(resp, "status_code", None)
        if status is not None and 200 <= status < 300 and req.path.startswith(QUIET_PATHS):
            return
        super().access(resp, req, environ, request_time)
