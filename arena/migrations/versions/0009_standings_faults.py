"""standings count faults; the stop rule takes results in schedule order

``tournament_entries`` gains ``faults`` (answers that were faults), ``forfeits`` and
``struck_out`` (matches), filled from the finished matches of existing tournaments; and
``sprt_through`` and ``sprt_waiting``: the last match a gauntlet challenger's stop rule
has gone past, and the finished matches after it waiting for an earlier one to end.

The stop rule of an existing gauntlet has taken its results in finishing order until
now.  Its observations are kept as they are, decisions included, and it goes on in
schedule order after the newest match it observed: a match scheduled before that one
and still open then is not observed when it finishes (it still counts in the standings).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 09:00:00
"""

from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COLUMNS = ("sprt_through", "sprt_waiting", "faults", "forfeits", "struck_out")

matches = sa.table(
    "matches",
    sa.column("id", sa.Integer),
    sa.column("tournament_id", sa.Integer),
    sa.column("status", sa.String),
    sa.column("deal", sa.Integer),
    sa.column("result", sa.JSON),
)
seats = sa.table(
    "match_seats",
    sa.column("match_id", sa.Integer),
    sa.column("seat", sa.Integer),
    sa.column("bot_id", sa.Integer),
    sa.column("rank", sa.Integer),
    sa.column("forfeited", sa.Boolean),
    sa.column("faults", sa.JSON),
)
entries = sa.table(
    "tournament_entries",
    sa.column("tournament_id", sa.Integer),
    sa.column("bot_id", sa.Integer),
    sa.column("challenger", sa.Boolean),
    sa.column("sprt_decision", sa.String),
    *(sa.column(name, sa.Integer) for name in COLUMNS),
)
tournaments = sa.table(
    "tournaments", sa.column("id", sa.Integer), sa.column("seats_per_match", sa.Integer)
)


def upgrade() -> None:
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        for name in COLUMNS:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
    bind = op.get_bind()
    _fill_faults(bind)
    _fill_stop_rule(bind)


def _fill_faults(bind: sa.Connection) -> None:
    """Faults, forfeits and matches struck out per entry, from its finished matches (the
    sums ``arena.competition.standings.record_result`` keeps from now on)."""
    rows = bind.execute(
        sa.select(
            matches.c.tournament_id,
            matches.c.result,
            seats.c.seat,
            seats.c.bot_id,
            seats.c.forfeited,
            seats.c.faults,
        )
        .join(seats, seats.c.match_id == matches.c.id)
        .where(
            matches.c.tournament_id.is_not(None),
            matches.c.status == "finished",
            seats.c.rank.is_not(None),
        )
    )
    totals: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for tournament_id, result, seat, bot_id, forfeited, faults in rows:
        total = totals[tournament_id, bot_id]
        total[0] += int((faults or {}).get("count", 0))
        total[1] += bool(forfeited)
        total[2] += seat in ((result or {}).get("struck_out") or ())
    _update(
        bind, {key: dict(zip(COLUMNS[2:], value, strict=True)) for key, value in totals.items()}
    )


def _fill_stop_rule(bind: sa.Connection) -> None:
    """Each challenger's stop rule goes on after the newest match it has observed: its
    finished matches (with duplicate deals, the deals whose rotations all finished)."""
    size = dict(bind.execute(sa.select(tournaments.c.id, tournaments.c.seats_per_match)).all())
    rows = bind.execute(
        sa.select(
            entries.c.tournament_id,
            entries.c.bot_id,
            entries.c.sprt_decision,
            matches.c.id,
            matches.c.status,
            matches.c.deal,
        )
        .join(matches, matches.c.tournament_id == entries.c.tournament_id)
        .join(seats, (seats.c.match_id == matches.c.id) & (seats.c.bot_id == entries.c.bot_id))
        .where(entries.c.challenger.is_(True))
        .order_by(entries.c.tournament_id, entries.c.bot_id, matches.c.id)
    )
    units: dict[tuple[int, int], dict[object, list[tuple[int, bool]]]] = defaultdict(dict)
    decided: dict[tuple[int, int], bool] = {}
    for tournament_id, bot_id, decision, match_id, status, deal in rows:
        unit = ("deal", deal) if deal is not None else ("match", match_id)
        units[tournament_id, bot_id].setdefault(unit, []).append((match_id, status == "finished"))
        decided[tournament_id, bot_id] = decision is not None
    values = {}
    for (tournament_id, bot_id), by_unit in units.items():
        observed = [
            match_id
            for unit, played in by_unit.items()
            if all(done for _, done in played)
            and (unit[0] == "match" or len(played) >= size[tournament_id])
            for match_id, _ in played
        ]
        through = max(observed, default=0)
        waiting = sum(
            done and match_id > through for played in by_unit.values() for match_id, done in played
        )
        values[tournament_id, bot_id] = {
            "sprt_through": through,
            "sprt_waiting": 0 if decided[tournament_id, bot_id] else waiting,
        }
    _update(bind, values)


def _update(bind: sa.Connection, values: dict[tuple[int, int], dict[str, int]]) -> None:
    for (tournament_id, bot_id), columns in sorted(values.items()):
        bind.execute(
            entries.update()
            .where(entries.c.tournament_id == tournament_id, entries.c.bot_id == bot_id)
            .values(**columns)
        )


def downgrade() -> None:
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
