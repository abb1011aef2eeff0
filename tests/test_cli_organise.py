"""The organiser's commands against a real ``arena serve`` (a process of its own with an
organiser token, on a free loopback port and a data folder of its own): ``arena
accounts`` (create, token), ``arena events``, ``arena bots pause / activate / rename /
delete``, ``arena ladders``, ``arena tournaments list [--watch]``; which token is sent
when several are set; and every mistake as one line with exit status 2."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest

from arena.cli import main
from arena.cli.processes import stop_processes
from tests.support.lanes import free_port
from tests.test_remote import _wait_ready

pytestmark = pytest.mark.xdist_group("server")

ORGANISER = "organiser-token-of-the-organise-tests"
PASSWORD = "correct horse battery"
TOKENS = ("ARENA_TOKEN", "ARENA_ORGANISER_TOKEN", "ARENA_OWNER_TOKEN")


class Terminal(io.StringIO):
    """Standard input that is a terminal (someone typing the answers)."""

    def isatty(self) -> bool:
        return True


def cli(*argv: str, stdin: str | io.StringIO = "", **env: str) -> tuple[int, str, str]:
    """``arena argv`` in this process, with ``env`` on top of the environment (tokens)
    and ``stdin`` as its standard input (a pipe unless a ``Terminal``)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, env),
        mock.patch.object(sys, "stdin", io.StringIO(stdin) if isinstance(stdin, str) else stdin),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def ok(*argv: str, stdin: str | io.StringIO = "", **env: str) -> str:
    code, out, err = cli(*argv, stdin=stdin, **env)
    assert (code, err) == (0, ""), err
    return out


def refused(*argv: str, stdin: str = "", **env: str) -> str:
    """A refusal: nothing on stdout, one line on stderr, exit status 2; the line."""
    code, out, err = cli(*argv, stdin=stdin, **env)
    assert (code, out) == (2, ""), (code, out, err)
    assert err.startswith("arena: ") and err.count("\n") == 1, err
    return err.removeprefix("arena: ").rstrip("\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``arena serve`` with an organiser token (no worker: nothing here needs a match
    played); its address, also in ``ARENA_SERVER`` while the module runs, and no token
    of the environment around it."""
    folder = tmp_path_factory.mktemp("organise")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_DATA_DIR=str(folder), ARENA_ORGANISER_TOKEN=ORGANISER)
    port = free_port()
    log_path = folder / "serve.log"
    with open(log_path, "ab") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url, serve, log_path)
            with mock.patch.dict(os.environ, {"ARENA_SERVER": url}):
                for name in TOKENS:
                    os.environ.pop(name, None)
                yield url
        finally:
            stop_processes([serve], timeout=10)


def create_account(name: str, *extra: str, **env: str) -> tuple[int, str]:
    out = ok("accounts", "create", name, "--password-stdin", *extra, stdin=PASSWORD + "\n", **env)
    first, token_line, *note = out.splitlines()
    account_id = int(re.match(rf"account (\d+) created: {name} \(", first)[1])
    token = re.fullmatch(r"API token:  (\S{20,})", token_line)[1]
    assert note[0].startswith("Shown this once. Commands read it from $ARENA_TOKEN")
    return account_id, token


@pytest.fixture(scope="module")
def organiser(server: str) -> str:
    """An organiser's account, made with the organiser token: its API token."""
    return create_account("olga", "--role", "organiser", ARENA_ORGANISER_TOKEN=ORGANISER)[1]


@pytest.fixture(scope="module")
def event(server: str, organiser: str) -> dict[str, Any]:
    """A private event of olga's, two contestants who signed up with its code, and a bot
    of each (they connect out: nothing is called at registration)."""
    out = ok(
        "events", "create", "class of 26", "--games", "cactus", "--private",
        "--bots-per-account", "2", ARENA_TOKEN=organiser,
    )  # fmt: skip
    event_id = int(re.match(r"event (\d+) created: class of 26 \(private\)", out)[1])
    code = re.search(r"^  join code\s+(\S+)$", out, re.MULTILINE)[1]
    people: dict[str, Any] = {"id": event_id, "code": code}
    for name in ("dee", "eve"):
        _, token = create_account(name, "--join-code", code)
        out = ok(
            "bots", "register", f"{name}-bot", "--connect", "--games", "cactus",
            "--event", str(event_id), ARENA_TOKEN=token,
        )  # fmt: skip
        bot_id = int(re.match(rf"bot (\d+) registered: {name}-bot connects out", out)[1])
        people[name] = {"token": token, "bot": bot_id}
    return people


# -- accounts -------------------------------------------------------------------------------
def test_an_organiser_s_account_needs_the_organiser_token_and_logs_in(server, organiser):
    argv = ("accounts", "create", "oscar", "--role", "organiser", "--password-stdin")
    assert refused(*argv, stdin=PASSWORD) == (
        f"{server} answered 401: this needs the organiser token: Authorization: Bearer "
        "<token> (set $ARENA_ORGANISER_TOKEN)"
    )
    # an organiser's account is not the admin: it makes no organisers either
    assert refused(*argv, stdin=PASSWORD, ARENA_TOKEN=organiser) == (
        f"{server} answered 403: only the admin may do this (check $ARENA_TOKEN)"
    )
    assert refused(*argv, stdin=PASSWORD, ARENA_ORGANISER_TOKEN="wrong") == (
        f"{server} answered 401: the token is not valid: not an account's, a bot's owner "
        "token or the organiser's (check $ARENA_ORGANISER_TOKEN)"
    )
    assert refused(
        "accounts", "create", "olga", "--role", "organiser", "--password-stdin",
        stdin=PASSWORD, ARENA_ORGANISER_TOKEN=ORGANISER,
    ) == f"{server} answered 409: an account named 'olga' already exists"  # fmt: skip

    # logging in: a new token, which is olga's
    out = ok("accounts", "token", "olga", "--password-stdin", "--json", stdin=PASSWORD + "\n")
    assert '"role": "organiser"' in out and '"name": "olga"' in out
    out = ok("accounts", "token", "olga", "--password-stdin", stdin=PASSWORD)
    assert re.match(r"account \d+: olga \(organiser\), token \d+\nAPI token:  \S{20,}\n", out)
    wrong = refused("accounts", "token", "olga", "--password-stdin", stdin="not the password")
    assert wrong.startswith(f"{server} answered 401: ")
    assert refused("accounts", "token", "olga", "--password-stdin") == "the password is empty"


def test_the_password_is_asked_twice_on_the_terminal(server):
    with mock.patch("getpass.getpass", side_effect=[PASSWORD, PASSWORD]) as asked:
        account_id, token = create_account_prompted("pia")
    assert [c.args[0] for c in asked.call_args_list] == [
        "password for pia: ",
        "the same password again: ",
    ]
    assert account_id > 0 and token
    with mock.patch("getpass.getpass", side_effect=[PASSWORD, PASSWORD + "x"]):
        assert refused("accounts", "create", "pia2") == (
            "the two passwords differ: nothing was done"
        )
    assert refused("accounts", "token", "pia2", "--password-stdin", stdin=PASSWORD).startswith(
        f"{server} answered 401: "
    )  # it was not made


def create_account_prompted(name: str) -> tuple[int, str]:
    out = ok("accounts", "create", name)
    account_id = int(re.match(rf"account (\d+) created: {name} \(contestant\)", out)[1])
    return account_id, re.search(r"API token:  (\S+)", out)[1]


def test_without_a_terminal_the_password_is_not_read_from_an_echoing_stdin(server):
    """No terminal to ask on (a cron job, a CI step): the command says how instead of
    reading the password in clear."""
    env = {k: v for k, v in os.environ.items() if k not in TOKENS}
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "accounts", "token", "olga"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "arena: no terminal to ask the password on: give it on standard input with "
        "--password-stdin\n"
    )


# -- events and their bots --------------------------------------------------------------------
def test_events_are_listed_to_whom_may_see_them(server, organiser, event):
    out = ok("events", "list", ARENA_TOKEN=organiser)
    header, *rows = out.splitlines()
    assert header.split() == ["id", "name", "games", "visibility", "registration", "frozen", "you"]
    assert any(r.split()[0] == str(event["id"]) and r.split()[-1] == "organiser" for r in rows)
    out = ok("events", "list", "--mine", ARENA_TOKEN=event["dee"]["token"])
    assert [r.split()[-1] for r in out.splitlines()[1:]] == ["contestant"]
    assert ok("events", "list") == "no event you may see\n"  # it is private
    assert refused("events", "create", "x", "--games", "cactus") == (
        f"{server} answered 401: creating an event needs an organiser's account or the "
        "organiser token (set $ARENA_TOKEN)"
    )
    assert refused("events", "list", ARENA_TOKEN="nonsense").endswith("(check $ARENA_TOKEN)")


def test_an_account_s_token_goes_first(server, organiser):
    """With ARENA_TOKEN and ARENA_ORGANISER_TOKEN both set, the event is created by the
    account (which organises it), not by the admin (who is in no event)."""
    out = ok(
        "events", "create", "both set", "--games", "cactus", "--json",
        ARENA_TOKEN=organiser, ARENA_ORGANISER_TOKEN=ORGANISER,
    )  # fmt: skip
    event_id = int(re.search(r'"id": (\d+)', out)[1])
    mine = ok("events", "list", "--mine", ARENA_TOKEN=organiser)
    assert any(row.split()[0] == str(event_id) for row in mine.splitlines()[1:])


def test_an_organiser_pauses_renames_and_deletes_the_event_s_bots(server, organiser, event):
    dee, eve = event["dee"], event["eve"]
    bot = str(dee["bot"])
    out = ok("bots", "pause", bot, ARENA_TOKEN=organiser)
    assert out == f"bot {bot} (dee-bot): paused (paused by an organiser)\n"
    # its owner may not end an organiser's pause, nor pause another's bot
    assert refused("bots", "activate", bot, ARENA_TOKEN=dee["token"]).startswith(
        f"{server} answered 403: "
    )
    assert refused("bots", "pause", str(eve["bot"]), ARENA_TOKEN=dee["token"]).startswith(
        f"{server} answered 403: "
    )
    assert ok("bots", "activate", bot, ARENA_TOKEN=organiser) == f"bot {bot} (dee-bot): active\n"
    # a rename by its owner; by someone else: refused
    assert ok("bots", "rename", bot, "dee-bot-2", ARENA_TOKEN=dee["token"]) == (
        f"bot {bot} (dee-bot-2): active\n"
    )
    assert refused("bots", "rename", bot, "x-bot", ARENA_TOKEN=eve["token"]).startswith(
        f"{server} answered 403: bot {bot} belongs to another owner"
    )
    # a private event's bot is not there for a stranger
    assert refused("bots", "rename", bot, "x-bot") == f"{server} answered 404: no bot {bot}"
    # delete: asks first; without a terminal, --yes or nothing is done
    assert refused("bots", "delete", str(eve["bot"]), ARENA_TOKEN=organiser) == (
        f"give --yes to delete bot {eve['bot']} (eve-bot)"
    )
    out = ok("bots", "delete", str(eve["bot"]), stdin=Terminal("n\n"), ARENA_TOKEN=organiser)
    assert out == f"delete bot {eve['bot']} (eve-bot, owner eve)? [y/N] not deleted\n"
    assert ok("bots", "delete", str(eve["bot"]), "--yes", ARENA_TOKEN=organiser) == (
        f"bot {eve['bot']} (eve-bot) deleted: it plays no more; its matches stay\n"
    )
    shown = ok("bots", "show", str(eve["bot"]), ARENA_TOKEN=organiser)
    assert re.search(r"^  status\s+deleted$", shown, re.MULTILINE)
    # unknown ids
    for argv in (("pause", "99999"), ("rename", "99999", "z-bot"), ("delete", "99999", "--yes")):
        assert refused("bots", *argv, ARENA_TOKEN=organiser) == (
            f"{server} answered 404: no bot 99999"
        )


# -- ladders ----------------------------------------------------------------------------------
def ladder_rows(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in out.splitlines()[2:]}


def test_an_event_s_ladder_is_switched_by_its_organisers(server, organiser, event):
    where = ("--event", str(event["id"]))
    out = ok("ladders", *where, ARENA_TOKEN=organiser)
    assert out.splitlines()[0] == f"Ladders of event {event['id']} (class of 26)"
    assert out.splitlines()[1].split() == ["game", "ladder", "seats", "switched"]
    assert ladder_rows(out)["cactus"] == ["cactus", "off", "2", "-"]
    assert ok(
        "ladders", "set", "cactus", "--on", "--seats", "3", *where, ARENA_TOKEN=organiser
    ) == (f"cactus ladder of event {event['id']}: on, 3 seats a match\n")
    # the options before ``set`` count as well as after it
    out = ok("ladders", *where, "--json", ARENA_TOKEN=organiser)
    assert '"enabled": true' in out and '"seats_per_match": 3' in out
    assert ladder_rows(ok("ladders", *where, ARENA_TOKEN=event["dee"]["token"]))["cactus"][:3] == [
        "cactus", "on", "3",
    ]  # fmt: skip
    assert (
        refused("ladders", *where, "set", "cactus", "--off", ARENA_TOKEN=event["dee"]["token"])
        == f"{server} answered 403: only the organisers of event {event['id']} may do this "
        "(check $ARENA_TOKEN)"
    )
    assert refused("ladders", *where) == f"{server} answered 404: no event {event['id']}"
    assert refused("ladders", "set", "president", "--on", *where, ARENA_TOKEN=organiser) == (
        f"{server} answered 404: event {event['id']} plays cactus, not 'president'"
    )
    assert ok("ladders", "set", "cactus", "--off", *where, ARENA_TOKEN=organiser) == (
        f"cactus ladder of event {event['id']}: off\n"
    )


def test_the_open_arena_s_ladders_are_the_admin_s(server, organiser):
    out = ok("ladders")
    assert out.splitlines()[0] == "Ladders of the open arena"
    assert set(ladder_rows(out)) == {"cactus", "cactus-game", "president"}
    assert refused("ladders", "set", "cactus", "--on") == (
        f"{server} answered 401: this needs the organiser token: Authorization: Bearer <token> "
        "(set $ARENA_ORGANISER_TOKEN)"
    )
    assert refused("ladders", "set", "cactus", "--on", ARENA_TOKEN=organiser) == (
        f"{server} answered 403: only the admin may do this (check $ARENA_TOKEN)"
    )
    token = {"ARENA_ORGANISER_TOKEN": ORGANISER}
    assert ok("ladders", "set", "cactus", "--on", **token) == (
        "cactus ladder of the open arena: on, 2 seats a match\n"
    )
    assert ladder_rows(ok("ladders"))["cactus"][:3] == ["cactus", "on", "2"]
    assert ok("ladders", "set", "cactus", "--off", **token).endswith(": off\n")
    assert refused("ladders", "set", "poker", "--on", **token).startswith(
        f"{server} answered 404: unknown game 'poker'"
    )
    assert refused("ladders", "set", "cactus", "--on", "--seats", "1", **token) == (
        "--seats must be at least 2, not 1"
    )


# -- tournaments --------------------------------------------------------------------------------
def test_tournaments_list_shows_an_event_s_to_its_members(server, organiser, event):
    bots = f"{event['dee']['bot']}"
    out = ok(
        "bots", "register", "dee-second", "--connect", "--games", "cactus",
        "--event", str(event["id"]), ARENA_TOKEN=event["dee"]["token"],
    )  # fmt: skip
    bots += "," + re.match(r"bot (\d+) registered", out)[1]
    out = ok(
        "tournaments", "start", "cactus", "--bots", bots, "--event", str(event["id"]),
        "--name", "week 1", ARENA_TOKEN=organiser,
    )  # fmt: skip
    tournament = int(re.match(r"tournament (\d+): week 1", out)[1])
    listing = ok("tournaments", "list", "--event", str(event["id"]), ARENA_TOKEN=organiser)
    header, *rows = listing.splitlines()
    assert header.split() == ["id", "name", "game", "format", "status", "progress"]
    assert rows[0].split() == [
        str(tournament), "week", "1", "cactus", "round_robin", "running", "0/2", "(0%)",
    ]  # fmt: skip
    # a stranger sees none of the private event's, and not its tournament either
    assert ok("tournaments", "list", "--event", str(event["id"])) == (
        f"no tournament in event {event['id']}\n"
    )
    assert refused("tournaments", "show", str(tournament)) == (
        f"{server} answered 404: no tournament {tournament}"
    )
    assert ok("tournaments", "show", str(tournament), ARENA_TOKEN=event["dee"]["token"]).startswith(
        f"tournament {tournament}: week 1"
    )
    ok("tournaments", "cancel", str(tournament), ARENA_TOKEN=organiser)
    assert (
        refused("tournaments", "list", "--watch", "0")
        == "--watch must be more than 0 seconds, not 0"
    )


def test_watch_redraws_until_ctrl_c_which_ends_it_quietly(server, organiser, event):
    made = []  # the organiser's own bots: other tests pause and delete the students'
    for name in ("ref-a", "ref-b"):
        out = ok(
            "bots", "register", name, "--connect", "--games", "cactus",
            "--event", str(event["id"]), ARENA_TOKEN=organiser,
        )  # fmt: skip
        made.append(re.match(r"bot (\d+) registered", out)[1])
    ok(
        "tournaments", "start", "cactus", "--bots", ",".join(made), "--event", str(event["id"]),
        "--name", "watched", ARENA_TOKEN=organiser,
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in TOKENS}
    env["ARENA_TOKEN"] = organiser
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournaments", "list", "--watch", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    try:
        draws, lines = 0, []
        while draws < 2:  # a second draw: it does redraw
            line = proc.stdout.readline()
            assert line, f"it stopped: {proc.wait()} {proc.stderr.read()}"
            lines.append(line)
            draws += line.rstrip().endswith("every 0.2 s, Ctrl-C to stop")
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err) == (0, "")
    assert "id  name" in "".join(lines) and "watched" in "".join(lines)
    assert "Traceback" not in rest


def test_a_qualifier_is_started_from_the_command_line(server):
    """Every field the form sends: the qualifier's pass rule (short, or JSON), its
    challengers (entrants too, as on the form), the stop rule and the time bank; and a
    registration that tells how to start the bot with its secret in the environment."""
    organiser = {"ARENA_ORGANISER_TOKEN": ORGANISER}
    ids = {}
    for name in ("ref-1", "ref-2", "pupil-1", "pupil-2"):
        out = ok("bots", "register", name, "--connect", "--games", "cactus", **organiser)
        ids[name] = int(re.match(rf"bot (\d+) registered: {name} connects out", out)[1])
        secret = re.search(r"^signing secret: (\S+)$", out, re.MULTILINE)[1]
        assert out.splitlines()[-2:] == [
            f"  export ARENA_BOT_SECRET={secret}",
            f"  python bot.py --connect {server} --bot-id {ids[name]}",
        ]
    refs = f"{ids['ref-1']},{ids['ref-2']}"
    pupils = [ids["pupil-1"], ids["pupil-2"]]
    pupil_ids = ",".join(map(str, pupils))
    qualifier = ("tournaments", "start", "cactus", "--format", "qualifier", "--bots", refs,
                 "--challenger-ids", pupil_ids, "--matches-per-bot", "4")  # fmt: skip
    given = ("--pass-rule", "consecutive:3/4", "--time-bank-ms", "1500", "--json")
    started = json.loads(ok(*qualifier, *given, **organiser))
    assert (started["format"], started["challenger_ids"]) == ("qualifier", pupils)
    assert sorted(started["bot_ids"]) == sorted(ids.values())
    assert started["pass_rule"] == {"kind": "consecutive", "wins": 3, "of": 4}
    assert started["time_bank_ms"] == 1500
    out = ok(*qualifier, "--pass-rule", '{"kind": "score", "min_score": 0.5}', **organiser)
    made = [started["id"], int(re.match(r"tournament (\d+): ", out)[1])]
    assert "  pass rule: mean score at least 0.5" in out.splitlines()
    assert "  balance: 4 matches per bot, seat spread 0, two bots meet 2 times" in out
    out = ok(*qualifier, "--pass-rule", "stop_rule", "--sprt", "elo1=20", "--json", **organiser)
    assert json.loads(out)["sprt"]["elo1"] == 20
    made.append(json.loads(out)["id"])
    # what the server refuses is its own line
    assert refused(*qualifier, **organiser) == (
        f"{server} answered 422: invalid input: json.pass_rule: Required by the qualifier format"
    )
    for tournament in made:
        ok("tournaments", "cancel", str(tournament), **organiser)


def test_a_server_that_is_down_is_one_line(server):
    port = free_port()  # nothing listens there
    for argv in (("tournaments", "list"), ("ladders",), ("events", "list"), ("bots", "pause", "1")):
        line = refused(*argv, "--server", f"http://127.0.0.1:{port}", "--timeout", "2")
        assert line.startswith(f"cannot reach http://127.0.0.1:{port} (connection refused)")
