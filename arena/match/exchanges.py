"""How the referee asks its bots: the ``Client`` and ``Exchange`` protocols, and
``settle``, which drives the exchanges of a step (one request, or a reaction window's
requests at once) in one thread until each has its answer or its fault.

Each request is an ``Exchange`` with a deadline of its own, counted from when it was
sent, and its answer is taken, and its latency stamped, when it arrives, so that in a
reaction window one seat's silence or slowness never costs another seat a strike or
changes its latency.  A transport (``arena.match.http_client``, the connect relay)
provides exchanges; an in-process client's answer is a ``Call``.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol


class Client(Protocol):
    """A bot as the referee sees it.  ``act`` answers one request; a client that can be
    asked without blocking (a bot over a network) also has ``begin_act(payload)``,
    returning an ``Exchange`` that ``settle`` drives with the other seats' requests."""

    name: str

    def start(self, info: dict[str, Any]) -> None: ...

    def act(self, payload: dict[str, Any]) -> Any: ...

    def end(self, info: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class Exchange(Protocol):
    """One request on its way to its answer, driven by ``settle`` without blocking, so
    that the requests of a reaction window are answered concurrently in one thread and
    each is judged on its own deadline.

    ``advance(waker)`` does whatever can be done now without waiting: take a free
    connection slot and send, read and parse what has arrived, and, once ``due()`` has
    passed, read what is already there one last time before failing with a timeout.  It
    never raises and never blocks (an in-process client computes its answer there); once
    the answer or the fault is known it sets ``done``, with ``started`` and ``finished``
    (``time.perf_counter``) bounding the time the bot had: from the moment its request
    left, not from when it began to wait for a slot.

    ``settle`` advances an exchange again when one of these happens:
    - ``watch()`` names a file descriptor and poll events (``select.POLLIN``...), and
      they occur (a socket to read from, or to write to);
    - ``due()``, a ``time.monotonic`` time (its deadline, say), has passed;
    - it called ``waker.arm()`` in the window's thread, then anyone, from any thread,
      called ``waker.wake(exchange)``: for an exchange with nothing to poll, waiting for
      a connection slot another match holds, or for an answer another thread receives
      (a bot that connects out to the arena and takes its requests from a queue).
      A wake for an exchange that is done, or once ``settle`` has returned, is ignored.

    ``result()`` is the bot's answer or raises the fault it counts as (a ``BotFault``, or
    what an in-process bot raised).  ``cancel()`` gives back what an exchange not yet done
    holds (a window left early, on an error of the arena's own)."""

    done: bool
    started: float
    finished: float

    def advance(self, waker: Waker) -> None: ...

    def watch(self) -> tuple[int, int] | None: ...

    def due(self) -> float | None: ...

    def result(self) -> Any: ...

    def cancel(self) -> None: ...


class Waker:
    """Wakes ``settle`` from another thread for the exchanges given to ``wake``.  Its pipe
    is made only when an exchange asks for it (``arm``), so a window that never waits on
    another thread costs no file descriptor."""

    __slots__ = ("_closed", "_lock", "_read", "_woken", "_write")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._woken: list[Exchange] = []
        self._read = self._write = -1
        self._closed = False

    def arm(self) -> None:
        """Make ready to be woken: called in the window's thread before the exchange is
        handed to whoever will call ``wake``."""
        if self._read < 0:
            self._read, self._write = os.pipe()
            os.set_blocking(self._read, False)
            os.set_blocking(self._write, False)

    def fileno(self) -> int:
        """The descriptor readable once ``wake`` was called; -1 before ``arm``."""
        return self._read

    def wake(self, exchange: Exchange) -> bool:
        """Have ``exchange`` advanced soon; thread-safe, and a no-op once the wait is over.
        Whether it will be (False: the wait is over)."""
        with self._lock:
            if self._closed:
                return False
            self._woken.append(exchange)
            if len(self._woken) == 1:
                with contextlib.suppress(BlockingIOError):  # a byte is there already
                    os.write(self._write, b"!")
            return True

    def woken(self) -> list[Exchange]:
        """The exchanges woken since the last call."""
        with contextlib.suppress(BlockingIOError):
            os.read(self._read, 64)
        with self._lock:
            woken, self._woken = self._woken, []
        return woken

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._read >= 0:
                os.close(self._read)
                os.close(self._write)


def settle(exchanges: Sequence[Exchange]) -> None:
    """Drive every exchange until each is done: one request, or a reaction window's.

    The first round advances them in the order given (the caller puts those that only
    send first, so the bots think while in-process ones compute); then one poll waits on
    all their sockets, their wakers and the nearest time one is due, and each is advanced
    as its own bytes arrive or its own time comes.  So an exchange's answer is read, and
    its latency stamped, when it arrives, whatever the others do; a silent bot delays
    nobody's verdict but its own.  A slot wait holds nothing that another exchange needs:
    every exchange that holds a slot finishes within its deadline, whatever the rest of
    its window waits for, so windows of different matches cannot wait on each other in a
    circle."""
    waker = Waker()
    try:
        for exchange in exchanges:
            exchange.advance(waker)
        pending = [x for x in exchanges if not x.done]
        while pending:
            poller = select.poll()  # not select(): a busy worker has more than 1024 sockets
            watched: dict[int, Exchange] = {}
            due: float | None = None
            for exchange in pending:
                watch = exchange.watch()
                if watch is not None:
                    watched[watch[0]] = exchange
                    poller.register(*watch)
                at = exchange.due()
                if at is not None and (due is None or at < due):
                    due = at
            if waker.fileno() >= 0:
                poller.register(waker.fileno(), select.POLLIN)
            elif due is None and not watched:
                raise RuntimeError("an exchange is waiting on nothing")  # a bug: never hang
            timeout = None if due is None else max(due - time.monotonic(), 0.0) * 1000.0
            ready = poller.poll(timeout)
            now = time.monotonic()
            for fd, _ in ready:
                exchange = watched.get(fd)  # None: the waker
                if exchange is not None:
                    exchange.advance(waker)
            if waker.fileno() >= 0:
                for exchange in waker.woken():
                    exchange.advance(waker)
            for exchange in pending:
                if not exchange.done and (at := exchange.due()) is not None and at <= now:
                    exchange.advance(waker)
            pending = [x for x in pending if not x.done]
    finally:
        for exchange in exchanges:
            if not exchange.done:
                exchange.cancel()
        waker.close()


def act_seconds(payload: dict[str, Any], grace: float) -> float:
    """How long a transport waits for an ``/act`` answer: its ``deadline_ms``, what is
    left of the seat's time bank (``time_bank_ms``: see ``arena.match.referee``) and the
    transport's ``grace``, in seconds."""
    bank = payload.get("time_bank_ms") or 0
    return (payload.get("deadline_ms", 2000) + bank) / 1000.0 + grace


class Call:
    """An in-process client's answer as an exchange: computed in the window's thread when
    first advanced; nothing to poll."""

    __slots__ = ("_error", "_function", "_payload", "_reply", "done", "finished", "started")

    def __init__(self, function: Callable[[dict[str, Any]], Any], payload: dict[str, Any]):
        self._function = function
        self._payload = payload
        self._reply: Any = None
        self._error: Exception | None = None
        self.done = False
        self.started = self.finished = time.perf_counter()

    def advance(self, waker: Waker) -> None:
        if self.done:
            return
        self.started = time.perf_counter()
        try:
            self._reply = self._function(self._payload)
        except Exception as exc:  # judged like any other fault
            self._error = exc
        self.finished = time.perf_counter()
        self.done = True

    def watch(self) -> None:
        return None

    def due(self) -> None:
        return None

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._reply

    def cancel(self) -> None:
        self.done = True
