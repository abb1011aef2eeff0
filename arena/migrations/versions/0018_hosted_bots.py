"""hosted bots: code the arena runs, its versions, and each seat's private log

``bots.hosted`` marks a bot whose code the arena runs (arena.hosted), and
``bots.code_version`` the version of it that plays.  ``bot_code`` keeps every upload
(the bytes as they came, their hash, the validation match and its verdict).
``match_logs`` keeps each seat's private log of a match (its bot's debug texts and a
hosted bot's stderr), which only the bot's owner and the organisers read.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 04:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(
            sa.Column("hosted", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("code_version", sa.String(length=16), nullable=True))
    op.create_table(
        "bot_code",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=16), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("media_type", sa.String(length=32), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("files", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("uploaded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "version", name="uq_bot_code_version"),
    )
    op.create_index("ix_bot_code_bot_id", "bot_code", ["bot_id"])
    op.create_table(
        "match_logs",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("entries", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
        sa.PrimaryKeyConstraint("match_id", "seat"),
    )


def downgrade() -> None:
    op.drop_table("match_logs")
    op.drop_index("ix_bot_code_bot_id", table_name="bot_code")
    op.drop_table("bot_code")
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("code_version")
        batch.drop_column("hosted")
