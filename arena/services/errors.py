"""What every service shares: ``ServiceError`` (the user's mistake, with the status the
API answers) and the bounds of ids and seeds."""

from __future__ import annotations

from typing import Any

from arena.competition import formats

# Seeds stay below 2**53 so they survive a trip through JSON in a browser (a JavaScript
# number is a double) and fit the BigInteger column.
MAX_SEED = formats.MAX_SEED
MAX_ID = 2**63 - 1  # larger ids cannot exist and would overflow the database driver


class ServiceError(Exception):
    """Something the user got wrong (or asked for that does not exist): the API answers
    ``status`` with ``message``."""

    def __init__(self, status: int, message: str, **fields: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.fields = fields  # more for the error's JSON body (a 409's "reason", say)
