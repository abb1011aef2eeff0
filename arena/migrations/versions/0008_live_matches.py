"""live matches: the steps of running matches, and who may see their hidden cards

``live_steps`` holds a running match's steps in the chunks its worker writes as it plays
(keyed by match, attempt and first step); ``tournaments.live_view`` says whether a
tournament's matches show every perspective while they are played ("everyone") or only
the public table ("public", the default, also for existing tournaments).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 11:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "live_steps",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("first", sa.Integer(), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
        sa.PrimaryKeyConstraint("match_id", "attempt", "first"),
    )
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(
            sa.Column("live_view", sa.String(length=16), nullable=False, server_default="public")
        )


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("live_view")
    op.drop_table("live_steps")
