"""CSV exports of the API's tables (leaderboards, standings, crosstables, rosters): the
same rows and columns as the JSON answer, so a spreadsheet and a script read one table.

A cell is the JSON value written as text: null is empty, true and false are ``true`` and
``false``, an integer as it is, a datetime in ISO 8601 with its offset.  A fractional
number is rounded to what it means (``decimals_of``): a rating (Elo, a fitted rating and
its interval) to one decimal, any other (points, per-match means, scores from 0 to 1, so a
percentage to one decimal) to three, then written as Python writes it (``1523.4``,
``0.667``, ``3.5``).  The JSON answers keep full precision: a script gets the exact value,
a spreadsheet what it means.  Nested values are not exported: a CSV table is flat, and so
are the rows given here.

No cell is a formula (OWASP's "CSV Injection"): text that a spreadsheet would run, one
starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, is written with a
single quote before it (``'=1+1``), which a spreadsheet shows as text.  Numbers are not
touched: an int or a float is written as the number (``-3``, ``-0.5``), and so is text
that is wholly a number as Python or JSON writes one (``"-3"``, ``"-1e-05"``); ``"+3"``,
``"-inf"`` and ``"-3+cmd"`` are not, and are quoted.  Every export is written by
``cell``, so this holds for all of them."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flask import Response

from arena.models import aware

# what a spreadsheet takes for the start of a formula; and a number, as str() and repr()
# write ints and floats (a sign only when negative), which may start with "-" harmlessly
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def neutralised(text: str) -> str:
    """``text``, with a single quote before it if a spreadsheet would run it."""
    if text.startswith(FORMULA_START) and not NUMBER.fullmatch(text):
        return "'" + text
    return text


# the columns holding ratings (on the Elo scale), written to RATING_DECIMALS; any other
# fractional number to DECIMALS
RATING_COLUMNS = frozenset({"elo", "fitted_rating", "fitted_low", "fitted_high"})
RATING_DECIMALS = 1
DECIMALS = 3


def decimals_of(column: str) -> int:
    """How many decimals a fractional number of ``column`` is written with."""
    return RATING_DECIMALS if column in RATING_COLUMNS else DECIMALS


def cell(value: Any, decimals: int | None = None) -> str:
    """A value as its CSV cell (the module's rules), a float rounded to ``decimals`` (None:
    as it is); never a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        # + 0.0: a value rounded to zero from below is written 0.0, not -0.0
        return repr(value if decimals is None else round(value, decimals) + 0.0)
    if isinstance(value, dt.datetime):
        return aware(value).isoformat()  # with its offset, as in the JSON answers
    if isinstance(value, (list, dict)):
        raise TypeError("a CSV cell is a scalar: flatten the row first")
    if isinstance(value, int):
        return str(value)
    return neutralised(str(value))


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row.get(c), decimals_of(c)) for c in columns])
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
