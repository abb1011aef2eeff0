"""What every service shares: ``ServiceError`` (the user's mistake, with the status the
API answers) and the bounds of ids and seeds."""

from __future__ import annotations

from typing import Any

from arena.competition import formats

# Seeds stay below 2**53 so they survive a trip through JSON in a browser (a JavaScript
# number is a double) and fit the BigInteger column.
MAX_SEED = formats.MAX_SEED
# Keys are INTEGER columns: 32 bits on PostgreSQL, where a larger id in a query is an
# error, not a miss.  No id above this can exist: every id the API reads is checked
# against it (a 404 in a path, a 422 in a body or a query: ``arena.api.common.IdConverter``,
# ``arena.api.schemas.fields.id_field``), and every lookup by id here.
MAX_ID = 2**31 - 1


class ServiceError(Exception):
    """Something the user got wrong (or asked for that does not exist): the API answers
    ``status`` with ``message``."""

    def __init__(self, status: int, message: str, **fields: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.fields = fields  # more for the error's JSON body (a 409's "reason", say)
