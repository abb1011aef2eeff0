"""The referee's client of a hosted seat: one sandboxed process per seat per match,
started when the match starts and kept, warm, to its end.

The process gets exactly the JSON bodies the other transports carry (``/start``,
``/act``, ``/end``), one line each way (``arenabot.hosted``).  Start-up has a budget of
its own (``STARTUP_SECONDS``), not charged to any decision; a decision's clock starts
when its request is written, and it is judged as every bot's is: an answer not in time is
a ``timeout``, a process that died is ``crashed`` (with the last line it wrote, its
exception), an exception in the bot's code is ``error: <Exception>``.

What fails before the runner has booted (the sandbox could not be made) or a start-up
that finds no core free for ``CORE_WAIT_LIMIT`` is the arena's, not the bot's: an
``ArenaError`` ends the match unrecorded, and it is played again.

Fair time: between its decisions the process is stopped (``SIGSTOP``), so a bot cannot
work in the background on anyone's core; while it decides, it holds one of the host's
hosted cores (``Cores``: a lock file per core, shared by every worker process of the
host) and is pinned to it, so a hosted decision never shares a core with another and its
deadline measures its own work.  A decision that finds every core taken waits for one
before its clock starts.

What the code writes to stderr goes to a file of the worker's, bounded by the sandbox's
file-size limit; ``take_log()`` hands the referee what was written since it last asked,
capped (``LOG_TAKE_CAP``), so each decision's lines are kept beside it.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import json
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from arena.hosted.sandbox import Sandbox
from arena.match.exchanges import Waker, act_seconds, settle
from arena.match.faults import EXCERPT_CAP, ArenaError, BotFault, excerpt

STARTUP_SECONDS = 10.0  # to load the bot and answer /start, not charged to a decision
END_SECONDS = 1.0  # for /end (its answer is ignored)
GRACE = 0.05  # seconds past deadline_ms for the worker's own scheduling
LINE_CAP = 1024 * 1024  # bytes of one answer line
LOG_TAKE_CAP = 4096  # characters of stderr kept per take_log()
# seconds between looks for a core another process of the host gave back (one of this
# process's wakes its first waiter at once)
CORE_LOOK = 0.01
# seconds a start-up waits for a free core; past that the arena is too busy, which is
# not the bot's fault: the match is played again (ArenaError)
CORE_WAIT_LIMIT = 120.0


class Cores:
    """The host's cores that hosted decisions take, one decision per core: a lock file per
    core in ``directory`` (``flock``, so worker processes of the host share them), and a
    set of those held by this process (``flock`` would let its own second take pass).

    Who waits for a core is told when this process gives one back: a decision through its
    window's waker (the first in line that is still waiting), a start-up through a
    condition.  A core another process of the host gives back is seen at the next look,
    every ``CORE_LOOK`` seconds."""

    def __init__(self, cores: Iterable[int], directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        self.cores = sorted(set(cores))
        self._files = {c: open(directory / f"core-{c}.lock", "a+b") for c in self.cores}  # noqa: SIM115
        self._held: set[int] = set()
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)
        self._line: collections.deque[tuple[Waker, HostedExchange]] = collections.deque()
        self._next = 0

    def take(self) -> int | None:
        """A free core, now held; None when every one is held."""
        with self._lock:
            return self._take()

    def _take(self) -> int | None:
        for i in range(len(self.cores)):
            core = self.cores[(self._next + i) % len(self.cores)]
            if core in self._held:
                continue
            try:
                fcntl.flock(self._files[core], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            self._held.add(core)
            self._next += i + 1
            return core
        return None

    def take_or_queue(self, waker: Waker, exchange: HostedExchange) -> int | None:
        """A free core, or None and ``exchange`` in line to be woken when one is given
        back (``waker.arm()`` is called here, in the window's thread)."""
        with self._lock:
            core = self._take()
            if core is None and not exchange.queued:  # once in line, not again
                waker.arm()
                exchange.queued = True
                self._line.append((waker, exchange))
            return core

    def wait(self, seconds: float) -> int | None:
        """A free core, waiting up to ``seconds`` for one."""
        until = time.monotonic() + seconds
        with self._lock:
            while (core := self._take()) is None:
                left = until - time.monotonic()
                if left <= 0:
                    return None
                self._freed.wait(min(left, CORE_LOOK))
            return core

    def give_back(self, core: int) -> None:
        with self._lock:
            if core not in self._held:
                return
            fcntl.flock(self._files[core], fcntl.LOCK_UN)
            self._held.discard(core)
            self._freed.notify()
            while self._line:  # the first in line still waiting for a core
                waker, exchange = self._line.popleft()
                exchange.queued = False
                if exchange.waiting and waker.wake(exchange):
                    break

    def close(self) -> None:
        for f in self._files.values():
            f.close()


def _line_of(message: dict[str, Any]) -> memoryview:
    """A message to the runner: one line of JSON."""
    return memoryview(orjson.dumps(message) + b"\n")


def default_cores() -> list[int]:
    """The cores this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


class HostedClient:
    """A hosted bot's seat: its process, started by ``start`` and ended by ``close``."""

    def __init__(self, name: str, code_dir: str | None, *, sandbox: Sandbox, cores: Cores):
        self.name = name
        self.code_dir = code_dir
        self.sandbox = sandbox
        self.cores = cores
        self.process: subprocess.Popen[bytes] | None = None
        self.failure: BotFault | None = None  # the process is gone: every request fails so
        self._buffer = bytearray()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._log_read = 0
        self._runner: int | None = None  # the runner's pid, once known

    # -- the process ------------------------------------------------------------------------
    def start(self, info: dict[str, Any]) -> None:
        """Start the process and hand it ``/start``, within ``STARTUP_SECONDS`` (holding
        a core, as a decision does).  ``code_dir`` None: the bot has no code that passed
        its validation, and every request fails."""
        if self.code_dir is None:
            self.failure = BotFault("crashed", "the bot has no code that passed validation")
            return
        core = self.cores.wait(CORE_WAIT_LIMIT)
        if core is None:
            raise ArenaError(f"no hosted core came free within {CORE_WAIT_LIMIT:g} s")
        try:
            try:
                self.process = self.sandbox.spawn(self.code_dir, self._log.fileno())
            except OSError as exc:
                raise ArenaError(f"the sandbox could not be started: {exc}") from exc
            self._pin(core)
            for fd in (self.process.stdin.fileno(), self.process.stdout.fileno()):  # type: ignore[union-attr]
                os.set_blocking(fd, False)
            until = time.monotonic() + STARTUP_SECONDS
            booted = self._line(until)
            if booted is None or not booted.get("booted"):  # before any code of the bot's
                words = self._last_words()
                self._kill()
                raise ArenaError("the sandbox did not start" + (f": {words}" if words else ""))
            ready = self._line(until)
            self._pin(core)  # the runner exists now: found, and pinned
            if ready is None or not ready.get("ready"):
                said = ready.get("error") if ready else None
                self._fail("could not start: " + (said or self._last_words() or "no answer"))
                return
            self._send({"path": "/start", "body": info}, until)
            self._line(until)  # its answer is ignored
        except (OSError, ValueError) as exc:
            self._fail(f"could not start: {exc}")
        finally:
            self._stop()
            self.cores.give_back(core)

    def _pin(self, core: int) -> None:
        """Keep the runner on ``core`` (the sandbox's one task; bubblewrap only waits)."""
        with contextlib.suppress(OSError):
            for pid in self._runner_or_group():
                os.sched_setaffinity(pid, {core})

    def _pids(self) -> list[int]:
        """The bubblewrap process and the runner it started (the sandbox's one task)."""
        assert self.process is not None
        pids = [self.process.pid]
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
            pids += [int(p) for p in children.read_text().split()]
        return pids

    def _runner_or_group(self) -> list[int]:
        """The runner's pid, found once (read from /proc as it started); until then, or
        where /proc does not say, every process of the sandbox."""
        if self._runner is None and self.process is not None:
            pids = self._pids()
            if len(pids) == 2:  # bubblewrap and its one child
                self._runner = pids[1]
            return pids
        return [self._runner] if self._runner is not None else []

    def _signal(self, sig: int) -> None:
        """Signal the runner (stop it, let it go on); the whole group when it is not
        known.  The runner cannot leave the group: setsid and setpgid are refused."""
        if self.process is None or self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self._runner is not None and sig != signal.SIGKILL:
                os.kill(self._runner, sig)
            else:
                os.killpg(self.process.pid, sig)

    def _stop(self) -> None:
        self._signal(signal.SIGSTOP)

    def _resume(self, core: int) -> None:
        self._pin(core)
        self._signal(signal.SIGCONT)

    def _fail(self, detail: str) -> None:
        self.failure = BotFault("crashed", detail[:EXCERPT_CAP])
        self._kill()

    def _kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self._signal(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)

    def _last_words(self) -> str:
        """The last line the process wrote to stderr (an exception, say)."""
        with contextlib.suppress(OSError):
            size = os.fstat(self._log.fileno()).st_size
            tail = os.pread(self._log.fileno(), 2048, max(0, size - 2048))
            lines = tail.decode("utf-8", "replace").strip().splitlines()
            return lines[-1] if lines else ""
        return ""

    def _exit_said(self) -> str:
        assert self.process is not None
        code = self.process.poll()
        if code is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(timeout=0.5)
        how = (
            f"killed by {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exit status {code}"
        )
        words = self._last_words()
        return f"the bot's process ended ({how})" + (f": {words}" if words else "")

    # -- lines ------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any], until: float) -> None:
        data = _line_of(message)
        while data:
            data = data[self._write(data) :]
            if data and not self._wait(self.process.stdin, select.POLLOUT, until):  # type: ignore[union-attr]
                raise OSError("the bot does not read its requests")

    def _write(self, data: memoryview) -> int:
        try:
            return os.write(self.process.stdin.fileno(), data)  # type: ignore[union-attr]
        except BlockingIOError:
            return 0

    def _wait(self, pipe: Any, events: int, until: float) -> bool:
        poller = select.poll()
        poller.register(pipe.fileno(), events)
        return bool(poller.poll(max(0.0, until - time.monotonic()) * 1000.0))

    def _line(self, until: float) -> dict[str, Any] | None:
        """The next line the runner writes, waiting until ``until``; None at the end of
        its output or of the time."""
        while True:
            line = self._parsed()
            if line is not None:
                return line
            if not self._wait(self.process.stdout, select.POLLIN, until):  # type: ignore[union-attr]
                return None
            if self._read() == 0:
                return None

    def _read(self) -> int:
        """Read what the runner wrote; bytes read, 0 at its end, -1 if nothing yet."""
        try:
            chunk = os.read(self.process.stdout.fileno(), 65536)  # type: ignore[union-attr]
        except BlockingIOError:
            return -1
        self._buffer += chunk
        return len(chunk)

    def _parsed(self) -> dict[str, Any] | None:
        """The first whole line in the buffer, parsed (a line that is not a JSON object is
        ``{"bad": excerpt}``)."""
        end = self._buffer.find(b"\n")
        if end < 0:
            if len(self._buffer) > LINE_CAP:
                raise BotFault("too_large", f"an answer longer than {LINE_CAP} bytes")
            return None
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            parsed = json.loads(line)
        except ValueError:
            return {"bad": excerpt(line)}
        return parsed if isinstance(parsed, dict) else {"bad": excerpt(parsed)}

    # -- the referee's interface ---------------------------------------------------------
    def begin_act(self, payload: dict[str, Any]) -> HostedExchange:
        return HostedExchange(self, payload)

    def act(self, payload: dict[str, Any]) -> Any:
        exchange = self.begin_act(payload)
        settle([exchange])
        return exchange.result()

    def end(self, info: dict[str, Any]) -> None:
        if self.failure is not None or self.process is None:
            return
        core = self.cores.wait(END_SECONDS)
        if core is None:
            return
        try:
            self._resume(core)
            until = time.monotonic() + END_SECONDS
            self._send({"path": "/end", "body": info}, until)
            while (line := self._line(until)) is not None and "id" in line and line["id"]:
                pass  # an answer to a decision that timed out
        except (OSError, BotFault):
            pass
        finally:
            self._stop()
            self.cores.give_back(core)

    def take_log(self) -> str:
        """What the bot wrote to stderr since the last call, at most ``LOG_TAKE_CAP``
        characters (the rest is skipped, and said so)."""
        with contextlib.suppress(OSError):
            size = os.fstat(self._log.fileno()).st_size
            start, self._log_read = self._log_read, max(size, self._log_read)
            if size <= start:
                return ""
            data = os.pread(self._log.fileno(), LOG_TAKE_CAP * 4, start)
            text = data.decode("utf-8", "replace")
            if len(text) > LOG_TAKE_CAP or start + len(data) < size:
                text = (
                    text[:LOG_TAKE_CAP] + f"\n[{size - start} bytes written; the rest not kept]\n"
                )
            return text
        return ""

    def close(self) -> None:
        if self.process is not None:
            self._signal(signal.SIGCONT)  # a stopped process takes SIGKILL, but be plain
            self._kill()
            for pipe in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]
        self._log.close()


class HostedExchange:
    """One decision of a hosted seat (``arena.match.exchanges.Exchange``): waits for a
    free core, then writes the request, then reads the answer with this decision's id,
    until the deadline."""

    def __init__(self, client: HostedClient, payload: dict[str, Any]):
        self.client = client
        self.id = payload.get("decision_id")
        self._data = _line_of({"path": "/act", "body": payload})
        self._seconds = act_seconds(payload, GRACE)  # the deadline and the time bank
        self._core: int | None = None
        self.queued = False  # in the cores' line (Cores.take_or_queue)
        self._deadline = 0.0
        self._retry_at = 0.0
        self._reply: Any = None
        self._fault: BotFault | None = None
        self.done = False
        self.started = self.finished = time.perf_counter()

    def advance(self, waker: Waker) -> None:
        if self.done:
            return
        client = self.client
        if client.failure is not None or client.process is None:
            self._finish(fault=client.failure or BotFault("crashed", "the bot never started"))
            return
        if self._core is None:
            self._core = client.cores.take_or_queue(waker, self)
            if self._core is None:
                self._retry_at = time.monotonic() + CORE_LOOK
                return
            client._resume(self._core)
            self.started = time.perf_counter()
            self._deadline = time.monotonic() + self._seconds
        try:
            if self._data:
                self._data = self._data[client._write(self._data) :]
            if not self._data:
                while True:
                    line = client._parsed()
                    if line is None:
                        got = client._read()
                        if got == 0:
                            self._finish(fault=BotFault("crashed", client._exit_said()))
                            return
                        if got < 0:
                            break
                        continue
                    if line.get("id") == self.id:
                        self._take(line)
                        return
                    # an answer to an earlier decision that timed out: not this one's
        except BotFault as fault:
            self._finish(fault=fault)
            return
        except OSError as exc:  # a pipe the process closed
            self._finish(fault=BotFault("crashed", f"{client._exit_said()} ({exc.strerror})"))
            return
        if time.monotonic() >= self._deadline:
            self._finish(fault=BotFault("timeout", f"no answer within {self._seconds:.2f} s"))

    def _take(self, line: dict[str, Any]) -> None:
        if "answer" in line:
            self._finish(reply=line["answer"])
        elif "error" in line:
            text = str(line["error"])  # "KeyError: 'nope'", as the runner says it
            name, _, said = text.partition(": ")
            self._finish(fault=BotFault(f"error: {name}", said[:EXCERPT_CAP], error=name))
        else:
            self._finish(fault=BotFault("bad_answer", "not an answer", excerpt=excerpt(line)))

    def _finish(self, reply: Any = None, fault: BotFault | None = None) -> None:
        self.finished = time.perf_counter()
        self._reply, self._fault = reply, fault
        self.done = True
        self._release()

    def _release(self) -> None:
        if self._core is not None:
            self.client._stop()
            self.client.cores.give_back(self._core)
            self._core = None

    def watch(self) -> tuple[int, int] | None:
        process = self.client.process
        if self._core is None or process is None:
            return None
        if self._data:
            return process.stdin.fileno(), select.POLLOUT  # type: ignore[union-attr]
        return process.stdout.fileno(), select.POLLIN  # type: ignore[union-attr]

    @property
    def waiting(self) -> bool:
        """Still waiting for a core (its request not sent)."""
        return self._core is None and not self.done

    def due(self) -> float | None:
        return self._retry_at if self._core is None else self._deadline

    def result(self) -> Any:
        if self._fault is not None:
            raise self._fault
        return self._reply

    def cancel(self) -> None:
        self.done = True
        self._release()
