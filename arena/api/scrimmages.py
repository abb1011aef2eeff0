"""``/api/scrimmages``: unrated matches a bot's owner asks for at once, against house bots
and bots that accept challenges (``arena.services.scrimmages`` says who may play whom).
The matches are written, then sent to the workers after the commit; they are read with
the other matches (``/api/matches?bot_id=``, ``kind`` scrimmage)."""

from __future__ import annotations

import logging
from typing import Any

from arena import services
from arena.api.common import (
    BEARER,
    ApiBlueprint,
    config,
    credentials_first,
    current_caller,
    database,
    nobody,
)
from arena.api.schemas.scrimmages import ScrimmageCreateSchema, ScrimmagesCreatedSchema
from arena.services import scrimmages
from arena.worker import queue

log = logging.getLogger(__name__)

blp = ApiBlueprint(
    "scrimmages",
    __name__,
    url_prefix="/api/scrimmages",
    description="Unrated matches on demand: try a bot against the house bots and the field.",
)


@blp.route("", methods=["POST"])
@credentials_first(nobody)
@blp.arguments(ScrimmageCreateSchema)
@blp.response(201, ScrimmagesCreatedSchema)
@blp.doc(security=BEARER)
def create(data: dict[str, Any]) -> dict[str, Any]:
    """Play unrated matches now: your bot against house bots and bots that accept challenges

    Only the bot's owner asks (its owner token, or its account).  ``opponents`` are house
    policies (``"heuristic"``, ``"random"``: they may repeat) and ids of bots that accept
    challenges (``accepts_challenges``, set by their owners) or that are yours, in the
    bot's event (or, both, in the open arena; an event's reference bots too).  The bot
    and its opponents must be a number of players the game allows (422 otherwise).  Each
    of ``matches`` tables gets a fresh seed, and the seats rotate from one to the next.
    The matches are unrated, in no tournament and no leaderboard, and a forfeit in them
    never counts toward pausing a bot.  A bot plays at most ``ARENA_SCRIMMAGES_PER_HOUR``
    scrimmage matches an hour, asked for or challenged: past it, 429 with
    ``Retry-After``.  A paused, disabled or deleted bot, a hosted one without a version
    that passed its validation, one that connects out and is not connected, and a
    person's seat are refused (409).
    """
    per_hour = config().scrimmages_per_hour
    with database().session() as session:
        who = current_caller(session)
        # locked: two requests for one bot are counted one after the other
        bot = services.get_bot(session, data["bot_id"], lock=True)
        made = scrimmages.create_scrimmages(
            session,
            who,
            bot,
            data["opponents"],
            data["matches"],
            game=data.get("game"),
            per_hour=per_hour,
        )
        body = {"match_ids": [m.id for m in made], "game": made[0].game, "per_hour": per_hour}
    try:
        queue.enqueue_matches(config(), body["match_ids"])
    except Exception:  # queued in the database: the wardens send them again
        log.exception("scrimmages %s: enqueueing them failed", body["match_ids"])
    return body
