"""Charts as inline SVG, drawn on the server from plain numbers.

The pages draw a bot's rating history, the fitted intervals of a leaderboard, a bot's
results against its opponents and its faults by kind without JavaScript or a charting
library: each function here takes numbers and names and returns SVG markup
(``markupsafe.Markup``) in which every name is escaped.  Each chart says what it shows in
words (an ``aria-label`` and a ``<title>``), and its axis labels and tick values are SVG
text, so a screen reader, a search of the page and a test can all read it.  Colours and
fonts come from the classes in ``arena.css``; nothing is loaded from anywhere.

The functions are pure: the same numbers always give the same markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from markupsafe import Markup, escape

T = TypeVar("T")

MAX_POINTS = 300  # points of a line drawn at most: the page stays small at any history
NAME_CHARS = 22  # characters of a bot's name written beside a bar (the whole in its title)
MINUS = "\u2212"


# -- numbers -------------------------------------------------------------------------------
def downsample(values: Sequence[T], limit: int = MAX_POINTS) -> list[tuple[int, T]]:
    """At most ``limit`` (at least 2) of ``values`` with their indices, evenly spread over
    the sequence: the first and the last are always kept, and all of them when there are
    no more than ``limit``."""
    limit = max(limit, 2)
    n = len(values)
    if n <= limit:
        return list(enumerate(values))
    # indices i*(n-1)/(limit-1) rounded: distinct (the step is above 1), 0 and n-1 included
    picked = [round(i * (n - 1) / (limit - 1)) for i in range(limit)]
    return [(i, values[i]) for i in picked]


def linear(domain: tuple[float, float], span: tuple[float, float]) -> Callable[[float], float]:
    """The linear map taking ``domain`` onto ``span`` (either may run backwards, as a
    y axis does); a domain of one value maps everything to the middle of the span."""
    (d0, d1), (s0, s1) = domain, span
    if d1 == d0:
        middle = (s0 + s1) / 2
        return lambda _value: middle
    ratio = (s1 - s0) / (d1 - d0)
    return lambda value: s0 + (value - d0) * ratio


def nice_ticks(low: float, high: float, count: int = 5, whole: bool = False) -> list[float]:
    """About ``count`` round tick values (1, 2, 2.5 or 5 times a power of ten apart), the
    first at or below ``low`` and the last at or above ``high``: an axis from the first
    to the last holds every value.  One value gets a tick on each side of it.  ``whole``:
    whole numbers only (what can be counted: matches), so never less than 1 apart."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("ticks of a range that is not finite")
    low, high = min(low, high), max(low, high)
    if high == low:
        pad = max(abs(low) * 0.01, 1.0)
        low, high = low - pad, high + pad
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    if whole and not float(step).is_integer():
        step = 5 if step == 2.5 else max(1, math.ceil(step))
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    ticks = []
    value = first
    while value <= last + step / 1000:
        ticks.append(round(value, 10))
        value += step
    return ticks


def number(value: float) -> str:
    """A value for a label: whole numbers without decimals, others to one; a true minus."""
    text = f"{value:.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:.1f}"
    return text.replace("-", MINUS)


def _at(value: float) -> str:
    """A coordinate: one decimal is a tenth of a pixel, enough and short."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _short(name: str, chars: int = NAME_CHARS) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "\u2026"


def _svg(
    kind: str, width: int, height: int, summary: str, body: list[str], **data: object
) -> Markup:
    """The outer ``<svg>``: sized by its view box, named by ``summary`` (``aria-label``
    and ``<title>``), with ``data-`` attributes for whoever reads the numbers back."""
    label = escape(summary)
    attributes = "".join(
        f' data-{key.replace("_", "-")}="{escape(value)}"' for key, value in data.items()
    )
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {kind}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{label}"{attributes}>'
        f"<title>{label}</title>{''.join(body)}</svg>"
    )


def _text(x: float, y: float, text: str, cls: str, anchor: str = "start", extra: str = "") -> str:
    return (
        f'<text x="{_at(x)}" y="{_at(y)}" class="{cls}" text-anchor="{anchor}"{extra}>'
        f"{escape(text)}</text>"
    )


# -- a rating over time -----------------------------------------------------------------------
def rating_history(
    elos: Sequence[float],
    *,
    label: str,
    fitted: tuple[float, float, float] | None = None,
    width: int = 640,
    height: int = 260,
    max_points: int = MAX_POINTS,
) -> Markup:
    """A line of a bot's Elo over its rated matches: ``elos[0]`` is the rating before the
    first (match 0), ``elos[i]`` the rating after match ``i``.  ``fitted`` (rating, low,
    high) is drawn as a horizontal line inside a shaded band, its 95% interval.  At most
    ``max_points`` points are drawn (``downsample``); the x axis counts matches, the y
    axis is Elo, both with round tick values.  ``label`` names the chart ("alpha in
    Cactus"); the summary adds the numbers."""
    if not elos:
        raise ValueError("a rating history needs at least the starting rating")
    matches = len(elos) - 1
    shown = downsample(elos, max_points)
    left, right, top, bottom = 58, 16, 14, 44
    values = list(elos) + (list(fitted) if fitted else [])
    y_ticks = nice_ticks(min(values), max(values), 5)
    x_ticks = [t for t in nice_ticks(0, max(matches, 1), 6, whole=True) if t <= max(matches, 1)]
    x = linear((0, max(matches, 1)), (left, width - right))
    y = linear((y_ticks[0], y_ticks[-1]), (height - bottom, top))
    summary = (
        f"{label}: Elo over {matches} rated match{'' if matches == 1 else 'es'}, "
        f"from {number(elos[0])} to {number(elos[-1])} "
        f"(lowest {number(min(elos))}, highest {number(max(elos))})"
    )
    if fitted:
        summary += (
            f"; fitted rating {number(fitted[0])}, "
            f"95% interval {number(fitted[1])} to {number(fitted[2])}"
        )
    body = ['<g class="grid">']
    body += [
        f'<line x1="{left}" x2="{width - right}" y1="{_at(y(t))}" y2="{_at(y(t))}"/>'
        for t in y_ticks
    ]
    body.append("</g>")
    if fitted:
        rating, low, high = fitted
        band = f"95% interval of the fitted rating: {number(low)} to {number(high)}"
        body.append(
            f'<rect class="band" x="{left}" y="{_at(y(high))}" width="{width - right - left}" '
            f'height="{_at(max(y(low) - y(high), 0.5))}" data-low="{low:.1f}" '
            f'data-high="{high:.1f}"><title>{escape(band)}</title></rect>'
        )
        body.append(
            f'<line class="fitted" x1="{left}" x2="{width - right}" y1="{_at(y(rating))}" '
            f'y2="{_at(y(rating))}" data-rating="{rating:.1f}">'
            f"<title>fitted rating {escape(number(rating))}</title></line>"
        )
        body.append(_text(left + 6, y(rating) - 5, f"fitted {number(rating)}", "note"))
    points = " ".join(f"{_at(x(i))},{_at(y(v))}" for i, v in shown)
    body.append(f'<polyline class="line" fill="none" points="{points}"/>')
    last_i, last_v = shown[-1]
    body.append(
        f'<circle class="dot" cx="{_at(x(last_i))}" cy="{_at(y(last_v))}" r="3">'
        f"<title>after match {last_i}: {escape(number(last_v))}</title></circle>"
    )
    body.append('<g class="axis">')
    body.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}"/>')
    body.append(
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}"/>'
    )
    body += [_text(left - 6, y(t) + 4, number(t), "tick tick-y", "end") for t in y_ticks]
    body += [_text(x(t), height - bottom + 16, number(t), "tick tick-x", "middle") for t in x_ticks]
    body.append(
        _text((left + width - right) / 2, height - 6, "Match number", "axis-label", "middle")
    )
    middle = (top + height - bottom) / 2
    body.append(
        _text(
            14, middle, "Elo", "axis-label", "middle", f' transform="rotate(-90 14 {_at(middle)})"'
        )
    )
    body.append("</g>")
    return _svg("rating-chart", width, height, summary, body, points=len(shown), matches=matches)


# -- an interval on a common scale ------------------------------------------------------------
SCALE_TICKS = 6  # about as many tick values on a leaderboard's scale


def scale_of(intervals: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """The common scale of a page's intervals: round values holding every one of them
    (None when there are none)."""
    if not intervals:
        return None
    ticks = nice_ticks(min(lo for lo, _ in intervals), max(hi for _, hi in intervals), SCALE_TICKS)
    return ticks[0], ticks[-1]


BAR_WIDTH = 200  # an interval bar and its axis: the same, so the rows line up
BAR_PAD = 14  # room at each end for half a tick label


def interval_bar(
    rating: float,
    low: float,
    high: float,
    *,
    scale: tuple[float, float],
    label: str,
    width: int = BAR_WIDTH,
    height: int = 18,
) -> Markup:
    """A fitted rating's 95% interval as a bar on ``scale`` (the page's, from
    ``scale_of``: every row's bar is comparable), the rating a mark inside it, faint
    lines at the scale's tick values (``interval_axis`` writes them)."""
    x = linear(scale, (BAR_PAD, width - BAR_PAD))
    middle = height / 2
    summary = f"{label}: fitted {number(rating)}, 95% interval {number(low)} to {number(high)}"
    body = [
        f'<line class="gridline" x1="{_at(x(t))}" x2="{_at(x(t))}" y1="2" y2="{height - 2}"/>'
        for t in nice_ticks(*scale, SCALE_TICKS)
    ]
    body += [
        f'<line class="track" x1="{BAR_PAD}" x2="{width - BAR_PAD}" y1="{_at(middle)}" '
        f'y2="{_at(middle)}"/>',
        f'<rect class="box" x="{_at(x(low))}" y="{_at(middle - 4)}" '
        f'width="{_at(max(x(high) - x(low), 1))}" height="8" rx="2"/>',
        f'<line class="mark" x1="{_at(x(rating))}" x2="{_at(x(rating))}" y1="1" '
        f'y2="{height - 1}"/>',
    ]
    return _svg(
        "interval-chart",
        width,
        height,
        summary,
        body,
        rating=f"{rating:.1f}",
        low=f"{low:.1f}",
        high=f"{high:.1f}",
    )


def interval_axis(
    scale: tuple[float, float], *, width: int = BAR_WIDTH, height: int = 20
) -> Markup:
    """The scale of the interval bars for the column's heading: a mark at each tick
    value, written under every other one when there are more than four (four-digit
    ratings side by side would run into each other)."""
    x = linear(scale, (BAR_PAD, width - BAR_PAD))
    ticks = nice_ticks(*scale, SCALE_TICKS)
    written = ticks if len(ticks) <= 4 else ticks[::2]
    body = [
        f'<line class="tickmark" x1="{_at(x(t))}" x2="{_at(x(t))}" y1="{height - 4}" '
        f'y2="{height}"/>'
        for t in ticks
    ]
    body += [_text(x(t), height - 7, number(t), "tick", "middle") for t in written]
    summary = f"Elo scale from {number(scale[0])} to {number(scale[1])}"
    return _svg("interval-axis", width, height, summary, body)


# -- counts ------------------------------------------------------------------------------------
def bar_chart(
    items: Sequence[tuple[str, int | float]],
    *,
    label: str,
    width: int = 440,
    bar_height: int = 22,
) -> Markup:
    """One horizontal bar per (name, count), longest for the largest count, the count
    written after it; names longer than NAME_CHARS are shortened (the whole name is the
    bar's title)."""
    names_width, numbers_width, top = 160, 50, 4
    height = top + bar_height * max(len(items), 1) + 4
    largest = max((value for _, value in items), default=0) or 1
    x = linear((0, largest), (names_width, width - numbers_width))
    summary = f"{label}: " + (
        ", ".join(f"{name} {number(value)}" for name, value in items) or "none"
    )
    body = []
    for n, (name, value) in enumerate(items):
        row = top + n * bar_height
        baseline = row + bar_height / 2 + 4
        body.append('<g class="row">')
        body.append(f"<title>{escape(name)}: {escape(number(value))}</title>")
        body.append(_text(names_width - 8, baseline, _short(name), "name", "end"))
        body.append(
            f'<rect class="bar" x="{names_width}" y="{_at(row + 4)}" '
            f'width="{_at(max(x(value) - names_width, 1 if value else 0))}" '
            f'height="{bar_height - 8}"/>'
        )
        body.append(_text(x(value) + 6, baseline, number(value), "value"))
        body.append("</g>")
    return _svg("bar-chart", width, height, summary, body)


RESULTS = ("ahead", "tied", "behind")


def results_chart(
    rows: Sequence[tuple[str, int, int, int]],
    *,
    label: str,
    width: int = 460,
    bar_height: int = 22,
) -> Markup:
    """Per opponent (name, ahead, tied, behind): a bar as long as the times they met,
    split into the times the bot finished ahead of, level with and behind it, with the
    three numbers after it and a legend above."""
    names_width, numbers_width, top = 160, 64, 24
    height = top + bar_height * max(len(rows), 1) + 4
    largest = max((sum(r[1:]) for r in rows), default=0) or 1
    x = linear((0, largest), (names_width, width - numbers_width))
    summary = f"{label}: " + (
        "; ".join(
            f"{name}: ahead {ahead}, tied {tied}, behind {behind}"
            for name, ahead, tied, behind in rows
        )
        or "none"
    )
    body = ['<g class="legend">']
    at = names_width
    for kind in RESULTS:
        body.append(f'<rect class="{kind}" x="{at}" y="6" width="10" height="10"/>')
        body.append(_text(at + 14, 15, kind, "legend-text"))
        at += 70
    body.append("</g>")
    for n, (name, *counts) in enumerate(rows):
        row = top + n * bar_height
        baseline = row + bar_height / 2 + 4
        words = ", ".join(f"{kind} {c}" for kind, c in zip(RESULTS, counts, strict=True))
        body.append('<g class="row">')
        body.append(f"<title>{escape(name)}: {escape(words)}</title>")
        body.append(_text(names_width - 8, baseline, _short(name), "name", "end"))
        start = 0
        for kind, count in zip(RESULTS, counts, strict=True):
            if count:
                body.append(
                    f'<rect class="{kind}" x="{_at(x(start))}" y="{_at(row + 4)}" '
                    f'width="{_at(x(start + count) - x(start))}" height="{bar_height - 8}"/>'
                )
            start += count
        body.append(_text(x(start) + 6, baseline, "\u2013".join(map(str, counts)), "value"))
        body.append("</g>")
    return _svg("results-chart", width, height, summary, body)
