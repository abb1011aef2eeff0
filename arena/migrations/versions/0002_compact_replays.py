"""compact, compressed replays

Replays move from a JSON column to gzip-compressed bytes of the format 2 record (each
action stored once, no null fields); every stored replay is converted, so old rows keep
loading and every row can be served as stored.  The downgrade gives format 1 back.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 23:30:00
"""

import gzip
import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

BATCH = 200  # replays converted per round trip (a classic match is about 200 KB of JSON)


# A migration is frozen in time: it converts with its own copy of the rules of formats 1
# and 2 (arena.match.records has the live ones), so later changes to the code cannot change it.
def _format_2(record: dict) -> dict:
    if record.get("format", 1) != 1:
        return record
    steps = [
        [
            {k: v for k, v in d.items() if k != "default" and v is not None}
            for d in step["decisions"]
        ]
        for step in record["steps"]
    ]
    return {**record, "format": 2, "steps": steps}


def _stored(record: dict) -> bytes:
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    return gzip.compress(text.encode(), 6, mtime=0)


REPLAYS = sa.table(
    "replays",
    sa.column("match_id", sa.Integer),
    sa.column("record", sa.JSON),
    sa.column("data", sa.LargeBinary),
)


def _rewrite(source: str, target: str, convert: Callable[[Any], Any]) -> None:
    """Set column ``target`` of every replay to ``convert(source)``, a batch at a time."""
    bind = op.get_bind()
    last = 0
    while rows := bind.execute(
        sa.select(REPLAYS.c.match_id, REPLAYS.c[source])
        .where(REPLAYS.c.match_id > last)
        .order_by(REPLAYS.c.match_id)
        .limit(BATCH)
    ).all():
        for match_id, value in rows:
            bind.execute(
                REPLAYS.update()
                .where(REPLAYS.c.match_id == match_id)
                .values({target: convert(value)})
            )
        last = rows[-1][0]


def _format_1(data: bytes) -> dict:
    """Back to format 1: each step's answers beside its decisions, every field present."""
    record = json.loads(gzip.decompress(data))
    steps = [
        {
            "answers": {str(d["seat"]): d["action"] for d in step},
            "decisions": [{"default": "fault" in d, "fault": None, **d} for d in step],
        }
        for step in record["steps"]
    ]
    return {**record, "format": 1, "steps": steps}


def upgrade() -> None:
    with op.batch_alter_table("replays", schema=None) as batch_op:
        batch_op.add_column(sa.Column("data", sa.LargeBinary(), nullable=True))
    _rewrite("record", "data", lambda record: _stored(_format_2(record)))
    with op.batch_alter_table("replays", schema=None) as batch_op:
        batch_op.alter_column("data", existing_type=sa.LargeBinary(), nullable=False)
        batch_op.drop_column("record")


def downgrade() -> None:
    with op.batch_alter_table("replays", schema=None) as batch_op:
        batch_op.add_column(sa.Column("record", sa.JSON(), nullable=True))
    _rewrite("data", "record", _format_1)
    with op.batch_alter_table("replays", schema=None) as batch_op:
        batch_op.alter_column("record", existing_type=sa.JSON(), nullable=False)
        batch_op.drop_column("data")
