"""Revocation that revokes (issue 34), over real HTTP against ``arena serve`` processes:

- a password reset ends every session and API token of the account: the token an
  attacker minted with a stolen password, and the sign-up token, answer 401 afterwards;
- logging out ends that session on the server: a cookie captured before ``POST /logout``
  is refused after it, while the same account's session on another device stays;
- an organiser signs a contestant out everywhere from the event's roster (and through
  ``POST /api/accounts/<id>/sign-out``); a person signs themselves out everywhere;
- the local profile keeps its Flask secret in the data dir: a session cookie made by one
  ``arena serve`` process is taken by another of the same data dir, and by one started
  after a restart; the production profile takes it from ``ARENA_SECRET_KEY`` only.

Who else may (or may not) sign an account out, and the key file itself, are checked in
process at the end."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import requests
from cryptography.fernet import Fernet
from flask import Flask
from flask.testing import FlaskClient

from arena.config import ConfigError, from_env
from tests.support.api import auth
from tests.support.lanes import free_port, postgres_url
from tests.test_connect_replays import serve

ORGANISER = "organiser-token-of-these-tests"
PASSWORD = "correct horse battery"
NEW_PASSWORD = "a new and better password"
CSRF_META = re.compile(r'name="csrf-token" content="([^"]+)"')


class Browser:
    """One browser: its session cookie, kept and sent by hand (the production profile's
    cookie is Secure, which ``requests`` would not send to plain http), and the CSRF
    token of the last page it read."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.cookie: str | None = None
        self.csrf = ""

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = kwargs.pop("headers", {})
        if self.cookie is not None:
            headers["Cookie"] = f"session={self.cookie}"
        response = requests.request(
            method, self.url + path, headers=headers, allow_redirects=False, timeout=10, **kwargs
        )
        if "session" in response.cookies:
            self.cookie = response.cookies["session"]
        if found := CSRF_META.search(response.text):
            self.csrf = found[1]
        return response

    def page(self, path: str) -> requests.Response:
        response = self.request("GET", path)
        assert response.status_code == 200, (path, response.status_code)
        return response

    def log_in(self, name: str, password: str = PASSWORD) -> None:
        self.page("/login")
        data = {"name": name, "password": password, "csrf_token": self.csrf}
        response = self.request("POST", "/login", data=data)
        assert response.status_code == 302, response.text


def me(url: str, *, token: str | None = None, cookie: str | None = None) -> int:
    """The status of ``GET /api/accounts/me`` with this API token or session cookie."""
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if cookie is not None:
        headers["Cookie"] = f"session={cookie}"
    return requests.get(f"{url}/api/accounts/me", headers=headers, timeout=10).status_code


def account_page(url: str, cookie: str) -> requests.Response:
    headers = {"Cookie": f"session={cookie}"}
    return requests.get(f"{url}/account", headers=headers, allow_redirects=False, timeout=10)


def sign_up(url: str, name: str, **fields: Any) -> tuple[int, str]:
    """An account made through the API: its id and its sign-up token."""
    body = {"name": name, "password": PASSWORD, **fields}
    made = requests.post(f"{url}/api/accounts", json=body, timeout=10)
    assert made.status_code == 201, made.text
    return made.json()["id"], made.json()["token"]


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``arena serve`` of the local profile with an organiser token: its address."""
    folder = tmp_path_factory.mktemp("revocation")
    with ExitStack() as stack:
        yield serve(stack, {"ARENA_DATA_DIR": str(folder), "ARENA_ORGANISER_TOKEN": ORGANISER})


@pytest.fixture(scope="module")
def event(arena: str) -> dict[str, Any]:
    """An event of olga's (an organiser's account): its id, join code and olga's token."""
    body = {"name": "olga", "password": PASSWORD, "role": "organiser"}
    made = requests.post(f"{arena}/api/accounts", json=body, headers=auth(ORGANISER), timeout=10)
    assert made.status_code == 201, made.text
    olga = made.json()["token"]
    body = {"name": "Algorithms 2", "games": ["cactus"], "visibility": "private"}
    created = requests.post(f"{arena}/api/events", json=body, headers=auth(olga), timeout=10)
    assert created.status_code == 201, created.text
    return {**created.json(), "organiser": olga}


# -- the attack: a password reset ends what the stolen password made ------------------------
def test_a_token_minted_with_a_stolen_password_dies_with_the_reset(arena, event):
    ana_id, signup_token = sign_up(arena, "ana", join_code=event["join_code"])
    # someone who learned ana's password makes a token of their own
    body = {"name": "ana", "password": PASSWORD, "label": "not ana"}
    stolen = requests.post(f"{arena}/api/accounts/tokens", json=body, timeout=10)
    assert stolen.status_code == 201, stolen.text
    attacker = stolen.json()["token"]
    assert me(arena, token=attacker) == me(arena, token=signup_token) == 200

    # the organiser makes a reset link; ana opens it and sets a new password
    link = requests.post(
        f"{arena}/api/accounts/{ana_id}/reset", headers=auth(event["organiser"]), timeout=10
    )
    assert link.status_code == 201, link.text
    ana = Browser(arena)
    ana.page(link.json()["reset_path"])
    data = {"password": NEW_PASSWORD, "csrf_token": ana.csrf}
    done = ana.request("POST", link.json()["reset_path"], data=data)
    assert done.status_code == 302, done.text

    assert me(arena, token=attacker) == 401
    assert me(arena, token=signup_token) == 401
    assert me(arena, cookie=ana.cookie) == 200  # the reset signed ana in afresh
    body = {"name": "ana", "password": PASSWORD, "label": "again"}
    assert requests.post(f"{arena}/api/accounts/tokens", json=body, timeout=10).status_code == 401


def test_a_reset_through_the_api_ends_the_sessions_and_tokens_too(arena, event):
    ben_id, signup_token = sign_up(arena, "ben", join_code=event["join_code"])
    laptop = Browser(arena)
    laptop.log_in("ben")
    link = requests.post(
        f"{arena}/api/accounts/{ben_id}/reset", headers=auth(event["organiser"]), timeout=10
    )
    secret = link.json()["reset_path"].rsplit("/", 1)[1]
    body = {"secret": secret, "password": NEW_PASSWORD}
    reset = requests.post(f"{arena}/api/accounts/reset", json=body, timeout=10)
    assert reset.status_code == 204, reset.text
    assert me(arena, token=signup_token) == 401
    assert me(arena, cookie=laptop.cookie) == 401
    # the new password makes a token that works
    body = {"name": "ben", "password": NEW_PASSWORD, "label": "after the reset"}
    fresh = requests.post(f"{arena}/api/accounts/tokens", json=body, timeout=10)
    assert fresh.status_code == 201 and me(arena, token=fresh.json()["token"]) == 200


# -- logging out ------------------------------------------------------------------------------
def test_a_cookie_captured_before_logout_is_refused_after_it(arena, event):
    sign_up(arena, "bea", join_code=event["join_code"])
    laptop, phone = Browser(arena), Browser(arena)
    laptop.log_in("bea")
    phone.log_in("bea")
    captured = laptop.cookie
    assert me(arena, cookie=captured) == 200

    laptop.page("/account")
    out = laptop.request("POST", "/logout", data={"csrf_token": laptop.csrf})
    assert out.status_code == 302, out.text

    assert me(arena, cookie=captured) == 401
    page = account_page(arena, captured)
    assert page.status_code == 302 and page.headers["Location"].startswith("/login")
    # the same account on another device stays signed in
    assert me(arena, cookie=phone.cookie) == 200
    assert account_page(arena, phone.cookie).status_code == 200


# -- signing out everywhere ---------------------------------------------------------------------
def test_an_organiser_signs_a_contestant_out_everywhere_from_the_roster(arena, event):
    cleo_id, signup_token = sign_up(arena, "cleo", join_code=event["join_code"])
    laptop, phone = Browser(arena), Browser(arena)
    laptop.log_in("cleo")
    phone.log_in("cleo")
    olga = Browser(arena)
    olga.log_in("olga")

    roster = olga.page(f"/events/{event['id']}").text
    form = re.search(
        rf'<form class="json-form" data-method="POST" data-url="(/api/accounts/{cleo_id}/sign-out)"'
        r'[^>]*>\s*<button type="submit"[^>]*>Sign out everywhere</button>',
        roster,
    )
    assert form, "no Sign out everywhere button on cleo's roster row"
    # the page's session signs the request in: without the page's CSRF token it is refused
    assert olga.request("POST", form[1]).status_code == 400
    assert me(arena, cookie=laptop.cookie) == 200

    done = olga.request("POST", form[1], headers={"X-CSRFToken": olga.csrf})
    assert done.status_code == 200, done.text
    assert done.json() == {"account_id": cleo_id, "sessions_ended": 2, "tokens_revoked": 1}
    assert me(arena, cookie=laptop.cookie) == me(arena, cookie=phone.cookie) == 401
    assert me(arena, token=signup_token) == 401
    assert me(arena, cookie=olga.cookie) == 200  # the organiser's own session stays
    laptop.log_in("cleo")  # the password still works: cleo signs in again
    assert me(arena, cookie=laptop.cookie) == 200


def test_a_person_signs_themselves_out_everywhere(arena, event):
    sign_up(arena, "dan", join_code=event["join_code"])
    laptop, phone = Browser(arena), Browser(arena)
    laptop.log_in("dan")
    phone.log_in("dan")
    body = {"name": "dan", "password": PASSWORD, "label": "script"}
    token = requests.post(f"{arena}/api/accounts/tokens", json=body, timeout=10).json()["token"]

    account = laptop.page("/account").text
    assert 'action="/account/sign-out"' in account and "Sign out everywhere" in account
    out = laptop.request("POST", "/account/sign-out", data={"csrf_token": laptop.csrf})
    assert out.status_code == 302 and out.headers["Location"].startswith("/login")
    assert me(arena, cookie=laptop.cookie) == me(arena, cookie=phone.cookie) == 401
    assert me(arena, token=token) == 401


def test_a_program_signs_its_account_out_everywhere_with_its_token(arena, event):
    sign_up(arena, "eve", join_code=event["join_code"])
    laptop = Browser(arena)
    laptop.log_in("eve")
    body = {"name": "eve", "password": PASSWORD, "label": "script"}
    token = requests.post(f"{arena}/api/accounts/tokens", json=body, timeout=10).json()["token"]
    done = requests.post(f"{arena}/api/accounts/me/sign-out", headers=auth(token), timeout=10)
    assert done.status_code == 200, done.text
    assert done.json()["sessions_ended"] == 1 and done.json()["tokens_revoked"] == 2
    assert me(arena, token=token) == me(arena, cookie=laptop.cookie) == 401


# -- the local profile's Flask secret ----------------------------------------------------------
def test_a_session_is_good_on_every_process_of_the_data_dir_and_after_a_restart(tmp_path):
    env = {"ARENA_DATA_DIR": str(tmp_path)}
    with ExitStack() as first:
        one, two = serve(first, env), serve(first, env)  # the image's several processes
        sign_up(one, "fay")
        fay = Browser(one)
        fay.log_in("fay")
        assert me(two, cookie=fay.cookie) == 200
        fay.page("/account")
        cookie, token = fay.cookie, fay.csrf
    from arena.config import SECRET_KEY_FILE

    key = tmp_path / SECRET_KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600

    with ExitStack() as again:
        after = serve(again, env)
        assert me(after, cookie=cookie) == 200
        page = account_page(after, cookie)
        assert page.status_code == 200 and "fay" in page.text
        # the page's CSRF token of before the restart still signs its forms
        headers = {"Cookie": f"session={cookie}"}
        out = requests.post(
            f"{after}/logout",
            data={"csrf_token": token},
            headers=headers,
            allow_redirects=False,
            timeout=10,
        )
        assert out.status_code == 302, out.text
        assert me(after, cookie=cookie) == 401


def test_production_takes_its_secret_from_the_environment_only(tmp_path):
    with postgres_url() as database_url:
        env = {
            "ARENA_PROFILE": "production",
            "ARENA_DATA_DIR": str(tmp_path),
            "ARENA_DATABASE_URL": database_url,
            # nothing listens there: serving pages enqueues nothing
            "ARENA_BROKER_URL": f"redis://127.0.0.1:{free_port()}/0",
            "ARENA_ORGANISER_TOKEN": ORGANISER,
            "ARENA_SECRETS_KEY": Fernet.generate_key().decode(),
        }
        refused = subprocess.run(
            [sys.executable, "-m", "arena", "serve", "--port", str(free_port())],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "ARENA_SECRET_KEY" in refused.stderr
        env["ARENA_SECRET_KEY"] = "k" * 64
        with ExitStack() as first:
            url = serve(first, env)
            made = requests.post(
                f"{url}/api/accounts",
                json={"name": "gus", "password": PASSWORD},
                headers=auth(ORGANISER),
                timeout=10,
            )
            assert made.status_code == 201, made.text
            gus, other = Browser(url), Browser(url)
            gus.log_in("gus")
            other.log_in("gus")
            assert "Secure" in requests.get(f"{url}/login", timeout=10).headers["Set-Cookie"]
            captured = gus.cookie
            gus.page("/account")
            assert gus.request("POST", "/logout", data={"csrf_token": gus.csrf}).status_code == 302
            assert me(url, cookie=captured) == 401
        with ExitStack() as again:
            url = serve(again, env)
            assert me(url, cookie=other.cookie) == 200  # the same ARENA_SECRET_KEY
        from arena.config import SECRET_KEY_FILE

        assert not (tmp_path / SECRET_KEY_FILE).exists()


# -- in process: who may sign an account out -----------------------------------------------------
def test_only_the_accounts_organisers_and_the_admin_sign_it_out(make_app):
    app: Flask = make_app(organiser_token=ORGANISER)
    client: FlaskClient = app.test_client()

    def account(name: str, role: str = "contestant", **fields: Any) -> tuple[int, str]:
        body = {"name": name, "password": PASSWORD, "role": role, **fields}
        made = client.post("/api/accounts", json=body, headers=auth(ORGANISER))
        assert made.status_code == 201, made.get_json()
        return made.get_json()["id"], made.get_json()["token"]

    def event_of(token: str) -> dict[str, Any]:
        body = {"name": "e", "games": ["cactus"]}
        made = client.post("/api/events", json=body, headers=auth(token))
        assert made.status_code == 201, made.get_json()
        return made.get_json()

    _, olga = account("olga", "organiser")
    _, otto = account("otto", "organiser")
    mine, others = event_of(olga), event_of(otto)
    ana_id, ana = account("ana", join_code=mine["join_code"])
    _, bob = account("bob", join_code=mine["join_code"])
    zed_id, zed = account("zed", join_code=others["join_code"])
    otto_id = client.get("/api/accounts/me", headers=auth(otto)).get_json()["id"]

    def sign_out(account_id: int, token: str | None) -> Any:
        headers = auth(token) if token else {}
        return client.post(f"/api/accounts/{account_id}/sign-out", headers=headers)

    assert sign_out(ana_id, None).status_code == 401
    for token in (bob, otto, zed):  # a fellow contestant, another event's organiser
        refused = sign_out(ana_id, token)
        assert refused.status_code == 403, refused.get_json()
        assert "organiser" in refused.get_json()["message"]
    assert sign_out(otto_id, olga).status_code == 403  # an organiser is not a contestant
    assert sign_out(999_999, olga).status_code == 404
    assert client.get("/api/accounts/me", headers=auth(ana)).status_code == 200

    done = sign_out(ana_id, olga)
    assert done.status_code == 200 and done.get_json()["tokens_revoked"] == 1
    assert client.get("/api/accounts/me", headers=auth(ana)).status_code == 401
    assert sign_out(zed_id, ORGANISER).status_code == 200  # the admin signs anyone out
    assert client.get("/api/accounts/me", headers=auth(zed)).status_code == 401
    assert sign_out(zed_id, zed).status_code == 401  # zed's token ended with the rest

    _, hal = account("hal", join_code=mine["join_code"])
    hal_id = client.get("/api/accounts/me", headers=auth(hal)).get_json()["id"]
    assert sign_out(hal_id, hal).status_code == 200  # one's own account, by its id too
    assert client.get("/api/accounts/me", headers=auth(hal)).status_code == 401
    assert sign_out(otto_id, otto).status_code == 200

    spec = client.get("/api/openapi.json").get_json()
    for path in ("/api/accounts/{account_id}/sign-out", "/api/accounts/me/sign-out"):
        operation = spec["paths"][path]["post"]
        assert operation["responses"]["200"]["content"]["application/json"]["schema"]


# -- the key file -------------------------------------------------------------------------------
def test_the_local_profile_keeps_one_flask_secret_in_the_data_dir(tmp_path):
    from arena.config import SECRET_KEY_FILE, local_secret_key

    assert not (tmp_path / SECRET_KEY_FILE).exists()
    first = local_secret_key(tmp_path)
    assert first and local_secret_key(tmp_path) == first
    assert stat.S_IMODE((tmp_path / SECRET_KEY_FILE).stat().st_mode) == 0o600
    # from_env leaves it to create_app, which reads the file: "" is "the data dir's"
    assert from_env({"ARENA_DATA_DIR": str(tmp_path)}).secret_key == ""
    given = from_env({"ARENA_DATA_DIR": str(tmp_path), "ARENA_SECRET_KEY": "mine"})
    assert given.secret_key == "mine"  # ARENA_SECRET_KEY still overrides
    with pytest.raises(ConfigError, match="ARENA_SECRET_KEY"):
        from_env({"ARENA_PROFILE": "production", "ARENA_DATA_DIR": str(tmp_path)})


def test_processes_starting_together_agree_on_one_flask_secret(tmp_path):
    from arena.config import SECRET_KEY_FILE

    script = (
        "import sys; from pathlib import Path; from arena.config import local_secret_key; "
        "print(local_secret_key(Path(sys.argv[1])))"
    )
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "fresh")],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    keys = {p.communicate(timeout=60)[0].strip() for p in starts}
    assert len(keys) == 1 and "" not in keys
    assert [p.name for p in (tmp_path / "fresh").iterdir()] == [SECRET_KEY_FILE]
    assert stat.S_IMODE((tmp_path / "fresh" / SECRET_KEY_FILE).stat().st_mode) == 0o600
