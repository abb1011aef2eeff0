"""Options of a game as a frozen dataclass, filled from JSON with clear errors.

A game declares its options as a dataclass whose field types are among: ``bool``, ``int``,
``str``, a ``Literal[...]`` of strings, ``int | None``, ``dict[str, int]`` and
``dict[str, str]``.  Presets are plain option bundles; any option can be overridden.

Each field is declared with :func:`option`, which keeps the option's one-line description
(and the bounds the game's own check enforces) next to it: :func:`json_schema` and
:func:`describe` turn them into what the API documents and the tournament form shows.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, get_args, get_origin

from arena.games.base import OptionsError

T = TypeVar("T")

MAX_INT_OPTION = 10_000


def _check_value(game_id: str, name: str, hint: Any, value: Any) -> Any:
    where = f"{game_id} option {name!r}"
    origin = get_origin(hint)
    if hint is bool:
        if not isinstance(value, bool):
            raise OptionsError(f"{where} must be true or false, not {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionsError(f"{where} must be a whole number, not {value!r}")
        if not -MAX_INT_OPTION <= value <= MAX_INT_OPTION:
            raise OptionsError(f"{where} is out of range: {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise OptionsError(f"{where} must be a string, not {value!r}")
        return value
    if origin is Literal:
        choices = get_args(hint)
        if value not in choices or not isinstance(value, str):
            raise OptionsError(
                f"{where} must be one of {', '.join(map(str, choices))}; got {value!r}"
            )
        return value
    if origin in (types.UnionType, typing.Union):
        args = [a for a in get_args(hint) if a is not type(None)]
        if value is None:
            return None
        return _check_value(game_id, name, args[0], value)
    if origin is dict:
        key_type, value_type = get_args(hint)
        if not isinstance(value, Mapping):
            raise OptionsError(f"{where} must be an object, not {value!r}")
        return {
            _check_value(game_id, f"{name}.{k}", key_type, k): _check_value(
                game_id, f"{name}.{k}", value_type, v
            )
            for k, v in value.items()
        }
    raise TypeError(f"unsupported option type {hint!r} for {where}")  # a game's own bug


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The options' field types, evaluated once per class (not once per match)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in typing.get_type_hints(cls).items() if k in names}


def resolve(
    cls: type[T],
    game_id: str,
    presets: Mapping[str, Mapping[str, Any]],
    raw: Mapping[str, Any] | None,
    default_preset: str | None = None,
) -> T:
    """``raw`` may name a ``preset``; its other keys override the preset's values."""
    raw = dict(raw or {})
    if not isinstance(raw, dict):
        raise OptionsError(f"{game_id} options must be an object")
    preset = raw.pop("preset", default_preset)
    values: dict[str, Any] = {}
    if preset is not None:
        if preset not in presets:
            known = ", ".join(presets) or "none"
            raise OptionsError(f"{game_id} has no preset {preset!r}; presets: {known}")
        values.update(presets[preset])
    values.update(raw)
    hints = _hints(cls)
    fields = set(hints)
    unknown = sorted(set(values) - fields)
    if unknown:
        raise OptionsError(
            f"unknown {game_id} option(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}"
        )
    checked = {name: _check_value(game_id, name, hints[name], v) for name, v in values.items()}
    return cls(**checked)


def to_json(options: Any) -> dict[str, Any]:
    return {
        f.name: (dict(v) if isinstance(v := getattr(options, f.name), dict) else v)
        for f in dataclasses.fields(options)
    }


# -- declaring options and describing them ------------------------------------------------
DOC = "doc"  # the metadata key of an option's description
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def option(
    default: Any = dataclasses.MISSING,
    *,
    doc: str,
    factory: Callable[[], Any] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    choices: Sequence[int | str] | None = None,
    keys: Sequence[str] | None = None,
) -> Any:
    """An option's dataclass field: its default (or ``factory``), its one-line
    description ``doc`` (what the API and the tournament form show), and what the game's
    own check accepts beyond the field's type, so that the schema can announce it:
    ``minimum`` and ``maximum`` of a number (of a dict's values), ``choices`` of a number
    (of a dict's values), ``keys`` of a dict.  The game still checks those itself; a test
    checks that the schema and the check agree."""
    bounds = {"minimum": minimum, "maximum": maximum, "choices": choices, "keys": keys}
    metadata = {DOC: doc, **{k: v for k, v in bounds.items() if v is not None}}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _value_schema(hint: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema of one value of type ``hint``, narrowed by the field's bounds."""
    origin = get_origin(hint)
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        if "choices" in meta:
            return {"type": "integer", "enum": list(meta["choices"])}
        return {
            "type": "integer",
            "minimum": meta.get("minimum", -MAX_INT_OPTION),
            "maximum": meta.get("maximum", MAX_INT_OPTION),
        }
    if hint is str:
        if "choices" in meta:
            return {"type": "string", "enum": list(meta["choices"])}
        return {"type": "string"}
    if origin is Literal:
        return {"type": "string", "enum": list(get_args(hint))}
    if origin in (types.UnionType, typing.Union):
        (inner,) = [a for a in get_args(hint) if a is not type(None)]
        schema = _value_schema(inner, meta)
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if origin is dict:
        _, value_type = get_args(hint)
        value_meta = {k: v for k, v in meta.items() if k != "keys"}
        schema = {"type": "object", "additionalProperties": _value_schema(value_type, value_meta)}
        if "keys" in meta:
            schema["propertyNames"] = {"enum": list(meta["keys"])}
        return schema
    raise TypeError(f"unsupported option type {hint!r}")  # a game's own bug


def _default(f: dataclasses.Field[Any]) -> Any:
    value = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
    return dict(value) if isinstance(value, dict) else value


def _properties(cls: type, defaults: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Each option's schema, in declaration order: type, bounds, default, description."""
    hints = _hints(cls)
    properties = {}
    for f in dataclasses.fields(cls):
        schema = _value_schema(hints[f.name], f.metadata)
        default = defaults[f.name] if defaults and f.name in defaults else _default(f)
        schema["default"] = dict(default) if isinstance(default, dict) else default
        # no description is an empty one: the games' tests require every option to have one
        schema["description"] = f.metadata.get(DOC, "")
        properties[f.name] = schema
    return properties


def json_schema(
    cls: type,
    presets: Mapping[str, Mapping[str, Any]] | None = None,
    preset_docs: Mapping[str, str] | None = None,
    *,
    title: str | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the options that :func:`resolve` takes for
    ``cls``: each option's type, allowed values, default (from ``defaults``, the game's
    default options, else the field's own) and description; no other key but ``preset``,
    one of ``presets`` (each described by ``preset_docs``) or null for none.

    What the schema refuses, ``resolve`` and the game's check refuse too.  Contradictions
    between options (a sub-option without its option) are left to the game's check: a
    value the schema accepts may still be refused in some company.  Pure: equal arguments
    give an equal schema, and a new one each time (the caller may change it)."""
    presets = presets or {}
    preset_docs = preset_docs or {}
    if presets:
        listed = "; ".join(
            f"{name}: {preset_docs[name]}" if preset_docs.get(name) else name for name in presets
        )
        preset: dict[str, Any] = {
            "type": ["string", "null"],
            "enum": [*presets, None],
            "description": "Option values to start from (the options given override them). "
            + listed,
        }
    else:
        preset = {"type": "null", "enum": [None], "description": "This game has no presets."}
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT}
    if title is not None:
        schema["title"] = title
    schema.update(
        type="object",
        properties={**_properties(cls, defaults), "preset": preset},
        additionalProperties=False,
    )
    return schema


def describe(cls: type, defaults: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One entry per option, in declaration order, with what a form needs to build its
    field: ``name``, ``type`` (the JSON type of a value other than null), ``enum`` (when
    only some values go), ``default``, ``nullable``, ``description``, for a number
    ``minimum`` and ``maximum``, and for an object the ``allowed_keys``, if only some may be.
    The same facts as :func:`json_schema`, flattened."""
    entries = []
    for name, schema in _properties(cls, defaults).items():
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        entry: dict[str, Any] = {
            "name": name,
            "type": kinds[0],
            "default": schema["default"],
            "nullable": "null" in kinds,
            "description": schema["description"],
        }
        if "enum" in schema:
            entry["enum"] = [v for v in schema["enum"] if v is not None]
        for bound in ("minimum", "maximum"):
            if bound in schema:
                entry[bound] = schema[bound]
        if "propertyNames" in schema:
            entry["allowed_keys"] = list(schema["propertyNames"]["enum"])
        entries.append(entry)
    return entries
