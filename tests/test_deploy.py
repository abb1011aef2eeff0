"""deploy/: the commands the container files run exist, and production fails fast."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import build_parser
from arena.config import ConfigError, from_env

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
FILES = [DEPLOY / "Dockerfile", DEPLOY / "compose.yaml", DEPLOY / "k8s" / "arena.yaml"]


def _arena_commands() -> set[str]:
    text = "\n".join(p.read_text() for p in FILES)
    return set(re.findall(r'\["arena", "([a-z]+)"', text))


def test_every_arena_command_in_deploy_exists():
    subcommands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    used = _arena_commands()
    assert used >= {"worker", "beat", "db"}
    assert used <= set(subcommands)


def test_every_sample_bot_in_deploy_exists():
    text = "\n".join(p.read_text() for p in FILES)
    for module in set(re.findall(r"sample_bots\.[a-z_]+", text)):
        assert importlib.util.find_spec(module) is not None, module


def test_the_wsgi_entry_point_names_a_module_that_exists():
    assert "arena.wsgi:app" in (DEPLOY / "Dockerfile").read_text()
    assert importlib.util.find_spec("arena.wsgi") is not None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "ARENA_SECRET_KEY"),
        ({"ARENA_SECRET_KEY": "k"}, "ARENA_DATABASE_URL"),
        ({"ARENA_SECRET_KEY": "k", "ARENA_DATABASE_URL": "postgresql://db/arena"},
         "ARENA_BROKER_URL"),
        ({"ARENA_SECRET_KEY": "k", "ARENA_DATABASE_URL": "postgresql://db/arena",
          "ARENA_BROKER_URL": "redis://redis:6379/0"}, "ARENA_ORGANISER_TOKEN must be set"),
        ({"ARENA_SECRET_KEY": "k", "ARENA_DATABASE_URL": "postgresql://db/arena",
          "ARENA_BROKER_URL": "redis://redis:6379/0", "ARENA_ORGANISER_TOKEN": "  "},
         "ARENA_ORGANISER_TOKEN must be set"),
    ],
)  # fmt: skip
def test_the_production_profile_fails_fast_without_its_settings(env, message, tmp_path):
    with pytest.raises(ConfigError, match=message):
        from_env({"ARENA_PROFILE": "production", "ARENA_DATA_DIR": str(tmp_path), **env})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ARENA_WORKER_CONCURRENCY", "many", "a number"),
        ("ARENA_WORKER_CONCURRENCY", "0", "at least 1"),
        ("ARENA_LEASE_SECONDS", "nan", "a finite number"),
        ("ARENA_MATCH_TIME_LIMIT", "inf", "a finite number"),
        ("ARENA_CONNECTIONS_PER_BOT", "-3", "at least 1"),
        ("ARENA_DEADLINE_MS", "2s", "a number"),
    ],
)
def test_a_bad_number_in_the_environment_is_named_at_start_up(name, value, message, tmp_path):
    with pytest.raises(ConfigError, match=f"{name} must be {message}"):
        from_env({"ARENA_DATA_DIR": str(tmp_path), name: value})


PRODUCTION = {
    "ARENA_PROFILE": "production",
    "ARENA_SECRET_KEY": "k",
    # nothing listens there: the command must stop before it connects
    "ARENA_DATABASE_URL": "postgresql+psycopg://arena@127.0.0.1:1/arena",
    "ARENA_BROKER_URL": "redis://127.0.0.1:1/0",
}


def test_the_production_profile_starts_with_an_organiser_token(tmp_path):
    config = from_env({**PRODUCTION, "ARENA_DATA_DIR": str(tmp_path), "ARENA_ORGANISER_TOKEN": "t"})
    assert config.profile == "production" and config.organiser_token == "t"
    assert config.open_play is False  # people's matches are the organiser's, unless opened


@pytest.mark.parametrize(("value", "open_play"), [("", True), ("0", False), ("yes", True)])
def test_open_play_is_a_switch(tmp_path, value: str, open_play: bool) -> None:
    env = {"ARENA_DATA_DIR": str(tmp_path), "ARENA_OPEN_PLAY": value}
    assert from_env(env).open_play is open_play
    with pytest.raises(ConfigError, match="ARENA_OPEN_PLAY must be 1 or 0"):
        from_env({**env, "ARENA_OPEN_PLAY": "maybe"})


def test_the_cli_refuses_production_without_an_organiser_token_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(PRODUCTION, ARENA_DATA_DIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "arena", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("arena: ARENA_ORGANISER_TOKEN must be set"), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_every_production_deploy_file_sets_the_organiser_token():
    compose = (DEPLOY / "compose.yaml").read_text()
    assert "ARENA_ORGANISER_TOKEN: ${ARENA_ORGANISER_TOKEN:?" in compose  # compose refuses
    assert re.search(
        r"^  ARENA_ORGANISER_TOKEN: \S", (DEPLOY / "k8s" / "arena.yaml").read_text(), re.M
    )
