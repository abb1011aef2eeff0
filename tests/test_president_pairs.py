"""The variant pair tables of Président, as a whole: their groups share out every pair of
variants that can be on together (tests/support/president.PAIRS), each group's table is
a file of its own, and each file checks that it covers its group
(tests/support/president_table.check_group)."""

from __future__ import annotations

from pathlib import Path

from tests.support.president import PAIRS, VARIANTS
from tests.support.president_table import PAIR_GROUPS


def test_the_groups_share_out_every_pair_once() -> None:
    firsts = [v for group in PAIR_GROUPS.values() for v in group]
    assert len(firsts) == len(set(firsts))
    assert {k.split("+")[0] for k in PAIRS} <= set(firsts) <= set(VARIANTS)


def test_each_group_has_its_table() -> None:
    here = Path(__file__).parent
    tables = {
        p.stem.removeprefix("test_president_pairs_") for p in here.glob("test_president_pairs_*.py")
    }
    assert tables == set(PAIR_GROUPS)
    for group in PAIR_GROUPS:
        text = (here / f"test_president_pairs_{group}.py").read_text(encoding="utf-8")
        assert f'check_group(ROWS, "{group}")' in text, group
