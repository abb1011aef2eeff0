"""Compact replays: each action stored once, no null fields, gzip in the database, served
as stored; records of the first format keep loading (converted by the migration)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from arena.db import Database, alembic_config
from arena.games import make_policy
from arena.match.records import check, decode, encode, upgrade
from arena.match.referee import PolicyClient, Referee, policy_rng
from arena.models import Base, Replay
from tests.support.replays import format_1

OLD_REPLAYS = sa.table("replays", sa.column("match_id", sa.Integer), sa.column("record", sa.JSON))
DECISION_KEYS = {"seat", "kind", "action", "latency_ms", "fault", "memo"}


def classic_match(seed: int) -> dict[str, Any]:
    """A four-seat Cactus classic match of house bots, as the referee records it."""
    clients = [
        PolicyClient(
            make_policy("cactus", "heuristic" if s == 0 else "random", policy_rng(seed, s)),
            f"bot{s}",
        )
        for s in range(4)
    ]
    return Referee().run("cactus", clients, seed, {"preset": "classic"}).to_json()


def nulls(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(nulls(v) for v in value.values())
    if isinstance(value, list):
        return sum(nulls(v) for v in value)
    return 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_record_keeps_each_action_once_and_no_null_fields(seed):
    record = classic_match(seed)
    assert record["format"] == 3 and check(record) == []
    for step in record["steps"]:
        assert isinstance(step, list) and step
        for decision in step:
            assert set(decision) <= DECISION_KEYS and {"seat", "kind", "action"} <= set(decision)
    assert nulls(record["steps"]) == 0
    text = json.dumps(record)
    assert '"answers"' not in text and '"default"' not in text


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_classic_match_is_stored_in_less_than_20_kb(seed):
    record = classic_match(seed)
    stored = encode(record)
    assert len(stored) <= 20_000, len(stored)
    assert len(json.dumps(format_1(record))) > 5 * len(stored)  # what the first release kept
    assert decode(stored) == record
    assert encode(record) == stored  # the same record, the same bytes


def test_a_first_format_record_is_read_as_the_current_one():
    record = classic_match(7)
    old = format_1(record)
    assert check(upgrade(old)) == []
    assert upgrade(old) == record
    assert upgrade(record) is record
    with pytest.raises(ValueError, match="unknown match record format"):
        upgrade({**record, "format": 99})


def test_the_models_match_the_migrations(tmp_path: Path):
    database = Database(f"sqlite:///{tmp_path / 'schema.sqlite3'}")
    database.upgrade()
    with database.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    database.dispose()
    assert differences == []


def test_replays_stored_by_the_first_release_keep_loading(database_url: str):
    """A database at the first schema, with replays in the first format: the migration
    converts every row, each then loads, re-simulates and is served as stored; the
    downgrade gives the old rows back."""
    records = [classic_match(seed) for seed in (11, 12, 13)]
    config = alembic_config(database_url)
    command.upgrade(config, "0001")
    engine = sa.create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO bots (id, name, endpoint, owner, owner_token_hash, signing_secret, "
                "games, status, description, info, created_at, updated_at) VALUES (1, 'b', "
                "'http://b', 'o', 'h', 's', '[]', 'active', '', '{}', '2026-01-01', '2026-01-01')"
            )
        )
        for match_id, record in enumerate(records, start=1):
            connection.execute(
                sa.text(
                    "INSERT INTO matches (id, kind, game, options, seed, status, attempts, rated, "
                    "created_at) VALUES (:id, 'ladder', 'cactus', '{}', :seed, 'finished', 1, "
                    "false, '2026-01-01')"
                ),
                {"id": match_id, "seed": record["seed"]},
            )
            connection.execute(
                OLD_REPLAYS.insert().values(match_id=match_id, record=format_1(record))
            )
    command.upgrade(config, "head")
    database = Database(database_url)
    try:
        with database.session() as session:
            for match_id, record in enumerate(records, start=1):
                replay = session.get(Replay, match_id)
                assert replay.record == record and check(replay.record) == []
                # as it is served: what the migration wrote, format 2 (read as format 3)
                assert json.loads(gzip.decompress(replay.data)) == {**record, "format": 2}
        command.downgrade(config, "0001")
        with engine.connect() as connection:
            old = list(
                connection.scalars(sa.select(OLD_REPLAYS.c.record).order_by(OLD_REPLAYS.c.match_id))
            )
        assert old == [format_1(r) for r in records]
    finally:
        database.dispose()
        engine.dispose()
