"""bots that connect out: no endpoint, and their sessions

A bot registered to connect out to the arena has no ``endpoint``; ``bot_sessions`` holds
its live session (or its last one): the web process holding it, since when, what the
bot said of itself, when it was last heard from, and how many older sessions a newer one
replaced.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 23:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.alter_column("endpoint", existing_type=sa.String(length=512), nullable=True)
    op.create_table(
        "bot_sessions",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("home", sa.String(length=200), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("info", sa.JSON(), nullable=False),
        sa.Column("draining", sa.Boolean(), nullable=False),
        sa.Column("replaced", sa.Integer(), nullable=False),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"]),
        sa.PrimaryKeyConstraint("bot_id"),
    )


def downgrade() -> None:
    op.drop_table("bot_sessions")
    # a bot that connects out has nowhere to be called: it keeps an empty endpoint
    op.execute("UPDATE bots SET endpoint = '' WHERE endpoint IS NULL")
    with op.batch_alter_table("bots") as batch:
        batch.alter_column("endpoint", existing_type=sa.String(length=512), nullable=False)
