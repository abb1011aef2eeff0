"""The worker's side of the connect transport: a bot that connects out, as the referee
sees it.

A connect bot has no endpoint.  ``RelayClient`` hands each request, the signed body a
webhook bot would get, to the web process holding the bot's session (its *home*, read
from the database by ``locate``) at ``POST {home}/relay/<bot id>/<act|start|end>``, with
the time the bot has left in ``X-Arena-Deadline-Ms``, the hop signed with the relay key
(``X-Arena-Relay-Signature``, which bots never see); the home answers once the bot has
(``arena.relay.internal``).  Each request is a ``RelayExchange`` that
``arena.match.exchanges.settle`` drives like any other, over the same non-blocking HTTP exchange
as a webhook (``arena.match.http_client.HttpExchange``), so a reaction window mixing both
transports is settled in one thread.

The bot's clock starts when the request is handed to the relay, and the latency recorded
is the one the home measured between handing the request to the bot's poll and its
answer: the relay's own hop is not the bot's.  When the session is elsewhere (``409
moved``: the bot polls another web process now) or its home cannot be reached (the
process died), the home is looked up again and the request sent again, under a fresh
``request_id`` naming the one handed before (``X-Arena-Previous``): a bot whose answer
reached the new home first is not asked twice.  A session that moved (the bot's doing: a
new copy of it) keeps the request's deadline; a home that died (the arena's) gives the
bot a whole deadline to come back and a whole one again once the request is handed to
it, since the arena's crash must never cost a bot a fault.  A bot with no live session
gets the rest of its deadline to come back, then the request is a ``disconnected`` fault
with its cause.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import orjson

from arena.match.exchanges import Waker, act_seconds, settle
from arena.match.faults import BotFault
from arena.match.http_client import CONTROL_TIMEOUT, DEADLINE_GRACE, HttpClient, HttpExchange
from arena.match.pools import Pools
from arena.relay.internal import (
    DEADLINE,
    HANDED_AT,
    LATENCY,
    OUTCOME,
    PREVIOUS,
    RELAY_SIGNATURE,
    sign_hop,
)

RELAY_MARGIN = 1.0  # seconds past the bot's deadline the home has to say how it ended
LOOK_AGAIN = 0.2  # seconds between two looks for a bot that is not connected
_HOME_LOST = ("connection_refused", "connection_error", "connection_closed")
MOVED_AGAIN = 0.01  # seconds before a request a home refused as moved is sent again


class _Hop(HttpClient):
    """The HTTP client of one hand-off to a home: a webhook request to
    ``{home}/relay/<bot id>``, with the relay's headers added when it is sent and the
    whole signed with the relay key (``arena.relay.internal.sign_hop``)."""

    def __init__(
        self, endpoint: str, secret: str, name: str, pool: Any,
        extra: Callable[[], dict[str, str]],
    ):  # fmt: skip
        super().__init__(endpoint, secret, name, pool=pool)
        self._extra = extra

    def post_head(self, path: str) -> bytes:
        return self._post_heads[path]

    def _request(self, post_head: bytes | None, body: bytes) -> bytes:
        request = super()._request(post_head, body)
        head, _, rest = request.partition(b"\r\n")
        relayed = self._extra()
        path = head.split(b" ", 2)[1].decode("latin-1")
        relayed[RELAY_SIGNATURE] = sign_hop("POST", path, body, relayed)
        lines = "".join(f"{name}: {value}\r\n" for name, value in relayed.items())
        return head + b"\r\n" + lines.encode("latin-1") + rest


class _WakeFor:
    """The window's waker as a hop's pool sees it: waking the hop wakes the exchange it
    carries (``settle`` knows only that one)."""

    __slots__ = ("_exchange", "_waker")

    def __init__(self, exchange: RelayExchange, waker: Waker):
        self._exchange = exchange
        self._waker = waker

    def arm(self) -> None:
        self._waker.arm()

    def wake(self, _hop: Any) -> None:
        self._waker.wake(self._exchange)


class RelayExchange:
    """One request to a connect bot, through whichever home holds its session (the
    ``Exchange`` protocol of ``arena.match.referee``)."""

    __slots__ = (
        "_client",
        "_deadline",
        "_error",
        "_handed_wall",
        "_home_lost",
        "_hop",
        "_look_at",
        "_path",
        "_payload",
        "_previous",
        "_reply",
        "_sent_id",
        "_tried",
        "done",
        "finished",
        "seconds",
        "started",
    )

    def __init__(self, client: RelayClient, path: str, payload: Any, seconds: float):
        self._client = client
        self._path = path
        self._payload = payload
        self.seconds = seconds
        self._deadline = 0.0  # set when first advanced: the bot's clock starts then
        self._hop: HttpExchange | None = None
        self._look_at = 0.0
        self._previous: str | None = None  # the request_id a lost home may have handed
        self._handed_wall: float | None = None
        self._sent_id = ""
        self._tried: str | None = None  # the home that failed last (looked up again)
        self._reply: Any = None
        self._error: BotFault | None = None
        self._home_lost = False  # the arena lost the home it last handed the request to
        self.done = False
        self.started = self.finished = time.perf_counter()

    # -- the Exchange protocol -------------------------------------------------------------
    def advance(self, waker: Waker) -> None:
        if self.done:
            return
        try:
            if not self._deadline:
                self._deadline = time.monotonic() + self.seconds
                self.started = time.perf_counter()
            hop = self._hop
            if hop is not None:
                hop.advance(_WakeFor(self, waker))
                if hop.done:
                    self._hop = None
                    self._landed(hop)
            if not self.done and self._hop is None:
                self._look(waker)
        except Exception as exc:  # never raise out of settle
            self._fail(exc if isinstance(exc, BotFault) else BotFault(
                "connection_error", f"{type(exc).__name__}: {exc}", error=type(exc).__name__
            ))  # fmt: skip

    def watch(self) -> tuple[int, int] | None:
        return self._hop.watch() if self._hop is not None else None

    def due(self) -> float | None:
        if self.done:
            return None
        if self._hop is not None:
            return self._hop.due()
        return min(self._look_at, self._deadline) if self._deadline else None

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._reply

    def cancel(self) -> None:
        if self._hop is not None:
            self._hop.cancel()
            self._hop = None
        if not self.done:
            self._fail(BotFault("connection_error", "the request was given up by the arena"))

    # -- the steps -----------------------------------------------------------------------------
    def _look(self, waker: Waker) -> None:
        """Hand the request to the bot's home, or wait for the bot to come back."""
        now = time.monotonic()
        left = self._deadline - now
        if left <= 0:
            self._fail(self._gone())
            return
        if now < self._look_at:
            return
        home = self._client.locate()
        if home is None or home == self._tried:
            self._client.forget()
            self._look_at = now + LOOK_AGAIN  # not connected (yet), or not moved yet
            return
        self._tried = None
        if self._home_lost:
            # handed again after the arena lost its home: the bot's clock starts again
            self._home_lost = False
            self._deadline, left = now + self.seconds, self.seconds
        self._sent_id = os.urandom(16).hex()
        body = orjson.dumps({**self._payload, "request_id": self._sent_id})
        hop_client = self._client.hop(home, self._headers)
        hop = HttpExchange(hop_client, hop_client.post_head(self._path), body, left + RELAY_MARGIN)
        self._hop = hop
        hop.advance(_WakeFor(self, waker))
        if hop.done:
            self._hop = None
            self._landed(hop)

    def _headers(self) -> dict[str, str]:
        """The relay's headers, as the hop is sent: the time the bot has left."""
        left_ms = max((self._deadline - time.monotonic()) * 1000.0, 0.0)
        headers = {DEADLINE: f"{left_ms:.0f}"}
        if self._previous is not None:
            headers[PREVIOUS] = self._previous
            if self._handed_wall is not None:
                headers[HANDED_AT] = repr(self._handed_wall)
        return headers

    def _landed(self, hop: HttpExchange) -> None:
        """The home answered, or could not be reached."""
        response = hop.response
        if response is None:
            try:
                hop.result()
            except BotFault as fault:
                if fault.kind not in _HOME_LOST:
                    self._fail(fault)  # what the bot's answer was (too large, cut short...)
                    return
            # the home is gone (a web process that died): looked up again, the request
            # sent again once the bot is held elsewhere.  That is the arena's crash, not
            # the bot's doing, and must never cost it a fault: it gets a whole deadline to
            # come back, and a whole one again once the request is handed to it
            self._home_lost = True
            self._deadline = time.monotonic() + self.seconds
            self._tried = self._client.last_home
            self._client.forget()
            self._previous = self._previous or self._sent_id
            return
        outcome = response.headers.get(OUTCOME.lower().encode(), b"").decode("latin-1")
        if outcome == "answer":
            try:
                self._reply = hop.result()
            except BotFault as fault:
                self._error = fault
            latency = response.headers.get(LATENCY.lower().encode())
            self.finished = time.perf_counter()
            if latency:
                self.started = self.finished - float(latency) / 1000.0
            self.done = True
            return
        if outcome in ("moved", "disconnected"):
            handed = response.headers.get(HANDED_AT.lower().encode())
            if handed:  # the lost home had handed it: its answer may come to the new one
                self._previous, self._handed_wall = self._sent_id, float(handed)
            # looked up again: at once when the session moved (a new session may be held
            # by the same process), a little later when the bot went away
            self._client.forget()
            self._look_at = time.monotonic() + (MOVED_AGAIN if outcome == "moved" else LOOK_AGAIN)
            return
        if outcome == "timeout":
            self._fail(BotFault("timeout", f"no answer within {self.seconds:.2f}s"))
            return
        detail = orjson.loads(response.body).get("detail", "") if response.body else ""
        self._fail(BotFault(
            "connection_error", f"the relay refused the request (HTTP {response.status}): {detail}",
            status=response.status,
        ))  # fmt: skip

    def _gone(self) -> BotFault:
        if self._tried is not None:
            return BotFault(
                "disconnected",
                "the bot's connection was lost and it did not come back within the deadline",
            )
        return BotFault("disconnected", "the bot was not connected to the arena")

    def _fail(self, fault: BotFault) -> None:
        if self.done:
            return
        self._error = fault
        self.finished = time.perf_counter()
        self.done = True


class RelayClient:
    """One connect bot, for the referee: ``start``, ``act`` (and ``begin_act``), ``end``.

    ``locate()`` gives the home of the bot's live session, or None; ``pools`` the worker's
    pools of connections to the homes (none dials a bot: the address policy has nothing
    to check); ``capacity``, the requests at once the bot declared when it connected."""

    def __init__(
        self,
        bot_id: int,
        secret: str,
        name: str,
        *,
        locate: Callable[[], str | None],
        pools: Pools,
        capacity: int | None = None,
    ):
        self.bot_id = bot_id
        self.name = name
        self._secret = secret
        self._locate = locate
        self._pools = pools
        self.capacity = capacity
        self.last_home: str | None = None

    def locate(self) -> str | None:
        """The bot's home: the one found last, until a request there was refused as
        moved or found it gone (``forget``); else looked up."""
        if self.last_home is None:
            self.last_home = self._locate()
        return self.last_home

    def forget(self) -> None:
        """The home found last is no longer the bot's: look it up again."""
        self.last_home = None

    def hop(self, home: str, extra: Callable[[], dict[str, str]]) -> _Hop:
        endpoint = f"{home}/relay/{self.bot_id}"
        pool = self._pools.get(endpoint, self.capacity)
        return _Hop(endpoint, self._secret, self.name, pool, extra)

    def begin(self, path: str, payload: Any, seconds: float) -> RelayExchange:
        return RelayExchange(self, path, payload, seconds)

    def begin_act(self, payload: dict[str, Any]) -> RelayExchange:
        return self.begin("/act", payload, act_seconds(payload, DEADLINE_GRACE))

    def start(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/start", info, CONTROL_TIMEOUT))

    def act(self, payload: dict[str, Any]) -> Any:
        return self.finish(self.begin_act(payload))

    def end(self, info: dict[str, Any]) -> None:
        self.finish(self.begin("/end", info, CONTROL_TIMEOUT))

    def finish(self, exchange: RelayExchange) -> Any:
        settle([exchange])
        return exchange.result()

    def close(self) -> None:
        pass  # the pools are the worker's
