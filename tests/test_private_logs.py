"""Every transport may carry a private ``debug`` text with an answer: the referee keeps
it beside its decision in the seat's log, never in the replay (which anyone who may see
the match reads)."""

from __future__ import annotations

import json
import random

from arenabot import FunctionBot
from arenabot.server import make_server

from arena.games import make_policy
from arena.match.http_client import HttpClient
from arena.match.referee import DEBUG_CAP, PolicyClient, Referee

said: list[int] = []


def thinking(view, legal_actions):
    said.append(1)
    long = "x" * 5000 if len(said) == 1 else ""  # the first one is over the cap
    return legal_actions[0], "public note", f"private: {len(legal_actions)} choices {long}"


def test_a_webhook_bots_debug_text_is_kept_privately_beside_each_decision() -> None:
    server = make_server(FunctionBot(thinking, games=["cactus"]), "127.0.0.1", 0, secret=None)
    server.serve_in_background()
    clients = [
        HttpClient(server.url, "s3cret-s3cret-s3cret", "hook"),
        PolicyClient(make_policy("cactus", "random", random.Random(3)), "random"),
    ]
    try:
        record = Referee().run("cactus", clients, seed=5)
    finally:
        for client in clients:
            client.close()
        server.close()
    asked = [d for step in record.steps for d in step if d["seat"] == 0 and "fault" not in d]
    entries = record.logs[0]
    assert len(entries) == len(asked) > 0
    assert all(e["debug"].startswith("private: ") for e in entries)
    assert len(entries[0]["debug"]) == DEBUG_CAP and len(entries[1]["debug"]) < 30
    assert [e["decision_id"] for e in entries] == [f"{e['step']}:0" for e in entries]
    assert 1 not in record.logs  # the house bot said nothing privately
    public = json.dumps(record.to_json())
    assert "private: " not in public and "public note" in public
