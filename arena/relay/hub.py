"""The mailboxes of the bots connected to one web process (the connect transport).

A bot that connects out holds its session in one web process, its *home*.  Workers
hand the home the requests they would have sent to a webhook bot (``deliver``, one
thread of the home per request, held until the request is settled); the bot takes
them with its polls (``poll``), each carrying the answers to earlier ones.  Everything
here is in memory and in one process; which process is a bot's home is in the database
(``arena.relay.sessions``), and how a request reaches it is ``arena.relay.internal``.

A request is *settled* once, as one of:
- ``answer``: the bot's answer (status and body), with the bot's latency: from the moment
  the request left in a poll's answer to the moment its answer arrived;
- ``timeout``: handed to the bot, and no answer by the deadline;
- ``disconnected``: the deadline came while the bot had no poll open and had not been
  polling for a while (its network dropped, it was stopped): never handed, or handed
  before it went away;
- ``moved``: the session left this process (the bot polled another web process, which
  took it over, or it was replaced or closed): the worker asks the new home.

No Flask here, and no database: pure threading, testable alone.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

EARLY_ANSWERS = 256  # answers kept whose request this home has not seen (yet) per session
EARLY_SECONDS = 60.0  # ... and for how long
AWAY_SECONDS = 5.0  # a bot with no poll open for this long counts as disconnected


@dataclass(eq=False)
class Delivery:
    """One request on its way to a connected bot, and how it was settled."""

    bot_id: int
    request_id: str
    path: str
    body: bytes
    timestamp: str
    signature: str
    deadline: float  # time.monotonic() by which it must be answered
    previous: str | None = None  # the request_id it re-sends (after a home was lost)
    handed_at: float | None = None  # monotonic, when it left in a poll's answer
    handed_wall: float | None = None  # the same, time.time(), for another process
    outcome: str | None = None  # answer | timeout | disconnected | moved
    status: int = 0
    answer: bytes = b""
    latency_ms: float | None = None
    detail: str = ""
    settled: threading.Event = field(default_factory=threading.Event)

    def wire(self) -> dict[str, Any]:
        """As a poll's answer carries it (the webhook request: path, body, signature)."""
        return {
            "path": self.path,
            "body": self.body.decode("utf-8"),
            "timestamp": self.timestamp,
            "signature": self.signature,
        }


def _wake_one(session: _Session) -> None:
    """Wake the newest of the session's waiting polls when one could take a request now
    (called with the hub's lock held).  One, not all: each woken poll costs the web
    process a thread switch, and a bot keeps up to ``capacity`` polls open.  The newest:
    an older one may be a poll whose client has gone (a client whose connection dropped
    polls again before the server knows).  A woken poll that does not take the request
    passes the wake on as it leaves (``Hub.poll``)."""
    if session.queue and len(session.out) < session.capacity and session.waiting:
        session.waiting[-1].notify()


def _wake_all(session: _Session) -> None:
    """Wake every waiting poll of the session (it left, or polls must end)."""
    for waiting in session.waiting:
        waiting.notify()


class Replaced(Exception):
    """The session polled is over here: ``reason`` is ``replaced`` (a newer session of
    the bot was opened), ``closed`` (the bot or the arena ended it) or ``moved`` (another
    web process holds it now: the bot's poll there goes on)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


@dataclass(eq=False)
class _Session:
    bot_id: int
    token: str
    capacity: int
    queue: collections.deque[Delivery] = field(default_factory=collections.deque)
    out: dict[str, Delivery] = field(default_factory=dict)  # handed, not answered
    early: collections.OrderedDict[str, tuple[int, bytes, float]] = field(
        default_factory=collections.OrderedDict
    )
    polls: list[threading.Event] = field(default_factory=list)  # open polls, oldest first
    # the polls waiting, oldest first: each on a condition of its own, on the hub's lock
    waiting: list[threading.Condition] = field(default_factory=list)
    last_poll_end: float = field(default_factory=time.monotonic)
    draining: bool = False
    gone: tuple[str, str] | None = None  # why the session left: (reason, in words)


class Hub:
    """Every connected bot's mailbox in this process."""

    def __init__(self, away_seconds: float = AWAY_SECONDS) -> None:
        self.away_seconds = away_seconds
        self._lock = threading.Lock()
        self._sessions: dict[int, _Session] = {}

    # -- sessions ------------------------------------------------------------------------
    def open(self, bot_id: int, token: str, capacity: int) -> None:
        """The bot's session ``token`` lives here now (a new one, or one taken over
        from another process); any other session of the bot here is replaced."""
        with self._lock:
            old = self._sessions.get(bot_id)
            if old is not None and old.token == token:
                old.capacity = capacity
                return
            session = _Session(bot_id, token, capacity)
            if old is not None:  # its requests are sent again, to the new session
                self._leave(old, "replaced", "replaced by a newer session")
            self._sessions[bot_id] = session

    def leave(self, bot_id: int, token: str | None, reason: str, why: str) -> None:
        """The session left this process (``reason``: closed, or moved to another): its
        polls end and its requests are answered ``moved``."""
        with self._lock:
            session = self._sessions.get(bot_id)
            if session is None or (token is not None and session.token != token):
                return
            del self._sessions[bot_id]
            self._leave(session, reason, why)

    def _leave(self, session: _Session, reason: str, why: str) -> None:
        session.gone = (reason, why)
        for poll in session.polls:
            poll.set()
        _wake_all(session)
        for delivery in [*session.queue, *session.out.values()]:
            self._settle(delivery, "moved", detail=why)
        session.queue.clear()
        session.out.clear()

    def holds(self, bot_id: int) -> str | None:
        """The token of the bot's session here, or None."""
        with self._lock:
            session = self._sessions.get(bot_id)
            return None if session is None else session.token

    def capacity(self, bot_id: int) -> int:
        """The requests at once the bot's session here takes (1 when it has none here)."""
        with self._lock:
            session = self._sessions.get(bot_id)
            return 1 if session is None else session.capacity

    def holding(self) -> dict[int, str]:
        """The bots with a poll open here now, and their sessions' tokens."""
        with self._lock:
            return {bot_id: s.token for bot_id, s in self._sessions.items() if s.polls}

    def connected(self) -> dict[int, dict[str, Any]]:
        """Per bot whose session is here: open polls, requests waiting and handed."""
        with self._lock:
            return {
                bot_id: {
                    "polls": len(s.polls),
                    "waiting": len(s.queue),
                    "handed": len(s.out),
                    "draining": s.draining,
                }
                for bot_id, s in self._sessions.items()
            }

    # -- the bot's side ----------------------------------------------------------------------
    def poll(
        self,
        bot_id: int,
        token: str,
        answers: Iterable[tuple[str, int, bytes]],
        *,
        draining: bool = False,
        wait: float = 25.0,
    ) -> list[Delivery]:
        """Take the bot's ``answers`` ((request id, status, body) each), then hand it the
        next request: at once if one waits, else as soon as one comes, else nothing
        after ``wait`` seconds.  A poll beyond the bot's capacity ends the oldest one
        open (a client whose connection dropped polls again before the server knows).
        Raises ``Replaced`` if ``token`` is not the bot's session here."""
        now = time.monotonic()
        ended = threading.Event()
        with self._lock:
            session = self._session(bot_id, token)
            session.draining = draining
            for request_id, status, body in answers:
                self._answer(session, request_id, status, body, now)
            session.polls.append(ended)
            if len(session.polls) > session.capacity:
                while len(session.polls) > session.capacity:
                    session.polls.pop(0).set()
                _wake_all(session)
            try:
                until = now + wait
                mine = threading.Condition(self._lock)
                session.waiting.append(mine)
                try:
                    # nothing to hand, or as many handed and not answered as the bot takes
                    while (not session.queue or len(session.out) >= session.capacity) and not (
                        ended.is_set()
                    ):
                        left = until - time.monotonic()
                        if left <= 0:
                            break
                        mine.wait(left)
                finally:
                    session.waiting.remove(mine)
                if session.gone is not None:
                    raise Replaced(*session.gone)
                if not session.queue or ended.is_set() or len(session.out) >= session.capacity:
                    return []
                delivery = session.queue.popleft()
                delivery.handed_at = time.monotonic()
                delivery.handed_wall = time.time()
                session.out[delivery.request_id] = delivery
                return [delivery]
            finally:
                if ended in session.polls:
                    session.polls.remove(ended)
                session.last_poll_end = time.monotonic()
                if session.gone is None:
                    # this poll may have been the one woken for a request it did not take
                    # (it was ended, or timed out as it was woken), or more wait: pass on
                    _wake_one(session)

    def _session(self, bot_id: int, token: str) -> _Session:
        session = self._sessions.get(bot_id)
        if session is None or session.token != token:
            raise Replaced("moved", "this session is not held here")
        return session

    def _answer(
        self, session: _Session, request_id: str, status: int, body: bytes, now: float
    ) -> None:
        delivery = session.out.pop(request_id, None)
        if delivery is None:
            # a request handed by a home that was lost: its re-send may come here
            session.early[request_id] = (status, body, time.time())
            while len(session.early) > EARLY_ANSWERS:
                session.early.popitem(last=False)
            return
        latency = (now - delivery.handed_at) * 1000.0 if delivery.handed_at else None
        self._settle(delivery, "answer", status=status, answer=body, latency_ms=latency)
        _wake_one(session)  # one more may be handed out

    # -- the worker's side ---------------------------------------------------------------------
    def deliver(self, delivery: Delivery) -> Delivery:
        """Hand ``delivery`` to its bot's session here and wait until it is settled (by
        its deadline at the latest); returns it, settled.  A bot with no session here
        gets it ``moved`` at once: the worker looks its home up again."""
        with self._lock:
            session = self._sessions.get(delivery.bot_id)
            if session is None:
                self._settle(delivery, "moved", detail="the bot's session is not here")
                return delivery
            early = session.early.pop(delivery.previous or delivery.request_id, None)
            if early is not None and time.time() - early[2] <= EARLY_SECONDS:
                status, body, at = early
                handed = delivery.handed_wall  # set by the worker from the lost home's word
                latency = (at - handed) * 1000.0 if handed is not None else None
                self._settle(delivery, "answer", status=status, answer=body, latency_ms=latency)
                return delivery
            session.queue.append(delivery)
            _wake_one(session)
        delivery.settled.wait(max(delivery.deadline - time.monotonic(), 0.0))
        with self._lock:
            if delivery.outcome is None:
                self._expire(delivery)
        return delivery

    def _expire(self, delivery: Delivery) -> None:
        session = self._sessions.get(delivery.bot_id)
        if session is not None:
            if delivery in session.queue:
                session.queue.remove(delivery)
            if session.out.pop(delivery.request_id, None) is not None:
                _wake_one(session)  # one more may be handed out
        away = session is None or (
            not session.polls and time.monotonic() - session.last_poll_end > self.away_seconds
        )
        if delivery.handed_at is None or away:
            seconds = "" if session is None else f"{time.monotonic() - session.last_poll_end:.1f}"
            self._settle(
                delivery,
                "disconnected",
                detail="the bot was not connected"
                + (f" (no poll for {seconds} s)" if seconds and away else "")
                + ("" if delivery.handed_at is None else " after it took the request"),
            )
        else:
            self._settle(delivery, "timeout", detail="no answer within the deadline")

    @staticmethod
    def _settle(delivery: Delivery, outcome: str, **fields: Any) -> None:
        if delivery.outcome is not None:
            return
        delivery.outcome = outcome
        for name, value in fields.items():
            setattr(delivery, name, value)
        delivery.settled.set()
