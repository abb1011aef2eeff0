"""What the JSON API and the web pages share: registering bots, building tournaments,
who may read what (a bot's endpoint, a deal not yet over), and the read models
(leaderboard, progress, counts of matches, lists of matches).

No Flask here.  Every function takes a SQLAlchemy ``Session`` and leaves the commit to
its caller (``Database.session()`` commits on success and rolls back on any error, so a
``ServiceError`` raised half-way writes nothing).  Matches are enqueued by the caller,
after that commit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from arena.competition import formats
from arena.config import Config
from arena.games import GAMES, get_game
from arena.games.base import Game, OptionsError
from arena.match.faults import BotFault, excerpt
from arena.match.http_client import PROTOCOL_VERSION, HttpClient
from arena.match.pools import MAX_CAPACITY
from arena.models import (
    MATCH_OPEN,
    MATCH_STATUSES,
    Bot,
    FittedRating,
    Ladder,
    Match,
    MatchSeat,
    Rating,
    Tournament,
    TournamentEntry,
    bot_name,
    bot_name_key,
    utcnow,
)
from arena.worker import lifecycle

# Seeds stay below 2**53 so they survive a trip through JSON in a browser (a JavaScript
# number is a double) and fit the BigInteger column.
MAX_SEED = formats.MAX_SEED
MAX_ID = 2**63 - 1  # larger ids cannot exist and would overflow the database driver
BOT_STATUSES = ("active", "paused", "disabled", "deleted")
PLAYED = "finished"  # the matches a count of played matches counts
LIVE_VIEWS = ("public", "everyone")  # who sees hidden cards while a match is played
# what is kept of a bot's answer to GET / (it is untrusted and shown on pages)
INFO_TEXT_CAP = 200
INFO_GAMES_CAP = 32
# a signing secret its owner chooses: printable ASCII without spaces (it goes on a command
# line or into an environment variable), long enough not to be guessed, and it must fit
# the column
SECRET_MIN_LENGTH = 16
SECRET_MAX_LENGTH = 128
SECRET_PATTERN = re.compile(r"[\x21-\x7e]+")
ROTATABLE = ("owner_token", "signing_secret")

InfoFetcher = Callable[[str], dict[str, Any]]


class ServiceError(Exception):
    """Something the user got wrong (or asked for that does not exist): the API answers
    ``status`` with ``message``."""

    def __init__(self, status: int, message: str, **fields: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.fields = fields  # more for the error's JSON body (a 409's "reason", say)


# -- tokens ------------------------------------------------------------------------------
def new_token() -> str:
    # never starting with "-": a bot started with ``--secret <token>`` would read it as
    # an option
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def hash_token(token: str) -> str:
    # Tokens are 256 random bits, not passwords: nothing can be guessed, so a plain
    # (unsalted, fast) hash is enough, and being deterministic it can be looked up.
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, hashed: str) -> bool:
    return hmac.compare_digest(hash_token(token), hashed)


def check_owner(session: Session, bot: Bot, token: str | None) -> None:
    """401 without a valid owner token, 403 for the token of another bot's owner."""
    if not token:
        raise ServiceError(401, "this needs the bot's owner token: Authorization: Bearer <token>")
    if token_matches(token, bot.owner_token_hash):
        return
    known = session.scalar(select(Bot.id).where(Bot.owner_token_hash == hash_token(token)).limit(1))
    if known is None:
        raise ServiceError(401, "the owner token is not valid")
    raise ServiceError(403, f"bot {bot.id} belongs to another owner")


def signing_secret_problem(secret: str) -> str | None:
    """Why a signing secret chosen by its owner is refused, or None."""
    if not SECRET_MIN_LENGTH <= len(secret) <= SECRET_MAX_LENGTH:
        return (
            f"a signing secret must be {SECRET_MIN_LENGTH} to {SECRET_MAX_LENGTH} characters "
            f"long (this one has {len(secret)})"
        )
    if not SECRET_PATTERN.fullmatch(secret):
        return "a signing secret may contain only printable ASCII characters, without spaces"
    return None


def check_organiser(config: Config, token: str | None) -> None:
    """Open when no organiser token is configured; else 401 without the right token."""
    if config.organiser_token is None:
        return
    if not token:
        raise ServiceError(401, "this needs the organiser token: Authorization: Bearer <token>")
    if not hmac.compare_digest(token.encode(), config.organiser_token.encode()):
        raise ServiceError(401, "the organiser token is not valid")


@dataclasses.dataclass(frozen=True)
class Reader:
    """Who reads the bots: the organiser, the owner of one bot (by its owner token), or
    anyone.  A bot's endpoint is an address anyone could flood: only its owner and the
    organiser see it."""

    organiser: bool = False
    bot_id: int | None = None  # the bot whose owner token was given

    def sees_endpoint(self, bot: Bot) -> bool:
        return self.organiser or (self.bot_id is not None and bot.id == self.bot_id)


def reader(session: Session, config: Config, token: str | None) -> Reader:
    """Who a read's bearer token makes the caller: anyone without one, the organiser with
    the configured organiser token, a bot's owner with its owner token; 401 for any other
    token (a mistyped token is told, not read as no token).

    Unlike ``check_organiser``, a server without an organiser token has no organiser
    here: reading other people's endpoints is never open, only starting tournaments is."""
    if not token:
        return Reader()
    organiser = config.organiser_token
    if organiser is not None and hmac.compare_digest(token.encode(), organiser.encode()):
        return Reader(organiser=True)
    bot_id = session.scalar(
        select(Bot.id).where(Bot.owner_token_hash == hash_token(token)).limit(1)
    )
    if bot_id is None:
        raise ServiceError(401, "the token is neither a bot's owner token nor the organiser token")
    return Reader(bot_id=bot_id)


# -- bots --------------------------------------------------------------------------------
def fetch_bot_info(
    config: Config, endpoint: str, info_fetcher: InfoFetcher | None = None
) -> dict[str, Any]:
    """The bot's answer to ``GET /``, checked and bounded, after the endpoint passed the
    address policy.  ``info_fetcher(endpoint)`` replaces the HTTP call in tests."""
    try:
        config.address_policy.check_endpoint(endpoint)
    except ValueError as exc:
        raise ServiceError(400, f"endpoint refused: {exc}") from None
    try:
        if info_fetcher is not None:
            info = info_fetcher(endpoint)
        else:
            # the policy is checked again on the address actually connected to
            client = HttpClient(endpoint, check_address=config.address_policy.check)
            try:
                info = client.info()
            finally:
                client.close()
    except (BotFault, ValueError) as exc:
        raise ServiceError(400, f"the bot at {endpoint} did not answer GET /: {exc}") from None
    return checked_info(info)


def checked_info(info: Any) -> dict[str, Any]:
    """What a bot says of itself (its ``GET /`` answer, or what a bot that connects out
    sends as it opens its session), checked and bounded: it is untrusted and shown on
    pages, so only the known keys are kept."""
    if not isinstance(info, dict):
        raise ServiceError(400, "the bot's GET / must answer a JSON object")
    if info.get("apiversion") != PROTOCOL_VERSION:
        raise ServiceError(
            400,
            f"the bot speaks apiversion {info.get('apiversion')!r}; "
            f"this arena speaks {PROTOCOL_VERSION!r}",
        )
    declared = info.get("games")
    if (
        not isinstance(declared, list)
        or not declared
        or not all(isinstance(g, str) for g in declared)
    ):
        raise ServiceError(400, "the bot's GET / must list the games it plays in 'games'")
    kept: dict[str, Any] = {"apiversion": PROTOCOL_VERSION}
    for key in ("name", "author", "version", "sdk"):
        value = info.get(key)
        if isinstance(value, str):
            kept[key] = value[:INFO_TEXT_CAP]
    kept["games"] = [g[:INFO_TEXT_CAP] for g in declared[:INFO_GAMES_CAP]]
    # how many requests the bot takes at once (null or absent: it says nothing), which
    # the workers keep to; refused rather than ignored, so its author learns of a typo now
    capacity = info.get("capacity")
    if capacity is not None:
        if (
            isinstance(capacity, bool)
            or not isinstance(capacity, int)
            or not 1 <= capacity <= MAX_CAPACITY
        ):
            raise ServiceError(
                400,
                f"the bot's GET / declares a capacity of {excerpt(capacity)}: it must be a "
                f"whole number from 1 to {MAX_CAPACITY} (how many requests it takes at once)",
            )
        kept["capacity"] = capacity
    return kept


def connect_info(bot: Bot, info: Any) -> dict[str, Any]:
    """A bot that connects out opens a session with ``info`` (what it would answer to
    ``GET /``): checked like a ``GET /`` answer, and it must still play the games it is
    registered for.  Kept as the bot's info (its capacity is what the workers keep to)."""
    if bot.status == "deleted":
        raise ServiceError(404, f"no bot {bot.id}")
    if bot.endpoint is not None:
        raise ServiceError(
            409,
            f"bot {bot.id} is registered with an endpoint, where the arena calls it: to "
            'connect out instead, PATCH /api/bots/{id} with {"connect": true}'.replace(
                "{id}", str(bot.id)
            ),
        )
    kept = checked_info(info)
    missing = sorted(set(bot.games) - set(kept["games"]))
    if missing:
        raise ServiceError(
            400,
            f"the bot does not declare {', '.join(missing)}, which it is registered for "
            f"(it declares {', '.join(kept['games'])})",
        )
    bot.info = kept
    return kept


def _registered_games(declared: Sequence[str], requested: Sequence[str] | None) -> list[str]:
    """The requested subset of what the bot declares, or all it declares; known games only."""
    if requested is None:
        unknown = sorted(set(declared) - set(GAMES))
        if unknown:
            raise ServiceError(
                400,
                f"the bot declares unknown game(s) {', '.join(unknown)}; games here: "
                f"{', '.join(sorted(GAMES))} (list the ones to register in 'games')",
            )
        return sorted(set(declared))
    if not requested:
        raise ServiceError(400, "register the bot for at least one game")
    unknown = sorted(set(requested) - set(GAMES))
    if unknown:
        raise ServiceError(
            400, f"unknown game(s) {', '.join(unknown)}; games: {', '.join(sorted(GAMES))}"
        )
    undeclared = sorted(set(requested) - set(declared))
    if undeclared:
        raise ServiceError(
            400,
            f"the bot does not declare {', '.join(undeclared)} in its GET / "
            f"(it declares {', '.join(declared)})",
        )
    return sorted(set(requested))


def _name_taken(name: str, taken: str | None = None) -> ServiceError:
    if taken is None or taken == name:
        return ServiceError(409, f"a bot named {name!r} already exists")
    return ServiceError(
        409,
        f"a bot named {taken!r} already exists: {name!r} is the same name (names are "
        "compared without case and surrounding spaces)",
    )


def _check_name_free(session: Session, name: str, bot_id: int | None = None) -> None:
    """409 when another bot (deleted ones too: they keep their names) has a name with the
    same key (``bot_name_key``: trimmed and case folded)."""
    query = select(Bot.name).where(Bot.name_key == bot_name_key(name))
    if bot_id is not None:
        query = query.where(Bot.id != bot_id)
    taken = session.scalar(query.limit(1))
    if taken is not None:
        raise _name_taken(bot_name(name), taken)


def _flush(session: Session, name: str) -> None:
    """Flush; a unique-name race lost against another request is a 409, not a 500."""
    try:
        session.flush()
    except IntegrityError:
        raise _name_taken(name) from None


def register_bot(
    session: Session,
    config: Config,
    *,
    name: str,
    endpoint: str | None = None,
    owner: str,
    description: str = "",
    games: Sequence[str] | None = None,
    signing_secret: str | None = None,
    connect: bool = False,
    info_fetcher: InfoFetcher | None = None,
) -> tuple[Bot, str, str]:
    """Check the endpoint (address policy, then ``GET /``) and store the bot; or, with
    ``connect``, a bot that connects out to the arena (no endpoint: it says what it is
    when it opens its session, and ``games`` are required).

    Returns the bot, its owner token and its signing secret (the one given, else a new
    one): the only time either is available in clear.  The name is stored trimmed.
    ``info_fetcher(endpoint)`` replaces the HTTP ``GET /`` in tests.
    """
    name = bot_name(name)
    if signing_secret is not None and (problem := signing_secret_problem(signing_secret)):
        raise ServiceError(400, problem)
    if connect:
        if endpoint is not None:
            raise ServiceError(
                400, "a bot that connects out has no endpoint: give one or the other"
            )
        registered = _connect_games(games)
        info: dict[str, Any] = {"apiversion": PROTOCOL_VERSION, "games": registered}
    elif endpoint is None:
        raise ServiceError(400, 'give the bot\'s endpoint, or "connect": true')
    else:
        # the network first: the database is not touched (no lock held) while it answers
        info = fetch_bot_info(config, endpoint, info_fetcher)
        registered = _registered_games(info["games"], games)
    _check_name_free(session, name)
    owner_token = new_token()
    signing_secret = signing_secret if signing_secret is not None else new_token()
    bot = Bot(
        name=name,
        endpoint=endpoint,
        owner=owner,
        owner_token_hash=hash_token(owner_token),
        signing_secret=signing_secret,
        games=registered,
        status="active",
        description=description,
        info=info,
    )
    session.add(bot)
    _flush(session, name)
    return bot, owner_token, signing_secret


def _connect_games(games: Sequence[str] | None) -> list[str]:
    """The games of a bot that connects out: given at registration (nothing can be asked
    of it then), known ones; it must declare them when it connects."""
    if not games:
        raise ServiceError(400, "a bot that connects out is registered with its 'games'")
    unknown = sorted(set(games) - set(GAMES))
    if unknown:
        raise ServiceError(
            400, f"unknown game(s) {', '.join(unknown)}; games: {', '.join(sorted(GAMES))}"
        )
    return sorted(set(games))


def get_bot(session: Session, bot_id: int, lock: bool = False) -> Bot:
    """The bot (locked for update with ``lock``), else 404."""
    bot = session.get(Bot, bot_id, with_for_update=lock) if 0 < bot_id <= MAX_ID else None
    if bot is None:
        raise ServiceError(404, f"no bot {bot_id}")
    return bot


def update_bot(
    session: Session,
    config: Config,
    bot: Bot,
    *,
    name: str | None = None,
    endpoint: str | None = None,
    description: str | None = None,
    status: str | None = None,
    games: Sequence[str] | None = None,
    connect: bool | None = None,
    info: dict[str, Any] | None = None,
    info_fetcher: InfoFetcher | None = None,
) -> Bot:
    """Change what is given (None: unchanged).  A given endpoint (even the same one) is
    checked again like at registration, which refreshes what the bot declares; ``info``
    is that check's answer when the caller made it already (``fetch_bot_info``, outside
    the transaction).  Games must be among what the bot declares.  ``connect`` true
    moves the bot to the connect transport (it has no endpoint any more; an endpoint
    moves it back)."""
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    if connect and endpoint is not None:
        raise ServiceError(400, "a bot that connects out has no endpoint: give one or the other")
    if connect is False and endpoint is None:
        raise ServiceError(400, "to stop connecting out, give the bot's endpoint")
    if connect or (connect is None and endpoint is None and bot.endpoint is None):
        return _update_connect_bot(session, bot, name, description, status, games)
    _status_change(bot, status)
    if endpoint is None:
        info = bot.info
    elif info is None:
        info = fetch_bot_info(config, endpoint, info_fetcher)
    if games is not None:
        new_games = _registered_games(info.get("games", []), games)
    else:
        new_games = [g for g in bot.games if g in info.get("games", [])]
        if not new_games:
            raise ServiceError(
                400, "the bot at this endpoint plays none of its registered games; give 'games'"
            )
    if name is not None and bot_name(name) != bot.name:
        _check_name_free(session, name, bot.id)  # a change of case alone is allowed
        bot.name = name
    if endpoint is not None:
        bot.endpoint = endpoint
    bot.info = info
    bot.games = new_games
    if description is not None:
        bot.description = description
    if status is not None:
        bot.status = status
    _flush(session, bot.name)
    return bot


def _status_change(bot: Bot, status: str | None) -> None:
    if status is not None and status not in ("active", "disabled"):
        raise ServiceError(400, "status must be active or disabled (DELETE deletes a bot)")
    if status is not None and status != bot.status:
        # the owner's word ends a pause: the count of forfeits in a row starts again
        bot.paused_reason = None
        bot.forfeit_streak = 0


def _update_connect_bot(
    session: Session,
    bot: Bot,
    name: str | None,
    description: str | None,
    status: str | None,
    games: Sequence[str] | None,
) -> Bot:
    """``update_bot`` of a bot that connects out (or moves to): nothing to ask it now."""
    _status_change(bot, status)
    if games is not None:
        bot.games = _connect_games(games)
    if bot.endpoint is not None:
        bot.endpoint = None
        bot.info = {"apiversion": PROTOCOL_VERSION, "games": bot.games}
    if name is not None and bot_name(name) != bot.name:
        _check_name_free(session, name, bot.id)
        bot.name = name
    if description is not None:
        bot.description = description
    if status is not None:
        bot.status = status
    _flush(session, bot.name)
    return bot


def rotate_credentials(
    session: Session,
    bot: Bot,
    rotate: Iterable[str],
    signing_secret: str | None = None,
) -> dict[str, str]:
    """New values for what ``rotate`` names (``owner_token``, ``signing_secret``): the
    old ones stop working when the caller commits.  ``signing_secret`` is the owner's own
    new secret (else a new one is made).  Returns the new values in clear: the only time.

    Matches started after the commit sign with the new secret; one already being played
    keeps the secret it started with until it ends."""
    rotate = set(rotate)
    if not rotate or not rotate <= set(ROTATABLE):
        raise ServiceError(400, f"rotate one or both of: {', '.join(ROTATABLE)}")
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    if signing_secret is not None:
        if "signing_secret" not in rotate:
            raise ServiceError(400, "a new signing_secret needs 'signing_secret' in 'rotate'")
        if problem := signing_secret_problem(signing_secret):
            raise ServiceError(400, problem)
        if hmac.compare_digest(signing_secret.encode(), bot.signing_secret.encode()):
            raise ServiceError(400, "the new signing secret must differ from the current one")
    rotated: dict[str, str] = {}
    if "owner_token" in rotate:
        rotated["owner_token"] = new_token()
        bot.owner_token_hash = hash_token(rotated["owner_token"])
    if "signing_secret" in rotate:
        rotated["signing_secret"] = signing_secret if signing_secret is not None else new_token()
        bot.signing_secret = rotated["signing_secret"]
    session.flush()
    return rotated


def recent_faults(session: Session, bot_id: int, limit: int = 10) -> list[dict[str, Any]]:
    """The bot's most recent finished matches with faults, newest first: what its owner
    needs to see why it lost or why it was paused."""
    rows = session.execute(
        select(MatchSeat, Match)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot_id, MatchSeat.strikes > 0, Match.status == "finished")
        .order_by(Match.finished_at.desc(), Match.id.desc())
        .limit(limit)
    )
    return [
        {
            "match_id": match.id,
            "game": match.game,
            "finished_at": match.finished_at,
            "forfeited": seat.forfeited,
            **(seat.faults or {"count": seat.strikes, "kinds": {}}),
        }
        for seat, match in rows
    ]


def delete_bot(session: Session, bot: Bot, pause_after: int = 3) -> None:
    """Soft delete: the bot keeps its matches, ratings and name; its queued matches are
    cancelled so its endpoint is not called any more (and results waiting for them are
    settled: ``arena.worker.lifecycle``)."""
    if bot.status == "deleted":
        return
    bot.status = "deleted"
    seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot.id)
    tournaments = lifecycle.cancel_queued(session, Match.id.in_(seated))
    lifecycle.settle_tournaments(session, [t for t in tournaments if t is not None], pause_after)


# -- tournaments -------------------------------------------------------------------------
def resolve_options(game: Game, options: dict[str, Any] | None) -> dict[str, Any]:
    """The complete options as stored (a ``preset`` key is expanded)."""
    try:
        return game.options_json(game.resolve_options(options or {}))
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None


def _game(game_id: str) -> Game:
    try:
        return get_game(game_id)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None


FORMAT_BUILDERS = ("round_robin", "balanced", "gauntlet")


def _check_entrants(session: Session, engine: Game, bot_ids: Sequence[int]) -> list[int]:
    """The bots exist, are active and play the game; their ids, sorted."""
    ids = [i for i in bot_ids if 0 < i <= MAX_ID]
    rows = {
        bot_id: (status, played)
        for bot_id, status, played in session.execute(
            select(Bot.id, Bot.status, Bot.games).where(Bot.id.in_(ids))
        )
    }
    missing = sorted(set(bot_ids) - set(rows))
    if missing:
        raise ServiceError(400, f"no bot(s) {', '.join(map(str, missing))}")
    inactive = sorted(i for i, (status, _) in rows.items() if status != "active")
    if inactive:
        raise ServiceError(400, f"bot(s) {', '.join(map(str, inactive))} are not active")
    other = sorted(i for i, (_, played) in rows.items() if engine.id not in played)
    if other:
        raise ServiceError(400, f"bot(s) {', '.join(map(str, other))} do not play {engine.id}")
    return sorted(rows)


def create_tournament(
    session: Session,
    config: Config,
    *,
    name: str,
    game: str,
    options: dict[str, Any] | None,
    bot_ids: Sequence[int],
    seats_per_match: int,
    format: str = "round_robin",
    deal: str = "independent",
    games_per_pairing: int | None = None,
    matches_per_bot: int | None = None,
    challenger_ids: Sequence[int] = (),
    sprt: dict[str, float] | None = None,
    seed: int | None = None,
    live_view: str = "public",
) -> tuple[Tournament, list[int]]:
    """Write a tournament with every match of its schedule queued (``arena.competition.formats``);
    returns it and the match ids, in schedule order.  The caller commits, then enqueues.

    ``bot_ids`` are every entrant; a gauntlet's ``challenger_ids`` are among them and the
    others are its field.  Matches are written with bulk inserts: a tournament of tens
    of thousands of matches is written in seconds."""
    if format not in FORMAT_BUILDERS:
        raise ServiceError(400, f"format must be one of {', '.join(FORMAT_BUILDERS)}")
    engine = _game(game)
    resolved = resolve_options(engine, options)
    try:
        engine.check_players(seats_per_match)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None
    if len(set(bot_ids)) != len(bot_ids):
        raise ServiceError(400, "bot_ids lists a bot more than once")
    challengers = sorted(set(challenger_ids))
    if format == "gauntlet":
        if not challengers:
            raise ServiceError(400, "a gauntlet needs challenger_ids (one or more)")
        strangers = sorted(set(challengers) - set(bot_ids))
        if strangers:
            raise ServiceError(
                400, f"challenger(s) {', '.join(map(str, strangers))} are not in bot_ids"
            )
    elif challengers or sprt is not None:
        raise ServiceError(400, "challenger_ids and sprt belong to the gauntlet format")
    field = sorted(set(bot_ids) - set(challengers))
    rule = None
    if sprt is not None:
        try:
            rule = formats.Sprt(**sprt)
            rule.bounds()
        except (formats.FormatError, TypeError) as exc:
            raise ServiceError(400, f"sprt: {exc}") from None
    try:
        total = formats.match_count(
            format,
            len(field) if format == "gauntlet" else len(bot_ids),
            seats_per_match,
            games_per_pairing=games_per_pairing,
            matches_per_bot=matches_per_bot,
            n_challengers=len(challengers),
            deal=deal,
        )
    except formats.FormatError as exc:
        raise ServiceError(400, str(exc)) from None
    limit = config.max_tournament_matches
    if total > limit:
        raise ServiceError(
            400,
            f"this tournament would have {total} matches; the limit is {limit} "
            "(fewer bots, seats or matches; ARENA_MAX_TOURNAMENT_MATCHES sets it)",
        )
    entrants = _check_entrants(session, engine, bot_ids)
    if seed is None:
        seed = secrets.randbelow(MAX_SEED + 1)
    try:
        if format == "round_robin":
            tables = formats.round_robin(
                entrants, seats_per_match, games_per_pairing or 0, seed=seed, deal=deal
            )
        elif format == "balanced":
            tables = formats.balanced(
                entrants, seats_per_match, matches_per_bot or 0, seed=seed, deal=deal
            )
        else:
            tables = formats.gauntlet(
                challengers, field, seats_per_match, matches_per_bot or 0, seed=seed, deal=deal
            )
    except formats.FormatError as exc:
        raise ServiceError(400, str(exc)) from None
    achieved = formats.balance(tables, entrants, seats_per_match, challenger_ids=challengers)
    tournament = Tournament(
        name=name,
        game=engine.id,
        options=resolved,
        format=format,
        deal=deal,
        seats_per_match=seats_per_match,
        games_per_pairing=games_per_pairing if format == "round_robin" else None,
        matches_per_bot=None if format == "round_robin" else matches_per_bot,
        sprt=None if rule is None else dataclasses.asdict(rule),
        balance=achieved.to_json(),
        seed=seed,
        status="running",
        live_view=live_view,
    )
    session.add(tournament)
    session.flush()
    chosen = set(challengers)
    session.execute(
        insert(TournamentEntry),
        [
            {"tournament_id": tournament.id, "bot_id": i, "challenger": i in chosen}
            for i in entrants
        ],
    )
    now = utcnow()
    match_ids = list(
        session.scalars(
            insert(Match).returning(Match.id, sort_by_parameter_order=True),
            [
                {
                    "tournament_id": tournament.id,
                    "kind": "tournament",
                    "game": engine.id,
                    "options": resolved,
                    "seed": table.seed,
                    "deal": table.deal,
                    "status": "queued",
                    "rated": True,
                    "created_at": now,
                }
                for table in tables
            ],
        )
    )
    session.execute(
        insert(MatchSeat),
        [
            {"match_id": match_id, "seat": seat, "bot_id": bot_id}
            for match_id, table in zip(match_ids, tables, strict=True)
            for seat, bot_id in enumerate(table.seats)
        ],
    )
    session.expire(tournament, ["entries", "matches"])
    return tournament, match_ids


def get_tournament(session: Session, tournament_id: int) -> Tournament:
    tournament = session.get(Tournament, tournament_id) if 0 < tournament_id <= MAX_ID else None
    if tournament is None:
        raise ServiceError(404, f"no tournament {tournament_id}")
    return tournament


def cancel_tournament(session: Session, tournament: Tournament, pause_after: int = 3) -> None:
    """Queued matches are cancelled; running ones finish and still count (and keep the
    tournament's seed hidden until they do: ``tournament_seed``), and finished ones that
    waited for a cancelled rotation of their deal are settled."""
    if tournament.status != "running":
        raise ServiceError(409, f"tournament {tournament.id} is already {tournament.status}")
    lifecycle.cancel_queued(session, Match.tournament_id == tournament.id)
    tournament.status = "cancelled"
    lifecycle.settle_tournaments(session, [tournament.id], pause_after)


# -- what a deal not yet over keeps hidden ------------------------------------------------
def tournament_seed(tournament: Tournament, progress: dict[str, int]) -> int | None:
    """The tournament's seed, or None while it runs or any of its matches is queued or
    running (``progress``: ``tournament_progress``), whatever its status: every match's
    seed, and so every deal, follows from it (a cancelled tournament's running matches
    are still being played)."""
    if tournament.status == "running" or any(progress.get(s) for s in MATCH_OPEN):
        return None
    return tournament.seed


def deals_being_played(session: Session, matches: Iterable[Match]) -> dict[int, list[int]]:
    """Per match id: the ids of the matches that play its deal and are queued or running
    (itself included), ascending; empty once its deal is over.

    This owns the question "is this match's deal still being played?": while the list is
    not empty nothing that shows the deal is published, neither the seed nor the replay,
    the frames or the cards of any match that plays it.  A match's deal is its own unless
    it belongs to a duplicate deal: the matches of one tournament with the same ``deal``
    are dealt the same cards (their seats rotated).  One query, whatever the number of
    matches."""
    matches = list(matches)
    found: dict[int, set[int]] = {
        m.id: {m.id} if m.status in MATCH_OPEN else set() for m in matches
    }
    shared = {
        (m.tournament_id, m.deal)
        for m in matches
        if m.tournament_id is not None and m.deal is not None
    }
    if shared:
        playing: dict[tuple[int, int], set[int]] = {}
        for tournament_id, deal, match_id in session.execute(
            select(Match.tournament_id, Match.deal, Match.id).where(
                Match.tournament_id.in_({t for t, _ in shared}),
                Match.deal.in_({d for _, d in shared}),
                Match.status.in_(MATCH_OPEN),
            )
        ):
            playing.setdefault((tournament_id, deal), set()).add(match_id)
        for match in matches:
            found[match.id] |= playing.get((match.tournament_id, match.deal), set())
    return {match_id: sorted(ids) for match_id, ids in found.items()}


def deal_being_played(session: Session, match: Match) -> list[int]:
    """``deals_being_played`` of one match: the ids of the matches (itself included)
    still queued or running that play its deal; empty once the deal is over."""
    return deals_being_played(session, [match])[match.id]


def match_seed(match: Match, playing: Sequence[int]) -> int | None:
    """The match's seed, or None while its deal is being played (``playing``: what
    ``deals_being_played`` says of it): the seed gives every card of the deal."""
    return None if playing else match.seed


def deal_hidden_message(match: Match, playing: Sequence[int]) -> str:
    """Why a finished match's replay, frames and cards are not shown: the other matches
    of its deal, still to be played (``playing``)."""
    others = [i for i in playing if i != match.id]
    listed = ", ".join(str(i) for i in others[:10]) + (", ..." if len(others) > 10 else "")
    return (
        f"match {match.id} shares its deal with match{'es' if len(others) > 1 else ''} "
        f"{listed}, still queued or running: its seed, replay and cards are shown once "
        "every match of the deal is over"
    )


# -- read models -------------------------------------------------------------------------
def leaderboard(session: Session, game: str) -> list[dict[str, Any]]:
    """Rated active bots of ``game`` by live Elo, with the fitted rating when there is one."""
    rows = session.execute(
        select(Rating, Bot.name, FittedRating)
        .join(Bot, Bot.id == Rating.bot_id)
        .outerjoin(
            FittedRating,
            (FittedRating.bot_id == Rating.bot_id) & (FittedRating.game == Rating.game),
        )
        .where(Rating.game == game, Bot.status == "active")
        .order_by(Rating.elo.desc(), Bot.name)
    )
    return [
        {
            "bot_id": rating.bot_id,
            "name": name,
            "elo": rating.elo,
            "matches": rating.matches,
            "fitted": None
            if fitted is None
            else {
                "rating": fitted.rating,
                "low": fitted.low,
                "high": fitted.high,
                "matches": fitted.matches,
            },
        }
        for rating, name, fitted in rows
    ]


def tournament_progress(session: Session, tournament: Tournament) -> dict[str, int]:
    counts = dict.fromkeys(MATCH_STATUSES, 0)
    for status, n in session.execute(
        select(Match.status, func.count())
        .where(Match.tournament_id == tournament.id)
        .group_by(Match.status)
    ):
        counts[status] = n
    return {"total": sum(counts.values()), **counts}


def played_by_game(session: Session) -> dict[str, int]:
    """The number of matches played (finished) per game."""
    return dict(
        session.execute(
            select(Match.game, func.count()).where(Match.status == PLAYED).group_by(Match.game)
        ).all()
    )


def played_by_bot(session: Session, bot_ids: Sequence[int]) -> dict[int, int]:
    """The number of matches each bot played (finished), by bot id (none: absent)."""
    return dict(
        session.execute(
            select(MatchSeat.bot_id, func.count(MatchSeat.match_id.distinct()))
            .join(Match, Match.id == MatchSeat.match_id)
            .where(MatchSeat.bot_id.in_(bot_ids), Match.status == PLAYED)
            .group_by(MatchSeat.bot_id)
        ).all()
    )


def bot_match_counts(session: Session, bot_id: int) -> dict[str, int]:
    """The bot's matches by status (every status of ``MATCH_STATUSES``, 0 when none)."""
    counts = dict.fromkeys(MATCH_STATUSES, 0)
    seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)
    for status, n in session.execute(
        select(Match.status, func.count()).where(Match.id.in_(seated)).group_by(Match.status)
    ):
        counts[status] = n
    return counts


_WITH_SEATS = selectinload(Match.seats).joinedload(MatchSeat.bot)


def list_matches(
    session: Session,
    *,
    game: str | None = None,
    status: str | None = None,
    statuses: Sequence[str] | None = None,
    tournament_id: int | None = None,
    bot_id: int | None = None,
    page: int = 1,
    page_size: int = 20,
) -> tuple[list[Match], int]:
    """One page of matches, newest first (seats and their bots loaded), and the number of
    matches that fit the filters (``statuses``: any of them)."""
    query = select(Match)
    if game is not None:
        query = query.where(Match.game == game)
    if status is not None:
        query = query.where(Match.status == status)
    if statuses is not None:
        query = query.where(Match.status.in_(statuses))
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if bot_id is not None:
        seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)
        query = query.where(Match.id.in_(seated))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    matches = session.scalars(
        query.options(_WITH_SEATS)
        .order_by(Match.id.desc())
        .offset((page - 1) * page_size)
        .limit(page_size)
    ).all()
    return list(matches), total


def get_match(session: Session, match_id: int) -> Match:
    """The match with its seats and their bots loaded."""
    match = session.get(Match, match_id, options=[_WITH_SEATS]) if 0 < match_id <= MAX_ID else None
    if match is None:
        raise ServiceError(404, f"no match {match_id}")
    return match


# -- ladders -----------------------------------------------------------------------------
def set_ladder(session: Session, game: str, enabled: bool, seats_per_match: int = 2) -> Ladder:
    """Turn the rated ladder of ``game`` on or off (Celery beat reads this row)."""
    engine = _game(game)
    try:
        engine.check_players(seats_per_match)
    except OptionsError as exc:
        raise ServiceError(400, str(exc)) from None
    ladder = session.get(Ladder, engine.id)
    if ladder is None:
        ladder = Ladder(game=engine.id)
        session.add(ladder)
    ladder.enabled = enabled
    ladder.seats_per_match = seats_per_match
    session.flush()
    return ladder


def ladders(session: Session) -> list[dict[str, Any]]:
    """Every game's ladder switch (a game never switched has no row: disabled, and the
    smallest table it can be played at)."""
    rows = {ladder.game: ladder for ladder in session.scalars(select(Ladder))}
    result = []
    for game_id in GAMES:
        ladder = rows.get(game_id)
        result.append(
            {
                "game": game_id,
                "enabled": bool(ladder and ladder.enabled),
                "seats_per_match": ladder.seats_per_match
                if ladder
                else max(2, GAMES[game_id].min_players),
                "updated_at": ladder.updated_at if ladder else None,
            }
        )
    return result
