"""Hosted bots: code the arena runs for its owner (the third transport).

``bundles`` checks an upload (a Python file or a zip) and unpacks it safely;
``sandbox`` starts the runner in bubblewrap; ``client`` is the referee's client of a
hosted seat (one warm, sandboxed process per seat per match)."""
