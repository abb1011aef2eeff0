"""The tournament form's Options fieldset in a real browser (Chromium, as in
``tests/test_browser.py``): one field per option of the chosen game with its description,
the preset's values shown, only the options changed sent, and the API's refusal of a
contradiction shown in the form.

``ARENA_SCREENSHOTS=<folder>`` keeps screenshots of the fieldset, for looking at it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import func, select

from arena.games import GAMES
from arena.games.cactus.engine import PAGAT_POWERS
from arena.models import Tournament

# the browser tests' fixtures (this module gets a site of its own: they are module-scoped)
from tests.support.browser import browser as browser
from tests.support.browser import open_tournament_form, shoot, shoot_part, submitted
from tests.support.browser import page as page
from tests.support.browser import site as site
from tests.support.web import add_bot


@pytest.fixture(scope="module")
def players(site: dict[str, Any]) -> dict[str, list[int]]:
    """Bots enough for a tournament of each game: Président needs three at a table."""
    with site["app"].extensions["arena.db"].session() as session:
        trio = [add_bot(session, f"pres{i}", ["president"]).id for i in range(1, 4)]
    return {"president": trio, "cactus": site["bots"]}


def open_form(page: Any, site: dict[str, Any], game: str, name: str) -> None:
    open_tournament_form(page, site)
    page.select_option("#game-select", game)
    page.fill("input[name=name]", name)


def tick(page: Any, bot_ids: list[int]) -> None:
    for bot_id in bot_ids:
        page.check(f"input[name=bot_ids][value='{bot_id}']")


def stored_options(site: dict[str, Any], page_url: str) -> dict[str, Any]:
    """The options of the tournament whose page the browser went to, as the API gives them."""
    tournament_id = int(page_url.rsplit("/", 1)[1])
    response = site["app"].test_client().get(f"/api/tournaments/{tournament_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()["options"]


def tournaments(site: dict[str, Any]) -> int:
    with site["app"].extensions["arena.db"].session() as session:
        return session.scalar(select(func.count()).select_from(Tournament))


def field(page: Any, name: str) -> Any:
    return page.locator(f"#option-fields .option[data-option='{name}']")


def test_a_president_variant_is_sent_and_stored(
    page: Any, site: dict[str, Any], players: dict[str, list[int]]
) -> None:
    open_form(page, site, "president", "Revolution cup")
    options = GAMES["president"].option_list()
    assert page.locator("#option-list .option").count() == len(options)
    for option in options:  # every option has its field and its description
        assert field(page, option["name"]).locator(".hint").inner_text() == option["description"]
    presets = [p["name"] for p in GAMES["president"].preset_list()]
    assert (
        page.locator("#preset-select option").evaluate_all(
            "options => options.map(o => o.value).filter(v => v)"
        )
        == presets
    )
    assert page.input_value("#option-deck") == "52"
    assert page.input_value("#option-rounds") == ""  # empty: the game's default
    assert page.locator("#option-list .option.changed").count() == 0
    page.check("#option-revolution")
    assert field(page, "revolution").get_attribute("class") == "option changed"
    tick(page, players["president"])
    assert page.input_value("#seats-input") == "3"
    shoot_part(page, "#option-fields", "options-president")
    with submitted(page) as request:
        page.click("button[type=submit]")
    payload = request.value.post_data_json
    assert payload["options"] == {"revolution": True} and "preset" not in payload
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    stored = stored_options(site, page.url)
    assert stored["revolution"] is True and stored["revolution_lasts"] is False
    assert stored == GAMES["president"].default_options() | {"revolution": True}


def test_a_refused_combination_shows_the_api_message(
    page: Any, site: dict[str, Any], players: dict[str, list[int]]
) -> None:
    open_form(page, site, "president", "Lasting cup")
    tick(page, players["president"])
    page.check("#option-revolution_lasts")  # a sub-option without its option
    before = tournaments(site)
    with submitted(page) as request:
        page.click("button[type=submit]")
    assert request.value.post_data_json["options"] == {"revolution_lasts": True}
    error = page.locator("#tournament-form .form-error")
    error.wait_for(state="visible")
    assert "'revolution_lasts' refines 'revolution'" in error.inner_text()
    assert tournaments(site) == before
    # the fields are as they were: the person fixes the combination and sends again
    assert page.is_checked("#option-revolution_lasts")
    page.check("#option-revolution")
    with submitted(page) as request:
        page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    stored = stored_options(site, page.url)
    assert stored["revolution"] is True and stored["revolution_lasts"] is True


def test_a_cactus_preset_shows_its_values_and_keeps_the_changes(
    page: Any, site: dict[str, Any], players: dict[str, list[int]]
) -> None:
    open_form(page, site, "cactus", "Pagat cup")
    assert page.input_value("#option-scoring") == "wins"
    assert "French rules" in page.locator("#preset-select option[value=classic]").get_attribute(
        "title"
    )
    page.select_option("#preset-select", "pagat")
    assert page.locator("#preset-hint").inner_text() == GAMES["cactus"].preset_docs["pagat"]
    # the fields show what pagat plays with, and nothing is marked changed
    assert page.input_value("#option-scoring") == "penalty"
    assert page.input_value("#option-initial_peek") == "choose_two"
    assert not page.is_checked("#option-eight_power")
    assert '"Q": "blind_swap"' in page.input_value("#option-powers")
    assert page.locator("#option-list .option.changed").count() == 0
    page.fill("#option-penalty_cards", "3")
    assert field(page, "penalty_cards").get_attribute("class") == "option changed"
    shoot(page, "options-cactus-pagat")
    shoot_part(page, "#option-fields", "options-cactus-pagat-fieldset")
    # another preset: the fields not changed follow it, the changed one stays
    page.select_option("#preset-select", "classic")
    assert page.input_value("#option-scoring") == "wins"
    assert page.input_value("#option-penalty_cards") == "3"
    page.select_option("#preset-select", "pagat")
    tick(page, players["cactus"])
    with submitted(page) as request:
        page.click("button[type=submit]")
    payload = request.value.post_data_json
    assert payload["preset"] == "pagat" and payload["options"] == {"penalty_cards": 3}
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    stored = stored_options(site, page.url)
    assert (stored["scoring"], stored["penalty_cards"]) == ("penalty", 3)
    assert stored["powers"] == PAGAT_POWERS


def test_an_object_option_is_typed_as_json(
    page: Any, site: dict[str, Any], players: dict[str, list[int]]
) -> None:
    open_form(page, site, "cactus", "Values cup")
    tick(page, players["cactus"])
    assert '"K": 0' in page.input_value("#option-values")
    page.fill("#option-values", "{K: -1")  # not JSON: sent as typed, refused by the API
    with submitted(page):
        page.click("button[type=submit]")
    error = page.locator("#tournament-form .form-error")
    error.wait_for(state="visible")
    assert "'values' must be an object" in error.inner_text()
    page.fill("#option-values", '{"K": -1}')  # the ranks left out keep their values
    with submitted(page) as request:
        page.click("button[type=submit]")
    assert request.value.post_data_json["options"] == {"values": {"K": -1}}
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    values = stored_options(site, page.url)["values"]
    assert values["K"] == -1 and values["Q"] == 10
