"""The lock of tested versions, constraints.txt: written from an environment where the
arena, the SDK and every extra are installed, and checked against pyproject.toml.

    python .ci/lock.py write    # constraints.txt from this environment (.ci/refresh-lock)
    python .ci/lock.py check    # every package an install may take is pinned, in range

A package is needed when a requirement of the arena's, or of a needed package's, applies
on Linux with any Python 3.11 release, not only the one running: Debian's Python 3.11.2
(the image's) takes ``async-timeout`` for ``redis`` where 3.11.7 does not.  ``write``
pins what is installed here, then what only another 3.11 release needs, at the newest
version its range allows (``pip install --dry-run --report``).
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"
OURS = {"card-bot-arena", "card-arena-sdk"}
# the releases of the Python line the lock is for: its first and the one running
PYTHONS = ("3.11.0", "3.11.2", ".".join(map(str, sys.version_info[:3])))
HEADER = """\
# The versions CI passed with: every package the arena, the SDK and every extra install,
# on Linux with Python 3.11 (any 3.11 release: what only some need is pinned too).
# Used by the README's commands, .ci/run and deploy/Dockerfile (pip install -c).
# Made by: bash .ci/refresh-lock ({date}); never edited by hand.
"""


def applies(requirement: Requirement, extras: frozenset[str]) -> bool:
    """Whether ``requirement`` applies on Linux with some Python 3.11 release, asked with
    one of ``extras`` (or none)."""
    if requirement.marker is None:
        return True
    env = default_environment()
    for version in PYTHONS:
        for extra in extras or {""}:
            env.update(python_full_version=version, python_version="3.11", extra=extra)
            if requirement.marker.evaluate(env):  # type: ignore[arg-type]
                return True
    return False


def roots() -> list[Requirement]:
    """What pyproject.toml asks for: the dependencies and every extra's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for requirements in project["optional-dependencies"].values():
        wanted += [Requirement(r) for r in requirements]
    return [r for r in wanted if canonicalize_name(r.name) not in OURS]


def needed(requires: dict[str, list[str]] | None = None) -> Iterator[Requirement]:
    """Every requirement an install of the arena may meet, transitively (a package asked
    for with other extras is followed again); ``requires`` gives the requirements of
    packages not installed here."""
    requires = requires or {}
    wanted, followed = roots(), set()
    while wanted:
        requirement = wanted.pop()
        name = canonicalize_name(requirement.name)
        extras = frozenset(requirement.extras)
        if name in OURS:
            continue
        yield requirement
        if (name, extras) in followed:
            continue
        followed.add((name, extras))
        try:
            nested = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            nested = requires.get(name, [])
        wanted += [r for r in map(Requirement, nested) if applies(r, extras)]


def pins(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            found[canonicalize_name(name)] = version.strip()
    return found


def newest(requirement: Requirement) -> tuple[str, list[str]]:
    """The version pip would install for ``requirement`` and what that version requires."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps",
         "--ignore-installed", "--report", "-", str(requirement).split(";")[0]],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    (item,) = json.loads(done.stdout)["install"]
    return item["metadata"]["version"], item["metadata"].get("requires_dist", [])


def write() -> None:
    frozen = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    lines = frozen.splitlines()
    found, requires = pins(frozen), {}
    while missing := [r for r in needed(requires) if canonicalize_name(r.name) not in found]:
        for requirement in missing:
            name = canonicalize_name(requirement.name)
            if name in found:  # met twice in one pass
                continue
            version, nested = newest(requirement)
            found[name], requires[name] = version, nested
            lines.append(f"{requirement.name}=={version}")
            print(f"lock: {requirement.name}=={version}, needed by another Python 3.11 only")
    lines.sort(key=lambda line: canonicalize_name(line.partition("==")[0]))
    LOCK.write_text(HEADER.format(date=dt.date.today().isoformat()) + "\n".join(lines) + "\n")


def check() -> list[str]:
    """What is wrong with the lock: a needed package without a pin, or a pin outside the
    range a requirement gives."""
    locked = pins(LOCK.read_text())
    problems = []
    for requirement in needed():
        name = canonicalize_name(requirement.name)
        if name not in locked:
            problems.append(f"{requirement.name} is not pinned")
        elif not requirement.specifier.contains(locked[name], prereleases=True):
            problems.append(f"{requirement.name}=={locked[name]} is outside {requirement}")
    return list(dict.fromkeys(problems))  # a package met through several paths, once


def main() -> int:
    if sys.argv[1:] == ["write"]:
        write()
        return 0
    if sys.argv[1:] == ["check"]:
        problems = check()
        for problem in problems:
            print(f"constraints.txt: {problem} (bash .ci/refresh-lock renews it)")
        return 1 if problems else 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
