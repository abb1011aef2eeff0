"""The variant pair tables of Président cover every pair of variants that can be on together.

The rows live in one file per group of pairs (tests/test_president_pairs_*.py), each row
a position where two variants of tests/support/president.VARIANTS act in the same play
or decision, with what the rule text makes of it.  This file checks the tables as a whole:
every compatible pair (tests/support/president.PAIRS) has rows, every row cites both of
its variants' rule ids and plays under both variants' options, and no row is filed twice.
``python -m tests.test_president_pairs`` prints the rows per pair and moment.
"""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

from tests.support.president import PAIRS, VARIANT_RULES, VARIANTS
from tests.support.president_table import MOMENTS, PairCase

GROUPS = sorted(p.stem for p in Path(__file__).parent.glob("test_president_pairs_*.py"))


def all_rows() -> list[PairCase]:
    rows: list[PairCase] = []
    for name in GROUPS:
        rows += importlib.import_module(f"tests.{name}").ROWS
    return rows


def test_every_compatible_pair_has_rows() -> None:
    covered = {"+".join(row.pair) for row in all_rows()}
    assert sorted(set(PAIRS) - covered) == []
    assert sorted(covered - set(PAIRS)) == []  # a refused pair (or a misspelt one) is no row


def test_every_row_cites_both_rules_and_plays_under_both_variants() -> None:
    for row in all_rows():
        a, b = row.pair
        assert {VARIANT_RULES[a], VARIANT_RULES[b]} <= set(row.rules), str(row)
        for name in (a, b):
            for option, value in VARIANTS[name].items():
                assert row.options.get(option) == value, f"{row}: {option} is not {value!r}"
        assert row.moment in MOMENTS, str(row)


def test_no_row_is_filed_twice() -> None:
    names = Counter(str(row) for row in all_rows())
    assert [name for name, n in names.items() if n > 1] == []


def summary() -> str:
    """Rows per pair, with their moments, as the closing note of a change lists them."""
    per_pair: dict[str, Counter[str]] = {}
    for row in all_rows():
        per_pair.setdefault("+".join(row.pair), Counter())[row.moment] += 1
    lines = []
    for pair in PAIRS:
        moments = per_pair.get(pair, Counter())
        a, b = pair.split("+")
        rules = f"{VARIANT_RULES[a]} and {VARIANT_RULES[b]}"
        said = ", ".join(f"{m} {n}" if n > 1 else m for m, n in sorted(moments.items()))
        lines.append(f"{pair} ({rules}): {sum(moments.values())} ({said})")
    total = sum(sum(c.values()) for c in per_pair.values())
    lines.append(f"{len(per_pair)} pairs of {len(PAIRS)}, {total} rows")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
