"""The sample bots over HTTP (bot side only), and the SDK's view helpers on real views.

Needs the SDK installed next to the server: ``pip install -e ./sdk``.
"""

from __future__ import annotations

import http.client
import importlib
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("arenabot", reason="the SDK is not installed: pip install -e ./sdk")

from arenabot import API_VERSION, BotServer, make_server, signed_headers
from arenabot.server import DEFAULT_THREADS
from arenabot.views import cactus, cactus_game, president

from arena.games import GAMES, POLICIES
from arena.games.base import find_legal
from sample_bots import SAMPLE_BOTS
from sample_bots.policy_bot import PolicyBot

SECRET = "sample-bots-secret"
PLAYERS = {"cactus": 2, "cactus-game": 2, "president": 3}
ROOT = Path(__file__).resolve().parent.parent


def payloads(game_id: str, seed: int, limit: int = 60) -> Iterator[dict[str, Any]]:
    """``/act`` bodies of one random match, built as the referee builds them."""
    game = GAMES[game_id]
    state = game.new_state(PLAYERS[game_id], seed)
    rng = random.Random(seed)
    for step in range(limit):
        requests = game.pending(state)
        if not requests:
            return
        for r in requests:
            yield {
                "match_id": f"m{seed}",
                "decision_id": f"{step}:{r.seat}",
                "game": game_id,
                "seat": r.seat,
                "view": json.loads(json.dumps(game.view(state, r.seat))),
                "legal_actions": r.legal_actions,
                "deadline_ms": 2000,
            }
        game.apply(state, {r.seat: rng.choice(r.legal_actions) for r in requests})


def post(conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    # a fresh request id, as the arena sends: a signed bot refuses a request seen before
    raw = json.dumps({**body, "request_id": os.urandom(16).hex()}).encode()
    headers = {"Content-Type": "application/json", **signed_headers(SECRET, raw)}
    conn.request("POST", path, raw, headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read())


# -- the list of sample bots -----------------------------------------------------------


def test_every_game_has_a_random_and_a_heuristic_sample_bot() -> None:
    expected = {
        (game, policy)
        for game in GAMES
        for policy in ("random", "heuristic")
        if policy in POLICIES[game]
    }
    assert set(SAMPLE_BOTS.values()) == expected
    for name, (game, _) in SAMPLE_BOTS.items():
        assert name.startswith(game.replace("-", "_") + "_")
        importlib.import_module(f"sample_bots.{name}")


def test_python_m_sample_bots_lists_them() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sample_bots"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    for name in SAMPLE_BOTS:
        assert name in out


# -- bots served on free loopback ports --------------------------------------------------

SERVED = [*((game, "heuristic") for game in PLAYERS), ("cactus", "random")]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[tuple[str, str], BotServer]]:
    """One heuristic bot per game and the cactus random bot, each on its own port."""
    served: dict[tuple[str, str], BotServer] = {}
    for game, policy in SERVED:
        server = make_server(PolicyBot(game, policy), "127.0.0.1", 0, secret=SECRET)
        server.serve_in_background()
        served[game, policy] = server
    yield served
    for server in served.values():
        server.close()


@pytest.mark.parametrize(("game", "policy"), SERVED)
def test_sample_bot_info_and_a_signed_act(
    servers: dict[tuple[str, str], BotServer], game: str, policy: str
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", servers[game, policy].port, timeout=10)
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        assert response.status == 200
        assert json.loads(response.read()) == {
            "apiversion": API_VERSION,
            "name": f"{game}-{policy}",
            "author": "card-bot arena",
            "version": PolicyBot.version,
            "games": [game],
            "capacity": DEFAULT_THREADS,  # the sample bots are thread-safe
        }
        body = next(payloads(game, seed=1))
        start = {k: body[k] for k in ("match_id", "game", "seat")}
        assert post(conn, "/start", {**start, "options": {}, "players": ["a"] * 3}) == (200, {})
        status, answer = post(conn, "/act", body)  # the same connection: keep-alive
        assert status == 200
        assert find_legal(answer["action"], body["legal_actions"]) is not None
        outcome = {"ranks": [1, 2], "scores": [0, 0]}
        assert post(conn, "/end", {**start, "outcome": outcome, "view": body["view"]}) == (200, {})
    finally:
        conn.close()


@pytest.mark.parametrize("game", list(PLAYERS))
def test_sample_bots_answer_every_decision_legally(
    servers: dict[tuple[str, str], BotServer], game: str
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", servers[game, "heuristic"].port, timeout=10)
    try:
        for body in payloads(game, seed=2):
            status, answer = post(conn, "/act", body)
            assert status == 200, answer
            assert find_legal(answer["action"], body["legal_actions"]) is not None
    finally:
        conn.close()


def test_a_policy_bot_replays_the_same_decisions_for_the_same_match() -> None:
    """Its generator is seeded from the match id and the seat, nothing else."""

    def decisions(bot: PolicyBot) -> list[Any]:
        bodies = list(payloads("cactus", seed=3))
        for seat in range(PLAYERS["cactus"]):
            bot.start({"match_id": "m3", "game": "cactus", "options": {}, "seat": seat})
        return [bot.on_act(b) for b in bodies]

    first = decisions(PolicyBot("cactus", "random"))
    assert first == decisions(PolicyBot("cactus", "random"))
    assert len(set(map(json.dumps, first))) > 1


def test_a_sample_bot_module_serves_from_the_command_line() -> None:
    """``python -m sample_bots.<name> --port 0``: it says where it listens, answers, and
    stops cleanly on SIGTERM."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sample_bots.president_random", "--port", "0", "--secret", SECRET],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "listening on http://127.0.0.1:" in line, line
        port = int(line.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        body = next(payloads("president", seed=4))
        status, answer = post(conn, "/act", body)
        conn.close()
        assert status == 200
        assert find_legal(answer["action"], body["legal_actions"]) is not None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


# -- the SDK's view helpers on real views ------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_cactus_view_helpers(seed: int) -> None:
    for body in payloads("cactus", seed, limit=300):
        view, seat = body["view"], body["seat"]
        mine = cactus.my_layout(view)
        assert set(cactus.unknown_slots(view)) == {s for s, c in mine.items() if c is None}
        known = cactus.known_cards(view)
        assert {s: c for (o, s), c in known.items() if o == seat} == {
            s: c for s, c in mine.items() if c is not None
        }
        assert cactus.estimated_total(view, unknown=0) == sum(
            cactus.card_value(view, c) for c in mine.values() if c is not None
        )
        assert cactus.top_discard(view) == (view["discard"][-1] if view["discard"] else None)
        if view["decision"] == "drawn":
            assert cactus.drawn_card(view) is not None


@pytest.mark.parametrize("seed", range(3))
def test_cactus_game_view_helpers(seed: int) -> None:
    for body in payloads("cactus-game", seed, limit=300):
        view, seat = body["view"], body["seat"]
        assert sum(cactus_game.hand_counts(view).values()) == view["hand_sizes"][seat]
        assert cactus_game.points(view) == view["points"][seat]
        assert cactus_game.points_to_win(view) == cactus_game.target(view) - view["points"][seat]
        assert seat in cactus_game.leaders(view) or cactus_game.points(view) < max(view["points"])
        for action in body["legal_actions"]:
            if action["type"] == "play_set":
                assert cactus_game.set_points(action) in (1, 2, 3)
        assert (cactus_game.chain(view) is not None) == (view["decision"] == "stop")


@pytest.mark.parametrize("seed", range(3))
def test_president_view_helpers(seed: int) -> None:
    for body in payloads("president", seed, limit=300):
        view, seat, legal = body["view"], body["seat"], body["legal_actions"]
        assert sum(president.rank_counts(view).values()) == view["hand_sizes"][seat]
        strength = president.strength(view)
        held = [strength[president.rank(c)] for c in president.my_cards(view)]
        assert held == sorted(held)  # the hand is weakest first
        if view["phase"] == "play":
            assert president.can_pass(legal) == (president.current_trick(view) is not None)
