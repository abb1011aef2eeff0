"""CSV exports of the API's tables (leaderboards, standings, crosstables, rosters): the
same rows and columns as the JSON answer, so a spreadsheet and a script read one table.

A cell is the JSON value written as text: null is empty, true and false are ``true`` and
``false``, a number as Python writes it (``repr``: it reads back exactly), a datetime in
ISO 8601 with its offset.  Nested values are not exported: a CSV table is flat, and so are
the rows given here."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flask import Response

from arena.models import aware


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        return aware(value).isoformat()  # with its offset, as in the JSON answers
    if isinstance(value, (list, dict)):
        raise TypeError("a CSV cell is a scalar: flatten the row first")
    return str(value)


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row.get(c)) for c in columns])
    return out.getvalue()


def csv_response(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[str], filename: str
) -> Response:
    """A CSV download (``text/csv``, UTF-8, a header row) named ``filename``."""
    return Response(
        csv_text(rows, columns),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
