"""What the ``arena`` command says of itself: every (sub)command's help (a text for every
argument, no reStructuredText or Markdown markup), a mistake told with the usage of the
subcommand it was made in, and a worker that starts without a warning."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import build_parser, main
from arena.cli.processes import worker_command
from arena.competition.formats import FORMAT_FIELDS
from tests.support.lanes import free_port

# what a docstring's markup leaves in a help text: ``literals``, *emphasis*, **strong**,
# `links`_, [links](...), :roles:, .. directives, HTML tags
MARKUP = re.compile(r"`|\*|\]\(|(^|\s)\.\. |:[a-z]+:|</?(code|em|b|i|a|strong)\b")


def parsers(
    parser: argparse.ArgumentParser, path: str = "arena"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the command, with the words that call it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, f"{path} {name}")


def test_every_argument_has_help_and_no_help_has_markup():
    """``arena --help`` and every subcommand's: each argument and subcommand says what it
    is, in plain words (the help once carried the docstrings' ``double backticks``)."""
    seen, missing, marked = 0, [], []
    for path, parser in parsers(build_parser()):
        seen += 1
        texts = [("description", parser.description), ("epilog", parser.epilog)]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    texts.append((choice.dest, choice.help))
                    if not choice.help:
                        missing.append(f"{path} {choice.dest}")
                continue
            name = "/".join(action.option_strings) or action.dest
            texts.append((name, action.help))
            if not action.help:
                missing.append(f"{path} {name}")
        for group in parser._action_groups:
            texts.append((group.title, group.description))
        marked += [f"{path} {name}: {text!r}" for name, text in texts if MARKUP.search(text or "")]
        # and the help is printed as written (a stray % in a help text is a traceback)
        printed = parser.format_help()
        assert not MARKUP.search(printed.replace("[-h]", "")), (path, printed)
    assert seen > 30  # the walk reached the subcommands
    assert missing == []
    assert marked == []


def test_every_format_field_is_a_flag_of_tournaments_start():
    """The formats' fields (the registry the form is built from) are flags, named after
    their JSON keys: the pass rule of a qualifier too."""
    start = dict(parsers(build_parser()))["arena tournaments start"]
    flags = {option: action.dest for action in start._actions for option in action.option_strings}
    for name in FORMAT_FIELDS:
        assert flags.get("--" + name.replace("_", "-")) == name
    assert flags["--pass-rule"] == "pass_rule" and flags["--time-bank-ms"] == "time_bank_ms"
    assert flags["--challengers"] == "challenger_ids"  # the flag it had before


@pytest.mark.parametrize(
    ("argv", "usage", "error"),
    [
        (
            ["tournaments", "start", "cactus", "--bots", "1,2", "--rule", "score:0.5"],
            "usage: arena tournaments start ",
            "arena tournaments start: error: unrecognized arguments: --rule score:0.5",
        ),
        (
            ["tournaments", "start", "cactus", "--format", "knockout"],
            "usage: arena tournaments start ",
            "arena tournaments start: error: argument --format: invalid choice: 'knockout'",
        ),
        (
            ["bots", "list", "--owner", "ann"],
            "usage: arena bots list ",
            "arena bots list: error: unrecognized arguments: --owner ann",
        ),
        (
            ["ladders", "--on"],
            "usage: arena ladders ",
            "arena ladders: error: unrecognized arguments: --on",
        ),
    ],
)
def test_a_mistake_is_told_with_the_subcommand_s_usage(capsys, argv, usage, error):
    """Not the usage of ``arena`` itself, which names no flag of the subcommand."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(usage)
    assert captured.err.rstrip("\n").splitlines()[-1].startswith(error)


def test_a_worker_starts_without_a_warning(tmp_path: Path):
    """``arena worker --metrics-port N``, as the deployments start it, on the embedded
    broker: nothing it prints before it is ready is a warning (Celery's for a worker run
    as root, kombu's of a broker address with no host, a line of its own logged as a
    WARNING)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_DATA_DIR"] = str(tmp_path)
    port = free_port()
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            worker_command("quiet@%h", f"--metrics-port={port}"),
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 90
            while "arena: metrics on" not in log.read_text():
                assert worker.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        finally:
            worker.kill()  # only its start is read: no warm shutdown to wait for
            worker.wait()
    printed = log.read_text()
    assert f"arena: metrics on http://127.0.0.1:{port}/metrics" in printed.splitlines()
    assert not re.search(r"warn", printed, re.IGNORECASE), printed
