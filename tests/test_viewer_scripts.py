"""The replay viewer's scripts: a core that knows no game, and each game's drawing beside
its rules, loaded by the pages of that game's matches and inlined in its replay files.

Adding a game must not touch the core: every registered game (``arena.games.GAMES``)
has its ``viewer.js`` in its own folder, registered under its own id; a match page loads
the core and that one drawing; ``arena view --html`` writes both into the page.  What the
drawings draw is checked in a real browser (``test_browser_replay``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena.cli import main as arena_main
from arena.games import GAMES
from tests.support.web import add_bot, close_app, make_app, play_match

CORE = Path(__file__).parents[1] / "arena" / "web" / "static" / "replay.js"
REGISTER = re.compile(r"""ArenaViewer\.register\(\s*["']([^"']+)["']""")
SCRIPTS = re.compile(r"<script\b[^>]*\bsrc=\"([^\"]+)\"")


def drawing_file(game_id: str) -> Path:
    """Where a game's drawing belongs: ``viewer.js`` in the folder of the game's rules."""
    return Path(inspect.getfile(type(GAMES[game_id]))).parent / "viewer.js"


def test_the_core_names_no_game() -> None:
    core = CORE.read_text(encoding="utf-8")
    for game in GAMES.values():
        folder = drawing_file(game.id).parent.name
        for name in (game.id, game.title, folder):
            assert not re.search(re.escape(name), core, re.IGNORECASE), (game.id, name)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_each_game_has_its_drawing_beside_its_rules(game_id: str) -> None:
    path = drawing_file(game_id)
    assert path.is_file(), f"{game_id} has no drawing at {path}"
    assert REGISTER.findall(path.read_text(encoding="utf-8")) == [game_id]


# -- the pages and the files that carry the scripts ---------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A finished match of each registered game."""
    app = make_app(tmp_path_factory.mktemp("viewer"))
    matches: dict[str, int] = {}
    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, name, sorted(GAMES)) for name in ("ann", "bob", "cy")]
        for game in GAMES.values():
            seated = bots[: max(game.min_players, 2)]
            matches[game.id] = play_match(session, game.id, seated, 3).id
    yield {"app": app, "matches": matches}
    close_app(app)


@pytest.fixture
def client(site: dict[str, Any]) -> FlaskClient:
    return site["app"].test_client()


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_page_of_a_match_loads_the_core_and_its_game_drawing(
    client: FlaskClient, site: dict[str, Any], game_id: str
) -> None:
    body = client.get(f"/matches/{site['matches'][game_id]}").get_data(as_text=True)
    drawing = f"/games/{game_id}/viewer.js"
    assert SCRIPTS.findall(body) == ["/static/replay.js", drawing]  # the core first
    with client.get(drawing) as response:
        assert response.status_code == 200
        assert response.mimetype == "text/javascript"
        assert response.get_data() == drawing_file(game_id).read_bytes()


def test_a_game_that_is_not_registered_has_no_drawing(client: FlaskClient) -> None:
    for url in ("/games/chess/viewer.js", "/games/cactus_game/viewer.js"):  # ids, not folders
        with client.get(url) as response:
            assert response.status_code == 404, url


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_replay_file_of_a_game_holds_the_core_and_its_drawing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], game_id: str
) -> None:
    replay = tmp_path / "games.json"
    bots = ",".join(["random"] * max(GAMES[game_id].min_players, 2))
    assert arena_main(["play", game_id, "--bots", bots, "--replay", str(replay)]) == 0
    assert arena_main(["view", str(replay), "--html"]) == 0
    capsys.readouterr()
    page = (tmp_path / "games-match1.html").read_text(encoding="utf-8")
    assert "src=" not in page  # nothing loaded from elsewhere
    assert CORE.read_text(encoding="utf-8") in page
    for other in GAMES:
        inlined = drawing_file(other).read_text(encoding="utf-8") in page
        assert inlined == (other == game_id), other
    # the game's drawing comes after the core it registers with
    core_at = page.index(CORE.read_text(encoding="utf-8"))
    assert page.index(drawing_file(game_id).read_text(encoding="utf-8")) > core_at
