"""accounts, events, versions: running a class or a hackathon

``accounts`` (admin, organiser, contestant; argon2 password hashes; a one-time reset
link's hash) and their ``api_tokens``; ``events`` (a class, a hackathon: games,
visibility, join code, registration window, freeze, bots per account, its ladder) and
their ``event_members``.  A bot may belong to an account and play in an event
(``bots.account_id``, ``bots.event_id``) and says who paused it (``bots.paused_by``);
tournaments and matches say their event, a qualifier its pass rule and a final run the
tournament it was cloned from; a match seat keeps the version its bot declared when the
match started.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 03:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

NOW = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("name_key", sa.String(length=192), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("reset_token_hash", sa.String(length=64), nullable=True),
        sa.Column("reset_expires_at", NOW, nullable=True),
        sa.Column("session_epoch", sa.Integer(), nullable=False),
        sa.Column("created_at", NOW, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name_key"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=64), nullable=False),
        sa.Column("created_at", NOW, nullable=False),
        sa.Column("last_used_at", NOW, nullable=True),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_api_tokens_account_id", "api_tokens", ["account_id"])
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("games", sa.JSON(), nullable=False),
        sa.Column("visibility", sa.String(length=16), nullable=False),
        sa.Column("join_code", sa.String(length=32), nullable=False),
        sa.Column("bots_per_account", sa.Integer(), nullable=False),
        sa.Column("registration_opens_at", NOW, nullable=True),
        sa.Column("registration_closes_at", NOW, nullable=True),
        sa.Column("freeze_at", NOW, nullable=True),
        sa.Column("ladder", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(["created_by"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("join_code"),
    )
    op.create_table(
        "event_members",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("joined_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.ForeignKeyConstraint(["event_id"], ["events.id"]),
        sa.PrimaryKeyConstraint("event_id", "account_id"),
    )
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("account_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("event_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("paused_by", sa.String(length=16), nullable=True))
        batch.create_foreign_key("fk_bots_account_id", "accounts", ["account_id"], ["id"])
        batch.create_foreign_key("fk_bots_event_id", "events", ["event_id"], ["id"])
        batch.create_index("ix_bots_account_id", ["account_id"])
        batch.create_index("ix_bots_event_id", ["event_id"])
    # a bot the arena paused before accounts existed was paused by the arena
    op.execute("UPDATE bots SET paused_by = 'arena' WHERE status = 'paused'")
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("event_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("pass_rule", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("cloned_from", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_tournaments_event_id", "events", ["event_id"], ["id"])
        batch.create_foreign_key(
            "fk_tournaments_cloned_from", "tournaments", ["cloned_from"], ["id"]
        )
        batch.create_index("ix_tournaments_event_id", ["event_id"])
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("event_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_matches_event_id", "events", ["event_id"], ["id"])
        batch.create_index("ix_matches_event_id", ["event_id"])
    with op.batch_alter_table("match_seats") as batch:
        batch.add_column(sa.Column("version", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("match_seats") as batch:
        batch.drop_column("version")
    with op.batch_alter_table("matches") as batch:
        batch.drop_index("ix_matches_event_id")
        batch.drop_constraint("fk_matches_event_id", type_="foreignkey")
        batch.drop_column("event_id")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_index("ix_tournaments_event_id")
        batch.drop_constraint("fk_tournaments_cloned_from", type_="foreignkey")
        batch.drop_constraint("fk_tournaments_event_id", type_="foreignkey")
        batch.drop_column("cloned_from")
        batch.drop_column("pass_rule")
        batch.drop_column("event_id")
    with op.batch_alter_table("bots") as batch:
        batch.drop_index("ix_bots_event_id")
        batch.drop_index("ix_bots_account_id")
        batch.drop_constraint("fk_bots_event_id", type_="foreignkey")
        batch.drop_constraint("fk_bots_account_id", type_="foreignkey")
        batch.drop_column("paused_by")
        batch.drop_column("event_id")
        batch.drop_column("account_id")
    op.drop_table("event_members")
    op.drop_table("events")
    op.drop_index("ix_api_tokens_account_id", table_name="api_tokens")
    op.drop_table("api_tokens")
    op.drop_table("accounts")
