"""The arena's Prometheus metrics: the web's ``/metrics`` (``arena.metrics.web``: the
state of the arena, read from the database at each scrape) and a worker's own endpoint
(``arena.metrics.worker``: what its process played, counted as it plays).  See
``docs/operations.md``, "Metrics and alerts", for every metric and the alerts on them.
"""
