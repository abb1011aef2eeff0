"""The Président table the replay viewer draws: who went out, in which place (PR-8).

A view's ``places`` is the finishing order, the seat in each place, first to last; the
viewer must show each seat's own place ("out #k" in its area) and the seats that finished
in their order ("Finished").  Checked in a real browser against the engine's state at
every step where the places change, on a match where seat 0 goes out first and on one
where another seat does (seat 0 then holding cards: no place of its own).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from arena.games import get_game
from arena.match.records import answers
from arena.models import Replay
from tests.support.browser import TIMEOUT_MS, _require_chromium, buffered
from tests.support.browser import browser as browser  # the same Chromium, on this site
from tests.support.web import add_bot, close_app, make_app, play_match

# random policies at four seats: with seed 5 seat 0 goes out first in round 1, with seed
# 8 seat 3 does and seat 0 second (found by playing them; the test checks it holds)
SEAT_0_FIRST, SEAT_0_SECOND = 5, 8
CHANGES_CHECKED = 6  # the first changes of the places: two rounds' outs and a new deal


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    _require_chromium()
    app = make_app(tmp_path_factory.mktemp("president"))
    matches: dict[int, tuple[int, dict[str, Any]]] = {}
    with app.extensions["arena.db"].session() as session:
        bots = [add_bot(session, name, ["president"]) for name in ("ann", "bob", "cy", "dee")]
        for seed in (SEAT_0_FIRST, SEAT_0_SECOND):
            match = play_match(session, "president", bots, seed)
            matches[seed] = (match.id, session.get(Replay, match.id).record)
    server = make_server("127.0.0.1", 0, buffered(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.port}", "matches": matches}
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


def places_by_step(record: dict[str, Any]) -> list[tuple[int, list[int | None]]]:
    """(step, the engine's places after it) at each step that changed them (PR-8)."""
    game = get_game("president")
    state = game.new_state(len(record["players"]), record["seed"], record["options"])
    changes, before = [], list(state.places)
    for step, decisions in enumerate(record["steps"], start=1):
        game.apply(state, answers(decisions))
        if state.places != before:
            before = list(state.places)
            changes.append((step, before))
    return changes


def drawn_places(page: Any) -> tuple[dict[int, str | None], list[tuple[int, int]]]:
    """Each seat area's place mark ("out #k", None without one), and the Finished list as
    (place, seat) pairs in the order shown."""
    marks = page.locator("#table [data-seat]").evaluate_all(
        """areas => areas.map(a => [Number(a.dataset.seat),
              (a.querySelector('.mark.place') || {}).textContent || null])"""
    )
    finished = page.locator("#table .finished [data-place]").evaluate_all(
        "items => items.map(i => [Number(i.dataset.place), Number(i.dataset.seat)])"
    )
    return dict(marks), [tuple(pair) for pair in finished]


def show(page: Any, perspective: str, step: int) -> None:
    page.evaluate(f"location.hash = '#seat={perspective}&step={step}'")
    page.wait_for_function(
        "([p, s]) => { const r = document.getElementById('replay');"
        " return r.dataset.showing === p && r.dataset.step === String(s); }",
        arg=[perspective, step],
    )


@pytest.mark.parametrize("seed", [SEAT_0_FIRST, SEAT_0_SECOND])
def test_each_seat_shows_its_own_place_and_finished_lists_the_order(
    page: Any, site: dict[str, Any], seed: int
) -> None:
    match_id, record = site["matches"][seed]
    changes = places_by_step(record)[:CHANGES_CHECKED]
    # the match is the one this test is about (PR-8: the first out takes place 1)
    if seed == SEAT_0_FIRST:
        assert changes[0][1] == [0, None, None, None], changes
    else:
        assert changes[0][1] == [3, None, None, None], changes
        assert changes[1][1] == [3, 0, None, None], changes
    assert any(all(p is None for p in places) for _, places in changes)  # a new deal
    page.goto(f"{site['url']}/matches/{match_id}#seat=all&step=0")
    page.wait_for_function("() => document.getElementById('replay').dataset.step === '0'")
    for perspective in ("all", "2"):
        for step, places in changes:
            show(page, perspective, step)
            marks, finished = drawn_places(page)
            expected = {
                seat: f"out #{places.index(seat) + 1}" if seat in places else None
                for seat in range(len(record["players"]))
            }
            assert marks == expected, (perspective, step, places)
            order = [
                (place, seat) for place, seat in enumerate(places, start=1) if seat is not None
            ]
            assert finished == order, (perspective, step, places)
            text = page.locator("#table .center").text_content()
            assert ("Finished" in text) == bool(order), (perspective, step, text)
