"""Misbehaving in-process clients for the fault tests: a bot that is down, and one that
answers once and then only illegally (struck out after ``MAX_STRIKES``)."""

from __future__ import annotations

from typing import Any

from arena.match.referee import PolicyClient

MAX_STRIKES = 3


class Down:
    """A bot whose every answer fails: it forfeits."""

    def __init__(self, name: str):
        self.name = name

    def start(self, info: dict[str, Any]) -> None:
        pass

    def act(self, payload: dict[str, Any]) -> Any:
        raise ConnectionRefusedError("nobody listens")

    def end(self, info: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


class AnswersOnce(PolicyClient):
    """A bot that plays its first decision, then fails every one: it strikes out."""

    answered = False

    def act(self, payload: dict[str, Any]) -> Any:
        if self.answered:
            raise TimeoutError("the bot stopped answering")
        self.answered = True
        return super().act(payload)
