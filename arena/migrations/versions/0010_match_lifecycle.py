"""match lifecycle: failures apart from lost leases, deals dealt once, settled results, pins

``failures`` counts attempts that failed for a reason of the match itself and
``lost_leases`` attempts whose worker lost its lease (only the first can fail a match);
``dealt`` says whether the match's seed has been dealt to bots (an attempt after that is
dealt anew); ``settled`` says whether a finished match's result is in the ratings and
standings.  Existing matches: failures are their attempts beyond the first for the failed
ones and none otherwise, every seed of a match that was ever claimed counts as dealt, and
every finished match is settled.  The rotations of a duplicate deal get an index.
``bot_pins`` says which worker process may send requests to a bot that declares its
capacity (how many requests it takes at once).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bot_pins",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"]),
        sa.PrimaryKeyConstraint("bot_id"),
    )
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("failures", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("lost_leases", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("dealt", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column("settled", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.create_index("ix_matches_tournament_deal", ["tournament_id", "deal"])
    op.execute("UPDATE matches SET failures = attempts WHERE status = 'failed'")
    op.execute("UPDATE matches SET dealt = (attempts > 0)")
    op.execute("UPDATE matches SET settled = (status = 'finished')")


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.drop_index("ix_matches_tournament_deal")
        batch.drop_column("settled")
        batch.drop_column("dealt")
        batch.drop_column("lost_leases")
        batch.drop_column("failures")
    op.drop_table("bot_pins")
