"""The pages in a real browser: Debian's Chromium driven by Playwright, against the app
served on loopback.  Covers what needs JavaScript: stepping through a replay with the
buttons and the arrow keys, the per-seat perspective, and the forms that call the API.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``); Playwright's own browser
download is never used.  Without it these tests fail on CI (``CI=true``) and are skipped
elsewhere, saying why.
"""

from __future__ import annotations

import random
import re
from typing import Any

from sqlalchemy import select

from arena.competition import formats
from arena.competition.standings import sprt_summary
from arena.match.records import seat_events
from arena.models import Bot, Match, Tournament
from arena.services import token_matches, workers
from tests.support.browser import browser as browser
from tests.support.browser import loopback_bot, open_tournament_form, shoot, shoot_part, submitted
from tests.support.browser import page as page
from tests.support.browser import site as site
from tests.support.web import save_through_the_worker, schedule


def counter(page: Any) -> str:
    return page.locator("#counter").inner_text().strip()


def wait_counter(page: Any, text: str) -> None:
    page.wait_for_function(
        "text => document.getElementById('counter').textContent.trim() === text", arg=text
    )


def log_types(page: Any) -> list[str]:
    """The types of the events the log shows (those up to the current step)."""
    return page.locator("#event-log li").evaluate_all("items => items.map(i => i.dataset.type)")


# -- the replay viewer -----------------------------------------------------------------
def test_stepping_through_a_replay(page: Any, site: dict[str, Any]) -> None:
    steps = len(site["record"]["steps"])
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"Step 0 / {steps}")
    assert page.locator("[data-go=prev]").is_disabled()
    assert log_types(page)[0] == "deal"  # the deal comes before any answer
    dealt = len(log_types(page))

    page.click("[data-go=next]")
    wait_counter(page, f"Step 1 / {steps}")
    assert len(log_types(page)) > dealt
    assert page.locator("#event-log li.current").count() >= 1  # the last step's events

    page.keyboard.press("ArrowRight")
    wait_counter(page, f"Step 2 / {steps}")
    shoot(page, "replay-all")
    page.keyboard.press("ArrowLeft")
    wait_counter(page, f"Step 1 / {steps}")

    page.click("[data-go=last]")
    wait_counter(page, f"Step {steps} / {steps}")
    assert log_types(page)[-1] == "match_over"
    assert "Match over" in page.locator("#table").inner_text()
    assert page.locator("[data-go=next]").is_disabled()
    page.keyboard.press("ArrowRight")  # at the end: stays
    wait_counter(page, f"Step {steps} / {steps}")

    page.keyboard.press("Home")
    wait_counter(page, f"Step 0 / {steps}")
    page.keyboard.press("End")
    wait_counter(page, f"Step {steps} / {steps}")
    page.click("[data-go=first]")
    wait_counter(page, f"Step 0 / {steps}")
    assert len(log_types(page)) == dealt


def test_autoplay_plays_and_pauses(page: Any, site: dict[str, Any]) -> None:
    steps = len(site["record"]["steps"])
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"Step 0 / {steps}")
    page.select_option("#speed", "8")
    page.keyboard.press(" ")
    page.wait_for_function("() => Number(document.getElementById('replay').dataset.step) >= 3")
    page.click("[data-go=play]")  # pause
    assert page.locator("[data-go=play]").get_attribute("aria-pressed") == "false"
    paused = counter(page)
    page.wait_for_timeout(600)
    assert counter(page) == paused


def test_jumping_to_a_round(page: Any, site: dict[str, Any]) -> None:
    record = site["record"]
    rounds = [r["round"] for r in record["outcome"]["rounds"]]
    assert len(rounds) >= 2, "the fixture's match has one round"
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"Step 0 / {len(record['steps'])}")
    options = page.locator("#jump-round option").all_inner_texts()[1:]
    assert options == [f"Round {r}" for r in rounds]
    page.select_option("#jump-round", label="Round 2")
    page.wait_for_function("() => document.querySelector('#table').textContent.includes('Round 2')")
    step = int(page.locator("#replay").get_attribute("data-step"))
    # the first step of round 2: its deal is among the events just shown
    assert "deal" in page.locator("#event-log li.current").evaluate_all(
        "items => items.map(i => i.dataset.type)"
    )
    page.keyboard.press("PageUp")
    page.wait_for_function(f"() => document.getElementById('replay').dataset.step < {step}")


def test_decisions_are_shown_with_their_step(page: Any, site: dict[str, Any]) -> None:
    record = site["record"]
    page.goto(f"{site['url']}/matches/{site['match']}#seat=all&step=1")
    wait_counter(page, f"Step 1 / {len(record['steps'])}")
    decision = page.locator("#decisions .decision").first
    decision.wait_for()
    text = decision.inner_text()
    action = record["steps"][0][0]["action"]["type"]
    assert action in text and " ms" in text
    assert "Step 1" in page.locator("#decisions h3").inner_text()


def test_a_seat_sees_only_what_it_received(page: Any, site: dict[str, Any]) -> None:
    record = site["record"]
    steps = len(record["steps"])
    page.goto(f"{site['url']}/matches/{site['match']}")
    wait_counter(page, f"Step 0 / {steps}")
    page.click("[data-go=last]")
    assert page.locator("#event-log li", has_text="only seat 1").count() > 0

    page.click("[data-perspective='0']")
    page.wait_for_function("() => document.getElementById('replay').dataset.showing === '0'")
    wait_counter(page, f"Step {steps} / {steps}")  # still at the end of the match
    assert page.locator("[data-perspective='0']").get_attribute("aria-pressed") == "true"
    mine = seat_events(record, 0)
    assert log_types(page) == [e["type"] for e in mine]
    assert page.locator("#event-log li", has_text="only seat 1").count() == 0
    assert "only seat 0" in page.locator("#event-log").inner_text()
    shoot(page, "replay-seat-0")
    # only seat 0's own decisions are listed
    page.click("[data-go=first]")
    deciders: list[str] = []
    for _ in range(min(steps, 40)):
        page.keyboard.press("ArrowRight")
        deciders += page.locator("#decisions .decision > .player").all_inner_texts()
    assert deciders and all(seat.endswith("(seat 0)") for seat in deciders), deciders


def test_a_perspective_and_a_step_can_be_linked(page: Any, site: dict[str, Any]) -> None:
    steps = len(site["record"]["steps"])
    page.goto(f"{site['url']}/matches/{site['match']}#seat=1&step=3")
    wait_counter(page, f"Step 3 / {steps}")
    assert page.locator("[data-perspective='1']").get_attribute("aria-pressed") == "true"
    page.keyboard.press("ArrowRight")
    wait_counter(page, f"Step 4 / {steps}")
    assert page.evaluate("location.hash") == "#seat=1&step=4"
    # a link made before the table was drawn names an event: its step opens
    mine = seat_events(site["record"], 1)
    page.goto("about:blank")
    page.goto(f"{site['url']}/matches/{site['match']}#seat=1&event={len(mine)}")
    wait_counter(page, f"Step {steps} / {steps}")


def test_unknown_events_show_their_type_and_fields_as_text(page: Any, site: dict[str, Any]) -> None:
    page.goto(f"{site['url']}/matches/{site['odd']}")
    page.wait_for_function("() => document.getElementById('replay').dataset.showing")
    text = page.locator("#event-log").inner_text()
    assert "mystery" in text and "answer" in text and "42" in text
    assert "<img src=x onerror=alert(1)>" in text  # shown as text, never as markup
    assert page.locator("#replay img").count() == 0
    assert "cannot be re-simulated" in page.locator("#perspective-note").inner_text()
    assert "for bob only" in text
    page.click("[data-perspective='0']")
    page.wait_for_function("() => document.getElementById('replay').dataset.showing === '0'")
    assert "whisper" not in page.locator("#replay").inner_text()


# -- forms ------------------------------------------------------------------------------


def test_registering_a_bot_shows_its_secrets_once(page: Any, site: dict[str, Any]) -> None:
    with loopback_bot(["cactus"]) as endpoint:
        page.goto(f"{site['url']}/bots/register")
        page.fill("input[name=name]", "form-bot")
        page.fill("input[name=endpoint]", endpoint)
        page.fill("input[name=owner]", "browser test")
        page.fill("textarea[name=description]", "registered by the browser test")
        page.click("button[type=submit]")
        page.locator("#register-result").wait_for(state="visible")
    token = page.locator("#owner-token").inner_text()
    secret = page.locator("#signing-secret").inner_text()
    assert token and secret and token != secret
    assert "Copy these now" in page.locator("#register-result").inner_text()
    assert page.locator("#register-form").is_hidden()
    shoot(page, "registered")
    with site["app"].extensions["arena.db"].session() as session:
        bot = session.scalar(select(Bot).where(Bot.name == "form-bot"))
        assert bot is not None and bot.games == ["cactus"]
        assert token_matches(token, bot.owner_token_hash)
        assert bot.signing_secret == secret
    assert page.locator(".bot-link").get_attribute("href") == f"/bots/{bot.id}"
    # shown once: neither a reload of the form nor the bot's page shows them again
    page.reload()
    assert page.locator("#register-result").is_hidden()
    assert token not in page.content()
    page.goto(f"{site['url']}/bots/{bot.id}")
    assert token not in page.content() and secret not in page.content()


def test_a_laptop_bot_registers_to_connect_out_and_is_told_how_to_start(
    page: Any, site: dict[str, Any]
) -> None:
    page.goto(f"{site['url']}/bots/register")
    assert page.locator("input[name=endpoint]").is_visible()
    page.check("input[name=transport][value=connect]")
    assert page.locator("input[name=endpoint]").is_hidden()  # no address to give
    page.fill("input[name=name]", "laptop-bot")
    page.fill("input[name=owner]", "a student")
    page.check("input[name=games][value=cactus]")
    page.click("button[type=submit]")
    page.locator("#register-result").wait_for(state="visible")
    secret = page.locator("#signing-secret").inner_text()
    with site["app"].extensions["arena.db"].session() as session:
        bot = session.scalar(select(Bot).where(Bot.name == "laptop-bot"))
        assert bot is not None and bot.endpoint is None and bot.games == ["cactus"]
    command = page.locator("#connect-command").inner_text()
    # the secret from the environment, as the SDK's README advises: not on the command line
    assert command == (
        f"export ARENA_BOT_SECRET={secret}\npython bot.py --connect {site['url']} --bot-id {bot.id}"
    )
    shoot(page, "registered-connect")


def test_a_refused_registration_shows_the_api_message(page: Any, site: dict[str, Any]) -> None:
    page.goto(f"{site['url']}/bots/register")
    page.fill("input[name=name]", "ann")  # taken
    page.fill("input[name=endpoint]", "not a url")
    page.fill("input[name=owner]", "browser test")
    page.click("button[type=submit]")
    error = page.locator("#register-form .form-error")
    error.wait_for(state="visible")
    assert "endpoint" in error.inner_text().lower()
    assert page.locator("#register-result").is_hidden()


def test_the_tournament_form_filters_bots_and_starts_a_tournament(
    page: Any, site: dict[str, Any]
) -> None:
    open_tournament_form(page, site)
    visible = page.locator(".bot-choice:visible")
    page.select_option("#game-select", "president")
    # the contestants' bots of that game (the house bots, made as bots are validated,
    # play every game, and are offered as references)
    contestants = page.locator(".bot-choice:visible:not([data-reference])")
    assert [t.split("(")[0].strip() for t in contestants.all_inner_texts()] == ["pat"]
    assert page.input_value("#seats-input") == "3"
    page.select_option("#game-select", "cactus")
    names = [t.split("(")[0].strip() for t in visible.all_inner_texts()]
    assert "ann" in names and "bob" in names and "pat" not in names
    assert page.locator("#preset-select option").all_inner_texts()[1:] == ["classic", "pagat"]
    page.fill("input[name=name]", "Browser cup")
    for bot_id in site["bots"]:
        page.check(f"input[name=bot_ids][value='{bot_id}']")
    page.select_option("#preset-select", "classic")
    page.check("#live-everyone")  # a class watching: every card shown live
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    assert "Browser cup" in page.locator("h1").inner_text()
    with site["app"].extensions["arena.db"].session() as session:
        created = session.get(Tournament, int(page.url.rsplit("/", 1)[1]))
        assert created.live_view == "everyone"
    standings = page.locator("table.standings tbody tr").all_inner_texts()
    assert {row.split("\t")[1] for row in standings} == {"ann", "bob"}


def test_the_format_fields_follow_the_chosen_format(page: Any, site: dict[str, Any]) -> None:
    open_tournament_form(page, site)
    # the formats and their words as GET /api/formats gives them, the default chosen
    options = page.locator("#format-select option")
    assert options.all_inner_texts() == [f.title for f in formats.FORMATS.values()]
    assert page.input_value("#format-select") == formats.DEFAULT_FORMAT
    assert formats.FORMATS[formats.DEFAULT_FORMAT].hint in page.inner_text("#format-hint")
    games = page.locator("#games-input")
    matches = page.locator("#matches-input")
    sprt = page.locator("#sprt-fields")
    challenger = page.locator(".challenger-choice:visible")
    assert games.is_visible() and matches.is_hidden() and sprt.is_hidden()
    assert challenger.count() == 0
    page.select_option("#format-select", "balanced")
    assert page.inner_text("#format-hint").startswith("Balanced:")
    assert games.is_hidden() and matches.is_visible() and sprt.is_hidden()
    assert "Matches per bot" in page.locator("label:has(#matches-input)").inner_text()
    page.select_option("#format-select", "gauntlet")
    assert matches.is_visible() and sprt.is_visible() and challenger.count() > 0
    assert "per challenger" in page.locator("label:has(#matches-input)").inner_text()
    assert page.locator("#sprt-elo1").is_disabled()  # until the stop rule is ticked
    page.check("#sprt-on")
    assert page.locator("#sprt-elo1").is_enabled()
    assert [page.input_value(f"#sprt-{k}") for k in ("elo0", "elo1", "alpha", "beta")] == [
        "0",
        "10",
        "0.05",
        "0.05",
    ]
    # duplicate deals: matches per bot a multiple of the seats
    page.fill("#seats-input", "4")
    page.locator("#seats-input").dispatch_event("change")
    page.select_option("#deal-select", "duplicate")
    assert page.input_value("#matches-input") == "12"
    page.fill("#matches-input", "10")
    page.locator("#matches-input").dispatch_event("change")
    assert page.input_value("#matches-input") == "12"
    # a challenger is an entrant; select all takes every bot of the game, and only those
    ann = site["bots"][0]
    page.check(f"input[name=challenger_ids][value='{ann}']")
    assert page.is_checked(f"input[name=bot_ids][value='{ann}']")
    page.uncheck(f"input[name=bot_ids][value='{ann}']")
    assert not page.is_checked(f"input[name=challenger_ids][value='{ann}']")
    page.click("#select-all")
    ticked = page.locator("input[name=bot_ids]:checked").count()
    assert ticked == page.locator(".bot-choice:visible").count() >= 8
    assert "pat" not in " ".join(page.locator(".bot-choice:has(input:checked)").all_inner_texts())
    page.fill("#bot-filter", "cat")
    assert page.locator(".bot-choice:visible").count() == 6
    assert page.locator("input[name=bot_ids]:checked").count() == ticked  # still chosen
    page.click("#select-none")
    assert page.locator("input[name=bot_ids]:checked").count() == 0


def test_the_form_starts_a_balanced_tournament_with_duplicate_deals(
    page: Any, site: dict[str, Any]
) -> None:
    open_tournament_form(page, site)
    page.fill("input[name=name]", "Balanced form cup")
    page.select_option("#format-select", "balanced")
    page.select_option("#deal-select", "duplicate")
    page.fill("#matches-input", "4")
    for bot_id in site["crowd"]:
        page.check(f"input[name=bot_ids][value='{bot_id}']")
    with submitted(page) as request:
        page.click("button[type=submit]")
    payload = request.value.post_data_json
    assert payload == {
        "name": "Balanced form cup",
        "game": "cactus",
        "format": "balanced",
        "deal": "duplicate",
        "bot_ids": site["crowd"],
        "seats_per_match": 2,
        "matches_per_bot": 4,
    }
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    facts = page.locator("#facts").inner_text()
    assert "Balanced: 4 matches per bot, 2 seats per match, duplicate deals" in facts
    assert "4 matches per bot, seat spread" in facts
    assert "± par per deal" in page.locator("#standings").inner_text()
    assert page.locator("#crosstable table").count() == 1
    # the matches played (the lower id wins each), the standings have deals and par
    tournament_id = int(page.url.rsplit("/", 1)[1])
    app = site["app"]
    with app.extensions["arena.db"].session() as session:
        matches = {
            match_id: [s.bot_id for s in session.get(Match, match_id).seats]
            for match_id in schedule(session, tournament_id)
        }
    for match_id, seats in matches.items():
        assert save_through_the_worker(app, match_id, [1 if b == min(seats) else 2 for b in seats])
    page.reload()
    assert "finished" in page.locator("h1").inner_text().lower()
    pars = page.locator("#standings td.par").all_inner_texts()
    assert pars[0].startswith("+") and pars[-1].startswith("\u2212")
    shoot(page, "tournament-balanced-duplicate")


def test_the_form_starts_a_gauntlet_with_a_stop_rule(page: Any, site: dict[str, Any]) -> None:
    ann, bob = site["bots"]
    open_tournament_form(page, site)
    page.fill("input[name=name]", "Gauntlet form cup")
    page.select_option("#format-select", "gauntlet")
    page.click("#select-all")
    page.check(f"input[name=challenger_ids][value='{ann}']")
    page.check(f"input[name=challenger_ids][value='{bob}']")
    page.fill("#matches-input", "200")
    page.check("#sprt-on")
    page.fill("#sprt-elo1", "50")
    page.fill("#seats-input", "2")
    shoot(page, "tournament-new-gauntlet")
    # a refused payload shows the API's message; nothing is created
    page.fill("#sprt-alpha", "0.9")
    with submitted(page):
        page.click("button[type=submit]")
    error = page.locator("#tournament-form .form-error")
    error.wait_for(state="visible")
    assert "alpha" in error.inner_text()
    page.fill("#sprt-alpha", "0.05")
    with submitted(page) as request:
        page.click("button[type=submit]")
    payload = request.value.post_data_json
    field = [b for b in payload["bot_ids"] if b not in (ann, bob)]
    assert payload["format"] == "gauntlet" and payload["deal"] == "independent"
    assert payload["challenger_ids"] == [ann, bob] and set(site["crowd"]) <= set(field)
    assert payload["matches_per_bot"] == 200
    assert payload["sprt"] == {"elo0": 0, "elo1": 50, "alpha": 0.05, "beta": 0.05}
    assert "games_per_pairing" not in payload
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    tournament_id = int(page.url.rsplit("/", 1)[1])
    rule = page.locator("#stop-rule")
    assert rule.locator("tbody tr").count() == 2
    assert rule.locator("tbody").inner_text().count("still open") == 2
    # ann wins most of its matches and bob loses most, until both are decided
    app = site["app"]
    played = []
    with app.extensions["arena.db"].session() as session:
        rng = random.Random(4)
        for match_id in schedule(session, tournament_id):
            seats = [s.bot_id for s in session.get(Match, match_id).seats]
            hero = ann if ann in seats else bob
            wins = rng.random() < (0.9 if hero == ann else 0.1)
            ranks = [(1 if wins else 2) if b == hero else (2 if wins else 1) for b in seats]
            played.append((match_id, ranks))
    for match_id, ranks in played:
        save_through_the_worker(app, match_id, ranks)  # False once its challenger decided
    with app.extensions["arena.db"].session() as session:
        summary = sprt_summary(session, session.get(Tournament, tournament_id))
    assert {c["decision"] for c in summary["challengers"]} == {"H0", "H1"}
    page.reload()
    text = rule.inner_text()
    assert "passed (H1)" in text and "failed (H0)" in text
    assert "finished" in page.locator("h1").inner_text().lower()  # the rest was cancelled
    assert page.locator("#standings .badge").count() == 2
    shoot(page, "tournament-gauntlet-sprt")
    shoot_part(page, "#stop-rule", "tournament-gauntlet-stop-rule")


def test_a_live_tournament_updates_its_sections_without_reloading(
    page: Any, site: dict[str, Any]
) -> None:
    tournament_id = site["live"]
    url = f"{site['url']}/tournaments/{tournament_id}"
    with site["app"].extensions["arena.db"].session() as session:
        # a worker alive: the page would otherwise change when its no-worker warning
        # appears, the tournament being older than the warning's grace
        workers.beat(session, "a worker of the test")
    answers: list[int] = []
    page.on("response", lambda r: answers.append(r.status) if r.url.startswith(url) else None)
    page.goto(url)
    assert page.locator("#progress").get_attribute("data-refresh") == "5"
    assert "0/24 done" in page.locator("#progress").inner_text()
    page.evaluate("window.marker = 'still the same page'")
    page.evaluate("window.scrollTo(0, 400)")
    # nothing changed: the poll gets 304 Not Modified and leaves the page alone
    page.wait_for_timeout(5500)
    assert 304 in answers
    before = page.locator("#standings").inner_html()
    with site["app"].extensions["arena.db"].session() as session:
        first = schedule(session, tournament_id)[0]
    assert save_through_the_worker(site["app"], first, [1, 2])
    page.wait_for_function(
        "() => document.querySelector('#progress').textContent.includes('1/24 done')",
        timeout=15_000,
    )
    assert page.evaluate("window.marker") == "still the same page"  # not reloaded
    assert page.locator("#standings").inner_html() != before
    assert page.evaluate("window.scrollY") == 400
    assert page.locator("#cancel-form").is_visible()  # the new section's form works too
    assert answers.count(200) == 2  # the page, then the one update


def test_cancelling_a_tournament(page: Any, site: dict[str, Any]) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{site['url']}/tournaments/{site['running']}")
    page.click("#cancel-form button[type=submit]")
    page.locator("h1 .status-cancelled").wait_for()
    assert page.locator("#cancel-form").count() == 0
