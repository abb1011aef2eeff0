"""The sandbox a hosted bot's code runs in: bubblewrap (``bwrap``, Debian's
``bubblewrap``) with a seccomp filter, and ``resource`` limits set by the runner.

What the code gets, and nothing else (``docs/hosted.md`` for students and operators):
- namespaces of its own (user, pid, network, IPC, UTS, cgroup): no network at all (a
  loopback of its own, and no socket but a Unix one), no process of the host to see or
  signal, no nested namespace;
- a read-only filesystem of the system's libraries, the Python standard library (without
  its site-packages), the SDK and numpy, and its own code at ``/bot``; a private ``/tmp``
  of ``TMP_BYTES`` is the only place it may write.  No ``/etc`` (but the loader's
  cache), no data dir, database file, secret or environment of the arena;
- one task: the seccomp filter refuses ``fork``, ``clone`` (threads too) and a dozen calls
  a bot has no use for (``ptrace``, ``bpf``, ``mount``, ``keyctl``...), so a fork or
  thread bomb gets errors, not processes;
- limits the runner sets before it loads the code, which the code cannot raise again:
  address space, file size (its stderr, which the arena keeps as its log, included),
  open files, CPU seconds, no core dumps.

The worker keeps the process stopped (``SIGSTOP``) between the seat's decisions, and
pins it, while it decides, to one core that no other hosted decision holds
(``arena.hosted.client``).  bubblewrap needs user namespaces: ``probe()`` tells whether
they work here, and a worker that cannot make a sandbox refuses hosted seats.  No Flask,
no database here.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BWRAP = "bwrap"
CODE_DIR = "/bot"  # where the bot's code is, read-only
LIB_DIR = "/opt/arena/lib"  # the SDK and numpy
PYTHON_DIR = "/opt/arena/python"  # an interpreter installed outside /usr, wherever it is
TMP_BYTES = 16 * 1024 * 1024  # the private /tmp
# the calls refused with EPERM, besides creating tasks: a bot needs none of them
DENIED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "personality",
    "setsid",  # the process stays in the group the worker stops between decisions
    "setpgid",
    "kcmp",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
)
AF_UNIX = 1


@dataclass(frozen=True)
class Limits:
    """What one hosted process may use (``resource`` limits, applied by the runner)."""

    memory_bytes: int = 1024 * 1024 * 1024  # address space (numpy maps ~300 MiB at import)
    file_bytes: int = 8 * 1024 * 1024  # any file it writes, its stderr included
    open_files: int = 64
    cpu_seconds: int = 600  # the whole match's CPU: a backstop to the referee's deadlines

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_AS": self.memory_bytes,
            "RLIMIT_FSIZE": self.file_bytes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_CORE": 0,
        }


class SandboxUnavailable(RuntimeError):
    """This host cannot make the sandbox (no bwrap, no user namespaces, no libseccomp)."""


@functools.lru_cache(maxsize=1)
def seccomp_program() -> bytes:
    """The compiled filter (BPF): no new task, no socket but a Unix one, none of
    ``DENIED``; everything else allowed.  ``clone3`` answers ENOSYS, as on a kernel
    without it, so that the C library falls back to ``clone``, which is refused."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so.2 is not installed
        raise SandboxUnavailable(f"libseccomp is not available: {exc}") from None
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # a call this architecture does not have (fork on arm64) needs no rule
    unknown_call = contextlib.suppress(ValueError, RuntimeError)
    for call in ("fork", "vfork", "clone"):
        with unknown_call:
            rules.add_rule(seccomp.ERRNO(errno.EAGAIN), call)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for call in DENIED:
        with unknown_call:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), call)
    rules.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.NE, AF_UNIX))
    rules.add_rule(
        seccomp.ERRNO(errno.EAFNOSUPPORT), "socketpair", seccomp.Arg(0, seccomp.NE, AF_UNIX)
    )
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def _base_prefix() -> str:
    """Where the interpreter's own install is on the host (not a virtual environment's)."""
    return str(Path(sys.base_prefix).resolve())


def _package_dir(name: str) -> str | None:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(Path(next(iter(spec.submodule_search_locations))).resolve())


@dataclass(frozen=True)
class Sandbox:
    """How to start a runner in the sandbox: the interpreter, what is mounted, the
    limits.  ``command(code_dir)`` is the command line; the seccomp program is handed over
    on a file descriptor (``seccomp_fd``)."""

    python: str = field(default_factory=lambda: os.path.realpath(sys._base_executable))
    limits: Limits = field(default_factory=Limits)
    packages: tuple[str, ...] = ("arenabot", "numpy")
    # a /proc of its own (its pid namespace's): a container that masks parts of its own
    # /proc (Docker's default) refuses to mount a new one, and the bot then has none
    proc: bool = True

    def prefix(self) -> str:
        """Where the interpreter's install is seen in the sandbox: where it is when that
        is under /usr, else ``PYTHON_DIR`` (so that no path of the host shows)."""
        base = _base_prefix()
        return base if base == "/usr" or base.startswith("/usr/") else PYTHON_DIR

    def executable(self) -> str:
        """The interpreter's path in the sandbox."""
        base = _base_prefix()
        prefix = self.prefix()
        return self.python if prefix == base else prefix + self.python[len(base) :]

    def mounts(self) -> list[str]:
        args: list[str] = ["--ro-bind", "/usr", "/usr"]
        for link in ("lib", "lib64", "bin", "sbin", "lib32"):
            path = Path("/") / link
            if path.is_symlink():
                args += ["--symlink", os.readlink(path), str(path)]
            elif path.is_dir():
                args += ["--ro-bind", str(path), str(path)]
        if self.prefix() == PYTHON_DIR:
            args += ["--ro-bind", _base_prefix(), PYTHON_DIR]
        if Path("/etc/ld.so.cache").exists():
            args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
        lib = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}"
        for name in ("site-packages", "dist-packages"):  # where the arena may be installed
            if (Path(_base_prefix()) / lib / name).is_dir():
                args += ["--tmpfs", f"{self.prefix()}/{lib}/{name}"]
        for name in self.packages:
            where = _package_dir(name)
            if where is None:
                continue
            args += ["--ro-bind", where, f"{LIB_DIR}/{name}"]
            libs = Path(where).parent / f"{name}.libs"  # wheels' vendored libraries
            if libs.is_dir():
                args += ["--ro-bind", str(libs), f"{LIB_DIR}/{name}.libs"]
        return args

    def command(self, code_dir: str, seccomp_fd: int) -> list[str]:
        settings = json.dumps({"limits": self.limits.rlimits(), "folder": CODE_DIR})
        # the bot's folder is not on the path until the runner has set the limits and
        # loads it: a module of the bot's named like one the runner imports (resource.py)
        # must not run first
        boot = f"import sys; sys.path[:0] = [{LIB_DIR!r}]; from arenabot.hosted import main; main()"
        return [
            BWRAP,
            "--unshare-user",
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup",
            "--disable-userns",
            "--die-with-parent",
            "--as-pid-1",  # the runner is the sandbox's one task, bubblewrap's child
            "--cap-drop",
            "ALL",
            "--hostname",
            "bot",
            *self.mounts(),
            "--ro-bind",
            code_dir,
            CODE_DIR,
            *(["--proc", "/proc"] if self.proc else []),
            "--dev",
            "/dev",
            "--remount-ro",
            "/dev",  # its /dev/shm would be a second, unbounded, temp dir
            "--size",
            str(TMP_BYTES),
            "--tmpfs",
            "/tmp",
            "--remount-ro",
            "/",
            "--chdir",
            "/tmp",
            "--clearenv",
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "PATH",
            "/usr/bin:/bin",
            "--setenv",
            "PYTHONDONTWRITEBYTECODE",
            "1",
            "--setenv",
            "PYTHONHASHSEED",
            "0",
            *[a for v in ("OPENBLAS", "OMP", "MKL") for a in ("--setenv", f"{v}_NUM_THREADS", "1")],
            "--setenv",
            "LD_LIBRARY_PATH",
            f"{self.prefix()}/lib",  # its libpython, wherever the install's run path says
            "--seccomp",
            str(seccomp_fd),
            self.executable(),
            "-I",
            "-S",
            "-B",
            "-c",
            boot,
            settings,
        ]

    def spawn(self, code_dir: str, stderr: int) -> subprocess.Popen[bytes]:
        """Start a runner for the code in ``code_dir``, its stderr into the file
        ``stderr``; pipes for the protocol on its stdin and stdout."""
        read, write = os.pipe()
        try:
            program = seccomp_program()
            if len(program) > 65536:  # a pipe's buffer: written before bwrap reads it
                raise SandboxUnavailable("the seccomp program is larger than a pipe")
            os.write(write, program)
            os.close(write)
            write = -1
            return subprocess.Popen(
                self.command(code_dir, read),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                pass_fds=(read,),
                start_new_session=True,  # its own process group, no controlling terminal
                close_fds=True,
            )
        finally:
            os.close(read)
            if write >= 0:
                os.close(write)


def _ready(line: bytes) -> bool:
    """Whether a line of the runner's says it is ready."""
    try:
        said = json.loads(line)
    except ValueError:
        return False
    return isinstance(said, dict) and said.get("ready") is True


def probe(sandbox: Sandbox | None = None) -> str | None:
    """None when a hosted bot can run here, else why not, in one line."""
    sandbox = sandbox or Sandbox()
    if shutil.which(BWRAP) is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        seccomp_program()
    except SandboxUnavailable as exc:
        return str(exc)
    with tempfile.TemporaryDirectory() as code, tempfile.TemporaryFile() as log:
        Path(code, "bot.py").write_text("def act(view, legal):\n    return legal[0]\n")
        os.chmod(code, 0o755)
        try:
            process = sandbox.spawn(code, log.fileno())
            out, _ = process.communicate(b"", timeout=30)
        except (OSError, subprocess.TimeoutExpired, SandboxUnavailable) as exc:
            return f"the sandbox did not start: {exc}"
        if any(_ready(line) for line in out.splitlines()):
            return None
        log.seek(0)
        said = log.read().decode("utf-8", "replace").strip().splitlines()
        return "the sandbox did not start: " + (said[-1] if said else f"exit {process.returncode}")


@functools.lru_cache(maxsize=1)
def _chosen() -> tuple[Sandbox | None, str | None]:
    """The sandbox this host can make (with a /proc of its own if it can), or why none."""
    first = Sandbox()
    reason = probe(first)
    if reason is None:
        return first, None
    if "proc" in reason:
        without = Sandbox(proc=False)
        if probe(without) is None:
            return without, None
    return None, reason


def available() -> str | None:
    """None when this host can run hosted bots, else why not (probed once per process)."""
    return _chosen()[1]


def default() -> Sandbox:
    """The sandbox hosted bots run in on this host (``available()`` must be None)."""
    chosen = _chosen()[0]
    if chosen is None:
        raise SandboxUnavailable(_chosen()[1] or "no sandbox")
    return chosen
