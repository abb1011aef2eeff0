"""``/api/formats``: the tournament formats (``arena.competition.formats.FORMATS``) and the fields
each takes, for forms and clients that build a tournament's JSON."""

from __future__ import annotations

from typing import Any

from arena.api.common import ApiBlueprint
from arena.api.schemas.tournaments import FormatSchema
from arena.competition import formats

blp = ApiBlueprint(
    "formats",
    __name__,
    url_prefix="/api/formats",
    description="The formats a tournament can be played in.",
)


@blp.route("")
@blp.response(200, FormatSchema(many=True))
def formats_list() -> list[dict[str, Any]]:
    """Every tournament format: its name, words and fields, in the order offered

    A tournament (``POST /api/tournaments``) gives its ``format`` and that format's
    ``fields`` (those ``required`` and any others it wants), and no other format's.
    """
    return [
        {**fmt.to_json(), "default": fmt.name == formats.DEFAULT_FORMAT}
        for fmt in formats.FORMATS.values()
    ]
