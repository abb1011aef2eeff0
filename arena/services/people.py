"""People at the table, and the arena's own house bots as their opponents.

A person's seat is a bot row of kind ``person`` that connects out: the person's page is
one more client of the connect transport (``arena.relay``), so the referee and the
workers treat it as any bot, with the deadline set for the match (``Bot.deadline_ms``).
Each seat a person is given is a row of its own, made for that match or tournament; its
signing secret is the seat's link, shown once.  A seat for an event's tournament is the
event's (``Bot.event_id``), as its bots are: events never mix, and a private event's seat
is hidden with the rest of the event (its lists, its pages) from those not in it.

A house bot is a row of kind ``house`` per policy (``random``, ``heuristic``), made on
first use, for every game with that policy; a worker plays it in process.

``create_play_match`` writes one match (``kind="play"``) from a list of seats: people,
house policies and registered bots (those whose owners let people pick them, unless the
caller is the organiser).  Unrated unless asked.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.games import GAMES, POLICIES
from arena.match.http_client import PROTOCOL_VERSION
from arena.models import Bot, Match, MatchSeat, bot_name, bot_name_key, utcnow
from arena.services.access import hash_token, new_token
from arena.services.errors import MAX_ID, MAX_SEED, ServiceError
from arena.services.tournaments import game_engine, resolve_options

DEFAULT_DEADLINE_SECONDS = 60  # a person's time for each decision, unless the match says
MAX_DEADLINE_SECONDS = 600
MIN_DEADLINE_SECONDS = 2
PERSON_NAME_MAX = 40
SEAT_TAG = " · person "  # a seat's name: the person's, this, and a short tag (names are unique)
HOUSE_OWNER = "arena"
PERSON_SDK = "browser"


@dataclass(frozen=True)
class SeatLink:
    """Where a person sits down: the seat's bot row and its secret (the link's key)."""

    bot_id: int
    name: str
    secret: str

    def path(self) -> str:
        """The seat's page; the secret travels in the fragment, never sent to a server."""
        return f"/play/seat/{self.bot_id}#{self.secret}"

    def json(self) -> dict[str, Any]:
        """As the API gives it (``SeatLinkSchema``)."""
        return {"bot_id": self.bot_id, "name": self.name, "url": self.path()}


def house_policies(game_id: str) -> list[str]:
    """The house policies a game has, for its opponents list."""
    return list(POLICIES[game_engine(game_id).id])


def house_bot(session: Session, policy: str) -> Bot:
    """The house bot of ``policy`` (made on first use), for every game that has it."""
    games = sorted(g for g in GAMES if policy in POLICIES[g])
    if not games:
        known = sorted({p for game in POLICIES.values() for p in game})
        raise ServiceError(400, f"no house policy {policy!r}; policies: {', '.join(known)}")
    name = f"house {policy}"
    key = bot_name_key(name)
    found = session.scalar(select(Bot).where(Bot.kind == "house", Bot.name_key == key))
    if found is not None:
        return found
    live = Bot.status != "deleted"  # a deleted bot's name is free (migration 0019)
    if session.scalar(select(Bot.id).where(Bot.name_key == key, live)) is not None:
        name = f"house {policy} (arena)"  # a contestant's bot has the plain name
        found = session.scalar(select(Bot).where(Bot.name_key == bot_name_key(name), live))
        if found is not None:
            return found
    info = {
        "apiversion": PROTOCOL_VERSION,
        "name": name,
        "author": HOUSE_OWNER,
        "version": "1",
        "games": games,
        "policy": policy,
    }
    bot = Bot(
        name=name,
        endpoint=None,
        kind="house",
        owner=HOUSE_OWNER,
        owner_token_hash=hash_token(new_token()),  # nobody owns it
        signing_secret=new_token(),
        games=games,
        status="active",
        playable=True,
        description=f"The arena's own {policy} policy, played in the worker.",
        info=info,
    )
    try:
        with session.begin_nested():  # another request may be making it at the same time
            session.add(bot)
    except IntegrityError:
        found = session.scalar(select(Bot).where(Bot.name_key == bot_name_key(name), live))
        if found is None:
            raise
        return found
    return bot


def shown_name(seat_name: str) -> str:
    """A person's seat's name as the person gave it, without the tag that makes it unique
    ("ada · person 0c62ce": "ada")."""
    shown, tag, _ = seat_name.rpartition(SEAT_TAG)
    return shown if tag else seat_name


def person_seat(
    session: Session,
    game_id: str,
    name: str,
    owner: str,
    deadline_seconds: int,
    event_id: int | None = None,
) -> SeatLink:
    """A new seat for a person: a bot row of kind ``person`` that connects out, named
    after the person (with a short tag: names are unique), with its own deadline; in
    ``event_id`` (None: the open arena), so that it may sit at that event's tables and is
    seen only where the event is.  No account owns it: an event's limit of bots per
    account does not count it."""
    shown = bot_name(name)[:PERSON_NAME_MAX] or "guest"
    while True:
        tag = f"{random.SystemRandom().getrandbits(24):06x}"
        full = f"{shown}{SEAT_TAG}{tag}"
        if session.scalar(select(Bot.id).where(Bot.name_key == bot_name_key(full))) is None:
            break
    secret = new_token()
    bot = Bot(
        name=full,
        endpoint=None,
        kind="person",
        owner=(owner or shown)[:64],
        owner_token_hash=hash_token(new_token()),  # the seat's link is its only key
        signing_secret=secret,
        games=[game_id],
        status="active",
        deadline_ms=deadline_seconds * 1000,
        event_id=event_id,
        description="A person playing in the browser.",
        info={"apiversion": PROTOCOL_VERSION, "games": [game_id], "capacity": 1},
    )
    session.add(bot)
    session.flush()
    return SeatLink(bot.id, full, secret)


@dataclass(frozen=True)
class PlayMatch:
    match: Match
    links: list[tuple[int, SeatLink]]  # (seat, link) of each person's seat


def create_play_match(
    session: Session,
    *,
    game: str,
    seats: Sequence[dict[str, Any]],
    options: dict[str, Any] | None = None,
    deadline_seconds: int = DEFAULT_DEADLINE_SECONDS,
    rated: bool = False,
    organiser: bool = False,
    owner: str = "",
    seed: int | None = None,
) -> PlayMatch:
    """One match, queued, from its seats in order: ``{"person": name}``, ``{"house":
    policy}`` or ``{"bot_id": id}``.  A registered bot must let people pick it
    (``playable``) unless ``organiser``.  The caller commits, then enqueues."""
    engine = game_engine(game)
    if not engine.min_players <= len(seats) <= engine.max_players:
        raise ServiceError(
            400,
            f"{engine.id} is played by {engine.min_players} to {engine.max_players} players, "
            f"not {len(seats)}",
        )
    if not any("person" in s for s in seats) and not organiser:
        raise ServiceError(400, "a match from /play seats at least one person")
    resolved = resolve_options(engine, options)
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise ServiceError(400, f"seed must be between 0 and {MAX_SEED}")
    bot_ids: list[int] = []
    links: list[tuple[int, SeatLink]] = []
    for seat, wanted in enumerate(seats):
        if "person" in wanted:
            link = person_seat(session, engine.id, wanted["person"], owner, deadline_seconds)
            links.append((seat, link))
            bot_ids.append(link.bot_id)
        elif "house" in wanted:
            policy = wanted["house"]
            if policy not in POLICIES[engine.id]:
                raise ServiceError(
                    400,
                    f"{engine.id} has no house policy {policy!r}; policies: "
                    + ", ".join(POLICIES[engine.id]),
                )
            bot_ids.append(house_bot(session, policy).id)
        else:
            bot_ids.append(_opponent(session, engine.id, wanted["bot_id"], organiser).id)
    match = Match(
        kind="play",
        game=engine.id,
        options=resolved,
        seed=seed if seed is not None else random.SystemRandom().randrange(MAX_SEED + 1),
        status="queued",
        rated=rated,
        created_at=utcnow(),
    )
    session.add(match)
    session.flush()
    session.add_all(
        MatchSeat(match_id=match.id, seat=seat, bot_id=bot_id)
        for seat, bot_id in enumerate(bot_ids)
    )
    session.flush()
    return PlayMatch(match, links)


def _opponent(session: Session, game_id: str, bot_id: int, organiser: bool) -> Bot:
    bot = session.get(Bot, bot_id) if 0 < bot_id <= MAX_ID else None
    if bot is None or bot.status == "deleted":
        raise ServiceError(400, f"no bot {bot_id}")
    if bot.kind == "person":
        raise ServiceError(400, f"bot {bot_id} is a person's seat: seat a person with 'person'")
    if bot.status != "active":
        raise ServiceError(400, f"bot {bot_id} is not active")
    if game_id not in bot.games:
        raise ServiceError(400, f"bot {bot_id} does not play {game_id}")
    if not bot.playable and not organiser:
        raise ServiceError(403, f"bot {bot_id}'s owner does not let people pick it as an opponent")
    return bot


def playable_bots(session: Session, game_id: str) -> list[Bot]:
    """The registered bots people may pick for ``game_id``: active, playing it, and
    allowed by their owners (house bots are offered apart)."""
    rows = session.scalars(
        select(Bot)
        .where(Bot.kind == "bot", Bot.playable.is_(True), Bot.status == "active")
        .order_by(Bot.name_key)
    )
    return [b for b in rows if game_id in (b.games or [])]
