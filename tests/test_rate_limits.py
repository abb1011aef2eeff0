"""Rate limits per client address on sign-up, login and bot registration: past a limit
the answer is 429 with ``Retry-After`` and a message, nothing is written, another
address is not held back, and the operator can switch them off (``ARENA_RATE_LIMITS``)."""

from __future__ import annotations

from arena.models import Account, Bot

LIMITS = {"signup": "2 per minute", "login": "2 per minute", "register": "2 per minute"}
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
    assert "too many requests from this address" in refused.get_json()["message"]
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
