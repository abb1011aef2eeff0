"""What a connected bot's polls cost the database: "last heard from" written in batches
(``arena.relay.presence``), and the bot's secret read once a minute, not at every poll
(``Relay.verify``), yet a rotated secret works at once and wrong signatures cannot make
every request a read."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select, update

from arena.api import connect as connect_api
from arena.models import BotSession, aware, utcnow
from arena.relay import sessions
from arena.relay.hub import Hub
from arena.relay.internal import NO_BOT, SECRET_TTL, Relay, signature
from arena.relay.presence import BATCH, Presence
from tests.test_connect_api import open_session, poll, register

AT = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


class Writes:
    def __init__(self, fail: int = 0) -> None:
        self.calls: list[tuple[dict[int, str], dt.datetime]] = []
        self.fail = fail

    def __call__(self, tokens: dict[int, str], at: dt.datetime) -> None:
        if self.fail:
            self.fail -= 1
            raise OSError("the database is away")
        self.calls.append((dict(tokens), at))


def test_polls_are_written_together_with_the_bots_holding_a_poll_open() -> None:
    hub = Hub()
    hub.open(1, "t1", capacity=1)
    hub.open(2, "t2", capacity=1)
    held = threading.Thread(target=hub.poll, args=(2, "t2", []), kwargs={"wait": 1.0})
    held.start()
    try:
        while 2 not in hub.holding():
            time.sleep(0.01)
        writes = Writes()
        presence = Presence(writes, hub.holding, every=3600, now=lambda: AT)
        presence.heard(1, "t1")
        presence.heard(3, "t3-old")
        presence.heard(3, "t3")  # the newest token of a bot is the one written
        assert presence.flush() == 3
        assert writes.calls == [({1: "t1", 2: "t2", 3: "t3"}, AT)]
    finally:
        held.join()
    # bot 2's poll has ended: it is not heard from again until it polls
    assert presence.flush() == 0
    assert len(writes.calls) == 1


def test_a_write_that_fails_keeps_its_bots_for_the_next_one() -> None:
    writes = Writes(fail=1)
    presence = Presence(writes, dict, every=3600, now=lambda: AT)
    presence.heard(1, "a")
    with pytest.raises(OSError):
        presence.flush()
    presence.heard(1, "b")  # polled again meanwhile, with a newer session
    presence.heard(2, "c")
    assert presence.flush() == 2
    assert writes.calls == [({1: "b", 2: "c"}, AT)]


def test_thousands_of_bots_cost_a_statement_per_thousand() -> None:
    writes = Writes()
    presence = Presence(writes, dict, every=3600, now=lambda: AT)
    for bot_id in range(2 * BATCH + 1):
        presence.heard(bot_id, f"t{bot_id}")
    assert presence.flush() == 2 * BATCH + 1
    assert [len(tokens) for tokens, _ in writes.calls] == [BATCH, BATCH, 1]


def test_the_writer_runs_by_itself_every_few_seconds() -> None:
    writes = Writes()
    presence = Presence(writes, dict, every=0.05, now=lambda: AT)
    presence.heard(1, "a")
    deadline = time.monotonic() + 10
    while not writes.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    presence.stop()
    assert writes.calls == [({1: "a"}, AT)]


def test_a_poll_is_written_with_the_next_batch_and_only_for_its_live_session(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connect_api, "POLL_SECONDS", 0.2)
    database = client.application.extensions["arena.db"]
    ada, bea = register(client, name="ada"), register(client, name="bea")
    ada_session, bea_session = open_session(client, ada), open_session(client, bea)
    long_ago = utcnow() - dt.timedelta(minutes=5)

    def seen() -> dict[int, dt.datetime]:
        with database.session() as session:
            rows = session.execute(select(BotSession.bot_id, BotSession.seen_at))
            return {bot_id: aware(at) for bot_id, at in rows}

    def backdate() -> None:
        with database.session() as session:
            session.execute(update(BotSession).values(seen_at=long_ago))

    backdate()
    for bot, token in ((ada, ada_session), (bea, bea_session)):
        assert poll(client, bot, token).status_code == 200
    assert set(seen().values()) == {long_ago}  # a poll is not a transaction of its own
    open_session(client, bea)  # bea's session noted is replaced before the batch is written
    backdate()
    presence = client.application.extensions["arena.relay.presence"]
    assert presence.flush() == 2
    written = seen()
    assert written[bea["id"]] == long_ago
    assert utcnow() - written[ada["id"]] < dt.timedelta(seconds=5)
    with database.session() as session:
        assert sessions.online(session, [ada["id"], bea["id"]]) == {ada["id"]}


class Secrets:
    """A bot's secret as the database holds it, and how often it is read."""

    def __init__(self, secret: str | None) -> None:
        self.secret, self.reads = secret, 0

    def __call__(self, bot_id: int) -> str | None:
        self.reads += 1
        return self.secret


def signed(secret: str, body: bytes = b"{}") -> tuple[str, str, bytes]:
    ts = str(int(time.time()))
    return ts, signature(secret, ts, body), body


def test_a_bot_polling_all_minute_is_read_once() -> None:
    store = Secrets("first-secret-of-the-bot")
    relay = Relay(store)
    for _ in range(20):
        assert relay.verify(5, *signed("first-secret-of-the-bot")) == ""
    assert store.reads == 1
    assert SECRET_TTL >= 60  # longer than two polls' hold: a poll each 25 s hits the cache


def test_a_rotated_secret_works_at_once() -> None:
    store = Secrets("first-secret-of-the-bot")
    relay = Relay(store)
    assert relay.verify(5, *signed("first-secret-of-the-bot")) == ""
    store.secret = "second-secret-of-the-bot"  # the owner rotates it
    time.sleep(1.05)
    assert relay.verify(5, *signed("second-secret-of-the-bot")) == ""
    assert relay.verify(5, *signed("first-secret-of-the-bot")) == "wrong signature"


def test_wrong_signatures_do_not_make_every_request_a_read() -> None:
    store = Secrets("first-secret-of-the-bot")
    relay = Relay(store)
    for _ in range(200):
        assert relay.verify(5, *signed("a guess of an attacker")) == "wrong signature"
    assert store.reads <= 2  # the first read, and one reread a second at most
    assert relay.verify(5, *signed("first-secret-of-the-bot")) == ""


def test_a_bot_deleted_or_never_registered_is_no_bot() -> None:
    store = Secrets(None)
    relay = Relay(store)
    assert relay.verify(9, *signed("anything-at-all")) == NO_BOT


def test_bots_that_connected_together_do_not_poll_together(client: FlaskClient) -> None:
    """A restart of the web tier brings every bot's session and first poll at once: the
    first empty poll of a session is held anywhere in the period, the next ones each in
    its last fifth, so the waves of polls it would bring back every 25 s scatter."""
    period = connect_api.POLL_SECONDS
    with client.application.app_context():
        firsts = [connect_api._hold(bot_id, "token-1") for bot_id in range(400)]
        later = [connect_api._hold(bot_id, "token-1") for bot_id in range(400)]
        reopened = connect_api._hold(7, "token-2")  # a new session is scattered again
    assert all(0.1 * period <= hold <= period for hold in [*firsts, reopened])
    # spread over the whole period: some in each tenth of it past the first
    assert {int(hold / period * 10) for hold in firsts} >= set(range(1, 10))
    assert all(0.8 * period <= hold <= period for hold in later)


def test_the_writer_ends_when_no_bot_polls_and_starts_again_when_one_does() -> None:
    writes = Writes()
    presence = Presence(writes, dict, every=0.01, now=lambda: AT)
    presence.heard(1, "a")

    def writers() -> int:
        return int(presence.thread is not None and presence.thread.is_alive())

    deadline = time.monotonic() + 10
    while (writers() or not writes.calls) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writers() == 0 and writes.calls == [({1: "a"}, AT)]
    presence.heard(2, "b")  # a bot polls again: written again
    while len(writes.calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    presence.stop()
    assert writes.calls[1] == ({2: "b"}, AT)
