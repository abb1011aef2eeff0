"""Each game's JSON Schemas (arena.games.schemas) are true of what bots really receive.

Random matches of every game, under each preset, each boolean option turned over, each
other value of every option with a fixed set of values, and 2 to 8 players where the game
allows them: every view of every request (and every final view) and every legal action is
valid against the game's schema, and every key, action type and event type the schema
describes is produced by some match (a schema that describes what the engine never sends
is as wrong as one that misses a key).  The schemas are not vacuous (an unknown key or a
wrong type is refused), the API serves them, ``docs/schemas`` holds them as the code
builds them, and each rules document's section "What your bot receives and answers" shows
a real request, checked as a golden fixture.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from arena.games import GAMES, get_game
from arena.games.base import Game, OptionsError
from arena.games.schemas import DOCUMENT_KEYS, document, example, main, pretty, stale_files

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "docs" / "schemas"
RULES = {
    "cactus": ROOT / "docs" / "rules" / "cactus.md",
    "cactus-game": ROOT / "docs" / "rules" / "cactus-game.md",
    "president": ROOT / "docs" / "rules" / "president.md",
}
SECTION = "## What your bot receives and answers"
GOLDEN = re.compile(r"<!-- golden: ([a-z_]+) -->\s*```json\n(.*?)```", re.S)
GAME_IDS = sorted(GAMES)
PLAYER_COUNTS = (2, 3, 4, 6, 8)
MAX_STEPS = 500  # a longer match is cut short (its views are checked all the same)
MORE_MATCHES = 60

# Matches kept short (a variant shows in its first rounds), unless the variant sets the key
SHORT: dict[str, dict[str, Any]] = {
    "cactus": {"rounds": 1, "max_rounds": 1},
    "cactus-game": {},
    "president": {"rounds": 2},
}
# Matches of the default options at each player count (more for a game with few options)
SEEDS_AT_EACH_COUNT = {"cactus-game": 4}
# How often a random player takes an action of these types when it may
RARE = {("cactus", "call"): 0.1}
# Options with no fixed set of values, and bundles for what is rare in random play: each
# (players, options), None players for the next count the rotation gives; a bundle with
# its own player count is one for something rare, played again while it is not seen
EXTRA: dict[str, list[tuple[int | None, dict[str, Any]]]] = {
    "cactus": [
        (None, {"decks": 3}),
        (None, {"penalty_cards": 0}),
        (None, {"penalty_cards": 4, "wrong_snap": "returns", "snap_after_miss": True}),
        (
            None,
            {
                "powers": {"6": "peek", "9": "peek_other", "Q": "blind_swap"},
                "eight_power": False,
                "passed_on_eight": False,
                "call": "any_time",
            },
        ),
        (None, {"scoring": "maximus", "maximus_target": 1, "max_rounds": 5}),
        (None, {"max_turns": 3}),
        (4, {"preset": "pagat", "max_rounds": 3}),  # powers used: what was seen, to whom
    ],
    "cactus-game": [
        (None, {"target": 1}),
        (None, {"target": 30, "max_turns": 60}),
        (None, {"max_turns": 1}),
    ],
    "president": [
        (None, {"target": 4}),
        (
            None,
            {
                "rounds": 4,
                "jokers": True,
                "joker_wild": True,
                "coup_d_etat": True,
                "guillotine": True,
            },
        ),
        (
            None,
            {
                "jokers": True,
                "no_finish_on_joker": True,
                "revolution": True,
                "revolution_lasts": True,
                "eight_clears": True,
            },
        ),
        (None, {"passe": True, "passe_breakers": True, "jokers": True}),
        (None, {"quitte_ou_double": True, "jokers": True, "joker_wild": True}),
        (None, {"menteur": True, "suites": True, "jokers": True, "joker_wild": True}),
        (None, {"suites": True, "deck": 32, "revolution": True, "no_finish_on_two": True}),
        (None, {"rapidite": True, "wizz": True, "jokers": True}),
        (None, {"rounds": 4, "putsch": True, "jeu_blanc": True, "later_lead": "after_dealer"}),
        (6, {"decks": 2, "jokers": True, "coup_d_etat": True, "guillotine": True}),
        # four of a kind in 17 cards, and more cards allowed on fewer: revolutions
        (3, {"rounds": 5, "revolution": True, "raise_count": True}),
        (8, {"rounds": 4, "jeu_blanc": True}),  # hands of 6 cards: some without a high card
    ],
}


# -- validators -----------------------------------------------------------------------------
_library_enum = jsonschema.Draft202012Validator.VALIDATORS["enum"]
_ENUM_SCALARS: dict[int, tuple[list[Any], frozenset[str | None]]] = {}


def _enum(validator: Any, enums: list[Any], instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's ``enum``, with a set lookup first for a string or null: the library
    compares the instance with each value in turn, most of this file's time (card names
    are enums of 52).  A string equals only an equal string, null only null: the answer
    is the same."""
    kind = type(instance)
    if kind is str or instance is None:
        known = _ENUM_SCALARS.get(id(enums))
        if known is None or known[0] is not enums:
            scalars = frozenset(e for e in enums if type(e) is str or e is None)
            known = _ENUM_SCALARS[id(enums)] = (enums, scalars)
        if instance in known[1]:
            return
    yield from _library_enum(validator, enums, instance, schema)


Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"enum": _enum})


OBJECT_KEYWORDS = {"type", "description", "properties", "required", "additionalProperties"}
ROOT_KEYWORDS = {"$schema", "title", "$defs"}


@dataclass
class Part:
    """A schema taken apart where it asks nothing but what the fields below check:

    - ``items``: a list, each item checked by that Part;
    - ``fields``: a closed object (``required`` keys, no other key), each value checked
      by its Part;
    - ``tagged``: an object whose ``type`` names the definition it must satisfy (what
      ``schema_kit.one_of_tagged`` builds: the allowed types and one ``if``/``then``
      rule per type);
    - else ``validator``, the compiled schema."""

    validator: Any = None
    items: Part | None = None
    fields: dict[str, Part] | None = None
    required: frozenset[str] = frozenset()
    tagged: dict[str, Any] | None = None


def _part(schema: dict[str, Any], defs: dict[str, Any], root: bool = False) -> Part:
    keywords = set(schema) - (ROOT_KEYWORDS if root else set())
    if schema.get("type") == "array" and keywords <= {"type", "description", "items"}:
        return Part(items=_part(schema["items"], defs))
    if (
        schema.get("type") == "object"
        and schema.get("additionalProperties") is False
        and keywords <= OBJECT_KEYWORDS
    ):
        fields = {key: _part(inner, defs) for key, inner in schema["properties"].items()}
        return Part(fields=fields, required=frozenset(schema.get("required", ())))
    if keywords == {"type", "description", "required", "properties", "allOf"}:
        by_type = {}
        for rule in schema["allOf"]:
            kind = rule["if"]["properties"]["type"]["const"]
            assert rule["if"] == {"properties": {"type": {"const": kind}}}, rule
            by_type[kind] = Validator({**defs, **rule["then"]})
        assert list(by_type) == schema["properties"]["type"]["enum"], schema
        assert (schema["type"], schema["required"]) == ("object", ["type"])
        return Part(tagged=by_type)
    return Part(validator=Validator({**defs, **schema}))


@dataclass
class Validators:
    """A game's compiled validators: the whole view, and the same schema taken apart.

    jsonschema spends some 3 microseconds per schema it descends into: a thousand views
    of eight layouts would take many seconds, though most of a view is what the previous
    one showed.  So the random matches check a view as its ``Part`` says, each distinct
    value once (the same JSON value is valid or not alike).  The final views are checked
    whole, so the parts and the whole are seen to agree."""

    view: Any
    parts: Part
    actions: dict[str, Any]


@functools.cache
def validators(game_id: str) -> Validators:
    doc = document(game_id)
    view = doc["view"]
    defs = {"$schema": view["$schema"], "$defs": view["$defs"]}
    parts = _part(view, defs, root=True)
    assert parts.fields is not None and parts.fields["events"].items.tagged is not None
    return Validators(
        Validator(view), parts, {kind: Validator(s) for kind, s in doc["actions"].items()}
    )


def _problems(validator: Any, value: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or 'the top'}: {e.message[:300]}"
        for e in validator.iter_errors(value)
    ]


# -- random matches -------------------------------------------------------------------------
@dataclass
class Report:
    """What the matches of one game produced: the problems, and what was seen."""

    matches: int = 0
    views: int = 0
    actions: int = 0
    problems: list[str] = field(default_factory=list)
    view_keys: set[str] = field(default_factory=set)
    nested_keys: set[str] = field(default_factory=set)
    event_types: set[str] = field(default_factory=set)
    action_types: set[str] = field(default_factory=set)
    phases: set[str] = field(default_factory=set)
    decisions: set[Any] = field(default_factory=set)


def option_variants(game: Game) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """(players or None, options): each preset; for every option with a fixed set of
    values (booleans, enums) each value but the default, with the companion option value
    it needs if refused alone; then the game's EXTRA bundles."""
    for preset in game.presets:
        yield None, {"preset": preset}
    changes: list[tuple[str, Any]] = []
    for entry in game.option_list():
        if entry["type"] == "boolean":
            changes.append((entry["name"], not entry["default"]))
        elif "enum" in entry:
            changes += [(entry["name"], v) for v in entry["enum"] if v != entry["default"]]
    for name, value in changes:
        for companion in [{}, *({k: v} for k, v in changes if k != name)]:
            options = {name: value, **companion}
            try:
                game.resolve_options(options)
            except OptionsError:
                continue
            yield None, options
            break
        else:
            raise AssertionError(f"{game.id} option {name}={value!r} is refused in any company")
    yield from EXTRA[game.id]


def configurations(game: Game) -> list[tuple[int, int, dict[str, Any]]]:
    """(players, seed, options): every variant at its player count or else one of the
    game's (a different one from variant to variant, the next that the variant allows),
    the defaults at each count, the EXTRA bundles last."""
    counts = [n for n in PLAYER_COUNTS if game.min_players <= n <= game.max_players]
    counts += [n for n in range(game.min_players, game.max_players + 1) if n not in counts]
    out = []
    for i, (players, variant) in enumerate(option_variants(game)):
        options = {**{k: v for k, v in SHORT[game.id].items() if k not in variant}, **variant}
        if "target" in variant:  # a match played to a target has no fixed rounds
            options.pop("rounds", None)
        rotated = counts[i % len(counts) :] + counts[: i % len(counts)]
        for n in [players] if players is not None else rotated:
            try:
                game.new_state(n, 0, options)
            except OptionsError:
                continue
            out.append((n, i, options))
            break
        else:
            raise AssertionError(f"{game.id} {options} is refused at every player count")
    extra = out[-len(EXTRA[game.id]) :]
    defaults = [
        (n, 100 * seed + n, dict(SHORT[game.id]))
        for seed in range(1, SEEDS_AT_EACH_COUNT.get(game.id, 1) + 1)
        for n in counts
    ]
    return out[: -len(extra)] + defaults + extra


def check_match(
    game: Game, n: int, seed: int, options: dict[str, Any], report: Report, seen: set[str]
) -> None:
    """Play one random match, checking every view and legal action on the way.  ``seen``:
    what was already checked (JSON text: the same value is valid or not alike)."""
    check = validators(game.id)
    where = f"{game.id} {n} players seed {seed} {options}"
    state = game.new_state(n, seed, options)
    chooser = random.Random(seed)

    def check_once(validator: Any, value: Any, what: str) -> None:
        kind = type(value)
        if kind is dict or kind is list:
            text = f"{what} {json.dumps(value)}"
        else:  # a scalar: its type and value say the same, faster
            text = f"{what} {kind.__name__} {value!r}"
        if text not in seen:
            seen.add(text)
            for problem in _problems(validator, value):
                report.problems.append(f"{where}: {what} {value!r:.300}: {problem}")

    def check_part(part: Part, value: Any, what: str) -> None:
        if part.validator is not None:
            check_once(part.validator, value, what)
        elif part.items is not None:
            if type(value) is not list:
                report.problems.append(f"{where}: {what} is not a list: {value!r:.300}")
                return
            for item in value:
                check_part(part.items, item, f"{what}[]")
        elif part.fields is not None:
            if type(value) is not dict:
                report.problems.append(f"{where}: {what} is not an object: {value!r:.300}")
                return
            unknown, missing = set(value) - set(part.fields), part.required - set(value)
            if unknown or missing:
                report.problems.append(f"{where}: {what} has {unknown=} and {missing=}")
            for key, inner in value.items():
                if key in part.fields:
                    check_part(part.fields[key], inner, f"{what}.{key}")
        else:
            assert part.tagged is not None
            kind = value.get("type") if type(value) is dict else None
            if what == "view.events[]":
                report.event_types.add(kind)
            if kind not in part.tagged:
                report.problems.append(f"{where}: {what}: no schema for {value!r:.300}")
            else:
                check_once(part.tagged[kind], value, f"{what} {kind}")

    def check_view(seat: int, whole: bool = False) -> None:
        view = game.view(state, seat)
        report.views += 1
        report.view_keys.update(view)
        report.phases.add(view.get("phase"))
        report.decisions.add(view.get("decision"))
        for key, value in view.items():
            if isinstance(value, dict):
                report.nested_keys.update(f"{key}.{inner}" for inner in value)
        if whole:
            for problem in _problems(check.view, view):
                report.problems.append(f"{where}: seat {seat} final view: {problem}")
        check_part(check.parts, view, "view")

    for _ in range(MAX_STEPS):
        if game.outcome(state) is not None:
            for seat in range(n):  # the final views, sent with /end
                check_view(seat, whole=True)
            break
        requests = game.pending(state)
        for request in requests:
            check_view(request.seat)
            for action in request.legal_actions:
                report.actions += 1
                kind = action.get("type")
                report.action_types.add(kind)
                if kind not in check.actions:
                    report.problems.append(f"{where}: action type {kind!r} has no schema")
                else:
                    check_once(check.actions[kind], action, "action")
        answers = {r.seat: _choose(chooser, r.legal_actions, game.id) for r in requests}
        game.apply(state, answers)
    report.matches += 1


def _choose(rng: random.Random, legal: list[dict[str, Any]], game_id: str) -> dict[str, Any]:
    """A random action of a random type, half the time the one with the most cards: a
    pass in a snap window is as likely as any snap, and four of a kind goes down as often
    as not, so that what follows them (a passed-on 8, a revolution) is seen too.  Some
    types are kept RARE: a player who calls "cactus" whenever asked ends every round in
    two turns."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for action in legal:
        by_type.setdefault(action["type"], []).append(action)
    kind = rng.choice(list(by_type))
    rare = RARE.get((game_id, kind))
    if rare is not None and len(by_type) > 1 and rng.random() > rare:
        kind = rng.choice([k for k in by_type if k != kind])
    if rng.random() < 0.5:
        return max(by_type[kind], key=lambda action: action.get("count", 0))
    return rng.choice(by_type[kind])


def unseen(game_id: str, report: Report) -> set[str]:
    """What the game's schemas describe that the matches of ``report`` never produced: a
    view key, a key of an object of the view, an action type, an event type, a phase."""
    doc = document(game_id)
    view = doc["view"]
    described = {f"view key {key}" for key in view["properties"]}
    for key, schema in view["properties"].items():
        described |= {f"view key {key}.{inner}" for inner in schema.get("properties", {})}
    described |= {f"action {kind}" for kind in doc["actions"]}
    described |= {f"event {name[6:]}" for name in view["$defs"] if name.startswith("event_")}
    described |= {f"phase {phase}" for phase in view["properties"]["phase"]["enum"]}
    produced = {f"view key {key}" for key in report.view_keys | report.nested_keys}
    produced |= {f"action {kind}" for kind in report.action_types}
    produced |= {f"event {kind}" for kind in report.event_types}
    produced |= {f"phase {phase}" for phase in report.phases}
    return described - produced


@functools.cache
def played(game_id: str) -> Report:
    """Every configuration once, then more seeds of the EXTRA bundles for what is rare in
    turn while something the schemas describe was never produced (at most MORE_MATCHES)."""
    game = get_game(game_id)
    report = Report()
    seen: set[str] = set()
    configs = configurations(game)
    for n, seed, options in configs:
        check_match(game, n, seed, options, report, seen)
    # the bundles for what is rare: those of EXTRA at a player count of their own
    extra = configs[-len(EXTRA[game_id]) :]
    rare = [c for c, (players, _) in zip(extra, EXTRA[game_id], strict=True) if players] or extra
    for i in range(MORE_MATCHES):
        if not unseen(game_id, report):
            break
        n, seed, options = rare[i % len(rare)]
        check_match(game, n, 1000 + i, options, report, seen)
    return report


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_random_views_and_legal_actions_are_valid(game_id: str) -> None:
    report = played(game_id)
    first = "\n".join(report.problems[:15])
    assert not report.problems, f"{len(report.problems)} problems, the first ones:\n{first}"
    assert report.matches >= 10 and report.views >= 1000, (report.matches, report.views)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_described_key_action_event_and_phase_is_produced(game_id: str) -> None:
    report = played(game_id)
    assert not unseen(game_id, report), f"described, never produced in {report.matches} matches"
    decisions = document(game_id)["view"]["properties"].get("decision")
    if decisions is not None:
        assert set(decisions["enum"]) == report.decisions


# -- the schemas themselves -----------------------------------------------------------------
def _walk(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _walk(value, f"{path}/{index}")


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_schemas_are_draft_2020_12_closed_and_described(game_id: str) -> None:
    doc = document(game_id)
    assert tuple(doc) == DOCUMENT_KEYS
    assert (doc["game"], doc["title"]) == (game_id, GAMES[game_id].title)
    roots = {"view": doc["view"], "act_request": doc["act_request"]}
    roots.update({f"actions/{kind}": s for kind, s in doc["actions"].items()})
    for name, root in roots.items():
        assert root["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        jsonschema.Draft202012Validator.check_schema(root)
        for path, schema in _walk(root):
            steps = path.split("/")
            if steps[-1] in ("properties", "$defs") or "if" in steps or "properties" not in schema:
                continue  # maps of names to schemas, the test of a type, not objects
            if "allOf" in schema:  # a choice by "type": each branch a closed definition
                assert all(set(rule["then"]) == {"$ref"} for rule in schema["allOf"]), path
            else:
                assert schema.get("additionalProperties") is False, f"{name}{path} is open"
            for key, inner in schema["properties"].items():
                assert inner.get("description"), f"{name}{path}/{key} has no description"
    for kind, schema in doc["actions"].items():
        branches = schema.get("oneOf", [schema])
        assert {branch["properties"]["type"]["const"] for branch in branches} == {kind}


def _example_view(game_id: str) -> dict[str, Any]:
    return example(game_id)["view"]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_view_schema_refuses_unknown_keys_missing_keys_and_wrong_types(game_id: str) -> None:
    check = validators(game_id)
    view = _example_view(game_id)
    assert check.view.is_valid(view)
    assert not check.view.is_valid({**view, "shiny_new_key": 1})
    for key, value in view.items():
        without = {k: v for k, v in view.items() if k != key}
        assert not check.view.is_valid(without), f"{key} may be missing"
        for wrong in ({"unexpected": True}, "no such value", 1.5, True, [{"unexpected": True}]):
            if type(wrong) is not type(value):
                assert not check.view.is_valid({**view, key: wrong}), f"{key} may be {wrong!r}"
        if isinstance(value, dict):  # an object of the view is closed too
            bad = {**view, key: {**value, "shiny_new_key": 1}}
            assert not check.view.is_valid(bad), f"{key} may have any key"
    # deeper: an event with an unknown type, an extra key, no type
    events = check.parts.fields["events"].items.tagged
    event = copy.deepcopy(view["events"][0])
    assert events[event["type"]].is_valid(event)
    assert not events[event["type"]].is_valid({**event, "extra": 1})
    no_type = {k: v for k, v in event.items() if k != "type"}
    for bad in ({**event, "type": "no_such_event"}, {**event, "extra": 1}, no_type):
        assert not check.view.is_valid({**view, "events": [*view["events"], bad]})


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_action_schemas_refuse_what_is_not_an_action(game_id: str) -> None:
    check = validators(game_id)
    for action in example(game_id)["legal_actions"]:
        kind = check.actions[action["type"]]
        assert kind.is_valid(action)
        assert not kind.is_valid({**action, "extra": 1})
        assert not kind.is_valid({**action, "type": "no_such_action"})
        for key in action:
            assert not kind.is_valid({k: v for k, v in action.items() if k != key}), key
            assert not kind.is_valid({**action, key: {"unexpected": True}}), key


def test_the_protocol_documents_examples_are_valid_cactus_requests() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text()
    examples = {name: json.loads(body) for name, body in GOLDEN.findall(text)}
    request = jsonschema.Draft202012Validator(document("cactus")["act_request"])
    for name in ("act", "act_snap"):
        assert _problems(request, examples[name]) == [], name
    assert validators("cactus").view.is_valid(examples["end"]["view"])


# -- the API, the shipped files, the rules documents ------------------------------------------
def test_the_api_serves_each_games_schemas(client) -> None:
    for game_id in GAME_IDS:
        response = client.get(f"/api/games/{game_id}/schema")
        assert response.status_code == 200
        assert response.get_json() == json.loads(json.dumps(document(game_id)))
    response = client.get("/api/games/poker/schema")
    assert response.status_code == 404
    message = response.get_json()["message"]
    assert "poker" in message and "president" in message
    spec = client.get("/api/openapi.json").get_json()
    operation = spec["paths"]["/api/games/{game_id}/schema"]["get"]
    assert {"200", "404"} <= set(operation["responses"])


def test_docs_schemas_are_what_the_code_builds(tmp_path: Path) -> None:
    stale = stale_files(SCHEMA_DIR)
    assert not stale, (
        f"{', '.join(p.name for p in stale)} out of date: "
        "python -m arena.games.schemas --write docs/schemas"
    )
    assert sorted(p.stem for p in SCHEMA_DIR.glob("*.json")) == GAME_IDS
    # the script writes what the check expects, and the check sees a stale file
    lines: list[str] = []
    assert main(["--write", str(tmp_path)], out=lines.append) == 0
    assert main(["--check", str(tmp_path)], out=lines.append) == 0
    (tmp_path / "cactus.json").write_text("{}\n")
    assert main(["--check", str(tmp_path)], out=lines.append) == 1
    assert "cactus.json" in lines[-1]


def _section(game_id: str) -> str:
    text = RULES[game_id].read_text()
    assert SECTION in text, f"{RULES[game_id].name} has no section {SECTION!r}"
    section = text[text.index(SECTION) :]
    end = section.find("\n## ", len(SECTION))  # up to the next section, if any
    return section if end < 0 else section[:end]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_each_rules_document_shows_a_real_request(game_id: str) -> None:
    section = _section(game_id)
    shown = {name: json.loads(body) for name, body in GOLDEN.findall(section)}
    assert set(shown) == {"view", "legal_actions", "answer"}
    real = example(game_id)
    for name in ("view", "legal_actions", "answer"):
        assert shown[name] == real[name], (
            f"docs/rules/{RULES[game_id].name} example {name!r} is out of date; "
            f"python -m arena.games.schemas --example {game_id} prints it:\n{pretty(real[name])}"
        )
    assert shown["answer"]["action"] in shown["legal_actions"]
    # every key of the view is explained, and every action type named
    doc = document(game_id)
    for key in doc["view"]["properties"]:
        assert f"`{key}`" in section, f"the section does not explain the view key {key!r}"
    for kind in doc["actions"]:
        assert f"`{kind}`" in section, f"the section does not name the action {kind!r}"
