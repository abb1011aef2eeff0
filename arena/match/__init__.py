"""Playing one match: the referee, the bots' transports and faults, the match records.

Nothing here opens a database session or talks to the broker: the worker
(``arena.worker``) and the command line (``arena.cli``) hand it bots and store what it
returns.  The SDK's local runner uses it through one module, ``arena.match.local``.
"""
