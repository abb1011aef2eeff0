"""The request checks, whatever the transport: ``BotService`` verifies each of the
arena's requests as the protocol says (signature and timestamp, the JSON body and its
fields, a new ``request_id``) and calls the bot within its capacity; a bot's exception is
a 500 whose message is capped.  Shared by the bot's HTTP server (``arenabot.server``) and
the outbound transport (``arenabot.connect``).  No sockets here.

The arena sees a refusal or a late answer as a fault; the bot's author would see
nothing.  So every request the service refuses, and every ``/act`` it answers past the
request's ``deadline_ms``, is told in the bot's own output (``Notices``: the logger
``arenabot``, which prints to stderr unless the bot configures logging), one line each,
saying which check failed and what to do: the first ``NOTICE_FIRST`` of each kind in full,
then one line every ``NOTICE_EVERY`` with the count, so that a flood of bad requests is a
few lines, not thousands."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any

from arenabot.bot import Bot, make_answer
from arenabot.protocol import (
    DEFAULT_MAX_SKEW,
    MAX_JSON_DEPTH,
    REPLAY_MEMORY,
    REQUEST_ID_FIELD,
    REQUIRED_FIELDS,
    ReplayGuard,
    SignatureError,
    json_depth,
    verify,
)

SECRET_ENV = "ARENA_BOT_SECRET"

DEFAULT_THREADS = 8  # requests a thread-safe bot is given at once (its capacity)

ERROR_TEXT_CAP = 300  # characters of an exception message sent back in a 500

NOTICE_FIRST = 3  # lines said in full for each kind of refusal or lateness...
NOTICE_EVERY = 100  # ...then one line each time this many more of the kind have come

log = logging.getLogger("arenabot")

# what to do about each check a request failed (SignatureError.kind, and the service's own)
_ADVICE = {
    "signature": f"the signing secret differs from the arena's: set {SECRET_ENV} (or "
    "--secret) to the secret shown when the bot was registered (or last rotated)",
    "clock": "clock skew: this machine's clock is off from the arena's (set it with NTP), "
    "or the request is old",
    "unsigned": "not the arena's (its requests are always signed), or a proxy in between "
    "dropped the headers",
    "timestamp": "not the arena's: its timestamp is not unix seconds",
    "replay": "a request the bot answered already, sent again (not by the arena)",
    "body": "the body is not a request of protocol 1 (an old SDK? update arenabot)",
    "path": "the bot answers POST /start, /act, /end and GET / only: is the arena's "
    "endpoint for this bot right?",
}


def _log_line(line: str) -> None:
    log.warning("arenabot: %s", line)


class Notices:
    """Lines for the bot's author, rate-limited per kind: the first ``first`` of a kind
    in full, then one in ``every``, with the count so far.  ``say`` writes a line
    (default: a warning of the logger ``arenabot``).  Thread-safe."""

    def __init__(
        self,
        say: Callable[[str], None] | None = None,
        first: int = NOTICE_FIRST,
        every: int = NOTICE_EVERY,
    ):
        self.say = say or _log_line
        self.first = first
        self.every = every
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def tell(self, kind: str, line: str) -> None:
        with self._lock:
            count = self.counts.get(kind, 0) + 1
            self.counts[kind] = count
        if count < self.first:
            self.say(line)
        elif count == self.first:
            self.say(f"{line} (more of these are counted: one line every {self.every})")
        elif count % self.every == 0:
            self.say(f"{line} [{count} so far]")

    def refused(self, path: str, kind: str, reason: str) -> None:
        """A request refused: which check, and what to do."""
        shown = "".join(c if c.isprintable() else "?" for c in path[:60])
        self.tell(kind, f"refused a request to {shown}: {reason}; {_ADVICE[kind]}")

    def late(self, request: dict[str, Any], took_ms: float) -> None:
        """An ``/act`` answered past its ``deadline_ms`` (``took_ms`` as the bot
        measured it, from the request's arrival to its answer)."""
        deadline = request.get("deadline_ms")
        bank = request.get("time_bank_ms") or 0
        if not _number(deadline) or not _number(bank) or took_ms <= deadline:
            return
        over = math.ceil(took_ms - deadline)
        said = (
            f"answered decision {str(request.get('decision_id'))[:40]} of match "
            f"{str(request.get('match_id'))[:60]} after {took_ms:.0f} ms, past its "
            f"deadline_ms of {deadline:g}"
        )
        if over <= bank:
            said += (
                f": {over} ms drawn from the time bank, about {bank - over:g} ms left in this match"
            )
        elif bank:
            said += (
                f" and the {bank:g} ms left of the time bank: the arena counts a timeout "
                "(a strike) and plays a default action"
            )
        else:
            said += (
                ": no time bank, the arena counts a timeout (a strike) and plays a default action"
            )
        self.tell("late", said)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class BotService:
    """The bot behind a transport: checks each of the arena's requests as the protocol
    says (signature, timestamp, fields, ``request_id``) and calls the bot within its
    capacity.  ``BotServer`` (the bot's own HTTP endpoint) and ``ConnectClient`` (the bot
    connecting out to the arena, ``arenabot.connect``) are both one: what a request is
    answered does not depend on the transport that carried it.  No sockets here.

    ``capacity`` is how many requests the bot is given at once (``GET /`` says it): 1
    for a bot that is not thread-safe, whose calls then come one at a time, else
    ``threads`` (default ``DEFAULT_THREADS``)."""

    def __init__(
        self,
        bot: Bot,
        *,
        secret: str | None = None,
        max_skew: float = DEFAULT_MAX_SKEW,
        max_request_ids: int = REPLAY_MEMORY,
        threads: int | None = None,
        notices: Notices | None = None,
    ):
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise ValueError(f"threads must be at least 1, not {threads!r}")
        if threads is not None and threads > 1 and not bot.thread_safe:
            raise ValueError(
                f"{bot.name} is not thread-safe: it takes one request at a time (declare "
                "it thread-safe to give it more threads)"
            )
        self.bot = bot
        self.secret = secret
        self.max_skew = max_skew
        # refusals and late answers, told in the bot's own output
        self.notices = notices or Notices()
        # while there is a secret (it may be set later), a signed request's request_id
        # must be new: one accepted already is a replay (401)
        self.replay_guard = ReplayGuard(max_skew, max_request_ids)
        self.capacity = (threads or DEFAULT_THREADS) if bot.thread_safe else 1
        # the bot's calls: one at a time, or up to its capacity at once
        self._bot_slots: contextlib.AbstractContextManager[Any] = (
            threading.BoundedSemaphore(self.capacity) if bot.thread_safe else threading.Lock()
        )

    def info(self) -> dict[str, Any]:
        """The answer to ``GET /``: the bot's ``info()`` and the server's ``capacity``."""
        return {**self.bot.info(), "capacity": self.capacity}

    def dispatch(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        """Call the bot for a checked request; the answer to send back."""
        if path == "/act":
            return make_answer(self.bot.on_act(request))
        if path == "/start":
            self.bot.start(request)
        else:
            self.bot.end(request)
        return {}

    def check(
        self, path: str, timestamp: str | None, signature: str | None, body: bytes
    ) -> tuple[HTTPStatus, bytes] | dict[str, Any]:
        """A ``POST`` of the arena with its two signature headers and raw body: the
        answer to give it at once (status and JSON body: 401, 400, 404), or, for a
        verified request to the bot, the request (its ``request_id`` is then spent)."""
        fields = REQUIRED_FIELDS.get(path)
        if fields is None:
            self.notices.refused(f"POST {path}", "path", "no such path")
            return HTTPStatus.NOT_FOUND, _encode({"error": f"no such path: {path}"})
        secret = self.secret  # it may be set while serving
        if secret is not None:
            try:
                verify(secret, timestamp, signature, body, max_skew=self.max_skew)
            except SignatureError as exc:
                self.notices.refused(f"POST {path}", exc.kind, str(exc))
                return HTTPStatus.UNAUTHORIZED, _encode({"error": str(exc)})
        request, problem = _parse(body, fields)
        if problem is not None:
            self.notices.refused(f"POST {path}", "body", problem)
            return HTTPStatus.BAD_REQUEST, _encode({"error": problem})
        if secret is not None:
            try:  # signed, well formed: is it new?
                self.replay_guard.check(request.get(REQUEST_ID_FIELD), timestamp)
            except SignatureError as exc:
                self.notices.refused(f"POST {path}", exc.kind, str(exc))
                return HTTPStatus.UNAUTHORIZED, _encode({"error": str(exc)})
        return request

    def answer(self, path: str, request: dict[str, Any]) -> tuple[HTTPStatus, bytes]:
        """The bot's answer to a verified request (status and JSON body), within the
        bot's capacity: a bot exception, or an answer that is not JSON, is a 500.  An
        ``/act`` answered past its ``deadline_ms`` is told (``Notices.late``)."""
        began = time.monotonic()
        with self._bot_slots:
            try:
                answer = HTTPStatus.OK, _encode(self.dispatch(path, request))
            except Exception as exc:
                answer = _bot_error(exc)
        if path == "/act":
            self.notices.late(request, (time.monotonic() - began) * 1000.0)
        return answer


def _bot_error(exc: Exception) -> tuple[HTTPStatus, bytes]:
    traceback.print_exc()  # the bot's author wants to see their bug
    text = f"the bot raised {type(exc).__name__}: {exc}"[:ERROR_TEXT_CAP]
    return HTTPStatus.INTERNAL_SERVER_ERROR, _encode({"error": text})


def _parse(body: bytes, fields: Sequence[str]) -> tuple[dict[str, Any], str | None]:
    """The request object, or a reason for a 400."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return {}, "the body is not UTF-8 JSON"
    # Python's parser recurses once per level: measure the nesting before parsing
    brackets = text.count("[") + text.count("{")  # fewer than the limit: nothing to measure
    if brackets > MAX_JSON_DEPTH and json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return {}, f"the body is nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        request = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: never past the check above
        return {}, "the body is not UTF-8 JSON"
    if not isinstance(request, dict):
        return {}, "the body must be a JSON object"
    missing = [f for f in fields if f not in request]
    if missing:
        return {}, f"missing field(s): {', '.join(missing)}"
    if "legal_actions" in fields and not (
        isinstance(request["legal_actions"], list) and request["legal_actions"]
    ):
        return {}, "legal_actions must be a non-empty list"
    return request, None


def _encode(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
