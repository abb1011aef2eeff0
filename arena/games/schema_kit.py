"""The few JSON Schema (draft 2020-12) constructors every game's wire schema is built from.

A game describes what its bots receive and answer (``arena/games/<game>/schema.py``) with
these helpers, and :mod:`arena.games.schemas` assembles the documents.  Every helper
returns a new dict; every object they describe is closed (``additionalProperties:
false``), so a key the engine starts sending fails the tests until it is described, and
every property carries the ``description`` given here.

A piece used in many places (a card name, each event, each action) is written once, in
the game's definitions, and referred to with :func:`ref`: ``{"$ref": "#/$defs/card"}``.
:func:`arena.games.schemas.document` gives every schema it hands out the definitions it
refers to, so each one is complete on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Schema = dict[str, Any]
DEFS = "#/$defs/"  # where a reference points


def ref(name: str, description: str | None = None) -> Schema:
    """The definition ``name`` of the game's definitions, with what it means here."""
    schema: Schema = {"$ref": f"{DEFS}{name}"}
    if description is not None:
        schema["description"] = description
    return schema


def event_ref(kind: str) -> Schema:
    return ref(f"event_{kind}")


def action_ref(kind: str) -> Schema:
    return ref(f"action_{kind}")


def described(schema: Schema, description: str) -> Schema:
    """``schema`` with its description (a copy)."""
    return {**schema, "description": description}


def integer(description: str, minimum: int | None = None, maximum: int | None = None) -> Schema:
    schema: Schema = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def boolean(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def string(description: str, enum: Iterable[str] | None = None) -> Schema:
    schema: Schema = {"type": "string", "description": description}
    if enum is not None:
        schema["enum"] = list(enum)
    return schema


def const(value: Any, description: str) -> Schema:
    return {"const": value, "description": description}


def nullable(schema: Schema, description: str | None = None) -> Schema:
    """``schema`` or null; ``description`` (if given) says what null means."""
    out = dict(schema)
    kind = out.get("type")
    if kind is not None:
        out["type"] = [*kind, "null"] if isinstance(kind, list) else [kind, "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    if "const" in out:
        out["enum"] = [out.pop("const"), None]
    if kind is None and "enum" not in out:  # e.g. an anyOf: null as one more branch
        out = {"anyOf": [schema, {"type": "null"}]}
        if "description" in schema:
            out["description"] = schema["description"]
    if description is not None:
        out["description"] = description
    return out


def array(
    items: Schema,
    description: str,
    min_items: int | None = None,
    max_items: int | None = None,
    unique: bool = False,
) -> Schema:
    schema: Schema = {"type": "array", "description": description, "items": items}
    if min_items is not None:
        schema["minItems"] = min_items
    if max_items is not None:
        schema["maxItems"] = max_items
    if unique:
        schema["uniqueItems"] = True
    return schema


def obj(
    description: str,
    required: Mapping[str, Schema],
    optional: Mapping[str, Schema] | None = None,
    title: str | None = None,
) -> Schema:
    """A closed object: the ``required`` keys always present, the ``optional`` ones only
    where their description says, no other key."""
    schema: Schema = {}
    if title is not None:
        schema["title"] = title
    schema.update(
        type="object",
        description=description,
        properties={**required, **(optional or {})},
        required=list(required),
        additionalProperties=False,
    )
    return schema


def tagged(
    kind: str,
    description: str,
    fields: Mapping[str, Schema],
    optional: Mapping[str, Schema] | None = None,
) -> Schema:
    """An action or an event: a closed object whose ``type`` is ``kind``."""
    return obj(
        description,
        {"type": const(kind, f"Always {kind!r}."), **fields},
        optional,
        title=kind,
    )


def one_of_tagged(description: str, schemas: Mapping[str, Schema]) -> Schema:
    """One of the ``tagged`` schemas (or references to them), chosen by the value of
    ``type`` (each type is checked against its own schema only, so an error names the key
    at fault)."""
    return {
        "type": "object",
        "description": description,
        "required": ["type"],
        "properties": {"type": string("What kind of object this is.", schemas)},
        "allOf": [
            {"if": {"properties": {"type": {"const": kind}}}, "then": schema}
            for kind, schema in schemas.items()
        ],
    }


def pick(schemas: Mapping[str, Schema], kinds: Sequence[str]) -> dict[str, Schema]:
    """The entries of ``schemas`` named in ``kinds``, in that order."""
    return {kind: schemas[kind] for kind in kinds}
