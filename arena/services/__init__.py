"""What the JSON API and the web pages share: registering bots, building tournaments,
who may read what (a bot's endpoint, a deal not yet over), and the read models
(leaderboard, progress, counts of matches, lists of matches).

No Flask here.  Every function takes a SQLAlchemy ``Session`` and leaves the commit to
its caller (``Database.session()`` commits on success and rolls back on any error, so a
``ServiceError`` raised half-way writes nothing).  Matches are enqueued by the caller,
after that commit.

One module per area, re-exported here (``services.create_tournament``):

- ``errors``: ``ServiceError`` and the bounds of ids and seeds;
- ``access``: owner tokens, signing secrets, the organiser token, ``Caller`` (who a
  request's credential makes its caller, and what that lets them do);
- ``accounts``: accounts, passwords, API tokens, reset links;
- ``events``: events, who sees them, their registration window, freeze and limits;
- ``bots``: registering, changing, rotating credentials, faults, deleting;
- ``tournaments``: validate, schedule and write a tournament; read and cancel it;
- ``deals``: what a deal not yet over keeps hidden;
- ``reads``: leaderboard, a bot's ratings, progress, counts and pages of matches;
- ``ladders``: each game's rated ladder switch.
"""

from __future__ import annotations

from arena.services.access import (
    ROTATABLE,
    SECRET_MAX_LENGTH,
    SECRET_MIN_LENGTH,
    SECRET_PATTERN,
    Caller,
    caller,
    check_admin,
    check_manages,
    check_visible,
    hash_token,
    new_token,
    signing_secret_problem,
    token_matches,
)
from arena.services.bots import (
    INFO_GAMES_CAP,
    INFO_TEXT_CAP,
    InfoFetcher,
    attach_bot,
    check_may_register,
    checked_info,
    connect_info,
    delete_bot,
    fetch_bot_info,
    get_bot,
    recent_faults,
    register_bot,
    rotate_credentials,
    update_bot,
)
from arena.services.deals import (
    deal_being_played,
    deal_hidden_message,
    deals_being_played,
    match_seed,
    tournament_seed,
)
from arena.services.errors import MAX_ID, MAX_SEED, ServiceError
from arena.services.ladders import ladders, set_ladder
from arena.services.reads import (
    bot_match_counts,
    bot_ratings,
    get_match,
    leaderboard,
    list_matches,
    played_by_bot,
    played_by_game,
    rating_view,
    tournament_progress,
)
from arena.services.tournaments import (
    BUILD_INLINE,
    Schedule,
    TournamentPlan,
    build_progress,
    cancel_tournament,
    check_entrants,
    create_final,
    create_tournament,
    game_engine,
    get_tournament,
    resolve_options,
    schedule_tournament,
    validate_tournament,
    write_tournament,
)

__all__ = [
    "BUILD_INLINE",
    "INFO_GAMES_CAP",
    "INFO_TEXT_CAP",
    "MAX_ID",
    "MAX_SEED",
    "ROTATABLE",
    "SECRET_MAX_LENGTH",
    "SECRET_MIN_LENGTH",
    "SECRET_PATTERN",
    "Caller",
    "InfoFetcher",
    "Schedule",
    "ServiceError",
    "TournamentPlan",
    "attach_bot",
    "bot_match_counts",
    "bot_ratings",
    "build_progress",
    "caller",
    "cancel_tournament",
    "check_admin",
    "check_entrants",
    "check_manages",
    "check_may_register",
    "check_visible",
    "checked_info",
    "connect_info",
    "create_final",
    "create_tournament",
    "deal_being_played",
    "deal_hidden_message",
    "deals_being_played",
    "delete_bot",
    "fetch_bot_info",
    "game_engine",
    "get_bot",
    "get_match",
    "get_tournament",
    "hash_token",
    "ladders",
    "leaderboard",
    "list_matches",
    "match_seed",
    "new_token",
    "played_by_bot",
    "played_by_game",
    "rating_view",
    "recent_faults",
    "register_bot",
    "resolve_options",
    "rotate_credentials",
    "schedule_tournament",
    "set_ladder",
    "signing_secret_problem",
    "token_matches",
    "tournament_progress",
    "tournament_seed",
    "update_bot",
    "validate_tournament",
    "write_tournament",
]
