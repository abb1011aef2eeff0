"""Playing one match: the referee, the bots' transports and faults, the match records.

Nothing here knows of the database or the broker: the worker (``arena.worker``) and the
command line (``arena.cli``) hand it bots and store what it returns.
"""
