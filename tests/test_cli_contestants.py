"""A contestant's commands against an arena in this process (its matches only queued):
``arena scrimmage`` (unrated matches now) and ``arena notices`` (what the arena told the
account)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
from collections.abc import Callable, Iterator
from unittest import mock

import pytest
from arenabot import make_server as make_bot_server
from flask import Flask
from werkzeug.serving import make_server

from arena.cli import main
from arena.services.notices import notify
from sample_bots.policy_bot import PolicyBot


def cli(*argv: str, **env: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, env),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def arena(make_app: Callable[..., Flask]) -> Iterator[Flask]:
    """The app, served on a free port (``ARENA_SERVER``), with no token in the environment."""
    app = make_app()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {"ARENA_SERVER": f"http://127.0.0.1:{server.server_port}"}
    with mock.patch.dict(os.environ, env):
        for name in ("ARENA_TOKEN", "ARENA_ORGANISER_TOKEN", "ARENA_OWNER_TOKEN"):
            os.environ.pop(name, None)
        yield app
    server.shutdown()
    server.server_close()


def test_a_contestant_plays_scrimmages_and_reads_notices(arena, enqueued):
    with mock.patch("sys.stdin", io.StringIO("a long password\n")):
        code, out, err = cli("accounts", "create", "zed", "--password-stdin")
    assert (code, err) == (0, "")
    account_id = int(re.match(r"account (\d+) created", out)[1])
    token = re.search(r"^API token:  (\S+)$", out, re.MULTILINE)[1]
    bot = make_bot_server(PolicyBot("cactus", "random"), "127.0.0.1", 0)
    bot.serve_in_background()
    try:
        code, out, err = cli("bots", "register", "zed-bot", bot.url, "--games", "cactus",
                             ARENA_TOKEN=token)  # fmt: skip
        assert (code, err) == (0, "")
        bot_id = int(re.match(r"bot (\d+) registered", out)[1])
        # the arena made the secret: restart the bot with it, in its environment
        assert out.splitlines()[-3].startswith("Restart it with the secret in its environment")
        assert out.splitlines()[-1] == f"  python bot.py --host 0.0.0.0 --port {bot.port}"
        before = len(enqueued)
        code, out, err = cli("scrimmage", str(bot_id), "--against", "heuristic,random",
                             "--matches", "3", ARENA_TOKEN=token)  # fmt: skip
        assert (code, err) == (0, "")
        made = enqueued[before:]
        assert len(made) == 3
        assert out.splitlines()[0] == (
            f"bot {bot_id}: 3 unrated cactus matches queued: {', '.join(map(str, made))}"
        )
    finally:
        bot.close()
    # a house bot that is not one: the server's words, one line
    code, out, err = cli("scrimmage", str(bot_id), "--against", "genius", ARENA_TOKEN=token)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "No house policy 'genius'" in err
    assert cli("notices", ARENA_TOKEN=token) == (0, "no notice yet\n", "")
    with arena.extensions["arena.db"].session() as session:
        notify(session, account_id, "bot_paused", "zed-bot was paused", bot_id=bot_id)
        session.commit()
    code, out, err = cli("notices", "--unread", "--mark-read", ARENA_TOKEN=token)
    assert (code, err) == (0, "")
    header, row, marked = out.splitlines()
    assert header.split() == ["when", "kind", "bot", "notice"]
    assert row.split()[2:] == ["bot_paused", str(bot_id), "new", "zed-bot", "was", "paused"]
    assert marked == "1 marked read"
    assert cli("notices", "--unread", ARENA_TOKEN=token) == (0, "no notice unread\n", "")
    code, out, err = cli("notices")
    assert (code, out) == (2, "") and "(set $ARENA_TOKEN)" in err
