"""Every game option is described and discoverable: each option and preset has its
description, the JSON Schema ``arena.games.options.json_schema`` builds agrees with the
game's ``resolve_options`` (what the schema accepts goes, in some company; what it refuses
is refused), the API serves it (``GET /api/games``, ``GET /api/games/<id>``) and the
tournament form embeds it."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema
import pytest

from arena.games import GAMES
from arena.games.base import Game, OptionsError
from arena.games.options import JSON_SCHEMA_DIALECT, MAX_INT_OPTION, describe, json_schema, option
from tests.support.api import error, register_many, tournament_body

GAME_IDS = sorted(GAMES)


# -- the schema of each field type ----------------------------------------------------------
@dataclass(frozen=True)
class Demo:
    mode: Literal["a", "b"] = option("a", doc="The mode.")
    count: int = option(3, minimum=1, doc="How many.")
    flag: bool = option(False, doc="A flag.")
    cap: int | None = option(None, choices=(1, 2), doc="A cap.")
    label: str = option("x", doc="A label.")
    table: dict[str, int] = option(factory=dict, keys=("k", "l"), doc="A table.")  # noqa: RUF009
    names: dict[str, str] = option(factory=lambda: {"k": "v"}, doc="Names.")  # noqa: RUF009
    plain: bool = False  # declared without option(): no description


def test_each_field_type_has_its_schema() -> None:
    schema = json_schema(Demo, {"fast": {"count": 1}}, {"fast": "Quick."}, title="Demo options")
    jsonschema.Draft202012Validator.check_schema(schema)
    assert (
        schema["$schema"] == JSON_SCHEMA_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    )
    assert (schema["title"], schema["type"], schema["additionalProperties"]) == (
        "Demo options",
        "object",
        False,
    )
    props = schema["properties"]
    assert props["mode"] == {
        "type": "string",
        "enum": ["a", "b"],
        "default": "a",
        "description": "The mode.",
    }
    assert props["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_INT_OPTION,
        "default": 3,
        "description": "How many.",
    }
    assert props["flag"] == {"type": "boolean", "default": False, "description": "A flag."}
    assert props["cap"] == {
        "type": ["integer", "null"],
        "enum": [1, 2, None],
        "default": None,
        "description": "A cap.",
    }
    assert props["label"] == {"type": "string", "default": "x", "description": "A label."}
    assert props["table"] == {
        "type": "object",
        "additionalProperties": {
            "type": "integer",
            "minimum": -MAX_INT_OPTION,
            "maximum": MAX_INT_OPTION,
        },
        "propertyNames": {"enum": ["k", "l"]},
        "default": {},
        "description": "A table.",
    }
    assert props["names"]["additionalProperties"] == {"type": "string"}
    assert props["names"]["default"] == {"k": "v"}
    assert props["plain"]["description"] == ""  # what the games' tests forbid
    assert props["preset"] == {
        "type": ["string", "null"],
        "enum": ["fast", None],
        "description": "Option values to start from (the options given override them). "
        "fast: Quick.",
    }


def test_the_schema_is_a_pure_function_of_its_arguments() -> None:
    first, second = json_schema(Demo), json_schema(Demo)
    assert first == second and first is not second
    first["properties"]["names"]["default"]["k"] = "changed"  # a caller's copy
    assert json_schema(Demo) == second
    assert json_schema(Demo, defaults={"count": 7})["properties"]["count"]["default"] == 7
    assert json_schema(Demo)["properties"]["preset"]["enum"] == [None]  # no presets


def test_describe_flattens_the_schema_for_a_form() -> None:
    entries = {entry["name"]: entry for entry in describe(Demo)}
    assert list(entries) == [f.name for f in dataclasses.fields(Demo)]
    assert entries["cap"] == {
        "name": "cap",
        "type": "integer",
        "default": None,
        "nullable": True,
        "description": "A cap.",
        "enum": [1, 2],
    }
    assert (entries["count"]["minimum"], entries["count"]["maximum"]) == (1, MAX_INT_OPTION)
    assert entries["table"]["allowed_keys"] == ["k", "l"]
    assert "allowed_keys" not in entries["names"]
    assert entries["mode"]["enum"] == ["a", "b"] and not entries["mode"]["nullable"]


# -- every game: descriptions ----------------------------------------------------------------
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_option_and_preset_is_described(game_id: str) -> None:
    game = GAMES[game_id]
    missing = [o["name"] for o in game.option_list() if not o["description"].strip()]
    assert missing == [], f"{game_id}: declare these options with opts.option(..., doc=...)"
    assert set(game.preset_docs) == set(game.presets), f"{game_id}: preset_docs, one per preset"
    assert all(doc.strip() for doc in game.preset_docs.values())
    for entry in game.option_list():  # one line each, as a form shows it
        assert "\n" not in entry["description"] and len(entry["description"]) <= 200


# -- every game: the schema agrees with resolve_options ---------------------------------------
def kinds(prop: dict[str, Any]) -> list[str]:
    return prop["type"] if isinstance(prop["type"], list) else [prop["type"]]


def accepted_values(prop: dict[str, Any]) -> list[Any]:
    """Values the schema accepts for one option: each enum value, both booleans, the bounds
    of a number and one between, null where allowed, and for an object the empty one and
    one entry per allowed key and value."""
    if "enum" in prop:
        return list(prop["enum"])
    values: list[Any] = []
    types = kinds(prop)
    if "boolean" in types:
        values += [True, False]
    if "integer" in types:
        low, high = prop["minimum"], prop["maximum"]
        values += sorted({low, min(low + 1, high), high})
    if "string" in types:
        values += ["", "x"]
    if "object" in types:
        keys = prop.get("propertyNames", {}).get("enum", ["k"])
        inner = accepted_values(prop["additionalProperties"])
        values += [{}, *({key: inner[0]} for key in keys), *({keys[0]: v} for v in inner)]
    if "null" in types:
        values.append(None)
    return values


WRONG_TYPES = {
    "boolean": True,
    "integer": 7,
    "number": 1.5,
    "string": "7",
    "array": [7],
    "object": {},
    "null": None,
}


def refused_values(prop: dict[str, Any]) -> list[Any]:
    """Values the schema refuses for one option: each other JSON type, a value of the right
    type out of the enum or the bounds, and for an object an unknown key or a bad value."""
    types = kinds(prop)
    values = [v for kind, v in WRONG_TYPES.items() if kind not in types]
    if "enum" in prop:
        values.append("nope" if "string" in types else max(v for v in prop["enum"] if v) + 1)
    elif "integer" in types:
        values += [prop["minimum"] - 1, prop["maximum"] + 1]
    if "object" in types:
        keys = prop.get("propertyNames", {}).get("enum")
        good = accepted_values(prop["additionalProperties"])[0]
        if keys:
            values.append({"no-such-key": good})
        key = keys[0] if keys else "k"
        values += [{key: bad} for bad in refused_values(prop["additionalProperties"])]
    return values


def resolve_or_error(game: Game, options: dict[str, Any]) -> OptionsError | None:
    try:
        game.resolve_options(options)
    except OptionsError as exc:
        return exc
    return None


def accepted_in_some_company(game: Game, name: str, value: Any, samples: dict) -> None:
    """``resolve_options`` takes ``{name: value}`` alone, or with one or two other options
    set to values the schema accepts: a sub-option needs its option, and contradictions are
    the game's own check, which the schema does not express."""
    others = [(other, v) for other, values in samples.items() if other != name for v in values]
    refused = resolve_or_error(game, {name: value})
    for size in (1, 2):
        if refused is None:
            break
        for company in itertools.combinations(others, size):
            distinct = len({other for other, _ in company}) == size
            if distinct and resolve_or_error(game, {name: value, **dict(company)}) is None:
                return
    assert refused is None, f"{game.id} {name}={value!r}: in the schema, refused: {refused}"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_schema_is_valid_and_holds_the_defaults_and_the_presets(game_id: str) -> None:
    game = GAMES[game_id]
    schema = game.options_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    defaults = game.default_options()
    props = {name: p for name, p in schema["properties"].items() if name != "preset"}
    assert {name: p["default"] for name, p in props.items()} == defaults
    assert [o["name"] for o in game.option_list()] == list(props)
    validator.validate(defaults)
    assert schema["properties"]["preset"]["enum"] == [*game.presets, None]
    for name, values in game.presets.items():
        validator.validate({"preset": name, **values})
        validator.validate(game.options_json(game.resolve_options({"preset": name})))
        assert game.preset_docs[name] in schema["properties"]["preset"]["description"]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_what_the_schema_accepts_resolve_options_accepts(game_id: str) -> None:
    game = GAMES[game_id]
    schema = game.options_schema()
    validator = jsonschema.Draft202012Validator(schema)
    props = {name: p for name, p in schema["properties"].items() if name != "preset"}
    samples = {name: accepted_values(prop) for name, prop in props.items()}
    for name, values in samples.items():
        assert values, name
        for value in values:
            assert validator.is_valid({name: value}), (name, value)
            accepted_in_some_company(game, name, value, samples)
    for preset in schema["properties"]["preset"]["enum"]:
        assert validator.is_valid({"preset": preset})
        assert resolve_or_error(game, {"preset": preset}) is None


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_what_the_schema_refuses_resolve_options_refuses(game_id: str) -> None:
    game = GAMES[game_id]
    schema = game.options_schema()
    validator = jsonschema.Draft202012Validator(schema)
    props = {name: p for name, p in schema["properties"].items() if name != "preset"}
    refused = [({name: v}) for name, prop in props.items() for v in refused_values(prop)]
    refused += [{"no_such_option": True}, {"preset": "no-such-preset"}, {"preset": 3}]
    for options in refused:
        assert not validator.is_valid(options), options
        assert resolve_or_error(game, options) is not None, f"{game_id} took {options}"


# -- the API -----------------------------------------------------------------------------------
def test_the_games_list_keeps_its_fields_and_gains_the_options(client) -> None:
    games = {g["id"]: g for g in client.get("/api/games").get_json()}
    assert set(games) == set(GAMES)
    for game_id, game in GAMES.items():
        body = games[game_id]
        assert (body["title"], body["min_players"], body["max_players"]) == (
            game.title,
            game.min_players,
            game.max_players,
        )
        assert body["presets"] == {name: dict(values) for name, values in game.presets.items()}
        assert body["default_options"] == game.default_options()
        assert body["options"] == game.option_list()
        assert body["options_schema"] == game.options_schema()


def test_one_game_with_its_options_and_described_presets(client) -> None:
    for game_id, game in GAMES.items():
        body = client.get(f"/api/games/{game_id}").get_json()
        assert body["id"] == game_id and body["options"] == game.option_list()
        assert body["options_schema"] == game.options_schema()
        assert body["default_options"] == game.default_options()
        assert body["presets"] == game.preset_list()
    cactus = client.get("/api/games/cactus").get_json()
    assert (cactus["title"], cactus["min_players"], cactus["max_players"]) == ("Cactus", 2, 8)
    pagat = {p["name"]: p for p in cactus["presets"]}["pagat"]
    assert pagat["description"].startswith("Vancouver rules")
    assert pagat["options"]["scoring"] == "penalty"
    options = {o["name"]: o for o in cactus["options"]}
    assert options["scoring"]["enum"] == ["wins", "tas_de_merde", "maximus", "penalty"]
    assert options["decks"] == {
        "name": "decks",
        "type": "integer",
        "default": None,
        "nullable": True,
        "description": GAMES["cactus"].option_list()[0]["description"],
        "minimum": 1,
        "maximum": 3,
    }
    assert options["powers"]["type"] == "object" and "A" in options["powers"]["allowed_keys"]
    assert "enum" not in options["eight_power"]


def test_an_unknown_game_is_a_404_that_names_the_games(client) -> None:
    error(client.get("/api/games/poker"), 404, "unknown game 'poker'", "cactus", "president")


def test_the_openapi_document_describes_the_game_endpoints(client) -> None:
    spec = client.get("/api/openapi.json").get_json()
    operation = spec["paths"]["/api/games/{game_id}"]["get"]
    assert {"200", "404"} <= set(operation["responses"])
    assert operation["summary"].startswith("One game and its options")
    schemas = spec["components"]["schemas"]
    assert {"Game", "GameDetail", "Option", "Preset"} <= set(schemas)
    assert {"options", "options_schema", "presets", "default_options"} <= set(
        schemas["GameDetail"]["properties"]
    )
    assert schemas["Game"]["properties"]["presets"]["type"] == "object"
    assert schemas["GameDetail"]["properties"]["presets"]["type"] == "array"


def test_a_tournament_takes_what_the_schema_offers_and_the_game_judges_the_rest(
    client, info_bot
) -> None:
    ids = register_many(client, info_bot(games=["president"]), 3)
    body = tournament_body(ids, game="president", seats_per_match=3, games_per_pairing=3)
    created = client.post("/api/tournaments", json={**body, "options": {"revolution": True}})
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["options"]["revolution"] is True
    # in the schema, but a sub-option alone: the game's own check says why
    alone = client.post("/api/tournaments", json={**body, "options": {"revolution_lasts": True}})
    error(alone, 400, "'revolution_lasts' refines 'revolution'")


# -- the tournament form ------------------------------------------------------------------------
def test_the_tournament_form_embeds_every_games_options(client) -> None:
    page = client.get("/tournaments/new").get_data(as_text=True)
    found = re.search(r'<script type="application/json" id="game-options">(.*?)</script>', page)
    assert found is not None
    embedded = json.loads(found.group(1))
    assert set(embedded) == set(GAMES)
    for game_id, game in GAMES.items():
        assert embedded[game_id]["options"] == game.option_list()
        assert embedded[game_id]["defaults"] == game.default_options()
        assert [p["name"] for p in embedded[game_id]["presets"]] == list(game.presets)
        for preset in embedded[game_id]["presets"]:
            assert preset["description"] == game.preset_docs[preset["name"]]
            resolved = game.resolve_options({"preset": preset["name"]})
            assert preset["values"] == game.options_json(resolved)
