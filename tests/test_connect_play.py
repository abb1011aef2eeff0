"""A bot that connects out plays a whole tournament against webhook bots, in every lane
with real processes: the web server (in this process, over HTTP on loopback), real
``arena worker`` processes, and the sample bot started as a contestant would start it on
a laptop, ``python -m sample_bots.cactus_random --connect URL --bot-id ID --secret S``,
which opens no listening socket."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.cli.processes import stop_processes
from arena.relay import sessions
from arena.relay.internal import SIGNATURE, TIMESTAMP, signature
from sample_bots.policy_bot import PolicyBot
from tests.support.connect import connect_bot, start_tournament, webhook_bot
from tests.support.image import image_web, listening_ports, workers_of
from tests.support.lanes import Lane, free_port, lane, wait_for, web_server

ROOT = Path(__file__).resolve().parents[1]


class SlowBot(PolicyBot):
    """A webhook bot that thinks a little, so that a match lasts some seconds."""

    asked: list[int] = []

    def on_act(self, request: dict[str, Any]) -> Any:
        SlowBot.asked.append(request["seat"])
        time.sleep(0.03)
        return super().on_act(request)


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=pytest.mark.xdist_group(f"connect-{name}"))
        for name in ("embedded", "services", "rabbitmq")
    ],
)
def server(request, tmp_path_factory) -> Iterator[Lane]:
    with lane(request.param, tmp_path_factory.mktemp(request.param), workers=1) as the_lane:
        yield the_lane


@pytest.fixture(scope="module")
def web(server: Lane) -> Iterator[tuple[str, Any]]:
    """The web server, over HTTP: its address and a test client of the same app."""
    with web_server(server.config) as served:
        yield served


def register_laptop(api: Any, name: str) -> dict[str, Any]:
    """A Cactus bot that connects out, registered as a student would: its registration."""
    answer = api.post(
        "/api/bots",
        json={"name": name, "connect": True, "owner": "student", "games": ["cactus"]},
    )
    assert answer.status_code == 201, answer.json
    return answer.json


def test_a_connect_bot_plays_a_tournament_against_webhook_bots(server: Lane, web) -> None:
    url, api = web
    registered = register_laptop(api, f"{server.name}-laptop")
    laptop, secret = registered["id"], registered["signing_secret"]
    assert "endpoint" not in registered or registered["endpoint"] is None
    with ExitStack() as stack:
        ids = [laptop]
        for i in range(2):
            bot = PolicyBot("cactus", "random")
            ids.append(webhook_bot(stack, api, f"{server.name}-hook-{i}", bot))
        student = stack.enter_context(connect_bot(url, laptop, secret))

        def connected() -> bool:
            presence = api.get(f"/api/bots/{laptop}").json.get("connection") or {}
            return bool(presence.get("connected"))

        wait_for(connected, timeout=30, what="the connect bot's session")
        assert listening_ports(student.pid) == set()  # it only dials out
        presence = api.get(f"/api/bots/{laptop}").json["connection"]
        assert presence["sdk"].startswith("arenabot ") and presence["capacity"] >= 1
        tid = start_tournament(api, f"{server.name}-connect", ids, seed=5, games=2)

        def finished() -> bool:
            return api.get(f"/api/tournaments/{tid}").json["status"] == "finished"

        wait_for(finished, timeout=240, what="the tournament with a connect bot")
        matches = api.get(f"/api/matches?tournament_id={tid}&bot_id={laptop}").json
        played = matches["items"] if isinstance(matches, dict) else matches
        assert len(played) == 4  # two games against each of the two webhook bots
        bot = api.get(f"/api/bots/{laptop}").json
        assert bot["recent_faults"] == []
        student.terminate()  # Ctrl-C's signal: it drains and leaves
        assert student.wait(timeout=30) == 0, student.stdout.read().decode()[-2000:]


class Front:
    """What a load balancer does for two web processes: each new connection goes to the
    first one that accepts it (the second once the first is dead)."""

    def __init__(self, ports: list[int]):
        self.ports = ports
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            for port in self.ports:
                try:
                    upstream = socket.create_connection(("127.0.0.1", port), timeout=2)
                except OSError:
                    continue
                # no timeout once connected: a long poll is silent for up to 25 s, and a
                # proxy that cut it would lose the request it was being handed
                upstream.settimeout(None)
                break
            else:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        """One direction; the thread reading ``source`` closes it at the end."""
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        source.close()

    def close(self) -> None:
        self.listener.close()


def serve(stack: ExitStack, server: Lane) -> tuple[subprocess.Popen[bytes], int]:
    """One more ``arena serve`` process on the lane's database and broker."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", str(port)],
        env={**os.environ, **server.env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stack.callback(stop_processes, [proc], 10)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games", timeout=2):
                return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail("arena serve did not answer within 60 s")
            time.sleep(0.1)


def test_the_web_process_holding_the_session_dies_mid_match_and_the_match_goes_on(
    server: Lane, web
) -> None:
    """Two web processes behind a front; the one holding the connect bot's session is
    killed mid-match.  The bot polls again, reaches the other, which takes the session
    over; the worker finds it there and sends the request again: no fault."""
    _url, api = web
    with ExitStack() as stack:
        first, first_port = serve(stack, server)
        _second, second_port = serve(stack, server)
        front = Front([first_port, second_port])
        stack.callback(front.close)
        url = f"http://127.0.0.1:{front.port}"
        laptop = register_laptop(api, f"{server.name}-moving")
        SlowBot.asked.clear()
        hook_id = webhook_bot(
            stack, api, f"{server.name}-slow-hook", SlowBot("cactus", "heuristic")
        )
        student = stack.enter_context(connect_bot(url, laptop["id"], laptop["signing_secret"]))

        def connected() -> bool:
            return bool(
                (api.get(f"/api/bots/{laptop['id']}").json.get("connection") or {}).get("connected")
            )

        wait_for(connected, timeout=30, what="the connect bot's session")
        with server.db.session() as s:
            assert sessions.locate(s, laptop["id"]).startswith("http://127.0.0.1:")
            first_home = sessions.locate(s, laptop["id"])
        tid = start_tournament(
            api, f"{server.name}-kill-web", [laptop["id"], hook_id], seed=9, games=2
        )

        def asked() -> bool:  # the match is under way: the slow bot has answered some
            return len(SlowBot.asked) >= 5

        wait_for(asked, timeout=60, what="the match to be under way")
        first.kill()  # the web process holding the bot's session
        first.wait()

        def finished() -> bool:
            return api.get(f"/api/tournaments/{tid}").json["status"] == "finished"

        wait_for(finished, timeout=120, what="the match after its web process died")
        with server.db.session() as s:
            assert sessions.locate(s, laptop["id"]) != first_home  # it moved
        bot = api.get(f"/api/bots/{laptop['id']}").json
        assert bot["recent_faults"] == [], bot["recent_faults"]
        assert student.poll() is None  # it kept playing through the move


def test_the_images_processes_share_a_bot_and_one_dying_costs_it_nothing(
    server: Lane, web, tmp_path: Path
) -> None:
    """The image's command (several gunicorn processes on one socket): the bot's polls,
    each on a connection of its own, reach every process, and the session stays with
    its home (the others pass their polls on) instead of moving at every poll.  The
    process holding it is killed mid-match; gunicorn starts another, the session is
    taken over by a process that lives, and the match ends without a fault."""
    _url, api = web
    env = {**os.environ, **server.env, "ARENA_RELAY_HOST": "127.0.0.1"}
    with ExitStack() as stack:
        url, master = stack.enter_context(image_web(env, tmp_path / "gunicorn.log"))
        laptop = register_laptop(api, f"{server.name}-pod")
        SlowBot.asked.clear()
        hook_id = webhook_bot(stack, api, f"{server.name}-pod-hook", SlowBot("cactus", "heuristic"))
        student = stack.enter_context(connect_bot(url, laptop["id"], laptop["signing_secret"]))

        def home() -> str | None:
            with server.db.session() as s:
                return sessions.locate(s, laptop["id"])

        wait_for(lambda: home() is not None, timeout=30, what="the connect bot's session")
        first_home = home()
        seen = set()
        for _ in range(20):  # its eight polls come and go on every process
            seen.add(home())
            time.sleep(0.1)
        assert seen == {first_home}, seen
        tid = start_tournament(api, f"{server.name}-pod-kill", [laptop["id"], hook_id], seed=11)
        wait_for(lambda: len(SlowBot.asked) >= 5, timeout=60, what="the match to be under way")
        port = int(first_home.rsplit(":", 1)[1])
        (holder,) = [pid for pid in workers_of(master.pid) if port in listening_ports(pid)]
        os.kill(holder, signal.SIGKILL)

        def finished() -> bool:
            return api.get(f"/api/tournaments/{tid}").json["status"] == "finished"

        wait_for(finished, timeout=120, what="the match after its web process died")
        assert home() != first_home  # taken over by a process that lives
        bot = api.get(f"/api/bots/{laptop['id']}").json
        assert bot["recent_faults"] == [], bot["recent_faults"]
        assert student.poll() is None  # it kept playing through the move


def test_a_second_copy_replaces_the_first_a_wrong_secret_is_refused_and_ctrl_c_drains(
    server: Lane, web
) -> None:
    """With real processes in each lane: a wrong secret is refused at once (exit 2, one
    line); a second copy of the bot replaces the first, which stops (exit 1) and says
    why; Ctrl-C in the middle of a tournament finishes the matches in play without a
    fault (exit 0), and matches queued while the bot is away wait for it instead of being
    played on defaults."""
    url, api = web
    laptop = register_laptop(api, f"{server.name}-copies")
    bot_id, secret = laptop["id"], laptop["signing_secret"]
    with ExitStack() as stack:
        wrong = stack.enter_context(connect_bot(url, bot_id, "not-the-secret-at-all"))
        assert wrong.wait(timeout=30) == 2
        assert b"refused bot" in wrong.stdout.read() and wrong.returncode == 2
        # a signed request captured and played again is refused, over HTTP as a bot sends it
        body = orjson.dumps(
            {
                "bot_id": bot_id,
                "request_id": os.urandom(16).hex(),
                "session": "not-a-session",
                "answers": [],
            }
        )
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP: stamp,
            SIGNATURE: signature(secret, stamp, body),
        }
        statuses = []
        for _ in range(2):
            try:
                with urllib.request.urlopen(
                    urllib.request.Request(f"{url}/api/connect/poll", data=body, headers=headers),
                    timeout=10,
                ) as answer:
                    statuses.append((answer.status, ""))
            except urllib.error.HTTPError as refused:
                statuses.append((refused.code, orjson.loads(refused.read())["message"]))
                refused.close()
        assert statuses[0][0] == 404  # the bot's own request: no such session
        assert statuses[1][0] == 401 and "replayed" in statuses[1][1]

        first = stack.enter_context(connect_bot(url, bot_id, secret))

        def connected() -> bool:
            return bool(
                (api.get(f"/api/bots/{bot_id}").json.get("connection") or {}).get("connected")
            )

        wait_for(connected, timeout=30, what="the first copy's session")
        second = stack.enter_context(connect_bot(url, bot_id, secret))
        assert first.wait(timeout=30) == 1  # replaced: that copy stops
        assert b"replaced" in first.stdout.read()
        assert api.get(f"/api/bots/{bot_id}").json["connection"]["sessions_replaced"] == 1

        SlowBot.asked.clear()
        hook_id = webhook_bot(
            stack, api, f"{server.name}-drain-hook", SlowBot("cactus", "heuristic")
        )
        tid = start_tournament(api, f"{server.name}-drain", [bot_id, hook_id], seed=11, games=4)
        wait_for(lambda: len(SlowBot.asked) >= 5, timeout=60, what="a match under way")
        second.send_signal(signal.SIGINT)  # Ctrl-C: drain
        assert second.wait(timeout=60) == 0, second.stdout.read().decode()[-2000:]
        progress = api.get(f"/api/tournaments/{tid}").json["progress"]
        assert progress["running"] == 0 and progress["failed"] == 0  # played to their end
        assert progress["finished"] >= 1
        assert api.get(f"/api/bots/{bot_id}").json["recent_faults"] == []
        # while it is away, a new tournament's matches wait for it, not played on defaults
        waiting = start_tournament(api, f"{server.name}-away", [bot_id, hook_id], seed=12, games=2)
        time.sleep(3)
        assert api.get(f"/api/tournaments/{waiting}").json["progress"]["queued"] == 2
        api.post(f"/api/tournaments/{waiting}/cancel")
        api.post(f"/api/tournaments/{tid}/cancel")
