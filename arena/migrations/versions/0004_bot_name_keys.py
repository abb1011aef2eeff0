"""bot name keys

A bot's name is unique once trimmed and case folded: ``" Alpha "``, ``"alpha"`` and
``"ALPHA"`` are one bot.  Bots get ``name_key`` (the name trimmed, each run of spaces
inside it one space, case folded), under a unique constraint, and every stored name is
trimmed the same way.

Existing bots whose keys collide (which the old rule allowed) are resolved the same way
on every database, whatever the order rows come back in: within each group of bots with
one key, one keeps its name, the first in the order (deleted last, then lowest id): the
oldest bot that is not deleted, or the oldest of the group if all are deleted.  Each other
bot of the group, in order of id, is renamed to its trimmed name followed by
`` #<its id>`` (the name shortened to keep within 64 characters), or `` #<id>-2``,
`` #<id>-3``... if the key of that is taken too.  Nothing else changes: ids, tokens,
secrets, matches and ratings stay; the bot page shows the new name.

The downgrade drops the key; renamed bots keep their new names and trimmed names stay
trimmed (both are valid names under the old rule).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 06:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

NAME_LENGTH = 64
BOTS = sa.table(
    "bots",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("name_key", sa.String),
    sa.column("status", sa.String),
)


# A migration is frozen in time: its own copy of the rule (arena.models has the live one).
def _name(name: str) -> str:
    return " ".join(name.split())


def _key(name: str) -> str:
    return _name(name).casefold()


def _renamed(name: str, bot_id: int, taken: set[str]) -> str:
    """The first of ``name #id``, ``name #id-2``... whose key is not taken."""
    attempt = 1
    while True:
        suffix = f" #{bot_id}" if attempt == 1 else f" #{bot_id}-{attempt}"
        candidate = _name(name)[: NAME_LENGTH - len(suffix)].rstrip() + suffix
        if _key(candidate) not in taken:
            return candidate
        attempt += 1


def new_names(rows: list[tuple[int, str, str]]) -> dict[int, str]:
    """``(id, name, status)`` of every bot -> each bot's name after the migration."""
    groups: dict[str, list[tuple[int, str, str]]] = {}
    for row in rows:
        groups.setdefault(_key(row[1]), []).append(row)
    taken = set(groups)  # every key in use now: a new name never takes one of them
    names = {}
    losers = []
    for group in groups.values():
        keeper, *others = sorted(group, key=lambda row: (row[2] == "deleted", row[0]))
        names[keeper[0]] = _name(keeper[1])
        losers += others
    for bot_id, name, _status in sorted(losers):
        names[bot_id] = _renamed(name, bot_id, taken)
        taken.add(_key(names[bot_id]))
    return names


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name_key", sa.String(length=192), nullable=True))
    connection = op.get_bind()
    rows = [
        tuple(row) for row in connection.execute(sa.select(BOTS.c.id, BOTS.c.name, BOTS.c.status))
    ]
    names = new_names(rows)
    old = {bot_id: name for bot_id, name, _status in rows}
    # the renamed bots first: then no new name is, even for a moment, another bot's name
    # (names stay unique at every statement, as PostgreSQL checks them)
    renamed = sorted(i for i in names if _key(names[i]) != _key(old[i]))
    for bot_id in renamed + sorted(set(names) - set(renamed)):
        connection.execute(
            BOTS.update()
            .where(BOTS.c.id == bot_id)
            .values(name=names[bot_id], name_key=_key(names[bot_id]))
        )
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.alter_column("name_key", existing_type=sa.String(length=192), nullable=False)
        batch_op.create_unique_constraint("uq_bots_name_key", ["name_key"])


def downgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_constraint("uq_bots_name_key", type_="unique")
        batch_op.drop_column("name_key")
