"""Escape attempts from inside a hosted bot's sandbox (``arena.hosted.sandbox``), each with
its outcome asserted, and each run once more without the sandbox to show that the attempt
would have worked there (so a test here fails the day the sandbox lets it through).

The attack is the bot's own code: ``act`` runs it and answers the first legal action with
what it found as its memo.  Nothing escapes, and the process (and the match) goes on.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from arena.games import make_policy
from arena.hosted import sandbox as sandboxes
from arena.hosted.client import Cores, HostedClient, default_cores
from arena.hosted.sandbox import Sandbox
from arena.match.referee import PolicyClient, Referee
from tests.support.sandbox import needs_sandbox

PAYLOAD = {
    "match_id": "m",
    "decision_id": "0:0",
    "game": "cactus",
    "seat": 0,
    "view": {},
    "legal_actions": [{"type": "draw"}],
    "deadline_ms": 5000,
}
SECRET = "s3cret-of-the-arena"


class Unsandboxed(Sandbox):
    """The same runner, limits and pipes, without bubblewrap and its filter: what the
    attacks would do on a worker that ran bots as plain processes."""

    def command(self, code_dir: str, seccomp_fd: int) -> list[str]:
        settings = json.dumps({"limits": self.limits.rlimits(), "folder": code_dir})
        return [sys.executable, "-c", "from arenabot.hosted import main; main()", settings]


@pytest.fixture(scope="module")
def cores(tmp_path_factory: pytest.TempPathFactory):
    needs_sandbox()
    cores = Cores(default_cores(), tmp_path_factory.mktemp("cores"))
    yield cores
    cores.close()


def bot_dir(tmp_path: Path, attack: str) -> str:
    code = tmp_path / "code"
    code.mkdir(parents=True)
    (code / "bot.py").write_text(
        "import json, os, sys\n\n" + textwrap.dedent(attack) + "\n\ndef act(view, legal_actions):\n"
        "    try:\n"
        "        found = attack()\n"
        "    except BaseException as exc:\n"
        "        found = type(exc).__name__\n"
        "    return legal_actions[0], json.dumps(found)\n"
    )
    code.chmod(0o755)
    return str(code)


def attempt(tmp_path: Path, cores: Cores, attack: str, sandbox: Sandbox | None = None) -> object:
    """What ``attack()`` returned (or the name of what it raised) in a hosted process."""
    client = HostedClient(
        "attacker", bot_dir(tmp_path, attack), sandbox=sandbox or Sandbox(), cores=cores
    )
    try:
        client.start({"match_id": "m", "game": "cactus", "seat": 0, "players": ["a"]})
        assert client.failure is None, client.failure
        answer = client.act(PAYLOAD)
        return json.loads(answer["memo"])
    finally:
        client.close()


def both(tmp_path: Path, cores: Cores, attack: str) -> tuple[object, object]:
    """The attack's outcome in the sandbox, and without it."""
    inside = attempt(tmp_path / "in", cores, attack)
    outside = attempt(tmp_path / "out", cores, attack, Unsandboxed())
    return inside, outside


@pytest.fixture
def listener() -> int:
    """A port on the host's loopback that accepts connections (the arena's web port)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


def test_no_connection_to_a_loopback_port_of_the_host(tmp_path, cores, listener) -> None:
    inside, outside = both(
        tmp_path,
        cores,
        f"""
        import socket
        def attack():
            socket.create_connection(("127.0.0.1", {listener}), timeout=2).close()
            return "connected"
        """,
    )
    assert outside == "connected"
    assert inside in ("OSError", "PermissionError", "ConnectionRefusedError")


@pytest.mark.parametrize("port", [5432, 6379, 5672], ids=["postgresql", "redis", "rabbitmq"])
def test_no_connection_to_the_arenas_services(tmp_path, cores, port) -> None:
    inside = attempt(
        tmp_path,
        cores,
        f"""
        import socket
        def attack():
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
            return "connected"
        """,
    )
    assert inside != "connected"


def test_no_socket_but_a_unix_one(tmp_path, cores) -> None:
    inside, outside = both(
        tmp_path,
        cores,
        """
        import socket
        def attack():
            made = []
            for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET):
                try:
                    kind = socket.SOCK_RAW if family == socket.AF_PACKET else socket.SOCK_DGRAM
                    socket.socket(family, kind).close()
                    made.append(family.name)
                except OSError:
                    pass
            return made
        """,
    )
    assert "AF_INET" in outside  # the attempt works on a plain process
    assert inside == []


def test_the_arenas_files_are_not_there(tmp_path, cores) -> None:
    data = tmp_path / "arena-data"
    data.mkdir()
    (data / "arena.db").write_text("the arena's database")
    data.chmod(0o755)
    (data / "arena.db").chmod(0o644)
    inside, outside = both(
        tmp_path,
        cores,
        f"""
        def attack():
            return [open({str(data / "arena.db")!r}).read(), sorted(os.listdir({str(data)!r}))]
        """,
    )
    assert outside == ["the arena's database", ["arena.db"]]
    assert inside == "FileNotFoundError"


def test_no_file_of_the_arena_s_install_or_checkout(tmp_path, cores) -> None:
    import arena

    package = str(Path(arena.__file__).resolve().parent)
    inside, outside = both(
        tmp_path,
        cores,
        f"""
        def attack():
            found = []
            for path in ({package!r}, {str(Path.cwd())!r}, "/etc/passwd", "/root", "/home", "/var"):
                if os.path.exists(path):
                    found.append(path)
            try:
                import arena
                found.append("import arena")
            except ImportError:
                pass
            return found
        """,
    )
    assert package in outside
    assert inside == []


def test_the_environment_holds_no_secret(tmp_path, cores, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_SECRET_KEY", SECRET)
    inside, outside = both(
        tmp_path,
        cores,
        """
        def attack():
            found = [dict(os.environ)]
            for path in ("/proc/self/environ", "/proc/1/environ"):
                try:
                    found.append(open(path).read())
                except OSError as exc:
                    found.append(type(exc).__name__)
            return found
        """,
    )
    assert SECRET in json.dumps(outside)
    assert SECRET not in json.dumps(inside)
    assert set(inside[0]) <= {
        "HOME", "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "LD_LIBRARY_PATH",
        "PWD", "LC_CTYPE",  # bubblewrap's --chdir, Python's locale coercion
    }  # fmt: skip


def test_no_other_process_is_seen_or_signalled(tmp_path, cores) -> None:
    me = os.getpid()
    inside, outside = both(
        tmp_path,
        cores,
        f"""
        import signal
        def attack():
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            try:
                environ = open("/proc/{me}/environ").read()
            except OSError as exc:
                environ = type(exc).__name__
            try:
                os.kill({me}, 0)
                signalled = True
            except OSError:
                signalled = False
            return [pids, environ != "" and "Error" not in environ, signalled]
        """,
    )
    assert outside[1:] == [True, True] and me in outside[0]
    assert inside == [[1], False, False]  # itself alone, as pid 1


def test_nothing_is_written_outside_the_private_temp_dir(tmp_path, cores) -> None:
    outside_file = tmp_path / "planted"
    tmp_path.chmod(0o777)
    inside = attempt(
        tmp_path,
        cores,
        f"""
        def attack():
            wrote = []
            for path in ({str(outside_file)!r}, "/bot/planted", "/usr/planted", "/planted",
                         "/dev/shm/planted", "/tmp/mine"):
                try:
                    with open(path, "w") as f:
                        f.write("x")
                    wrote.append(path)
                except OSError:
                    pass
            return wrote
        """,
    )
    assert inside == ["/tmp/mine"]
    assert not outside_file.exists()
    assert not (Path(tmp_path) / "code" / "planted").exists()


def test_the_temp_dir_and_files_are_bounded(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        def attack():
            written = 0
            chunk = b"x" * (1 << 20)
            try:
                for n in range(64):
                    with open(f"/tmp/fill{n}", "wb") as f:
                        for _ in range(64):
                            f.write(chunk)
                            written += len(chunk)
            except OSError as exc:
                return [written, exc.errno]
            return [written, 0]
        """,
    )
    written, error = inside
    assert written <= sandboxes.TMP_BYTES
    assert error in (27, 28)  # EFBIG (the file-size limit), ENOSPC (the tmpfs is full)


def test_no_fork_thread_or_subprocess(tmp_path, cores) -> None:
    inside, outside = both(
        tmp_path,
        cores,
        """
        import subprocess, threading
        def attack():
            made = []
            try:
                pid = os.fork()
                if pid == 0:
                    os._exit(0)
                os.waitpid(pid, 0)
                made.append("fork")
            except OSError:
                pass
            try:
                t = threading.Thread(target=lambda: None)
                t.start()
                t.join()
                made.append("thread")
            except RuntimeError:
                pass
            try:
                subprocess.run(["/bin/true"], check=True)
                made.append("subprocess")
            except (OSError, subprocess.SubprocessError):
                pass
            return made
        """,
    )
    assert outside == ["fork", "thread", "subprocess"]
    assert inside == []


def test_a_fork_bomb_makes_nothing_and_the_bot_goes_on(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        def attack():
            made = 0
            for _ in range(10000):
                try:
                    if os.fork() == 0:
                        while True:
                            os.fork()
                    made += 1
                except OSError:
                    pass
            return made
        """,
    )
    assert inside == 0


def test_a_memory_bomb_is_refused_and_the_bot_goes_on(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        def attack():
            hoard = []
            try:
                while True:
                    hoard.append(bytearray(64 << 20))
            except MemoryError:
                got = len(hoard) * 64
                hoard.clear()
                return got
        """,
    )
    assert isinstance(inside, int)
    assert inside * (1 << 20) <= sandboxes.Limits().memory_bytes


def test_limits_cannot_be_raised_again(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        import resource
        def attack():
            try:
                unlimited = resource.RLIM_INFINITY
                resource.setrlimit(resource.RLIMIT_AS, (unlimited, unlimited))
                return "raised"
            except (ValueError, OSError):
                return resource.getrlimit(resource.RLIMIT_AS)[1]
        """,
    )
    assert inside == sandboxes.Limits().memory_bytes


def test_no_nested_namespace_or_new_session(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        import ctypes
        def attack():
            libc = ctypes.CDLL(None, use_errno=True)
            done = []
            if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
                done.append("unshare")
            if libc.setsid() >= 0:
                done.append("setsid")
            if libc.setpgid(0, 0) == 0:
                done.append("setpgid")
            return done
        """,
    )
    assert inside == []


def match_against_random(tmp_path: Path, cores: Cores, code: str, deadline_ms: int = 300):
    """A two-seat Cactus match of the hosted bot ``code`` (its ``act``) against a house
    random bot; the record and the seconds it took."""
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "bot.py").write_text(textwrap.dedent(code))
    folder.chmod(0o755)
    clients = [
        HostedClient("hosted", str(folder), sandbox=Sandbox(), cores=cores),
        PolicyClient(make_policy("cactus", "random", random.Random(1)), "random"),
    ]
    began = time.monotonic()
    try:
        record = Referee(max_strikes=3, deadline_ms=deadline_ms).run("cactus", clients, seed=7)
    finally:
        for client in clients:
            client.close()
    return record, time.monotonic() - began


def faults_of(record, seat: int) -> list[str]:
    return [d["fault"] for step in record.steps for d in step if d["seat"] == seat and "fault" in d]


def test_a_cpu_spin_past_the_deadline_is_a_timeout_and_the_match_goes_on(tmp_path, cores) -> None:
    record, _ = match_against_random(
        tmp_path,
        cores,
        """
        def act(view, legal_actions):
            while True:
                pass
        """,
    )
    assert faults_of(record, 0)[:3] == ["timeout"] * 3
    assert record.outcome is not None and record.outcome["struck_out"] == [0]
    assert faults_of(record, 1) == []  # and the match ended: the spin was not waited for


def test_gigabytes_of_stderr_are_cut_and_the_match_goes_on(tmp_path, cores) -> None:
    record, _ = match_against_random(
        tmp_path,
        cores,
        """
        import sys
        def act(view, legal_actions):
            line = "x" * 1023 + "\\n"
            try:
                for _ in range(1 << 20):  # a gigabyte
                    sys.stderr.write(line)
                sys.stderr.flush()
            except OSError:
                pass
            return legal_actions[0]
        """,
        deadline_ms=5000,
    )
    assert record.outcome is not None
    assert faults_of(record, 0) == []
    kept = sum(len(e.get("stderr", "")) for e in record.logs[0])
    from arena.match.referee import LOG_CAP

    assert 0 < kept <= LOG_CAP


def test_a_crash_shows_its_exception(tmp_path, cores) -> None:
    record, _ = match_against_random(
        tmp_path,
        cores,
        """
        import os
        calls = 0
        def act(view, legal_actions):
            global calls
            calls += 1
            if calls == 2:
                raise KeyError("no such card")
            if calls == 3:
                os._exit(3)
            return legal_actions[0]
        """,
    )
    faults = [d for step in record.steps for d in step if d["seat"] == 0 and "fault" in d]
    assert faults[0]["fault"] == "error: KeyError"
    assert "no such card" in faults[0]["cause"]["detail"]
    assert faults[1]["fault"] == "crashed" and "exit status 3" in faults[1]["cause"]["detail"]
    logged = "".join(e.get("stderr", "") for e in record.logs[0])
    assert "Traceback" in logged and "KeyError: 'no such card'" in logged


def test_two_hosted_decisions_never_share_a_core(tmp_path) -> None:
    """A host with one hosted core: of two seats deciding at once, the second waits for
    the first to finish before its clock starts, so each measures its own work."""
    one = Cores([default_cores()[0]], tmp_path / "cores")
    code = """
    import time
    def act(view, legal_actions):
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
        return legal_actions[0]
    """
    folders = []
    for n in range(2):
        folder = tmp_path / f"bot{n}"
        folder.mkdir()
        (folder / "bot.py").write_text(textwrap.dedent(code))
        folder.chmod(0o755)
        folders.append(str(folder))
    clients = [
        HostedClient(f"b{n}", f, sandbox=Sandbox(), cores=one) for n, f in enumerate(folders)
    ]
    try:
        for client in clients:
            client.start({})
        from arena.match.exchanges import settle

        exchanges = [
            c.begin_act({**PAYLOAD, "decision_id": f"0:{n}"}) for n, c in enumerate(clients)
        ]
        settle(exchanges)
        spans = sorted((x.started, x.finished) for x in exchanges)
        assert all(x.result()["action"] == {"type": "draw"} for x in exchanges)
        assert spans[0][1] <= spans[1][0]  # one after the other: the second's clock
        # started when the first gave the core back, not when it was asked
    finally:
        for client in clients:
            client.close()
        one.close()


def test_a_bot_past_its_deadline_is_stopped_until_its_next_decision(tmp_path, cores) -> None:
    """A decision that timed out leaves the bot computing: it is stopped, so that it
    does its overrun on no one's time (its CPU time does not move until it is asked
    again)."""
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "bot.py").write_text("def act(view, legal_actions):\n    while True:\n        pass\n")
    folder.chmod(0o755)
    client = HostedClient("b", str(folder), sandbox=Sandbox(), cores=cores)
    try:
        client.start({})
        exchange = client.begin_act({**PAYLOAD, "deadline_ms": 100})
        from arena.match.exchanges import settle

        settle([exchange])
        with pytest.raises(Exception, match="timeout"):
            exchange.result()
        runner = client._pids()[-1]

        def cpu_ticks() -> int:
            fields = Path(f"/proc/{runner}/stat").read_text().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])  # utime + stime

        def state() -> str:
            return Path(f"/proc/{runner}/stat").read_text().rsplit(")", 1)[1].split()[0]

        waited = time.monotonic() + 2  # a signal to a process running on another core
        while state() != "T" and time.monotonic() < waited:  # lands a moment later
            time.sleep(0.001)
        before = cpu_ticks()
        threading.Event().wait(0.3)
        assert state() == "T" and cpu_ticks() == before
    finally:
        client.close()


def test_where_no_proc_can_be_mounted_the_bot_has_none(tmp_path, cores) -> None:
    """A container that masks parts of its /proc refuses a new one: the sandbox then
    gives the bot no /proc at all, and the bot still plays."""
    inside = attempt(
        tmp_path,
        cores,
        """
        def attack():
            return [os.path.exists("/proc"), os.path.exists("/proc/1/environ")]
        """,
        Sandbox(proc=False),
    )
    assert inside == [False, False]


def test_a_module_named_like_the_runners_own_does_not_lift_the_limits(tmp_path, cores) -> None:
    """A ``resource.py`` beside ``bot.py`` whose ``setrlimit`` does nothing: the runner
    has set the limits with the real one before the bot's folder is on the path."""
    code = Path(bot_dir(tmp_path, '''
        def attack():
            limits = open("/proc/self/limits").read().splitlines()
            return [line.split()[4] for line in limits if line.startswith("Max address space")]
        '''))  # fmt: skip
    (code / "resource.py").write_text(
        "RLIMIT_AS = RLIMIT_FSIZE = RLIMIT_NOFILE = RLIMIT_CPU = RLIMIT_CORE = 0\n"
        "def setrlimit(*args):\n    pass\n"
    )
    (code / "resource.py").chmod(0o644)
    client = HostedClient("shadow", str(code), sandbox=Sandbox(), cores=cores)
    try:
        client.start({})
        assert client.failure is None, client.failure
        found = json.loads(client.act(PAYLOAD)["memo"])
    finally:
        client.close()
    assert found == [str(sandboxes.Limits().memory_bytes)]


def test_the_bot_holds_no_descriptor_of_the_worker(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        def attack():
            found = {}
            for fd in sorted(int(f) for f in os.listdir("/proc/self/fd")):
                try:
                    found[fd] = os.readlink(f"/proc/self/fd/{fd}")
                except OSError:
                    pass
            return found
        """,
    )
    targets = sorted(set(inside.values()))
    # its pipes to the worker, its log file (deleted, the worker's), /dev/null and the
    # folder listing itself: no socket, no file of the arena
    assert all(
        t.startswith(("pipe:", "/dev/null", "/tmp/#", "/proc/")) or "(deleted)" in t
        for t in targets
    ), targets


def test_numpy_and_the_sdk_are_there(tmp_path, cores) -> None:
    inside = attempt(
        tmp_path,
        cores,
        """
        import numpy as np
        from arenabot.views import cactus
        def attack():
            weights = np.arange(12.0).reshape(3, 4)
            trace = float((weights @ weights.T).trace())
            return [float(weights.sum()), trace, callable(cactus.card_value)]
        """,
    )
    assert inside == [66.0, 506.0, True]


def test_a_worker_killed_mid_match_leaves_no_bot_process_behind(tmp_path) -> None:
    """``--die-with-parent``: a worker that dies (SIGKILL, out of memory) takes its
    sandboxes with it, stopped ones too."""
    import signal
    import subprocess

    folder = bot_dir(tmp_path, "def attack():\n    return 1\n")
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from arena.hosted.client import Cores, HostedClient, default_cores
        from arena.hosted.sandbox import Sandbox
        client = HostedClient("b", {folder!r}, sandbox=Sandbox(),
                              cores=Cores(default_cores(), Path({str(tmp_path / "cores")!r})))
        client.start({{}})
        print(" ".join(map(str, client._pids())), flush=True)
        time.sleep(60)
        """
    )
    worker = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in worker.stdout.readline().split()]
        assert len(pids) == 2 and all(Path(f"/proc/{p}").exists() for p in pids)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.05)
        assert not any(_alive(p) for p in pids)
    finally:
        worker.kill()
        worker.stdout.close()


def _alive(pid: int) -> bool:
    """Running or stopped, not a zombie waiting for its parent."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class Broken(Sandbox):
    """A sandbox that cannot be made here (bubblewrap refused its namespaces)."""

    def command(self, code_dir: str, seccomp_fd: int) -> list[str]:
        return [
            sys.executable,
            "-c",
            "import sys; sys.exit('bwrap: No permissions to create new namespace')",
        ]


def test_a_sandbox_that_cannot_be_made_is_the_arenas_failure_not_the_bots(tmp_path, cores) -> None:
    """Nothing of the bot's ran: the match ends unrecorded (``ArenaError``), to be played
    again, and the bot is charged nothing."""
    from arena.match.faults import ArenaError

    folder = bot_dir(tmp_path, "def attack():\n    return 1\n")
    clients = [
        HostedClient("hosted", folder, sandbox=Broken(), cores=cores),
        PolicyClient(make_policy("cactus", "random", random.Random(1)), "random"),
    ]
    try:
        with pytest.raises(ArenaError, match="No permissions to create new namespace"):
            Referee().run("cactus", clients, seed=7)
    finally:
        for client in clients:
            client.close()


def test_a_bot_that_dies_as_it_loads_is_its_own_crash(tmp_path, cores) -> None:
    record, _ = match_against_random(
        tmp_path,
        cores,
        """
        import os
        os._exit(4)
        def act(view, legal_actions):
            return legal_actions[0]
        """,
    )
    faults = [d for step in record.steps for d in step if d["seat"] == 0 and "fault" in d]
    assert faults[0]["fault"] == "crashed" and "could not start" in faults[0]["cause"]["detail"]
    assert record.outcome["forfeited"] == [0]


def test_a_decision_waiting_for_a_core_is_woken_when_another_match_gives_it_back(
    tmp_path, monkeypatch
) -> None:
    """Two matches (threads) of one worker, one hosted core: the second decision is woken
    as the first gives the core back, not by its next look (made a minute here)."""
    from arena.hosted import client as hosted_client
    from arena.match.exchanges import settle

    monkeypatch.setattr(hosted_client, "CORE_LOOK", 60.0)
    one = Cores([default_cores()[0]], tmp_path / "cores")
    code = "import time\ndef act(view, legal):\n    time.sleep(0.3)\n    return legal[0]\n"
    clients = []
    for n in range(2):
        folder = tmp_path / f"bot{n}"
        folder.mkdir()
        (folder / "bot.py").write_text(code)
        folder.chmod(0o755)
        clients.append(HostedClient(f"b{n}", str(folder), sandbox=Sandbox(), cores=one))
    try:
        for client in clients:
            client.start({})
        exchanges = [
            c.begin_act({**PAYLOAD, "decision_id": f"0:{n}"}) for n, c in enumerate(clients)
        ]
        first = threading.Thread(target=settle, args=([exchanges[0]],))
        first.start()
        while exchanges[0].waiting:  # the first holds the core
            time.sleep(0.001)
        second = threading.Thread(target=settle, args=([exchanges[1]],))
        second.start()
        first.join(30)
        second.join(30)
        assert not second.is_alive(), "the second decision was never woken"
        assert all(x.result()["action"] == {"type": "draw"} for x in exchanges)
        assert exchanges[0].finished <= exchanges[1].started
    finally:
        for client in clients:
            client.close()
        one.close()
