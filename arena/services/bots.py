"""Bots: registering one (its ``GET /`` checked and bounded, or a bot that connects
out; from an account, into its event by default), changing it, moving it between
events, marking it as a reference bot (offered in every event's tournaments), rotating
its credentials, its recent faults, deleting it (its name is free again)."""

from __future__ import annotations

import hmac
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, object_session

from arena.config import Config
from arena.games import GAMES
from arena.match.faults import BotFault, excerpt
from arena.match.http_client import PROTOCOL_VERSION, HttpClient
from arena.match.pools import MAX_CAPACITY
from arena.models import (
    BOT_SET_STATUSES,
    MATCH_PLAYED,
    Bot,
    Event,
    Match,
    MatchSeat,
    bot_name,
    bot_name_key,
)
from arena.services import events, notices, validation
from arena.services.access import (
    ROTATABLE,
    Caller,
    admin_open,
    hash_token,
    new_token,
    signing_secret_problem,
    token_matches,
)
from arena.services.errors import MAX_ID, ServiceError
from arena.worker import lifecycle

# what is kept of a bot's answer to GET / (it is untrusted and shown on pages)
INFO_TEXT_CAP = 200
INFO_GAMES_CAP = 32

InfoFetcher = Callable[[str], dict[str, Any]]

# The health check of a bot being registered (or given a new endpoint) runs in the web
# request: its GET / has this long in all, connecting included, so that an endpoint that
# accepts and never answers holds a web thread no longer than that.
REGISTRATION_CHECK_SECONDS = 3.0
# ... and at most this many run at once in one web process: one more is refused at once
# (503, try again) instead of waiting, so a burst of registrations against such endpoints
# ties up a few threads and never every thread that serves the pages.
REGISTRATION_CHECKS_AT_ONCE = 8
_registration_checks = threading.BoundedSemaphore(REGISTRATION_CHECKS_AT_ONCE)


def fetch_bot_info(
    config: Config, endpoint: str, info_fetcher: InfoFetcher | None = None
) -> dict[str, Any]:
    """The bot's answer to ``GET /``, checked and bounded, after the endpoint passed the
    address policy, within ``REGISTRATION_CHECK_SECONDS`` (a 400 past it), at most
    ``REGISTRATION_CHECKS_AT_ONCE`` at once (a 503 beyond).  ``info_fetcher(endpoint)``
    replaces the HTTP call in tests."""
    try:
        config.address_policy.check_endpoint(endpoint)
    except ValueError as exc:
        raise ServiceError(400, f"endpoint refused: {exc}") from None
    if not _registration_checks.acquire(blocking=False):
        raise ServiceError(
            503, "too many bots are being checked right now: try again in a few seconds"
        )
    try:
        if info_fetcher is not None:
            info = info_fetcher(endpoint)
        else:
            # the policy is checked again on the address actually connected to
            client = HttpClient(endpoint, check_address=config.address_policy.check)
            try:
                info = client.info(REGISTRATION_CHECK_SECONDS)
            finally:
                client.close()
    except (BotFault, ValueError) as exc:
        raise ServiceError(400, f"the bot at {endpoint} did not answer GET /: {exc}") from None
    finally:
        _registration_checks.release()
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


def connect_info(bot: Bot, info: Any, session: Session | None = None) -> dict[str, Any]:
    """A bot that connects out opens a session with ``info`` (what it would answer to
    ``GET /``): checked like a ``GET /`` answer, and it must still play the games it is
    registered for.  Kept as the bot's info (its capacity is what the workers keep to).
    After its event's freeze its version is pinned: another one is refused."""
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
    if bot.kind == "person":
        kept["capacity"] = 1  # a person answers one request at a time
    pinned = (bot.info or {}).get("version")
    if (
        session is not None
        and bot.event_id is not None
        # a bot that never said its version before the freeze is pinned by its first
        and pinned is not None
        and kept.get("version") != pinned
        and events.is_frozen(session.get(Event, bot.event_id))
    ):
        raise ServiceError(
            409,
            f"event {bot.event_id} is frozen: bot {bot.id} plays version {pinned!r}, not "
            f"{kept.get('version')!r} (versions are pinned at the freeze)",
        )
    bot.info = kept
    # a new version of it (its first session, another version, a version that failed)
    # plays a validation match: the caller sends ``started_validation`` after its commit
    version = kept.get("version")
    if session is not None and bot.connect and validation.new_version(session, bot, version):
        validation.begin(session, bot, version)
    return kept


def started_validation(bot: Bot, before: int | None) -> list[int]:
    """The validation match to send to the workers after the commit, if one started
    since the bot's latest validation was ``before`` (its ``validation_match_id`` then)."""
    started = bot.validation_match_id
    return [started] if started is not None and started != before else []


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
        "compared as they look: without case and surrounding spaces, and letters of "
        "other alphabets or widths drawn alike are one)",
    )


def _check_name_free(session: Session, name: str, bot_id: int | None = None) -> None:
    """409 when another live bot has a name with the same key (``bot_name_key``: trimmed,
    case folded, look-alike letters as one).  A deleted bot's name is free again: the
    deleted bot keeps it on its matches, and the database's unique index is over the
    bots not deleted only (migration 0019)."""
    query = select(Bot.name).where(Bot.name_key == bot_name_key(name), Bot.status != "deleted")
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


class _HomeEvent:
    """The type of ``HOME_EVENT``."""

    def __repr__(self) -> str:
        return "HOME_EVENT"


# ``register_bot``'s ``event_id`` when the request names none (the API's default): the
# account's only event (``events.home_event_id``), else the open arena.  An explicit None
# is the open arena.
HOME_EVENT = _HomeEvent()


def _defaulted(event_id: int) -> Callable[[ServiceError], ServiceError]:
    """A refusal to enter the event a bot was entering by default, told as such: the
    request named no event, and ``"event_id": null`` is the way to the open arena."""

    def told(exc: ServiceError) -> ServiceError:
        return ServiceError(
            exc.status,
            f"{exc.message} (the bot was entering event {event_id}, your event, as the "
            'request names no event: give "event_id": null to register it in the open '
            "arena, or the id of another event)",
            **exc.fields,
        )

    return told


def _as_is(exc: ServiceError) -> ServiceError:
    return exc


def check_may_register(config: Config, who: Caller) -> None:
    """Anyone may register a bot where the operator allows it; else an account must."""
    if who.account_id is None and not who.admin and not config.open_registration:
        raise who.refusal("registering a bot needs an account here: log in, or give its API token")


def register_bot(
    session: Session,
    config: Config,
    *,
    name: str,
    endpoint: str | None = None,
    owner: str | None = None,
    who: Caller | None = None,
    event_id: int | _HomeEvent | None = None,
    description: str = "",
    games: Sequence[str] | None = None,
    signing_secret: str | None = None,
    connect: bool = False,
    hosted: bool = False,
    playable: bool = False,
    info_fetcher: InfoFetcher | None = None,
) -> tuple[Bot, str, str]:
    """Check the endpoint (address policy, then ``GET /``) and store the bot; or, with
    ``connect``, a bot that connects out to the arena (no endpoint: it says what it is
    when it opens its session, and ``games`` are required).

    Returns the bot, its owner token and its signing secret (the one given, else a new
    one): the only time either is available in clear.  The name is stored trimmed.
    ``info_fetcher(endpoint)`` replaces the HTTP ``GET /`` in tests.

    ``who`` registers it: an account's bot belongs to it (its owner defaults to the
    account's name) and may enter one of its events (``event_id``: its window, freeze and
    per-account limit apply; ``HOME_EVENT``: the account's only event, else the open
    arena); without an account, a free-text ``owner`` is needed and the operator must
    allow it (``config.open_registration``).
    """
    who = who or Caller()
    name = bot_name(name)
    event = None
    check_may_register(config, who)
    if owner is None:
        if who.name is None:
            raise ServiceError(422, "owner: give the bot's owner (or register it from an account)")
        owner = who.name
    told = _as_is
    if isinstance(event_id, _HomeEvent):
        event_id = events.home_event_id(who)
        if event_id is not None:
            told = _defaulted(event_id)
    if event_id is not None:
        event = events.get_event(session, event_id, who)
        try:
            # before the bot is called: the games it plays are checked once it has answered
            events.check_can_enter(session, who, event, games, endpoint)
        except ServiceError as exc:
            raise told(exc) from None
    if signing_secret is not None and (problem := signing_secret_problem(signing_secret)):
        raise ServiceError(400, problem)
    if hosted:
        if endpoint is not None or connect:
            raise ServiceError(400, "a hosted bot has no endpoint and does not connect out")
        registered = _connect_games(games)
        info = {"apiversion": PROTOCOL_VERSION, "games": registered}
    elif connect:
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
        if event is not None and games is None:
            # an event's bot plays what the event plays, of what it declares
            games = sorted(set(info["games"]) & set(event.games)) or sorted(event.games)
        try:
            registered = _registered_games(info["games"], games)
        except ServiceError as exc:
            raise told(exc) from None
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
        playable=playable,
        hosted=hosted,
        account_id=who.account_id,
        event_id=event_id,
    )
    if event is not None:
        try:
            events.check_event_games(event, registered)
        except ServiceError as exc:
            raise told(exc) from None
    session.add(bot)
    _flush(session, name)
    if endpoint is not None:  # a validation match now (arena.services.validation); a
        # connected bot has one as it connects, a hosted one as its code is uploaded
        validation.begin(session, bot, info.get("version"))
    return bot, owner_token, signing_secret


def _connect_games(games: Sequence[str] | None) -> list[str]:
    """The games of a bot that connects out: given at registration (nothing can be asked
    of it then), known ones; it must declare them when it connects."""
    return events.known_games(games, "a bot that connects out is registered with its 'games'")


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
    playable: bool | None = None,
    accepts_challenges: bool | None = None,
    info: dict[str, Any] | None = None,
    info_fetcher: InfoFetcher | None = None,
    who: Caller | None = None,
) -> Bot:
    """Change what is given (None: unchanged).  A given endpoint (even the same one) is
    checked again like at registration, which refreshes what the bot declares; ``info``
    is that check's answer when the caller made it already (``fetch_bot_info``, outside
    the transaction).  Games must be among what the bot declares.  ``connect`` true
    moves the bot to the connect transport (it has no endpoint any more; an endpoint
    moves it back).  ``who`` changes it (default: its owner): only an organiser of its
    event pauses it or ends an organiser's pause, and after the event's freeze only an
    organiser changes its endpoint or transport."""
    who = who or Caller(bot_id=bot.id)
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    if endpoint is not None or connect is not None:
        events.check_not_frozen(session, who, bot, "endpoint or transport")
    if endpoint is not None and bot.event_id is not None:
        events.check_endpoint_free(session, bot.event_id, endpoint, bot.id)
    _check_status_right(who, bot, status)
    if bot.kind != "bot":
        raise ServiceError(409, f"bot {bot.id} is a {bot.kind}'s seat, not a program to change")
    if playable is not None:
        bot.playable = playable
    if accepts_challenges is not None:  # others' scrimmages may seat it (services.scrimmages)
        bot.accepts_challenges = accepts_challenges
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
    moved = endpoint is not None and endpoint != bot.endpoint
    if endpoint is not None:
        bot.endpoint = endpoint
    bot.info = info
    bot.games = new_games
    if description is not None:
        bot.description = description
    if status is not None:
        bot.status = status
    _flush(session, bot.name)
    # its GET / was asked again: a new endpoint, another version, or the same version
    # after a failed validation plays a validation match (sent after the commit)
    version = info.get("version")
    if endpoint is not None and (moved or validation.new_version(session, bot, version)):
        validation.begin(session, bot, version)
    return bot


def _check_status_right(who: Caller, bot: Bot, status: str | None) -> None:
    """An organiser's pause is the organisers' to set and to end."""
    if status is None or who.organises_event(bot.event_id):
        return
    if status == "paused":
        raise ServiceError(403, "only an organiser of the bot's event pauses it")
    if bot.status == "paused" and bot.paused_by == "organiser":
        raise ServiceError(
            403, f"bot {bot.id} was paused by an organiser: only an organiser may resume it"
        )


def _status_change(bot: Bot, status: str | None) -> None:
    if status is not None and status not in BOT_SET_STATUSES:
        raise ServiceError(400, "status must be active, paused or disabled (DELETE deletes a bot)")
    if status is not None and status != bot.status:
        # the owner's word ends a pause: the count of forfeits in a row starts again
        bot.paused_reason = None
        bot.paused_by = None
        bot.forfeit_streak = 0
        if status == "paused":
            bot.paused_by = "organiser"
            bot.paused_reason = "paused by an organiser"
            session = object_session(bot)
            if session is not None:  # its owner hears of it (rolled back with the change)
                notices.bot_paused(session, bot.account_id, bot.id, bot.name, bot.paused_reason)


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
        validation.forget(bot)  # validated again as it first connects
    if name is not None and bot_name(name) != bot.name:
        _check_name_free(session, name, bot.id)
        bot.name = name
    if description is not None:
        bot.description = description
    if status is not None:
        bot.status = status
    _flush(session, bot.name)
    return bot


def move_bot(session: Session, who: Caller, bot: Bot, event_id: int | None) -> Bot:
    """Move the bot into event ``event_id`` (None: the open arena); its matches and
    ratings come with it, its matches already played stay where they were played.

    Out of its event: its owner before the event's freeze, an organiser of the event (or
    the admin) at any time.  Into an event: its owner from their account, as a member,
    within the event's rules as for a new bot (``events.check_can_enter``: the
    registration window, the freeze, the bots per account); an organiser of the event
    (or the admin) at any time, for a bot whose account is in the event (or their own).
    Either way the bot must play only the event's games, at an endpoint no other bot
    of the event has."""
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    if bot.kind != "bot":
        raise ServiceError(
            409,
            f"bot {bot.id} is a {bot.kind}'s seat, which stays where it was made"
            if bot.kind == "person"
            else f"bot {bot.id} is a house bot: it is offered in every event already",
        )
    if event_id == bot.event_id:  # nothing moves, but it is still not anyone's to ask
        if not (who.owns(bot) or who.organises_event(bot.event_id)):
            raise who.refusal(f"bot {bot.id} belongs to another owner")
        return bot
    if bot.event_id is not None:
        _check_may_leave(session, who, bot)
    if event_id is not None:
        _check_may_enter(session, who, bot, events.get_event(session, event_id, who))
    bot.event_id = event_id
    session.flush()
    return bot


def _check_may_leave(session: Session, who: Caller, bot: Bot) -> None:
    """The caller may take the bot out of its event (see ``move_bot``)."""
    event_id = bot.event_id
    if who.organises_event(event_id):
        return
    if not who.owns(bot):
        raise who.refusal(
            f"only bot {bot.id}'s owner or an organiser of event {event_id} takes it out of "
            "the event"
        )
    if events.is_frozen(session.get(Event, event_id)):
        raise ServiceError(
            409,
            f"event {event_id} is frozen: bot {bot.id} stays in it (an organiser of the "
            "event may still move it)",
        )


def _check_may_enter(session: Session, who: Caller, bot: Bot, event: Event) -> None:
    """The caller may move the bot into ``event`` (see ``move_bot``)."""
    if who.organises_event(event.id):
        if not (who.admin or who.owns(bot) or events.is_member(session, bot.account_id, event.id)):
            raise ServiceError(
                403,
                f"bot {bot.id} belongs to no account of event {event.id}: its owner joins the "
                "event (with its join code) before the bot moves in",
            )
    elif not who.owns(bot):
        raise who.refusal(
            f"only bot {bot.id}'s owner (a member of event {event.id}) or an organiser of "
            "the event moves it into the event"
        )
    other = sorted(set(bot.games) - set(event.games))
    if other:
        raise ServiceError(
            400,
            f"event {event.id} plays {', '.join(event.games)}, not {', '.join(other)}: give "
            "the bot's 'games' (those of the event it plays) with the move",
        )
    # the rules of a new bot of the event: membership, window, freeze, bots per account
    events.check_can_enter(session, who, event, None, bot.endpoint)


def may_mark_reference(config: Config, who: Caller, bot: Bot) -> bool:
    """Who marks a bot as a reference (offered in every event's tournaments): an
    organiser of its event or the admin; an open-arena bot, the admin, an organiser's
    account its own bot, and anyone where the admin's operations are open (no organiser
    token, the local default)."""
    if who.organises_event(bot.event_id):
        return True
    if bot.event_id is None:
        return admin_open(config) or (who.organiser and who.owns(bot))
    return False


def set_reference(session: Session, config: Config, who: Caller, bot: Bot, reference: bool) -> Bot:
    """Mark the bot as a reference bot (``may_mark_reference``), or no longer (those, and
    its owner).  A reference bot is offered in every event's tournaments and qualifiers
    as the house bots are, and is never graded as a contestant."""
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    if bot.kind != "bot":
        raise ServiceError(
            409,
            f"bot {bot.id} is a house bot: house bots are offered in every event already"
            if bot.kind == "house"
            else f"bot {bot.id} is a person's seat: it is no reference bot",
        )
    # its owner may always take the mark off; putting it on is the organisers'
    if not may_mark_reference(config, who, bot) and (reference or not who.owns(bot)):
        if bot.event_id is not None:
            raise who.refusal(
                f"only an organiser of event {bot.event_id} (or the admin) marks bot "
                f"{bot.id} as a reference bot"
            )
        raise who.refusal(
            f"only the admin, or an organiser whose bot it is, marks bot {bot.id} (of the "
            "open arena) as a reference bot"
        )
    bot.reference = reference
    session.flush()
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
        .where(MatchSeat.bot_id == bot_id, MatchSeat.strikes > 0, Match.status == MATCH_PLAYED)
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
    """Soft delete: the bot keeps its matches, ratings and name (its matches still show
    it), but the name is free again for a new bot; its queued matches are cancelled so
    its endpoint is not called any more (and results waiting for them are settled:
    ``arena.worker.lifecycle``)."""
    if bot.status == "deleted":
        return
    bot.status = "deleted"
    seated = select(MatchSeat.match_id).where(MatchSeat.bot_id == bot.id)
    tournaments = lifecycle.cancel_queued(session, Match.id.in_(seated))
    lifecycle.settle_tournaments(session, [t for t in tournaments if t is not None], pause_after)


def attach_bot(session: Session, who: Caller, bot: Bot, owner_token: str) -> None:
    """The account signed in takes the bot whose owner token it shows."""
    who.check_account("attaching a bot")
    if bot.status == "deleted":
        raise ServiceError(409, f"bot {bot.id} is deleted")
    if not token_matches(owner_token, bot.owner_token_hash):
        raise ServiceError(403, f"this is not bot {bot.id}'s owner token")
    if bot.account_id not in (None, who.account_id):
        raise ServiceError(409, f"bot {bot.id} belongs to another account")
    bot.account_id = who.account_id
    session.flush()
