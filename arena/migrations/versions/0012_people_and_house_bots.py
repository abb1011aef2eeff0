"""people at the table and house bots: what kind of player a bot row is

``bots.kind`` says who answers for a row: ``bot`` (a contestant's program, as before),
``house`` (one of the arena's own policies, played in the worker) or ``person`` (a
person's browser, over the connect transport).  ``bots.playable``: the owner lets people
pick the bot as an opponent at ``/play``.  ``bots.deadline_ms``: the deadline of each of
the row's decisions when it is not the arena's (a person's, set per match).  Matches
started from ``/play`` have the kind ``play``.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 01:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="bot")
        )
        batch.add_column(
            sa.Column("playable", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("deadline_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("deadline_ms")
        batch.drop_column("playable")
        batch.drop_column("kind")
