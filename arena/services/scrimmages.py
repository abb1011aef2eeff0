"""Scrimmages: unrated matches a bot's owner asks for at once, against house bots and
bots whose owners accept challenges, to try the bot against the field whenever they like.

``create_scrimmages`` writes ``n`` matches (``kind`` ``scrimmage``, ``rated`` false,
queued, each with a fresh seed) seating the bot and its opponents, the seats rotated from
one match to the next so that the bot does not always play first.  Who and what:

- only the bot's **owner** asks (its owner token, or the account it belongs to): the
  matches spend the bot's hourly allowance and call its endpoint, which is the owner's
  to decide; an organiser has tournaments for that;
- the bot and every bot it challenges are active bots (not paused, disabled or deleted;
  not a person's seat; a hosted one with a version of its code that passed its
  validation; one that connects out connected now);
- an opponent is a house policy (``"heuristic"``, ``"random"``: anywhere, as often as
  the table has seats), or a bot that accepts challenges (``Bot.accepts_challenges``,
  its owner's switch) or that the same owner owns, **in the same event** as the bot (or,
  both, in the open arena; an event's reference bots are offered to its bots as they are
  to its tournaments); a bot sits once at a table;
- the game is the one asked for, else the bot's first game that every opponent plays;
  one bot and its opponents must be a number of players the game allows;
- every bot of a scrimmage (the one asking and those challenged; not the house bots)
  plays at most ``per_hour`` scrimmage matches an hour (``ARENA_SCRIMMAGES_PER_HOUR``),
  counted from the scrimmages created in the last hour it has a seat in: that bounds
  what one owner asks for and how often anyone's endpoint is called by others' tries.

Scrimmages never touch a rating, a leaderboard or a tournament (they are unrated and in
no tournament), and their forfeits never count toward pausing a bot
(``arena.worker.lifecycle.settle``).  Their deals are hidden while they are played, as
every match's are.  No Flask here; the caller sends the matches to the workers after its
commit.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.games import GAMES, POLICIES
from arena.models import Bot, Match, MatchSeat, aware, utcnow
from arena.relay import sessions

# people and tournaments as modules: the worker's lifecycle reads SCRIMMAGE while they
# are still being imported (tournaments imports the lifecycle)
from arena.services import people, tournaments
from arena.services.access import Caller, check_visible
from arena.services.errors import MAX_ID, MAX_SEED, ServiceError

SCRIMMAGE = "scrimmage"  # the kind of a scrimmage match
MAX_MATCHES = 100  # one request's matches at most (the hourly limit bounds them first)
WINDOW = dt.timedelta(hours=1)  # the hourly limit's window
DEFAULT_PER_HOUR = 30


def house_names() -> list[str]:
    """Every house policy an opponent may name, in any game."""
    return sorted({policy for game in POLICIES.values() for policy in game})


def create_scrimmages(
    session: Session,
    who: Caller,
    bot: Bot,
    opponents: Sequence[int | str],
    matches: int,
    *,
    game: str | None = None,
    per_hour: int = DEFAULT_PER_HOUR,
    now: dt.datetime | None = None,
) -> list[Match]:
    """``matches`` queued scrimmages of ``bot`` against ``opponents`` (bot ids and house
    policy names), in order of creation; every check of the module's docstring first,
    nothing written when one fails.  Lock the bot's row first (two requests at once are
    counted one after the other)."""
    now = now or utcnow()
    check_asks(session, who, bot)
    check_plays(session, bot, f"bot {bot.id}")
    if not 1 <= matches <= min(MAX_MATCHES, per_hour):
        raise ServiceError(
            422,
            f"matches: ask for 1 to {min(MAX_MATCHES, per_hour)} matches "
            f"(a bot plays at most {per_hour} scrimmage matches an hour)",
        )
    seated = _opponents(session, who, bot, opponents)
    chosen = choose_game(bot, seated, game)
    engine = GAMES[chosen]
    players = 1 + len(seated)
    if not engine.min_players <= players <= engine.max_players:
        raise ServiceError(
            422,
            f"{engine.id} is played by {engine.min_players} to {engine.max_players} players: "
            f"the bot and {engine.min_players - 1} to {engine.max_players - 1} opponents, "
            f"not {len(seated)}",
        )
    check_allowance(
        session, [bot, *(b for b in seated if b.kind != "house")], matches, per_hour, now
    )
    table = [bot, *seated]
    options = tournaments.resolve_options(engine, None)
    rng = random.SystemRandom()
    made = []
    for number in range(matches):
        turn = number % players  # the seats rotate: the bot sits at each in turn
        order = table[turn:] + table[:turn]
        match = Match(
            kind=SCRIMMAGE,
            game=engine.id,
            options=options,
            seed=rng.randrange(MAX_SEED + 1),
            status="queued",
            rated=False,
            event_id=bot.event_id,
            created_at=now,
        )
        match.seats = [MatchSeat(seat=seat, bot_id=b.id) for seat, b in enumerate(order)]
        session.add(match)
        made.append(match)
    session.flush()
    return made


def check_asks(session: Session, who: Caller, bot: Bot) -> None:
    """Only the bot's owner (its owner token, its account) asks for its scrimmages: 401
    without a credential, 403 for anyone else, 404 for who may not see the bot."""
    if who.owns(bot):
        return
    check_visible(session, who, bot.event_id, f"bot {bot.id}")
    if who.anonymous:
        raise ServiceError(
            401, "a scrimmage needs the bot's owner token or its account: Authorization: Bearer"
        )
    raise ServiceError(403, f"only the owner of bot {bot.id} asks for its scrimmages")


def check_plays(session: Session, bot: Bot, what: str) -> None:
    """409 unless ``bot`` (``what``: "bot 3", "opponent 4") can play a scrimmage now."""
    if bot.kind == "person":
        raise ServiceError(409, f"{what} is a person's seat, not a bot: it plays no scrimmage")
    if bot.kind == "house":
        raise ServiceError(409, f"{what} is a house bot: name its policy as an opponent instead")
    if bot.status != "active":
        why = {
            "paused": "paused (its owner sets it active again once its cause is fixed)",
            "disabled": "disabled by its owner",
            "deleted": "deleted",
        }.get(bot.status, bot.status)
        raise ServiceError(409, f"{what} is {why}: it plays no scrimmage")
    if bot.hosted and not bot.code_version:
        raise ServiceError(
            409, f"{what} is hosted and no version of its code has passed its validation yet"
        )
    if bot.connect and bot.id not in sessions.online(session, [bot.id]):
        raise ServiceError(
            409, f"{what} connects out and is not connected now: start it, then ask again"
        )


def _opponents(session: Session, who: Caller, bot: Bot, wanted: Sequence[int | str]) -> list[Bot]:
    """The opponents' rows, in the order asked: house bots for policy names, else bots
    the bot may challenge."""
    seated: list[Bot] = []
    seen: set[int] = set()
    known = house_names()
    for item in wanted:
        if isinstance(item, str):
            if item not in known:
                raise ServiceError(
                    422, f"no house policy {item!r}: the policies are {', '.join(known)}"
                )
            seated.append(people.house_bot(session, item))
            continue
        if item == bot.id:
            raise ServiceError(422, f"bot {bot.id} cannot be its own opponent")
        if item in seen:
            raise ServiceError(422, f"bot {item} is named twice: a bot sits once at a table")
        seen.add(item)
        seated.append(_challenged(session, who, bot, item))
    session.flush()  # a house bot made on first use has its id
    return seated


def _challenged(session: Session, who: Caller, bot: Bot, opponent_id: int) -> Bot:
    """Bot ``opponent_id``, if ``bot`` may challenge it."""
    other = session.get(Bot, opponent_id) if 0 < opponent_id <= MAX_ID else None
    if other is not None:
        try:
            check_visible(session, who, other.event_id, f"bot {opponent_id}")
        except ServiceError:
            other = None  # a private event's bot is told of as one that does not exist
    if other is None or (other.status == "deleted" and not who.owns(other)):
        raise ServiceError(422, f"no bot {opponent_id}")
    what = f"opponent {opponent_id} ({other.name})"
    if other.kind == "house":
        policy = (other.info or {}).get("policy", "")
        raise ServiceError(422, f'{what} is a house bot: name its policy ("{policy}") instead')
    check_plays(session, other, what)
    offered = bot.event_id is not None and other.reference
    if other.event_id != bot.event_id and not offered:
        where = "the open arena" if bot.event_id is None else f"event {bot.event_id}"
        theirs = "the open arena" if other.event_id is None else f"event {other.event_id}"
        raise ServiceError(
            403,
            f"{what} plays in {theirs} and bot {bot.id} in {where}: a scrimmage seats bots "
            "of one event (or of the open arena) and house bots",
        )
    if not other.accepts_challenges and not who.owns(other):
        raise ServiceError(403, f"{what} does not accept challenges: its owner has not allowed it")
    return other


def choose_game(bot: Bot, opponents: Sequence[Bot], game: str | None) -> str:
    """The game asked for, if the bot and every opponent play it; else the bot's first
    game that they all play; 422 when there is none."""

    def plays(other: Bot, game_id: str) -> bool:
        if other.kind == "house":
            return (other.info or {}).get("policy") in POLICIES.get(game_id, {})
        return game_id in (other.games or [])

    if game is not None:
        if game not in GAMES or game not in (bot.games or []):
            raise ServiceError(422, f"bot {bot.id} does not play {game}")
        for other in opponents:
            if not plays(other, game):
                raise ServiceError(422, f"opponent {other.name} does not play {game}")
        return game
    for candidate in bot.games or []:
        if candidate in GAMES and all(plays(other, candidate) for other in opponents):
            return candidate
    raise ServiceError(422, f"bot {bot.id} and its opponents have no game in common: give them one")


def check_allowance(
    session: Session, bots: Sequence[Bot], matches: int, per_hour: int, now: dt.datetime
) -> None:
    """429 when ``matches`` more would take one of ``bots`` past ``per_hour`` scrimmage
    matches in the last hour, saying when it may ask again (``retry_after``: seconds)."""
    since = now - WINDOW
    recent: dict[int, list[dt.datetime]] = {b.id: [] for b in bots}
    rows = session.execute(
        select(MatchSeat.bot_id, Match.created_at)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            Match.kind == SCRIMMAGE,
            Match.created_at >= since,
            MatchSeat.bot_id.in_(list(recent)),
        )
    )
    for bot_id, created_at in rows:
        recent[bot_id].append(aware(created_at))
    for bot in bots:
        moments = sorted(recent[bot.id])
        over = len(moments) + matches - per_hour
        if over <= 0:
            continue
        free_at = moments[over - 1] + WINDOW  # when enough of them have left the window
        seconds = max(1, math.ceil((free_at - now).total_seconds()))
        left = max(0, per_hour - len(moments))
        asker = bot is bots[0]
        whose = f"bot {bot.id}" if asker else f"opponent {bot.id} ({bot.name})"
        raise ServiceError(
            429,
            f"{whose} has played {len(moments)} of its {per_hour} scrimmage matches an hour "
            f"({left} left now): {matches} more may be asked for at "
            f"{free_at.strftime('%H:%M:%S')} UTC, in {seconds} s",
            retry_after=seconds,
        )


def challengeable(session: Session, bot: Bot, game_ids: Sequence[str] | None = None) -> list[Bot]:
    """The bots ``bot`` may challenge whatever the caller: active, accepting challenges,
    in its event (or, both, in the open arena; an event's reference bots too), playing
    one of ``game_ids`` (default: its games); by name."""
    games = set(bot.games if game_ids is None else game_ids)
    same = Bot.event_id.is_(None) if bot.event_id is None else Bot.event_id == bot.event_id
    query = select(Bot).where(
        Bot.kind == "bot",
        Bot.status == "active",
        Bot.accepts_challenges.is_(True),
        Bot.id != bot.id,
    )
    if bot.event_id is not None:
        query = query.where(same | Bot.reference.is_(True))
    else:
        query = query.where(same)
    rows = session.scalars(query.order_by(Bot.name_key))
    return [b for b in rows if games & set(b.games or []) and not (b.hosted and not b.code_version)]
