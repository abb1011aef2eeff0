"""The web tier's event loop: gunicorn's gevent workers (the image's command) patch the
standard library before the app loads, so that each request, long poll and slow client
is a greenlet rather than a thread.  Code that blocks in C without a socket (argon2's
password checks) would hold every greenlet of the process while it runs: it goes to
``NativeThreads``, real threads of its own, whichever server runs the app.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def patched() -> bool:
    """Whether gevent has patched this process's threading (a gevent worker)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("threading"))


class NativeThreads:
    """At most ``size`` operating-system threads of their own, started on first use; with
    gevent, the calling greenlet waits for its call while the others run on."""

    def __init__(self, size: int, name: str):
        self.size = size
        self.name = name
        self._pool: Any = None
        self._green = False
        self._lock = threading.Lock()

    def run(self, call: Callable[..., T], *args: Any) -> T:
        pool = self._pool or self._start()
        if self._green:
            return pool.apply(call, args)  # type: ignore[no-any-return]
        return pool.submit(call, *args).result()  # type: ignore[no-any-return]

    def _start(self) -> Any:
        with self._lock:
            if self._pool is None:
                self._green = patched()
                if self._green:
                    from gevent.threadpool import ThreadPool

                    self._pool = ThreadPool(self.size)
                else:
                    self._pool = ThreadPoolExecutor(self.size, thread_name_prefix=self.name)
            return self._pool
