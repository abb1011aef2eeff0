"""Options of a game as a frozen dataclass, filled from JSON with clear errors.

A game declares its options as a dataclass whose field types are among: ``bool``, ``int``,
``str``, a ``Literal[...]`` of strings, ``int | None``, ``dict[str, int]`` and
``dict[str, str]``.  Presets are plain option bundles; any option can be overridden.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
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
