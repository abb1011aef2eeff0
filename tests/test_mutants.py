"""The planted bugs of tests/mutants still apply to the code as it stands: each one's text
is found exactly once in its file, changes it, and leaves code that compiles (so a run of
``python -m tests.mutants`` measures the tests, not a stale catalogue)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutants import GAME_TESTS, MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_the_mutant_applies_once_and_compiles(mutant: Mutant) -> None:
    text = (ROOT / mutant.path).read_text(encoding="utf-8")
    assert text.count(mutant.before) == 1, "the mutated text is not found exactly once"
    assert mutant.before != mutant.after
    compile(text.replace(mutant.before, mutant.after), mutant.path, "exec")
    assert mutant.game in GAME_TESTS


def test_mutants_are_distinct() -> None:
    seen = {(m.path, m.before) for m in MUTANTS}
    assert len(seen) == len(MUTANTS)
