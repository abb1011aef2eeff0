"""The connections of the bot's HTTP server (``arenabot.server``): the front end's
asyncio protocol, which reads every connection within its deadline and answers what is
malformed, unsigned or badly signed, and the thread that serves a connection once it has
carried a verified request (the arena's), with blocking reads.  The limits on connections
and buffered bytes are the server's (``BotServer._admit``, ``_account``)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from arenabot.service import _encode
from arenabot.wire import _CONTINUE, Head, HeadError, _Requests, _response

if TYPE_CHECKING:
    from arenabot.server import BotServer

LINGER = 2.0  # seconds a refused connection's input is read and dropped after its answer


class _Connection(asyncio.Protocol):
    """A connection in the front end's thread: its requests are read, checked and
    answered here until one is verified (signed, new, well formed); the connection is
    then handed, with that request, to a thread of its own (``_ConnectionThread``)."""

    def __init__(self, server: BotServer):
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.peer = "-"
        self.requests = _Requests(server.max_body)
        self.closed = False
        self.deadline = time.monotonic() + server.request_timeout

    # -- asyncio's callbacks ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family != getattr(socket, "AF_UNIX", None):
            # asyncio sets it only on sockets made with proto=IPPROTO_TCP: not this one's
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = transport.get_extra_info("peername")
        if peer:
            self.peer = str(peer[0])
        self.server._admit(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        if not self.requests.started:  # a request begins: its deadline runs
            self.deadline = min(self.deadline, time.monotonic() + self.server.request_timeout)
        self.requests.feed(data)
        if self.server._account(self, len(data)):
            return  # closed to keep the buffers within their bound
        before = len(self.requests.buffer)
        try:
            self._process()
        finally:  # what was read out of the buffer (what is left is counted until closed)
            self.server._buffered -= before - len(self.requests.buffer)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server._forget(self)

    # -- requests ----------------------------------------------------------------------------
    def _process(self) -> None:
        """Answer every complete request in the buffer, in order, until one is for the
        bot."""
        server = self.server
        while not self.closed:
            try:
                found = self.requests.next()
            except HeadError as exc:
                self._refuse(exc.status, exc.reason)
                return
            if found is None:
                if self.requests.wants_continue:
                    self.requests.wants_continue = False
                    self._write(_CONTINUE)
                return
            head, body = found
            checked = server._check(head, body)
            if isinstance(checked, dict):
                self._hand_over(head, checked)
                return
            self._answer(head, *checked)

    def _hand_over(self, head: Head, request: dict[str, Any]) -> None:
        """A verified request: the connection goes to a thread of its own, which calls
        the bot and then reads the connection's next requests itself."""
        transport = self.transport
        assert transport is not None
        if transport.get_write_buffer_size():  # answers the client has not read yet
            self._refuse(HTTPStatus.SERVICE_UNAVAILABLE, "read the answers before asking more")
            return
        sock = transport.get_extra_info("socket").dup()  # the same connection, another fd
        self.closed = True
        self.server._forget(self)
        transport.abort()  # closes asyncio's descriptor only: the connection stays open
        self.server._thread_for(sock, self.peer, self.requests, head, request)

    # -- answering -------------------------------------------------------------------------
    def _answer(self, head: Head, status: HTTPStatus, body: bytes) -> None:
        self._write(_response(status, body, head.close))
        self.server._log(self.peer, head.requestline, status, len(body))
        if head.close:
            self._close()
        elif self.requests.started:  # the next request is arriving already
            self.deadline = time.monotonic() + self.server.request_timeout
        else:
            idle = self.server.idle_timeout
            self.deadline = float("inf") if idle is None else time.monotonic() + idle

    def _refuse(self, status: HTTPStatus, reason: str) -> None:
        """An error the connection cannot go on after (the rest of the request was not
        read): answer it, then close."""
        if self.closed:
            return
        body = _encode({"error": reason})
        self._write(_response(status, body, close=True))
        self.server._log(self.peer, "-", status, len(body))
        self._linger()

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _close(self) -> None:
        """Close after what was written has left."""
        if not self.closed:
            self.closed = True
            self.server._forget(self)
            if self.transport is not None:
                self.transport.close()

    def _linger(self) -> None:
        """Close after an answer the client may still be sending into (its request was
        not read to the end): half-close, then read and drop what still comes for
        ``LINGER`` seconds.  Closing at once with unread bytes makes the kernel reset the
        connection, and a reset can destroy the answer before the client reads it (a
        408 to a client trickling a head was lost that way, now and then)."""
        if self.closed:
            return
        self.closed = True  # data_received drops everything from now on
        self.server._forget(self)
        transport = self.transport
        if transport is None:
            return
        if not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()  # after the answer: FIN
        asyncio.get_running_loop().call_later(LINGER, transport.abort)

    def _abort(self) -> None:
        """Close now, dropping anything unsent."""
        if not self.closed:
            self.closed = True
            self.server._forget(self)
            if self.transport is not None:
                self.transport.abort()

    def _expire(self) -> None:
        """Its deadline passed: a request cut short gets 408, an idle one just closes."""
        if self.requests.started:
            self._refuse(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the request did not arrive within {self.server.request_timeout:g} s",
            )
        else:
            self._abort()


class _Job:
    """A verified connection waiting for, or served by, a ``_ConnectionThread``: its
    socket, its reader and the verified request it carried."""

    __slots__ = ("head", "peer", "request", "requests", "sock")

    def __init__(
        self,
        sock: socket.socket,
        peer: str,
        requests: _Requests,
        head: Head,
        request: dict[str, Any],
    ):
        self.sock = sock
        self.peer = peer
        self.requests = requests
        self.head = head
        self.request = request


class _ConnectionThread(threading.Thread):
    """Serves a connection that has carried a verified request (the arena's) with
    blocking reads, as long as it stays open: each request wakes one thread, which calls
    the bot (within the server's capacity) and answers.  Handing every request from the
    front end's loop to a pool of bot threads instead cost two thread switches, 50-60 us
    per request on loopback.  When its connection ends, or idles while another verified
    connection waits for a thread, the thread takes that one."""

    def __init__(self, server: BotServer, job: _Job):
        super().__init__(name="arenabot-connection", daemon=True)
        self.server = server
        self.job = job
        self.idle_since: float | None = None  # waiting for a request that has not begun

    def run(self) -> None:
        job: _Job | None = self.job
        try:
            while job is not None:
                self.job = job
                try:
                    self._serve(job)
                except OSError:
                    pass  # the client went away, or the server closed the connection
                finally:
                    job.sock.close()
                job = self.server._next_job(self)
        finally:
            self.server._thread_done(self)

    def close(self) -> None:
        """End the connection from another thread: the thread's read returns at once."""
        with contextlib.suppress(OSError):
            self.job.sock.shutdown(socket.SHUT_RDWR)

    def _serve(self, job: _Job) -> None:
        server = self.server
        head, request = job.head, job.request
        while True:
            status, data = server.answer(head.path, request)
            if not self._send(job, head, status, data):
                return
            while True:  # requests the front end's checks answer, until one for the bot
                found = self._read(job)
                if found is None:
                    return
                head, body = found
                checked = server._check(head, body)
                if isinstance(checked, dict):
                    request = checked
                    break
                if not self._send(job, head, *checked):
                    return

    def _send(self, job: _Job, head: Head, status: HTTPStatus, body: bytes) -> bool:
        """Answer; whether the connection goes on."""
        job.sock.settimeout(self.server.request_timeout)  # a client that does not read
        job.sock.sendall(_response(status, body, head.close))
        self.server._log(job.peer, head.requestline, status, len(body))
        return not head.close

    def _refuse(self, job: _Job, status: HTTPStatus, reason: str) -> None:
        body = _encode({"error": reason})
        with contextlib.suppress(OSError):
            job.sock.settimeout(self.server.request_timeout)
            job.sock.sendall(_response(status, body, close=True))
        self.server._log(job.peer, "-", status, len(body))

    def _read(self, job: _Job) -> tuple[Head, bytes] | None:
        """The next request; None when the connection is to close (after answering a
        request that cannot be read), or to give way to a connection waiting for a
        thread."""
        requests, server, sock = job.requests, self.server, job.sock
        deadline: float | None = None
        while True:
            try:
                found = requests.next()
            except HeadError as exc:
                self._refuse(job, exc.status, exc.reason)
                return None
            if found is not None:
                return found
            if requests.wants_continue:
                requests.wants_continue = False
                sock.settimeout(server.request_timeout)
                sock.sendall(_CONTINUE)
            if requests.started:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + server.request_timeout
                sock.settimeout(max(deadline - now, 0.001))
            else:
                if not server._idle(self):
                    return None  # a verified connection waits for this thread
                sock.settimeout(server.idle_timeout)
            try:
                data = sock.recv(65536)
            except TimeoutError:
                if requests.started:
                    self._refuse(
                        job,
                        HTTPStatus.REQUEST_TIMEOUT,
                        f"the request did not arrive within {server.request_timeout:g} s",
                    )
                return None
            finally:
                self.idle_since = None
            if not data:
                return None
            requests.feed(data)
