"""The server-drawn SVG charts (``arena.web.charts``): scales, ticks, downsampling, what
each chart says in words, and the escaping of names."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import pytest
from markupsafe import Markup

from arena.web import charts

SVG = "{http://www.w3.org/2000/svg}"
SNEAKY = '<script>alert("x")</script> & co'


def parse(markup: Markup) -> ET.Element:
    """The chart as XML: it must be well-formed, whatever the names in it."""
    assert isinstance(markup, Markup)
    return ET.fromstring(str(markup))


def points(svg: ET.Element) -> list[tuple[float, float]]:
    line = svg.find(f".//{SVG}polyline")
    return [tuple(map(float, p.split(","))) for p in line.get("points").split()]


def texts(svg: ET.Element, cls: str) -> list[str]:
    return [t.text for t in svg.iter(f"{SVG}text") if cls in t.get("class", "").split()]


# -- numbers ---------------------------------------------------------------------------------
def test_downsampling_keeps_the_first_and_the_last_and_spreads_the_rest() -> None:
    values = list(range(1000))
    kept = charts.downsample(values, 300)
    assert len(kept) == 300
    assert kept[0] == (0, 0) and kept[-1] == (999, 999)
    indices = [i for i, _ in kept]
    assert indices == sorted(set(indices))  # distinct, in order
    gaps = {b - a for a, b in itertools.pairwise(indices)}
    assert gaps <= {3, 4}  # evenly spread: 999 / 299 is about 3.3
    assert all(values[i] == v for i, v in kept)
    assert charts.downsample(values[:300], 300) == list(enumerate(values[:300]))
    assert charts.downsample([5], 300) == [(0, 5)]
    assert charts.downsample(values, 1) == [(0, 0), (999, 999)]  # never fewer than two


def test_linear_scales() -> None:
    x = charts.linear((0, 10), (50, 150))
    assert (x(0), x(5), x(10)) == (50, 100, 150)
    y = charts.linear((1400, 1600), (200, 0))  # a y axis runs upwards
    assert (y(1400), y(1500), y(1600)) == (200, 100, 0)
    assert charts.linear((3, 3), (0, 100))(42) == 50


@pytest.mark.parametrize(
    ("low", "high"), [(1453.2, 1688.9), (0, 1), (0, 997), (-12.5, 3.2), (1500, 1500), (7, 3)]
)
def test_ticks_are_round_and_hold_the_range(low: float, high: float) -> None:
    ticks = charts.nice_ticks(low, high, 5)
    assert ticks[0] <= min(low, high) and ticks[-1] >= max(low, high)
    assert 2 <= len(ticks) <= 11
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    (step,) = steps
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 9) in (1, 2, 2.5, 5)


def test_counts_get_whole_ticks() -> None:
    assert charts.nice_ticks(0, 2, 6, whole=True) == [0, 1, 2]
    assert charts.nice_ticks(0, 7, 6, whole=True) == [0, 2, 4, 6, 8]
    assert charts.nice_ticks(0, 12, 6, whole=True) == [0, 5, 10, 15]  # not 2.5 apart
    svg = parse(charts.rating_history([1500, 1490, 1480], label="two matches"))
    assert texts(svg, "tick-x") == ["0", "1", "2"]


def test_numbers_are_written_plainly() -> None:
    assert charts.number(1500.0) == "1500"
    assert charts.number(1523.6) == "1524"
    assert charts.number(2.5) == "2.5"
    assert charts.number(-40) == "\u221240"  # a true minus sign


# -- the rating history ------------------------------------------------------------------------
def test_a_rating_history_draws_every_match_the_fitted_band_and_its_axes() -> None:
    elos = [1500, 1516, 1508.4, 1530, 1524, 1541]
    svg = parse(charts.rating_history(elos, label="alpha in Cactus", fitted=(1520, 1480, 1560)))
    assert svg.get("role") == "img"
    label = svg.get("aria-label")
    assert label == svg.find(f"{SVG}title").text
    assert label.startswith("alpha in Cactus: Elo over 5 rated matches, from 1500 to 1541")
    assert "lowest 1500, highest 1541" in label
    assert "fitted rating 1520, 95% interval 1480 to 1560" in label
    assert svg.get("data-points") == "6" and svg.get("data-matches") == "5"
    drawn = points(svg)
    assert len(drawn) == 6
    xs = [x for x, _ in drawn]
    assert xs == sorted(xs) and len(set(xs)) == 6  # one point per match, left to right
    # higher Elo is higher up (a smaller y), in proportion
    ys = [y for _, y in drawn]
    assert ys[1] < ys[0] and ys[2] > ys[1]
    per_elo = (ys[0] - ys[3]) / 30
    assert ys[0] - ys[5] == pytest.approx(41 * per_elo, abs=0.2)
    band = svg.find(f".//{SVG}rect[@class='band']")
    fitted = svg.find(f".//{SVG}line[@class='fitted']")
    assert (band.get("data-low"), band.get("data-high")) == ("1480.0", "1560.0")
    assert fitted.get("data-rating") == "1520.0"
    top, bottom = float(band.get("y")), float(band.get("y")) + float(band.get("height"))
    assert top < float(fitted.get("y1")) < bottom
    assert bottom - top == pytest.approx(80 * per_elo, abs=0.2)  # the band is 1480 to 1560
    # the fitted line sits at 1520: 20 Elo above the start
    assert ys[0] - float(fitted.get("y1")) == pytest.approx(20 * per_elo, abs=0.2)
    assert {"Match number", "Elo"} <= set(texts(svg, "axis-label"))
    y_ticks = [int(t) for t in texts(svg, "tick-y")]
    assert y_ticks == sorted(y_ticks) and y_ticks[0] <= 1480 and y_ticks[-1] >= 1560
    assert texts(svg, "tick-x")[0] == "0"


def test_a_long_history_is_downsampled() -> None:
    elos = [1500 + (i % 37) for i in range(2001)]
    svg = parse(charts.rating_history(elos, label="veteran", max_points=300))
    assert svg.get("data-points") == "300" and svg.get("data-matches") == "2000"
    drawn = points(svg)
    assert len(drawn) == 300
    x0, x1 = drawn[0][0], drawn[-1][0]
    assert x0 == 58 and x1 == 640 - 16  # the first match and the last, at the axis' ends
    assert "Elo over 2000 rated matches" in svg.get("aria-label")
    assert svg.find(f".//{SVG}rect[@class='band']") is None  # not fitted: no band


def test_a_history_of_no_match_is_one_point() -> None:
    svg = parse(charts.rating_history([1500], label="newcomer"))
    assert len(points(svg)) == 1 and "over 0 rated matches" in svg.get("aria-label")
    with pytest.raises(ValueError):
        charts.rating_history([], label="nothing")


# -- intervals ---------------------------------------------------------------------------------
def test_interval_bars_share_the_page_scale() -> None:
    scale = charts.scale_of([(1480, 1560), (1391.5, 1702)])
    assert scale == (1300, 1800)
    assert charts.scale_of([]) is None
    bar = parse(charts.interval_bar(1520, 1480, 1560, scale=scale, label="alpha"))
    rect = bar.find(f"{SVG}rect")
    span = charts.BAR_WIDTH - 2 * charts.BAR_PAD
    assert float(rect.get("x")) == pytest.approx(charts.BAR_PAD + span * 180 / 500, abs=0.1)
    assert float(rect.get("width")) == pytest.approx(span * 80 / 500, abs=0.1)
    mark = bar.find(f"{SVG}line[@class='mark']")
    assert float(mark.get("x1")) == pytest.approx(charts.BAR_PAD + span * 220 / 500, abs=0.1)
    assert bar.get("aria-label") == "alpha: fitted 1520, 95% interval 1480 to 1560"
    assert (bar.get("data-low"), bar.get("data-high"), bar.get("data-rating")) == (
        "1480.0",
        "1560.0",
        "1520.0",
    )
    axis = parse(charts.interval_axis(scale))
    # a mark at every tick value, written at every other one (four digits need room)
    assert len(list(axis.iter(f"{SVG}line"))) == 6
    assert [t.text for t in axis.iter(f"{SVG}text")] == ["1300", "1500", "1700"]
    assert axis.get("width") == bar.get("width")  # the heading lines up with the bars


# -- counts ------------------------------------------------------------------------------------
def test_a_bar_chart_writes_each_count_and_escapes_and_shortens_names() -> None:
    items = [("timeout", 12), ("http_status", 3), (SNEAKY, 0)]
    markup = charts.bar_chart(items, label="Faults by kind")
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    svg = parse(markup)
    assert texts(svg, "value") == ["12", "3", "0"]
    names = texts(svg, "name")
    assert names[:2] == ["timeout", "http_status"]
    assert len(names[2]) == charts.NAME_CHARS and names[2].endswith("\u2026")
    titles = [g.find(f"{SVG}title").text for g in svg.iter(f"{SVG}g")]
    assert f"{SNEAKY}: 0" in titles  # the whole name, in the bar's title
    widths = [float(r.get("width")) for r in svg.iter(f"{SVG}rect")]
    assert widths[0] > widths[1] > widths[2] == 0
    assert widths[0] == pytest.approx(4 * widths[1], rel=0.01)
    assert svg.get("aria-label") == f"Faults by kind: timeout 12, http_status 3, {SNEAKY} 0"


def test_a_results_chart_splits_each_opponent_into_ahead_tied_and_behind() -> None:
    rows = [("bravo", 5, 1, 4), (SNEAKY, 0, 0, 2)]
    markup = charts.results_chart(rows, label="Results by opponent")
    assert "<script>" not in markup
    svg = parse(markup)
    assert texts(svg, "value") == ["5\u20131\u20134", "0\u20130\u20132"]
    assert texts(svg, "legend-text") == ["ahead", "tied", "behind"]
    first, second = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "row"]
    parts = {r.get("class"): float(r.get("width")) for r in first.iter(f"{SVG}rect")}
    assert parts["ahead"] == pytest.approx(5 * parts["tied"], rel=0.01)
    assert parts["behind"] == pytest.approx(4 * parts["tied"], rel=0.01)
    assert [r.get("class") for r in second.iter(f"{SVG}rect")] == ["behind"]
    assert "bravo: ahead 5, tied 1, behind 4" in svg.get("aria-label")
    empty = parse(charts.results_chart([], label="nobody"))
    assert empty.get("aria-label") == "nobody: none"


def test_charts_are_the_same_for_the_same_numbers() -> None:
    one = charts.rating_history([1500, 1510, 1490], label="a", fitted=(1500, 1450, 1550))
    assert one == charts.rating_history([1500, 1510, 1490], label="a", fitted=(1500, 1450, 1550))
    assert not re.search(r"\d\.\d{2,}", str(one).split('points="')[1].split('"')[0])
