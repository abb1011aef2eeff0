"""The arena's tests; tests/support holds the helpers more than one module uses.

The helpers that came from test modules keep pytest's assertion rewriting, so that their
asserts still explain a failure as a test's own do (the engine contract's hot loops stay
plain asserts: rewriting would slow every random match)."""

import pytest

pytest.register_assert_rewrite(
    "tests.support.api",
    "tests.support.browser",
    "tests.support.charts",
    "tests.support.faults",
    "tests.support.president",
    "tests.support.protocol",
    "tests.support.replays",
    "tests.support.web",
)
