"""The table the replay viewer draws, checked against the engine in a real browser.

For a finished match of each game, at several steps and from every perspective, the cards
drawn in each seat's area (``data-card`` per ``data-seat``) must be exactly what the
engine held for that perspective at that step: a seat's own view (``Game.view``), every
card of the true state for "all", none but the public ones for "public".  A seat's page
must hold no other card anywhere, in its DOM or in the data it loaded.  Then a match
being played is followed live, and a replay file is opened as a page of its own.

The expected cards are read here from the engine's state and views, never from
``arena.match.frames`` (the code under test).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from arena.cli import main as arena_main
from arena.config import Config
from arena.db import Database
from arena.games import get_game, make_policy
from arena.match.records import answers
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Match, MatchSeat, Replay, Tournament
from arena.worker import play as play_module
from arena.worker.live import LiveWriter
from tests.support.browser import TIMEOUT_MS, _require_chromium, buffered
from tests.support.browser import browser as browser  # the same Chromium, on this site
from tests.support.seen import known_to
from tests.support.web import add_bot, close_app, make_app, play_match

PLAYERS = {"cactus": 3, "cactus-game": 3, "president": 4}
HIDDEN = "hidden"


# -- what the engine says each seat area holds -------------------------------------------
def replayed(record: dict[str, Any], steps: int) -> tuple[Any, Any]:
    game = get_game(record["game"])
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    for step in record["steps"][:steps]:
        game.apply(state, answers(step))
    return game, state


def expected_areas(game: Any, state: Any, perspective: str) -> dict[int, list[str]]:
    """Seat -> the card codes its area shows, in order (``hidden`` for a card face down)."""
    n = state.n_players
    if perspective == "all":
        return {seat: _truth(game, state, seat) for seat in range(n)}
    if perspective == "public":  # every hand or layout face down, nothing else
        return {seat: [HIDDEN] * _held(game, state, seat) for seat in range(n)}
    viewer = int(perspective)
    view = game.view(state, viewer)
    return {seat: _seen(game.id, view, viewer, seat) for seat in range(n)}


def _truth(game: Any, state: Any, seat: int) -> list[str]:
    if game.id == "cactus":
        cards = [state.names[state.layouts[seat][slot]] for slot in sorted(state.layouts[seat])]
        if state.hand is not None and state.player == seat and state.result is None:
            cards.append(state.names[state.hand])  # the card drawn this turn
        return cards
    if game.id == "cactus-game":
        return sorted(state.hands[seat])
    cards = list(state.hand_view[seat])
    exchange = state.exchanged[seat]
    return cards + _exchange_cards(exchange)


def _held(game: Any, state: Any, seat: int) -> int:
    if game.id == "cactus":
        return len(state.layouts[seat])
    if game.id == "cactus-game":
        return min(len(state.hands[seat]), 20)
    return min(len(state.hand_view[seat]), 20)


def _exchange_cards(exchange: dict[str, Any] | None) -> list[str]:
    if not exchange:
        return []
    return [c for side in ("gave", "received") for c in (exchange.get(side) or {}).get("cards", [])]


def _seen(game_id: str, view: dict[str, Any], viewer: int, seat: int) -> list[str]:
    if game_id == "cactus":
        cells = sorted(view["layouts"][seat], key=lambda cell: cell["slot"])
        cards = [cell["card"] or HIDDEN for cell in cells]
        if view["drawn"] is not None and view["to_move"] == seat:
            cards.append(view["drawn"])
        return cards
    if game_id == "cactus-game":
        if seat == viewer:
            return sorted(view["hand"]["cards"])
        return [HIDDEN] * min(view["hand_sizes"][seat], 20)
    if seat == viewer:
        return list(view["cards"]) + _exchange_cards(view["exchange"])
    return [HIDDEN] * min(view["hand_sizes"][seat], 20)


# -- the site ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    _require_chromium()
    folder = tmp_path_factory.mktemp("replays")
    app = make_app(folder)
    matches: dict[str, tuple[int, dict[str, Any]]] = {}
    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, name, sorted(PLAYERS)) for name in ("ann", "bob", "cy", "dee")]
        for game_id, n in PLAYERS.items():
            match = play_match(session, game_id, bots[:n], 11)
            matches[game_id] = (match.id, session.get(Replay, match.id).record)
        bot_ids = [b.id for b in bots]
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            "app": app,
            "url": f"http://127.0.0.1:{server.port}",
            "matches": matches,
            "bots": bot_ids,
            "folder": folder,
        }
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        close_app(app)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    the_page = context.new_page()
    the_page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    the_page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield the_page
    context.close()
    assert errors == [], errors


def drawn_areas(page: Any) -> dict[int, list[str]]:
    return {
        int(area["seat"]): area["cards"]
        for area in page.locator("#table [data-seat]").evaluate_all(
            """areas => areas.map(a => ({seat: a.dataset.seat,
                cards: Array.from(a.querySelectorAll('[data-card]')).map(c => c.dataset.card)}))"""
        )
    }


def show(page: Any, perspective: str, step: int) -> None:
    page.evaluate(f"location.hash = '#seat={perspective}&step={step}'")
    page.wait_for_function(
        "([p, s]) => { const r = document.getElementById('replay');"
        " return r.dataset.showing === p && r.dataset.step === String(s); }",
        arg=[perspective, step],
    )


# -- every perspective, several steps, each game -------------------------------------------
@pytest.mark.parametrize("game_id", sorted(PLAYERS))
def test_the_table_drawn_is_what_each_perspective_knew(
    page: Any, site: dict[str, Any], game_id: str
) -> None:
    match_id, record = site["matches"][game_id]
    total = len(record["steps"])
    loaded: dict[str, Any] = {}

    def keep(response: Any) -> None:
        if "/frames?" in response.url:
            loaded[response.url] = response.json()

    page.on("response", keep)
    page.goto(f"{site['url']}/matches/{match_id}#seat=all&step=0")
    page.wait_for_function("() => document.getElementById('replay').dataset.step === '0'")
    perspectives = ["all", "public", *map(str, range(len(record["players"])))]
    for perspective in perspectives:
        for step in sorted({0, 1, total // 3, (2 * total) // 3, total}):
            show(page, perspective, step)
            game, state = replayed(record, step)
            assert drawn_areas(page) == expected_areas(game, state, perspective), (
                perspective,
                step,
            )
            if perspective not in ("all", "public"):
                on_page = set(
                    page.locator("[data-card]").evaluate_all(
                        "cards => cards.map(c => c.dataset.card)"
                    )
                )
                allowed = known_to(game, record, int(perspective), step) | {HIDDEN}
                assert on_page <= allowed, (perspective, step, on_page - allowed)
        if perspective == "1" and game_id == "president":
            shoot_docs(page, game_id)
    # the data each seat's page loaded is that seat's views and nothing more
    for url, body in loaded.items():
        seat = body["perspective"]
        if not isinstance(seat, int):
            continue
        game = get_game(game_id)
        state = game.new_state(len(record["players"]), record["seed"], record["options"])
        view: dict[str, Any] = {}
        for i, frame in enumerate(body["frames"]):
            view = frame["view"] if "view" in frame else {**view, **frame["changes"]}
            for key in frame.get("gone", ()):
                view.pop(key)
            expected = game.view(state, seat)
            expected.pop("events")
            assert view == json.loads(json.dumps(expected)), (url, i)
            if i < len(record["steps"]):
                game.apply(state, answers(record["steps"][i]))


def shoot_docs(page: Any, name: str) -> None:
    """The viewer's screenshot into $ARENA_SCREENSHOTS, when set."""
    import os

    folder = os.environ.get("ARENA_SCREENSHOTS")
    if folder:
        page.locator("#replay").screenshot(path=str(Path(folder) / f"viewer-{name}.png"))


# -- a live match --------------------------------------------------------------------------
class SlowPolicy(PolicyClient):
    """A house policy that thinks for a while: a match lasting a few seconds."""

    def act(self, payload: dict[str, Any]) -> Any:
        time.sleep(0.03)
        return super().act(payload)


def test_a_live_match_is_followed_with_public_information_only(
    page: Any, site: dict[str, Any]
) -> None:
    app = site["app"]
    database: Database = app.extensions["arena.db"]
    config: Config = app.extensions["arena.config"]
    with database.session() as session:
        cup = Tournament(
            name="Watched cup",
            game="cactus",
            options={},
            seats_per_match=3,
            seed=5,
            games_per_pairing=1,
            status="running",
        )
        session.add(cup)
        session.flush()
        match = Match(
            tournament_id=cup.id,
            kind="tournament",
            game="cactus",
            options={},
            seed=77,
            status="running",
            attempts=1,
            rated=False,
        )
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(site["bots"][:3])]
        session.add(match)
        session.flush()
        match_id, tournament_id = match.id, cup.id
    writer = LiveWriter(database, interval=0.2)
    feed = writer.feed(match_id, attempt=1)
    clients = [
        SlowPolicy(make_policy("cactus", "random", policy_rng(77, s)), name=f"p{s}")
        for s in range(3)
    ]
    result: dict[str, Any] = {}

    def play() -> None:
        result["record"] = Referee().run("cactus", clients, 77, {}, str(match_id), on_step=feed)

    player = threading.Thread(target=play, daemon=True)
    player.start()
    try:
        page.goto(f"{site['url']}/matches/{match_id}")
        page.wait_for_selector("#live-note:not([hidden])")
        page.wait_for_function("() => Number(document.getElementById('replay').dataset.step) > 0")
        first = int(page.locator("#replay").get_attribute("data-step"))
        page.wait_for_function(
            f"() => Number(document.getElementById('replay').dataset.step) > {first}"
        )
        # only the public table: every layout card face down, the seats' views closed
        for cards in drawn_areas(page).values():
            assert cards and set(cards) == {HIDDEN}
        assert page.locator("[data-perspective='0']").is_disabled()
        assert page.locator("[data-perspective='all']").is_disabled()
        assert "shown once the match is over" in page.locator(".facts").inner_text()
        tournament_page = page.context.new_page()
        tournament_page.goto(f"{site['url']}/tournaments/{tournament_id}")
        assert tournament_page.locator(f"a[href$='/matches/{match_id}']").count() >= 1
        assert "live" in tournament_page.locator("#live-matches").inner_text().lower()
        tournament_page.close()
    finally:
        player.join(60)
        writer.close()
    # the match ends: recorded as a worker records it, the page opens every perspective
    play_module.save_result(database, match_id, result["record"], config.pause_after_forfeits)
    page.wait_for_function("() => !document.querySelector('[data-perspective=\"all\"]').disabled")
    page.click("[data-perspective='0']")
    page.wait_for_function("() => document.getElementById('replay').dataset.showing === '0'")


# -- a replay file, opened without a server ------------------------------------------------
def test_a_replay_file_opens_in_the_viewer(page: Any, site: dict[str, Any], tmp_path: Path) -> None:
    replay = tmp_path / "games.json"
    assert (
        arena_main(
            [
                "play",
                "president",
                "--players",
                "4",
                "--bots",
                "heuristic,random,random,random",
                "--matches",
                "2",
                "--seed",
                "3",
                "--replay",
                str(replay),
            ]
        )
        == 0
    )
    assert arena_main(["view", str(replay), "--match", "2", "--html"]) == 0
    written = tmp_path / "games-match2.html"
    record = json.loads(replay.read_text())["matches"][1]
    page.goto(written.as_uri() + "#seat=2&step=5")
    page.wait_for_function("() => document.getElementById('replay').dataset.step === '5'")
    game, state = replayed(record, 5)
    assert drawn_areas(page) == expected_areas(game, state, "2")
    page.click("[data-perspective='all']")
    page.wait_for_function("() => document.getElementById('replay').dataset.showing === 'all'")
    assert drawn_areas(page) == expected_areas(game, state, "all")
    # one seat's file holds that seat's frames alone
    assert (
        arena_main(["view", str(replay), "--seat", "1", "--html", str(tmp_path / "s1.html")]) == 0
    )
    text = (tmp_path / "s1.html").read_text()
    data = json.loads(text.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
    assert list(data["perspectives"]) == ["1"]
    page.goto((tmp_path / "s1.html").as_uri())
    page.wait_for_function("() => document.getElementById('replay').dataset.showing === '1'")
    assert page.locator("[data-perspective='0']").is_disabled()
