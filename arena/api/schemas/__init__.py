"""Marshmallow schemas of the JSON API, one module per area: what it accepts (unknown fields
rejected, types strict, sizes bounded) and what it answers (an allow-list: tokens and
secrets are in no answer schema but the one of registration).

``fields`` holds what every area shares; ``bots``, ``tournaments``, ``matches``,
``ratings``, ``accounts``, ``events`` and ``exports`` hold each area's own."""
