"""What the tests of hosted bots need of the machine: the sandbox (bubblewrap, user
namespaces, libseccomp).  On CI (``CI`` set) a missing one fails the test; elsewhere it is
skipped with the reason, as the lanes do (``tests/support/lanes.py``)."""

from __future__ import annotations

import os

import pytest

from arena.hosted import sandbox


def needs_sandbox() -> None:
    reason = sandbox.available()
    if reason is None:
        return
    said = f"hosted bots cannot run here: {reason} (Debian: apt install bubblewrap)"
    if os.environ.get("CI"):
        pytest.fail(said)
    pytest.skip(said)
