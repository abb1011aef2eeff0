"""Grading a qualifier: the pass rules (mean score, wins in consecutive matches with MIT
Battlecode's 8 of 10, the stop rule), decided as soon as they cannot change, each with
its evidence; the qualifier format and its pass rule checked by the API (422); the
grades as JSON and the same CSV; the event roster's grade columns, each caller seeing
what they may; the grades on the tournament page; and the tournament form's pass rule in
Chromium (``tests.support.browser``)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from flask import Flask

from arena.api.exports import cell
from arena.competition import formats
from arena.competition.grading import (
    GradingError,
    PassRule,
    Result,
    grade,
    match_score,
)
from arena.games import make_policy
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Match
from arena.worker import play, refits
from tests.support.api import auth, error
from tests.support.browser import browser as browser
from tests.support.browser import open_tournament_form, submitted
from tests.support.browser import page as page
from tests.support.browser import site as site
from tests.support.faults import Down
from tests.support.web import save_through_the_worker, schedule

ORGANISER = "organiser-token-of-the-grades"
PASSWORD = "a long enough password 1"
SCORE = PassRule("score", min_score=0.8)
BATTLECODE = PassRule("consecutive", wins=8, of=10)
STOP = PassRule("stop_rule")


def results(outcomes: str) -> list[Result]:
    """Matches 1, 2, ... in schedule order: W won, L lost, D a tie with the reference
    bot (1/2), F forfeited (ranked first all the same: a forfeit counts as lost), - not
    played yet."""
    made = []
    for match_id, outcome in enumerate(outcomes.replace(" ", ""), start=1):
        if outcome == "-":
            made.append(Result(match_id))
        else:
            score = {"W": 1.0, "L": 0.0, "D": 0.5, "F": 1.0}[outcome]
            made.append(Result(match_id, score, outcome in "WF", forfeited=outcome == "F"))
    return made


# -- the pure rules ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("outcomes", "verdict", "wins", "score"),
    [
        ("WWWWL", "pass", 4, 0.8),  # exactly the bar
        ("WWWL", "fail", 3, 0.75),
        ("WWWW-", "pass", 4, 1.0),  # losing the last leaves 0.8: decided early
        ("L----", "pending", 0, 0.0),  # winning the rest reaches 0.8
        ("LL---", "fail", 0, 0.0),  # 3/5 at best: decided early
        ("WWWWF", "pass", 4, 0.8),
        ("WWWFF", "fail", 3, 0.6),  # forfeits are played and lost, whatever the rank
        ("DDDD", "fail", 0, 0.5),
        ("", "fail", 0, None),  # nothing played, nothing to play
    ],
)
def test_the_score_rule(outcomes, verdict, wins, score):
    given = results(outcomes)
    graded = grade(SCORE, given)
    assert (graded.grade, graded.wins, graded.score) == (verdict, wins, score)
    assert graded.matches == sum(r.played for r in given)
    assert graded.remaining == outcomes.count("-")
    assert graded.evidence == tuple(r.match_id for r in given if r.played)


@pytest.mark.parametrize(
    ("outcomes", "verdict", "best", "window"),
    [
        # Battlecode: 8 wins in some 10 consecutive matches.  The first ten hold 7; the
        # eleventh makes matches 2 to 11 hold 8
        ("LWWWWWWWLL", "fail", 7, range(1, 11)),
        ("LWWWWWWWLL W", "pass", 8, range(2, 12)),
        # 8 wins in 11 matches, but never 8 in 10 in a row
        ("WWWWLLLWWWW", "fail", 7, range(1, 11)),
        ("WWWWWWW---", "pending", 7, range(1, 11)),  # the open three may still be won
        ("WWWWWWWW--", "pass", 8, range(1, 11)),  # met: the rest cannot undo it
        ("LLL-------", "fail", 0, range(1, 11)),  # 7 at most in any ten: decided early
        ("WWWWWWWW", "pass", 8, range(1, 9)),  # fewer than ten matches may hold eight
        ("FFFFFFFFFF", "fail", 0, range(1, 11)),  # a forfeit is no win
    ],
)
def test_the_consecutive_rule_as_battlecode_plays_it(outcomes, verdict, best, window):
    graded = grade(BATTLECODE, results(outcomes))
    assert graded.grade == verdict
    assert graded.window.wins == best and graded.evidence == tuple(window)
    assert graded.window.matches == len(window)
    assert graded.reason(BATTLECODE) == f"best run: {best} wins in {len(window)} matches" or (
        verdict == "pending" and graded.reason(BATTLECODE).endswith("to play")
    )


@pytest.mark.parametrize(
    ("rule", "outcomes", "verdict", "evidence"),
    [
        # match 6 still runs: matches 1-10 hold 8 wins whatever it does
        (BATTLECODE, "LWWWW-WWWWLLL", "pass", range(1, 11)),
        # two wins in a row: not yet, the open match between them may be lost...
        (PassRule("consecutive", wins=2, of=2), "W-W", "pending", range(1, 3)),
        (PassRule("consecutive", wins=2, of=2), "WLW", "fail", range(1, 3)),
        (PassRule("consecutive", wins=2, of=2), "WLWW", "pass", range(3, 5)),
    ],
)
def test_a_run_is_consecutive_in_schedule_order_open_matches_included(
    rule, outcomes, verdict, evidence
):
    graded = grade(rule, results(outcomes))
    assert graded.grade == verdict and graded.evidence == tuple(evidence)


@pytest.mark.parametrize(
    ("decision", "outcomes", "verdict"),
    [("H1", "WWW", "pass"), ("H0", "LLL", "fail"), (None, "WW-", "pending"), (None, "WWL", "fail")],
)
def test_the_stop_rule_follows_the_sequential_test(decision, outcomes, verdict):
    graded = grade(STOP, results(outcomes), decision)
    assert graded.grade == verdict and graded.decision == decision


@pytest.mark.parametrize(
    ("seats", "bot", "expected"),
    [
        ([(1, 1), (2, 2)], 1, (1.0, True)),
        ([(1, 2), (2, 1)], 1, (0.0, False)),
        ([(1, 1), (2, 1)], 1, (0.5, False)),  # a shared first place is no win
        ([(2, 1), (1, 2), (3, 3)], 1, (0.5, False)),  # 1 of 2 opponents below it
        ([(1, 1), (2, 2), (3, 2)], 1, (1.0, True)),
    ],
)
def test_a_match_s_score_is_the_standings_points_over_the_opponents(seats, bot, expected):
    assert match_score(seats, bot) == expected


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"kind": "elo"}, "kind is one of score, consecutive, stop_rule"),
        ({"kind": "score"}, "needs min_score"),
        ({"kind": "score", "min_score": 1.5}, "from 0 to 1"),
        ({"kind": "score", "min_score": True}, "needs min_score"),
        ({"kind": "consecutive", "wins": 9, "of": 8}, "cannot exceed"),
        ({"kind": "consecutive", "wins": 0, "of": 8}, "needs wins"),
        ({"kind": "consecutive", "wins": 2}, "needs of"),
    ],
)
def test_a_rule_that_cannot_be_applied_is_refused(rule, message):
    with pytest.raises(GradingError, match=message):
        PassRule.from_json(rule)


def test_a_rule_reads_back_what_it_stores_and_says_itself_in_words():
    for rule in (SCORE, BATTLECODE, STOP):
        assert PassRule.from_json(rule.to_json()) == rule
    assert BATTLECODE.text() == "at least 8 wins in 10 consecutive matches"
    assert SCORE.text() == "mean score at least 0.8"


# -- the qualifier format ---------------------------------------------------------------------
def test_the_qualifier_is_a_gauntlet_with_a_pass_rule():
    qualifier = formats.FORMATS["qualifier"]
    entry = formats.Entry(
        bot_ids=(1, 2, 3), seats_per_match=2, matches_per_bot=4, challenger_ids=(2, 3)
    )
    with pytest.raises(formats.FormatError, match="needs a pass_rule"):
        qualifier.check(entry)
    with pytest.raises(formats.FormatError, match="needs sprt"):
        qualifier.check(formats.Entry(**{**entry.__dict__, "pass_rule": STOP}))
    graded = formats.Entry(**{**entry.__dict__, "pass_rule": BATTLECODE})
    qualifier.check(graded)
    tables = qualifier.build(graded, seed=1)
    assert len(tables) == qualifier.count(graded) == 8
    # a contestant never meets another: the field is the reference bot
    assert all(sorted(t.seats) in ([1, 2], [1, 3]) for t in tables)
    assert qualifier.describe(graded) == (
        "Qualifier: 4 matches per contestant, pass: at least 8 wins in 10 consecutive "
        "matches, 2 seats per match, independent deals"
    )
    with pytest.raises(formats.FormatError, match="belongs to the qualifier"):
        formats.FORMATS["gauntlet"].check(graded)


# -- through the API --------------------------------------------------------------------------
def flat_csv(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/csv"
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True), newline="")))


def same_table(rows: list[dict[str, Any]], response: Any) -> None:
    assert rows
    assert flat_csv(response) == [{k: cell(v) for k, v in row.items()} for row in rows]


def sign_up(client: Any, name: str, **body: Any) -> dict[str, str]:
    response = client.post("/api/accounts", json={"name": name, "password": PASSWORD, **body})
    assert response.status_code == 201, response.get_json()
    return auth(response.get_json()["token"])


def enter_bot(client: Any, who: dict[str, str], name: str, endpoint: str, event_id: int) -> int:
    body = {"name": name, "endpoint": endpoint, "event_id": event_id, "games": ["cactus"]}
    response = client.post("/api/bots", json=body, headers=who)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


# who plays how: the reference bot is down (it forfeits), "ace" plays, "dud" is down too
BEHAVIOUR = {"ref": "down", "ace": "plays", "dud": "down"}


def play_all(app: Flask, match_ids: list[int], names: dict[int, str]) -> None:
    """Each match played by the referee with in-process clients and saved as a worker
    saves it."""
    database = app.extensions["arena.db"]
    for match_id in match_ids:
        with database.session() as session:
            match = session.get(Match, match_id)
            match.status = "running"
            seated, seed = [names[s.bot_id] for s in match.seats], match.seed
        clients = [
            Down(name)
            if BEHAVIOUR[name] == "down"
            else PolicyClient(make_policy("cactus", "random", policy_rng(seed, seat)), name)
            for seat, name in enumerate(seated)
        ]
        record = Referee(max_strikes=3).run("cactus", clients, seed)
        with mock.patch.object(refits.refit_ratings, "delay"):
            assert play.save_result(database, match_id, record)


@pytest.fixture
def qualifier(make_app: Callable[..., Flask], info_bot: Callable[..., str], enqueued: list[int]):
    """An event (public) organised by olga, whose reference bot "ref" plays dee's "ace"
    and eve's "dud" in a qualifier of 4 matches each (mean score 0.8 to pass)."""
    app = make_app(organiser_token=ORGANISER, rate_limits=False)
    client = app.test_client()
    response = client.post(
        "/api/accounts",
        json={"name": "olga", "password": PASSWORD, "role": "organiser"},
        headers=auth(ORGANISER),
    )
    assert response.status_code == 201, response.get_json()
    olga = auth(response.get_json()["token"])
    response = client.post("/api/events", json={"name": "class", "games": ["cactus"]}, headers=olga)
    assert response.status_code == 201, response.get_json()
    event = response.get_json()
    dee = sign_up(client, "dee", join_code=event["join_code"])
    eve = sign_up(client, "eve", join_code=event["join_code"])
    ids = {
        "ref": enter_bot(client, olga, "ref", info_bot(), event["id"]),
        "ace": enter_bot(client, dee, "ace", info_bot(), event["id"]),
        "dud": enter_bot(client, eve, "dud", info_bot(), event["id"]),
    }
    body = {
        "name": "qualifier",
        "game": "cactus",
        "event_id": event["id"],
        "format": "qualifier",
        "bot_ids": list(ids.values()),
        "challenger_ids": [ids["ace"], ids["dud"]],
        "seats_per_match": 2,
        "matches_per_bot": 4,
        "pass_rule": {"kind": "score", "min_score": 0.8},
    }
    del enqueued[:]  # the bots' validation matches, not played here
    response = client.post("/api/tournaments", json=body, headers=olga)
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    return {
        "app": app,
        "client": client,
        "event": event,
        "tournament": created,
        "ids": ids,
        "body": body,
        "olga": olga,
        "dee": dee,
        "eve": eve,
        "match_ids": list(enqueued),
    }


@pytest.mark.parametrize(
    ("rule", "field", "message"),
    [
        (None, "pass_rule", "Required by the qualifier format"),
        ({"kind": "score", "min_score": 2}, "min_score", "less than or equal to 1"),
        ({"kind": "consecutive", "wins": 9, "of": 8}, "wins", "cannot exceed"),
        ({"kind": "consecutive", "wins": 2}, "of", "Required by the consecutive rule"),
        ({"kind": "score", "min_score": 0.5, "wins": 3}, "wins", "Not a field of the score"),
        ({"kind": "elo"}, "kind", "Must be one of"),
    ],
)
def test_a_bad_pass_rule_is_a_422_that_says_what_is_wrong(qualifier, rule, field, message):
    client, body = qualifier["client"], dict(qualifier["body"])
    body["pass_rule"] = rule
    response = client.post("/api/tournaments", json=body, headers=qualifier["olga"])
    error(response, 422, field, message)


def test_a_pass_rule_belongs_to_the_qualifier_and_the_stop_rule_needs_sprt(qualifier):
    client, body = qualifier["client"], qualifier["body"]
    robin = {**body, "format": "round_robin", "games_per_pairing": 2}
    for key in ("challenger_ids", "matches_per_bot"):
        robin.pop(key)
    answer = error(client.post("/api/tournaments", json=robin, headers=qualifier["olga"]), 422)
    assert "Not a field of the round_robin format" in str(answer["errors"])
    stop = {**body, "pass_rule": {"kind": "stop_rule"}}
    error(client.post("/api/tournaments", json=stop, headers=qualifier["olga"]), 400, "needs sprt")


def test_the_grades_pass_and_fail_with_their_evidence_as_json_and_csv(qualifier):
    app, client, ids = qualifier["app"], qualifier["client"], qualifier["ids"]
    tournament = qualifier["tournament"]
    assert tournament["format"] == "qualifier"
    assert tournament["pass_rule"] == {"kind": "score", "min_score": 0.8}
    url = f"/api/tournaments/{tournament['id']}/grades"
    pending = client.get(url).get_json()
    assert [(r["bot"], r["grade"], r["remaining"]) for r in pending] == [
        ("ace", "pending", 4),
        ("dud", "pending", 4),
    ]

    play_all(app, qualifier["match_ids"], {v: k for k, v in ids.items()})
    rows = client.get(url).get_json()
    by_bot = {row["bot"]: row for row in rows}
    ace, dud = by_bot["ace"], by_bot["dud"]
    # the reference bot forfeits: ace wins all; dud forfeits too, and its forfeits are losses
    assert (ace["grade"], ace["matches"], ace["wins"], ace["score"]) == ("pass", 4, 4, 1.0)
    assert (dud["grade"], dud["matches"], dud["wins"], dud["score"]) == ("fail", 4, 0, 0.0)
    assert ace["account"] == "dee" and dud["account"] == "eve"
    assert ace["rule"] == "mean score at least 0.8" and ace["remaining"] == 0
    with app.extensions["arena.db"].session() as session:
        played = {
            name: sorted(
                m.id for m in session.query(Match).filter_by(tournament_id=tournament["id"])
                if ids[name] in {s.bot_id for s in m.seats}
            )
            for name in ("ace", "dud")
        }  # fmt: skip
    assert ace["evidence"] == " ".join(map(str, played["ace"]))
    assert dud["evidence"] == " ".join(map(str, played["dud"]))
    same_table(rows, client.get(url + ".csv"))

    # the tournament's page: pass and fail, with the evidence
    page = client.get(f"/tournaments/{tournament['id']}").get_data(as_text=True)
    grades = page[page.index('id="grades"') :].split("</table>")[0]
    row = re.search(rf'<tr data-bot-id="{ids["ace"]}">(.*?)</tr>', grades, re.S)[1]
    assert "pass" in row and f'href="/matches/{played["ace"][0]}"' in row
    row = re.search(rf'<tr data-bot-id="{ids["dud"]}">(.*?)</tr>', grades, re.S)[1]
    assert "fail" in row and "mean score 0.000" in row
    assert 'id="versions"' not in page  # no bot changed its version


def test_a_tournament_without_a_pass_rule_has_no_grades(qualifier):
    client = qualifier["client"]
    body = {**qualifier["body"], "format": "round_robin", "games_per_pairing": 2}
    for key in ("challenger_ids", "matches_per_bot", "pass_rule"):
        body.pop(key)
    response = client.post("/api/tournaments", json=body, headers=qualifier["olga"])
    assert response.status_code == 201, response.get_json()
    error(client.get(f"/api/tournaments/{response.get_json()['id']}/grades"), 404, "no pass rule")


def test_the_roster_shows_grades_to_organisers_and_to_each_contestant_their_own(qualifier):
    app, client, ids = qualifier["app"], qualifier["client"], qualifier["ids"]
    play_all(app, qualifier["match_ids"], {v: k for k, v in ids.items()})
    url = f"/api/events/{qualifier['event']['id']}/roster"
    qualifier_id = qualifier["tournament"]["id"]
    columns = ("qualifier_id", "grade", "grade_matches", "grade_score")

    def grades(who: dict[str, str] | None) -> dict[str, tuple]:
        rows = client.get(url, headers=who or {}).get_json()
        return {row["bot"]: tuple(row[c] for c in columns) for row in rows if row["bot"]}

    passed, failed = (qualifier_id, "pass", 4, 1.0), (qualifier_id, "fail", 4, 0.0)
    nothing = (None, None, None, None)
    # the reference bot was not graded: the qualifier, no grade
    assert grades(qualifier["olga"]) == {
        "ref": (qualifier_id, None, None, None),
        "ace": passed,
        "dud": failed,
    }
    assert grades(qualifier["dee"]) == {"ref": nothing, "ace": passed, "dud": nothing}
    assert grades(qualifier["eve"]) == {"ref": nothing, "ace": nothing, "dud": failed}
    assert grades(None) == {"ref": nothing, "ace": nothing, "dud": nothing}
    # the CSV is the JSON, for the same caller
    for who in (qualifier["olga"], qualifier["dee"]):
        same_table(client.get(url, headers=who).get_json(), client.get(url + ".csv", headers=who))


# -- the tournament form, in Chromium ------------------------------------------------------------
def test_the_form_starts_a_qualifier_with_its_pass_rule(page: Any, site: dict[str, Any]) -> None:
    ann, bob = site["bots"]
    reference = site["crowd"][0]
    open_tournament_form(page, site)
    rule = page.locator("#pass-rule-fields")
    page.select_option("#format-select", "gauntlet")
    assert rule.is_hidden()
    page.select_option("#format-select", "qualifier")
    assert rule.is_visible() and page.locator("#sprt-fields").is_visible()
    # only the chosen rule's parameters
    assert page.locator("#pass-min-score").is_visible() and page.locator("#pass-wins").is_hidden()
    page.select_option("#pass-kind", "consecutive")
    assert page.locator("#pass-wins").is_visible() and page.locator("#pass-min-score").is_hidden()
    page.fill("#pass-wins", "3")
    page.fill("#pass-of", "4")
    page.fill("input[name=name]", "Qualifier form cup")
    page.check(f"input[name=bot_ids][value='{reference}']")
    page.check(f"input[name=challenger_ids][value='{ann}']")
    page.check(f"input[name=challenger_ids][value='{bob}']")
    page.fill("#matches-input", "4")
    page.fill("#seats-input", "2")
    with submitted(page) as request:
        page.click("button[type=submit]")
    payload = request.value.post_data_json
    assert payload["format"] == "qualifier" and payload["matches_per_bot"] == 4
    assert payload["pass_rule"] == {"kind": "consecutive", "wins": 3, "of": 4}
    assert sorted(payload["bot_ids"]) == sorted([ann, bob, reference])
    assert payload["challenger_ids"] == [ann, bob] and "sprt" not in payload
    page.wait_for_url(re.compile(r".*/tournaments/\d+$"))
    tournament_id = int(page.url.rsplit("/", 1)[1])
    grades = page.locator("#grades tbody tr")
    assert grades.count() == 2 and grades.all_inner_texts()[0].count("pending") == 1

    # ann wins every match against the reference bot, bob none
    app = site["app"]
    with app.extensions["arena.db"].session() as session:
        seated = {m: [s.bot_id for s in session.get(Match, m).seats] for m in schedule(
            session, tournament_id)}  # fmt: skip
    for match_id, seats in seated.items():
        winner = ann if ann in seats else reference
        save_through_the_worker(app, match_id, [1 if b == winner else 2 for b in seats])
    page.reload()
    rows = {
        row.get_attribute("data-bot-id"): row.inner_text()
        for row in page.locator("#grades tbody tr").all()
    }
    assert "pass" in rows[str(ann)] and "best run: 4 wins in 4 matches" in rows[str(ann)]
    assert "fail" in rows[str(bob)] and "best run: 0 wins in 4 matches" in rows[str(bob)]
