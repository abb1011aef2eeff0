"""Tournament formats through the API and the results path a worker takes: balanced
schedules, gauntlets whose stop rule ends them early, duplicate deals and their
standings, the size limit; standings kept as results arrive equal to those recomputed
from the finished matches."""

from __future__ import annotations

import collections
import itertools
import random
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from arena.competition import formats
from arena.models import Match, MatchSeat, Tournament
from tests.support.api import counts, error, register_many
from tests.support.web import add_many_bots, finish

SPRT = {"elo0": 0, "elo1": 50, "alpha": 0.05, "beta": 0.05}


def create(client: Any, ids: list[int], status: int = 201, **fields: Any) -> dict[str, Any]:
    body = {"name": "cup", "game": "cactus", "bot_ids": ids, "seats_per_match": 2, **fields}
    response = client.post("/api/tournaments", json=body)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def seatings(app: Flask, tournament_id: int) -> list[tuple[int, int | None, list[int]]]:
    """(seed, deal, bot by seat) of every match, in schedule order."""
    with app.extensions["arena.db"].session() as session:
        matches = session.scalars(
            select(Match).where(Match.tournament_id == tournament_id).order_by(Match.id)
        ).all()
        return [(m.seed, m.deal, [s.bot_id for s in m.seats]) for m in matches]


def match_seats(app: Flask, tournament_id: int) -> dict[int, list[int]]:
    """Bot by seat of every match, by match id in schedule order."""
    with app.extensions["arena.db"].session() as session:
        ids = session.scalars(
            select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)
        ).all()
    return {i: seats for i, (_, _, seats) in zip(ids, seatings(app, tournament_id), strict=True)}


def recomputed(app: Flask, tournament_id: int) -> dict[int, tuple[int, float, int]]:
    """(matches, points, wins) per bot from the finished matches, the slow way."""
    totals: dict[int, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0])
    with app.extensions["arena.db"].session() as session:
        rows = session.execute(
            select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank)
            .join(Match)
            .where(Match.tournament_id == tournament_id, Match.status == "finished")
        ).all()
    by_match = collections.defaultdict(list)
    for match_id, bot, rank in rows:
        by_match[match_id].append((bot, rank))
    for seats in by_match.values():
        firsts = sum(rank == 1 for _, rank in seats)
        for (a, ra), (_b, rb) in itertools.permutations(seats, 2):
            totals[a][1] += 1.0 if ra < rb else 0.5 if ra == rb else 0.0
        for bot, rank in seats:
            totals[bot][0] += 1
            totals[bot][2] += rank == 1 and firsts == 1
    return {bot: (int(m), p, int(w)) for bot, (m, p, w) in totals.items()}


def test_a_balanced_tournament_of_thirty_bots_at_four_seats(app, client, info_bot, enqueued):
    """A class of 30 at 4-seat tables: a round robin would need 27,405 matches per
    pairing round; balanced gives each bot its matches, seats and opponents evenly."""
    ids = register_many(client, info_bot(), 30)
    del enqueued[:]  # their validation matches
    created = create(client, ids, format="balanced", matches_per_bot=8, seats_per_match=4, seed=3)
    assert created["format"] == "balanced" and created["matches_per_bot"] == 8
    assert created["games_per_pairing"] is None
    assert created["progress"]["total"] == 60 == len(enqueued)
    balance = created["balance"]
    assert balance["matches_per_bot"] == [8, 8] and balance["seat_spread"] == 0
    played = collections.Counter(b for _, _, seats in seatings(app, created["id"]) for b in seats)
    assert set(played.values()) == {8}
    again = create(client, ids, format="balanced", matches_per_bot=8, seats_per_match=4, seed=3)
    assert [s[::2] for s in seatings(app, again["id"])] == [
        s[::2] for s in seatings(app, created["id"])
    ]


def test_standings_kept_as_results_arrive_equal_the_recomputed_ones(app, client, info_bot):
    ids = register_many(client, info_bot(), 7)
    created = create(client, ids, format="balanced", matches_per_bot=6, seats_per_match=3)
    rng = random.Random(5)
    for match_id in list(match_seats(app, created["id"]))[:10]:
        assert finish(app, match_id, [rng.randint(1, 3) for _ in range(3)])  # ties too
    detail = client.get(f"/api/tournaments/{created['id']}").get_json()
    kept = {r["bot_id"]: (r["matches"], r["points"], r["wins"]) for r in detail["standings"]}
    slow = recomputed(app, created["id"])
    assert {bot: row for bot, row in kept.items() if row[0]} == slow
    cells = detail["crosstable"]["cells"]
    for a, row in cells.items():
        for b, cell in row.items():
            mirrored = cells[b][a]
            assert (cell["wins"], cell["draws"], cell["losses"]) == (
                mirrored["losses"],
                mirrored["draws"],
                mirrored["wins"],
            )
    per_match = [r["points_per_match"] for r in detail["standings"] if r["matches"]]
    assert per_match == sorted(per_match, reverse=True)


def test_duplicate_deals_rotate_one_seed_and_standings_count_complete_deals(app, client, info_bot):
    ids = register_many(client, info_bot(), 4)
    created = create(
        client, ids, format="balanced", matches_per_bot=6, seats_per_match=3, deal="duplicate"
    )
    matches = seatings(app, created["id"])
    deals = collections.defaultdict(list)
    for seed, deal, seats in matches:
        deals[deal].append((seed, seats))
    assert None not in deals and len(deals) == len(matches) // 3
    for rotations in deals.values():
        assert len({seed for seed, _ in rotations}) == 1  # one deal, played three times
        for seat in range(3):  # every bot holds every seat's hand once
            assert sorted(seats[seat] for _, seats in rotations) == sorted(rotations[0][1])
    # the first bot of the first deal's first seating wins every rotation
    by_id = match_seats(app, created["id"])
    first_deal = [
        i for i, (_, deal, _) in zip(by_id, matches, strict=True) if deal == matches[0][1]
    ]
    star = matches[0][2][0]
    for match_id in first_deal[:2]:
        assert finish(app, match_id, [1 if b == star else 2 for b in by_id[match_id]])
    standings = client.get(f"/api/tournaments/{created['id']}").get_json()["standings"]
    assert all(row["deals"] == 0 and row["par_per_deal"] is None for row in standings)
    last = first_deal[2]
    assert finish(app, last, [1 if b == star else 2 for b in by_id[last]])
    standings = client.get(f"/api/tournaments/{created['id']}").get_json()["standings"]
    assert standings[0]["bot_id"] == star
    # three rotations at a three-seat table: par is 3 points, the star took 6
    assert standings[0]["deals"] == 1 and standings[0]["par_per_deal"] == 3.0
    others = [row for row in standings if row["deals"]][1:]
    assert [row["par_per_deal"] for row in others] == [-1.5, -1.5]


def play_gauntlet(app: Flask, tournament_id: int, challenger: int, win_rate: float) -> int:
    """Play queued matches in schedule order, the challenger winning with ``win_rate``;
    returns how many were played."""
    rng = random.Random(11)
    played = 0
    for match_id, seats in match_seats(app, tournament_id).items():
        wins = rng.random() < win_rate
        ranks = [(1 if wins else 2) if b == challenger else (2 if wins else 1) for b in seats]
        played += finish(app, match_id, ranks)
    return played


@pytest.mark.parametrize(("win_rate", "decision"), [(0.9, "H1"), (0.1, "H0")])
def test_a_gauntlet_stops_once_its_challenger_is_decided(app, client, info_bot, win_rate, decision):
    ids = register_many(client, info_bot(), 5)
    challenger = ids[0]
    created = create(
        client,
        ids,
        format="gauntlet",
        challenger_ids=[challenger],
        matches_per_bot=200,
        sprt=SPRT,
    )
    assert created["challenger_ids"] == [challenger] and created["progress"]["total"] == 200
    played = play_gauntlet(app, created["id"], challenger, win_rate)
    detail = client.get(f"/api/tournaments/{created['id']}").get_json()
    status = detail["sprt_status"]["challengers"][0]
    assert status["decision"] == decision
    assert played == status["observations"] < 100  # decided well before the budget
    assert detail["status"] == "finished"
    assert detail["progress"]["cancelled"] == 200 - played
    bounds = detail["sprt_status"]
    llr = status["llr"]
    assert llr >= bounds["upper"] if decision == "H1" else llr <= bounds["lower"]


def test_a_gauntlet_without_a_stop_rule_plays_every_match(app, client, info_bot):
    ids = register_many(client, info_bot(), 4)
    created = create(client, ids, format="gauntlet", challenger_ids=ids[:2], matches_per_bot=6)
    assert created["progress"]["total"] == 12 and created["sprt_status"] is None
    for _, _, seats in seatings(app, created["id"]):
        assert len(set(seats) & set(ids[:2])) == 1  # challengers never meet
    assert play_gauntlet(app, created["id"], ids[0], 1.0) == 12
    assert client.get(f"/api/tournaments/{created['id']}").get_json()["status"] == "finished"


@pytest.mark.parametrize(
    ("change", "status", "fragment"),
    [
        ({"format": "swiss"}, 422, "format"),
        ({"format": "balanced", "games_per_pairing": 2}, 422, "matches_per_bot"),
        ({"format": "balanced", "matches_per_bot": 4, "games_per_pairing": 2}, 422, "Not a field"),
        ({"format": "balanced", "matches_per_bot": 0}, 422, "matches_per_bot"),
        ({"format": "gauntlet", "matches_per_bot": 4}, 422, "challenger_ids"),
        ({"challenger_ids": [1]}, 422, "Not a field"),
        ({"sprt": SPRT}, 422, "Not a field"),
        ({"deal": "shuffled"}, 422, "deal"),
        ({"deal": "duplicate", "games_per_pairing": 3}, 400, "multiple"),
        (
            {"format": "balanced", "matches_per_bot": 3, "deal": "duplicate"},
            400,
            "multiple of",
        ),
        (
            {"format": "gauntlet", "matches_per_bot": 4, "challenger_ids": [999]},
            400,
            "not in bot_ids",
        ),
        (
            {
                "format": "gauntlet",
                "matches_per_bot": 4,
                "challenger_ids": "FIRST",
                "sprt": {"elo0": 10, "elo1": 5},
            },
            422,
            "elo1",
        ),
        (
            {
                "format": "gauntlet",
                "matches_per_bot": 4,
                "challenger_ids": "FIRST",
                "sprt": {"alpha": 0.9},
            },
            422,
            "alpha",
        ),
        ({"format": "gauntlet", "matches_per_bot": 4, "challenger_ids": "ALL"}, 400, "field"),
    ],
)
def test_format_fields_are_checked(app, client, info_bot, enqueued, change, status, fragment):
    ids = register_many(client, info_bot(), 3)
    named = {"FIRST": ids[:1], "ALL": ids}
    if isinstance(change.get("challenger_ids"), str):
        change = {**change, "challenger_ids": named[change["challenger_ids"]]}
    body = {"name": "cup", "game": "cactus", "bot_ids": ids, "seats_per_match": 2}
    if change.get("format", "round_robin") == "round_robin":
        body["games_per_pairing"] = 2
    before, sent = counts(app), list(enqueued)  # the bots' validation matches
    error(client.post("/api/tournaments", json={**body, **change}), status, fragment)
    assert counts(app) == before and enqueued == sent


def test_three_hundred_bots_fit_under_the_default_limit(app, client, enqueued):
    """300 bots, 40 matches each at 4 seats: 3,000 matches, built by a worker (here at
    once: ``enqueued``) after a 202."""
    ids = add_many_bots(app.extensions["arena.db"], 300)
    created = create(
        client, ids, format="balanced", matches_per_bot=40, seats_per_match=4, status=202
    )
    assert created["status"] == "building" and created["build"]["total"] == 3000
    assert len(enqueued) == 3000
    created = client.get(f"/api/tournaments/{created['id']}?crosstable=false").get_json()
    assert created["progress"]["total"] == 3000 and created["status"] == "running"
    assert created["balance"]["matches_per_bot"] == [40, 40]
    assert created["balance"]["seat_spread"] <= 1
    with app.extensions["arena.db"].session() as session:
        tournament = session.get(Tournament, created["id"])
        assert len(tournament.entries) == 300
    detail = client.get(f"/api/tournaments/{created['id']}?crosstable=false").get_json()
    assert detail["crosstable"] is None and len(detail["standings"]) == 300


# -- the registry: one list of formats, read by the API, its schema and the form -----------
def test_get_formats_lists_every_registered_format_with_its_fields(client):
    listed = client.get("/api/formats").get_json()
    names = ["round_robin", "balanced", "gauntlet", "qualifier"]
    assert [f["name"] for f in listed] == list(formats.FORMATS) == names
    for entry, fmt in zip(listed, formats.FORMATS.values(), strict=True):
        assert entry["title"] == fmt.title and entry["summary"] and entry["hint"]
        assert entry["fields"] == [
            {
                "name": f.name,
                "label": f.label,
                "description": f.description,
                "required": f.required,
            }
            for f in fmt.fields
        ]
        assert entry["default"] is (fmt.name == formats.DEFAULT_FORMAT)
    fields = {f["name"]: {x["name"]: x["required"] for x in f["fields"]} for f in listed}
    assert fields == {
        "round_robin": {"games_per_pairing": True},
        "balanced": {"matches_per_bot": True},
        "gauntlet": {"matches_per_bot": True, "challenger_ids": True, "sprt": False},
        "qualifier": {
            "matches_per_bot": True,
            "challenger_ids": True,
            "pass_rule": True,
            "sprt": False,
        },
    }
    labels = {f["name"]: f["fields"][0]["label"] for f in listed}
    assert labels["balanced"] == "Matches per bot" != labels["gauntlet"]


def test_the_openapi_document_takes_its_formats_from_the_registry(client):
    spec = client.get("/api/openapi.json").get_json()
    assert "/api/formats" in spec["paths"]
    listed = spec["paths"]["/api/formats"]["get"]["responses"]["200"]["content"]
    assert listed["application/json"]["schema"]["items"]["$ref"].endswith("/Format")
    create = spec["components"]["schemas"]["TournamentCreate"]["properties"]
    assert create["format"]["enum"] == list(formats.FORMATS)
    assert create["format"]["default"] == formats.DEFAULT_FORMAT
    for fmt in formats.FORMATS.values():
        assert f"{fmt.name}: {fmt.summary}" in create["format"]["description"]
        for field in fmt.fields:
            assert fmt.name in create[field.name]["description"]


def test_the_tournament_form_names_no_format_of_its_own(client):
    """The form's formats and their fields come from GET /api/formats: neither its script
    nor its page lists one."""
    response = client.get("/static/tournament_form.js")
    script = response.get_data(as_text=True)
    response.close()  # a file sent from disk
    page = client.get("/tournaments/new").get_data(as_text=True)
    assert 'data-api="/api/formats"' in page
    for fmt in formats.FORMATS.values():
        for text in (fmt.name, fmt.title, fmt.hint):
            assert text not in script, text
            assert text not in page, text
    assert "data-formats" not in page and "data-field" in page


def test_each_format_describes_what_it_was_asked_for():
    words = {
        name: fmt.describe(
            formats.Entry(
                bot_ids=(),
                seats_per_match=3,
                deal="duplicate",
                games_per_pairing=6,
                matches_per_bot=12,
                sprt=formats.Sprt() if fmt.takes("sprt") else None,
            )
        )
        for name, fmt in formats.FORMATS.items()
    }
    assert words == {
        "round_robin": "Round robin: 6 games per pairing, 3 seats per match, duplicate deals",
        "balanced": "Balanced: 12 matches per bot, 3 seats per match, duplicate deals",
        "gauntlet": "Gauntlet: up to 12 matches per challenger (the stop rule ends it sooner), "
        "3 seats per match, duplicate deals",
        "qualifier": "Qualifier: up to 12 matches per contestant (the stop rule ends it "
        "sooner), 3 seats per match, duplicate deals",
    }


def test_an_unknown_format_is_refused_with_the_registered_ones(app, client, info_bot):
    ids = register_many(client, info_bot(), 3)
    body = {"name": "cup", "game": "cactus", "bot_ids": ids, "seats_per_match": 2}
    error(client.post("/api/tournaments", json={**body, "format": "swiss"}), 422, "format")
    with pytest.raises(formats.FormatError, match="round_robin, balanced, gauntlet"):
        formats.match_count("swiss", 4, 2, games_per_pairing=2)
