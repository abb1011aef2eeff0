"""``/api/connect``: the bot's side of the connect transport (docs/protocol.md, "Playing
from a laptop").

A bot registered with ``"connect": true`` opens a session here and takes its requests
with long polls; every request to these endpoints is signed with the bot's signing
secret and carries a fresh ``request_id``, which no web process of the arena takes twice
(``arena.relay.replays``).  The process that answers a poll holds the session from then
on (``arena.relay``); a poll is held until a request comes for the bot, or
``POLL_SECONDS``.

What each endpoint answers, and what a bot does about it, is tabled in the document; its
tests (``tests/test_connect_document.py``) read those tables and drive every endpoint into
every status they list.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hashlib
import hmac
import math
import random
import re
import secrets
import threading
import time
from typing import Any

import orjson
import requests
from flask import Response, current_app, request
from marshmallow import Schema, fields, validate
from sqlalchemy import func, select

from arena import services
from arena.api.bots import send_validation
from arena.api.common import ApiBlueprint, config, database
from arena.api.schemas.fields import id_field
from arena.games import GAMES
from arena.match.faults import excerpt
from arena.models import Bot, BotSession, Match, MatchSeat, utcnow
from arena.relay import forward, presence, replays, sessions
from arena.relay.hub import Replaced
from arena.relay.internal import (
    NO_BOT,
    SIGNATURE,
    TIMESTAMP,
    Relay,
    hop_headers,
    signature,
)
from arena.services.bots import started_validation

POLL_SECONDS = 25  # a poll with nothing to hand out is answered after this long
HOLD_SPREAD = 0.2  # an empty poll is answered within its last fifth, at random
DRAIN_POLL_SECONDS = 1.0  # ... that of a draining bot, whose matches are ending
SESSIONS_PER_MINUTE = 12  # sessions a bot may open per minute (per web process)
# polls that carry no answer a bot may send per minute (per web process), besides two for
# each request it takes at once: a bot keeps its polls open 25 s, so only a bot spinning
# polls (each ending its oldest open one) comes near it
IDLE_POLLS_PER_MINUTE = 60
MAX_ANSWERS = 64
REQUEST_ID = validate.Regexp(r"^[0-9a-f]{32}$", error="32 lowercase hex digits")
TOKEN_TAG_BYTES = 12  # of a session token's tag (``_mint``): 16 characters of base64url

blp = ApiBlueprint(
    "connect",
    __name__,
    url_prefix="/api/connect",
    description="Bots that connect out to the arena (signed with the bot's signing secret).",
)


class Signed(Schema):
    bot_id = id_field(required=True)
    request_id = fields.String(required=True, validate=REQUEST_ID)


class SessionOpen(Signed):
    info = fields.Dict(
        required=True, metadata={"description": "what the bot would answer to GET /"}
    )


class Answer(Schema):
    request_id = fields.String(required=True, validate=REQUEST_ID)
    status = fields.Integer(required=True, strict=True, validate=validate.Range(100, 599))
    body = fields.Raw(required=True, metadata={"description": "the bot's JSON answer"})


class Poll(Signed):
    session = fields.String(required=True, validate=validate.Length(min=1, max=64))
    answers = fields.List(
        fields.Nested(Answer), load_default=list, validate=validate.Length(max=MAX_ANSWERS)
    )
    draining = fields.Boolean(load_default=False)

    @staticmethod
    def fast_load(data: Any) -> dict[str, Any] | None:
        """What ``load`` gives for a poll in its usual form (JSON types exactly as the SDK
        sends them), checked without marshmallow: a poll comes with every decision of a
        bot that connects out, and marshmallow's nested lists cost more than the rest of
        the poll.  None for anything else, which ``load`` then judges (and explains)."""
        if type(data) is not dict or not data.keys() <= _POLL_KEYS:
            return None
        bot_id, session = data.get("bot_id"), data.get("session")
        answers, draining = data.get("answers", []), data.get("draining", False)
        if not (
            type(bot_id) is int
            and 1 <= bot_id <= services.MAX_ID
            and _is_request_id(data.get("request_id"))
            and type(session) is str
            and 1 <= len(session) <= 64
            and type(answers) is list
            and len(answers) <= MAX_ANSWERS
            and type(draining) is bool
        ):
            return None
        for answer in answers:
            if not (
                type(answer) is dict
                and answer.keys() == _ANSWER_KEYS
                and _is_request_id(answer["request_id"])
                and type(answer["status"]) is int
                and 100 <= answer["status"] <= 599
                and answer["body"] is not None
            ):
                return None
        return {**data, "answers": answers, "draining": draining}


_POLL_KEYS = frozenset(("bot_id", "request_id", "session", "answers", "draining"))
_ANSWER_KEYS = frozenset(("request_id", "status", "body"))
_REQUEST_ID = re.compile(r"[0-9a-f]{32}")


def _is_request_id(value: Any) -> bool:
    return type(value) is str and _REQUEST_ID.fullmatch(value) is not None


class Close(Signed):
    session = fields.String(required=True, validate=validate.Length(min=1, max=64))


class Opened(Schema):
    session = fields.String()
    poll_seconds = fields.Integer(
        metadata={"description": "whole seconds an empty poll is held at most"}
    )
    replaced = fields.Boolean(metadata={"description": "a live session of the bot was ended"})


class Request(Schema):
    path = fields.String(metadata={"description": "/start, /act or /end"})
    body = fields.String(metadata={"description": "the exact JSON text a webhook bot gets"})
    timestamp = fields.String()
    signature = fields.String()


class Polled(Schema):
    requests = fields.List(fields.Nested(Request))
    playing = fields.Integer(
        allow_none=True,
        metadata={"description": "the bot's matches being played (when it is draining)"},
    )


# -- what every endpoint checks ------------------------------------------------------------
class _Opens:
    """The sessions each bot opened lately with this process (the request ids accepted
    are every process's: ``replay_store``)."""

    def __init__(self) -> None:
        self._opens: dict[int, list[float]] = {}
        self._lock = threading.Lock()

    def may_open(self, bot_id: int) -> bool:
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._opens.get(bot_id, []) if now - t < 60.0]
            if len(recent) >= SESSIONS_PER_MINUTE:
                return False
            self._opens[bot_id] = [*recent, now]
            return True


def relay() -> Relay:
    """This process's relay, made with the app's database on first use."""
    found = current_app.extensions.get("arena.relay")
    if found is None:
        db = database()

        def secret_of(bot_id: int) -> str | None:
            with db.session() as session:
                return session.scalar(
                    select(Bot.signing_secret).where(Bot.id == bot_id, Bot.status != "deleted")
                )

        found = current_app.extensions.setdefault(
            "arena.relay", Relay(secret_of, host=config().relay_host)
        )
    return found


def _opens() -> _Opens:
    return current_app.extensions.setdefault("arena.relay.opens", _Opens())


_MAKING_STORE = threading.Lock()


def replay_store() -> replays.Replays:
    """The request ids accepted by every web process of the arena (Redis or the
    database: ``arena.relay.replays``), made on first use."""
    found = current_app.extensions.get("arena.relay.replays")
    if found is None:
        with _MAKING_STORE:
            found = current_app.extensions.get("arena.relay.replays")
            if found is None:
                found = replays.for_config(config(), database())
                current_app.extensions["arena.relay.replays"] = found
    return found


def _authenticated(data: dict[str, Any]) -> int:
    """The bot whose secret signed this request; a 401 otherwise (also for a replay)."""
    bot_id = data["bot_id"]
    problem = relay().verify(
        bot_id, request.headers.get(TIMESTAMP), request.headers.get(SIGNATURE), request.get_data()
    )
    if problem == NO_BOT:
        raise services.ServiceError(404, f"no bot {bot_id}")
    if problem:
        raise services.ServiceError(401, f"the request is not the bot's: {problem}")
    try:
        fresh = replay_store().new(data["request_id"])
    except replays.Unavailable as exc:
        current_app.logger.warning("%s %s: %s", request.method, request.path, exc.detail)
        raise services.ServiceError(503, str(exc), retry_after=replays.RETRY_AFTER) from None
    if not fresh:
        raise services.ServiceError(401, "replayed request: this request_id was already used")
    return bot_id


def _tell_old_home(old_home: str, bot_id: int, token: str) -> None:
    """Best effort: the process that held the session lets it go (its requests are sent
    again to this one).  A home that is gone needs no telling.  Signed with the relay key
    (which the old home's listener asks of every request) and the bot's secret."""
    secret = relay().secret(bot_id)
    if secret is None:
        return
    body = orjson.dumps({"token": token})
    ts = str(int(time.time()))
    path = f"/relay/{bot_id}/moved"
    headers = {TIMESTAMP: ts, SIGNATURE: signature(secret, ts, body)}
    headers.update(hop_headers("POST", path, body))
    with contextlib.suppress(requests.RequestException):
        requests.post(f"{old_home}{path}", data=body, headers=headers, timeout=2)


# -- the endpoints -------------------------------------------------------------------------
@blp.route("/session", methods=["POST"])
@blp.arguments(SessionOpen)
@blp.response(200, Opened)
def open_session(data: dict[str, Any]) -> dict[str, Any]:
    """Open the bot's session (a live one it had is replaced)"""
    bot_id = _authenticated(data)
    if not _opens().may_open(bot_id):
        raise services.ServiceError(
            429, f"more than {SESSIONS_PER_MINUTE} sessions a minute: wait a little"
        )
    here = relay()
    with database().session() as session:
        bot = services.get_bot(session, bot_id)
        before = bot.validation_match_id
        # every refusal comes before the live session is touched (a copy of the bot with
        # a wrong info must not end the copy that plays): the transaction is rolled back
        info = services.connect_info(bot, data["info"], session)
        _played_here(data["info"]["games"])
        token = _mint(bot_id)
        opened = sessions.open_session(session, bot_id, here.home(), info, token)
        # its first session, or a new version: a validation match (docs/hosted.md)
        started = started_validation(bot, before)
    here.hub.open(bot_id, opened.token, info.get("capacity") or 1)
    send_validation(started)
    if opened.old_home:
        _tell_old_home(opened.old_home, bot_id, opened.token)
    # whole seconds, as documented: a client in a typed language reads it as an integer
    poll_seconds = math.ceil(POLL_SECONDS)
    return {"session": opened.token, "poll_seconds": poll_seconds, "replaced": opened.replaced}


def _played_here(declared: list[str]) -> None:
    """A 400 for an ``info`` that declares a game this arena does not play ("go"): the bot
    was written for another arena, or the name is mistyped, and its author hears it now
    rather than wondering why its matches never come (as registration refuses such a
    ``GET /``).  A game played here that the bot is not registered for is accepted: a bot
    may play more games than its owner registered it for (the JavaScript starter
    declares all three), as a webhook bot's ``GET /`` may; it is seated only in those."""
    unknown = sorted({game for game in declared if game not in GAMES})
    if unknown:
        named = ", ".join(excerpt(game) for game in unknown[:5])
        raise services.ServiceError(
            400,
            f"the bot's info declares game(s) this arena does not play: {named}; games "
            f"here: {', '.join(sorted(GAMES))} (declare only those the bot plays here)",
        )


def _mint(bot_id: int, nonce: str | None = None) -> str:
    """A new session token of the bot (``nonce`` given: the token made with it): random,
    and tagged with an HMAC of the bot's id under the arena's secret key (the one every
    web process shares; not the bot's secret, which its owner may rotate), so that a
    token the arena never gave the bot (mistyped, another bot's, another arena's) is told
    apart from one that a newer session replaced, without remembering every token ever
    given (``_issued``)."""
    nonce = nonce or secrets.token_urlsafe(24)
    key = str(current_app.secret_key).encode()
    message = f"connect session {bot_id} {nonce}".encode()
    mac = hmac.new(key, message, hashlib.sha256).digest()[:TOKEN_TAG_BYTES]
    return f"{nonce}.{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"


def _issued(bot_id: int, token: str) -> bool:
    """Whether the arena gave ``token`` to the bot (``_mint``) at some time."""
    nonce, _, _tag = token.rpartition(".")
    return bool(nonce) and hmac.compare_digest(_mint(bot_id, nonce).encode(), token.encode())


class _IdlePolls:
    """The polls carrying no answer that each bot sent in the last minute."""

    def __init__(self) -> None:
        self._times: dict[int, collections.deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, bot_id: int, limit: int) -> bool:
        now = time.monotonic()
        with self._lock:
            times = self._times.setdefault(bot_id, collections.deque())
            while times and now - times[0] > 60.0:
                times.popleft()
            if len(times) >= limit:
                return False
            times.append(now)
            return True

    def credit(self, bot_id: int, handed: int) -> None:
        """The bot was handed ``handed`` requests: the poll that follows each (open while
        it thinks, as a person's page does) is not spinning, so as many are forgiven."""
        with self._lock:
            times = self._times.get(bot_id)
            for _ in range(min(handed, len(times or ()))):
                times.popleft()  # type: ignore[union-attr]


def _idle_polls() -> _IdlePolls:
    return current_app.extensions.setdefault("arena.relay.idle_polls", _IdlePolls())


def _presence() -> presence.Presence:
    """This process's writer of "last heard from" (``arena.relay.presence``)."""
    found = current_app.extensions.get("arena.relay.presence")
    if found is None:
        db, hub = database(), relay().hub

        def write(tokens: dict[int, str], at: Any) -> None:
            with db.session() as session:
                sessions.seen_many(session, tokens, at)

        made = presence.Presence(write, hub.holding, sessions.SEEN_EVERY.total_seconds(), utcnow)
        found = current_app.extensions.setdefault("arena.relay.presence", made)
    return found


@blp.route("/poll", methods=["POST"])
@blp.arguments(Poll)
@blp.response(200, Polled)
def poll(data: dict[str, Any]) -> dict[str, Any] | Response:
    """Answer requests and take the next one (held until one comes, or ``poll_seconds``)"""
    bot_id = _authenticated(data)
    token = data["session"]
    here = relay()
    if not data["answers"] and not data["draining"]:
        limit = IDLE_POLLS_PER_MINUTE + 2 * here.hub.capacity(bot_id)
        if not _idle_polls().allow(bot_id, limit):
            raise services.ServiceError(
                429,
                f"too many polls that answer nothing: at most {limit} a minute (keep each "
                "poll open until the arena answers it); poll again in a few seconds",
            )
    draining = data["draining"]
    _heard_from(bot_id, token, draining)
    playing = _playing(bot_id) if draining else None
    # a draining bot waits for its matches to end: told at once, then every second
    wait = _hold(bot_id, token) if not draining else 0.0 if playing == 0 else DRAIN_POLL_SECONDS
    try:
        handed = _poll(here, bot_id, token, data["answers"], draining, wait)
    except Replaced as exc:
        if exc.reason == "moved":  # the bot polls another web process now: this one ends
            return {"requests": [], "playing": playing}
        raise services.ServiceError(
            409, f"this session is over: {exc}", reason=exc.reason
        ) from None
    if handed:
        _idle_polls().credit(bot_id, len(handed))
    if draining and not handed:
        playing = _playing(bot_id)
    # written here rather than dumped through the schema: one per decision (see fast_load)
    body = orjson.dumps({"requests": handed, "playing": playing})
    return Response(body, mimetype="application/json")


def _hold(bot_id: int, token: str) -> float:
    """How long a poll with nothing to hand is held: ``POLL_SECONDS`` less up to a fifth,
    at random; the first poll of a session here, anywhere from a tenth of it.  Thousands
    of bots that connect together (after a restart of the web tier) poll together; held
    alike, their polls would come back together every ``POLL_SECONDS``, each wave a burst
    of work that every page and login waits behind.  The first hold scatters them over
    the whole period, and the spread of the next ones keeps them scattered."""
    first = current_app.extensions.setdefault("arena.relay.first_polls", {})
    if first.get(bot_id) != token:
        first[bot_id] = token
        return POLL_SECONDS * random.uniform(0.1, 1.0)
    return POLL_SECONDS * random.uniform(1.0 - HOLD_SPREAD, 1.0)


def _poll(
    here: Relay, bot_id: int, token: str, answers: list[dict[str, Any]], draining: bool,
    wait: float,
) -> list[dict[str, Any]]:  # fmt: skip
    """The poll run on the bot's mailbox: here when this process holds the session; else
    at its home, passed on (``arena.relay.forward``) while the home lives; else here,
    the session taken over.  The requests handed, as the bot gets them."""
    if here.hub.holds(bot_id) != token:
        tried = None
        for _ in range(2):  # the home read again once: it may have moved since it was read
            home = _homes().get(bot_id, token)
            if home is None or home == here.home() or home == tried:
                break
            try:
                return _forwarder().poll(
                    home, bot_id, token, answers, draining, wait, _signer(bot_id)
                )
            except forward.HomeLost as exc:
                current_app.logger.info("bot %d: its home %s is lost (%s)", bot_id, home, exc)
                _homes().forget(bot_id)
                tried = home
        _take_over(here, bot_id, token)
    carried = [(a["request_id"], a["status"], orjson.dumps(a["body"])) for a in answers]
    handed = here.hub.poll(bot_id, token, carried, draining=draining, wait=wait)
    return [d.wire() for d in handed]


class _Homes:
    """The home of each bot's live session as this process last read it (for a few
    seconds: a poll passed on to the home reads it once, not at every poll)."""

    SECONDS = 5.0

    def __init__(self, db: Any) -> None:
        self._db = db
        self._homes: dict[int, tuple[str, str, float]] = {}

    def get(self, bot_id: int, token: str) -> str | None:
        """The home of the bot's live session ``token``; a 409 (or 404) when ``token``
        is not it (``_over``)."""
        now = time.monotonic()
        found = self._homes.get(bot_id)
        if found is not None and found[0] == token and now - found[2] < self.SECONDS:
            return found[1]
        with self._db.session() as session:
            row = session.get(BotSession, bot_id)
            if row is None or row.closed_at is not None or row.token != token:
                raise _over(session, bot_id, token)
            home = row.home
        self._homes[bot_id] = (token, home, now)
        return home

    def forget(self, bot_id: int) -> None:
        self._homes.pop(bot_id, None)


def _homes() -> _Homes:
    return current_app.extensions.setdefault("arena.relay.homes", _Homes(database()))


def _forwarder() -> forward.Forwarder:
    found = current_app.extensions.get("arena.relay.forward")
    if found is None:
        found = current_app.extensions.setdefault("arena.relay.forward", forward.Forwarder())
    return found


def _signer(bot_id: int) -> Any:
    """Headers that sign a body passed on to another web process's relay listener: the
    relay key's (the listener's check) and the bot's secret's."""
    secret = relay().secret(bot_id) or ""

    def sign(path: str, body: bytes) -> dict[str, str]:
        ts = str(int(time.time()))
        headers = {TIMESTAMP: ts, SIGNATURE: signature(secret, ts, body)}
        return {**headers, **hop_headers("POST", path, body)}

    return sign


def _take_over(here: Relay, bot_id: int, token: str) -> None:
    with database().session() as session:
        try:
            old_home = sessions.take_over(session, bot_id, token, here.home())
        except LookupError:
            raise _over(session, bot_id, token) from None
        capacity = (session.get(BotSession, bot_id).info or {}).get("capacity") or 1
    here.hub.open(bot_id, token, capacity)
    if old_home:
        _tell_old_home(old_home, bot_id, token)


def _over(session: Any, bot_id: int, token: str) -> services.ServiceError:
    """Why a poll's session is not the bot's live one: the 409 of a session replaced by a
    newer one or closed, which the document tells the bot to obey (a replaced bot
    stops), or the 404 of a token the arena never gave the bot: "replaced" would stop a
    client whose only fault is a wrong token, and tell its author a false story."""
    row = session.get(BotSession, bot_id)
    if row is not None and row.token == token:
        return services.ServiceError(409, "this session is over: it was closed", reason="closed")
    if row is not None and _issued(bot_id, token):
        why = "this session is over: a newer session of the bot replaced it"
        return services.ServiceError(409, why, reason="replaced")
    return services.ServiceError(404, _never_opened(bot_id, token))


def _never_opened(bot_id: int, token: str) -> str:
    return (
        f"no session {excerpt(token)} of bot {bot_id}: the arena never opened it "
        "(poll with the session token that POST /api/connect/session answered)"
    )


def _heard_from(bot_id: int, token: str, draining: bool) -> None:
    """The bot polled: noted for the next batch of "last heard from"; a draining poll
    (and the first poll after one here) is written at once, as the workers must stop
    offering the bot matches now."""
    drained = current_app.extensions.setdefault("arena.relay.draining", set())
    if draining or bot_id in drained:
        with database().session() as session:
            sessions.seen(session, bot_id, token, draining)
        (drained.add if draining else drained.discard)(bot_id)
        return
    _presence().heard(bot_id, token)


def _playing(bot_id: int) -> int:
    """The bot's matches being played: a draining bot waits for them (no new one starts
    while it drains)."""
    with database().session() as session:
        running = session.scalar(
            select(func.count(Match.id))
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(MatchSeat.bot_id == bot_id, Match.status == "running")
        )
    return running or 0


@blp.route("/close", methods=["POST"])
@blp.arguments(Close)
@blp.response(204)
def close(data: dict[str, Any]) -> None:
    """End the bot's session"""
    bot_id = _authenticated(data)
    token = data["session"]
    with database().session() as session:
        if not sessions.close(session, bot_id, token):  # over already: closed all the same
            row = session.get(BotSession, bot_id)
            if (row is None or row.token != token) and not _issued(bot_id, token):
                raise services.ServiceError(404, _never_opened(bot_id, token))
    relay().hub.leave(bot_id, token, "closed", "closed by the bot")
