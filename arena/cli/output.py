"""What the commands print: one-line usage mistakes, the API's JSON (``--json``),
aligned tables and fields."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any


def at_least(flag: str, value: int | None, minimum: int) -> None:
    """A numeric argument below its minimum is a usage mistake (one line, status 2)."""
    if value is not None and value < minimum:
        raise UsageError(f"{flag} must be at least {minimum}, not {value}")


class UsageError(Exception):
    """A mistake of the user's (a file that is missing or not a replay, a match or seat
    out of range): one line on stderr and exit status 2."""


def check_port(flag: str, port: int, lowest: int = 1) -> None:
    if not lowest <= port <= 65535:
        raise UsageError(f"{flag} must be a port from {lowest} to 65535, not {port}")


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    return str(value)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], indent: str = "") -> None:
    """Plain aligned columns; numbers to the right."""
    cells = [[cell(value) for value in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    numeric = [
        bool(rows)
        and all(isinstance(row[i], int | float | type(None)) for row in rows)
        and not all(isinstance(row[i], bool) for row in rows)
        for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        text = "  ".join(
            v.rjust(w) if right else v.ljust(w)
            for v, w, right in zip(values, widths, numeric, strict=True)
        )
        return (indent + text).rstrip()

    print(line(headers))
    for row in cells:
        print(line(row))


def print_fields(pairs: Sequence[tuple[str, Any]], indent: str = "  ") -> None:
    """``name  value`` lines, the values aligned."""
    width = max(len(name) for name, _ in pairs)
    for name, value in pairs:
        print(f"{indent}{name:<{width}}  {cell(value)}".rstrip())


def when(timestamp: str | None) -> str | None:
    """``2026-05-01T10:00:00.123456`` -> ``2026-05-01 10:00:00`` (as the API gives it)."""
    return timestamp[:19].replace("T", " ") if timestamp else None


def interval(fitted: dict[str, Any] | None, provisional: bool = False) -> str:
    """A fitted rating and its 95% interval; "provisional" for one too uncertain to compare
    (the API's ``provisional``), as the pages show it."""
    if provisional:
        return "provisional"
    if not fitted:
        return "-"
    return f"{fitted['rating']:.0f} ({fitted['low']:.0f}..{fitted['high']:.0f})"


def printed_as_json(args: argparse.Namespace, data: Any) -> bool:
    """With ``--json``, print ``data`` as the API gave it and say so (the command is
    done); else False, and the command prints its own summary."""
    if not args.json:
        return False
    print_json(data)
    return True
