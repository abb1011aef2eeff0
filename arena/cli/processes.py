"""What the commands that start servers share (``arena serve``, ``arena demo``, the
tests): a worker's command line, stopping worker processes, and a web server that reports
a port it cannot listen on.  Its own module so that ``arena.cli.demo`` need not import
``arena.cli``, which imports the demo."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from werkzeug.serving import (
    BaseWSGIServer,
    WSGIRequestHandler,
    get_sockaddr,
    make_server,
    select_address_family,
)

import arena
from arena.logs import QUIET_PATHS


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


def arena_command(*args: str) -> list[str]:
    """``python -m arena ARGS`` for a child process that imports this very package from
    whatever folder it is started in.  With ``-P`` the current folder is not on the
    child's path: a folder named ``arena`` there (a project's, a data folder's) would be
    imported instead and the child would die at start-up.  A package found only through
    the current folder (a source checkout run in place, not installed) is put on the
    child's path by its absolute folder instead."""
    root = Path(arena.__file__).resolve().parent.parent
    if _found_without_cwd(root):
        return [sys.executable, "-P", "-m", "arena", *args]
    boot = f"import sys; sys.path.insert(0, {str(root)!r}); from arena.cli import main; "
    boot += "sys.exit(main())"
    return [sys.executable, "-P", "-c", boot, *args]


def _found_without_cwd(root: Path) -> bool:
    """Whether ``import arena`` finds the package in ``root`` with the current folder off
    the path (installed, or installed in editable mode), as a ``-P`` child would."""
    here = Path.cwd().resolve()
    saved = sys.path[:]
    sys.path[:] = [p for p in saved if p and Path(p).resolve() != here]
    try:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find("arena", None) if find is not None else None
            if spec is not None:
                return spec.origin is not None and Path(spec.origin).resolve().parent.parent == root
        return False
    finally:
        sys.path[:] = saved


def worker_command(hostname: str, *options: str) -> list[str]:
    """The command that starts a worker process (the demo and the tests start them)."""
    return arena_command("worker", f"--hostname={hostname}", *options)


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
