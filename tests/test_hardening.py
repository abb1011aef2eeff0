"""Names that only look different, signing secrets at rest, and what every answer tells
the browser: a look-alike of a taken name is the taken name; a copy of the database
holds no usable signing secret; pages run under a Content-Security-Policy, are never
framed, and an unknown page is the site's own."""

from __future__ import annotations

import datetime as dt
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from cryptography.fernet import Fernet
from flask import Flask

from arena import sealing
from arena.cli import main
from arena.config import Config, ConfigError, from_env
from arena.db import Database, alembic_config
from arena.models import Bot, bot_name_key
from tests.support.api import tournament_body

# "alice" as other alphabets and widths draw it: a Cyrillic a, a Greek capital alpha,
# fullwidth letters, mathematical bold letters
LOOK_ALIKES = [
    "\u0430lice",
    "\u0391lice",
    "\uff41\uff4c\uff49\uff43\uff45",
    "\U0001d41a\U0001d425\U0001d422\U0001d41c\U0001d41e",
]


def connect_bot(client: Any, name: str, **fields: Any) -> Any:
    body = {"name": name, "connect": True, "games": ["cactus"], "owner": "tests", **fields}
    return client.post("/api/bots", json=body)


# -- names ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_of_a_taken_name_is_the_taken_name(client, name):
    assert connect_bot(client, "alice").status_code == 201
    answer = connect_bot(client, name)
    assert answer.status_code == 409
    message = answer.get_json()["message"]
    assert message.startswith("a bot named 'alice' already exists: ")  # the bot it looks like
    # and a bot is not renamed into one either
    other = connect_bot(client, "bob").get_json()
    renamed = client.patch(
        f"/api/bots/{other['id']}",
        json={"name": name},
        headers={"Authorization": f"Bearer {other['owner_token']}"},
    )
    assert renamed.status_code == 409 and "'alice'" in renamed.get_json()["message"]


def test_a_name_key_folds_look_alikes_and_keeps_ascii_names_as_they_were():
    for name in LOOK_ALIKES:
        assert bot_name_key(name) == "alice"
    assert bot_name_key("al\u200bice") == "alice"  # a zero-width space changes nothing seen
    assert bot_name_key("\u0412\u041e\u0422") == "bot"  # Cyrillic capitals Ve, O, Te
    # a name in ASCII: trimmed and case folded, nothing else (I and l stay apart)
    for name in ("Ivan", "lvan", "rn-bot", "m-bot", "B0T", "BOT", "  Many   spaces "):
        assert bot_name_key(name) == " ".join(name.split()).casefold()
    assert bot_name_key("Zo\u00eb") == "zo\u00eb" != bot_name_key("Zoe")  # accents are seen
    assert len(bot_name_key("\ufdfa" * 64)) == 192  # a long fold is cut to the column


# -- the migration ---------------------------------------------------------------------------
TEXT_COLUMNS = ("id", "name", "name_key", "signing_secret", "owner", "owner_token_hash",
                "status", "description", "password_hash", "role", "session_epoch")  # fmt: skip
BOTS = sa.table(
    "bots",
    *(sa.column(c) for c in TEXT_COLUMNS[:6] + TEXT_COLUMNS[6:8]),
    sa.column("games", sa.JSON),
    sa.column("info", sa.JSON),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)
ACCOUNTS = sa.table(
    "accounts",
    *(sa.column(c) for c in TEXT_COLUMNS[:3] + TEXT_COLUMNS[8:]),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
# (id, name, key before, key after): the oldest of a look keeps the key
OLD_BOTS = [
    (1, "alice", "alice", "alice"),
    (2, "\u0430lice", "\u0430lice", "alice  #2"),
    (3, "Bob", "bob", "bob"),
    (4, "\uff41\uff4c\uff49\uff43\uff45", "\uff41\uff4c\uff49\uff43\uff45", "alice  #4"),
    (5, "\u0412\u041e\u0422", "\u0432\u043e\u0442", "bot"),
]
OLD_ACCOUNTS = [(1, "c\u0430rol", "c\u0430rol", "carol"), (2, "carol", "carol", "carol  #2")]


def test_the_migration_recomputes_keys_and_seals_every_secret(database_url, tmp_path):
    key = Fernet.generate_key().decode()
    sealing.use(Config(data_dir=tmp_path, secrets_key=key))
    config = alembic_config(database_url)
    command.upgrade(config, "0014")
    engine = sa.create_engine(database_url)
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    try:
        with engine.begin() as connection:
            for bot_id, name, old_key, _ in OLD_BOTS:
                connection.execute(
                    BOTS.insert().values(
                        id=bot_id, name=name, name_key=old_key, owner="o", owner_token_hash="h",
                        signing_secret=f"secret-of-bot-{bot_id}", games=[], status="active",
                        description="", info={}, created_at=now, updated_at=now,
                    )
                )  # fmt: skip
            for account_id, name, old_key, _ in OLD_ACCOUNTS:
                connection.execute(
                    ACCOUNTS.insert().values(
                        id=account_id, name=name, name_key=old_key, password_hash="x",
                        role="contestant", session_epoch=0, created_at=now,
                    )
                )  # fmt: skip
        command.upgrade(config, "0015")
        with engine.connect() as connection:
            bots = connection.execute(
                sa.select(BOTS.c.id, BOTS.c.name, BOTS.c.name_key, BOTS.c.signing_secret)
            ).all()
            accounts = connection.execute(sa.select(ACCOUNTS.c.id, ACCOUNTS.c.name_key)).all()
        # both rows of a look stay, with their names; the later one's key blocks nobody
        assert sorted((i, n, k) for i, n, k, _ in bots) == [(i, n, k) for i, n, _, k in OLD_BOTS]
        assert sorted(accounts) == [(i, k) for i, _, _, k in OLD_ACCOUNTS]
        for bot_id, _, _, stored in bots:
            assert "secret-of-bot" not in stored
            assert Fernet(key).decrypt(stored.encode()).decode() == f"secret-of-bot-{bot_id}"
        database = Database(database_url)
        try:  # the models read them as they were given
            with database.session() as session:
                # the column alone: the model has columns of later revisions
                secret = session.scalar(sa.select(Bot.signing_secret).where(Bot.id == 3))
                assert secret == "secret-of-bot-3"
        finally:
            database.dispose()
        command.downgrade(config, "0014")
        with engine.connect() as connection:
            rows = connection.execute(
                sa.select(BOTS.c.id, BOTS.c.name_key, BOTS.c.signing_secret)
            ).all()
        assert sorted(rows) == [(i, k, f"secret-of-bot-{i}") for i, _, k, _ in OLD_BOTS]
    finally:
        engine.dispose()


# -- secrets at rest -------------------------------------------------------------------------
def test_a_signing_secret_is_stored_sealed_and_read_back_as_given(app: Flask, tmp_path: Path):
    secret = "my-own-signing-secret-0123456789"
    answer = connect_bot(app.test_client(), "sealed", signing_secret=secret)
    assert answer.status_code == 201
    bot_id = answer.get_json()["id"]
    database = app.extensions["arena.db"]
    with database.engine.connect() as connection:
        stored = connection.scalar(sa.text(f"SELECT signing_secret FROM bots WHERE id = {bot_id}"))
    assert secret not in stored
    # sealed with the local profile's key: a file of the data dir, its owner's alone
    key_file = tmp_path / sealing.LOCAL_KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert Fernet(key_file.read_text().strip()).decrypt(stored.encode()).decode() == secret
    with database.session() as session:  # what signs the bot's requests
        assert session.get(Bot, bot_id).signing_secret == secret
        assert session.scalar(sa.select(Bot.signing_secret).where(Bot.id == bot_id)) == secret


def test_the_local_key_is_made_once_and_kept(tmp_path: Path):
    first = sealing.local_key(tmp_path)
    assert sealing.local_key(tmp_path) == first
    sealing.parse_keys(first)


PRODUCTION = {
    "ARENA_PROFILE": "production",
    "ARENA_SECRET_KEY": "s" * 32,
    "ARENA_DATABASE_URL": "postgresql+psycopg://arena@db/arena",
    "ARENA_BROKER_URL": "redis://broker:6379/0",
    "ARENA_ORGANISER_TOKEN": "o" * 32,
}


def test_production_refuses_to_start_without_a_secrets_key():
    with pytest.raises(ConfigError, match="ARENA_SECRETS_KEY must be set"):
        from_env(PRODUCTION)
    with pytest.raises(ConfigError, match="ARENA_SECRETS_KEY must hold Fernet keys"):
        from_env({**PRODUCTION, "ARENA_SECRETS_KEY": "not-a-key"})
    key = Fernet.generate_key().decode()
    assert from_env({**PRODUCTION, "ARENA_SECRETS_KEY": f" {key} "}).secrets_key == key


def test_a_new_key_first_still_opens_the_old_and_reseal_moves_every_secret_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    url = f"sqlite:///{tmp_path / 'arena.sqlite3'}"
    database = Database(url)
    database.upgrade()
    sealing.use(Config(data_dir=tmp_path, secrets_key=old))
    with database.session() as session:
        session.add(
            Bot(name="rotated", owner="o", owner_token_hash="h", signing_secret="kept-secret-01")
        )
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ARENA_SECRETS_KEY", f"{new},{old}")
    assert main(["db", "reseal"]) == 0
    assert capsys.readouterr().out == "arena: 1 signing secrets sealed with the newest key\n"
    with database.engine.connect() as connection:
        stored = connection.scalar(sa.text("SELECT signing_secret FROM bots"))
    database.dispose()
    assert Fernet(new).decrypt(stored.encode()).decode() == "kept-secret-01"
    # a key that is none of them: one line, no traceback
    monkeypatch.setenv("ARENA_SECRETS_KEY", Fernet.generate_key().decode())
    assert main(["db", "reseal"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: a bot's signing secret cannot be opened") and err.count("\n") == 1


def test_new_secrets_key_prints_a_key(capsys: pytest.CaptureFixture[str]):
    assert main(["db", "new-secrets-key"]) == 0
    sealing.parse_keys(capsys.readouterr().out.strip())


# -- what the browser is told ------------------------------------------------------------------
HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}


@pytest.mark.parametrize("path", ["/", "/bots", "/api/bots", "/static/arena.css", "/no/such"])
def test_every_answer_carries_the_security_headers(client, path):
    answer = client.get(path)
    answer.close()  # a static file is sent from an open file
    for name, value in HEADERS.items():
        assert answer.headers[name] == value, (path, name)
    policy = answer.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_an_unknown_page_is_the_site_s_own_and_the_api_keeps_json(client):
    answer = client.get("/no/such/page")
    assert answer.status_code == 404 and answer.mimetype == "text/html"
    body = answer.get_data(as_text=True)
    assert 'class="topbar"' in body and "<h1>Not found</h1>" in body  # the site's layout
    assert "arena.css" in body
    wrong_method = client.post("/leaderboard")
    assert wrong_method.status_code == 405 and 'class="topbar"' in wrong_method.get_data(
        as_text=True
    )
    assert "GET" in wrong_method.headers["Allow"]
    api = client.get("/api/no/such")
    assert api.status_code == 404 and api.get_json()["code"] == 404


def _inline(html: str) -> list[str]:
    """What a CSP without 'unsafe-inline' blocks: scripts without a src (data blocks of
    type application/json are never run), style elements, style and on* attributes."""
    found = [m for m in re.findall(r"<script\b[^>]*>", html) if "src=" not in m]
    found = [m for m in found if 'type="application/json"' not in m]
    found += re.findall(r"<style\b", html)
    found += re.findall(r"\sstyle=\"[^\"]*\"", html)
    found += re.findall(r"\son[a-z]+=\"[^\"]*\"", html)
    return found


def test_no_page_needs_inline_script_or_style(make_app: Callable[..., Flask]):
    app = make_app()
    client = app.test_client()
    ids = [connect_bot(client, name).get_json()["id"] for name in ("ada", "bob", "cy")]
    tournament = client.post("/api/tournaments", json=tournament_body(ids)).get_json()["id"]
    pages = [
        "/",
        "/bots",
        f"/bots/{ids[0]}",
        "/tournaments",
        f"/tournaments/{tournament}",
        "/leaderboard",
        "/play",
        "/login",
        "/signup",
        "/events",
        "/api/docs",
        "/nope",
    ]
    for path in pages:  # fmt: skip
        html = client.get(path).get_data(as_text=True)
        assert _inline(html) == [], path
