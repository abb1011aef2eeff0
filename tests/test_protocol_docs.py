"""docs/protocol.md: its JSON examples are golden fixtures of what the referee sends.

The example match (cactus, two sample bots over real HTTP, fixed seed) is played again
here; every example marked ``<!-- golden: NAME -->`` must equal the message it names."""

from __future__ import annotations

import json
import re
from typing import Any

from arenabot import make_server, sign, verify

from arena.match.http_client import HttpClient
from arena.match.referee import Referee
from sample_bots.policy_bot import PolicyBot
from tests.support.protocol import DOC, GOLDEN, signing_example

SECRET = "example-secret"
REQUEST_ID = re.compile(r"[0-9a-f]{32}")


class RecordingBot(PolicyBot):
    """A sample bot that keeps every request it received, as it received it."""

    def __init__(self, game: str, policy: str):
        super().__init__(game, policy)
        self.received: list[tuple[str, dict[str, Any]]] = []

    def start(self, info: dict[str, Any]) -> None:
        self.received.append(("start", info))
        super().start(info)

    def on_act(self, request: dict[str, Any]) -> Any:
        self.received.append(("act", request))
        return super().on_act(request)

    def end(self, info: dict[str, Any]) -> None:
        self.received.append(("end", info))
        super().end(info)


def capture_example_match() -> dict[str, Any]:
    """The messages of the documented example match, named as in the document."""
    bots = [RecordingBot("cactus", "random"), RecordingBot("cactus", "random")]
    servers = [make_server(bot, "127.0.0.1", 0, secret=SECRET) for bot in bots]
    for server in servers:
        server.serve_in_background()
    clients = [
        HttpClient(s.url, SECRET, name) for s, name in zip(servers, ["alice", "bob"], strict=True)
    ]
    try:
        info = clients[0].info()
        Referee().run("cactus", clients, seed=7, options={"rounds": 1}, match_id="example-1")
    finally:
        for client in clients:
            client.close()
        for server in servers:
            server.close()
    bob = bots[1].received
    acts = [m for kind, m in bob if kind == "act"]
    snap = next(m for m in acts if m["view"]["decision"] == "snap")
    return {
        "info": info,
        "start": next(m for kind, m in bob if kind == "start"),
        "act": acts[0],
        "act_snap": snap,
        "end": next(m for kind, m in bob if kind == "end"),
    }


def test_every_golden_example_is_what_the_referee_sends():
    examples = {name: json.loads(body) for name, body in GOLDEN.findall(DOC.read_text())}
    assert {"start", "act", "act_snap", "end", "info"} <= set(examples)
    sent = capture_example_match()
    request_ids = []
    for name, example in examples.items():
        if name == "info":  # the bot's own answer: its shape, not its version string
            assert set(example) == set(sent["info"])
            continue
        # the request id is fresh for every request: its form, then everything else
        received = dict(sent[name])
        request_ids.append(received.pop("request_id", None))
        assert REQUEST_ID.fullmatch(str(request_ids[-1])), f"{name}: {request_ids[-1]!r}"
        shown = dict(example)
        assert REQUEST_ID.fullmatch(str(shown.pop("request_id", None))), (
            f"docs/protocol.md example {name!r} must show a request_id of 32 hex digits"
        )
        assert shown == received, f"docs/protocol.md example {name!r} is out of date"
    assert len(set(request_ids)) == len(request_ids)  # one per request


def test_the_worked_signing_example_is_right():
    example = signing_example()
    timestamp, body = example["timestamp"], example["body"].encode("utf-8")
    message = timestamp.encode("ascii") + b"." + body
    assert example["message"].encode("utf-8") == message
    assert example["length"].startswith(f"{len(message)} bytes: 10 digits, the dot, {len(body)} ")
    assert example["starts"] == message[:24].hex(" ")
    assert sign(example["secret"], timestamp, body) == example["signature"]
    verify(example["secret"], timestamp, example["signature"], body, now=int(timestamp))
