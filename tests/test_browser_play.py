"""A person plays in Chromium: whole matches of every game by clicking, against the house
bots, through the real path (the web server over HTTP on loopback, a real ``arena
worker`` process, the page polling the connect transport like a bot that connects out).

At every decision the page offers, the card faces it shows (``data-card``) must be cards
the person's seat had been shown by then, and every request body the page received must
name no other card: both computed from the match's record by re-simulation
(``tests.support.seen``), never from the page.  A reaction window is answered by a click
and by letting its countdown run out; a person who closes the page gets default actions
and the match still ends; two people play one match from their own links.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from arena.games import get_game
from tests.support.browser import _require_chromium, shoot
from tests.support.browser import browser as browser  # the same Chromium, on this site
from tests.support.lanes import lane, wait_for, web_server
from tests.support.seen import cards_in, known_to

pytestmark = pytest.mark.xdist_group("browser-play")

PLAYERS = {"cactus": 3, "cactus-game": 3, "president": 4}
OPTIONS = {"cactus": {"rounds": 1}, "cactus-game": {"target": 3}, "president": {}}
MATCH_SECONDS = 240
TABLE_CARDS = "#table [data-card], #outcome [data-card], #seat-log [data-card]"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    _require_chromium()
    with (
        lane("embedded", tmp_path_factory.mktemp("play"), workers=1) as the_lane,
        web_server(the_lane.config) as (url, api),
    ):
        yield {"url": url, "api": api}


@pytest.fixture
def page(browser: Any, site: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()


class Seat:
    """What a person's page showed and received, decision by decision."""

    def __init__(self, page: Any):
        self.page = page
        self.shown: list[tuple[int, list[str]]] = []  # (step, data-card faces)
        self.offered: dict[str, list[Any]] = {}  # decision id -> the actions' data-action
        self.labels: list[str] = []  # the actions' buttons as they read
        self.bodies: list[dict[str, Any]] = []  # every request body its polls received
        page.on("response", self._response)

    def _response(self, response: Any) -> None:
        if not response.url.endswith("/api/connect/poll") or response.status != 200:
            return
        try:
            polled = response.json()
        except Exception:  # an aborted poll has no body to read
            return
        for item in polled.get("requests", []):
            self.bodies.append({"path": item["path"], **json.loads(item["body"])})

    def faces(self) -> list[str]:
        """The card faces of the table drawn (the actions' buttons name the cards of the
        legal actions, checked against the request instead)."""
        return self.page.eval_on_selector_all(TABLE_CARDS, "els => els.map(e => e.dataset.card)")

    def snapshot(self) -> str | None:
        """Keep the faces and the actions shown with the decision they are shown for, all
        read at once (a new request may redraw the page between two reads); returns that
        decision."""
        decision, faces, actions, labels = self.page.evaluate(
            "s => [document.querySelector('#seat').dataset.decision || null,"
            " Array.from(document.querySelectorAll(s), e => e.dataset.card),"
            " Array.from(document.querySelectorAll('#actions [data-action]'),"
            " e => JSON.parse(e.dataset.action)),"
            " Array.from(document.querySelectorAll('#actions [data-action]'), e => e.innerText)]",
            TABLE_CARDS,
        )
        if decision is not None:
            self.shown.append((int(decision.split(":")[0]), faces))
            self.offered[decision] = actions
            self.labels.extend(labels)
        return decision

    def play(
        self, choose: Any = None, keyboard: bool = False, shot: str | None = None
    ) -> dict[str, Any]:
        """Answer every decision by a click (``choose(i, buttons)`` picks which; by default
        the first, None: no click) until the outcome shows; returns it."""
        page, seen, i = self.page, None, 0
        deadline = time.monotonic() + MATCH_SECONDS
        while time.monotonic() < deadline:
            outcome = page.locator("[data-outcome]")
            if outcome.count():
                return json.loads(outcome.get_attribute("data-outcome"))
            decision = page.locator("#seat").get_attribute("data-decision")
            buttons = page.locator("#actions [data-action]")
            if decision is None or decision == seen or not buttons.count():
                page.wait_for_timeout(30)
                continue
            seen = self.snapshot()
            if shot and i == 8:
                shoot(page, shot)  # a table in the middle of the match
            pick = choose(i, buttons) if choose else 0
            i += 1
            if pick is None:  # left alone: the page answers by itself
                continue
            try:
                if keyboard and pick < 9:
                    page.keyboard.press(str(pick + 1))
                else:
                    buttons.nth(pick).click(timeout=2000)
            except Exception:  # the window closed by itself meanwhile, or the click was
                seen = None  # too slow on a loaded machine: ask again while it is shown
                continue
        raise AssertionError("the match did not end in time")


def record_of(site: dict[str, Any], match_id: str) -> dict[str, Any]:
    api = site["api"]
    wait_for(
        lambda: api.get(f"/api/matches/{match_id}").get_json()["status"] == "finished",
        timeout=60,
        what=f"match {match_id} to be recorded",
    )
    return api.get(f"/api/matches/{match_id}/replay").get_json()


def check_nothing_unseen(seat: Seat, record: dict[str, Any], index: int) -> None:
    """Every face the page showed, and every card in every view it received, was shown to
    the seat by then (the engine's views of that seat and the events it received); its
    controls were exactly the legal actions it was sent."""
    game = get_game(record["game"])
    for step, faces in seat.shown:
        allowed = known_to(game, record, index, step) | {"hidden"}
        assert set(faces) <= allowed, (step, sorted(set(faces) - allowed))
    asked = {b["decision_id"]: b["legal_actions"] for b in seat.bodies if b["path"] == "/act"}
    for decision, actions in seat.offered.items():  # every legal action, as a control
        assert actions == asked[decision], decision
    everything = known_to(game, record, index, len(record["steps"]))
    for body in seat.bodies:
        step = int(body["decision_id"].split(":")[0]) if "decision_id" in body else None
        allowed = known_to(game, record, index, step) if step is not None else everything
        # its view (the legal actions may name a kind of card to ask for, which is no card
        # seen; they are checked as the page's controls above)
        leaked = cards_in(game, body.get("view")) - allowed
        assert not leaked, (body["path"], step, sorted(leaked))
    assert set(seat.faces()) <= everything | {"hidden"}


@pytest.mark.parametrize("game", sorted(PLAYERS))
def test_a_person_plays_a_whole_match_against_the_house_bots(
    page: Any, site: dict[str, Any], game: str
) -> None:
    page.goto(f"{site['url']}/play/{game}")
    # the house bots are the default opponents
    selects = page.locator("[data-opponent]:not([hidden]) select")
    assert selects.count() >= 1
    assert all(v.startswith("house:") for v in selects.evaluate_all("s => s.map(x => x.value)"))
    page.fill("input[name=person]", "Ada")
    page.select_option("select[name=players]", str(PLAYERS[game]))
    if OPTIONS[game]:
        page.click("details summary")
        page.fill("textarea[name=options]", json.dumps(OPTIONS[game]))
    page.click("[data-start]")
    page.wait_for_url("**/play/seat/**", timeout=10_000)
    seat = Seat(page)
    outcome = seat.play(keyboard=game == "cactus-game", shot=f"play-{game}")
    match_id = page.locator("#seat").get_attribute("data-match-id")
    assert outcome["seat"] == 0 and outcome["rank"] >= 1
    assert page.locator(f"[data-outcome] a[href$='/matches/{match_id}']").count() == 1
    # each action reads as a person would say it ("Play two 7s"), not as its JSON fields
    words = re.compile(r"(\d+\s+)?[A-Z][^\"{}_]*")
    assert seat.labels and [t for t in seat.labels if not words.fullmatch(t)] == []
    assert page.locator("#prompt").inner_text() == ""  # the outcome alone says it is over
    shoot(page, f"play-{game}-end")
    if game == "cactus":  # the end shows every layout face up, as the last reveal did
        layouts = page.eval_on_selector_all(
            "#table .layout [data-card]", "els => els.map(e => e.dataset.card)"
        )
        assert layouts and "hidden" not in layouts, layouts
    record = record_of(site, match_id)
    assert record["outcome"]["ranks"] == outcome["ranks"]
    # every decision of the person's was a click in time: no fault
    mine = [d for step in record["steps"] for d in step if d["seat"] == 0]
    assert mine and not [d for d in mine if "fault" in d]
    check_nothing_unseen(seat, record, 0)
    finished = site["api"].get("/api/matches?status=finished").get_json()
    assert int(match_id) in [m["id"] for m in finished]
    kinds = next(m for m in finished if m["id"] == int(match_id))["seats"]
    assert kinds[0]["bot_kind"] == "person"
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_reaction_window_is_answered_by_click_and_by_its_countdown(
    page: Any, site: dict[str, Any]
) -> None:
    """Cactus snaps (CA rules: any seat may snap after a discard): the person passes one
    window by a click and lets another's countdown run out, which passes for them; both
    are answers in time, not faults."""
    made = site["api"].post(
        "/api/play",
        json={"game": "cactus", "seats": [{"person": "Bo"}, {"house": "random"}],
              "options": {"rounds": 1}},
    ).get_json()  # fmt: skip
    page.goto(site["url"] + made["links"][0]["url"])
    seat = Seat(page)
    windows: dict[str, str] = {}  # how each window was answered, by decision id

    def choose(i: int, buttons: Any) -> int | None:
        prompt = page.locator("#prompt").text_content() or ""
        decision = page.locator("#seat").get_attribute("data-decision")
        if prompt.startswith("Quick") and "timeout" not in windows.values():
            windows[decision] = "timeout"
            assert page.locator("#countdown").is_visible()
            page.wait_for_function(  # the page passes when its countdown runs out
                "d => document.querySelector('#seat').dataset.decision !== d "
                "|| !document.querySelector('#actions [data-action]')",
                arg=decision,
                timeout=15_000,
            )
            return None
        if prompt.startswith("Quick"):
            windows.setdefault(decision, "click")
        actions = [json.loads(a) for a in buttons.evaluate_all("b => b.map(x => x.dataset.action)")]
        return next((n for n, a in enumerate(actions) if a["type"] == "pass"), 0)

    seat.play(choose)
    record = record_of(site, made["match_id"])
    decisions = {
        f"{n}:0": d for n, step in enumerate(record["steps"]) for d in step if d["seat"] == 0
    }
    assert "timeout" in windows.values() and "click" in windows.values()
    for decision, how in windows.items():
        answered = decisions[decision]
        assert answered["kind"] == "snap" and answered["action"] == {"type": "pass"}
        assert "fault" not in answered, (how, answered)
        if how == "timeout":  # the page's own countdown, well before the arena's deadline
            assert 4_000 < answered["latency_ms"] < made["deadline_s"] * 1000


def test_a_person_who_closes_the_page_gets_default_actions_and_the_match_ends(
    browser: Any, site: dict[str, Any]
) -> None:
    made = site["api"].post(
        "/api/play",
        json={"game": "cactus-game", "seats": [{"person": "Cy"}, {"house": "heuristic"}],
              "deadline_s": 2},
    ).get_json()  # fmt: skip
    context = browser.new_context()
    page = context.new_page()
    page.goto(site["url"] + made["links"][0]["url"])
    page.wait_for_selector("#actions [data-action]", timeout=30_000)
    context.close()  # the person leaves mid-match
    record = record_of(site, made["match_id"])
    mine = [d for step in record["steps"] for d in step if d["seat"] == 0]
    # default actions, each a fault; but a reaction window the page still had open may
    # have been passed by its own countdown (before the arena's deadline, no fault)
    assert any(d.get("fault") for d in mine)
    assert all(d.get("fault") or (d["kind"] != "turn" and d["action"] == {"type": "pass"})
               for d in mine), mine  # fmt: skip
    assert record["outcome"]["ranks"][0] == 2  # a forfeit ranks last


def test_two_people_play_one_match_from_their_own_links(browser: Any, site: dict[str, Any]) -> None:
    made = site["api"].post(
        "/api/play",
        json={"game": "cactus-game", "seats": [{"person": "Ann"}, {"house": "random"},
              {"person": "Bob"}], "options": {"target": 2}},
    ).get_json()  # fmt: skip
    assert [link["seat"] for link in made["links"]] == [0, 2]
    pages, seats = [], []
    for link in made["links"]:
        context = browser.new_context(viewport={"width": 380, "height": 800})
        pages.append(context.new_page())
        pages[-1].goto(site["url"] + link["url"])
        seats.append(Seat(pages[-1]))
    outcomes: list[dict[str, Any]] = [{}, {}]
    # one Playwright drives both pages: they take turns
    deadline = time.monotonic() + MATCH_SECONDS
    while time.monotonic() < deadline and not all(outcomes):
        for n, page in enumerate(pages):
            if outcomes[n]:
                continue
            if page.locator("[data-outcome]").count():
                outcomes[n] = json.loads(
                    page.locator("[data-outcome]").get_attribute("data-outcome")
                )
                continue
            buttons = page.locator("#actions [data-action]")
            if buttons.count():
                seats[n].snapshot()
                with contextlib.suppress(Exception):  # the window closed meanwhile
                    buttons.first.click(timeout=1000)
        pages[0].wait_for_timeout(30)
    assert [o["seat"] for o in outcomes] == [0, 2]
    record = record_of(site, made["match_id"])
    for n, index in enumerate((0, 2)):
        check_nothing_unseen(seats[n], record, index)
        # a 380 px screen: the page is no wider than the screen
        width = pages[n].evaluate("document.documentElement.scrollWidth")
        assert width <= 380
    shoot(pages[0], "play-two-people-380")
    for page in pages:
        page.context.close()
