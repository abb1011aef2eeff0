"""The JSON API: every endpoint, and bad input for each (a 4xx with a message, nothing
written).  Bots are real loopback HTTP servers answering ``GET /``; no worker runs: the
ids the API enqueues are recorded (``enqueued``), and finished matches are written here."""

from __future__ import annotations

import collections
import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, update

from arena import services
from arena.competition import formats
from arena.competition.standings import record_result
from arena.games import GAMES, make_policy
from arena.match.records import check
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import (
    Bot,
    FittedRating,
    Ladder,
    Match,
    MatchSeat,
    Rating,
    Replay,
)
from tests.support.api import auth, counts, error, register, register_many, tournament_body
from tests.support.badbots import absent_bot_url

# -- helpers -----------------------------------------------------------------------------


def total(response: Any) -> int:
    """The item count of a list answer (its X-Pagination header)."""
    assert response.status_code == 200, response.get_json()
    return json.loads(response.headers["X-Pagination"])["total"]


def set_results(app: Flask, results: dict[int, list[int] | str]) -> None:
    """Per match id: the seats' ranks (the match is finished, and counted in its
    tournament's standings as a worker's result is) or a status."""
    with app.extensions["arena.db"].session() as session:
        for match_id, result in results.items():
            match = session.get(Match, match_id)
            if isinstance(result, str):
                match.status = result
                continue
            match.status = "finished"
            match.settled = True
            for seat, rank in zip(match.seats, result, strict=True):
                seat.rank = rank
            record_result(session, match)


# -- games and docs ----------------------------------------------------------------------
def test_games_list_ids_limits_presets_and_default_options(client):
    games = {g["id"]: g for g in client.get("/api/games").get_json()}
    assert set(games) == set(GAMES)
    cactus = games["cactus"]
    assert (cactus["title"], cactus["min_players"], cactus["max_players"]) == ("Cactus", 2, 8)
    assert set(cactus["presets"]) == {"classic", "pagat"}
    engine = GAMES["cactus"]
    assert cactus["default_options"] == engine.options_json(engine.resolve_options({}))
    assert games["president"]["min_players"] == 3


def test_openapi_document_and_swagger_ui_are_served_without_network(client):
    spec = client.get("/api/openapi.json").get_json()
    assert {
        "/api/bots",
        "/api/bots/{bot_id}",
        "/api/tournaments",
        "/api/tournaments/{tournament_id}",
        "/api/tournaments/{tournament_id}/cancel",
        "/api/matches",
        "/api/matches/{match_id}",
        "/api/matches/{match_id}/replay",
        "/api/ratings/{game}",
        "/api/ladders",
        "/api/ladders/{game}",
        "/api/games",
    } <= set(spec["paths"])
    assert "bearerAuth" in spec["components"]["securitySchemes"]
    assert "owner_token" not in json.dumps(spec["components"]["schemas"]["Bot"])
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "/api/swagger-ui/swagger-ui-bundle.js" in html
    assert "//cdn" not in html and "https://" not in html
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        response = client.get(f"/api/swagger-ui/{asset}")
        assert response.status_code == 200 and len(response.data) > 1000
        response.close()
    error(client.get("/api/swagger-ui/nothing.js"), 404)


def test_an_unknown_api_path_is_a_json_404(client):
    error(client.get("/api/nothing"), 404)
    error(client.get("/api/bots/abc"), 404)


# -- bots --------------------------------------------------------------------------------
def test_register_stores_info_and_hashed_token_and_shows_the_secrets_once(app, client, info_bot):
    url = info_bot()
    bot = register(client, url, description="plays fast")
    assert bot["games"] == sorted(["cactus", "cactus-game", "president"])
    assert bot["status"] == "active"
    assert bot["info"]["apiversion"] == "1" and bot["info"]["author"] == "tests"
    token, secret = bot["owner_token"], bot["signing_secret"]
    assert len(token) >= 40 and len(secret) >= 40 and token != secret
    with app.extensions["arena.db"].session() as session:
        stored = session.get(Bot, bot["id"])
        assert stored.owner_token_hash == services.hash_token(token) != token
        assert stored.signing_secret == secret
        assert stored.endpoint == url

    listed = client.get("/api/bots?kind=bot")  # not the house bot it is validated against
    one = client.get(f"/api/bots/{bot['id']}")
    for response in (listed, one):
        assert response.status_code == 200
        text = response.get_data(as_text=True)
        assert token not in text and secret not in text
        assert "owner_token" not in text and "signing_secret" not in text
    assert total(listed) == 1
    assert one.get_json()["ratings"] == []
    assert one.get_json()["description"] == "plays fast"


def test_register_a_subset_of_the_declared_games(client, info_bot):
    bot = register(client, info_bot(), games=["president"])
    assert bot["games"] == ["president"]


def test_the_kept_info_is_bounded(client, info_bot):
    bot = register(client, info_bot(author="x" * 5000, extra={"a": 1}))
    assert len(bot["info"]["author"]) == services.INFO_TEXT_CAP
    assert "extra" not in bot["info"]


def test_bot_list_filters_and_pages(client, info_bot):
    url = info_bot()
    ids = register_many(client, url, 5)
    register(client, info_bot(games=["president"]), "solo")
    # kind=bot: not the house bot their validation matches are played against
    listed = client.get("/api/bots?kind=bot&page=2&page_size=2")
    assert [b["name"] for b in listed.get_json()] == ["bot-2", "bot-3"]
    assert json.loads(listed.headers["X-Pagination"]) == {
        "total": 6,
        "total_pages": 3,
        "first_page": 1,
        "last_page": 3,
        "page": 2,
        "previous_page": 1,
        "next_page": 3,
    }
    cactus = client.get("/api/bots?kind=bot&game=cactus&page_size=100")
    assert {b["id"] for b in cactus.get_json()} == set(ids) and total(cactus) == 5
    assert client.get("/api/bots?status=deleted").get_json() == []
    error(client.get("/api/bots?status=gone"), 422, "status")
    error(client.get("/api/bots?page_size=1000"), 422, "page_size")
    error(client.get("/api/bots?page=0"), 422, "page")
    error(client.get("/api/bots?color=red"), 422, "color")


def endpoints(client: FlaskClient, token: str | None = None) -> dict[str, str | None]:
    """Name -> the endpoint each bot's answers show with ``token`` (None: not shown),
    from the list and from each bot's own answer, which must agree."""
    headers = auth(token) if token else {}
    # the contestants' bots (not the house bot of their validation matches)
    listed = client.get("/api/bots?kind=bot&page_size=100", headers=headers)
    assert listed.status_code == 200, listed.get_json()
    shown = {b["name"]: b.get("endpoint") for b in listed.get_json()}
    for bot in listed.get_json():
        one = client.get(f"/api/bots/{bot['id']}", headers=headers)
        assert one.status_code == 200 and one.get_json().get("endpoint") == shown[bot["name"]]
    return shown


def test_a_bots_endpoint_is_shown_to_its_owner_and_the_organiser_only(make_app, info_bot):
    app = make_app(organiser_token="org-secret")
    client = app.test_client()
    url = info_bot()
    ada = register(client, f"{url}/ada", "ada")
    bob = register(client, f"{url}/bob", "bob")
    assert ada["endpoint"] == f"{url}/ada"  # the registration answers its owner
    nobody = {"ada": None, "bob": None}
    assert endpoints(client) == nobody
    assert endpoints(client, ada["owner_token"]) == {"ada": f"{url}/ada", "bob": None}
    assert endpoints(client, bob["owner_token"]) == {"ada": None, "bob": f"{url}/bob"}
    assert endpoints(client, "org-secret") == {"ada": f"{url}/ada", "bob": f"{url}/bob"}
    for text in (client.get("/api/bots").get_data(as_text=True),
                 client.get(f"/api/bots/{ada['id']}").get_data(as_text=True)):  # fmt: skip
        assert url not in text and "endpoint" not in text
    # a token that is neither is refused, not read as no token
    error(client.get("/api/bots", headers=auth("guess")), 401, "owner token", "organiser")
    error(client.get(f"/api/bots/{ada['id']}", headers=auth("guess")), 401)
    # its owner's change answers its owner
    changed = client.patch(
        f"/api/bots/{ada['id']}", json={"description": "x"}, headers=auth(ada["owner_token"])
    )
    assert changed.get_json()["endpoint"] == f"{url}/ada"
    # the pages show it to nobody
    for page in ("/bots", f"/bots/{ada['id']}", f"/bots/{bob['id']}"):
        assert url not in client.get(page).get_data(as_text=True), page


def test_without_an_organiser_token_only_owners_see_endpoints(client, info_bot):
    """The local profile with no organiser token: registering and starting tournaments
    need no token, but nobody reads another owner's endpoint."""
    url = info_bot()
    ada = register(client, f"{url}/ada", "ada")
    register(client, f"{url}/bob", "bob")
    assert endpoints(client) == {"ada": None, "bob": None}
    assert endpoints(client, ada["owner_token"]) == {"ada": f"{url}/ada", "bob": None}
    error(client.get("/api/bots", headers=auth("anything")), 401)


def test_the_openapi_document_says_who_sees_the_endpoint(client):
    spec = client.get("/api/openapi.json").get_json()
    endpoint = spec["components"]["schemas"]["Bot"]["properties"]["endpoint"]
    assert "owner" in endpoint["description"] and "organiser" in endpoint["description"]
    for path in ("/api/bots", "/api/bots/{bot_id}"):
        assert spec["paths"][path]["get"]["security"] == [{}, {"bearerAuth": []}], path


GOOD = {"name": "alpha", "owner": "ann", "description": ""}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"colour": "red"}, "colour"),  # unknown field
        ({"name": 5}, "name"),
        ({"name": "x" * 65}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),  # empty once trimmed
        ({"name": " -leading separator"}, "name"),  # trimmed, then checked
        ({"name": None}, "name"),
        ({"owner": "o" * 65}, "owner"),
        ({"owner": ["ann"]}, "owner"),
        ({"description": "d" * 501}, "description"),
        ({"description": 3}, "description"),
        ({"games": "cactus"}, "games"),
        ({"games": []}, "games"),
        ({"games": ["cactus", 1]}, "games"),
        ({"games": ["g" * 33]}, "games"),
        ({"endpoint": "ftp://127.0.0.1/bot"}, "endpoint"),
        ({"endpoint": "javascript:alert(1)"}, "endpoint"),
        ({"endpoint": "not a url"}, "endpoint"),
        ({"endpoint": "http://127.0.0.1:9/" + "a" * 512}, "endpoint"),
        ({"endpoint": "http://user:pw@127.0.0.1:9/"}, "endpoint"),
        ({"endpoint": "http://127.0.0.1:9/?token=1"}, "endpoint"),
        ({"endpoint": 42}, "endpoint"),
        ({"endpoint": None}, "endpoint"),
    ],
)
def test_register_rejects_bad_input(app, client, info_bot, change, field):
    before = counts(app)
    body = {**GOOD, "endpoint": info_bot(), **change}
    response = client.post("/api/bots", json=body)
    body = error(response, 422, field)
    assert field in body["errors"]["json"]
    assert counts(app) == before


@pytest.mark.parametrize("missing", ["name", "endpoint", "owner"])
def test_register_needs_name_endpoint_and_owner(app, client, info_bot, missing):
    body = {**GOOD, "endpoint": info_bot()}
    del body[missing]
    error(client.post("/api/bots", json=body), 422, missing)
    assert counts(app)["bots"] == 0


def test_a_body_that_is_not_a_json_object_is_refused(app, client):
    error(client.post("/api/bots", data="{oops", content_type="application/json"), 400, "JSON")
    error(client.post("/api/bots", json=["alpha"]), 422)
    error(client.post("/api/bots", json="alpha"), 422)
    error(client.post("/api/bots", data="name=alpha"), 422, "name")  # a form is no JSON
    big = {**GOOD, "description": "x" * (300 * 1024)}
    error(client.post("/api/bots", json=big), 413)
    assert counts(app)["bots"] == 0


@pytest.mark.parametrize(
    ("bot", "games", "status", "fragment"),
    [
        ({"apiversion": "2"}, None, 400, "apiversion"),
        ({"status": 500}, None, 400, "did not answer GET /"),
        ({"games": ["poker"]}, None, 400, "poker"),
        ({"games": []}, None, 400, "games"),
        ({"games": "cactus"}, None, 400, "games"),
        ({"games": ["cactus"]}, ["president"], 400, "does not declare president"),
        ({}, ["poker"], 400, "unknown game"),
    ],
)
def test_register_refuses_what_the_bot_answers(app, client, info_bot, bot, games, status, fragment):
    body = {**GOOD, "endpoint": info_bot(**bot)}
    if games is not None:
        body["games"] = games
    error(client.post("/api/bots", json=body), status, fragment)
    assert counts(app)["bots"] == 0


def test_register_refuses_a_bot_that_does_not_answer(app, client):
    body = {**GOOD, "endpoint": absent_bot_url()}
    error(client.post("/api/bots", json=body), 400, "did not answer GET /", "connection_refused")
    assert counts(app)["bots"] == 0


def test_register_refuses_an_address_the_policy_refuses(make_app, info_bot):
    app = make_app(profile="production")
    client = app.test_client()
    for endpoint in (info_bot(), "http://10.1.2.3:8000", "http://169.254.169.254/"):
        body = {**GOOD, "endpoint": endpoint}
        error(client.post("/api/bots", json=body), 400, "endpoint refused")
    assert counts(app)["bots"] == 0


def test_register_refuses_a_taken_name(app, client, info_bot):
    url = info_bot()
    register(client, url)
    before = counts(app)
    error(client.post("/api/bots", json={**GOOD, "endpoint": url}), 409, "already exists")
    assert counts(app) == before


def test_the_owner_changes_a_bot(app, client, info_bot):
    bot = register(client, info_bot())
    headers = auth(bot["owner_token"])
    response = client.patch(
        f"/api/bots/{bot['id']}",
        json={"name": "beta", "description": "new", "status": "disabled", "games": ["cactus"]},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    changed = response.get_json()
    assert (changed["name"], changed["description"], changed["status"]) == (
        "beta",
        "new",
        "disabled",
    )
    assert changed["games"] == ["cactus"]
    assert "owner_token" not in changed and "signing_secret" not in changed
    # a new endpoint is checked with GET / and its games are what it declares
    moved = info_bot(games=["cactus", "president"], version="2.0")
    response = client.patch(f"/api/bots/{bot['id']}", json={"endpoint": moved}, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["endpoint"] == moved
    assert response.get_json()["info"]["version"] == "2.0"
    assert response.get_json()["games"] == ["cactus"]
    response = client.patch(
        f"/api/bots/{bot['id']}", json={"games": ["president"], "status": "active"}, headers=headers
    )
    assert response.get_json()["games"] == ["president"]


def test_patch_needs_the_owner_token(app, client, info_bot):
    url = info_bot()
    mine = register(client, url)
    theirs = register(client, url, "other")
    before = counts(app)
    path = f"/api/bots/{mine['id']}"
    response = client.patch(path, json={"description": "x"})
    assert response.headers["WWW-Authenticate"] == "Bearer"
    error(response, 401, "owner token")
    error(client.patch(path, json={"description": "x"}, headers=auth("nope")), 401, "not valid")
    error(
        client.patch(path, json={"description": "x"}, headers={"Authorization": "Basic abc"}),
        401,
    )
    error(
        client.patch(path, json={"description": "x"}, headers=auth(theirs["owner_token"])),
        403,
        "another owner",
    )
    error(client.delete(path, headers=auth(theirs["owner_token"])), 403)
    error(client.delete(path), 401)
    error(client.patch("/api/bots/999", json={"description": "x"}, headers=auth("x")), 404)
    assert counts(app) == before
    assert client.get(path).get_json()["description"] == ""


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({}, 422, "at least one"),
        ({"owner": "eve"}, 422, "owner"),  # the owner cannot be changed
        ({"status": "deleted"}, 422, "status"),
        ({"status": True}, 422, "status"),
        ({"name": "n" * 65}, 422, "name"),
        ({"description": "d" * 501}, 422, "description"),
        ({"endpoint": "gopher://127.0.0.1/"}, 422, "endpoint"),
        ({"games": ["poker"]}, 400, "unknown game"),
        ({"games": ["president"]}, 400, "does not declare"),
        ({"name": "taken"}, 409, "already exists"),
    ],
)
def test_patch_rejects_bad_input(app, client, info_bot, body, status, fragment):
    bot = register(client, info_bot(games=["cactus"]))
    register(client, info_bot(), "taken")
    before = counts(app)
    response = client.patch(f"/api/bots/{bot['id']}", json=body, headers=auth(bot["owner_token"]))
    error(response, status, fragment)
    assert counts(app) == before
    unchanged = client.get(f"/api/bots/{bot['id']}").get_json()
    assert (unchanged["name"], unchanged["games"]) == ("alpha", ["cactus"])


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [({"apiversion": "0"}, "apiversion"), ({"status": 404}, "did not answer"), (None, "answer")],
)
def test_patch_checks_the_new_endpoint(client, info_bot, answer, fragment):
    url = info_bot()
    bot = register(client, url)
    endpoint = absent_bot_url() if answer is None else info_bot(**answer)
    response = client.patch(
        f"/api/bots/{bot['id']}", json={"endpoint": endpoint}, headers=auth(bot["owner_token"])
    )
    error(response, 400, fragment)
    mine = client.get(f"/api/bots/{bot['id']}", headers=auth(bot["owner_token"]))
    assert mine.get_json()["endpoint"] == url


def test_patch_refuses_an_endpoint_the_policy_refuses(make_app):
    app = make_app(profile="production")
    client = app.test_client()

    def fetcher(endpoint: str) -> dict[str, Any]:
        return {"apiversion": "1", "games": ["cactus"]}

    # a public address is allowed: registered here through the service, with a fake GET /
    with app.extensions["arena.db"].session() as session:
        bot, token, _ = services.register_bot(
            session,
            app.extensions["arena.config"],
            name="public",
            endpoint="http://93.184.215.14:8000",
            owner="ann",
            info_fetcher=fetcher,
        )
    response = client.patch(
        f"/api/bots/{bot.id}", json={"endpoint": "http://192.168.1.5:8000"}, headers=auth(token)
    )
    error(response, 400, "endpoint refused", "not allowed")
    assert "private" not in response.get_json()["message"]  # the reason is not told
    mine = client.get(f"/api/bots/{bot.id}", headers=auth(token))
    assert mine.get_json()["endpoint"] == "http://93.184.215.14:8000"


def test_delete_is_a_soft_delete_that_cancels_queued_matches(app, client, info_bot):
    url = info_bot()
    bots = [register(client, url, f"bot-{i}") for i in range(3)]
    ids = [b["id"] for b in bots]
    created = client.post("/api/tournaments", json=tournament_body(ids)).get_json()
    matches = client.get(f"/api/matches?tournament_id={created['id']}").get_json()
    gone = bots[0]
    finished = next(m["id"] for m in matches if gone["id"] in [s["bot_id"] for s in m["seats"]])
    set_results(app, {finished: [1, 2]})

    response = client.delete(f"/api/bots/{gone['id']}", headers=auth(gone["owner_token"]))
    assert response.status_code == 204
    assert client.get(f"/api/bots/{gone['id']}").get_json()["status"] == "deleted"
    assert gone["id"] not in [b["id"] for b in client.get("/api/bots").get_json()]
    assert total(client.get("/api/bots?status=deleted")) == 1
    with app.extensions["arena.db"].session() as session:
        statuses = collections.Counter(
            (match.status, gone["id"] in [s.bot_id for s in match.seats])
            for match in session.scalars(select(Match).where(Match.tournament_id == created["id"]))
        )
    assert statuses == {("finished", True): 1, ("cancelled", True): 3, ("queued", False): 2}
    with app.extensions["arena.db"].session() as session:  # its validation match too
        validation = session.get(Match, gone["validation"]["match_id"])
        assert (validation.kind, validation.status) == ("validation", "cancelled")
    # history stays: the finished match still names the bot
    seats = client.get(f"/api/matches/{finished}").get_json()["seats"]
    assert gone["name"] in [s["bot_name"] for s in seats]
    headers = auth(gone["owner_token"])
    error(client.patch(f"/api/bots/{gone['id']}", json={"name": "x"}, headers=headers), 409)
    assert client.delete(f"/api/bots/{gone['id']}", headers=headers).status_code == 204
    error(client.delete("/api/bots/12345", headers=headers), 404)


# -- tournaments -------------------------------------------------------------------------
def test_round_robin_schedule_rotates_seats_evenly(app, client, info_bot, enqueued):
    ids = register_many(client, info_bot(), 4)
    del enqueued[:]  # the bots' validation matches
    response = client.post("/api/tournaments", json=tournament_body(ids, seed=7))
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    assert created["progress"] == {
        "total": 12,
        "queued": 12,
        "running": 0,
        "finished": 0,
        "failed": 0,
        "cancelled": 0,
    }
    assert created["bot_ids"] == sorted(ids)
    # the seed gives every match's deal: it is shown once the tournament is over
    assert created["status"] == "running" and created["seed"] is None
    engine = GAMES["cactus"]
    assert created["options"] == engine.options_json(engine.resolve_options({}))
    with app.extensions["arena.db"].session() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == created["id"])).all()
        assert sorted(enqueued) == sorted(m.id for m in matches)
        assert {(m.status, m.kind, m.rated, m.game) for m in matches} == {
            ("queued", "tournament", True, "cactus")
        }
        seats = collections.Counter((s.bot_id, s.seat) for m in matches for s in m.seats)
        pairs = collections.Counter(frozenset(s.bot_id for s in m.seats) for m in matches)
        seeds = [m.seed for m in matches]
    assert seats == {(bot, seat): 3 for bot in ids for seat in (0, 1)}
    assert len(pairs) == 6 and set(pairs.values()) == {2}
    assert len(set(seeds)) == 12  # every match its own deal
    # the same seed schedules the same seeds
    again = client.post("/api/tournaments", json=tournament_body(ids, seed=7)).get_json()
    with app.extensions["arena.db"].session() as session:
        replayed = session.scalars(
            select(Match.seed).where(Match.tournament_id == again["id"]).order_by(Match.id)
        ).all()
    assert replayed == seeds


def test_three_seat_round_robin_gives_every_bot_every_seat(app, client, info_bot):
    ids = register_many(client, info_bot(), 4)
    body = tournament_body(ids, game="president", seats_per_match=3, games_per_pairing=3)
    created = client.post("/api/tournaments", json=body).get_json()
    assert created["progress"]["total"] == 4 * 3
    with app.extensions["arena.db"].session() as session:
        seats = collections.Counter(
            (s.bot_id, s.seat)
            for s in session.scalars(
                select(MatchSeat).join(Match).where(Match.tournament_id == created["id"])
            )
        )
    assert seats == {(bot, seat): 3 for bot in ids for seat in range(3)}


def test_round_robin_seatings_rotate_each_combination():
    seatings = [t.seats for t in formats.round_robin([3, 1, 2], 3, 3, seed=1)]
    assert seatings == [(1, 2, 3), (2, 3, 1), (3, 1, 2)]
    two = [t.seats for t in formats.round_robin([2, 1], 2, 4, seed=1)]
    assert two == [(1, 2), (2, 1), (1, 2), (2, 1)]


def test_a_preset_and_options_are_stored_complete(client, info_bot):
    ids = register_many(client, info_bot(), 2)
    body = tournament_body(ids, preset="pagat", options={"penalty_cards": 3})
    created = client.post("/api/tournaments", json=body).get_json()
    engine = GAMES["cactus"]
    expected = engine.options_json(engine.resolve_options({"preset": "pagat", "penalty_cards": 3}))
    assert created["options"] == expected
    inline = tournament_body(ids, options={"preset": "pagat"})
    assert (
        client.post("/api/tournaments", json=inline).get_json()["options"]["scoring"] == "penalty"
    )


@pytest.mark.parametrize(
    ("change", "status", "fragment"),
    [
        ({"game": "poker"}, 400, "unknown game"),
        ({"options": {"penalty_cards": "two"}}, 400, "penalty_cards"),
        ({"options": {"colour": "red"}}, 400, "unknown cactus option"),
        ({"preset": "speedy"}, 400, "no preset 'speedy'"),
        ({"preset": "pagat", "options": {"preset": "classic"}}, 422, "preset"),
        ({"seats_per_match": 9}, 400, "2 to 8 players"),
        ({"game": "president"}, 400, "3 to 8 players"),
        ({"games_per_pairing": 3}, 400, "multiple of seats_per_match"),
        ({"bot_ids": "BOTS+BOTS"}, 400, "more than once"),
        ({"bot_ids": "BOTS+999"}, 400, "no bot(s) 999"),
        ({"bot_ids": "BOTS+DISABLED"}, 400, "not active"),
        ({"bot_ids": "BOTS+PRESIDENT"}, 400, "do not play cactus"),
        ({"seats_per_match": 3, "games_per_pairing": 3}, 400, "at least 3 bots"),
        ({"games_per_pairing": 1002}, 422, "games_per_pairing"),
        ({"name": "n" * 101}, 422, "name"),
        ({"name": ""}, 422, "name"),
        ({"colour": "red"}, 422, "colour"),
        ({"bot_ids": "1,2"}, 422, "bot_ids"),
        ({"bot_ids": [1, "2"]}, 422, "bot_ids"),
        ({"bot_ids": [1, True]}, 422, "bot_ids"),
        ({"bot_ids": [1]}, 422, "bot_ids"),
        ({"bot_ids": list(range(1, 1002))}, 422, "bot_ids"),
        ({"bot_ids": [1, 2**70]}, 422, "bot_ids"),
        ({"seats_per_match": "2"}, 422, "seats_per_match"),
        ({"seats_per_match": 2.0}, 422, "seats_per_match"),
        ({"games_per_pairing": True}, 422, "games_per_pairing"),
        ({"games_per_pairing": 0}, 422, "games_per_pairing"),
        ({"seed": -1}, 422, "seed"),
        ({"seed": 2**60}, 422, "seed"),
        ({"seed": "7"}, 422, "seed"),
        ({"options": ["penalty_cards"]}, 422, "options"),
        ({"options": {str(i): i for i in range(65)}}, 422, "options"),
        ({"preset": 5}, 422, "preset"),
    ],
)
def test_create_tournament_rejects_bad_input(
    app, client, info_bot, enqueued, change, status, fragment
):
    url = info_bot()
    ids = register_many(client, url, 2)
    disabled = register(client, url, "resting")
    client.patch(
        f"/api/bots/{disabled['id']}",
        json={"status": "disabled"},
        headers=auth(disabled["owner_token"]),
    )
    president = register(client, info_bot(games=["president"]), "royal")["id"]
    named = {"BOTS": ids, "DISABLED": [disabled["id"]], "PRESIDENT": [president], "999": [999]}
    if isinstance(change.get("bot_ids"), str) and "+" in change["bot_ids"]:
        change = {
            **change,
            "bot_ids": [i for part in change["bot_ids"].split("+") for i in named[part]],
        }
    before, sent = counts(app), list(enqueued)  # the bots' validation matches
    body = tournament_body(ids, **change)
    error(client.post("/api/tournaments", json=body), status, fragment)
    assert counts(app) == before
    assert enqueued == sent


def test_the_number_of_matches_is_capped(make_app, info_bot):
    app = make_app(max_tournament_matches=5000)
    client = app.test_client()
    ids = register_many(client, info_bot(), 12)
    body = tournament_body(ids, seats_per_match=4, games_per_pairing=12)  # 495 * 12 matches
    before = counts(app)
    error(client.post("/api/tournaments", json=body), 400, "5940 matches", "limit is 5000")
    balanced = tournament_body(
        ids, format="balanced", games_per_pairing=None, matches_per_bot=2000, seats_per_match=4
    )
    del balanced["games_per_pairing"]
    error(client.post("/api/tournaments", json=balanced), 400, "6000 matches", "limit is 5000")
    assert counts(app) == before


def test_the_organiser_token_guards_tournaments_and_ladders(make_app, info_bot, enqueued):
    app = make_app(organiser_token="org-secret")
    client = app.test_client()
    ids = register_many(client, info_bot(), 2)  # registering bots is open
    del enqueued[:]  # their validation matches
    body = tournament_body(ids)
    error(client.post("/api/tournaments", json=body), 401, "organiser token")
    error(client.post("/api/tournaments", json=body, headers=auth("guess")), 401, "not valid")
    assert counts(app)["tournaments"] == 0 and enqueued == []
    created = client.post("/api/tournaments", json=body, headers=auth("org-secret"))
    assert created.status_code == 201
    cancel = f"/api/tournaments/{created.get_json()['id']}/cancel"
    error(client.post(cancel), 401)
    error(client.post(cancel, headers=auth("guess")), 401)
    assert client.get(cancel.removesuffix("/cancel")).get_json()["status"] == "running"
    assert client.post(cancel, headers=auth("org-secret")).status_code == 200
    error(client.put("/api/ladders/cactus", json={"enabled": True}), 401)
    assert counts(app)["ladders"] == 0
    response = client.put("/api/ladders/cactus", json={"enabled": True}, headers=auth("org-secret"))
    assert response.get_json()["enabled"] is True


def test_standings_crosstable_progress_and_cancel(app, client, info_bot):
    url = info_bot()
    a, b, c = (register(client, url, name)["id"] for name in ("ada", "bob", "cy"))
    created = client.post("/api/tournaments", json=tournament_body([a, b, c])).get_json()
    matches = client.get(f"/api/matches?tournament_id={created['id']}&page_size=100")
    by_seating = {tuple(s["bot_id"] for s in m["seats"]): m["id"] for m in matches.get_json()}
    assert len(by_seating) == 6
    set_results(
        app,
        {
            by_seating[(a, b)]: [1, 2],  # ada beats bob
            by_seating[(a, c)]: [1, 1],  # ada and cy draw
            by_seating[(b, c)]: [2, 1],  # cy beats bob
            by_seating[(b, a)]: "running",
        },
    )
    detail = client.get(f"/api/tournaments/{created['id']}").get_json()
    assert detail["progress"] == {
        "total": 6,
        "queued": 2,
        "running": 1,
        "finished": 3,
        "failed": 0,
        "cancelled": 0,
    }
    clean = {"faults": 0, "forfeits": 0, "struck_out": 0}
    common = {"matches": 2, "challenger": False, **clean}
    per_match = [row.pop("points_per_match") for row in detail["standings"]]
    assert detail["standings"] == [
        {"bot_id": a, "name": "ada", "points": 1.5, "wins": 1, "mean_rank": 1.0, **common},
        {"bot_id": c, "name": "cy", "points": 1.5, "wins": 1, "mean_rank": 1.0, **common},
        {"bot_id": b, "name": "bob", "points": 0.0, "wins": 0, "mean_rank": 2.0, **common},
    ]
    assert per_match == [0.75, 0.75, 0.0]
    cells = detail["crosstable"]["cells"]
    assert detail["crosstable"]["bots"] == [
        {"id": a, "name": "ada", **clean},
        {"id": b, "name": "bob", **clean},
        {"id": c, "name": "cy", **clean},
    ]
    assert cells[str(a)][str(b)] == {"wins": 1, "draws": 0, "losses": 0}
    assert cells[str(b)][str(a)] == {"wins": 0, "draws": 0, "losses": 1}
    assert cells[str(a)][str(c)] == cells[str(c)][str(a)] == {"wins": 0, "draws": 1, "losses": 0}
    assert cells[str(c)][str(b)] == {"wins": 1, "draws": 0, "losses": 0}
    assert str(a) not in cells[str(a)]

    listed = client.get("/api/tournaments").get_json()
    assert len(listed) == 1 and listed[0]["progress"]["finished"] == 3
    assert listed[0]["bot_ids"] == [a, b, c]
    assert client.get("/api/tournaments?game=president").get_json() == []
    error(client.get("/api/tournaments?status=paused"), 422, "status")

    response = client.post(f"/api/tournaments/{created['id']}/cancel")
    assert response.status_code == 200
    cancelled = response.get_json()
    assert cancelled["status"] == "cancelled"
    assert cancelled["progress"]["cancelled"] == 2 and cancelled["progress"]["running"] == 1
    assert cancelled["progress"]["finished"] == 3
    error(client.post(f"/api/tournaments/{created['id']}/cancel"), 409, "already cancelled")
    error(client.post("/api/tournaments/999/cancel"), 404, "no tournament 999")
    error(client.get("/api/tournaments/999"), 404, "no tournament 999")
    error(client.get(f"/api/tournaments/{2**70}"), 404)


def test_a_failed_enqueue_keeps_the_committed_tournament(app, client, info_bot, monkeypatch):
    from arena.worker import queue

    def broken(config, match_ids):
        raise ConnectionError("broker down")

    monkeypatch.setattr(queue, "enqueue_matches", broken)
    ids = register_many(client, info_bot(), 2)
    before = counts(app)["matches"]  # the bots' validation matches, kept queued too
    response = client.post("/api/tournaments", json=tournament_body(ids))
    assert response.status_code == 201
    assert counts(app)["matches"] == before + 2


# -- matches and replays -----------------------------------------------------------------
def play_match(app: Flask, bot_ids: list[int], game: str = "cactus", seed: int = 11) -> int:
    """A match played in-process by the referee and stored as a worker would store it."""
    with app.extensions["arena.db"].session() as session:
        match = Match(kind="ladder", game=game, seed=seed, status="running", attempts=1)
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(bot_ids)]
        session.add(match)
        session.flush()
        match_id = match.id
    clients = [
        PolicyClient(make_policy(game, "random", policy_rng(seed, seat)), f"bot{seat}")
        for seat in range(len(bot_ids))
    ]
    record = Referee().run(game, clients, seed, match_id=str(match_id)).to_json()
    with app.extensions["arena.db"].session() as session:
        match = session.get(Match, match_id)
        match.status = "finished"
        match.options = record["options"]
        match.result = record["outcome"]
        for seat in match.seats:
            seat.rank = record["outcome"]["ranks"][seat.seat]
            seat.score = record["outcome"]["scores"][seat.seat]
            seat.strikes = record["strikes"][seat.seat]
        session.add(Replay(match_id=match_id, record=record))
    return match_id


def test_the_replay_of_a_finished_match_resimulates_and_filters_by_seat(app, client, info_bot):
    ids = register_many(client, info_bot(), 2)
    match_id = play_match(app, ids)
    detail = client.get(f"/api/matches/{match_id}").get_json()
    assert detail["status"] == "finished" and detail["attempts"] == 1
    assert [(s["seat"], s["bot_id"], s["bot_name"]) for s in detail["seats"]] == [
        (0, ids[0], "bot-0"),
        (1, ids[1], "bot-1"),
    ]
    assert sorted(s["rank"] for s in detail["seats"]) in ([1, 2], [1, 1])

    record = client.get(f"/api/matches/{match_id}/replay").get_json()
    assert check(record) == []
    assert record["outcome"]["ranks"] == [s["rank"] for s in detail["seats"]]
    private = [e for e in record["events"] if e["to"] != "public"]
    assert private, "a cactus match has private events (peeks)"

    for seat in (0, 1):
        view = client.get(f"/api/matches/{match_id}/replay?seat={seat}").get_json()
        assert set(view) == {
            "match_id",
            "seat",
            "game",
            "players",
            "options",
            "events",
            "decisions",
        }
        assert (view["match_id"], view["seat"], view["game"]) == (match_id, seat, "cactus")
        assert view["players"] == record["players"] and view["options"] == record["options"]
        assert all(e["to"] == "public" or seat in e["to"] for e in view["events"])
        hidden = [e for e in record["events"] if e["to"] != "public" and seat not in e["to"]]
        assert len(view["events"]) == len(record["events"]) - len(hidden)
        assert hidden, f"seat {seat} was kept from some events"
        assert view["decisions"] and all(d["seat"] == seat for d in view["decisions"])
        mine = [d for step in record["steps"] for d in step if d["seat"] == seat]
        assert [{k: v for k, v in d.items() if k != "step"} for d in view["decisions"]] == mine

    for seat in ("2", "-1", "99"):
        error(client.get(f"/api/matches/{match_id}/replay?seat={seat}"), 400, "out of range")
    error(client.get(f"/api/matches/{match_id}/replay?seat=first"), 422, "seat")
    error(client.get(f"/api/matches/{match_id}/replay?turn=3"), 422, "turn")


def test_no_replay_until_the_match_has_finished(app, client, info_bot):
    ids = register_many(client, info_bot(), 2)
    client.post("/api/tournaments", json=tournament_body(ids))
    match_id = client.get("/api/matches").get_json()[0]["id"]
    error(client.get(f"/api/matches/{match_id}/replay"), 404, "no replay yet", "queued")
    error(client.get(f"/api/matches/{match_id}/replay?seat=0"), 404, "no replay yet")
    error(client.get("/api/matches/999/replay"), 404, "no match 999")
    error(client.get("/api/matches/999"), 404, "no match 999")


def test_match_list_filters_and_pages(app, client, info_bot):
    url = info_bot()
    ids = register_many(client, url, 3)
    first = client.post("/api/tournaments", json=tournament_body(ids)).get_json()
    client.post("/api/tournaments", json=tournament_body(ids[:2], game="cactus-game"))
    played = play_match(app, ids[1:])
    everything = client.get("/api/matches?page_size=100")
    assert total(everything) == 6 + 2 + 1 + 3  # and each bot's validation match
    listed = [m["id"] for m in everything.get_json()]
    assert listed == sorted(listed, reverse=True)
    assert total(client.get("/api/matches?game=cactus-game")) == 2
    assert client.get("/api/matches?status=finished").get_json()[0]["id"] == played
    assert total(client.get(f"/api/matches?tournament_id={first['id']}")) == 6
    assert total(client.get(f"/api/matches?bot_id={ids[0]}")) == 4 + 2 + 1
    both = client.get(f"/api/matches?bot_id={ids[2]}&status=finished").get_json()
    assert [m["id"] for m in both] == [played]
    second = client.get("/api/matches?page=2&page_size=4").get_json()
    assert [m["id"] for m in second] == listed[4:8]
    assert client.get("/api/matches?page=50").get_json() == []
    for query, field in [
        ("game=poker", "game"),
        ("status=lost", "status"),
        ("tournament_id=abc", "tournament_id"),
        ("bot_id=0", "bot_id"),
        ("page_size=101", "page_size"),
        ("page=-1", "page"),
        ("sort=id", "sort"),
    ]:
        error(client.get(f"/api/matches?{query}"), 422, field)


# -- ratings and ladders -----------------------------------------------------------------
def test_leaderboard_orders_active_bots_by_elo(app, client, info_bot):
    url = info_bot()
    a, b, c = (register(client, url, name) for name in ("ada", "bob", "cy"))
    with app.extensions["arena.db"].session() as session:
        session.add_all(
            [
                Rating(bot_id=a["id"], game="cactus", elo=1480.0, matches=10),
                Rating(bot_id=b["id"], game="cactus", elo=1560.5, matches=12),
                Rating(bot_id=c["id"], game="cactus", elo=1600.0, matches=3),
                Rating(bot_id=a["id"], game="president", elo=1700.0, matches=4),
                FittedRating(
                    bot_id=b["id"], game="cactus", rating=1550, low=1500, high=1600, matches=12
                ),
            ]
        )
        session.execute(update(Bot).where(Bot.id == c["id"]).values(status="disabled"))
    board = client.get("/api/ratings/cactus").get_json()
    assert board == [
        {
            "bot_id": b["id"],
            "name": "bob",
            "elo": 1560.5,
            "matches": 12,
            "fitted": {"rating": 1550.0, "low": 1500.0, "high": 1600.0, "matches": 12},
            "provisional": False,
            "tie_group": None,
        },
        {
            "bot_id": a["id"],
            "name": "ada",
            "elo": 1480.0,
            "matches": 10,
            "fitted": None,
            "provisional": True,  # not fitted yet
            "tie_group": None,
        },
    ]
    assert [r["name"] for r in client.get("/api/ratings/president").get_json()] == ["ada"]
    assert client.get("/api/ratings/cactus-game").get_json() == []
    ratings = client.get(f"/api/bots/{a['id']}").get_json()["ratings"]
    assert ratings == [
        {"game": "cactus", "elo": 1480.0, "matches": 10, "fitted": None, "provisional": True},
        {"game": "president", "elo": 1700.0, "matches": 4, "fitted": None, "provisional": True},
    ]
    error(client.get("/api/ratings/poker"), 404, "unknown game 'poker'")


def test_ladders_are_listed_and_switched(app, client):
    ladders = {lad["game"]: lad for lad in client.get("/api/ladders").get_json()}
    assert set(ladders) == set(GAMES)
    assert not any(lad["enabled"] for lad in ladders.values())
    assert ladders["president"]["seats_per_match"] == 3
    response = client.put("/api/ladders/cactus", json={"enabled": True, "seats_per_match": 3})
    assert response.status_code == 200
    assert response.get_json()["enabled"] is True and response.get_json()["seats_per_match"] == 3
    president = client.put("/api/ladders/president", json={"enabled": True}).get_json()
    assert president["seats_per_match"] == 3
    ladders = {lad["game"]: lad for lad in client.get("/api/ladders").get_json()}
    assert ladders["cactus"]["enabled"] and ladders["cactus"]["seats_per_match"] == 3
    off = client.put("/api/ladders/cactus", json={"enabled": False, "seats_per_match": 2})
    assert off.get_json()["enabled"] is False
    with app.extensions["arena.db"].session() as session:
        assert session.get(Ladder, "cactus").enabled is False


@pytest.mark.parametrize(
    ("game", "body", "status", "fragment"),
    [
        ("poker", {"enabled": True}, 404, "unknown game"),
        ("cactus", {}, 422, "enabled"),
        ("cactus", {"enabled": "yes"}, 422, "enabled"),
        ("cactus", {"enabled": 1}, 422, "enabled"),
        ("cactus", {"enabled": True, "seats_per_match": "2"}, 422, "seats_per_match"),
        ("cactus", {"enabled": True, "seats_per_match": 1}, 422, "seats_per_match"),
        ("cactus", {"enabled": True, "colour": "red"}, 422, "colour"),
        ("cactus-game", {"enabled": True, "seats_per_match": 7}, 400, "2 to 6 players"),
        ("president", {"enabled": True, "seats_per_match": 2}, 400, "3 to 8 players"),
    ],
)
def test_ladder_switch_rejects_bad_input(app, client, game, body, status, fragment):
    error(client.put(f"/api/ladders/{game}", json=body), status, fragment)
    assert counts(app)["ladders"] == 0
