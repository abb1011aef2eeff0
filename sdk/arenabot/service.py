"""The request checks, whatever the transport: ``BotService`` verifies each of the
arena's requests as the protocol says (signature and timestamp, the JSON body and its
fields, a new ``request_id``) and calls the bot within its capacity; a bot's exception is
a 500 whose message is capped.  Shared by the bot's HTTP server (``arenabot.server``) and
the outbound transport (``arenabot.connect``).  No sockets here."""

from __future__ import annotations

import contextlib
import json
import threading
import traceback
from collections.abc import Sequence
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
            return HTTPStatus.NOT_FOUND, _encode({"error": f"no such path: {path}"})
        secret = self.secret  # it may be set while serving
        if secret is not None:
            try:
                verify(secret, timestamp, signature, body, max_skew=self.max_skew)
            except SignatureError as exc:
                return HTTPStatus.UNAUTHORIZED, _encode({"error": str(exc)})
        request, problem = _parse(body, fields)
        if problem is not None:
            return HTTPStatus.BAD_REQUEST, _encode({"error": problem})
        if secret is not None:
            try:  # signed, well formed: is it new?
                self.replay_guard.check(request.get(REQUEST_ID_FIELD), timestamp)
            except SignatureError as exc:
                return HTTPStatus.UNAUTHORIZED, _encode({"error": str(exc)})
        return request

    def answer(self, path: str, request: dict[str, Any]) -> tuple[HTTPStatus, bytes]:
        """The bot's answer to a verified request (status and JSON body), within the
        bot's capacity: a bot exception, or an answer that is not JSON, is a 500."""
        with self._bot_slots:
            try:
                return HTTPStatus.OK, _encode(self.dispatch(path, request))
            except Exception as exc:
                return _bot_error(exc)


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
