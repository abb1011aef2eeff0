"""Building an app for the page and viewer tests: a fresh SQLite app, bots added directly,
real matches stored as the worker stores them, results saved as a worker saves them,
the schedule of a tournament, and the visible text of a page."""

from __future__ import annotations

import datetime as dt
import html
import re
from pathlib import Path
from unittest import mock

from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.app import create_app
from arena.competition.standings import record_result
from arena.config import Config
from arena.db import Database
from arena.games import make_policy
from arena.match.referee import MatchRecord, PolicyClient, Referee, policy_rng
from arena.models import (
    Bot,
    Match,
    MatchSeat,
    Replay,
    Tournament,
)
from arena.worker import play, refits


def finish(app: Flask, match_id: int, ranks: list[int]) -> bool:
    """Store a result the way a worker does (``play.save_result``).  The refit a
    finished tournament asks for is not sent: no broker belongs to these tests (the
    Celery app may still point at one another test has taken down)."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        match = session.get(Match, match_id)
        if match.status != "queued":
            return False
        match.status = "running"
        seats = len(match.seats)
    record = MatchRecord(
        match_id=str(match_id),
        game="cactus",
        seed=1,
        options={},
        players=[f"p{i}" for i in range(seats)],
        outcome={"ranks": ranks, "scores": [0] * seats, "rounds": []},
        strikes=[0] * seats,
    )
    with mock.patch.object(refits.refit_ratings, "delay"):
        return play.save_result(database, match_id, record)


def make_app(folder: Path) -> Flask:
    url = f"sqlite:///{folder / 'arena.sqlite3'}"
    database = Database(url)
    database.upgrade()
    database.dispose()
    config = Config(
        data_dir=folder,
        database_url=url,
        broker_url="filesystem://",
        secret_key="test-secret",
        testing=True,
    )
    return create_app(config)


def close_app(app: Flask) -> None:
    app.extensions["arena.db"].dispose()


def add_bot(session: Session, name: str, games: list[str], status: str = "active") -> Bot:
    bot = Bot(
        name=name,
        endpoint=f"http://127.0.0.1:9/{name}",
        owner="tests",
        owner_token_hash="x",
        signing_secret="not-shown-anywhere",
        games=games,
        status=status,
        description=f"{name} plays at random",
        info={"apiversion": "1", "name": name, "author": "tests", "version": "1"},
    )
    session.add(bot)
    session.flush()
    return bot


def add_many_bots(database: Database, n: int, prefix: str = "bot") -> list[int]:
    """``n`` bots playing Cactus, written in one transaction (a big tournament's
    entrants, named ``"<prefix> <i>"``): their ids."""
    with database.session() as session:
        bots = [
            Bot(
                name=f"{prefix} {i}",
                endpoint="http://127.0.0.1:9",
                owner="tests",
                owner_token_hash="x",
                signing_secret="s" * 32,
                games=["cactus"],
            )
            for i in range(n)
        ]
        session.add_all(bots)
        session.flush()
        return [b.id for b in bots]


def play_match(
    session: Session,
    game: str,
    bots: list[Bot],
    seed: int,
    tournament: Tournament | None = None,
) -> Match:
    """A real match between random policies, stored as the worker stores one."""
    clients = [
        PolicyClient(make_policy(game, "random", policy_rng(seed, seat)), name=bot.name)
        for seat, bot in enumerate(bots)
    ]
    record = Referee().run(game, clients, seed).to_json()
    outcome = record["outcome"]
    now = dt.datetime.now(dt.UTC)
    match = Match(
        tournament=tournament,
        kind="tournament" if tournament else "ladder",
        game=game,
        options=record["options"],
        seed=seed,
        status="finished",
        settled=True,
        result=outcome,
        started_at=now,
        finished_at=now,
    )
    match.seats = [
        MatchSeat(
            seat=seat,
            bot_id=bot.id,
            rank=outcome["ranks"][seat],
            score=outcome["scores"][seat],
            strikes=record["strikes"][seat],
        )
        for seat, bot in enumerate(bots)
    ]
    session.add(match)
    session.flush()
    record["match_id"] = str(match.id)
    session.add(Replay(match_id=match.id, record=record))
    session.flush()
    record_result(session, match)  # the tournament's standings, as the worker keeps them
    return match


def page_text(body: bytes | str) -> str:
    """The visible text of a page, roughly: tags removed, entities decoded."""
    if isinstance(body, bytes):
        body = body.decode()
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def schedule(session: Session, tournament_id: int) -> list[int]:
    """The tournament's match ids in schedule order."""
    return list(
        session.scalars(
            select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)
        )
    )


save_through_the_worker = finish  # play.save_result, as a worker stores a result
