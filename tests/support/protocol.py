"""The documented protocol (docs/protocol.md): its golden examples and its signing example,
read by the protocol tests and the JavaScript bot's test."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
GOLDEN = re.compile(r"<!-- golden: ([a-z_]+) -->\s*```json\n(.*?)```", re.S)
SIGNING_EXAMPLE = re.compile(r"<!-- signing-example -->\s*```text\n(.*?)```", re.S)


def signing_example() -> dict[str, str]:
    """The worked example of "Writing a bot in another language": field -> its text."""
    found = SIGNING_EXAMPLE.search(DOC.read_text(encoding="utf-8"))
    assert found, "docs/protocol.md has no signing example"
    fields = (line.split(":", 1) for line in found[1].splitlines() if line.strip())
    return {key.strip(): value.strip() for key, value in fields}
