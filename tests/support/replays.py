"""Replay records in older formats, for the tests that upgrade them."""

from __future__ import annotations

from typing import Any


def format_1(record: dict[str, Any]) -> dict[str, Any]:
    """The same record as the first release stored it: each step's answers beside its
    decisions, ``default`` and ``fault`` on every decision."""
    steps = [
        {
            "answers": {str(d["seat"]): d["action"] for d in step},
            "decisions": [{"default": "fault" in d, "fault": None, **d} for d in step],
        }
        for step in record["steps"]
    ]
    return {**record, "format": 1, "steps": steps}
