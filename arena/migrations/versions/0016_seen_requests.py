"""seen requests: the connect transport's replay guard, shared by every web process

``seen_requests`` holds the ``request_id`` of each signed request a bot that connects out
sent and a web process accepted, with when (``arena.relay.replays``): inserting an id
that is there already is a replay, whichever process it reaches.  Rows are needed only
while the request's timestamp could still be accepted (twice the allowed clock skew);
web processes delete older ones every so often.  An arena with Redis configured for its
rate limits keeps them there instead, and this table stays empty.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 06:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "seen_requests",
        sa.Column("request_id", sa.String(32), primary_key=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_seen_requests_seen_at", "seen_requests", ["seen_at"])


def downgrade() -> None:
    op.drop_index("ix_seen_requests_seen_at", table_name="seen_requests")
    op.drop_table("seen_requests")
