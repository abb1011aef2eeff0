"""tournament formats, duplicate deals and standings kept as matches finish

A tournament has a format (``round_robin``, ``balanced``, ``gauntlet``) and a deal
(``independent``, ``duplicate``); ``games_per_pairing`` belongs to the round robin only
and may be null; ``matches_per_bot``, the gauntlet's stop rule and the schedule's
balance are new.  A match may belong to a duplicate deal.  Standings and the crosstable
become rows updated with each result (``tournament_entries`` columns and
``tournament_pairs``); existing tournaments are filled from their finished matches, so
their pages show what they showed before.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 09:00:00
"""

from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ENTRY_COUNTS = ("matches", "wins", "rank_sum", "deals", "sprt_n")
ENTRY_SUMS = ("points", "par_points", "sprt_total", "sprt_total_sq")


def upgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("format", sa.String(16), nullable=False, server_default="round_robin")
        )
        batch_op.add_column(
            sa.Column("deal", sa.String(16), nullable=False, server_default="independent")
        )
        batch_op.add_column(sa.Column("matches_per_bot", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("sprt", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("balance", sa.JSON(), nullable=True))
        batch_op.alter_column("games_per_pairing", existing_type=sa.Integer(), nullable=True)
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("challenger", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        for name in ENTRY_COUNTS:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
        for name in ENTRY_SUMS:
            batch_op.add_column(sa.Column(name, sa.Float(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("sprt_llr", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("sprt_decision", sa.String(2), nullable=True))
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deal", sa.Integer(), nullable=True))
    op.create_table(
        "tournament_pairs",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("opponent_id", sa.Integer(), sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("draws", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("losses", sa.Integer(), nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("tournament_id", "bot_id", "opponent_id"),
    )
    _fill_standings()


def _fill_standings() -> None:
    """Standings and crosstable of the existing tournaments, from their finished matches
    (the same sums the pages computed on every request until now)."""
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT m.tournament_id, s.match_id, s.bot_id, s.rank FROM match_seats s "
            "JOIN matches m ON m.id = s.match_id "
            "WHERE m.tournament_id IS NOT NULL AND m.status = 'finished' "
            "AND s.rank IS NOT NULL ORDER BY s.match_id, s.seat"
        )
    )
    matches: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for tournament_id, match_id, bot_id, rank in rows:
        matches[tournament_id, match_id].append((bot_id, rank))
    entries: dict[tuple[int, int], dict[str, float]] = defaultdict(
        lambda: {"matches": 0, "wins": 0, "rank_sum": 0, "points": 0.0}
    )
    pairs: dict[tuple[int, int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for (tournament_id, _), seats in matches.items():
        firsts = sum(rank == 1 for _, rank in seats)
        for bot_id, rank in seats:
            entry = entries[tournament_id, bot_id]
            entry["matches"] += 1
            entry["rank_sum"] += rank
            entry["wins"] += rank == 1 and firsts == 1
            for other, other_rank in seats:
                if other == bot_id:
                    continue
                outcome = 0 if rank < other_rank else 1 if rank == other_rank else 2
                entry["points"] += (1.0, 0.5, 0.0)[outcome]
                pairs[tournament_id, bot_id, other][outcome] += 1
    for (tournament_id, bot_id), entry in entries.items():
        bind.execute(
            sa.text(
                "UPDATE tournament_entries SET matches = :matches, wins = :wins, "
                "rank_sum = :rank_sum, points = :points "
                "WHERE tournament_id = :tournament_id AND bot_id = :bot_id"
            ),
            {**entry, "tournament_id": tournament_id, "bot_id": bot_id},
        )
    if pairs:
        bind.execute(
            sa.text(
                "INSERT INTO tournament_pairs "
                "(tournament_id, bot_id, opponent_id, wins, draws, losses) "
                "VALUES (:tournament_id, :bot_id, :opponent_id, :wins, :draws, :losses)"
            ),
            [
                {
                    "tournament_id": t,
                    "bot_id": a,
                    "opponent_id": b,
                    "wins": w,
                    "draws": d,
                    "losses": lost,
                }
                for (t, a, b), (w, d, lost) in sorted(pairs.items())
            ],
        )


def downgrade() -> None:
    op.drop_table("tournament_pairs")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("deal")
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        for name in ("sprt_decision", "sprt_llr", *ENTRY_SUMS, *ENTRY_COUNTS, "challenger"):
            batch_op.drop_column(name)
    # a tournament of another format has no games per pairing: 0 keeps the old NOT NULL
    op.execute("UPDATE tournaments SET games_per_pairing = 0 WHERE games_per_pairing IS NULL")
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.alter_column("games_per_pairing", existing_type=sa.Integer(), nullable=False)
        for name in ("balance", "sprt", "matches_per_bot", "deal", "format"):
            batch_op.drop_column(name)
