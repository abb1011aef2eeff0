"""What a sign-in costs the web process: argon2id with bounded memory per check, a bounded
number of checks at once per process (a crowd waits its turn, then is told to come back,
never takes the process's memory), and hashes made with older parameters verified and
made again at the next login."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from argon2 import PasswordHasher
from flask import Flask

from arena.services import accounts

PASSWORD = "correct horse battery"


def signup_api(client: Any, name: str) -> None:
    answer = client.post("/api/accounts", json={"name": name, "password": PASSWORD})
    assert answer.status_code == 201, answer.get_json()


def csrf(client: Any) -> str:
    found = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/login").text)
    assert found
    return found.group(1)


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(organiser_token="organiser-secret", rate_limits=False)


def stored_hash(app: Flask, name: str) -> str:
    with app.extensions["arena.db"].session() as session:
        return accounts.account_by_name(session, name).password_hash


def test_new_passwords_are_argon2id_with_bounded_memory(app, client):
    signup_api(client, "ada")
    # OWASP's argon2id parameters: 19 MiB, 2 passes, 1 lane (one thread)
    assert stored_hash(app, "ada").startswith("$argon2id$v=19$m=19456,t=2,p=1$")


def test_a_hash_of_older_parameters_verifies_and_is_made_again_at_login(app, client):
    signup_api(client, "ada")
    old = PasswordHasher()  # the library's defaults, which earlier versions stored
    with app.extensions["arena.db"].session() as session:
        account = accounts.account_by_name(session, "ada")
        account.password_hash = old.hash(PASSWORD)
    assert stored_hash(app, "ada").startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    answer = client.post("/api/accounts/tokens", json={"name": "ada", "password": PASSWORD})
    assert answer.status_code == 201, answer.get_json()
    assert stored_hash(app, "ada").startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    again = client.post("/api/accounts/tokens", json={"name": "ada", "password": PASSWORD})
    assert again.status_code == 201


@contextmanager
def every_check_taken() -> Iterator[None]:
    """Every turn of this process's password checks held, as by a crowd's logins."""
    for _ in range(accounts.PASSWORD_CHECKS_AT_ONCE):
        assert accounts._checks.acquire(timeout=5)
    try:
        yield
    finally:
        for _ in range(accounts.PASSWORD_CHECKS_AT_ONCE):
            accounts._checks.release()


def test_a_login_that_waits_too_long_for_its_turn_is_a_503_with_retry_after(
    app, client, monkeypatch
):
    signup_api(client, "ada")
    monkeypatch.setattr(accounts, "PASSWORD_CHECK_WAIT", 0.2)
    body = {"name": "ada", "password": PASSWORD}
    with every_check_taken():
        answer = client.post("/api/accounts/tokens", json=body)
        assert answer.status_code == 503
        assert answer.headers["Retry-After"] == str(accounts.PASSWORD_RETRY_AFTER)
        assert "try again" in answer.get_json()["message"]
        page = client.post("/login", data={**body, "csrf_token": csrf(client)})
        assert page.status_code == 503 and page.headers["Retry-After"]
        assert "try again in a few seconds" in page.text
        signup = client.post("/api/accounts", json={"name": "bo", "password": PASSWORD})
        assert signup.status_code == 503
    with app.extensions["arena.db"].session() as session:  # the refused sign-up wrote nothing
        assert accounts.account_by_name(session, "bo") is None
    # the turns free again, the same login goes through
    assert client.post("/api/accounts/tokens", json=body).status_code == 201


def test_a_class_logging_in_at_once_runs_a_bounded_number_of_checks_at_a_time(
    app, client, monkeypatch
):
    signup_api(client, "ada")
    running, most, lock = [0], [0], threading.Lock()
    real = accounts._hasher

    class Counting:
        """The hasher, counting the checks that run at once."""

        def __getattr__(self, name: str) -> Any:
            method = getattr(real, name)

            def counted(*args: Any, **kwargs: Any) -> Any:
                with lock:
                    running[0] += 1
                    most[0] = max(most[0], running[0])
                try:
                    time.sleep(0.05)  # a check long enough for the crowd to meet
                    return method(*args, **kwargs)
                finally:
                    with lock:
                        running[0] -= 1

            return counted if name in ("hash", "verify") else method

    with app.extensions["arena.db"].session() as session:
        ada = accounts.account_by_name(session, "ada")
        session.expunge(ada)
    # the account as each request reads it (SQLite's sessions take turns, PostgreSQL's do
    # not: the crowd meets at the checks alone here)
    monkeypatch.setattr(accounts, "account_by_name", lambda session, name: ada)
    monkeypatch.setattr(accounts, "_hasher", Counting())
    outcomes: list[str] = []

    def log_in(password: str) -> None:  # what each request of the crowd does
        try:
            accounts.authenticate(None, "ada", password)  # type: ignore[arg-type]
        except accounts.ServiceError as exc:
            outcomes.append(str(exc.status))
        else:
            outcomes.append("in")

    crowd = [
        threading.Thread(target=log_in, args=(PASSWORD if i % 2 else "wrong password",))
        for i in range(16)
    ]
    for thread in crowd:
        thread.start()
    for thread in crowd:
        thread.join()
    assert sorted(outcomes) == ["401"] * 8 + ["in"] * 8  # each waited its turn, none refused
    assert most[0] == accounts.PASSWORD_CHECKS_AT_ONCE
