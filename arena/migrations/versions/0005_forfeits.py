"""forfeits and paused bots

A seat records whether its bot forfeited the match (not one usable answer) and a summary
of its faults with the cause of the last one; a bot counts its forfeits in a row and is
paused, with the reason, after several (``ARENA_PAUSE_AFTER_FORFEITS``).  Existing rows
start with no forfeit, no fault summary and a streak of zero.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 07:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("match_seats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("forfeited", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("faults", sa.JSON(), nullable=True))
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("paused_reason", sa.String(length=300), nullable=True))
        batch_op.add_column(
            sa.Column("forfeit_streak", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    # a paused bot becomes disabled: its owner still has to turn it on again
    op.execute("UPDATE bots SET status = 'disabled' WHERE status = 'paused'")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("forfeit_streak")
        batch_op.drop_column("paused_reason")
    with op.batch_alter_table("match_seats", schema=None) as batch_op:
        batch_op.drop_column("faults")
        batch_op.drop_column("forfeited")
