"""The referee: faults give the default action and a strike, never stop the match."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import ExitStack

import pytest

from arena.games import GAMES, make_policy
from arena.match.faults import BotFault
from arena.match.http_client import HttpClient
from arena.match.netpolicy import AddressPolicy
from arena.match.records import check
from arena.match.referee import MatchAbandoned, MatchTimeLimit, PolicyClient, Referee, policy_rng
from tests.support.badbots import absent_bot_url, closing_bot, http_bot

MAX_STRIKES = 3


def house(game: str, seat: int, seed: int = 1, name: str = "random") -> PolicyClient:
    return PolicyClient(make_policy(game, name, policy_rng(seed, seat)), f"{name}{seat}")


def faults_of(record, seat: int) -> list[str]:
    return [d["fault"] for step in record.steps for d in step if d["seat"] == seat and "fault" in d]


@pytest.mark.parametrize(
    ("behaviour", "fault"),
    [
        ("sleepy", "timeout"),
        ("trickle", "timeout"),
        ("error500", "http_status"),
        ("not_json", "not_json"),
        ("illegal", "illegal_action"),
        ("huge", "too_large"),
        ("redirect", "redirect"),
        ("closer", "connection_closed"),
        ("absent", "connection_refused"),
    ],
)
def test_a_bad_bot_gets_defaults_and_strikes_and_the_match_completes(behaviour, fault):
    with ExitStack() as stack:
        if behaviour == "closer":
            url = stack.enter_context(closing_bot())
        elif behaviour == "absent":
            url = absent_bot_url()
        else:
            good = stack.enter_context(http_bot("ok"))
            url = stack.enter_context(http_bot(behaviour, redirect_to=good + "/act"))
        bad = HttpClient(url, secret="s3cret", name=behaviour)
        stack.callback(bad.close)
        referee = Referee(max_strikes=MAX_STRIKES, deadline_ms=300)
        record = referee.run("cactus", [bad, house("cactus", 1)], seed=4)

    assert record.outcome is not None
    faults = faults_of(record, 0)
    assert faults[:MAX_STRIKES] == [fault] * MAX_STRIKES, faults[:5]
    assert record.strikes[0] == MAX_STRIKES
    # once struck out the bot is not asked again: it plays out on default actions
    assert faults[MAX_STRIKES:] == ["struck_out"] * (len(faults) - MAX_STRIKES)
    for step in record.steps:
        for d in step:
            if d["seat"] == 0:
                assert "fault" in d  # the default action was played
    assert record.outcome["ranks"][0] == 2  # a struck-out bot ranks last
    assert record.outcome["struck_out"] == [0]
    assert record.outcome["forfeited"] == [0]  # not one usable answer in the match
    causes = [d["cause"] for step in record.steps for d in step if d.get("fault") == fault]
    assert causes and all(c["detail"] for c in causes)  # every fault says what happened
    assert check(record.to_json()) == []  # the record re-simulates: nothing was lost


def test_a_bot_with_one_good_answer_did_not_forfeit_and_short_matches_count_too():
    """A forfeit is a match with no usable answer at all, whether or not the bot was
    asked often enough to strike out; one good answer and it is an ordinary loss."""

    class Answers:
        def __init__(self, good: int):
            self.name, self.good = f"good-{good}", good

        def start(self, info): ...

        def act(self, payload):
            self.good -= 1
            if self.good >= 0:
                return {"action": payload["legal_actions"][0]}
            return {"action": "not an action"}

        def end(self, info): ...

        def close(self): ...

    forfeit = Referee(max_strikes=1000).run("cactus", [Answers(0), house("cactus", 1)], seed=4)
    assert forfeit.outcome["forfeited"] == [0] and forfeit.outcome["struck_out"] == []
    assert forfeit.outcome["ranks"][0] == 2
    illegal = [d["cause"] for step in forfeit.steps for d in step if d.get("fault")]
    assert illegal[0] == {
        "detail": "the action is not in legal_actions",
        "excerpt": '"not an action"',
    }
    played = Referee(max_strikes=1000).run("cactus", [Answers(1), house("cactus", 1)], seed=4)
    assert played.outcome["forfeited"] == []


def test_the_referee_is_unaffected_by_bad_bots():
    threads_before = threading.active_count()
    for behaviour in ("error500", "illegal", "not_json"):
        with http_bot(behaviour) as url:
            bad = HttpClient(url)
            Referee(deadline_ms=300).run("cactus", [bad, house("cactus", 1)], seed=9)
            bad.close()
    with http_bot("ok") as url:
        good = HttpClient(url)
        record = Referee().run("cactus", [good, house("cactus", 1)], seed=9)
        good.close()
    assert record.strikes == [0, 0]
    assert not any(faults_of(record, 0))
    assert threading.active_count() <= threads_before + 2  # the watchdog, a pool thread


def test_a_house_bot_that_raises_is_a_fault_too():
    class Broken:
        name = "broken"

        def start(self, info):
            raise RuntimeError("no start")

        def act(self, payload):
            raise ZeroDivisionError

        def end(self, info):
            raise RuntimeError("no end")

        def close(self):
            pass

    record = Referee().run("cactus", [Broken(), house("cactus", 1)], seed=2)
    assert faults_of(record, 0)[:MAX_STRIKES] == ["error: ZeroDivisionError"] * MAX_STRIKES


@pytest.mark.parametrize("game", sorted(GAMES))
def test_reaction_windows_ask_every_seat_and_the_record_replays(game):
    clients = [house(game, seat, 5, "heuristic" if seat == 0 else "random") for seat in range(4)]
    record = Referee().run(game, clients, seed=5)
    assert check(record.to_json()) == []
    assert record.strikes == [0, 0, 0, 0]


def test_an_endpoint_refused_by_the_address_policy_is_a_fault_not_a_call():
    policy = AddressPolicy.for_profile("production")
    with http_bot("ok") as url:
        bot = HttpClient(url, check_address=policy.check)
        record = Referee().run("cactus", [bot, house("cactus", 1)], seed=3)
        bot.close()
    assert faults_of(record, 0)[0] == "refused_address"


def test_a_memo_is_kept_and_capped():
    class Chatty:
        name = "chatty"

        def start(self, info):
            pass

        def act(self, payload):
            return {"action": payload["legal_actions"][0], "memo": "m" * 1000}

        def end(self, info):
            pass

        def close(self):
            pass

    record = Referee().run("cactus", [Chatty(), house("cactus", 1)], seed=2)
    memos = [d["memo"] for step in record.steps for d in step if d["seat"] == 0]
    assert memos and all(m == "m" * 256 for m in memos)


def test_an_https_endpoint_is_reached_at_the_address_that_was_checked(monkeypatch):
    """The name is resolved once and the checked address is the one dialled: a name that
    resolves again at connect time could rebind to an address the policy refuses.  TLS
    still names the endpoint's host (SNI), so its certificate is checked against it."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    hello: list[bytes] = []

    def accept() -> None:
        conn, _ = listener.accept()
        with conn:
            hello.append(conn.recv(4096))  # the ClientHello; then hang up

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    answers = iter([[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]])
    resolved: list[str] = []
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if host == "127.0.0.1":  # a number, not a name: nothing to rebind
            return real_getaddrinfo(host, *args, **kwargs)
        resolved.append(host)
        try:
            return next(answers)
        except StopIteration:
            raise OSError("a second resolution (this one would rebind)") from None

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    checked: list[str] = []
    bot = HttpClient(f"https://bot.example:{port}", check_address=checked.append)
    with pytest.raises(BotFault) as fault:
        bot.info()
    thread.join(5)
    listener.close()
    assert resolved == ["bot.example"] and checked == ["127.0.0.1"]
    assert hello and b"bot.example" in hello[0]
    assert "second resolution" not in str(fault.value)


def test_a_match_told_to_stop_is_abandoned_before_its_next_step():
    """A worker that lost its lease on a match stops playing it (arena.worker.warden)."""
    stop = threading.Event()

    class Stopper(PolicyClient):
        def act(self, payload):
            stop.set()  # the lease is lost while this answer is being given
            return super().act(payload)

    clients = [Stopper(make_policy("cactus", "random", policy_rng(1, 0)), "s"), house("cactus", 1)]
    with pytest.raises(MatchAbandoned):
        Referee().run("cactus", clients, seed=1, stop=stop)


def test_a_match_past_its_time_limit_is_given_up():
    class Slow(PolicyClient):
        def act(self, payload):
            time.sleep(0.02)
            return super().act(payload)

    clients = [Slow(make_policy("cactus", "random", policy_rng(1, 0)), "s"), house("cactus", 1)]
    with pytest.raises(MatchTimeLimit, match=r"longer than 0\.1 s"):
        Referee(time_limit=0.1).run("cactus", clients, seed=1)
