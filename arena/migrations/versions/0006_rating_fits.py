"""debounced refits of the fitted ratings

One row per game in ``rating_fits``: the newest ``rating_seq`` included in the stored
fit, and since when a refit has been running (its claim).  A refit claims the row, and
fits only when the game has rated results newer than its ``rating_seq``; existing games
start with no row, so their first refit fits.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 08:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rating_fits",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("rating_seq", sa.Integer(), nullable=True),
        sa.Column("running_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("game"),
    )


def downgrade() -> None:
    op.drop_table("rating_fits")
