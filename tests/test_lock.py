"""The lock of tested versions (constraints.txt): every package an install of the arena
takes is pinned there, and every install the project documents or ships takes it."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def locked() -> dict[str, str]:
    """constraints.txt: canonical name -> pinned version."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_the_lock_pins_every_package_the_arena_and_its_extras_need() -> None:
    # a dependency added to pyproject.toml without renewing the lock would install at
    # whatever version is newest that day: every one, transitively, is pinned
    pins = locked()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for requirements in project["optional-dependencies"].values():
        wanted += [Requirement(r) for r in requirements if not r.startswith(project["name"])]
    seen: set[str] = set()
    while wanted:
        requirement = wanted.pop()
        name = canonicalize_name(requirement.name)
        if name in seen or name in ("card-bot-arena", "card-arena-sdk"):
            continue
        seen.add(name)
        assert name in pins, f"{requirement.name} is not in constraints.txt: bash .ci/refresh-lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name])
        for text in metadata.requires(requirement.name) or []:
            nested = Requirement(text)
            if nested.marker is None or any(
                nested.marker.evaluate({"extra": e}) for e in requirement.extras or {""}
            ):
                wanted.append(nested)
    assert "open-spiel" in seen and pins["open-spiel"] == "1.6.15"  # the benchmarks' anchor


def test_every_install_of_the_arena_takes_the_lock() -> None:
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    commands = quick_start.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(commands) == 2 and all("pip install -c constraints.txt " in c for c in commands)
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^COPY .*\bconstraints\.txt\b", dockerfile, re.M)
    assert re.search(r"pip install -c constraints\.txt ", dockerfile)
