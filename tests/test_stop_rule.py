"""The gauntlet's stop rule judges a challenger on its matches in schedule order, not in
the order they happen to finish: a result that finishes early waits for those scheduled
before it, and a match that ends without a result (failed, cancelled) is skipped.

Results are stored the way a worker stores them (``play_module.save_result``) on a real
database, in the order a worker with many matches in flight would finish them: the
matches against bots that forfeit at once end in milliseconds, those against bots that
think end seconds later."""

from __future__ import annotations

import heapq
import random
import re
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from flask import Flask
from sqlalchemy import select

from arena import services
from arena.competition import formats, standings
from arena.db import Database
from arena.match.referee import MatchRecord
from arena.models import Bot, Match, Tournament
from arena.worker import lifecycle, refits
from arena.worker import play as play_module

# the audit's stop rule: is the challenger 20 Elo better than the field?
SPRT = {"elo0": 0, "elo1": 20, "alpha": 0.05, "beta": 0.05}
IN_FLIGHT = 100  # a worker's matches at once (ARENA_WORKER_CONCURRENCY's default)
FORFEIT_SECONDS = 0.05  # a bot that is down: every request refused at once
THINKING_SECONDS = 12.0  # a bot that thinks 300 ms a decision, some 40 decisions a match
WINS_AGAINST_THINKERS = 0.1  # a random challenger against heuristic bots


def add_bots(app: Flask, names: list[str]) -> list[int]:
    with app.extensions["arena.db"].session() as session:
        bots = [
            Bot(
                name=name,
                endpoint=f"http://127.0.0.1:9/{name}",
                owner="tests",
                owner_token_hash="x",
                signing_secret="not-shown-anywhere",
                games=["cactus"],
            )
            for name in names
        ]
        session.add_all(bots)
        session.flush()
        return [bot.id for bot in bots]


def gauntlet(app: Flask, challenger: int, field: list[int], **fields: Any) -> int:
    """A two-seat cactus gauntlet with the stop rule; its id."""
    with app.extensions["arena.db"].session() as session:
        tournament, _ = services.create_tournament(
            session,
            app.extensions["arena.config"],
            name="gauntlet",
            game="cactus",
            options=None,
            bot_ids=[challenger, *field],
            seats_per_match=2,
            format="gauntlet",
            challenger_ids=[challenger],
            sprt=SPRT,
            seed=7,
            **{"matches_per_bot": 240, **fields},
        )
        return tournament.id


def schedule(app: Flask, tournament_id: int) -> list[tuple[int, list[int]]]:
    """(match id, bot by seat) of every match, in schedule order."""
    with app.extensions["arena.db"].session() as session:
        matches = session.scalars(
            select(Match).where(Match.tournament_id == tournament_id).order_by(Match.id)
        ).all()
        return [(m.id, [s.bot_id for s in m.seats]) for m in matches]


def outcome(position: int, seats: list[int], challenger: int, forfeiters: set[int]) -> dict:
    """The result of the schedule's ``position``-th match, whatever order it finishes in:
    a forfeiting opponent ranks last (with three faults); against the others the
    challenger wins one match in ten."""
    opponent = next(seat for seat, bot in enumerate(seats) if bot != challenger)
    if seats[opponent] in forfeiters:
        wins = True
    else:
        wins = random.Random(f"match {position}").random() < WINS_AGAINST_THINKERS
    ranks = [1 if (bot == challenger) == wins else 2 for bot in seats]
    forfeited = [opponent] if seats[opponent] in forfeiters else []
    return {"ranks": ranks, "forfeited": forfeited}


def store(app: Flask, match_id: int, result: dict) -> bool:
    """Store a result as the worker does; False when the match was no longer open (the
    stop rule cancelled it)."""
    database = app.extensions["arena.db"]
    with database.session() as session:
        match = session.get(Match, match_id)
        if match.status not in ("queued", "running"):
            return False
        match.status = "running"
        seats = len(match.seats)
    faults = [
        [{"seat": s, "kind": "turn", "action": {}, "fault": "http_status", "cause": {}}]
        for s in result["forfeited"]
        for _ in range(3)
    ]
    record = MatchRecord(
        match_id=str(match_id),
        game="cactus",
        seed=1,
        options={},
        players=[f"p{i}" for i in range(seats)],
        steps=faults,
        outcome={
            "ranks": result["ranks"],
            "scores": [0] * seats,
            "rounds": [],
            "struck_out": result["forfeited"],
            "forfeited": result["forfeited"],
        },
        strikes=[3 if s in result["forfeited"] else 0 for s in range(seats)],
    )
    with mock.patch.object(refits.refit_ratings, "delay"):
        return play_module.save_result(database, match_id, record)


def play(
    app: Flask,
    tournament_id: int,
    result_of: Callable[[int, list[int]], dict],
    seconds_of: Callable[[list[int]], float],
    in_flight: int,
) -> list[int]:
    """Play the tournament as a worker with ``in_flight`` matches at once would: it
    starts queued matches in schedule order as places free up, and each result is
    stored when its match ends (``seconds_of`` its seats later).  Returns the largest
    number of results seen waiting, after each result."""
    queue = schedule(app, tournament_id)
    position = {match_id: n for n, (match_id, _) in enumerate(queue)}
    database = app.extensions["arena.db"]
    jitter = random.Random(3)
    running: list[tuple[float, int, list[int]]] = []
    now = 0.0
    waiting = []
    while queue or running:
        while queue and len(running) < in_flight:
            match_id, seats = queue.pop(0)
            with database.session() as session:
                match = session.get(Match, match_id)
                if match.status != "queued":
                    continue  # cancelled by the stop rule
                match.status = "running"
            ends = now + seconds_of(seats) * jitter.uniform(0.8, 1.2)
            heapq.heappush(running, (ends, match_id, seats))
        if not running:
            break  # the rest was cancelled
        now, match_id, seats = heapq.heappop(running)
        store(app, match_id, result_of(position[match_id], seats))
        waiting.append(sprt_status(app, tournament_id)["waiting"])
    return waiting


def waiting_on_the_page(app: Flask, tournament_id: int) -> dict[int, int]:
    """The stop rule's Waiting column of the tournament page, by challenger."""
    body = app.test_client().get(f"/tournaments/{tournament_id}").get_data(as_text=True)
    rule = body[body.index('id="stop-rule"') :].split("</table>")[0]
    rows = re.findall(r'<tr data-bot-id="(\d+)">.*?<td class="num waiting">(\d+)</td>', rule, re.S)
    return {int(bot): int(n) for bot, n in rows}


def sprt_status(app: Flask, tournament_id: int) -> dict[str, Any]:
    client = app.test_client()
    body = client.get(f"/api/tournaments/{tournament_id}?crosstable=false").get_json()
    [challenger] = body["sprt_status"]["challengers"]
    return challenger


def run(app: Flask, in_flight: int, **fields: Any) -> dict[str, Any]:
    """A random challenger against a field of two bots that forfeit at once and ten
    heuristic bots that think (the audit's scripted case), played out."""
    ids = add_bots(app, ["challenger", "down-1", "down-2", *(f"thinker-{i}" for i in range(10))])
    field = {"challenger": ids[0], "forfeiters": set(ids[1:3]), "field": ids[1:]}
    tournament_id = gauntlet(app, field["challenger"], field["field"], **fields)

    def result_of(position: int, seats: list[int]) -> dict:
        return outcome(position, seats, field["challenger"], field["forfeiters"])

    def seconds_of(seats: list[int]) -> float:
        return FORFEIT_SECONDS if set(seats) & field["forfeiters"] else THINKING_SECONDS

    waiting = play(app, tournament_id, result_of, seconds_of, in_flight)
    return {"status": sprt_status(app, tournament_id), "most_waiting": max(waiting)}


def test_fast_forfeits_do_not_pass_a_challenger_that_loses_to_the_rest(app):
    """The audit's scripted case: matches against the two forfeiting bots finish first.
    Judged in finishing order, 13 straight wins passed the challenger (LLR 3.09) though
    it loses nine matches in ten to the others; in schedule order it fails."""
    played = run(app, in_flight=IN_FLIGHT)
    status = played["status"]
    assert status["decision"] == "H0", status
    assert status["score"] < 0.4 and status["observations"] > 13
    assert played["most_waiting"] > 10  # the early forfeits did wait their turn
    assert status["waiting"] == 0  # decided: nothing more is fed


@pytest.mark.parametrize("deal", ["independent", "duplicate"])
def test_results_out_of_order_give_the_same_decision_at_the_same_observation(make_app, deal):
    """The same gauntlet on two databases: its matches played one at a time, and a
    hundred at once with the forfeits finishing first."""
    in_order = run(make_app(), in_flight=1, deal=deal)
    out_of_order = run(make_app(), in_flight=IN_FLIGHT, deal=deal)
    # one at a time, nothing waits (a duplicate deal's rotations are settled together,
    # once the last one ends: arena.worker.lifecycle)
    assert in_order["most_waiting"] == 0
    assert out_of_order["most_waiting"] > 10
    mine, theirs = out_of_order["status"], in_order["status"]
    assert theirs["decision"] is not None
    for key in ("decision", "observations", "score", "llr", "waiting"):
        assert mine[key] == theirs[key], key


def small_gauntlet(app: Flask, deal: str = "independent") -> tuple[int, int, dict[int, list[int]]]:
    """A challenger and three field bots: (tournament id, challenger, bot by seat of
    each match by id, in schedule order)."""
    challenger, *field = add_bots(app, ["challenger", "f1", "f2", "f3"])
    tournament_id = gauntlet(app, challenger, field, matches_per_bot=24, deal=deal)
    return tournament_id, challenger, dict(schedule(app, tournament_id))


def win(app: Flask, match_id: int, seats: list[int], challenger: int) -> None:
    """The challenger wins the match."""
    ranks = [1 if bot == challenger else 2 for bot in seats]
    assert store(app, match_id, {"ranks": ranks, "forfeited": []})


def set_status(app: Flask, match_id: int, status: str) -> None:
    with app.extensions["arena.db"].session() as session:
        session.get(Match, match_id).status = status


@pytest.mark.parametrize("deal", ["independent", "duplicate"])
def test_results_waiting_behind_a_failed_match_go_on_when_it_fails(app, deal):
    """What the worker does when it gives a match up (``arena.worker.lifecycle.fail``): the
    stop rule goes past it in the same transaction."""
    tournament_id, challenger, matches = small_gauntlet(app, deal)
    ids = list(matches)
    set_status(app, ids[0], "running")
    for match_id in ids[1:4]:
        win(app, match_id, matches[match_id], challenger)
    status = sprt_status(app, tournament_id)
    # with duplicate deals the rotation of the running match's deal is not settled yet:
    # the next deal's two rotations wait
    waits = 3 if deal == "independent" else 2
    assert (status["observations"], status["waiting"]) == (0, waits)
    assert waiting_on_the_page(app, tournament_id) == {challenger: waits}
    with app.extensions["arena.db"].session() as session:
        lifecycle.fail(session, session.get(Match, ids[0]), "bug", pause_after=3, final=True)
    status = sprt_status(app, tournament_id)
    if deal == "independent":
        assert (status["observations"], status["waiting"]) == (3, 0)
    else:  # the failed match's deal is skipped whole; the next deal waits for its rotation
        assert (status["observations"], status["waiting"]) == (1, 0)
        assert sprt_status(app, tournament_id)["score"] == 1.0
    assert waiting_on_the_page(app, tournament_id) == {challenger: 0}


def test_cancelling_the_tournament_lets_the_waiting_results_in(app, client):
    tournament_id, challenger, matches = small_gauntlet(app)
    for match_id in list(matches)[1:5]:  # the first match is still queued
        win(app, match_id, matches[match_id], challenger)
    assert sprt_status(app, tournament_id)["waiting"] == 4
    answer = client.post(f"/api/tournaments/{tournament_id}/cancel")
    assert answer.status_code == 200, answer.get_json()
    [status] = answer.get_json()["sprt_status"]["challengers"]
    assert (status["observations"], status["waiting"], status["score"]) == (4, 0, 1.0)


def test_deleting_a_bot_lets_the_results_waiting_behind_its_matches_in(app):
    tournament_id, challenger, matches = small_gauntlet(app)
    first = next(iter(matches.values()))
    blocker = next(bot for bot in first if bot != challenger)  # its match is queued
    later = [match_id for match_id in list(matches)[1:] if blocker not in matches[match_id]]
    for match_id in later[:3]:
        win(app, match_id, matches[match_id], challenger)
    assert sprt_status(app, tournament_id)["waiting"] == 3
    with app.extensions["arena.db"].session() as session:
        services.delete_bot(session, session.get(Bot, blocker))
    status = sprt_status(app, tournament_id)
    assert (status["observations"], status["waiting"]) == (3, 0)


@pytest.mark.parametrize("deal", ["independent", "duplicate"])
def test_any_finishing_order_gives_each_challenger_its_schedule_order_test(app, deal):
    """Twenty challengers at three-seat tables (each challenger's matches far apart in
    the schedule), a tournament created after it, results in a random order and one
    match in ten failed (the worker then calls ``standings.skip_unplayed``): every
    challenger's test ends where the same results taken in schedule order end it."""
    rule = {"elo0": 0, "elo1": 400, "alpha": 0.1, "beta": 0.1}
    ids = add_bots(app, [f"c{i:02d}" for i in range(20)] + [f"f{i}" for i in range(4)])
    challengers = ids[:20]
    with app.extensions["arena.db"].session() as session:
        tournament, _ = services.create_tournament(
            session, app.extensions["arena.config"], name="many", game="cactus",
            options=None, bot_ids=ids, seats_per_match=3, format="gauntlet",
            challenger_ids=challengers, matches_per_bot=12, sprt=rule, seed=5, deal=deal,
        )  # fmt: skip
        tournament_id = tournament.id
        services.create_tournament(
            session, app.extensions["arena.config"], name="next", game="cactus",
            options=None, bot_ids=ids[:3], seats_per_match=3, games_per_pairing=3,
        )  # fmt: skip
    matches = schedule(app, tournament_id)
    rng = random.Random(8)
    strength = {bot: rng.choice([0.05, 0.5, 0.95]) for bot in challengers}
    failed = {match_id for match_id, _ in matches if rng.random() < 0.1}
    ranks = {}
    for match_id, seats in matches:
        hero = next(bot for bot in seats if bot in strength)
        first = rng.random() < strength[hero]
        others = iter(rng.sample([1, 2, 3], 3) if not first else [2, 3])
        ranks[match_id] = [1 if bot == hero and first else next(others) for bot in seats]
    expected = schedule_order_test(matches, ranks, failed, strength, rule, deal)
    assert {e["decision"] for e in expected.values()} >= {"H0", "H1"}

    order = [match_id for match_id, _ in matches]
    rng.shuffle(order)
    for match_id in order:
        if match_id in failed:
            with app.extensions["arena.db"].session() as session:
                match = session.get(Match, match_id)
                if match.status == "queued":
                    match.status = "failed"
                    standings.skip_unplayed(session, tournament_id)
        else:
            store(app, match_id, {"ranks": ranks[match_id], "forfeited": []})
    body = app.test_client().get(f"/api/tournaments/{tournament_id}?crosstable=false")
    for status in body.get_json()["sprt_status"]["challengers"]:
        want = expected[status["bot_id"]]
        assert status["observations"] == want["observations"], status
        assert status["decision"] == want["decision"], status
        assert status["llr"] == pytest.approx(want["llr"]) and status["waiting"] == 0


def schedule_order_test(
    matches: list[tuple[int, list[int]]],
    ranks: dict[int, list[int]],
    failed: set[int],
    challengers: dict[int, float],
    rule: dict[str, float],
    deal: str,
) -> dict[int, dict[str, Any]]:
    """Each challenger's test, its results taken one by one in schedule order (a deal's
    rotations together; a deal or match that failed skipped) until it decides."""
    sprt = formats.Sprt(**rule)
    units: dict[int, list[list[int]]] = {bot: [] for bot in challengers}
    for position, (match_id, seats) in enumerate(matches):
        hero = next(bot for bot in seats if bot in challengers)
        rotation = position % 3 if deal == "duplicate" else 0
        if rotation == 0:
            units[hero].append([])
        units[hero][-1].append(match_id)
    result = {}
    for bot, observations in units.items():
        n, total, total_sq, llr, decision = 0, 0.0, 0.0, 0.0, None
        for unit in observations:
            if decision is not None or failed & set(unit):
                continue
            scores = []
            for match_id in unit:
                seats = dict(matches)[match_id]
                mine = ranks[match_id][seats.index(bot)]
                scores.append(sum(mine < r for r in ranks[match_id]) / 2)
            score = sum(scores) / len(scores)
            n, total, total_sq = n + 1, total + score, total_sq + score * score
            llr = formats.sprt_llr(n, total, total_sq, sprt)
            decision = formats.sprt_decision(llr, sprt)
        result[bot] = {"observations": n, "llr": llr, "decision": decision}
    return result


def test_a_decision_cancels_the_challengers_queued_matches(make_app, database_url):
    """On either database: once decided, the challenger's queued matches are cancelled
    (on PostgreSQL without waiting for one a worker holds), its running ones still count
    in the standings, and nothing waits."""
    database = Database(database_url)
    database.upgrade()
    database.dispose()
    app = make_app(database_url=database_url)
    tournament_id, challenger, matches = small_gauntlet(app)
    rule = {"elo0": 0, "elo1": 400, "alpha": 0.1, "beta": 0.1}
    with app.extensions["arena.db"].session() as session:
        session.get(Tournament, tournament_id).sprt = rule
    ids = list(matches)
    set_status(app, ids[3], "running")  # a worker plays it meanwhile
    for match_id in ids[:3]:
        win(app, match_id, matches[match_id], challenger)
    status = sprt_status(app, tournament_id)
    assert (status["decision"], status["observations"], status["waiting"]) == ("H1", 3, 0)
    progress = app.test_client().get(f"/api/tournaments/{tournament_id}").get_json()["progress"]
    assert progress["cancelled"] == len(ids) - 4 and progress["running"] == 1
    win(app, ids[3], matches[ids[3]], challenger)  # the running one ends
    detail = app.test_client().get(f"/api/tournaments/{tournament_id}").get_json()
    [status] = detail["sprt_status"]["challengers"]
    assert status["observations"] == 3 and detail["status"] == "finished"
    assert next(r for r in detail["standings"] if r["bot_id"] == challenger)["matches"] == 4
