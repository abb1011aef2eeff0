"""name keys by look, and bots' signing secrets sealed

Names are compared as they look (``arena.models.bot_name_key``: compatibility forms and
look-alike letters of other alphabets folded, ``arena.names``), so every bot's and
account's ``name_key`` is computed again.  Two existing rows whose names now have one
key both stay, and both keep their names: the oldest (lowest id) gets the key, each
later one gets the key followed by two spaces and ``#<its id>``, which no name can have
(a key never holds two spaces in a row) and which therefore blocks nobody.  Keys are
unique at every statement (as PostgreSQL checks them): the rows whose key changes first
get a key of their own (two spaces and their id), then their new one.

``bots.signing_secret`` is widened for a Fernet token and every secret is sealed with the
newest key of ``ARENA_SECRETS_KEY`` (the local profile's key file when unset; the
production profile needs the variable: ``arena.sealing``).  The downgrade opens them
again with the same keys and gives back the case-folded keys of before (with the same
suffix for rows that would collide).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 06:00:00
"""

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

from arena.models import NAME_KEY_LENGTH, bot_name, bot_name_key
from arena.sealing import keyring

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

TABLES = [
    sa.table("bots", sa.column("id", sa.Integer), sa.column("name", sa.String),
             sa.column("name_key", sa.String)),
    sa.table("accounts", sa.column("id", sa.Integer), sa.column("name", sa.String),
             sa.column("name_key", sa.String)),
]  # fmt: skip
SECRETS = sa.table("bots", sa.column("id", sa.Integer), sa.column("signing_secret", sa.String))
OLD_SECRET_LENGTH = 128
SEALED_LENGTH = 512


def _apart(key: str, row_id: int) -> str:
    """A key for a later row whose name looks like an older one's: never a name's key."""
    suffix = f"  #{row_id}"
    return key[: NAME_KEY_LENGTH - len(suffix)] + suffix


def new_keys(rows: list[tuple[int, str]], key: Callable[[str], str]) -> dict[int, str]:
    """Each row's key: ``key(name)``, or, for a row after an older one with that key, one
    set apart."""
    keys: dict[int, str] = {}
    taken: set[str] = set()
    for row_id, name in sorted(rows):
        wanted = key(name)
        keys[row_id] = wanted if wanted not in taken else _apart(wanted, row_id)
        taken.add(keys[row_id])
    return keys


def _rekey(key: Callable[[str], str]) -> None:
    connection = op.get_bind()
    for table in TABLES:
        rows = list(connection.execute(sa.select(table.c.id, table.c.name, table.c.name_key)))
        keys = new_keys([(r.id, r.name) for r in rows], key)
        changed = sorted(r.id for r in rows if keys[r.id] != r.name_key)
        for phase in ("aside", "final"):  # no two rows share a key at any statement
            for row_id in changed:
                value = f"  #{row_id}" if phase == "aside" else keys[row_id]
                connection.execute(
                    table.update().where(table.c.id == row_id).values(name_key=value)
                )


def _reseal(change: Callable[[str], str]) -> None:
    connection = op.get_bind()
    rows = list(connection.execute(sa.select(SECRETS.c.id, SECRETS.c.signing_secret)))
    for row_id, secret in rows:
        connection.execute(
            SECRETS.update().where(SECRETS.c.id == row_id).values(signing_secret=change(secret))
        )


def upgrade() -> None:
    _rekey(bot_name_key)
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.alter_column(
            "signing_secret",
            existing_type=sa.String(OLD_SECRET_LENGTH),
            type_=sa.String(SEALED_LENGTH),
            existing_nullable=False,
        )
    if op.get_bind().execute(sa.select(sa.func.count()).select_from(SECRETS)).scalar():
        _reseal(keyring().seal)  # a new, empty database needs no key


def downgrade() -> None:
    if op.get_bind().execute(sa.select(sa.func.count()).select_from(SECRETS)).scalar():
        _reseal(keyring().open)
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.alter_column(
            "signing_secret",
            existing_type=sa.String(SEALED_LENGTH),
            type_=sa.String(OLD_SECRET_LENGTH),
            existing_nullable=False,
        )
    _rekey(lambda name: bot_name(name).casefold())
