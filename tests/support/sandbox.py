"""What the tests of hosted bots need of the machine, the sandbox (bubblewrap, user
namespaces, libseccomp): on CI (``CI`` set) a missing one fails the test; elsewhere it
is skipped with the reason, as the lanes do (``tests/support/lanes.py``).  And a bot
they upload."""

from __future__ import annotations

import os

import pytest

from arena.hosted import sandbox

# a hosted bot that says something privately at every decision, on stderr and as debug
# text, and as it starts: each note names its decision, so no two are alike
CHATTY = b"""import sys

print("loading the weights", file=sys.stderr)
asked = 0

def act(view, legal_actions):
    global asked
    asked += 1
    n = len(legal_actions)
    print("weighing %d moves for decision %d" % (n, asked), file=sys.stderr)
    return legal_actions[0], None, "took the first of %d at decision %d" % (n, asked)
"""


def needs_sandbox() -> None:
    reason = sandbox.available()
    if reason is None:
        return
    said = f"hosted bots cannot run here: {reason} (Debian: apt install bubblewrap)"
    if os.environ.get("CI"):
        pytest.fail(said)
    pytest.skip(said)
