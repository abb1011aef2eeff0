"""a semester's loop: reference bots, challenges, every bot validated, notices, time banks,
and a deleted bot's name free again

``bots.reference`` marks a bot an organiser offers in every event (the house bots are
always offered); ``bots.accepts_challenges`` lets others pick it for a scrimmage.
``bots.validation_*`` keep the verdict of the bot's last validation match (a hosted bot's
versions keep theirs in ``bot_code``).  ``accounts.notify_url`` (and the sealed
``notify_secret`` its posts are signed with) and ``accounts.email`` say where an account's
notices go; ``notices`` keeps them.  ``tournaments.time_bank_ms`` is the time a bot may
draw on, per match, past its decisions' deadlines; ``tournaments.created_by`` the account
that started it.

A bot's name was unique among every bot, deleted ones too; now only among those not
deleted: the unique constraints on ``name`` and ``name_key`` give way to a unique index on
``name_key`` over the bots whose status is not ``deleted``.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29 07:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

# the unnamed unique constraint of 0001 on bots.name, named for SQLite's batch mode
NAMING = {"uq": "uq_%(table_name)s_%(column_0_name)s"}
LIVE = sa.text("status <> 'deleted'")


def _name_constraints(bind: sa.engine.Connection) -> list[str]:
    """The unique constraints on ``name`` or ``name_key`` alone, by name (0001 left the one
    on ``name`` unnamed: NAMING names it for SQLite's batch mode)."""
    found = sa.inspect(bind).get_unique_constraints("bots")
    return [
        unique["name"]
        or NAMING["uq"] % {"table_name": "bots", "column_0_name": unique["column_names"][0]}
        for unique in found
        if unique["column_names"] in (["name"], ["name_key"])
    ]


def upgrade() -> None:
    bind = op.get_bind()
    names = _name_constraints(bind)
    with op.batch_alter_table("bots", naming_convention=NAMING) as batch:
        for name in names:
            batch.drop_constraint(name, type_="unique")
        batch.add_column(
            sa.Column("reference", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column("accepts_challenges", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("validation_status", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("validation_reason", sa.String(length=500), nullable=True))
        batch.add_column(sa.Column("validation_match_id", sa.Integer(), nullable=True))
    op.create_index(
        "uq_bots_live_name_key",
        "bots",
        ["name_key"],
        unique=True,
        sqlite_where=LIVE,
        postgresql_where=LIVE,
    )
    with op.batch_alter_table("accounts") as batch:
        batch.add_column(sa.Column("notify_url", sa.String(length=512), nullable=True))
        batch.add_column(sa.Column("notify_secret", sa.String(length=512), nullable=True))
        batch.add_column(sa.Column("email", sa.String(length=254), nullable=True))
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("time_bank_ms", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("created_by", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_tournaments_created_by", "accounts", ["created_by"], ["id"])
    op.create_table(
        "notices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=True),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("deliveries", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_notices_account_id", "notices", ["account_id"])


def downgrade() -> None:
    op.drop_index("ix_notices_account_id", table_name="notices")
    op.drop_table("notices")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_constraint("fk_tournaments_created_by", type_="foreignkey")
        batch.drop_column("created_by")
        batch.drop_column("time_bank_ms")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("email")
        batch.drop_column("notify_secret")
        batch.drop_column("notify_url")
    op.drop_index("uq_bots_live_name_key", table_name="bots")
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("validation_match_id")
        batch.drop_column("validation_reason")
        batch.drop_column("validation_status")
        batch.drop_column("accepts_challenges")
        batch.drop_column("reference")
        # fails where two bots, one deleted, now share a name: as it should
        batch.create_unique_constraint("uq_bots_name_key", ["name_key"])
        batch.create_unique_constraint("bots_name_key", ["name"])
