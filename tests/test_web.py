"""The server-rendered pages, through Flask's test client, on a migrated SQLite database.

Data is written with the models directly; the match shown by the replay viewer is a real
match played by the referee with in-process random policies.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena import services
from arena.competition.standings import crosstable, sprt_summary
from arena.competition.standings import standings as tournament_standings
from arena.games import GAMES
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
from arena.web.pages import signed
from arena.worker import lifecycle
from tests.support.web import (
    add_bot,
    close_app,
    make_app,
    page_text,
    play_match,
    save_through_the_worker,
    schedule,
)

NAV = ("Leaderboards", "Bots", "Tournaments", "API docs")
DASH = "\u2013"  # an en dash, as the pages put between numbers


# -- building an app and its data -------------------------------------------------------


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
    assert "No match played yet" in assert_page(client.get("/"))
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


def played_count(app: Flask, **where: Any) -> int:
    """Finished matches (of a game, or with a bot seated), from the database."""
    with app.extensions["arena.db"].session() as session:
        query = select(Match.id).where(Match.status == "finished")
        if "game" in where:
            query = query.where(Match.game == where["game"])
        if "bot_id" in where:
            seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == where["bot_id"])
            query = query.where(Match.id.in_(seated))
        return len(session.scalars(query).all())


def test_counts_of_matches_are_of_matches_played(client: FlaskClient, data: dict[str, Any]) -> None:
    app = data["app"]
    # the overview: per game, its finished matches (not the queued or failed ones)
    body = client.get("/").data.decode()
    cards = dict(re.findall(r'href="/leaderboard/([a-z-]+)">[^<]*</a></h3>(.*?)</li>', body, re.S))
    for game in GAMES:
        n = played_count(app, game=game)
        assert re.search(rf"\b{n} match(es)? played\b", page_text(cards[game])), game
    assert played_count(app, game="cactus") == 7  # 9 cactus matches: one queued, one failed
    # and its latest results are matches played
    latest = re.findall(r'href="/matches/(\d+)"', body.split("Latest results")[1])
    assert str(data["live_queued"]) not in latest and str(data["failed"]) not in latest
    assert str(data["live_done"]) in latest
    # the bot list: the matches each bot played
    rows = dict(
        re.findall(
            r'<a href="/bots/(\d+)">.*?<td class="num">(\d+)</td>',
            client.get("/bots").data.decode(),
            re.S,
        )
    )
    for bot_id in (*data["bots"].values(), data["sneaky"]):
        assert rows[str(bot_id)] == str(played_count(app, bot_id=bot_id)), bot_id
    assert rows[str(data["sneaky"])] == "1"  # one match played, one queued


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
    with data["app"].extensions["arena.db"].session() as session:
        tournament = session.get(Tournament, data["finished"])
        standings = tournament_standings(session, tournament)
        table = crosstable(session, tournament)
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


def test_the_replay_page_points_its_viewer_at_the_frames(
    client: FlaskClient, data: dict[str, Any]
) -> None:
    match_id = data["matches"][0]
    body = client.get(f"/matches/{match_id}").data.decode()
    assert f'data-frames-url="/api/matches/{match_id}/frames"' in body
    assert 'src="/static/replay.js"' in body
    with data["app"].extensions["arena.db"].session() as session:
        record = session.get(Replay, match_id).record
    seats = [str(seat) for seat in range(len(record["players"]))]
    opened = re.search(r'data-open="([^"]*)"', body).group(1)
    assert json.loads(html.unescape(opened)) == ["all", "public", *seats]
    text = page_text(body)
    assert "Seat 0 · " in text and "Seat 1 · " in text and "All cards" in text
    assert "Result" in text and "Strikes" in text
    # the page holds no card: the viewer asks for one perspective's frames at a time
    assert not re.search(r"\b(10|[2-9AJQK])[CDHS]\b", body)


def test_a_match_not_played_yet_is_followed_live(client: FlaskClient, data: dict[str, Any]) -> None:
    body = client.get(f"/matches/{data['live_queued']}").data.decode()
    assert 'id="replay"' in body and 'data-initial="public"' in body
    assert json.loads(html.unescape(re.search(r'data-open="([^"]*)"', body).group(1))) == ["public"]
    assert "shown once the match is over" in page_text(body)  # its seed: the deal
    failed = client.get(f"/matches/{data['failed']}").data.decode()
    assert "the worker gave up" in failed and 'id="replay"' not in failed
    assert "No replay: the match is failed" in page_text(failed)


# -- formats: balanced, duplicate deals, gauntlets, large tournaments ----------------------
SPRT = {"elo0": 0, "elo1": 50, "alpha": 0.05, "beta": 0.05}


def finish_match(session: Session, match_id: int, ranks: list[int]) -> bool:
    """Store a result by hand and settle it (ratings, standings) as a worker does, a
    rotation of a duplicate deal once its deal is complete (``arena.worker.lifecycle``); False
    when the match is no longer queued (a decided challenger's)."""
    session.expire_all()  # settling cancels with a bulk update
    match = session.get(Match, match_id)
    if match.status != "queued":
        return False
    for seat in match.seats:
        seat.rank = ranks[seat.seat]
    match.status = "finished"
    match.finished_at = dt.datetime.now(dt.UTC)
    session.flush()
    lifecycle.settle_ready(session, match.tournament_id, pause_after=3)
    session.flush()
    return True


def play_gauntlet(session: Session, tournament_id: int, win_rates: dict[int, float]) -> None:
    """Every queued match in schedule order, each challenger winning at its rate."""
    rng = random.Random(11)
    for match_id in schedule(session, tournament_id):
        match = session.get(Match, match_id)
        seats = [s.bot_id for s in match.seats]
        hero = next(b for b in seats if b in win_rates)
        wins = rng.random() < win_rates[hero]
        finish_match(
            session,
            match_id,
            [(1 if wins else 2) if b == hero else (2 if wins else 1) for b in seats],
        )


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """45 cactus bots; a balanced tournament with duplicate deals, played out; a gauntlet
    with a stop rule whose two challengers are decided; one without; a balanced
    tournament of all 45 bots (90 matches, 3 played); a small one for the ETag."""
    app = make_app(tmp_path_factory.mktemp("formats"))
    config = app.extensions["arena.config"]
    ids: dict[str, Any] = {"app": app}
    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, f"b{i:02d}", ["cactus"]).id for i in range(45)]

        def create(name: str, entrants: list[int], **fields: Any) -> int:
            tournament, _ = services.create_tournament(
                session,
                config,
                name=name,
                game="cactus",
                options=None,
                bot_ids=entrants,
                seats_per_match=2,
                seed=5,
                **fields,
            )
            return tournament.id

        balanced = create(
            "Balanced cup", bots[:6], format="balanced", deal="duplicate", matches_per_bot=4
        )
        for match_id in schedule(session, balanced):  # the lower id wins, always
            seats = [s.bot_id for s in session.get(Match, match_id).seats]
            finish_match(session, match_id, [1 if b == min(seats) else 2 for b in seats])
        gauntlet = create(
            "Gauntlet <cup>",
            bots[:8],
            format="gauntlet",
            challenger_ids=bots[:2],
            matches_per_bot=200,
            sprt=SPRT,
        )
        play_gauntlet(session, gauntlet, {bots[0]: 0.9, bots[1]: 0.1})
        plain = create(
            "Plain gauntlet",
            bots[:5],
            format="gauntlet",
            challenger_ids=bots[:1],
            matches_per_bot=30,
        )
        big = create("Big league", bots, format="balanced", matches_per_bot=4)
        for match_id in schedule(session, big)[:3]:
            finish_match(session, match_id, [1, 2])
        small = create("Small league", bots[:4], format="balanced", matches_per_bot=2)
        ids.update(
            bots=bots, balanced=balanced, gauntlet=gauntlet, plain=plain, big=big, small=small
        )
    yield ids
    close_app(app)


@pytest.fixture
def fclient(formats: dict[str, Any]) -> FlaskClient:
    return formats["app"].test_client()


def section(body: str, section_id: str) -> str:
    """The markup of one ``<section id=...>`` of a page."""
    start = body.index(f'id="{section_id}"')
    return body[start : body.index("</section>", start)]


def test_a_balanced_tournament_with_duplicate_deals(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    tournament_id = formats["balanced"]
    body = fclient.get(f"/tournaments/{tournament_id}").data.decode()
    text = page_text(body)
    assert "Balanced: 4 matches per bot, 2 seats per match, duplicate deals" in text
    with formats["app"].extensions["arena.db"].session() as session:
        tournament = session.get(Tournament, tournament_id)
        balance = tournament.balance
        rows = tournament_standings(session, tournament)
    low, high = balance["matches_per_bot"]
    assert low == high == 4
    assert f"4 matches per bot, seat spread {balance['seat_spread']}, two bots meet" in text
    standings_html = section(body, "standings")
    assert "± par per deal" in page_text(standings_html) and "Deals" in standings_html
    shown = re.findall(r'<tr data-bot-id="(\d+)"', standings_html)
    assert shown == [str(r["bot_id"]) for r in rows]
    pars = re.findall(r'<td class="num par">([^<]*)</td>', standings_html)
    assert pars == [signed(r["par_per_deal"]) for r in rows]
    assert all(r["deals"] > 0 for r in rows)
    assert pars[0].startswith("+") and pars[-1].startswith("\u2212")  # a minus sign
    assert "Stop rule" not in text and 'class="data crosstable"' in body
    assert "data-refresh" not in body  # every match is played


def test_a_gauntlet_shows_its_stop_rule_and_decisions(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    tournament_id = formats["gauntlet"]
    hero, loser = formats["bots"][:2]
    body = fclient.get(f"/tournaments/{tournament_id}").data.decode()
    text = page_text(body)
    assert (
        "Gauntlet: up to 200 matches per challenger (the stop rule ends it sooner), "
        "2 seats per match, independent deals" in text
    )
    with formats["app"].extensions["arena.db"].session() as session:
        summary = sprt_summary(session, session.get(Tournament, tournament_id))
    rule = section(body, "stop-rule")
    rows = dict(re.findall(r'<tr data-bot-id="(\d+)">(.*?)</tr>', rule, re.S))
    assert set(rows) == {str(hero), str(loser)}
    assert "passed (H1)" in page_text(rows[str(hero)])
    assert "failed (H0)" in page_text(rows[str(loser)])
    for status in summary["challengers"]:
        row = rows[str(status["bot_id"])]
        assert f'<td class="num llr">{status["llr"]:.2f}</td>' in row
        assert f'<td class="num">{status["observations"]}</td>' in row
        assert re.search(r'class="gauge-mark gauge-h[01]" cx="\d+\.\d%"', row)
    assert f"{summary['lower']:.2f}" in page_text(rule) and f"{summary['upper']:.2f}" in page_text(
        rule
    )
    # challengers are marked in the standings; the name is escaped
    standings_html = section(body, "standings")
    assert standings_html.count('class="challenger"') == 2
    assert page_text(standings_html).count("challenger") == 2
    assert "Gauntlet &lt;cup&gt;" in body


def test_a_gauntlet_without_a_stop_rule_lists_its_challengers(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    body = fclient.get(f"/tournaments/{formats['plain']}").data.decode()
    assert 'id="stop-rule"' not in body
    challengers = page_text(section(body, "challengers"))
    assert "No stop rule" in challengers and "b00" in challengers and "b01" not in challengers


def test_a_large_tournament_leaves_the_crosstable_out(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    tournament_id = formats["big"]
    body = fclient.get(f"/tournaments/{tournament_id}").data.decode()
    assert 'class="data crosstable"' not in body
    part = section(body, "crosstable")
    assert "Left out at this size: 45 bots" in page_text(part)
    assert f'href="/api/tournaments/{tournament_id}"' in part
    assert len(re.findall(r'<tr data-bot-id="\d+"', section(body, "standings"))) == 45


def match_links(body: str) -> list[int]:
    return [int(i) for i in re.findall(r'href="/matches/(\d+)"', section(body, "matches"))]


def test_the_matches_of_a_tournament_come_in_pages(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    tournament_id = formats["big"]
    with formats["app"].extensions["arena.db"].session() as session:
        ids = schedule(session, tournament_id)
    assert 50 < len(ids) <= 100  # two pages (45 bots, 4 matches each at 2 seats: 90)
    url = f"/tournaments/{tournament_id}"
    first = fclient.get(url).data.decode()
    assert match_links(first) == ids[:50]
    assert "page 1 of 2" in page_text(first)
    assert f'href="{url}?page=2#matches"' in first
    second = fclient.get(f"{url}?page=2").data.decode()
    assert match_links(second) == ids[50:]
    assert "page 2 of 2" in page_text(second) and f'href="{url}?page=1#matches"' in second
    for value, expected in [("abc", ids[:50]), ("0", ids[:50]), ("-3", ids[:50]), ("", ids[:50])]:
        response = fclient.get(f"{url}?page={value}")
        assert response.status_code == 200
        assert match_links(response.data.decode()) == expected, value
    for value in ("3", "99", "9" * 30):  # past the end: the last page
        response = fclient.get(f"{url}?page={value}")
        assert response.status_code == 200
        text = assert_page(response)
        assert "page 2 of 2" in text and "Traceback" not in text
        assert match_links(response.data.decode()) == ids[50:]
    # a short list has no pager
    small = fclient.get(f"/tournaments/{formats['small']}").data.decode()
    assert 'class="pager"' not in small


def bot_matches(app: Flask, bot_id: int, *statuses: str) -> list[int]:
    """The bot's match ids with one of ``statuses`` (none: every one), newest first."""
    with app.extensions["arena.db"].session() as session:
        query = (
            select(Match.id)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(MatchSeat.bot_id == bot_id)
            .distinct()
            .order_by(Match.id.desc())
        )
        if statuses:
            query = query.where(Match.status.in_(statuses))
        return list(session.scalars(query))


def test_the_bot_page_filters_its_matches_by_status_and_pages_them(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    # a gauntlet's challenger: most of its matches were cancelled by the stop rule
    bot_id = formats["bots"][0]
    app = formats["app"]
    cancelled = bot_matches(app, bot_id, "cancelled")
    everything = bot_matches(app, bot_id)
    shown = [i for i in everything if i not in set(cancelled)]
    played = bot_matches(app, bot_id, "finished")
    queued = bot_matches(app, bot_id, "queued")
    assert len(cancelled) > 50 and len(shown) > 25 and queued and played

    # by default every match but the cancelled ones, newest first, in pages
    url = f"/bots/{bot_id}"
    pages = -(-len(shown) // 25)
    first = fclient.get(url).data.decode()
    assert match_links(first) == shown[:25]
    assert f"page 1 of {pages}" in page_text(first)
    assert f'href="{url}?page=2#matches"' in first
    second = fclient.get(f"{url}?page=2").data.decode()
    assert match_links(second) == shown[25:50]
    last = fclient.get(f"{url}?page={pages + 5}").data.decode()
    assert match_links(last) == shown[(pages - 1) * 25 :]
    assert f"page {pages} of {pages}" in page_text(last)
    assert match_links(fclient.get(f"{url}?page=x").data.decode()) == shown[:25]
    # a status and its pages: the filter is kept from page to page
    page = fclient.get(f"{url}?status=cancelled&page=2").data.decode()
    assert match_links(page) == cancelled[25:50]
    assert f'href="{url}?status=cancelled&amp;page=1#matches"' in page
    assert f'href="{url}?status=cancelled&amp;page=3#matches"' in page
    assert match_links(fclient.get(f"{url}?status=finished").data.decode()) == played[:25]
    assert match_links(fclient.get(f"{url}?status=queued").data.decode()) == queued[:25]
    assert match_links(fclient.get(f"{url}?status=all").data.decode()) == everything[:25]
    # an unknown filter is the default one
    assert match_links(fclient.get(f"{url}?status=lost").data.decode()) == shown[:25]
    # the filters say how many matches each lists, the default one marked
    links = dict(re.findall(r'data-status="([a-z]*)"[^>]*>[^<(]*\((\d+)\)</a>', first))
    assert links == {
        "": str(len(shown)),
        "finished": str(len(played)),
        "queued": str(len(queued)),
        "cancelled": str(len(cancelled)),
        "all": str(len(everything)),
    }
    assert re.search(r'data-status="" aria-current="true"', first)
    facts = page_text(first.split('class="facts"')[1].split("</dl>")[0])
    assert f"{len(played)} played · {len(queued)} queued · {len(cancelled)} cancelled" in facts


def test_a_live_page_answers_not_modified_until_it_changes(
    fclient: FlaskClient, formats: dict[str, Any]
) -> None:
    url = f"/tournaments/{formats['small']}"
    response = fclient.get(url)
    assert response.status_code == 200
    etag = response.headers["ETag"]
    assert etag.startswith('W/"') and response.headers["Cache-Control"] == "no-cache"
    body = response.data.decode()
    assert 'data-refresh="5"' in body
    assert html.unescape(re.search(r'data-etag="([^"]+)"', body).group(1)) == etag
    again = fclient.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    assert again.headers["ETag"] == etag
    # one page: ?page=2 is that page again; of a longer list, another version
    assert fclient.get(f"{url}?page=2", headers={"If-None-Match": etag}).status_code == 304
    big = f"/tournaments/{formats['big']}"
    big_etag = fclient.get(big).headers["ETag"]
    assert fclient.get(f"{big}?page=2", headers={"If-None-Match": big_etag}).status_code == 200
    assert fclient.get(f"{big}?page=1", headers={"If-None-Match": big_etag}).status_code == 304
    # a match finishes the way a worker stores it: the page changed
    with formats["app"].extensions["arena.db"].session() as session:
        first = schedule(session, formats["small"])[0]
    assert save_through_the_worker(formats["app"], first, [1, 2])
    changed = fclient.get(url, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
    assert "1/4 done" in page_text(changed.data)
    assert fclient.get(url, headers={"If-None-Match": changed.headers["ETag"]}).status_code == 304
    # an entrant renamed: the page shows the new name, so it is another version
    renamed = rename_a_seated_bot(formats["app"], first)
    fresh = fclient.get(url, headers={"If-None-Match": changed.headers["ETag"]})
    assert fresh.status_code == 200 and renamed in fresh.data.decode()


def rename_a_seated_bot(app: Flask, match_id: int) -> str:
    """Rename the bot in the match's first seat (as its owner's PATCH does); the new name."""
    with app.extensions["arena.db"].session() as session:
        bot = session.get(Match, match_id).seats[0].bot
        bot.name = f"{bot.name} renamed"
        return bot.name


def test_a_match_page_answers_not_modified(fclient: FlaskClient, formats: dict[str, Any]) -> None:
    with formats["app"].extensions["arena.db"].session() as session:
        queued = schedule(session, formats["small"])[-1]
    response = fclient.get(f"/matches/{queued}")
    assert response.status_code == 200 and 'data-initial="public"' in response.data.decode()
    again = fclient.get(f"/matches/{queued}", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    renamed = rename_a_seated_bot(formats["app"], queued)
    fresh = fclient.get(f"/matches/{queued}", headers={"If-None-Match": response.headers["ETag"]})
    assert fresh.status_code == 200 and renamed in fresh.data.decode()


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """105 bots (and a deleted one) and 101 tournaments: two pages of each list."""
    app = make_app(tmp_path_factory.mktemp("crowded"))
    with app.extensions["arena.db"].session() as session:
        for i in range(105):
            add_bot(session, f"bot{i:03d}", ["cactus"])
        add_bot(session, "bot000-gone", ["cactus"], status="deleted")
        for i in range(101):
            session.add(
                Tournament(
                    name=f"cup {i:03d}",
                    game="cactus",
                    options={},
                    seats_per_match=2,
                    games_per_pairing=2,
                    seed=i,
                    status="finished",
                )
            )
    yield app
    close_app(app)


def test_the_bot_and_tournament_lists_come_in_pages(crowded: Flask) -> None:
    client = crowded.test_client()
    first = client.get("/bots").data.decode()
    names = re.findall(r'<a href="/bots/\d+">(bot\d+)</a>', first)
    assert names == [f"bot{i:03d}" for i in range(100)]
    assert "page 1 of 2" in page_text(first) and 'href="/bots?page=2"' in first
    second = client.get("/bots?page=2").data.decode()
    assert re.findall(r'<a href="/bots/\d+">(bot\d+)</a>', second) == [
        f"bot{i:03d}" for i in range(100, 105)
    ]
    assert client.get("/bots?page=7").data.decode() == second
    first = page_text(client.get("/tournaments").data)
    assert "cup 100" in first and "cup 001" in first and "cup 000" not in first
    second = page_text(client.get("/tournaments?page=2").data)
    assert "cup 000" in second and "cup 001" not in second and "page 2 of 2" in second
