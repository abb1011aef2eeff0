"""Hosted bots through the API, as a student and an organiser use them: register with
``"hosted": true``, upload the starter as it is, see the version validated (a short
unrated match against a house bot, played here as a worker plays it), roll back,
download one's own code, read one's own logs; and every upload the arena must refuse
(zip slip, zip bomb, links, no bot.py, a syntax error, too large) refused with a message.
"""

from __future__ import annotations

import io
import stat
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import arenabot.starters
import pytest

from arena.hosted import bundles
from arena.worker import play as play_module
from tests.support.sandbox import needs_sandbox

STARTER = (Path(arenabot.starters.__file__).parent / "cactus.py").read_bytes()
PY = {"Content-Type": "text/x-python"}
ZIP = {"Content-Type": "application/zip"}


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    needs_sandbox()


def register(client, name: str = "hosted-student", **extra: Any) -> dict[str, Any]:
    answer = client.post(
        "/api/bots",
        json={"name": name, "hosted": True, "owner": "student", "games": ["cactus"], **extra},
    )
    assert answer.status_code == 201, answer.json
    return answer.json


def auth(bot: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {bot['owner_token']}"}


def upload(client, bot, data: bytes, headers=PY):
    return client.put(f"/api/bots/{bot['id']}/code", data=data, headers={**headers, **auth(bot)})


def play_enqueued(app, enqueued: list[int]) -> None:
    """Play every match sent to the workers so far, as a worker does."""
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    while enqueued:
        assert play_module.play_match(database, config, enqueued.pop(0)) == "recorded"


def versions(client, bot) -> list[dict[str, Any]]:
    answer = client.get(f"/api/bots/{bot['id']}/code", headers=auth(bot))
    assert answer.status_code == 200, answer.json
    return answer.json


def test_the_starter_uploaded_as_it_is_is_validated_and_plays(app, client, enqueued) -> None:
    bot = register(client)
    assert bot["hosted"] is True and bot["code_version"] is None and not bot["connect"]
    answer = upload(client, bot, STARTER)
    assert answer.status_code == 202, answer.json
    version = answer.json
    assert version["status"] == "validating" and version["active"] is False
    assert version["version"] == bundles.check(STARTER, "text/x-python").version
    assert enqueued == [version["match_id"]]
    play_enqueued(app, enqueued)
    [listed] = versions(client, bot)
    assert listed["status"] == "passed" and listed["active"] is True and listed["reason"] is None
    shown = client.get(f"/api/bots/{bot['id']}").json
    assert shown["code_version"] == version["version"]
    match = client.get(f"/api/matches/{version['match_id']}").json
    assert match["status"] == "finished"
    # validation is unrated: the bot has no rating from it
    assert client.get(f"/api/bots/{bot['id']}").json["ratings"] == []


def test_a_failing_version_keeps_the_one_before_and_says_why(app, client, enqueued) -> None:
    bot = register(client)
    upload(client, bot, STARTER)
    play_enqueued(app, enqueued)
    good = versions(client, bot)[0]["version"]
    broken = (
        b"import sys\ndef act(view, legal_actions):\n"
        b"    print('thinking hard', file=sys.stderr)\n    return legal_actions[0]['nope']\n"
    )
    answer = upload(client, bot, broken)
    assert answer.status_code == 202
    play_enqueued(app, enqueued)
    latest = versions(client, bot)[0]
    assert latest["status"] == "failed" and latest["active"] is False
    assert "the bot raised KeyError: 'nope'" in latest["reason"]
    assert "KeyError: 'nope'" in latest["reason"].split("Its log ends:")[1]
    assert client.get(f"/api/bots/{bot['id']}").json["code_version"] == good
    # its log, for its owner: the traceback beside each decision
    log = client.get(f"/api/matches/{latest['match_id']}/logs/0", headers=auth(bot))
    assert log.status_code == 200 and log.mimetype == "text/plain"
    assert "thinking hard" in log.text and "KeyError" in log.text


def test_an_owner_rolls_back_and_downloads_their_own_code(app, client, enqueued) -> None:
    bot = register(client)
    upload(client, bot, STARTER)
    second = STARTER + b"\n# a second version\n"
    upload(client, bot, second)
    play_enqueued(app, enqueued)
    newest, oldest = versions(client, bot)
    assert newest["active"] and not oldest["active"] and oldest["status"] == "passed"
    rolled = client.post(
        f"/api/bots/{bot['id']}/code/{oldest['version']}/activate", headers=auth(bot)
    )
    assert rolled.status_code == 200 and rolled.json["active"] is True
    assert client.get(f"/api/bots/{bot['id']}").json["code_version"] == oldest["version"]
    got = client.get(f"/api/bots/{bot['id']}/code/{newest['version']}", headers=auth(bot))
    assert got.status_code == 200 and got.data == second
    assert got.mimetype == "text/x-python"
    # the same bytes again are the same version, not validated again
    again = upload(client, bot, second)
    assert again.status_code == 202 and again.json["status"] == "passed" and not enqueued


def test_code_and_logs_are_their_owners_only(app, client, enqueued) -> None:
    bot = register(client)
    other = register(client, "someone-else")
    version = upload(client, bot, STARTER).json
    play_enqueued(app, enqueued)
    paths = [
        f"/api/bots/{bot['id']}/code",
        f"/api/bots/{bot['id']}/code/{version['version']}",
        f"/api/matches/{version['match_id']}/logs/0",
    ]
    for path in paths:
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers=auth(other)).status_code == 403, path
        assert client.get(path, headers=auth(bot)).status_code == 200, path
    put = client.put(f"/api/bots/{bot['id']}/code", data=STARTER, headers=PY | auth(other))
    assert put.status_code == 403
    # the house bot's seat: not the student's to read
    assert (
        client.get(f"/api/matches/{version['match_id']}/logs/1", headers=auth(bot)).status_code
        == 403
    )


def test_only_a_hosted_bot_takes_code(client) -> None:
    answer = client.post(
        "/api/bots",
        json={"name": "laptop", "connect": True, "owner": "s", "games": ["cactus"]},
    )
    laptop = answer.json
    refused = upload(client, laptop, STARTER)
    assert refused.status_code == 409 and "not hosted" in refused.json["message"]
    both = client.post(
        "/api/bots",
        json={"name": "x", "hosted": True, "connect": True, "owner": "s", "games": ["cactus"]},
    )
    assert both.status_code == 422
    no_games = client.post("/api/bots", json={"name": "y", "hosted": True, "owner": "s"})
    assert no_games.status_code == 422 and "games" in str(no_games.json)


def a_zip(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return out.getvalue()


def a_bomb() -> bytes:
    """A zip of a few kilobytes that says it unpacks to 100 MiB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("bot.py", STARTER)
        archive.writestr("weights.bin", b"\0" * (100 << 20))
    return out.getvalue()


@pytest.mark.parametrize(
    ("body", "headers", "status", "said"),
    [
        (a_zip({"bot.py": STARTER, "../../evil.py": b"x = 1"}), ZIP, 400, "outside its folder"),
        (a_zip({"bot.py": STARTER, "/etc/cron.d/evil": b"x"}), ZIP, 400, "outside its folder"),
        (a_zip({"bot.py": STARTER}, links={"data": "/etc/passwd"}), ZIP, 400, "a link"),
        (a_bomb(), ZIP, 400, "unpacks to"),
        (a_zip({f"f{i}.py": b"" for i in range(300)} | {"bot.py": STARTER}), ZIP, 400, "files"),
        (a_zip({"mybot/bot.py": STARTER}), ZIP, 400, "no bot.py at its root"),
        (a_zip({"bot.py": b"def act(:\n"}), ZIP, 400, "line 1"),
        (b"def act(view, legal_actions)\n    return 1\n", PY, 400, "line 1"),
        (b"not a zip", ZIP, 400, "not a zip"),
        (STARTER, {"Content-Type": "application/json"}, 400, "text/x-python"),
        (b"", PY, 400, "empty"),
        (b"#" * (bundles.MAX_UPLOAD + 1), PY, 413, str(bundles.MAX_UPLOAD)),
    ],
    ids=[
        "zip-slip", "absolute-path", "symlink", "zip-bomb", "too-many-files", "no-bot-py",
        "zip-syntax-error", "syntax-error", "not-a-zip", "wrong-type", "empty", "too-large",
    ],
)  # fmt: skip
def test_uploads_the_arena_refuses(client, enqueued, body, headers, status, said) -> None:
    bot = register(client)
    answer = upload(client, bot, body, headers)
    assert answer.status_code == status, answer.json
    assert said in answer.json["message"]
    assert versions(client, bot) == [] and enqueued == []


def test_a_zip_with_modules_beside_bot_py_is_unpacked_and_plays(
    app, client, enqueued, tmp_path
) -> None:
    bot = register(client)
    body = a_zip(
        {
            "bot.py": b"from helpers import first\n\n"
            b"def act(view, legal_actions):\n    return first(legal_actions)\n",
            "helpers.py": b"def first(actions):\n    return actions[0]\n",
        }
    )
    assert upload(client, bot, body, ZIP).status_code == 202
    play_enqueued(app, enqueued)
    assert versions(client, bot)[0]["status"] == "passed"
    # a worker re-checks what it unpacks: a stored zip slip never lands outside
    slip = a_zip({"bot.py": STARTER, "../x.py": b""})
    with pytest.raises(bundles.BundleError):
        bundles.unpack(slip, bundles.ZIP, tmp_path / "out")
    assert not (tmp_path / "x.py").exists()


def test_debug_text_of_an_answer_is_kept_for_its_owner_only(app, client, enqueued) -> None:
    """Any answer may carry a private ``debug`` text (the SDK: return (action, memo,
    debug)): kept beside its decision in the seat's log, with what the bot printed as it
    decided, in one entry per decision; never in the replay."""
    bot = register(client)
    code = (
        b"def act(view, legal_actions):\n"
        b"    print('looking at', len(legal_actions))\n"
        b"    return legal_actions[0], None, 'I chose the first of %d' % len(legal_actions)\n"
    )
    version = upload(client, bot, code).json
    play_enqueued(app, enqueued)
    entries = client.get(
        f"/api/matches/{version['match_id']}/logs/0?format=json", headers=auth(bot)
    ).json
    assert entries and all(e["debug"].startswith("I chose the first of") for e in entries)
    assert all(e["stderr"].startswith("looking at") for e in entries)
    assert len({e["decision_id"] for e in entries}) == len(entries)
    replay = client.get(f"/api/matches/{version['match_id']}/replay").get_data(as_text=True)
    assert "I chose the first" not in replay


def test_a_worker_that_cannot_host_leaves_the_match_and_says_why_once(
    app, client, enqueued, monkeypatch, caplog
) -> None:
    """No sandbox on this worker (no bubblewrap, a container without user namespaces):
    the match is not claimed (no attempt, no fault for anyone), another worker takes
    it, and the worker's log says why in one line, once."""
    from arena.hosted import sandbox
    from arena.models import Match
    from arena.worker import hosting

    bot = register(client)
    match_id = upload(client, bot, STARTER).json["match_id"]
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    monkeypatch.setattr(sandbox, "available", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setitem(hosting._state, "said", False)
    with caplog.at_level("ERROR", logger="arena.worker.hosting"):
        for _ in range(3):
            assert (
                play_module.play_match(database, config, match_id) == play_module.HOSTED_ELSEWHERE
            )
    said = [r.getMessage() for r in caplog.records if r.name == "arena.worker.hosting"]
    assert (
        len(said) == 1 and "cannot run hosted bots (bubblewrap (bwrap) is not installed)" in said[0]
    )
    with database.session() as session:
        match = session.get(Match, match_id)
        assert match.status == "queued" and match.attempts == 0
    monkeypatch.undo()
    assert play_module.play_match(database, config, match_id) == "recorded"


def test_a_worker_runs_no_more_hosted_seats_than_it_may(app, client, enqueued) -> None:
    from arena.worker import hosting

    bot = register(client)
    match_id = upload(client, bot, STARTER).json["match_id"]
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    config = replace(config, hosted_seats=2)
    assert hosting.reserve(config, 2)  # another match of this process holds both
    try:
        assert play_module.play_match(database, config, match_id) == play_module.HOSTED_BUSY
    finally:
        hosting.release(2)
    assert play_module.play_match(database, config, match_id) == "recorded"
    assert hosting.reserve(config, 2)  # the match gave its seat back
    hosting.release(2)


def test_a_hosted_bot_plays_tournaments_and_the_ladder_once_a_version_passed(
    app, client, enqueued
) -> None:
    from arena.models import Match
    from arena.worker.ladder import schedule_ladder

    ready, codeless = register(client, "ready"), register(client, "codeless")
    upload(client, ready, STARTER)
    play_enqueued(app, enqueued)
    body = {"name": "t", "game": "cactus", "seats_per_match": 2, "games_per_pairing": 2}
    refused = client.post(
        "/api/tournaments", json={**body, "bot_ids": [ready["id"], codeless["id"]]}
    )
    assert refused.status_code == 400
    assert f"bot(s) {codeless['id']} are hosted and no version" in refused.json["message"]
    other = register(client, "other")
    upload(client, other, STARTER + b"\n")
    play_enqueued(app, enqueued)
    started = client.post("/api/tournaments", json={**body, "bot_ids": [ready["id"], other["id"]]})
    assert started.status_code == 201, started.json
    play_enqueued(app, enqueued)
    assert client.get(f"/api/tournaments/{started.json['id']}").json["status"] == "finished"
    # the ladder: seats the two with a version that plays, never the codeless one
    assert client.put("/api/ladders/cactus", json={"enabled": True}).status_code == 200
    database, config = app.extensions["arena.db"], app.extensions["arena.config"]
    created = schedule_ladder(database, config, seed=1)
    assert created
    with database.session() as session:
        seated = {s.bot_id for m in created for s in session.get(Match, m).seats}
    assert seated == {ready["id"], other["id"]}


@pytest.mark.parametrize("cores", ["0-x", "3-1", "-2"])
def test_a_wrong_list_of_hosted_cores_is_refused_at_start_up(cores) -> None:
    from arena.config import ConfigError, from_env

    with pytest.raises(ConfigError, match="ARENA_HOSTED_CORES"):
        from_env({"ARENA_HOSTED_CORES": cores})
    assert from_env({"ARENA_HOSTED_CORES": "0-2, 5"}).hosted_cores == (0, 1, 2, 5)
