"""The server end to end, in every lane, with real Celery worker processes and real HTTP
bots: tournaments, duplicate deliveries, concurrent results and rating rebuilds."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler

import pytest
from arenabot import make_server
from sqlalchemy import func, select

from arena.app import create_app
from arena.match.records import check
from arena.models import Match, MatchSeat, Rating, RatingChange, Replay
from arena.worker.queue import enqueue_matches
from arena.worker.refits import rebuild_ratings
from sample_bots.policy_bot import PolicyBot
from tests.support.badbots import serving
from tests.support.lanes import Lane, lane, wait_for

pytestmark = pytest.mark.xdist_group("server")


@pytest.fixture(scope="module", params=["embedded", "services", "rabbitmq"])
def server(request, tmp_path_factory) -> Iterator[Lane]:
    with lane(request.param, tmp_path_factory.mktemp(request.param)) as the_lane:
        yield the_lane


@pytest.fixture(scope="module")
def api(server):
    app = create_app(server.config)
    yield app.test_client()
    # closed here, not whenever the collector gets to it: an open PostgreSQL connection
    # collected during a later test is a ResourceWarning, an error under this suite
    app.extensions["arena.db"].dispose()


@pytest.fixture(scope="module")
def bots(server, api) -> Iterator[dict[str, list[int]]]:
    """Sample bots over HTTP on loopback, registered through the API, signing on."""
    lineup = {
        "cactus": ["heuristic", "random", "random", "random", "heuristic"],
        "president": ["heuristic", "random", "random"],
    }
    ids: dict[str, list[int]] = {}
    with ExitStack() as stack:
        for game, policies in lineup.items():
            for i, policy in enumerate(policies):
                bot_server = make_server(PolicyBot(game, policy), "127.0.0.1", 0, secret=None)
                bot_server.serve_in_background()
                stack.callback(bot_server.close)
                answer = api.post(
                    "/api/bots",
                    json={
                        "name": f"{server.name}-{game}-{policy}-{i}",
                        "endpoint": bot_server.url,
                        "owner": "tests",
                        "games": [game],
                    },
                )
                assert answer.status_code == 201, answer.json
                bot_server.secret = answer.json["signing_secret"]
                ids.setdefault(game, []).append(answer.json["id"])
        yield ids


def finished(server: Lane, match_ids: list[int]) -> bool:
    with server.db.session() as s:
        statuses = s.scalars(select(Match.status).where(Match.id.in_(match_ids))).all()
    return all(status in ("finished", "failed") for status in statuses)


def test_a_round_robin_is_played_by_the_workers(server, api, bots):
    answer = api.post(
        "/api/tournaments",
        json={
            "name": "rr",
            "game": "president",
            "bot_ids": bots["president"],
            "seats_per_match": 3,
            "games_per_pairing": 3,
            "seed": 11,
        },
    )
    assert answer.status_code == 201, answer.json
    tid = answer.json["id"]

    def over() -> bool:
        return api.get(f"/api/tournaments/{tid}").json["status"] == "finished"

    wait_for(over, what="the president round robin")
    tournament = api.get(f"/api/tournaments/{tid}").json
    assert tournament["progress"]["finished"] == 3
    assert sum(row["matches"] for row in tournament["standings"]) == 9
    # every bot played every seat once
    with server.db.session() as s:
        seats = s.execute(
            select(MatchSeat.bot_id, MatchSeat.seat).join(Match).where(Match.tournament_id == tid)
        ).all()
    assert sorted(seats) == sorted((b, k) for b in bots["president"] for k in range(3))
    # the replay of a finished match, through the API, re-simulates to the same outcome
    match_id = api.get(f"/api/matches?tournament_id={tid}").json[0]["id"]
    record = api.get(f"/api/matches/{match_id}/replay").json
    assert check(record) == []
    assert record["strikes"] == [0, 0, 0]  # signed requests were accepted by the bots


def test_a_duplicate_gauntlet_sent_in_one_message_is_played(server, api, bots, monkeypatch):
    """More matches than ``ENQUEUE_INLINE`` go to the broker as one ``send_matches``
    message that a worker fans out; duplicate deals are played once per rotation and
    counted in the standings once every rotation is in."""
    from arena.worker import queue

    monkeypatch.setattr(queue, "ENQUEUE_INLINE", 2)
    challenger = bots["president"][0]
    answer = api.post(
        "/api/tournaments",
        json={
            "name": "gauntlet",
            "game": "president",
            "bot_ids": bots["president"],
            "seats_per_match": 3,
            "format": "gauntlet",
            "challenger_ids": [challenger],
            "matches_per_bot": 6,
            "deal": "duplicate",
            "seed": 5,
        },
    )
    assert answer.status_code == 201, answer.json
    tid = answer.json["id"]
    wait_for(
        lambda: api.get(f"/api/tournaments/{tid}").json["status"] == "finished",
        what="the duplicate gauntlet",
    )
    tournament = api.get(f"/api/tournaments/{tid}").json
    assert tournament["progress"]["finished"] == 6
    rows = {row["bot_id"]: row for row in tournament["standings"]}
    assert {row["deals"] for row in rows.values()} == {2}  # two deals, three rotations each
    assert sum(row["par_per_deal"] for row in rows.values()) == pytest.approx(0.0)
    with server.db.session() as s:
        deals = s.execute(
            select(Match.deal, func.count(func.distinct(Match.seed)), func.count())
            .where(Match.tournament_id == tid)
            .group_by(Match.deal)
        ).all()
    assert sorted(count for _, _, count in deals) == [3, 3]
    assert {seeds for _, seeds, _ in deals} == {1}


def _matches(server: Lane, game: str, bot_ids: list[int], count: int) -> list[int]:
    ids = []
    with server.db.session() as s:
        for i in range(count):
            pair = [bot_ids[i % len(bot_ids)], bot_ids[(i + 1 + i // len(bot_ids)) % len(bot_ids)]]
            if pair[0] == pair[1]:
                pair[1] = bot_ids[(i + 2) % len(bot_ids)]
            match = Match(game=game, kind="ladder", options={}, seed=1000 + i)
            match.seats = [MatchSeat(seat=k, bot_id=b) for k, b in enumerate(pair)]
            s.add(match)
            s.flush()
            ids.append(match.id)
    return ids


def test_run_match_delivered_twice_records_one_result(server, bots):
    [match_id] = _matches(server, "cactus", bots["cactus"], 1)
    enqueue_matches(server.config, [match_id, match_id, match_id])  # three deliveries
    wait_for(lambda: finished(server, [match_id]))
    wait_for(lambda: _quiet(server), what="the duplicate deliveries")
    with server.db.session() as s:
        assert s.scalar(select(func.count()).where(Replay.match_id == match_id)) == 1
        changes = s.scalar(select(func.count()).where(RatingChange.match_id == match_id))
        assert changes == 2
        assert s.get(Match, match_id).status == "finished"


def _quiet(server: Lane) -> bool:
    """No match is running any more (late duplicates have had their say)."""
    with server.db.session() as s:
        return not s.scalar(select(func.count()).where(Match.status == "running"))


def test_forty_concurrent_results_leave_ratings_equal_to_a_rebuild(server, bots):
    ids = _matches(server, "cactus", bots["cactus"], 40)
    enqueue_matches(server.config, ids)
    wait_for(lambda: finished(server, ids), timeout=240)
    report = rebuild_ratings(server.db, "cactus")
    assert report["differences"] == {}
    with server.db.session() as s:
        stored = {r.bot_id: r.elo for r in s.scalars(select(Rating).where(Rating.game == "cactus"))}
        assert set(stored) == set(bots["cactus"])
        rated = s.scalar(
            select(func.count()).where(Match.rating_seq.is_not(None), Match.game == "cactus")
        )
    assert report["matches"] == rated >= 40
    # and through the command line, as an operator would run it
    done = subprocess.run(
        [sys.executable, "-m", "arena", "ratings", "rebuild", "--game", "cactus"],
        env={**__import__("os").environ, **server.env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "equal to what is stored" in done.stdout


def test_the_ladder_pairs_bots_close_in_rating(server, api, bots):
    from arena.worker.ladder import schedule_ladder

    answer = api.put("/api/ladders/cactus", json={"enabled": True, "seats_per_match": 2})
    assert answer.status_code == 200, answer.json
    # the ranking the ladder sees: its matches, played at once, change it right after
    with server.db.session() as s:
        elo = {r.bot_id: r.elo for r in s.scalars(select(Rating).where(Rating.game == "cactus"))}
    ranking = sorted(bots["cactus"], key=lambda b: (-elo.get(b, 1500.0), b))
    created = schedule_ladder(server.db, server.config, seed=3)
    assert len(created) == len(bots["cactus"]) // 2
    with server.db.session() as s:
        for match_id in created:
            seats = [seat.bot_id for seat in s.get(Match, match_id).seats]
            positions = sorted(ranking.index(b) for b in seats)
            assert positions[1] - positions[0] == 1  # neighbours in the ranking
    assert schedule_ladder(server.db, server.config, seed=4) == []  # one round at a time
    wait_for(lambda: finished(server, created))
    api.put("/api/ladders/cactus", json={"enabled": False, "seats_per_match": 2})
    assert schedule_ladder(server.db, server.config, seed=5) == []


def test_the_worker_survives_a_bot_that_disappears(server, api, bots):
    bot_server = make_server(PolicyBot("cactus", "random"), "127.0.0.1", 0, secret=None)
    thread = threading.Thread(target=bot_server.serve_forever, daemon=True)
    thread.start()
    answer = api.post(
        "/api/bots",
        json={"name": f"{server.name}-gone", "endpoint": bot_server.url, "owner": "tests",
              "games": ["cactus"]},
    )  # fmt: skip
    assert answer.status_code == 201
    gone = answer.json["id"]
    bot_server.close()  # registered, then gone
    [match_id] = _matches(server, "cactus", [gone, bots["cactus"][0]], 1)
    enqueue_matches(server.config, [match_id])
    wait_for(lambda: finished(server, [match_id]))
    record = api.get(f"/api/matches/{match_id}/replay").json
    assert record["outcome"]["struck_out"] == [0]
    assert record["outcome"]["ranks"][0] == 2


class OneAtATime(BaseHTTPRequestHandler):
    """A bot that declares it takes one request at a time (``capacity`` 1), thinks a
    little and plays the last legal action; it counts the requests it ever had at once,
    from their first byte to their answer."""

    protocol_version = "HTTP/1.1"
    THINK = 0.02
    lock = threading.Lock()
    at_once = most_at_once = 0

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        self.wfile.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))

    def do_GET(self) -> None:
        self._send({"apiversion": "1", "name": "one", "games": ["cactus"], "capacity": 1})

    def do_POST(self) -> None:
        cls = type(self)
        with cls.lock:
            cls.at_once += 1
            cls.most_at_once = max(cls.most_at_once, cls.at_once)
        try:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path == "/act":
                time.sleep(self.THINK)
                self._send({"action": payload["legal_actions"][-1]})
            else:
                self._send({})
        finally:
            with cls.lock:
                cls.at_once -= 1


def test_a_bot_that_takes_one_request_at_a_time_gets_one_from_every_worker_together(
    server, api, bots
):
    """Two worker processes, holding two matches each, play a round robin in which a bot
    that takes one request at a time has four matches: it never has two requests at once
    (each worker would otherwise send it one, and the second would wait inside the bot
    with its deadline running), and it is never charged a fault."""
    bot = type("Counting", (OneAtATime,), {})
    with ExitStack() as stack:
        # two workers that hold two matches each: both play the bot's matches at once
        server.stop_workers()
        stack.callback(lambda: [server.start_worker() for _ in range(2)])  # the lane's own
        stack.callback(server.stop_workers)
        for _ in range(2):
            server.start_worker("--concurrency=2")
        url = stack.enter_context(serving(bot))
        answer = api.post(
            "/api/bots",
            json={"name": f"{server.name}-one-at-a-time", "endpoint": url, "owner": "tests"},
        )
        assert answer.status_code == 201, answer.json
        assert answer.json["info"]["capacity"] == 1
        slow = answer.json["id"]
        answer = api.post(
            "/api/tournaments",
            json={"name": "one at a time", "game": "cactus", "seed": 5,
                  "bot_ids": [slow, *bots["cactus"][:2]], "seats_per_match": 2,
                  "games_per_pairing": 2},
        )  # fmt: skip
        assert answer.status_code == 201, answer.json
        tid = answer.json["id"]
        wait_for(
            lambda: api.get(f"/api/tournaments/{tid}").json["status"] == "finished",
            timeout=180,
            what="the round robin with a slow bot",
        )
    assert bot.most_at_once == 1
    with server.db.session() as s:
        strikes = s.scalars(
            select(MatchSeat.strikes)
            .join(Match)
            .where(Match.tournament_id == tid, MatchSeat.bot_id == slow)
        ).all()
    assert len(strikes) == 4 and set(strikes) == {0}
