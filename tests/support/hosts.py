"""Several hosts on one machine, for the tests and benchmarks that run the arena across
them: network namespaces joined by veth pairs to a bridge (a switch) in this machine's
namespace, and what runs on them.

- ``network(names)``: one namespace per host on a /24 of its own, this machine at ``.1``
  on the bridge (the test process reaches every host; no host reaches the internet).
- ``Host.cut(peer, port)``: a real partition: packets dropped on arrival at both ends
  (iptables INPUT rules in each namespace), so nothing, not even a FIN or RST, crosses
  and neither side's sends fail; ``Host.heal()`` drops the rules.
- ``postgres(host, folder)``: a PostgreSQL of its own (initdb as ``postgres``, listening
  on the host's address), whose slow statements it logs, and ``RESULTS``: a deferred
  trigger noting at commit time who recorded each result (``recorded_results``).
- ``redis(host, folder)``: a redis-server of its own, the broker.
- ``python -m tests.support.hosts relay DELAY LISTEN=TARGET ...``: a TCP relay adding
  DELAY seconds each way (this kernel has no netem); ``... bots N THINK``: N policy bots
  of the SDK on loopback, each reached through such a relay.

Everything made is removed when its context ends.  It needs root, ``ip``, ``iptables``,
``redis-server`` and PostgreSQL's server programs; ``unavailable`` says what is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUBNETS = IPv4Network("10.232.0.0/16")  # each run takes a /24 of it
PG_PORT = 5432
REDIS_PORT = 6379
DELAY = 0.025  # seconds the bots' relay adds each way


def missing() -> str | None:
    """What this machine lacks to build the hosts, or None."""
    if os.geteuid() != 0:
        return "root"
    for program in ("ip", "iptables", "redis-server", "runuser"):
        if shutil.which(program) is None:
            return f"the {program} program"
    if not postgres_bin():
        return "PostgreSQL's server programs (initdb, pg_ctl)"
    return None


def postgres_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return str(Path(found[-1]).parent) if found else None


def _run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


def python_env(**extra: str) -> dict[str, str]:
    """This interpreter's environment with the repository and the SDK importable."""
    path = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path.rstrip(os.pathsep), **extra}


@dataclass
class Host:
    """A network namespace: ``address`` on the bridge, ``link`` its end of the veth."""

    name: str
    namespace: str
    address: str
    link: str
    network: Network | None = None
    cuts: list[tuple[str, list[str]]] = field(default_factory=list)

    def command(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.namespace, *argv]

    def start(
        self, argv: list[str], log: Path | None = None, **popen: object
    ) -> subprocess.Popen[bytes]:
        """A process on this host (its output appended to ``log``, if given)."""
        if log is not None:
            out = open(log, "ab")  # noqa: SIM115 - the process holds it
            popen.setdefault("stdout", out)
            popen.setdefault("stderr", subprocess.STDOUT)
            proc = subprocess.Popen(self.command(*argv), cwd=ROOT, **popen)  # type: ignore[call-overload]
            out.close()
            return proc
        return subprocess.Popen(self.command(*argv), cwd=ROOT, **popen)  # type: ignore[call-overload]

    def _drop(self, namespace_host: Host, rule: list[str]) -> None:
        _run(*namespace_host.command("iptables", "-w", "-I", "INPUT", *rule, "-j", "DROP"))
        self.cuts.append((namespace_host.namespace, rule))

    def cut(self, peer: Host | None = None, port: int | None = None) -> None:
        """Drop every packet between this host and ``peer`` (None: every other host and
        this machine), or only those of the TCP service on ``peer``'s ``port``."""
        assert self.network is not None
        if peer is None:
            self._drop(self, ["-i", self.link])
            for other in self.network.hosts.values():
                if other is not self:
                    self._drop(other, ["-s", self.address])
            return
        if port is None:
            self._drop(self, ["-s", peer.address])
            self._drop(peer, ["-s", self.address])
            return
        self._drop(self, ["-s", peer.address, "-p", "tcp", "--sport", str(port)])
        self._drop(peer, ["-s", self.address, "-p", "tcp", "--dport", str(port)])

    def heal(self) -> None:
        """Remove every rule ``cut`` added."""
        while self.cuts:
            namespace, rule = self.cuts.pop()
            _run("ip", "netns", "exec", namespace, "iptables", "-w", "-D", "INPUT", *rule,
                 "-j", "DROP")  # fmt: skip


@dataclass
class Network:
    subnet: IPv4Network
    bridge: str
    gateway: str  # this machine's address on the bridge
    hosts: dict[str, Host]

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]


def _free_subnet() -> IPv4Network:
    used = _run("ip", "-4", "-o", "addr")
    blocks = list(SUBNETS.subnets(new_prefix=24))
    for block in random.sample(blocks, 64):
        if str(next(block.hosts())) + "/" not in used:
            return block
    raise RuntimeError(f"no free /24 in {SUBNETS}")


@contextlib.contextmanager
def network(names: list[str]) -> Iterator[Network]:
    """A bridge and one namespace per name, joined by veth pairs; removed at the end."""
    tag = uuid.uuid4().hex[:6]
    subnet = _free_subnet()
    addresses = [str(ip) for ip in subnet.hosts()]
    bridge = f"arb{tag}"
    made: list[str] = []
    links: list[str] = []
    try:
        _run("ip", "link", "add", bridge, "type", "bridge")
        _run("ip", "addr", "add", f"{addresses[0]}/24", "dev", bridge)
        _run("ip", "link", "set", bridge, "up")
        hosts = {}
        for i, name in enumerate(names, start=1):
            namespace, outside, inside = f"arena-{name}-{tag}", f"ar{tag}{i}", f"ari{tag}{i}"
            _run("ip", "netns", "add", namespace)
            made.append(namespace)
            _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            links.append(outside)
            _run("ip", "link", "set", inside, "netns", namespace)
            _run("ip", "link", "set", outside, "master", bridge)
            _run("ip", "link", "set", outside, "up")
            _run("ip", "-n", namespace, "addr", "add", f"{addresses[i]}/24", "dev", inside)
            _run("ip", "-n", namespace, "link", "set", inside, "up")
            _run("ip", "-n", namespace, "link", "set", "lo", "up")
            hosts[name] = Host(name, namespace, addresses[i], inside)
        net = Network(subnet, bridge, addresses[0], hosts)
        for host in hosts.values():
            host.network = net
        yield net
    finally:
        for link in links:
            subprocess.run(["ip", "link", "del", link], capture_output=True)
        for namespace in made:
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)


def wait_listening(address: str, port: int, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} is not listening on {address}:{port}") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Terminate a process (resumed first, should it be stopped), kill it if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGCONT)
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- the database host ------------------------------------------------------------------------
# Who recorded each result, noted as its transaction commits (a deferred trigger): the
# client address (which host), the lease it held, when its transaction began (it locks
# the match's row first) and the commit time; a result whose lease had lapsed before its
# commit was recorded without it.
RESULTS = """
CREATE TABLE recorded_results (
    match_id integer NOT NULL,
    attempts integer NOT NULL,
    owner text,
    lease_expires_at timestamptz,
    client inet,
    began_at timestamptz NOT NULL,
    committed_at timestamptz NOT NULL
);
CREATE FUNCTION note_result() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO recorded_results VALUES (NEW.id, NEW.attempts, OLD.lease_owner,
        OLD.lease_expires_at, inet_client_addr(), now(), clock_timestamp());
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER note_result AFTER UPDATE ON matches
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.status = 'finished' AND OLD.status <> 'finished')
    EXECUTE FUNCTION note_result();
"""


@dataclass
class Postgres:
    host: Host
    folder: Path
    url: str  # SQLAlchemy's
    dsn: str  # psycopg's
    log: Path


@contextlib.contextmanager
def postgres(host: Host, slow_ms: int = 1000) -> Iterator[Postgres]:
    """A PostgreSQL cluster of its own on ``host`` (trust authentication; the ``arena``
    database), logging each statement that takes ``slow_ms`` or more with its client."""
    binaries = postgres_bin()
    assert binaries is not None
    # the server runs as postgres: a folder it owns, outside pytest's private one
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    shutil.chown(folder, "postgres", "postgres")
    data, log = folder / "data", folder / "server.log"
    as_postgres = ["runuser", "-u", "postgres", "--"]
    _run(*as_postgres, f"{binaries}/initdb", "-D", str(data), "-U", "postgres",
         "--auth=trust", "--no-sync", "-E", "UTF8")  # fmt: skip
    with open(data / "pg_hba.conf", "a") as hba:
        hba.write(f"host all all {host.network.subnet if host.network else '0.0.0.0/0'} trust\n")
    options = (
        f"-c listen_addresses={host.address} -c port={PG_PORT} -k {folder} "
        "-c fsync=off -c full_page_writes=off -c max_connections=200 "
        f"-c log_min_duration_statement={slow_ms} "
        "-c log_line_prefix='%m [%p] %h %a: ' -c logging_collector=off"
    )
    _run(*host.command(*as_postgres, f"{binaries}/pg_ctl", "-D", str(data), "-o", options,
                       "-l", str(log), "-w", "-t", "60", "start"))  # fmt: skip
    try:
        dsn = f"host={host.address} port={PG_PORT} user=postgres dbname=postgres"
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE arena")
        url = f"postgresql+psycopg://postgres@{host.address}:{PG_PORT}/arena"
        yield Postgres(host, folder, url, dsn.replace("dbname=postgres", "dbname=arena"), log)
    finally:
        subprocess.run(
            host.command(*as_postgres, f"{binaries}/pg_ctl", "-D", str(data), "-m",
                         "immediate", "stop"),
            capture_output=True,
        )  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


def note_results(pg: Postgres) -> None:
    """Add ``recorded_results`` and its trigger (after the arena's migrations)."""
    import psycopg

    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute(RESULTS)


@contextlib.contextmanager
def redis(host: Host, folder: Path) -> Iterator[str]:
    """A redis-server of its own on ``host``, keeping nothing on disk; its URL."""
    proc = host.start(
        ["redis-server", "--bind", host.address, "--port", str(REDIS_PORT), "--save", "",
         "--appendonly", "no", "--dir", str(folder), "--protected-mode", "no"],
        log=folder / "redis.log",
    )  # fmt: skip
    try:
        wait_listening(host.address, REDIS_PORT, 20, "redis-server")
        yield f"redis://{host.address}:{REDIS_PORT}/0"
    finally:
        stop(proc)


# -- the bots' host ---------------------------------------------------------------------------
async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy ``reader`` to ``writer``, each chunk ``delay`` seconds after it arrived (a
    latency, not a bandwidth limit: chunks keep their order and do not wait on each other)."""
    chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    async def send() -> None:
        while True:
            due, chunk = await chunks.get()
            if not chunk:
                break
            await asyncio.sleep(max(0.0, due - loop.time()))
            writer.write(chunk)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()

    sender = asyncio.create_task(send())
    try:
        while True:
            chunk = await reader.read(65536)
            chunks.put_nowait((loop.time() + delay, chunk))
            if not chunk:
                break
        await sender
    except OSError:
        sender.cancel()
    finally:
        writer.close()


async def _relay(
    routes: list[tuple[tuple[str, int], tuple[str, int]]], delay: float, announce: bool = False
) -> None:
    async def serve(target: tuple[str, int], client_r, client_w) -> None:  # type: ignore[no-untyped-def]
        try:
            server_r, server_w = await asyncio.open_connection(*target)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(
            _pipe(client_r, server_w, delay), _pipe(server_r, client_w, delay),
            return_exceptions=True,
        )  # fmt: skip

    servers = []
    for listen, target in routes:
        servers.append(
            await asyncio.start_server(
                lambda r, w, target=target: serve(target, r, w), *listen, reuse_address=True
            )
        )
    if announce:
        print("ready", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


def _serve_bots(count: int, think: float, public: str, delay: float) -> None:
    """``count`` Cactus policy bots on loopback and a relay to each on ``public``; prints
    their public ports as JSON, then reads ``index secret`` lines: each bot checks
    signatures with its secret from then on."""
    import threading

    from arenabot import make_server

    from sample_bots.policy_bot import PolicyBot

    class ThinkingBot(PolicyBot):
        def on_act(self, request):  # type: ignore[no-untyped-def]
            time.sleep(think)
            return super().on_act(request)

    servers = []
    for _ in range(count):
        server = make_server(ThinkingBot("cactus", "random"), "127.0.0.1", 0, secret="unset")
        # a bot that declares no capacity (as most bots not written with the SDK): the
        # arena does not pin it to one worker process, so both workers play its matches
        server.info = server.bot.info  # type: ignore[method-assign]
        server.serve_in_background()
        servers.append(server)
    routes, ports = [], []
    for server in servers:
        with socket.socket() as s:
            s.bind((public, 0))
            port = s.getsockname()[1]
        routes.append(((public, port), ("127.0.0.1", server.server_address[1])))
        ports.append(port)
    threading.Thread(target=asyncio.run, args=(_relay(routes, delay),), daemon=True).start()
    for port in ports:
        wait_listening(public, port, 20, "the relay")
    print(json.dumps(ports), flush=True)
    for line in sys.stdin:
        index, secret = line.split()
        servers[int(index)].secret = secret
        print("ok", flush=True)


@dataclass
class Bots:
    proc: subprocess.Popen[bytes]
    urls: list[str]

    def set_secret(self, index: int, secret: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{index} {secret}\n".encode())
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == b"ok"


@contextlib.contextmanager
def bots(host: Host, count: int, think: float, log: Path, delay: float = DELAY) -> Iterator[Bots]:
    """``count`` bots on ``host``, each behind a relay adding ``delay`` each way."""
    with open(log, "ab") as errors:  # the process has its own copy
        proc = subprocess.Popen(
            host.command(sys.executable, "-m", "tests.support.hosts", "bots", str(count),
                         str(think), host.address, str(delay)),
            cwd=ROOT, env=python_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=errors,
        )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the bots did not start: see {log}")
        ports = json.loads(line)
        yield Bots(proc, [f"http://{host.address}:{port}" for port in ports])
    finally:
        stop(proc)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def main(argv: list[str]) -> None:
    if argv[0] == "relay":
        delay = float(argv[1])
        routes = []
        for spec in argv[2:]:
            listen, target = spec.split("=")
            host, port = listen.rsplit(":", 1)
            to_host, to_port = target.rsplit(":", 1)
            routes.append(((host, int(port)), (to_host, int(to_port))))
        asyncio.run(_relay(routes, delay, announce=True))
    elif argv[0] == "bots":
        _serve_bots(int(argv[1]), float(argv[2]), argv[3], float(argv[4]))
    else:
        raise SystemExit(f"unknown command {argv[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
