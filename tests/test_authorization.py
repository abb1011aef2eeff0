"""The authorisation matrix: every write route of the app (read from ``app.url_map``), for
each of six callers, allowed or refused with the right status; a private event's pages
and API reads; and CSRF where a login session signs a request in.

The callers: anyone (no credential), a contestant of the private event A (who owns bot X
in it), another contestant of A (bot Y), A's organiser, the organiser of the public event
B, and the admin (the organiser token).  The server is configured as production is
(organiser token set, no open sign-up, no registration without an account).  A refusal
is 401 for anyone, 403 for a caller who may see the thing but not change it, 404 for one
who may not know it exists (a private event's things, to a stranger).

The scene is built once per module (argon2 makes each account cost about 50 ms) and its
database copied; each case starts from that copy, so the order of the cases is free.
A write route added later fails ``test_every_write_route_has_its_rules`` until it is
given its rules in ``TABLE`` (or a reason in ``EXEMPT``).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from arena.app import create_app
from arena.config import Config
from arena.models import Bot, Match, Rating, Replay
from arena.services import accounts
from arena.worker import queue
from tests.support.api import auth
from tests.support.web import play_match

ADMIN_TOKEN = "the-organiser-token-of-this-arena"
PASSWORD = "a long enough password"
ROLES = ("anonymous", "contestant", "other", "organiser_a", "organiser_b", "admin")
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
CSRF_INPUT = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


@dataclass
class Scene:
    app: Flask
    live: Path  # the app's database file
    snapshot: Path  # the scene as built
    tokens: dict[str, str | None]
    ids: dict[str, int] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)

    def headers(self, role: str) -> dict[str, str]:
        token = self.tokens[role]
        return auth(token) if token else {}

    def restore(self) -> None:
        """The database as the scene left it (the pool closed first: no connection
        holds the old file's pages)."""
        self.app.extensions["arena.db"].dispose()
        _copy(self.snapshot, self.live)

    def count(self, model: Any) -> int:
        with self.app.extensions["arena.db"].session() as session:
            return session.scalar(select(func.count()).select_from(model)) or 0


def _copy(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database in WAL mode (sqlite's backup)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def _created(response: Any) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.get_json()
    return response.get_json()


def _build(app: Flask) -> Scene:
    """Accounts, events A (private) and B (public), their bots, a tournament and a played
    match in A, and the open arena's own bots, tournament and match."""
    client = app.test_client()
    admin = auth(ADMIN_TOKEN)

    def account(name: str, **fields: Any) -> dict[str, Any]:
        body = {"name": name, "password": PASSWORD, **fields}
        return _created(client.post("/api/accounts", json=body, headers=admin))

    olga, oscar = account("olga", role="organiser"), account("oscar", role="organiser")
    event_a = _created(
        client.post(
            "/api/events",
            json={
                "name": "class A",
                "games": ["cactus"],
                "visibility": "private",
                "bots_per_account": 2,
            },
            headers=auth(olga["token"]),
        )
    )
    event_b = _created(
        client.post(
            "/api/events",
            json={"name": "hackathon B", "games": ["cactus"], "visibility": "public"},
            headers=auth(oscar["token"]),
        )
    )
    carla = account("carla", join_code=event_a["join_code"])
    dmitri = account("dmitri", join_code=event_a["join_code"])
    sam = account("sam", join_code=event_b["join_code"])  # a stranger to A
    tokens = {
        "anonymous": None,
        "contestant": carla["token"],
        "other": dmitri["token"],
        "organiser_a": olga["token"],
        "organiser_b": oscar["token"],
        "admin": ADMIN_TOKEN,
    }

    def bot(name: str, token: str, event_id: int | None = None) -> dict[str, Any]:
        body = {"name": name, "connect": True, "games": ["cactus"]}
        if event_id is not None:
            body["event_id"] = event_id
        return _created(client.post("/api/bots", json=body, headers=auth(token)))

    x = bot("x-bot", carla["token"], event_a["id"])
    y = bot("y-bot", dmitri["token"], event_a["id"])
    b = bot("b-bot", sam["token"], event_b["id"])
    z = bot("z-bot", ADMIN_TOKEN)  # the open arena's, of no account: attachable
    w = bot("w-bot", ADMIN_TOKEN)
    tournament_a = _created(
        client.post(
            "/api/tournaments",
            json={
                "name": "A's week 1",
                "game": "cactus",
                "bot_ids": [x["id"], y["id"]],
                "seats_per_match": 2,
                "games_per_pairing": 2,
                "event_id": event_a["id"],
            },
            headers=admin,
        )
    )
    tournament_open = _created(
        client.post(
            "/api/tournaments",
            json={
                "name": "open cup",
                "game": "cactus",
                "bot_ids": [z["id"], w["id"]],
                "seats_per_match": 2,
                "games_per_pairing": 2,
            },
            headers=admin,
        )
    )
    reset = _created(client.post(f"/api/accounts/{dmitri['id']}/reset", headers=admin))
    with app.extensions["arena.db"].session() as session:
        bots = {row.name: row for row in session.scalars(select(Bot))}
        played_a = play_match(session, "cactus", [bots["x-bot"], bots["y-bot"]], 7)
        played_a.event_id = event_a["id"]
        played_open = play_match(session, "cactus", [bots["z-bot"], bots["w-bot"]], 8)
        for name, elo in (("x-bot", 1520), ("y-bot", 1480), ("z-bot", 1510), ("w-bot", 1490)):
            session.add(Rating(bot_id=bots[name].id, game="cactus", elo=elo, matches=1))
        session.add(Rating(bot_id=bots["b-bot"].id, game="cactus", elo=1500, matches=1))
        queued_a = session.scalar(
            select(Match.id).where(Match.tournament_id == tournament_a["id"]).limit(1)
        )
        ids = {
            "event_a": event_a["id"],
            "event_b": event_b["id"],
            "contestant": carla["id"],
            "other": dmitri["id"],
            "stranger": sam["id"],
            "bot_x": x["id"],
            "bot_y": y["id"],
            "bot_b": b["id"],
            "bot_z": z["id"],
            "bot_w": w["id"],
            "tournament_a": tournament_a["id"],
            "tournament_open": tournament_open["id"],
            "match_a": played_a.id,
            "match_open": played_open.id,
            "queued_a": queued_a,
        }
    me = _created(client.get("/api/accounts/me", headers=auth(carla["token"])))
    ids["contestant_token"] = me["tokens"][0]["id"]
    secrets = {
        "join_a": event_a["join_code"],
        "join_b": event_b["join_code"],
        "owner_x": x["owner_token"],
        "owner_z": z["owner_token"],
        "secret_x": x["signing_secret"],
        "reset_other": reset["reset_path"].rsplit("/", 1)[1],
        "stranger": sam["token"],
    }
    return Scene(app, Path(), Path(), tokens, ids, secrets)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Iterator[Scene]:
    folder = tmp_path_factory.mktemp("authorization")
    live, snapshot = folder / "arena.sqlite3", folder / "scene.sqlite3"
    _copy(migrated_database, live)
    config = Config(
        profile="local",
        data_dir=folder,
        database_url=f"sqlite:///{live}",
        broker_url="filesystem://",
        secret_key="test-secret",
        testing=True,
        organiser_token=ADMIN_TOKEN,
        open_signup=False,
        open_registration=False,
        rate_limits=False,  # every case signs in again: the limits have tests of their own
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(queue, "enqueue_matches", lambda config, match_ids: None)
        # who may sign in is the question here, not what guessing costs: a cheap argon2
        patch.setattr(accounts, "_hasher", CHEAP_HASHER)
        app = create_app(config)
        built = _build(app)
        built.live = live
        built.snapshot = snapshot
        app.extensions["arena.db"].dispose()
        _copy(live, snapshot)
        yield built
        app.extensions["arena.db"].dispose()


@pytest.fixture
def scene(built: Scene) -> Scene:
    """The scene as built, whatever the case before it wrote."""
    built.restore()
    return built


# -- the table ------------------------------------------------------------------------------
def expect(**statuses: int) -> dict[str, int]:
    """Every role's status, in ``ROLES`` order: a case names them all."""
    assert set(statuses) == set(ROLES), sorted(set(ROLES) ^ set(statuses))
    return statuses


def same(status: int) -> dict[str, int]:
    return dict.fromkeys(ROLES, status)


@dataclass(frozen=True)
class Case:
    """One request to a write route and what each role gets; ``path`` and ``body`` are
    formatted with the scene's ids and secrets (``{bot_x}``, ``{join_a}``)."""

    label: str
    path: str
    expected: dict[str, int]
    body: dict[str, Any] | None = None
    form: bool = False  # a page's form: sent with its CSRF token, a redirect is success

    def request(self, scene: Scene) -> tuple[str, Any]:
        values = {**scene.ids, **scene.secrets}
        return self.path.format(**values), _fill(self.body, values)


def _fill(body: Any, values: dict[str, Any]) -> Any:
    if isinstance(body, str):
        if re.fullmatch(r"\{\w+\}", body):
            return values[body[1:-1]]  # an id keeps its type
        return body.format(**values)
    if isinstance(body, dict):
        return {k: _fill(v, values) for k, v in body.items()}
    if isinstance(body, list):
        return [_fill(v, values) for v in body]
    return body


# private event A's things: hidden from anyone and from B's organiser
A_ORGANISERS = expect(
    anonymous=404, contestant=403, other=403, organiser_a=200, organiser_b=404, admin=200
)
# bot X in A: its owner and A's organisers manage it, another member of A may not
MANAGES_X = expect(
    anonymous=404, contestant=200, other=403, organiser_a=200, organiser_b=404, admin=200
)
ADMIN_ONLY = expect(
    anonymous=401, contestant=403, other=403, organiser_a=403, organiser_b=403, admin=200
)
NEW_BOT = {"name": "new-bot", "connect": True, "games": ["cactus"]}
A_TOURNAMENT = {
    "name": "A's week 2",
    "game": "cactus",
    "bot_ids": ["{bot_x}", "{bot_y}"],
    "seats_per_match": 2,
    "games_per_pairing": 2,
    "event_id": "{event_a}",
}

TABLE: dict[tuple[str, str], list[Case]] = {
    ("POST", "/api/accounts"): [
        Case(
            "a contestant signs up with a join code",
            "/api/accounts",
            same(201),
            {"name": "newcomer", "password": PASSWORD, "join_code": "{join_a}"},
        ),
        Case(
            "no join code: sign-up is closed",
            "/api/accounts",
            expect(
                anonymous=403,
                contestant=403,
                other=403,
                organiser_a=403,
                organiser_b=403,
                admin=201,
            ),
            {"name": "newcomer", "password": PASSWORD},
        ),
        Case(
            "an organiser's account: the admin's",
            "/api/accounts",
            {**ADMIN_ONLY, "admin": 201},
            {"name": "newcomer", "password": PASSWORD, "role": "organiser"},
        ),
    ],
    ("POST", "/api/accounts/tokens"): [
        Case(
            "a token for the right password",
            "/api/accounts/tokens",
            same(201),
            {"name": "carla", "password": PASSWORD},
        ),
        Case(
            "a wrong password",
            "/api/accounts/tokens",
            same(401),
            {"name": "carla", "password": "not the password"},
        ),
    ],
    ("DELETE", "/api/accounts/me/tokens/<int:token_id>"): [
        Case(
            "the contestant's token: only theirs",
            "/api/accounts/me/tokens/{contestant_token}",
            expect(
                anonymous=401,
                contestant=204,
                other=404,
                organiser_a=404,
                organiser_b=404,
                admin=403,
            ),
        ),
    ],
    ("POST", "/api/accounts/<int:account_id>/reset"): [
        Case(
            "a contestant of A: A's organisers and the admin",
            "/api/accounts/{contestant}/reset",
            expect(
                anonymous=401,
                contestant=403,
                other=403,
                organiser_a=201,
                organiser_b=403,
                admin=201,
            ),
        ),
    ],
    ("POST", "/api/accounts/<int:account_id>/sign-out"): [
        Case(
            "a contestant of A: A's organisers, the admin and themselves",
            "/api/accounts/{contestant}/sign-out",
            expect(
                anonymous=401,
                contestant=200,
                other=403,
                organiser_a=200,
                organiser_b=403,
                admin=200,
            ),
        ),
    ],
    ("PATCH", "/api/accounts/me"): [
        Case(
            "where one's own notices go (the organiser token has no account)",
            "/api/accounts/me",
            {**same(200), "anonymous": 401, "admin": 403},
            {"email": "someone@example.org"},
        ),
    ],
    ("POST", "/api/accounts/me/notices/read"): [
        Case(
            "one's own notices read",
            "/api/accounts/me/notices/read",
            {**same(200), "anonymous": 401, "admin": 403},
            {"all": True},
        ),
    ],
    ("POST", "/api/scrimmages"): [
        Case(
            "bot X against a house bot: its owner only (X, a connect bot, is not connected)",
            "/api/scrimmages",
            expect(
                anonymous=404,
                contestant=409,
                other=403,
                organiser_a=403,
                organiser_b=404,
                admin=403,
            ),
            {"bot_id": "{bot_x}", "opponents": ["random"], "matches": 1},
        ),
    ],
    ("POST", "/api/accounts/me/sign-out"): [
        Case(
            "one's own account (the organiser token has none)",
            "/api/accounts/me/sign-out",
            {**same(200), "anonymous": 401, "admin": 403},
        ),
    ],
    ("POST", "/api/accounts/reset"): [
        Case(
            "the link's secret is the credential",
            "/api/accounts/reset",
            same(204),
            {"secret": "{reset_other}", "password": "a brand new password"},
        ),
        Case(
            "a made-up secret",
            "/api/accounts/reset",
            same(404),
            {"secret": "made-up", "password": "a brand new password"},
        ),
    ],
    ("POST", "/api/bots"): [
        Case(
            "into A: its members (and the admin)",
            "/api/bots",
            expect(
                anonymous=401,
                contestant=201,
                other=201,
                organiser_a=201,
                organiser_b=404,
                admin=201,
            ),
            {**NEW_BOT, "event_id": "{event_a}"},
        ),
        Case(
            "into the open arena: an account",
            "/api/bots",
            expect(
                anonymous=401,
                contestant=201,
                other=201,
                organiser_a=201,
                organiser_b=201,
                admin=201,
            ),
            NEW_BOT,
        ),
    ],
    ("PATCH", "/api/bots/<int:bot_id>"): [
        Case("bot X's description", "/api/bots/{bot_x}", MANAGES_X, {"description": "new"}),
        Case(
            "pause bot X: A's organisers",
            "/api/bots/{bot_x}",
            {**A_ORGANISERS, "contestant": 403},
            {"status": "paused"},
        ),
    ],
    ("DELETE", "/api/bots/<int:bot_id>"): [
        Case(
            "bot X",
            "/api/bots/{bot_x}",
            {**MANAGES_X, "contestant": 204, "organiser_a": 204, "admin": 204},
        ),
    ],
    ("POST", "/api/bots/<int:bot_id>/rotate"): [
        Case("bot X's credentials", "/api/bots/{bot_x}/rotate", MANAGES_X, {}),
    ],
    ("PUT", "/api/bots/<int:bot_id>/code"): [
        Case(
            "bot X's code (it connects out: those who manage it hear that it is not hosted)",
            "/api/bots/{bot_x}/code",
            expect(
                anonymous=404,
                contestant=409,
                other=403,
                organiser_a=409,
                organiser_b=404,
                admin=409,
            ),
            {},
        ),
    ],
    ("POST", "/api/bots/<int:bot_id>/code/<string:version>/activate"): [
        Case(
            "a version bot X does not have: those who manage it hear so",
            "/api/bots/{bot_x}/code/0123456789ab/activate",
            expect(
                anonymous=404,
                contestant=404,
                other=403,
                organiser_a=404,
                organiser_b=404,
                admin=404,
            ),
            {},
        ),
    ],
    ("POST", "/api/bots/<int:bot_id>/attach"): [
        Case(
            "bot Z (of no account) with its owner token: any account",
            "/api/bots/{bot_z}/attach",
            expect(
                anonymous=401,
                contestant=200,
                other=200,
                organiser_a=200,
                organiser_b=200,
                admin=403,
            ),
            {"owner_token": "{owner_z}"},
        ),
        Case(
            "bot X, already the contestant's",
            "/api/bots/{bot_x}/attach",
            expect(
                anonymous=401,
                contestant=200,
                other=409,
                organiser_a=409,
                organiser_b=409,
                admin=403,
            ),
            {"owner_token": "{owner_x}"},
        ),
    ],
    ("POST", "/api/events"): [
        Case(
            "an event: organisers' accounts and the admin",
            "/api/events",
            expect(
                anonymous=401,
                contestant=403,
                other=403,
                organiser_a=201,
                organiser_b=201,
                admin=201,
            ),
            {"name": "new event", "games": ["cactus"]},
        ),
    ],
    ("PATCH", "/api/events/<int:event_id>"): [
        Case("private A", "/api/events/{event_a}", A_ORGANISERS, {"bots_per_account": 3}),
        Case(
            "public B",
            "/api/events/{event_b}",
            expect(
                anonymous=401,
                contestant=403,
                other=403,
                organiser_a=403,
                organiser_b=200,
                admin=200,
            ),
            {"bots_per_account": 3},
        ),
    ],
    ("POST", "/api/events/<int:event_id>/join"): [
        Case(
            "A with its code: an account",
            "/api/events/{event_a}/join",
            expect(
                anonymous=401,
                contestant=200,
                other=200,
                organiser_a=200,
                organiser_b=200,
                admin=403,
            ),
            {"join_code": "{join_a}"},
        ),
        Case(
            "A with a wrong code",
            "/api/events/{event_a}/join",
            {**same(404), "anonymous": 401, "admin": 403},
            {"join_code": "{join_b}"},
        ),
    ],
    ("POST", "/api/events/<int:event_id>/organisers"): [
        Case(
            "dmitri organises A",
            "/api/events/{event_a}/organisers",
            A_ORGANISERS,
            {"account": "dmitri"},
        ),
    ],
    ("PUT", "/api/events/<int:event_id>/ladders/<game>"): [
        Case(
            "A's cactus ladder",
            "/api/events/{event_a}/ladders/cactus",
            A_ORGANISERS,
            {"enabled": True},
        ),
    ],
    ("PUT", "/api/ladders/<game>"): [
        Case("the open arena's ladder", "/api/ladders/cactus", ADMIN_ONLY, {"enabled": True}),
    ],
    ("POST", "/api/tournaments"): [
        Case(
            "in A",
            "/api/tournaments",
            {**A_ORGANISERS, "organiser_a": 201, "admin": 201},
            A_TOURNAMENT,
        ),
        Case(
            "in the open arena",
            "/api/tournaments",
            {**ADMIN_ONLY, "admin": 201},
            {**A_TOURNAMENT, "bot_ids": ["{bot_z}", "{bot_w}"], "event_id": None},
        ),
    ],
    ("POST", "/api/tournaments/<int:tournament_id>/cancel"): [
        Case("A's", "/api/tournaments/{tournament_a}/cancel", A_ORGANISERS),
        Case("the open arena's", "/api/tournaments/{tournament_open}/cancel", ADMIN_ONLY),
    ],
    ("POST", "/api/tournaments/<int:tournament_id>/final"): [
        Case(
            "a final run of A's",
            "/api/tournaments/{tournament_a}/final",
            {**A_ORGANISERS, "organiser_a": 201, "admin": 201},
            {"games_per_pairing": 4},
        ),
        Case(
            "a final run of the open arena's",
            "/api/tournaments/{tournament_open}/final",
            {**ADMIN_ONLY, "admin": 201},
            {"games_per_pairing": 4},
        ),
    ],
    # the pages' own forms: the identity is the form's (a password, a link), the CSRF
    # token is what every one needs
    ("POST", "/login"): [
        Case(
            "the right password",
            "/login",
            same(302),
            {"name": "carla", "password": PASSWORD},
            form=True,
        ),
    ],
    ("POST", "/logout"): [
        Case("with the form's token", "/logout", same(302), {}, form=True),
    ],
    ("POST", "/account/sign-out"): [
        # one's own sessions (a stranger, signed in as nobody, is sent to the login page)
        Case("with the form's token", "/account/sign-out", same(302), {}, form=True),
    ],
    ("POST", "/signup"): [
        Case(
            "with A's join code",
            "/signup",
            same(302),
            {"name": "newcomer", "password": PASSWORD, "join_code": "{join_a}"},
            form=True,
        ),
    ],
    ("POST", "/reset/<secret>"): [
        Case(
            "the link's secret",
            "/reset/{reset_other}",
            same(302),
            {"password": "a brand new password"},
            form=True,
        ),
    ],
}
EXEMPT = {
    ("POST", "/api/connect/session"): "signed with the bot's signing secret (HMAC), not a "
    "login: tests/test_connect_api.py",
    ("POST", "/api/connect/poll"): "signed with the bot's signing secret (HMAC)",
    ("POST", "/api/connect/close"): "signed with the bot's signing secret (HMAC)",
    ("POST", "/api/play"): "governed by open_play (anyone where play is open, the organiser "
    "token to rate or seat any bot): tests/test_play.py",
}
CASES = [
    pytest.param(route, case, role, id=f"{route[0]} {case.path} {case.label} [{role}]")
    for route, cases in TABLE.items()
    for case in cases
    for role in ROLES
]


def write_routes(app: Flask) -> set[tuple[str, str]]:
    return {
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        for method in (rule.methods or set()) & WRITES
    }


def test_every_write_route_has_its_rules(scene: Scene) -> None:
    routes = write_routes(scene.app)
    missing = sorted(routes - set(TABLE) - set(EXEMPT))
    assert not missing, f"write routes with no rules in TABLE (or reason in EXEMPT): {missing}"
    gone = sorted((set(TABLE) | set(EXEMPT)) - routes)
    assert not gone, f"rules for routes the app does not have: {gone}"


def _page_token(client: FlaskClient) -> str:
    """The CSRF token of a page's forms, for this client's session."""
    page = client.get("/login").get_data(as_text=True)
    found = CSRF_INPUT.search(page) or CSRF_META.search(page)
    assert found, "the login page has no CSRF token"
    return found.group(1)


def send(scene: Scene, method: str, case: Case, role: str, client: FlaskClient | None = None):
    client = client or scene.app.test_client()
    path, body = case.request(scene)
    headers = scene.headers(role)
    if case.form:
        data = {**(body or {}), "csrf_token": _page_token(client)}
        return client.open(path, method=method, data=data, headers=headers)
    if body is None:
        return client.open(path, method=method, headers=headers)
    return client.open(path, method=method, json=body, headers=headers)


@pytest.mark.parametrize(("route", "case", "role"), CASES)
def test_the_matrix(scene: Scene, route: tuple[str, str], case: Case, role: str) -> None:
    answer = send(scene, route[0], case, role)
    wanted = case.expected[role]
    assert answer.status_code == wanted, (
        f"{route[0]} {case.path} ({case.label}) as {role}: {answer.status_code}, not "
        f"{wanted}: {answer.get_data(as_text=True)[:300]}"
    )
    if 400 <= wanted < 500 and not case.form:
        assert answer.get_json()["message"]  # every refusal says why


@pytest.mark.parametrize("route", sorted(r for r, cases in TABLE.items() if cases[0].form))
def test_a_page_form_without_its_csrf_token_is_refused(scene: Scene, route) -> None:
    case = TABLE[route][0]
    path, body = case.request(scene)
    client = scene.app.test_client()
    client.get("/login")  # a session, but the form's token is not sent
    answer = client.open(path, method=route[0], data=body or {})
    assert answer.status_code == 400
    assert "csrf" in answer.get_data(as_text=True).lower()


# -- a refused write writes nothing ----------------------------------------------------------
def test_a_refused_write_changes_nothing(scene: Scene) -> None:
    bots = scene.count(Bot)
    client = scene.app.test_client()
    for role in ("anonymous", "other", "organiser_b"):
        patch = client.patch(
            f"/api/bots/{scene.ids['bot_x']}",
            json={"description": "defaced"},
            headers=scene.headers(role),
        )
        assert patch.status_code in (401, 403, 404)
        gone = client.delete(f"/api/bots/{scene.ids['bot_x']}", headers=scene.headers(role))
        assert gone.status_code in (401, 403, 404)
    mine = client.get(f"/api/bots/{scene.ids['bot_x']}", headers=scene.headers("contestant"))
    assert mine.get_json()["description"] == "" and mine.get_json()["status"] == "active"
    assert scene.count(Bot) == bots


# -- CSRF where a login session signs a request in -------------------------------------------
def login(scene: Scene, name: str = "carla") -> tuple[FlaskClient, str]:
    """A client signed in through the /login page, and its pages' CSRF token."""
    client = scene.app.test_client()
    token = _page_token(client)
    answer = client.post("/login", data={"name": name, "password": PASSWORD, "csrf_token": token})
    assert answer.status_code == 302, answer.get_data(as_text=True)
    page = client.get("/bots").get_data(as_text=True)
    return client, CSRF_META.search(page).group(1)


def test_a_signed_in_page_writes_to_the_api_only_with_its_csrf_token(scene: Scene) -> None:
    client, token = login(scene)
    body = {**NEW_BOT, "event_id": scene.ids["event_a"]}
    bots = scene.count(Bot)
    refused = client.post("/api/bots", json=body)
    assert refused.status_code == 400, refused.get_json()
    assert "CSRF" in refused.get_json()["message"]
    assert scene.count(Bot) == bots  # nothing written
    wrong = client.post("/api/bots", json=body, headers={"X-CSRFToken": "not-the-token"})
    assert wrong.status_code == 400 and scene.count(Bot) == bots
    made = client.post("/api/bots", json=body, headers={"X-CSRFToken": token})
    assert made.status_code == 201, made.get_json()
    assert scene.count(Bot) == bots + 1
    mine = client.get("/api/bots?mine=true").get_json()
    assert {b["name"] for b in mine} == {"x-bot", "new-bot"}  # the session is carla's


def test_another_site_cannot_use_the_session_without_the_token(scene: Scene) -> None:
    """A page of another site can make the browser send the cookie, not read the token:
    every write method is refused, a read works."""
    client, _ = login(scene)
    bot = f"/api/bots/{scene.ids['bot_x']}"
    assert client.patch(bot, json={"description": "x"}).status_code == 400
    assert client.delete(bot).status_code == 400
    assert client.post(f"{bot}/rotate", json={}).status_code == 400
    assert client.get(bot).status_code == 200
    detail = client.get(bot, headers=scene.headers("contestant")).get_json()
    assert detail["status"] == "active" and detail["description"] == ""


def test_a_bearer_token_needs_no_csrf_token(scene: Scene) -> None:
    client, _ = login(scene)  # a session too: the token is what signs the request in
    answer = client.patch(
        f"/api/bots/{scene.ids['bot_x']}",
        json={"description": "by a program"},
        headers=scene.headers("contestant"),
    )
    assert answer.status_code == 200, answer.get_json()


# -- a private event's reads ------------------------------------------------------------------
def _stranger(scene: Scene) -> dict[str, str]:
    return auth(scene.secrets["stranger"])


READERS_OF_A = ("contestant", "other", "organiser_a", "admin")


def private_pages(scene: Scene) -> list[str]:
    return [
        f"/events/{scene.ids['event_a']}",
        f"/bots/{scene.ids['bot_x']}",
        f"/tournaments/{scene.ids['tournament_a']}",
        f"/matches/{scene.ids['match_a']}",
        f"/matches/{scene.ids['queued_a']}",
    ]


def test_a_private_events_pages_are_its_members(scene: Scene) -> None:
    client = scene.app.test_client()
    for path in private_pages(scene):
        for headers in ({}, scene.headers("organiser_b"), _stranger(scene)):
            assert client.get(path, headers=headers).status_code == 404, path
        for role in READERS_OF_A:
            answer = client.get(path, headers=scene.headers(role))
            assert answer.status_code == 200, (path, role, answer.status_code)


def test_a_member_signed_in_on_the_pages_sees_them(scene: Scene) -> None:
    client, _ = login(scene, "dmitri")
    for path in private_pages(scene):
        assert client.get(path).status_code == 200, path
    outsider, _ = login(scene, "sam")
    for path in private_pages(scene):
        assert outsider.get(path).status_code == 404, path


def api_reads_of_a(scene: Scene) -> list[str]:
    ids = scene.ids
    return [
        f"/api/events/{ids['event_a']}",
        f"/api/events/{ids['event_a']}/roster",
        f"/api/events/{ids['event_a']}/roster.csv",
        f"/api/bots/{ids['bot_x']}",
        f"/api/tournaments/{ids['tournament_a']}",
        f"/api/matches/{ids['match_a']}",
        f"/api/matches/{ids['match_a']}/replay",
        f"/api/matches/{ids['match_a']}/replay?seat=0",
        f"/api/matches/{ids['match_a']}/frames?perspective=all",
        f"/api/matches/{ids['queued_a']}",
        f"/api/matches/{ids['queued_a']}/frames?perspective=public",
    ]


def test_a_private_events_api_reads_are_its_members(scene: Scene) -> None:
    client = scene.app.test_client()
    for path in api_reads_of_a(scene):
        for headers in ({}, scene.headers("organiser_b"), _stranger(scene)):
            answer = client.get(path, headers=headers)
            assert answer.status_code == 404, (path, answer.status_code)
        for role in READERS_OF_A:
            answer = client.get(path, headers=scene.headers(role))
            assert answer.status_code == 200, (path, role, answer.get_data(as_text=True)[:200])


# every read of one thing, by its id: what a private event's thing is in each
A_THINGS = {
    "event_id": "event_a",
    "bot_id": "bot_x",
    "tournament_id": "tournament_a",
    "match_id": "match_a",
}
# reads a member gets a 404 from too, for a reason of their own
NOT_FOR_MEMBERS_EITHER = {
    "/api/tournaments/<int:tournament_id>/grades": "a tournament without a pass rule",
    "/api/tournaments/<int:tournament_id>/grades.csv": "a tournament without a pass rule",
    "/play/seat/<int:bot_id>": "a person's seat, not a bot",
}
# reads for those who manage the bot only (its owner, its organisers): 403 to other members
FOR_MANAGERS_ONLY = {
    "/api/bots/<int:bot_id>/code": "a hosted bot's code versions are its owner's",
}


def test_every_read_of_a_private_events_thing_is_hidden_from_strangers(scene: Scene) -> None:
    """Every GET route that takes an event's, a bot's, a tournament's or a match's id
    (read from the url map: a route added later is checked too) answers a stranger 404
    for A's, and a member 200."""
    client = scene.app.test_client()
    checked = []
    for rule in scene.app.url_map.iter_rules():
        args = set(rule.arguments)
        if "GET" not in (rule.methods or set()) or not args or not args <= set(A_THINGS):
            continue
        path = rule.rule
        for arg in args:
            path = path.replace(f"<int:{arg}>", str(scene.ids[A_THINGS[arg]]))
        for headers in ({}, scene.headers("organiser_b"), _stranger(scene)):
            answer = client.get(path, headers=headers)
            assert answer.status_code == 404, (path, answer.status_code)
        member = client.get(path, headers=scene.headers("other"))
        wanted = 404 if rule.rule in NOT_FOR_MEMBERS_EITHER else 200
        if rule.rule in FOR_MANAGERS_ONLY:
            wanted = 403
            owner = client.get(path, headers=scene.headers("contestant"))
            assert owner.status_code == 200, (path, owner.get_data(as_text=True)[:200])
        assert member.status_code == wanted, (path, member.get_data(as_text=True)[:200])
        checked.append(rule.rule)
    assert len(checked) >= 10, checked  # the map was read


def test_the_owner_token_of_a_private_bot_reads_its_bot(scene: Scene) -> None:
    client = scene.app.test_client()
    answer = client.get(f"/api/bots/{scene.ids['bot_x']}", headers=auth(scene.secrets["owner_x"]))
    assert answer.status_code == 200 and "endpoint" in answer.get_json()


def _listed(client: FlaskClient, path: str, headers: dict[str, str]) -> set[int]:
    answer = client.get(path, headers=headers)
    assert answer.status_code == 200, answer.get_json()
    return {row["id"] for row in answer.get_json()}


def test_lists_leave_a_private_events_things_out_for_strangers(scene: Scene) -> None:
    client = scene.app.test_client()
    ids = scene.ids
    for headers, member in (
        ({}, False),
        (scene.headers("organiser_b"), False),
        (_stranger(scene), False),
        (scene.headers("other"), True),
        (scene.headers("admin"), True),
    ):
        bots = _listed(client, "/api/bots", headers)
        assert ({ids["bot_x"], ids["bot_y"]} <= bots) is member
        assert bool({ids["bot_x"], ids["bot_y"]} & bots) is member
        assert {ids["bot_z"], ids["bot_w"], ids["bot_b"]} <= bots  # the others' are listed
        tournaments = _listed(client, "/api/tournaments", headers)
        assert (ids["tournament_a"] in tournaments) is member
        assert ids["tournament_open"] in tournaments
        matches = _listed(client, "/api/matches?page_size=100", headers)
        assert (ids["match_a"] in matches) is member and (ids["queued_a"] in matches) is member
        assert ids["match_open"] in matches
        by_bot = _listed(client, f"/api/matches?bot_id={ids['bot_x']}", headers)
        assert bool(by_bot) is member
        events = _listed(client, "/api/events", headers)
        assert (ids["event_a"] in events) is member and ids["event_b"] in events


def test_the_pages_lists_leave_a_private_events_things_out(scene: Scene) -> None:
    client = scene.app.test_client()
    for headers, member in ((_stranger(scene), False), (scene.headers("other"), True)):
        bots = client.get("/bots", headers=headers).get_data(as_text=True)
        assert ("x-bot" in bots) is member and "z-bot" in bots
        tournaments = client.get("/tournaments", headers=headers).get_data(as_text=True)
        assert ("A&#39;s week 1" in tournaments) is member and "open cup" in tournaments
        index = client.get("/", headers=headers).get_data(as_text=True)
        assert ("A&#39;s week 1" in index) is member and "open cup" in index
        assert ("x-bot" in index) is member  # the latest results' seats
        form = client.get("/tournaments/new", headers=headers).get_data(as_text=True)
        assert ("x-bot" in form) is member and "z-bot" in form


def test_the_open_arenas_leaderboards_list_only_bots_of_no_event(scene: Scene) -> None:
    client = scene.app.test_client()
    for headers in ({}, scene.headers("admin"), scene.headers("contestant")):
        rows = client.get("/api/ratings/cactus", headers=headers).get_json()
        assert {row["name"] for row in rows} == {"z-bot", "w-bot"}
        for page in ("/leaderboard", "/leaderboard/cactus"):
            text = client.get(page, headers=headers).get_data(as_text=True)
            assert "z-bot" in text and "w-bot" in text
            assert "x-bot" not in text and "b-bot" not in text


def test_a_bots_page_ranks_it_among_its_events_bots(scene: Scene) -> None:
    client = scene.app.test_client()
    page = client.get(f"/bots/{scene.ids['bot_x']}", headers=scene.headers("contestant"))
    text = page.get_data(as_text=True)
    assert "z-bot" not in text and "w-bot" not in text  # not in A's board
    assert "1 of 2" in text  # x-bot leads A's board (y-bot is the other)


def test_play_never_offers_nor_seats_a_private_events_bot(scene: Scene) -> None:
    client = scene.app.test_client()
    with scene.app.extensions["arena.db"].session() as session:
        for bot in session.scalars(select(Bot).where(Bot.kind == "bot")):
            bot.playable = True
    for headers in ({}, scene.headers("contestant"), scene.headers("admin")):
        offered = client.get("/api/play/cactus/opponents", headers=headers).get_json()
        names = {row["name"] for row in offered}
        assert "z-bot" in names and "x-bot" not in names and "y-bot" not in names
        page = client.get("/play/cactus", headers=headers).get_data(as_text=True)
        assert "z-bot" in page and "x-bot" not in page
    matches = scene.count(Match)
    seats = [{"person": "Ada"}, {"bot_id": scene.ids["bot_x"]}]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(queue, "enqueue_matches", lambda config, match_ids: None)
        for headers in ({}, scene.headers("admin")):
            answer = client.post(
                "/api/play", json={"game": "cactus", "seats": seats}, headers=headers
            )
            assert answer.status_code == 400, answer.get_json()
            assert answer.get_json()["message"] == f"no bot {scene.ids['bot_x']}"
    assert scene.count(Match) == matches


def test_a_replay_of_a_private_match_is_not_served_to_strangers(scene: Scene) -> None:
    """Its record (gzip as stored) and one seat's view: the same 404 as a match that does
    not exist, so that a stranger cannot tell them apart."""
    client = scene.app.test_client()
    hidden = client.get(f"/api/matches/{scene.ids['match_a']}/replay", headers=_stranger(scene))
    missing = client.get("/api/matches/999999/replay", headers=_stranger(scene))
    assert hidden.status_code == missing.status_code == 404
    assert hidden.get_json()["message"].replace(
        str(scene.ids["match_a"]), "N"
    ) == missing.get_json()["message"].replace("999999", "N")
    with scene.app.extensions["arena.db"].session() as session:
        assert session.get(Replay, scene.ids["match_a"]) is not None  # there is one
