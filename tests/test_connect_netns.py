"""What crosses a network when a bot connects out: the sample bot runs in a network
namespace of its own, a laptop behind NAT that accepts no inbound connection (a veth
pair to this machine, and a firewall in the namespace dropping every packet that opens
a connection to it), and plays a whole tournament against webhook bots, in every lane.

The web server listens on this machine's end of the veth pair; the workers and the
webhook bots stay on loopback.  It needs root, ``ip`` and ``iptables`` (or ``nft``): on
CI (``CI`` set) a missing one fails the test; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any, NoReturn

import pytest

from arena.app import create_app
from arena.cli.processes import make_web_server
from sample_bots.policy_bot import PolicyBot
from tests.support.connect import connect_bot, start_tournament, webhook_bot
from tests.support.lanes import Lane, lane, wait_for

ROOT = Path(__file__).resolve().parents[1]
SUBNETS = IPv4Network("10.231.0.0/16")  # each run takes a /30 of it
DROPPED = 1.5  # seconds a connection attempt waits: a dropped SYN is never answered


def _unavailable(reason: str) -> NoReturn:
    reason = f"{reason}: the network namespace test needs it"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True)


@dataclass
class Laptop:
    """A network namespace joined to this machine by a veth pair: ``host`` is this
    machine's address on it, ``address`` the namespace's."""

    name: str
    host: str
    address: str
    firewall: str  # "iptables" or "nft"

    def command(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def refuse_inbound(self) -> None:
        """INPUT drops everything but loopback and the answers to its own connections."""
        if self.firewall == "iptables":
            iptables = self.command("iptables", "-w")
            _run(*iptables, "-A", "INPUT", "-i", "lo", "-j", "ACCEPT")
            _run(
                *iptables,
                "-A",
                "INPUT",
                "-m",
                "conntrack",
                "--ctstate",
                "ESTABLISHED,RELATED",
                "-j",
                "ACCEPT",
            )
            _run(*iptables, "-P", "INPUT", "DROP")
        else:
            rules = (
                "table inet laptop {\n"
                "  chain input {\n"
                "    type filter hook input priority 0; policy drop;\n"
                "    iif lo accept\n"
                "    ct state established,related accept\n"
                "  }\n"
                "}\n"
            )
            subprocess.run(
                self.command("nft", "-f", "-"),
                input=rules.encode(),
                check=True,
                capture_output=True,
            )


def _firewall() -> str | None:
    for name in ("iptables", "nft"):
        if shutil.which(name):
            return name
    return None


def _free_subnet() -> IPv4Network:
    """A /30 of ``SUBNETS`` no address of this machine is in (runs side by side each
    pick one at random)."""
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    blocks = list(SUBNETS.subnets(new_prefix=30))
    for block in random.sample(blocks, 64):
        if not any(str(ip) in used for ip in block):
            return block
    pytest.fail(f"no free /30 in {SUBNETS}")


@contextlib.contextmanager
def laptop() -> Iterator[Laptop]:
    """A namespace and its veth pair, names unique to this run, removed at the end."""
    if os.geteuid() != 0:
        _unavailable("root")
    if shutil.which("ip") is None:
        _unavailable("the ip program (Debian's iproute2)")
    firewall = _firewall()
    if firewall is None:
        _unavailable("the iptables or nft program (Debian's iptables)")
    tag = uuid.uuid4().hex[:8]
    name, outside, inside = f"arena-laptop-{tag}", f"arh{tag}", f"arn{tag}"
    subnet = _free_subnet()
    host, address = (str(ip) for ip in subnet.hosts())
    try:
        made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
        if made.returncode != 0:
            _unavailable(f"ip netns add ({made.stderr.strip()})")
        _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
        _run("ip", "link", "set", inside, "netns", name)
        _run("ip", "addr", "add", f"{host}/30", "dev", outside)
        _run("ip", "link", "set", outside, "up")
        _run("ip", "-n", name, "addr", "add", f"{address}/30", "dev", inside)
        _run("ip", "-n", name, "link", "set", inside, "up")
        _run("ip", "-n", name, "link", "set", "lo", "up")
        yield Laptop(name, host, address, firewall)
    finally:
        subprocess.run(["ip", "link", "del", outside], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def connects(address: str, port: int) -> bool:
    """Whether a TCP connection from this machine to address:port is accepted; a refusal
    (an answer: a closed port) is an error, so only a silent drop says no."""
    try:
        socket.create_connection((address, port), timeout=DROPPED).close()
        return True
    except TimeoutError:
        return False


def tcp_table(pid: int) -> list[tuple[int, str, str]]:
    """(local port, remote IPv4 address, state) of every TCP socket in the process's
    network namespace (IPv6 ones with an empty remote address)."""
    rows = []
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                remote = fields[2].split(":")[0]
                ipv4 = (
                    socket.inet_ntoa(struct.pack("<I", int(remote, 16))) if table == "tcp" else ""
                )
                rows.append((int(fields[1].rsplit(":", 1)[1], 16), ipv4, fields[3]))
    return rows


@contextlib.contextmanager
def listener_inside(where: Laptop, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A program in the namespace that listens on its address and accepts everything."""
    code = (
        "import socket, sys\n"
        f"s = socket.create_server(('{where.address}', {port}))\n"
        "print('ready', flush=True)\n"
        "while True: s.accept()[0].close()\n"
    )
    proc = subprocess.Popen(where.command(sys.executable, "-c", code), stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        yield proc
    finally:
        proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=pytest.mark.xdist_group(f"connect-netns-{name}"))
        for name in ("embedded", "services", "rabbitmq")
    ],
)
def server(request, tmp_path_factory) -> Iterator[Lane]:
    with lane(request.param, tmp_path_factory.mktemp(request.param), workers=1) as the_lane:
        yield the_lane


@pytest.fixture(scope="module")
def behind_nat(server: Lane) -> Iterator[Laptop]:
    """The namespace, first shown reachable from this machine, then closed to inbound
    connections: the firewall is what stops them."""
    with laptop() as the_laptop:
        port = random.randrange(20000, 30000)
        with listener_inside(the_laptop, port):
            assert connects(the_laptop.address, port)  # open without the firewall
            the_laptop.refuse_inbound()
            assert not connects(the_laptop.address, port)  # the same listener, dropped
        yield the_laptop


@pytest.fixture(scope="module")
def web(server: Lane, behind_nat: Laptop) -> Iterator[tuple[str, Any]]:
    """The web server on this machine's end of the veth pair: its address and a test
    client of the same app."""
    app = create_app(server.config)
    httpd = make_web_server(behind_nat.host, 0, app)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://{behind_nat.host}:{httpd.port}", app.test_client()
    httpd.shutdown()
    httpd.server_close()
    app.extensions["arena.db"].dispose()


def connect_bot_inside(
    where: Laptop, url: str, bot_id: int, secret: str
) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    """The sample bot started in the namespace as a student starts it on a laptop."""
    return connect_bot(url, bot_id, secret, wrap=where.command)


def test_a_bot_behind_nat_plays_a_tournament_against_webhook_bots(
    server: Lane, behind_nat: Laptop, web
) -> None:
    url, api = web
    answer = api.post(
        "/api/bots",
        json={
            "name": f"{server.name}-behind-nat",
            "connect": True,
            "owner": "student",
            "games": ["cactus"],
        },
    )
    assert answer.status_code == 201, answer.json
    laptop_id, secret = answer.json["id"], answer.json["signing_secret"]
    with ExitStack() as stack:
        ids = [laptop_id]
        for i in range(2):
            bot = PolicyBot("cactus", "random")
            ids.append(webhook_bot(stack, api, f"{server.name}-nat-hook-{i}", bot))
        student = stack.enter_context(connect_bot_inside(behind_nat, url, laptop_id, secret))

        def connected() -> bool:
            presence = api.get(f"/api/bots/{laptop_id}").json.get("connection") or {}
            return bool(presence.get("connected"))

        wait_for(connected, timeout=30, what="the session of the bot behind NAT")
        # /proc/<pid>/net is the table of the process's namespace: nothing in it listens,
        # and the bot's own connections go out to this machine's end of the veth pair
        sockets = tcp_table(student.pid)
        assert [port for port, _, state in sockets if state == "0A"] == []
        established = [(port, remote) for port, remote, state in sockets if state == "01"]
        assert established, sockets
        assert {remote for _, remote in established} == {behind_nat.host}
        for port in [*(port for port, _ in established[:2]), 80]:  # nothing gets in
            assert not connects(behind_nat.address, port), port
        tid = start_tournament(api, f"{server.name}-behind-nat", ids, seed=5, games=2)

        def finished() -> bool:
            return api.get(f"/api/tournaments/{tid}").json["status"] == "finished"

        wait_for(finished, timeout=240, what="the tournament with a bot behind NAT")
        matches = api.get(f"/api/matches?tournament_id={tid}&bot_id={laptop_id}").json
        played = matches["items"] if isinstance(matches, dict) else matches
        assert len(played) == 4  # two games against each of the two webhook bots
        bot = api.get(f"/api/bots/{laptop_id}").json
        assert bot["recent_faults"] == [], bot["recent_faults"]
        student.terminate()  # Ctrl-C's signal: it drains and leaves
        assert student.wait(timeout=30) == 0, student.stdout.read().decode()[-2000:]
