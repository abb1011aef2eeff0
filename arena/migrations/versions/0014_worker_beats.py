"""worker beats: which worker and beat processes are alive

``worker_beats`` holds one row per worker or beat process, written when it starts and
every few seconds while it lives (``arena.services.workers``): the status page, the
``/metrics`` gauge of live workers and the warning on a tournament whose matches wait with
no worker read it.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 06:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

NOW = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "worker_beats",
        sa.Column("name", sa.String(160), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("host", sa.String(100), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", NOW, nullable=False),
        sa.Column("last_seen", NOW, nullable=False),
        sa.Column("capacity", sa.Integer(), nullable=False),
        sa.Column("in_flight", sa.Integer(), nullable=False),
        sa.Column("metrics_port", sa.Integer(), nullable=True),
        sa.Column("stopped_at", NOW, nullable=True),
    )
    op.create_index("ix_worker_beats_last_seen", "worker_beats", ["last_seen"])


def downgrade() -> None:
    op.drop_index("ix_worker_beats_last_seen", table_name="worker_beats")
    op.drop_table("worker_beats")
