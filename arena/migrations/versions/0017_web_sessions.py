"""web sessions: a page's login session is a row, ended on the server

``web_sessions`` holds one row per live login session of the pages (the hash of the id
its signed cookie carries, the account, when it logged in).  Every request of a page's
session looks its row up: logging out deletes it, so a copy of the cookie taken before
is refused; a new password, and signing out everywhere (the account's own, or its
organiser's from the event's roster), delete every row of the account, with its API
tokens.  Before this revision a session was the signed cookie alone: the sessions open
when it runs have no row and end (everyone logs in once more).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29 01:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_web_sessions_account_id", "web_sessions", ["account_id"])
    op.create_index("ix_web_sessions_created_at", "web_sessions", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_web_sessions_created_at", table_name="web_sessions")
    op.drop_index("ix_web_sessions_account_id", table_name="web_sessions")
    op.drop_table("web_sessions")
