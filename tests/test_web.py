"""The server-rendered pages, through Flask's test client, on a migrated SQLite database.

Data is written with the models directly; the match shown by the replay viewer is a real
match played by the referee with in-process random policies.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy.orm import Session

from arena.app import create_app
from arena.config import Config
from arena.db import Database
from arena.games import GAMES, make_policy
from arena.models import (
    Bot,
    FittedRating,
    Match,
    MatchSeat,
    Rating,
    Replay,
    Tournament,
    TournamentEntry,
)
from arena.referee import PolicyClient, Referee, policy_rng
from arena.replay import seat_events
from arena.web.replay_steps import step_positions

NAV = ("Leaderboards", "Bots", "Tournaments", "API docs")
DASH = "\u2013"  # an en dash, as the pages put between numbers


# -- building an app and its data -------------------------------------------------------
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
    return match


def queued_match(session: Session, game: str, bots: list[Bot], tournament: Tournament) -> Match:
    match = Match(tournament=tournament, game=game, seed=99, status="queued")
    match.seats = [MatchSeat(seat=s, bot_id=b.id) for s, b in enumerate(bots)]
    session.add(match)
    session.flush()
    return match


@pytest.fixture(scope="module")
def empty_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    app = make_app(tmp_path_factory.mktemp("empty"))
    yield app
    close_app(app)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Four cactus bots with ratings, a finished and a running tournament, a ladder match,
    a failed match, and a bot whose name would be markup if it were not escaped."""
    app = make_app(tmp_path_factory.mktemp("web"))
    ids: dict[str, Any] = {"app": app}
    with app.extensions["arena.db"].session() as session:
        names = ["delta", "alpha", "charlie", "bravo"]
        bots = {n: add_bot(session, n, ["cactus", "president"]) for n in names}
        sneaky = add_bot(session, "<script>alert(1)</script>", ["cactus"])
        add_bot(session, "gone", ["cactus"], status="deleted")
        # Elo order: charlie, alpha, delta, bravo (neither id nor name order)
        elos = {"charlie": 1612.4, "alpha": 1540.0, "delta": 1490.2, "bravo": 1357.9}
        for name, elo in elos.items():
            session.add(Rating(bot_id=bots[name].id, game="cactus", elo=elo, matches=12))
        session.add(
            FittedRating(
                bot_id=bots["charlie"].id,
                game="cactus",
                rating=1598.7,
                low=1511.3,
                high=1686.1,
                matches=12,
            )
        )
        finished = Tournament(
            name="Spring cup",
            game="cactus",
            options={},
            seats_per_match=2,
            games_per_pairing=2,
            seed=7,
            status="finished",
            finished_at=dt.datetime.now(dt.UTC),
        )
        entrants = [bots["alpha"], bots["bravo"], bots["charlie"]]
        finished.entries = [TournamentEntry(bot_id=b.id) for b in entrants]
        session.add(finished)
        session.flush()
        matches = []
        seed = 100
        for i, a in enumerate(entrants):
            for b in entrants[i + 1 :]:
                for pair in ((a, b), (b, a)):
                    seed += 1
                    matches.append(play_match(session, "cactus", list(pair), seed, finished))
        running = Tournament(
            name="Live <b>league</b>",
            game="cactus",
            options={},
            seats_per_match=2,
            games_per_pairing=2,
            seed=8,
            status="running",
        )
        running.entries = [TournamentEntry(bot_id=b.id) for b in (bots["alpha"], sneaky)]
        session.add(running)
        session.flush()
        live_done = play_match(session, "cactus", [bots["alpha"], sneaky], 5, running)
        live_queued = queued_match(session, "cactus", [sneaky, bots["alpha"]], running)
        ladder = play_match(session, "president", [bots[n] for n in names[:3]], 11)
        failed = Match(game="cactus", seed=3, status="failed", error="the worker gave up")
        failed.seats = [MatchSeat(seat=0, bot_id=bots["delta"].id)]
        failed.seats.append(MatchSeat(seat=1, bot_id=bots["bravo"].id))
        session.add(failed)
        session.flush()
        ids.update(
            bots={n: b.id for n, b in bots.items()},
            sneaky=sneaky.id,
            elos=elos,
            finished=finished.id,
            running=running.id,
            matches=[m.id for m in matches],
            live_done=live_done.id,
            live_queued=live_queued.id,
            ladder=ladder.id,
            failed=failed.id,
        )
    yield ids
    close_app(app)


@pytest.fixture
def client(data: dict[str, Any]) -> FlaskClient:
    return data["app"].test_client()


def page_text(body: bytes | str) -> str:
    """The visible text of a page, roughly: tags removed, entities decoded."""
    if isinstance(body, bytes):
        body = body.decode()
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def assert_page(response: Any) -> str:
    assert response.status_code == 200, response.data[:500]
    assert response.mimetype == "text/html"
    text = page_text(response.data)
    for item in NAV:
        assert item in text
    assert 'href="/api/docs"' in response.data.decode()
    return text


# -- every page renders ------------------------------------------------------------------
STATIC_PAGES = [
    "/",
    "/leaderboard",
    *(f"/leaderboard/{game}" for game in GAMES),
    "/bots",
    "/bots/register",
    "/tournaments",
    "/tournaments/new",
]


@pytest.mark.parametrize("url", STATIC_PAGES)
def test_every_page_renders_with_an_empty_database(empty_app: Flask, url: str) -> None:
    text = assert_page(empty_app.test_client().get(url))
    assert "Traceback" not in text


def test_empty_lists_say_so(empty_app: Flask) -> None:
    client = empty_app.test_client()
    assert "No tournaments yet" in assert_page(client.get("/"))
    assert "No matches yet" in assert_page(client.get("/"))
    assert "No bots yet" in assert_page(client.get("/bots"))
    assert "No rated bots in Cactus yet" in assert_page(client.get("/leaderboard/cactus"))
    assert "No active bot plays this game" in assert_page(client.get("/tournaments/new"))


def test_every_page_renders_with_data(client: FlaskClient, data: dict[str, Any]) -> None:
    urls = [
        *STATIC_PAGES,
        *(f"/bots/{i}" for i in data["bots"].values()),
        f"/bots/{data['sneaky']}",
        f"/tournaments/{data['finished']}",
        f"/tournaments/{data['running']}",
        *(f"/matches/{i}" for i in data["matches"]),
        f"/matches/{data['live_queued']}",
        f"/matches/{data['ladder']}",
        f"/matches/{data['failed']}",
    ]
    for url in urls:
        assert_page(client.get(url))


@pytest.mark.parametrize(
    "url", ["/bots/999", "/tournaments/999", "/matches/999", "/leaderboard/chess"]
)
def test_unknown_ids_are_404(client: FlaskClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 404
    text = page_text(response.data)
    assert "Not found" in text
    assert "API docs" in text  # the page keeps the nav bar


def test_static_assets_are_served(client: FlaskClient) -> None:
    for name in ("arena.css", "forms.js", "replay.js"):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200
        response.close()


def test_no_page_loads_anything_from_another_host(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    for url in ("/", f"/matches/{data['matches'][0]}", "/bots/register", "/tournaments/new"):
        body = client.get(url).data.decode()
        assert not re.search(r"""(src|href)=["'](https?:)?//""", body), url


# -- content ----------------------------------------------------------------------------
def test_the_overview_lists_games_tournaments_and_matches(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    body = client.get("/").data.decode()
    for game in GAMES.values():
        assert f'href="/leaderboard/{game.id}"' in body
        assert html.escape(game.title) in body
    assert f'href="/tournaments/{data["finished"]}"' in body
    assert f'href="/matches/{data["ladder"]}"' in body


def test_the_leaderboard_is_in_elo_order_with_the_fitted_interval(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    body = client.get("/leaderboard/cactus").data.decode()
    shown = re.findall(r'<tr data-bot-id="(\d+)">', body)
    by_elo = sorted(data["elos"], key=lambda n: -data["elos"][n])
    assert shown == [str(data["bots"][n]) for n in by_elo]
    text = page_text(body)
    assert "1612" in text and "1358" in text
    assert "1599" in text and f"1511 {DASH} 1686" in text  # charlie's fitted rating and interval
    assert "95% interval" in text and "maximum-likelihood" in text
    assert text.count("not fitted yet") == 3


def test_a_deleted_bot_is_not_listed(client: FlaskClient) -> None:
    assert "gone" not in page_text(client.get("/bots").data).split()


def test_the_bot_page_shows_ratings_and_matches_but_no_secret(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    bot_id = data["bots"]["alpha"]
    body = client.get(f"/bots/{bot_id}").data.decode()
    text = page_text(body)
    assert "alpha plays at random" in text
    assert "2 of 4" in text  # alpha's position on the cactus leaderboard
    assert "1540" in text
    for match_id in data["matches"][:4]:
        assert f'href="/matches/{match_id}"' in body
    assert "not-shown-anywhere" not in body


def test_names_are_escaped(client: FlaskClient, data: dict[str, Any]) -> None:
    for url in ("/bots", f"/bots/{data['sneaky']}", f"/tournaments/{data['running']}"):
        body = client.get(url).data.decode()
        assert "<script>alert(1)</script>" not in body
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    body = client.get(f"/tournaments/{data['running']}").data.decode()
    assert "<b>league</b>" not in body and "&lt;b&gt;league&lt;/b&gt;" in body


def test_the_tournament_page_shows_standings_and_the_crosstable(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    from arena import services

    with data["app"].extensions["arena.db"].session() as session:
        tournament = session.get(Tournament, data["finished"])
        standings = services.standings(session, tournament)
        table = services.crosstable(session, tournament)
    body = client.get(f"/tournaments/{data['finished']}").data.decode()
    standings_html = body.split('class="data standings"')[1].split("</table>")[0]
    assert re.findall(r'<tr data-bot-id="(\d+)">', standings_html) == [
        str(r["bot_id"]) for r in standings
    ]
    crosstable_html = body.split('class="data crosstable"')[1].split("</table>")[0]
    cells = re.findall(rf'<td class="wdl [a-z]+">(\d+){DASH}(\d+){DASH}(\d+)</td>', crosstable_html)
    expected = [
        tuple(
            str(table["cells"][str(a["id"])][str(b["id"])][k]) for k in ("wins", "draws", "losses")
        )
        for a in table["bots"]
        for b in table["bots"]
        if a["id"] != b["id"]
    ]
    assert cells == expected
    assert sum(int(w) + int(d) + int(lo) for w, d, lo in cells) == 2 * 6  # 6 two-seat matches
    text = page_text(body)
    assert "6/6 done" in text
    for match_id in data["matches"]:
        assert f'href="/matches/{match_id}"' in body
    assert 'id="cancel-form"' not in body  # finished: nothing to cancel
    assert "data-refresh" not in body


def test_a_running_tournament_refreshes_and_can_be_cancelled(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    body = client.get(f"/tournaments/{data['running']}").data.decode()
    assert 'data-refresh="5"' in body
    assert f'data-api="/api/tournaments/{data["running"]}/cancel"' in body
    assert "1/2 done" in page_text(body) and "1 queued" in page_text(body)


def test_the_tournament_form_lists_games_presets_and_bots(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    body = client.get("/tournaments/new").data.decode()
    presets = {
        game: json.loads(html.unescape(value))
        for game, value in re.findall(r'<option value="([^"]+)"[^>]*data-presets="([^"]*)"', body)
    }
    assert presets == {game.id: list(game.presets) for game in GAMES.values()}
    for bot_id in data["bots"].values():
        assert f'name="bot_ids" value="{bot_id}"' in body


def test_the_replay_page_embeds_its_match(client: FlaskClient, data: dict[str, Any]) -> None:
    match_id = data["matches"][0]
    body = client.get(f"/matches/{match_id}").data.decode()
    assert f'data-match-id="{match_id}"' in body
    assert f'data-replay-url="/api/matches/{match_id}/replay"' in body
    assert 'src="/static/replay.js"' in body
    positions = json.loads(
        re.search(
            r'<script type="application/json" id="replay-positions">(.*?)</script>', body, re.S
        ).group(1)
    )
    with data["app"].extensions["arena.db"].session() as session:
        record = session.get(Replay, match_id).record
    assert positions["all"][-1] == len(record["events"])
    for seat in range(len(record["players"])):
        assert positions["seats"][seat][-1] == len(seat_events(record, seat))
    text = page_text(body)
    assert "Seat 0 · " in text and "Seat 1 · " in text and "All" in text
    assert "Result" in text and "Strikes" in text


def test_a_match_without_replay_says_so(client: FlaskClient, data: dict[str, Any]) -> None:
    body = client.get(f"/matches/{data['live_queued']}").data.decode()
    assert 'id="replay"' not in body
    assert "No replay: the match is queued" in page_text(body)
    assert 'data-refresh="5"' in body
    failed = client.get(f"/matches/{data['failed']}").data.decode()
    assert "the worker gave up" in failed and "data-refresh" not in failed


# -- placing decisions in the event list -------------------------------------------------
@pytest.mark.parametrize("game", sorted(GAMES))
def test_step_positions_place_every_step(game: str) -> None:
    seats = GAMES[game].min_players
    clients = [PolicyClient(make_policy(game, "random", policy_rng(3, s))) for s in range(seats)]
    record = Referee().run(game, clients, 3).to_json()
    positions = step_positions(record)
    assert positions is not None
    everyone = positions["all"]
    assert len(everyone) == len(record["steps"]) + 1
    assert everyone[0] >= 1  # the deal happens before any decision
    assert everyone == sorted(everyone) and everyone[-1] == len(record["events"])
    for seat in range(seats):
        mine = positions["seats"][seat]
        assert mine == sorted(mine) and len(mine) == len(everyone)
        assert all(m <= e for m, e in zip(mine, everyone, strict=True))


def test_step_positions_refuse_a_record_that_does_not_replay() -> None:
    clients = [PolicyClient(make_policy("cactus", "random", policy_rng(1, s))) for s in range(2)]
    record = Referee().run("cactus", clients, 1).to_json()
    assert step_positions({**record, "seed": 2}) is None
    assert step_positions({**record, "game": "chess"}) is None
    fly = [[{"seat": 0, "kind": "turn", "action": {"type": "fly"}}]]
    assert step_positions({**record, "steps": fly}) is None
