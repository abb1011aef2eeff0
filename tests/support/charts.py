"""The data behind the chart tests: rated ladder matches played by the referee and saved
as a worker saves them, bots struck out by their faults, fitted ratings, a veteran with a
long history and a hub with many opponents."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any
from unittest import mock

from flask import Flask

from arena.games import make_policy
from arena.match.exchanges import Client
from arena.match.http_client import HttpClient
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import FittedRating, Match, MatchSeat, Rating, RatingChange
from arena.worker import play, refits
from tests.support.badbots import http_bot
from tests.support.web import add_bot

SNEAKY = "<b>sneaky</b>"
FITTED = {"alpha": (1531.2, 1460.4, 1602.9), "bravo": (1490.0, 1400.7, 1580.1)}
VETERAN_MATCHES = 1000
SPOKES = 22  # bots the hub met: more than the page lists


def house(seed: int, seat: int) -> PolicyClient:
    return PolicyClient(make_policy("cactus", "random", policy_rng(seed, seat)), f"house{seat}")


def rated_match(app: Flask, bot_ids: Sequence[int], clients: Sequence[Client], seed: int) -> int:
    """A rated ladder match played by the referee and saved as a worker saves it."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        match = Match(kind="ladder", game="cactus", seed=seed, rated=True, status="running")
        match.started_at = dt.datetime.now(dt.UTC)
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(bot_ids)]
        session.add(match)
        session.flush()
        match_id = match.id
    record = Referee(max_strikes=3, deadline_ms=300).run(
        "cactus", clients, seed, match_id=str(match_id)
    )
    # no broker belongs to these tests: the refit a result may ask for is not sent
    with mock.patch.object(refits.refit_ratings, "delay"):
        assert play.save_result(database, match_id, record)
    return match_id


def build(app: Flask) -> dict[str, Any]:
    """Cactus bots with rated matches among them, two struck out by their faults (HTTP 500,
    illegal actions), fitted ratings for two of them, a veteran with a long history in
    President and a hub that met more opponents than its page lists."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        names = ["alpha", "bravo", "charlie", SNEAKY, "broken", "lost"]
        ids = {n: add_bot(session, n, ["cactus"]).id for n in names}
    seed = 0
    trio = ["alpha", "bravo", "charlie"]
    for a in trio:
        for b in trio:
            for _ in range(2 if a != b else 0):
                seed += 1
                rated_match(app, [ids[a], ids[b]], [house(seed, 0), house(seed, 1)], seed)
    for _ in range(2):
        seed += 1
        players = [house(seed, s) for s in range(3)]
        rated_match(app, [ids[n] for n in trio], players, seed)
        seed += 1
        rated_match(app, [ids[SNEAKY], ids["alpha"]], [house(seed, 0), house(seed, 1)], seed)
    struck = {}
    with ExitStack() as stack:
        for name, behaviour, opponent in (
            ("broken", "error500", "alpha"),
            ("lost", "illegal", "bravo"),
        ):
            url = stack.enter_context(http_bot(behaviour))
            for _ in range(2 if name == "broken" else 1):
                seed += 1
                bad = HttpClient(url, secret="s3cret", name=name)
                stack.callback(bad.close)
                struck.setdefault(name, []).append(
                    rated_match(app, [ids[name], ids[opponent]], [bad, house(seed, 1)], seed)
                )
    with database.session() as session:
        for name, (rating, low, high) in FITTED.items():
            session.add(
                FittedRating(
                    bot_id=ids[name], game="cactus", rating=rating, low=low, high=high, matches=12
                )
            )
        veteran = add_bot(session, "veteran", ["president"]).id
        hub = add_bot(session, "hub", ["cactus"]).id
        spokes = [add_bot(session, f"spoke{i:02d}", ["cactus"]).id for i in range(SPOKES)]
        _long_history(session, veteran)
        _many_opponents(session, hub, spokes)
    return {"ids": ids, "struck": struck, "veteran": veteran, "hub": hub, "spokes": spokes}


def _long_history(session: Any, bot_id: int) -> None:
    """VETERAN_MATCHES rated President matches, their Elo changes only (no seats)."""
    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    elo = 1500.0
    for n in range(VETERAN_MATCHES):
        match = Match(
            kind="ladder",
            game="president",
            seed=n,
            status="finished",
            finished_at=start + dt.timedelta(minutes=n),
        )
        session.add(match)
        session.flush()
        after = elo + (8 if n % 3 else -11)
        session.add(
            RatingChange(
                match_id=match.id, bot_id=bot_id, game="president", before=elo, after=after
            )
        )
        elo = after
    session.add(Rating(bot_id=bot_id, game="president", elo=elo, matches=VETERAN_MATCHES))


def _many_opponents(session: Any, hub: int, spokes: list[int]) -> None:
    """Spoke i meets the hub i // 2 + 1 times, two seats a match (the hub first when i
    is even, level when i is divisible by 5), plus one three-seat match of the hub and
    the last two spokes (hub second)."""
    for i, spoke in enumerate(spokes):
        for _ in range(i // 2 + 1):
            ranks = (1, 1) if i % 5 == 0 else (1, 2) if i % 2 == 0 else (2, 1)
            match = Match(kind="ladder", game="cactus", seed=i, status="finished")
            match.seats = [
                MatchSeat(seat=0, bot_id=hub, rank=ranks[0]),
                MatchSeat(seat=1, bot_id=spoke, rank=ranks[1]),
            ]
            session.add(match)
    three = Match(kind="ladder", game="cactus", seed=99, status="finished")
    three.seats = [
        MatchSeat(seat=0, bot_id=spokes[-1], rank=1),
        MatchSeat(seat=1, bot_id=hub, rank=2),
        MatchSeat(seat=2, bot_id=spokes[-2], rank=3),
    ]
    queued = Match(kind="ladder", game="cactus", seed=100, status="queued")  # not counted
    queued.seats = [MatchSeat(seat=0, bot_id=hub), MatchSeat(seat=1, bot_id=spokes[0])]
    session.add_all([three, queued])
