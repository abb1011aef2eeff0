"""Standings show what went wrong: per bot its faults, matches struck out and forfeits,
in the API, on the tournament page (standings and crosstable) and in ``arena
tournaments show``; kept as results arrive, and filled for existing tournaments by the
migration that adds them."""

from __future__ import annotations

import datetime as dt
import json
import re
from unittest import mock

import sqlalchemy as sa
from alembic import command
from flask import Flask

from arena import services
from arena.cli.tournaments import _print_tournament
from arena.competition.standings import record_result
from arena.db import Database, alembic_config
from arena.games import make_policy
from arena.match.exchanges import Client
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Bot, Match, TournamentEntry
from arena.worker import play, refits
from tests.support.faults import MAX_STRIKES, AnswersOnce, Down

BEHAVIOUR = {"ada": "random", "bob": "random", "down": "forfeits", "once": "strikes out"}


def client_for(name: str, seed: int, seat: int) -> Client:
    policy = make_policy("cactus", "random", policy_rng(seed, seat))
    if BEHAVIOUR[name] == "forfeits":
        return Down(name)
    if BEHAVIOUR[name] == "strikes out":
        return AnswersOnce(policy, name)
    return PolicyClient(policy, name)


def play_tournament(app: Flask) -> tuple[int, dict[int, str], dict[str, dict[str, int]]]:
    """A round robin of two random bots, one that is down and one that answers once a
    match, every match played by the referee and stored as a worker stores it.
    Returns the tournament, the bots' names by id, and what each bot did, counted from
    the matches' decisions."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        bots = [
            Bot(
                name=name,
                endpoint=f"http://127.0.0.1:9/{name}",
                owner="tests",
                owner_token_hash="x",
                signing_secret="s",
                games=["cactus"],
            )
            for name in BEHAVIOUR
        ]
        session.add_all(bots)
        session.flush()
        names = {bot.id: bot.name for bot in bots}
        tournament, match_ids = services.create_tournament(
            session,
            app.extensions["arena.config"],
            name="faults cup",
            game="cactus",
            options=None,
            bot_ids=list(names),
            seats_per_match=2,
            games_per_pairing=2,
            seed=3,
        )
        tournament_id = tournament.id
    did = {name: {"faults": 0, "struck_out": 0, "forfeits": 0} for name in BEHAVIOUR}
    for match_id in match_ids:
        with database.session() as session:
            match = session.get(Match, match_id)
            match.status = "running"
            seats, seed = [names[s.bot_id] for s in match.seats], match.seed
        clients = [client_for(name, seed, seat) for seat, name in enumerate(seats)]
        record = Referee(max_strikes=MAX_STRIKES).run("cactus", clients, seed)
        for seat, name in enumerate(seats):
            mine = [d for step in record.steps for d in step if d["seat"] == seat]
            faults = sum(d.get("fault") not in (None, "struck_out") for d in mine)
            did[name]["faults"] += faults
            did[name]["struck_out"] += faults >= MAX_STRIKES
            did[name]["forfeits"] += bool(mine) and all("fault" in d for d in mine)
        with mock.patch.object(refits.refit_ratings, "delay"):
            assert play.save_result(database, match_id, record)
    return tournament_id, names, did


def test_standings_count_each_bots_faults_struck_out_matches_and_forfeits(app, client, capsys):
    tournament_id, names, did = play_tournament(app)
    assert did["down"]["forfeits"] == 6 and did["once"]["struck_out"] == 6
    assert did["once"]["forfeits"] == 0 and did["ada"] == did["bob"] == {
        "faults": 0,
        "struck_out": 0,
        "forfeits": 0,
    }
    detail = client.get(f"/api/tournaments/{tournament_id}").get_json()
    fields = ("faults", "struck_out", "forfeits")
    shown = {row["name"]: {k: row[k] for k in fields} for row in detail["standings"]}
    assert shown == did
    assert detail["standings"][-1]["name"] == "down"  # it ranked last in every match
    assert detail["standings"][-1]["points"] == 0
    crossed = {row["name"]: {k: row[k] for k in fields} for row in detail["crosstable"]["bots"]}
    assert crossed == did

    # the page: the standings and the crosstable rows end with the three counts
    body = client.get(f"/tournaments/{tournament_id}").get_data(as_text=True)
    standings = body[body.index('id="standings"') :].split("</table>")[0]
    crosstable = body[body.index('id="crosstable"') :].split("</table>")[0]
    for bot_id, name in names.items():
        row = re.search(rf'<tr data-bot-id="{bot_id}">(.*?)</tr>', standings, re.S)[1]
        counts = re.findall(r'<td class="num (?:faults|struck-out|forfeits)[^"]*">(\d+)</td>', row)
        assert counts == [str(did[name][k]) for k in fields], name
        line = re.search(rf'href="/bots/{bot_id}">[^<]*</a></th>(.*?)</tr>', crosstable, re.S)[1]
        counts = re.findall(r'<td class="num (?:faults|struck-out|forfeits)[^"]*">(\d+)</td>', line)
        assert counts == [str(did[name][k]) for k in fields], name
    assert "Struck out" in standings and "Forfeits" in crosstable

    # arena tournaments show: the same three columns
    _print_tournament(json.loads(json.dumps(detail)))
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[-4:] == ["faults", "struck", "out", "forfeits"]
    for line in lines[3:7]:
        name, *_, faults, struck_out, forfeits = line.split()[1:]
        assert [int(faults), int(struck_out), int(forfeits)] == [did[name][k] for k in fields]


# -- migration 0009 ------------------------------------------------------------------------
def test_the_migration_fills_fault_counts_and_the_stop_rules_place(database_url: str):
    """At 0008: a gauntlet whose stop rule took two finished matches (finishing order)
    while an earlier one still ran, and a duplicate gauntlet with one complete deal and
    one rotation of the next finished.  After 0009 the fault counts are those of the
    finished matches; each stop rule goes on after the newest match it observed."""
    config = alembic_config(database_url)
    command.upgrade(config, "0008")
    engine = sa.create_engine(database_url)
    meta = sa.MetaData()
    meta.reflect(engine)
    bots, tournaments = meta.tables["bots"], meta.tables["tournaments"]
    entries, matches, seats = (
        meta.tables[t] for t in ("tournament_entries", "matches", "match_seats")
    )
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    sprt = {"elo0": 0, "elo1": 20, "alpha": 0.05, "beta": 0.05}
    faults = {"count": 3, "kinds": {"timeout": 3}}
    down = {"ranks": [1, 2], "scores": [0, 0], "struck_out": [1], "forfeited": [1]}
    clean = {"ranks": [2, 1], "scores": [0, 0], "struck_out": [], "forfeited": []}
    # (id, tournament, deal, status, challenger's opponent, result)
    played = [
        (1, 1, None, "finished", 2, down),
        (2, 1, None, "running", 3, None),
        (3, 1, None, "finished", 2, clean),
        (4, 1, None, "queued", 3, None),
        (5, 2, 0, "finished", 2, clean),
        (6, 2, 0, "finished", 2, clean),
        (7, 2, 1, "finished", 3, clean),
        (8, 2, 1, "running", 3, None),
    ]
    try:
        with engine.begin() as connection:
            for bot_id in (1, 2, 3):
                connection.execute(
                    bots.insert().values(
                        id=bot_id, name=f"b{bot_id}", name_key=f"b{bot_id}", endpoint="http://b",
                        owner="o", owner_token_hash="h", signing_secret="s", games=["cactus"],
                        status="active", description="", info={}, created_at=now, updated_at=now,
                    )
                )  # fmt: skip
            for tournament_id, deal in ((1, "independent"), (2, "duplicate")):
                connection.execute(
                    tournaments.insert().values(
                        id=tournament_id, name="g", game="cactus", options={},
                        seats_per_match=2, format="gauntlet", deal=deal, matches_per_bot=2,
                        sprt=sprt, seed=1, status="running", created_at=now,
                    )
                )  # fmt: skip
                for bot_id in (1, 2, 3):
                    connection.execute(
                        entries.insert().values(
                            tournament_id=tournament_id, bot_id=bot_id, challenger=bot_id == 1
                        )
                    )
            for match_id, tournament_id, deal, status, opponent, result in played:
                connection.execute(
                    matches.insert().values(
                        id=match_id, tournament_id=tournament_id, kind="tournament",
                        game="cactus", options={}, seed=1, deal=deal, status=status,
                        attempts=1, rated=False, result=result, created_at=now,
                    )
                )  # fmt: skip
                for seat, bot_id in enumerate((1, opponent)):
                    connection.execute(
                        seats.insert().values(
                            match_id=match_id, seat=seat, bot_id=bot_id, strikes=0,
                            rank=None if result is None else result["ranks"][seat],
                            forfeited=result is down and seat == 1,
                            faults=faults if result is down and seat == 1 else None,
                        )
                    )  # fmt: skip
        command.upgrade(config, "head")  # 0009, and what the models need of later ones
        database = Database(database_url)
        try:
            with database.session() as session:
                rows = {
                    (e.tournament_id, e.bot_id): e
                    for e in session.scalars(sa.select(TournamentEntry))
                }
                assert (rows[1, 2].faults, rows[1, 2].struck_out, rows[1, 2].forfeits) == (3, 1, 1)
                assert all(
                    (e.faults, e.struck_out, e.forfeits) == (0, 0, 0)
                    for key, e in rows.items()
                    if key != (1, 2)
                )
                # observed: matches 1 and 3, and deal 0; the finished rotation of deal 1 waits
                assert (rows[1, 1].sprt_through, rows[1, 1].sprt_waiting) == (3, 0)
                assert (rows[2, 1].sprt_through, rows[2, 1].sprt_waiting) == (6, 1)
                # from now on in schedule order: deal 1's last rotation lets it in
                match = session.get(Match, 8)
                match.status = "finished"
                match.settled = True  # as arena.worker.lifecycle settles it, before the standings
                for seat in match.seats:
                    seat.rank = seat.seat + 1
                session.flush()
                entry = rows[2, 1]
                before = entry.sprt_n
                record_result(session, match)
                assert (entry.sprt_n, entry.sprt_waiting) == (
                    before + 1,
                    0,
                ) and entry.sprt_through >= 8
        finally:
            database.dispose()
        command.downgrade(config, "0008")
        with engine.connect() as connection:
            columns = {c["name"] for c in sa.inspect(connection).get_columns("tournament_entries")}
        assert not {"faults", "forfeits", "struck_out", "sprt_through", "sprt_waiting"} & columns
    finally:
        engine.dispose()
