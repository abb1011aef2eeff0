"""A bot may be a plain function ``act(view, legal_actions)``; ``as_bot`` says what is one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from arenabot import DEFAULT_PORT, Bot, BotServer, FunctionBot, as_bot
from arenabot.server import run
from conftest import Client, EchoBot, act_body


def last(view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
    return legal_actions[-1], f"seat {view['seat']}"


def test_a_function_is_served_like_a_bot(
    serve: Callable[..., BotServer], client: Callable[..., Client]
) -> None:
    c = client(serve(last))
    status, info, _ = c.get()
    assert status == 200
    assert info == {"apiversion": "1", "name": "test_function_bots", "author": "",
                    "version": "0", "games": [], "capacity": 1}  # fmt: skip
    status, answer, _ = c.post("/act", act_body())
    assert (status, answer) == (200, {"action": {"type": "take_discard"}, "memo": "seat 0"})


def test_a_function_bot_has_the_info_it_is_given(
    serve: Callable[..., BotServer], client: Callable[..., Client]
) -> None:
    bot = as_bot(last, name="last", author="me", version="2", games=["cactus"])
    assert isinstance(bot, FunctionBot) and bot.function is last
    status, info, _ = client(serve(bot)).get()
    assert status == 200
    assert info == {"apiversion": "1", "name": "last", "author": "me", "version": "2",
                    "games": ["cactus"], "capacity": 1}  # fmt: skip


def test_what_as_bot_accepts() -> None:
    echo = EchoBot()
    assert as_bot(echo) is echo
    assert isinstance(as_bot(EchoBot), EchoBot)  # a class, built with no arguments
    assert isinstance(as_bot(lambda: echo), EchoBot)  # a factory
    assert isinstance(as_bot(echo.act), FunctionBot)  # a method of two arguments
    with pytest.raises(TypeError, match="not int"):
        as_bot(3)
    with pytest.raises(TypeError, match="returned str, not a Bot"):
        as_bot(lambda: "bot")
    with pytest.raises(TypeError, match="not function"):
        as_bot(lambda a, b, c: a)  # neither act(view, legal_actions) nor a factory
    with pytest.raises(TypeError, match="attributes of the Bot class"):
        as_bot(echo, name="other")


def test_the_default_port_is_not_the_arenas(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_PORT == 9000  # the arena's web server listens on 8000
    served: dict[str, Any] = {}

    def fake_serve(bot: Bot, host: str, port: int, *args: Any, **kwargs: Any) -> None:
        served.update(bot=bot, host=host, port=port)

    monkeypatch.setattr("arenabot.server.serve", fake_serve)
    run(last, [], name="last", games=["president"])
    assert served["port"] == 9000 and served["host"] == "127.0.0.1"
    assert served["bot"].name == "last" and served["bot"].games == ["president"]


def test_a_port_in_use_is_one_line_and_status_2(
    serve: Callable[..., BotServer], capsys: pytest.CaptureFixture[str]
) -> None:
    taken = serve(last).port
    with pytest.raises(SystemExit) as exited:
        run(last, ["--port", str(taken)], name="last")
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].endswith(
        f"error: cannot listen on 127.0.0.1:{taken}: Address already in use "
        "(another port: --port N)"
    )


def test_run_declares_a_function_thread_safe_and_gives_it_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: dict[str, Any] = {}

    def fake_serve(bot: Bot, *args: Any, **kwargs: Any) -> None:
        served.update(bot=bot, **kwargs)

    monkeypatch.setattr("arenabot.server.serve", fake_serve)
    run(last, ["--threads", "4"], name="last", thread_safe=True)
    assert served["bot"].thread_safe is True and served["threads"] == 4
    run(last, [], name="last")
    assert served["bot"].thread_safe is False


@pytest.mark.parametrize(
    ("args", "thread_safe", "message"),
    [
        (["--threads", "2"], False, "--threads 2: last is not thread-safe, it takes one request "
         "at a time (declare it thread_safe first: see the SDK's README)"),
        (["--threads", "0"], True, "--threads must be at least 1, not 0"),
    ],
)  # fmt: skip
def test_threads_a_bot_cannot_have_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], args: list[str], thread_safe: bool, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(last, args, name="last", thread_safe=thread_safe)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"error: {message}\n") and err.count("\n") == 1
