"""Structured logs: with ``ARENA_LOG_FORMAT=json`` (or ``--log-format json``) every log line
is one JSON object with its time, level, logger and message, and the match or bot it is
about when the call says so; a log collector parses it without a pattern."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.signals import setup_logging

from arena.cli import main
from arena.logs import JsonFormatter, configure
from arena.worker import play


@pytest.fixture
def root_logging() -> Iterator[None]:
    """The root logger as it was, after a test that configures it."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    logging.captureWarnings(False)
    setup_logging.disconnect(dispatch_uid="arena.logs")


def test_a_failed_match_is_logged_as_json_with_its_match_id(make_app):
    """A worker's log call, under the JSON formatter: the match that could not be played
    (here, one that is not in the database) is one object naming the match."""
    app = make_app()
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("arena.worker.play")
    logger.addHandler(handler)
    try:
        with pytest.raises(play.MatchNotPlayed):
            play.play_claimed(
                app.extensions["arena.db"], app.extensions["arena.config"], 4242, "tests:1:x"
            )
    finally:
        logger.removeHandler(handler)

    [line] = lines.getvalue().splitlines()
    logged = json.loads(line)
    assert logged["level"] == "ERROR"
    assert logged["logger"] == "arena.worker.play"
    assert logged["message"] == "match 4242 could not be played"
    assert logged["match_id"] == 4242
    assert "AssertionError" in logged["exception"]
    assert dt.datetime.fromisoformat(logged["time"]).tzinfo is not None


def test_json_configures_every_logger_and_keeps_what_is_not_json_as_text(root_logging):
    stream = io.StringIO()
    configure("json", "INFO", stream=stream)
    moment = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

    logging.getLogger("arena.worker.lifecycle").info(
        "bot %s paused", 7, extra={"bot_id": 7, "since": moment}
    )
    logging.getLogger("somewhere.else").debug("below the level: not written")

    [line] = stream.getvalue().splitlines()
    logged = json.loads(line)
    assert logged == {
        "time": logged["time"],
        "level": "INFO",
        "logger": "arena.worker.lifecycle",
        "message": "bot 7 paused",
        "bot_id": 7,
        "since": str(moment),
    }
    # Celery's worker and beat see that the logging is set up: they add no text handler
    assert setup_logging.receivers


def test_text_leaves_the_logging_as_it_was(root_logging):
    root = logging.getLogger()
    before = (list(root.handlers), root.level)

    configure("text", "INFO")

    assert (list(root.handlers), root.level) == before


def test_an_unknown_log_format_is_one_line(monkeypatch, tmp_path: Path, capsys):
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ARENA_LOG_FORMAT", "xml")

    assert main(["db", "upgrade"]) == 2

    assert capsys.readouterr().err == "arena: ARENA_LOG_FORMAT must be text or json, not 'xml'\n"


def test_serve_with_json_logs_writes_its_access_lines_as_json(tmp_path: Path):
    env = {**os.environ, "ARENA_DATA_DIR": str(tmp_path)}
    env.pop("ARENA_LOG_FORMAT", None)
    command = [sys.executable, "-m", "arena", "serve", "--port", "0", "--log-format", "json"]
    with (tmp_path / "err").open("wb") as err:
        server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=err)
        try:
            assert server.stdout is not None
            first = server.stdout.readline().decode()
            url = first.split("serving on ")[1].split()[0]
            with urllib.request.urlopen(f"{url}metrics", timeout=10) as answer:
                assert answer.status == 200
        finally:
            server.terminate()
            server.wait(timeout=20)
            server.stdout.close()  # type: ignore[union-attr]
    lines = [json.loads(line) for line in (tmp_path / "err").read_text().splitlines() if line]
    access = [line for line in lines if line["logger"] == "werkzeug"]
    assert any("GET /metrics" in line["message"] for line in access), lines
