"""A paused bot leaves the tournaments that are running: the matches of it that start
while it is paused are played without asking it (its seat forfeits, as a silent bot's
does, so the standings and the tournament's end stay whole), the other bots play theirs,
and resuming it changes nothing already settled."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from arenabot import make_server
from sqlalchemy import select

from arena import services
from arena.match.pools import Pools
from arena.models import Bot, Match
from arena.services.access import Caller
from arena.worker import play as play_module
from sample_bots.policy_bot import PolicyBot
from tests.support.api import tournament_body


class CountingBot(PolicyBot):
    """A random Cactus bot that counts what the arena asks it."""

    def __init__(self) -> None:
        super().__init__("cactus", "random")
        self.asked = 0

    def start(self, info: dict[str, Any]) -> None:
        self.asked += 1
        super().start(info)

    def on_act(self, request: dict[str, Any]) -> Any:
        self.asked += 1
        return super().on_act(request)


def test_a_paused_bot_is_not_asked_in_its_tournament_which_finishes_and_counts_the_others(
    make_app, enqueued, monkeypatch
):
    app = make_app()
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    client = app.test_client()
    pools = Pools()
    monkeypatch.setattr(play_module, "_pools", lambda: pools)
    with ExitStack() as stack:
        stack.callback(pools.close)
        bots: dict[str, CountingBot] = {}
        ids: dict[str, int] = {}
        for name in ("ann", "bob", "cid"):
            bots[name] = CountingBot()
            server = make_server(bots[name], "127.0.0.1", 0, secret=None)
            server.serve_in_background()
            stack.callback(server.close)
            made = client.post(
                "/api/bots", json={"name": name, "endpoint": server.url, "owner": "t"}
            )
            ids[name] = made.get_json()["id"]
        started = client.post("/api/tournaments", json=tournament_body(list(ids.values())))
        assert started.status_code == 201, started.get_json()
        tournament_id = started.get_json()["id"]

        # an organiser pauses cid while the tournament runs
        with database.session() as session:
            bot = session.get(Bot, ids["cid"])
            services.update_bot(session, config, bot, status="paused", who=Caller(admin=True))
        with database.session() as session:
            matches = session.scalars(
                select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)
            ).all()
        assert len(matches) == 6
        for match_id in matches:
            assert play_module.play_match(database, config, match_id) == "recorded"

    assert bots["cid"].asked == 0  # never called: no /start, no /act
    assert bots["ann"].asked > 0 and bots["bob"].asked > 0
    detail = client.get(f"/api/tournaments/{tournament_id}").get_json()
    assert detail["status"] == "finished"
    assert detail["progress"]["finished"] == 6
    rows = {row["name"]: row for row in detail["standings"]}
    assert (rows["cid"]["matches"], rows["cid"]["forfeits"], rows["cid"]["points"]) == (4, 4, 0)
    for name in ("ann", "bob"):  # each beat cid twice and played the other twice
        assert rows[name]["matches"] == 4 and rows[name]["forfeits"] == 0
    assert rows["ann"]["points"] + rows["bob"]["points"] == 6

    with database.session() as session:
        seats = [
            s
            for m in session.scalars(select(Match).where(Match.tournament_id == tournament_id))
            for s in m.seats
            if s.bot_id == ids["cid"]
        ]
        assert all(s.forfeited and set(s.faults["kinds"]) == {"paused"} for s in seats)
        paused = session.get(Bot, ids["cid"])
        # the forfeits it was not asked for count toward no pause of its own
        assert (paused.status, paused.paused_by, paused.forfeit_streak) == (
            "paused",
            "organiser",
            0,
        )
    faults = client.get(f"/api/bots/{ids['cid']}").get_json()["recent_faults"]
    assert faults and faults[0]["first"]["kind"] == "paused"
    page = client.get(f"/bots/{ids['cid']}").get_data(as_text=True)
    assert "not asked: the bot was paused" in page

    # resuming it settles nothing again: the standings stay as they are
    with database.session() as session:
        bot = session.get(Bot, ids["cid"])
        services.update_bot(session, config, bot, status="active", who=Caller(admin=True))
    again = client.get(f"/api/tournaments/{tournament_id}").get_json()
    assert again["standings"] == detail["standings"]
