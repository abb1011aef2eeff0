"""What the commands that start servers share (``arena serve``, ``arena demo``, the
tests): a worker's command line, stopping worker processes, and a web server that reports
a port it cannot listen on.  Its own module so that ``arena.cli.demo`` need not import
``arena.cli``, which imports the demo."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from werkzeug.serving import (
    BaseWSGIServer,
    WSGIRequestHandler,
    get_sockaddr,
    make_server,
    select_address_family,
)

QUIET_PATHS = ("/api/connect/poll",)  # a connected bot's polls: one or more a decision


class _RequestHandler(WSGIRequestHandler):
    """werkzeug's handler, whose access log leaves out the connected bots' polls that
    succeed: there is one per decision, and they would bury every other line."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        quiet = self.path.startswith(QUIET_PATHS) and str(code).startswith("2")
        if not quiet:
            super().log_request(code, size)


def make_web_server(host: str, port: int, app: Any) -> BaseWSGIServer:
    """werkzeug's threaded server for ``app`` on host:port (0: a free port, then in its
    ``port``), not yet serving.  Raises OSError when it cannot listen there: werkzeug's
    own binding prints its reason and exits the process instead."""
    family = select_address_family(host, port)
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as werkzeug does
        listener.bind(get_sockaddr(host, port, family))
        listener.listen(128)
        return make_server(
            host, port, app, threaded=True, fd=listener.fileno(), request_handler=_RequestHandler
        )
    finally:
        listener.close()  # the server holds a duplicate of it


def worker_command(hostname: str, *options: str) -> list[str]:
    """The command that starts a worker process (the demo and the tests start them)."""
    return [sys.executable, "-m", "arena", "worker", f"--hostname={hostname}", *options]


def stop_processes(procs: Sequence[subprocess.Popen[bytes]], timeout: float) -> None:
    """Ask worker processes to stop (a warm shutdown finishes the match in hand), and
    kill those still running after ``timeout`` seconds."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
