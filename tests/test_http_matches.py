"""Full matches of every game over real HTTP on loopback, with SDK bots."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
from arenabot import make_server

from arena.games import GAMES
from arena.match.http_client import HttpClient
from arena.match.records import check
from arena.match.referee import Referee
from sample_bots.policy_bot import PolicyBot

PLAYERS = {"cactus": 4, "cactus-game": 4, "president": 4}


def seated(stack: ExitStack, game: str, n: int, secret: str, client_secret: str) -> list:
    clients = []
    for seat in range(n):
        bot = PolicyBot(game, "heuristic" if seat == 0 else "random")
        server = make_server(bot, "127.0.0.1", 0, secret=secret)
        server.serve_in_background()
        stack.callback(server.close)
        client = HttpClient(server.url, client_secret, f"{bot.name}-{seat}")
        stack.callback(client.close)
        clients.append(client)
    return clients


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_full_match_over_http_with_sdk_bots(game):
    with ExitStack() as stack:
        clients = seated(stack, game, PLAYERS.get(game, 4), "s3cret", "s3cret")
        record = Referee().run(game, clients, seed=21, match_id=f"http-{game}")
    decisions = [d for step in record.steps for d in step]
    assert decisions and not [d for d in decisions if "fault" in d]
    assert all(d["latency_ms"] > 0 for d in decisions)
    assert record.strikes == [0] * len(clients)
    assert check(record.to_json()) == []


def test_a_referee_with_the_wrong_secret_is_refused_by_every_bot():
    with ExitStack() as stack:
        clients = seated(stack, "cactus", 2, "right", "wrong")
        record = Referee().run("cactus", clients, seed=3)
    faults = {d["fault"] for step in record.steps for d in step}
    assert faults == {"http_status", "struck_out"}  # 401s, then both bots struck out
    assert record.outcome["struck_out"] == [0, 1]
    assert record.outcome["forfeited"] == [0, 1]


def test_a_bot_with_the_wrong_secret_has_its_401_and_reason_recorded():
    with ExitStack() as stack:
        wrong = seated(stack, "cactus", 1, "the bot's secret", "another secret")
        right = seated(stack, "cactus", 1, "s3cret", "s3cret")
        record = Referee().run("cactus", wrong + right, seed=3)
    causes = [d["cause"] for step in record.steps for d in step if d.get("fault") == "http_status"]
    assert causes and {c["status"] for c in causes} == {401}
    assert all("wrong signature" in c["excerpt"] for c in causes)
    assert record.outcome["forfeited"] == [0] and record.outcome["ranks"] == [2, 1]
