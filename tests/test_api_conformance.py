"""The JSON API answers as its OpenAPI document (``/api/openapi.json``) says, on SQLite and
on PostgreSQL, for any input the document allows and for much it does not.

``test_schemathesis_finds_no_failure`` runs schemathesis over every operation of the
document as the app serves it when the test runs (routes added later are covered without
a change here), through the Flask test client (WSGI, no server), on an app with a few
bots, an event and a tournament in it.  For each operation hypothesis draws a few
requests valid by the document (and a few invalid ones: bad types, missing fields, out of
range values), each sent without a credential and with the organiser token, and every
answer is checked for: no 5xx (``not_a_server_error``); a status the document lists
(``status_code_conformance``); the documented content type; the documented headers
(``response_headers_conformance``: ``X-Pagination`` among them); a body valid against the
status's schema (``response_schema_conformance``); and every datetime in a JSON body
carrying its offset (``aware_datetimes``, ours).  An operation with nothing to make
invalid (no parameter, no body) has no invalid requests; that is not a failure.  Draws
are derandomized (the same requests each run), without hypothesis' deadline or shrinking,
and the examples are few, to keep both profiles within seconds.  The PostgreSQL profile
skips without a PostgreSQL on 127.0.0.1:5432, and fails without one when ``CI`` is set.

The other tests pin what it found, each on its own: ids are 32-bit on PostgreSQL (an id
past ``MAX_ID`` is a 404 in a path and a 422 in a body or a query, never a 500), every
datetime carries its offset whatever the database, ``X-Pagination`` is documented as the
JSON text it is, a 405 names the allowed methods, and a credential is judged before the
arguments are.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import marshmallow as ma
import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import load_all_checks, not_a_server_error
from schemathesis.specs.openapi import checks as openapi_checks

from arena.api.common import PAGINATION_HEADER_NAME
from arena.db import Database
from arena.services import MAX_ID
from tests.support.api import auth
from tests.support.lanes import postgres_url

ORGANISER = "organiser-token-for-the-conformance-run"
ADMIN = auth(ORGANISER)
METHODS = ("get", "put", "post", "delete", "patch")
LARGEST_KEY = 2**31 - 1  # PostgreSQL's INTEGER, the type of every key
# an ISO 8601 moment without an offset (a naive datetime written as it is)
NAIVE_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?")


@contextlib.contextmanager
def _database(kind: str, make_app: Callable[..., Flask], **overrides: Any) -> Iterator[Flask]:
    """An app on a fresh database of ``kind`` (sqlite or postgresql), with the organiser
    token set and no rate limits (the run makes many requests from one address)."""
    overrides = {"organiser_token": ORGANISER, "rate_limits": False, **overrides}
    if kind == "sqlite":
        yield make_app(**overrides)
        return
    with postgres_url() as url:
        database = Database(url)
        database.upgrade()
        database.dispose()
        app = make_app(database_url=url, **overrides)
        try:
            yield app
        finally:
            app.extensions["arena.db"].dispose()


def _seed(app: Flask) -> dict[str, int]:
    """Two bots, an event and a tournament (its matches queued): answers with rows, and
    datetimes read back from the database, for the run to check."""
    client = app.test_client()
    ids = {}
    for name in ("alpha", "beta"):
        bot = client.post(
            "/api/bots",
            json={"name": name, "connect": True, "games": ["cactus"], "owner": "tests"},
            headers=ADMIN,
        )
        assert bot.status_code == 201, bot.get_json()
        ids[name] = bot.get_json()["id"]
    event = client.post("/api/events", json={"name": "Class", "games": ["cactus"]}, headers=ADMIN)
    assert event.status_code == 201, event.get_json()
    tournament = client.post(
        "/api/tournaments",
        json={
            "name": "Seeded",
            "game": "cactus",
            "bot_ids": [ids["alpha"], ids["beta"]],
            "seats_per_match": 2,
            "games_per_pairing": 2,
        },
        headers=ADMIN,
    )
    assert tournament.status_code in (201, 202), tournament.get_json()
    return ids


@pytest.fixture(params=["sqlite", "postgresql"])
def seeded_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Iterator[Flask]:
    with _database(request.param, make_app) as app:
        _seed(app)
        yield app


def aware_datetimes(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every datetime in a JSON answer says its offset (``+00:00``): a client must not
    guess the zone, nor get another answer from another database."""
    if "json" not in (response.headers.get("content-type") or [""])[0]:
        return None
    if response.headers.get("content-encoding"):
        return None  # a stored replay sent gzip-compressed: its datetimes are the record's
    naive = [
        value
        for value in _strings(json.loads(response.content or b"null"))
        if NAIVE_MOMENT.fullmatch(value)
    ]
    assert not naive, f"datetimes without an offset: {naive[:3]}"
    return True


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


CHECKS = [
    not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
    aware_datetimes,
]
RUNS = (  # (generation mode, examples per operation)
    (schemathesis.GenerationMode.POSITIVE, 6),
    (schemathesis.GenerationMode.NEGATIVE, 3),
)


def test_schemathesis_finds_no_failure(seeded_app: Flask):
    load_all_checks()
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", seeded_app)
    failures: dict[str, str] = {}
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode, examples in RUNS:
            if mode is schemathesis.GenerationMode.NEGATIVE and not _negatable(operation):
                continue

            @settings(
                max_examples=examples,
                deadline=None,
                derandomize=True,
                database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(mode))
            def run(case: schemathesis.Case) -> None:
                for headers in (None, ADMIN):
                    case.call_and_validate(headers=headers, checks=CHECKS)

            try:
                run()
            except Unsatisfiable:
                assert mode is schemathesis.GenerationMode.NEGATIVE  # nothing to make invalid
            except (Exception, BaseExceptionGroup) as exc:
                failures[f"{operation.label} ({mode.value})"] = str(exc)[:3000]
    assert operations > 40  # the document was read, every route with it
    assert not failures, "\n\n".join(f"== {label}\n{text}" for label, text in failures.items())


def _negatable(operation: schemathesis.APIOperation) -> bool:
    """Whether a request can break the document: a body, a query, or an integer in the
    path (any text is a valid game id: hypothesis would search for an invalid one in vain)."""
    return "requestBody" in operation.definition.raw or any(
        parameter.location.value == "query"
        or (
            parameter.location.value == "path"
            and parameter.definition["schema"]["type"] == "integer"
        )
        for parameter in operation.iter_parameters()
    )


# -- ids --------------------------------------------------------------------------------------
def _spec(app: Flask) -> dict[str, Any]:
    return app.test_client().get("/api/openapi.json").get_json()


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(path, method, operation), the path's parameters among the operation's."""
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                op = item[method]
                parameters = [*item.get("parameters", []), *op.get("parameters", [])]
                yield path, method, {**op, "parameters": parameters}


def _fill(path: str, spec_item: dict[str, Any], id_value: int) -> str:
    """The path with ``id_value`` for every integer parameter and a game for the others."""
    for parameter in spec_item.get("parameters", []):
        if parameter["in"] != "path":
            continue
        value = id_value if parameter["schema"].get("type") == "integer" else "cactus"
        path = path.replace("{" + parameter["name"] + "}", str(value))
    return path


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_an_id_past_32_bits_is_a_404_in_a_path_and_a_422_elsewhere(make_app, kind: str):
    """PostgreSQL's keys are 32-bit: asking it for a larger id is an error (it was a 500
    on every route taking an id, many without a credential).  No such id can exist."""
    past = LARGEST_KEY + 1
    with _database(kind, make_app) as app:
        ids = _seed(app)
        client = app.test_client()
        spec = _spec(app)
        with_ids = [
            (path, method, op)
            for path, method, op in _operations(spec)
            if any(
                p["in"] == "path" and p["schema"].get("type") == "integer"
                for p in op.get("parameters", [])
            )
        ]
        assert len(with_ids) > 20
        for path, method, op in with_ids:
            for headers in (None, ADMIN):
                answer = client.open(_fill(path, op, past), method=method.upper(), headers=headers)
                assert answer.status_code == 404, (method, path, answer.get_json())
        queries = [
            "/api/bots?event_id={}",
            "/api/tournaments?event_id={}",
            "/api/matches?bot_id={}",
            "/api/matches?tournament_id={}",
        ]
        for query in queries:
            answer = client.get(query.format(past), headers=ADMIN)
            assert answer.status_code == 422, (query, answer.get_json())
        bodies = [
            ("/api/bots", {"name": "x", "connect": True, "games": ["cactus"], "event_id": past}),
            (
                "/api/tournaments",
                {
                    "name": "T",
                    "game": "cactus",
                    "bot_ids": [ids["alpha"], past],
                    "seats_per_match": 2,
                    "games_per_pairing": 2,
                },
            ),
            ("/api/play", {"game": "cactus", "seats": [{"bot_id": past}, {"house": "random"}]}),
            ("/api/connect/session", {"bot_id": past, "request_id": "0" * 32, "info": {}}),
            ("/api/connect/poll", {"bot_id": past, "request_id": "0" * 32, "session": "s"}),
        ]
        for path, body in bodies:
            answer = client.post(path, json=body, headers=ADMIN)
            assert answer.status_code == 422, (path, answer.get_json())
        # the largest id that can exist is asked for like any other
        assert client.get(f"/api/bots/{LARGEST_KEY}").status_code == 404
        assert client.get(f"/api/bots/{ids['alpha']}").status_code == 200


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_nul_character_in_a_string_is_a_422(make_app, kind: str):
    """PostgreSQL can neither store nor compare a string holding NUL (it was a 500); no
    name, code or token has one, so the API refuses it as it refuses any bad field."""
    with _database(kind, make_app) as app:
        client = app.test_client()
        refused = [
            client.post("/api/events", json={"name": "a\x00b", "games": ["cactus"]}, headers=ADMIN),
            client.post(
                "/api/bots",
                json={"name": "b", "connect": True, "games": ["cactus"], "owner": "\x00"},
            ),
            client.post("/api/accounts/tokens", json={"name": "\x00", "password": "p"}),
            client.get("/api/bots?q=%00"),
            client.post(
                "/api/connect/poll",
                json={"bot_id": 1, "request_id": "0" * 32, "session": "s\x00"},
            ),
        ]
        for answer in refused:
            body = answer.get_json()
            assert answer.status_code == 422, body
            assert "NUL" in body["message"], body
        # the same text without it is judged as usual
        assert client.get("/api/bots?q=a").status_code == 200
        ok = client.post("/api/events", json={"name": "ab", "games": ["cactus"]}, headers=ADMIN)
        assert ok.status_code == 201, ok.get_json()


def test_the_document_bounds_every_id(app: Flask):
    """Every id the document takes, in a path, a query or a body, says it is 1 to
    ``MAX_ID``: a client (and schemathesis) can tell a valid id from the document."""
    spec = _spec(app)
    unbounded = []
    for path, method, op in _operations(spec):
        for parameter in op.get("parameters", []):
            name, schema = parameter["name"], parameter.get("schema", {})
            named_id = name == "id" or name.endswith("_id")
            if named_id and _unbounded(schema):
                unbounded.append(f"{method} {path} {parameter['in']} {name}")
        body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
        for name, schema in _properties(spec, body.get("schema", {})):
            if name.endswith("_ids"):
                schema = schema.get("items", {})
            if name.endswith(("_id", "_ids")) and _unbounded(schema):
                unbounded.append(f"{method} {path} body {name}")
    assert not unbounded
    assert MAX_ID == LARGEST_KEY  # the services' bound, the one the document shows


def _unbounded(schema: dict[str, Any]) -> bool:
    """An integer id without the bounds of an id (a string id, a game's, is not one)."""
    bounds = (schema.get("minimum"), schema.get("maximum"))
    return schema.get("type") == "integer" and bounds != (1, LARGEST_KEY)


def _properties(spec: dict[str, Any], schema: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every property of a request body's schema, nested ones too."""
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    for name, prop in schema.get("properties", {}).items():
        yield name, prop
        yield from _properties(spec, prop)
    if "items" in schema:
        yield from _properties(spec, schema["items"])


# -- datetimes --------------------------------------------------------------------------------
def test_datetimes_read_back_from_sqlite_carry_their_offset(app: Flask):
    """SQLite gives datetimes back without a zone; the answer says UTC all the same."""
    client = app.test_client()
    created = client.post(
        "/api/bots", json={"name": "b", "connect": True, "games": ["cactus"], "owner": "o"}
    ).get_json()
    one = client.get(f"/api/bots/{created['id']}").get_json()
    listed = client.get("/api/bots").get_json()[0]
    for row in (one, listed):
        for key in ("created_at", "updated_at"):
            assert row[key].endswith("+00:00"), row[key]


def test_every_datetime_field_of_the_api_writes_an_offset():
    """Every datetime field of every schema the API answers with (those added later
    too) writes a naive datetime as UTC, with its offset."""
    import arena.api  # noqa: F401  every API module, and so every schema, is loaded

    naive = ma.fields.DateTime().deserialize("2026-01-02T03:04:05")
    offenders = []
    for schema in _api_schemas():
        for name, field in schema().fields.items():
            # an AwareDateTime is read from requests (it wants the offset given)
            answers = not (field.load_only or isinstance(field, ma.fields.AwareDateTime))
            if isinstance(field, ma.fields.DateTime) and answers:
                written = field.serialize(name, {name: naive})
                if not written.endswith("+00:00"):
                    offenders.append(f"{schema.__module__}.{schema.__name__}.{name}")
    assert not offenders


def _api_schemas() -> Iterator[type[ma.Schema]]:
    seen: set[type[ma.Schema]] = set()
    stack = list(ma.Schema.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls not in seen and cls.__module__.startswith("arena.api"):
            seen.add(cls)
            yield cls


# -- the X-Pagination header ------------------------------------------------------------------
def test_x_pagination_is_documented_as_the_json_it_is(app: Flask):
    client = app.test_client()
    client.post("/api/bots", json={"name": "b", "connect": True, "games": ["cactus"], "owner": "o"})
    spec = _spec(app)
    answer = client.get("/api/bots?page_size=1")
    header = spec["paths"]["/api/bots"]["get"]["responses"]["200"]["headers"][
        PAGINATION_HEADER_NAME
    ]
    # OpenAPI: a header given as JSON text has a ``content``; a ``schema`` would mean the
    # "simple" style (total,1,page,1)
    assert "schema" not in header
    schema = header["content"]["application/json"]["schema"]
    resolved = {**schema, "components": spec["components"]}
    metadata = json.loads(answer.headers[PAGINATION_HEADER_NAME])
    jsonschema.validate(metadata, resolved)
    assert metadata["total"] == 1 and metadata["page"] == 1


# -- 405 --------------------------------------------------------------------------------------
def test_a_405_names_the_methods_each_route_allows(app: Flask):
    """A method a route does not take is a 405 naming those it does (``Allow``), before
    anything reads the request: not the 400 of a body nested too deeply, nor the pages'
    CSRF check, for a view that does not exist."""
    client = app.test_client()
    spec = _spec(app)
    too_deep = {"data": "[" * 64, "content_type": "application/json"}
    for path, item in spec["paths"].items():
        documented = {m.upper() for m in METHODS if m in item}
        url = _fill(path, item, 1)
        for method in sorted({m.upper() for m in METHODS} - documented):
            answer = client.open(url, method=method, headers=ADMIN, **too_deep)
            assert answer.status_code == 405, (method, path)
            allowed = {m.strip() for m in answer.headers.get("Allow", "").split(",")}
            assert allowed - {"HEAD", "OPTIONS"} == documented, (method, path, allowed)
            if path.startswith("/api/"):
                assert answer.get_json()["code"] == 405
    for page in ("/", "/bots"):  # the pages' forms are read only by their views
        answer = client.open(page, method="DELETE")
        assert answer.status_code == 405, page
        assert "GET" in answer.headers["Allow"]


# -- credentials before arguments -------------------------------------------------------------
def _with_arguments(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The operations that read a bearer token and take a body or a query."""
    for path, method, op in _operations(spec):
        reads_token = any("bearerAuth" in s for s in op.get("security", []))
        takes = "requestBody" in op or any(p["in"] == "query" for p in op.get("parameters", []))
        if reads_token and takes:
            yield path, method, op


def _bad_request(client: Any, path: str, method: str, op: dict[str, Any], **kwargs: Any) -> Any:
    """The operation with a body and a query no schema accepts."""
    url = _fill(path, op, 1) + "?not_an_argument=1"
    body = {"json": ["not", "an", "object"]} if "requestBody" in op else {}
    return client.open(url, method=method.upper(), **body, **kwargs)


def test_a_bad_token_is_a_401_whatever_the_arguments(make_app):
    """Who calls is judged first: a token that is no one's gets the 401 it gets with good
    arguments, not a 422 listing the fields."""
    app = make_app(organiser_token=ORGANISER, rate_limits=False)
    client = app.test_client()
    operations = list(_with_arguments(_spec(app)))
    assert len(operations) > 20
    for path, method, op in operations:
        answer = _bad_request(client, path, method, op, headers=auth("no-one's-token"))
        assert answer.status_code == 401, (method, path, answer.get_json())
        assert answer.headers["WWW-Authenticate"] == "Bearer"


def test_no_credential_is_refused_before_the_arguments_are_read(make_app):
    """An operation that needs a credential refuses a request without one as it would
    with good arguments (401, or 404 for what it may not know of), never with a 422."""
    app = make_app(organiser_token=ORGANISER, rate_limits=False, open_play=False)
    client = app.test_client()
    needs = [
        (path, method, op)
        for path, method, op in _with_arguments(_spec(app))
        if {"bearerAuth": []} in op["security"] and {} not in op["security"]
    ]
    assert len(needs) > 10
    for path, method, op in needs:
        answer = _bad_request(client, path, method, op)
        assert answer.status_code in (401, 403, 404), (method, path, answer.get_json())
    # with a credential, the same request is judged by its arguments
    answer = client.post("/api/events", json=["not", "an", "object"], headers=ADMIN)
    assert answer.status_code == 422, answer.get_json()
