"""Rate limits on sign-up, login and bot registration: past a limit the answer is 429 with
``Retry-After`` and a message, nothing is written, another address is not held back, and
the operator can switch them off (``ARENA_RATE_LIMITS``).  They stop attackers, not a
class behind one address: only failed logins count (per address and per account), a
sign-up with a valid join code counts nowhere, and the organisers' calls are not limited."""

from __future__ import annotations

import pytest

from arena import proxies
from arena.config import ConfigError, from_env
from arena.models import Account, Bot

LIMITS = {
    "signup": "2 per minute",
    "login": "2 per minute",
    "login-account": "3 per minute",
    "register": "2 per minute",
}
ADMIN = "organiser-secret"
PASSWORD = "a long enough password"
HERE = {"REMOTE_ADDR": "203.0.113.7"}
THERE = {"REMOTE_ADDR": "198.51.100.9"}


def count(app, model) -> int:
    with app.extensions["arena.db"].session() as session:
        return session.query(model).count()


def sign_up(client, name: str, where=HERE):
    return client.post(
        "/api/accounts", json={"name": name, "password": PASSWORD}, environ_base=where
    )


def test_sign_up_past_the_limit_is_429_with_retry_after_and_writes_nothing(make_app):
    app = make_app(limits=LIMITS)
    client = app.test_client()
    assert [sign_up(client, n).status_code for n in ("ann", "bob")] == [201, 201]
    refused = sign_up(client, "cy")
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "too many sign-ups from this address" in refused.get_json()["message"]
    assert count(app, Account) == 2
    assert sign_up(client, "cy", THERE).status_code == 201  # another address


def test_logins_past_the_limit_are_429_on_the_api_and_the_page(make_app):
    app = make_app(limits=LIMITS)
    client = app.test_client()
    assert sign_up(client, "ann").status_code == 201
    body = {"name": "ann", "password": "not the password"}
    tries = [
        client.post("/api/accounts/tokens", json=body, environ_base=HERE).status_code
        for _ in range(3)
    ]
    assert tries == [401, 401, 429]
    # the right password waits too: guessing cannot go on past the limit
    right = client.post(
        "/api/accounts/tokens", json={"name": "ann", "password": PASSWORD}, environ_base=HERE
    )
    assert right.status_code == 429 and "Retry-After" in right.headers
    # and the login page counts against the same limit
    form = client.get("/login", environ_base=HERE).get_data(as_text=True)
    csrf = form.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
    page = client.post(
        "/login", data={"name": "ann", "password": PASSWORD, "csrf_token": csrf}, environ_base=HERE
    )
    assert page.status_code == 429


def test_registrations_past_the_limit_are_429(make_app):
    app = make_app(limits=LIMITS)
    client = app.test_client()

    def register(name: str):
        return client.post(
            "/api/bots",
            json={"name": name, "connect": True, "games": ["cactus"], "owner": "o"},
            environ_base=HERE,
        )

    assert [register(n).status_code for n in ("a1", "a2", "a3")] == [201, 201, 429]
    assert count(app, Bot) == 2


def test_the_operator_can_switch_the_limits_off(make_app):
    client = make_app(limits=LIMITS, rate_limits=False).test_client()
    assert {sign_up(client, f"user{i}").status_code for i in range(4)} == {201}


def log_in(client, name: str, password: str, where=HERE) -> int:
    body = {"name": name, "password": password}
    return client.post("/api/accounts/tokens", json=body, environ_base=where).status_code


def test_a_class_behind_one_address_logs_in_as_often_as_it_likes(make_app):
    app = make_app(limits=LIMITS, organiser_token=ADMIN)
    client = app.test_client()
    students = [f"student{i}" for i in range(6)]
    for name in students:
        made = client.post(
            "/api/accounts",
            json={"name": name, "password": PASSWORD},
            headers={"Authorization": f"Bearer {ADMIN}"},
            environ_base=HERE,
        )
        assert made.status_code == 201  # the organiser's calls are not limited
    # logins that succeed count nowhere: every student, twice, from the school's address
    assert {log_in(client, name, PASSWORD) for name in students * 2} == {201}
    # one student's typo does not stop the next one
    assert log_in(client, "student0", "a typo in it") == 401
    assert log_in(client, "student1", PASSWORD) == 201


def test_failed_logins_are_limited_per_account_from_any_address(make_app):
    app = make_app(limits=LIMITS)
    client = app.test_client()
    assert sign_up(client, "ann").status_code == 201
    assert sign_up(client, "bob", THERE).status_code == 201
    # a guesser spreading tries over addresses still meets the account's limit
    addresses = [{"REMOTE_ADDR": f"192.0.2.{i}"} for i in range(1, 6)]
    tries = [log_in(client, "ann", "guess number one", where) for where in addresses]
    assert tries == [401, 401, 401, 429, 429]
    assert log_in(client, " ANN ", PASSWORD, {"REMOTE_ADDR": "192.0.2.99"}) == 429  # one account
    assert log_in(client, "bob", PASSWORD, {"REMOTE_ADDR": "192.0.2.99"}) == 201


def test_sign_ups_with_the_join_code_are_not_limited_and_wrong_codes_are(make_app):
    app = make_app(limits=LIMITS, organiser_token=ADMIN, open_signup=False)
    client = app.test_client()
    event = client.post(
        "/api/events",
        json={"name": "Algorithms 2", "games": ["cactus"]},
        headers={"Authorization": f"Bearer {ADMIN}"},
    ).get_json()

    def sign_up_with(name: str, code: str) -> int:
        body = {"name": name, "password": PASSWORD, "join_code": code}
        return client.post("/api/accounts", json=body, environ_base=HERE).status_code

    assert {sign_up_with(f"pupil{i}", event["join_code"]) for i in range(6)} == {201}
    assert [sign_up_with(f"guess{i}", "WRONG-CODE") for i in range(3)] == [400, 400, 429]
    assert sign_up_with("pupil9", event["join_code"]) == 201  # the class still gets in
    assert count(app, Account) == 7


def test_the_organiser_registers_bots_without_a_limit(make_app):
    client = make_app(limits=LIMITS, organiser_token=ADMIN).test_client()
    answers = [
        client.post(
            "/api/bots",
            json={"name": f"ref{i}", "connect": True, "games": ["cactus"], "owner": "o"},
            headers={"Authorization": f"Bearer {ADMIN}"},
            environ_base=HERE,
        ).status_code
        for i in range(4)
    ]
    assert answers == [201] * 4


PROXY = {"REMOTE_ADDR": "10.0.3.7"}  # the ingress, as the web process sees it


def forwarded(client, name: str, *chain: str):
    """A failed login through the proxy, ``X-Forwarded-For: chain``."""
    return client.post(
        "/api/accounts/tokens",
        json={"name": name, "password": "not the password"},
        headers={"X-Forwarded-For": ", ".join(chain)},
        environ_base=PROXY,
    ).status_code


@pytest.mark.parametrize("trusted", ["10.0.0.0/8", "1"])
def test_behind_a_trusted_proxy_each_client_is_counted_apart(make_app, trusted):
    app = make_app(limits=LIMITS, trusted_proxies=proxies.parse(trusted))
    client = app.test_client()
    # two students behind the ingress: one's failures do not lock the other out
    assert [forwarded(client, "ann", "203.0.113.7") for _ in range(3)] == [401, 401, 429]
    assert forwarded(client, "bob", "198.51.100.9") == 401


def test_a_client_cannot_pick_its_address_with_a_header_of_its_own(make_app):
    app = make_app(limits=LIMITS, trusted_proxies=proxies.parse("10.0.0.0/8"))
    client = app.test_client()
    # the attacker writes a new address each time; the proxy appends the real one
    tries = [forwarded(client, "ann", f"192.0.2.{i}", "203.0.113.7") for i in range(3)]
    assert tries == [401, 401, 429]
    # straight from outside, no forwarded header is read at all
    direct = [
        client.post(
            "/api/accounts/tokens",
            json={"name": "bob", "password": "not the password"},
            headers={"X-Forwarded-For": f"192.0.2.{i}"},
            environ_base=THERE,
        ).status_code
        for i in range(3)
    ]
    assert direct == [401, 401, 429]


def test_without_trusted_proxies_the_proxy_is_one_client(make_app):
    client = make_app(limits=LIMITS).test_client()
    assert forwarded(client, "ann", "203.0.113.7") == 401
    assert forwarded(client, "bob", "198.51.100.9") == 401
    assert forwarded(client, "cy", "198.51.100.10") == 429  # X-Forwarded-For ignored


@pytest.mark.parametrize("text", ["two", "10.0.0.0/33", "-1"])
def test_a_bad_trusted_proxies_setting_stops_the_process(text):
    with pytest.raises(ConfigError, match="ARENA_TRUSTED_PROXIES"):
        from_env({"ARENA_TRUSTED_PROXIES": text})
