"""Polls that reach a web process other than the bot's home, passed on to the home.

A bot keeps several polls open (its capacity), each on a connection of its own, and a
load balancer (or gunicorn's processes sharing one socket) sends each connection to any
web process.  Were the session to move to whichever process a poll reached, two processes
would take it from each other at every poll, each move ending the other's polls and
sending its requests again.  So the session stays at its home while the home lives: a
process that gets a poll of a session held elsewhere passes it on to the home's relay
listener (``POST /relay/<bot id>/poll``, ``arena.relay.internal``), which runs it on the
bot's mailbox (``serve_poll``) and answers as the poll would have been answered there.
Only when the home cannot be reached (its process died) or no longer holds the session
does the process take the session over (``arena.api.connect``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from arena.relay.hub import Hub, Replaced

CONNECT_SECONDS = 2.0  # to reach a home; a home that does not accept by then is lost
READ_GRACE = 10.0  # seconds past the poll's wait the home has to answer it
POOL = 256  # connections kept to the other homes


class HomeLost(Exception):
    """The home could not be reached, or no longer holds the session: take it over."""


def serve_poll(hub: Hub, bot_id: int, body: bytes) -> tuple[int, bytes]:
    """The home's side: a poll passed on by another process, run on the bot's mailbox
    here.  Returns the status and body to answer (200 with the requests handed; 409 with
    the reason when the session is not, or no longer, this one here)."""
    try:
        data = orjson.loads(body)
        token = str(data["token"])
        answers = [
            (str(a["request_id"]), int(a["status"]), orjson.dumps(a["body"]))
            for a in data["answers"]
        ]
        draining = bool(data["draining"])
        wait = min(max(float(data["wait"]), 0.0), 60.0)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return 400, orjson.dumps({"detail": "a poll: token, answers, draining and wait"})
    try:
        handed = hub.poll(bot_id, token, answers, draining=draining, wait=wait)
    except Replaced as exc:
        return 409, orjson.dumps({"reason": exc.reason, "detail": str(exc)})
    return 200, orjson.dumps({"requests": [d.wire() for d in handed]})


class Forwarder:
    """The side of the process the poll reached: one pool of connections to the other
    homes, shared by every request of the process."""

    def __init__(self) -> None:
        self._session = requests.Session()
        # once more on a new connection when a kept one was closed under it (the home's
        # listener ends an idle one after a while): not a home lost
        again = Retry(total=1, connect=1, read=1, status=0, allowed_methods=None)
        adapter = HTTPAdapter(pool_connections=16, pool_maxsize=POOL, max_retries=again)
        self._session.mount("http://", adapter)

    def poll(
        self,
        home: str,
        bot_id: int,
        token: str,
        answers: Iterable[dict[str, Any]],
        draining: bool,
        wait: float,
        sign: Callable[[str, bytes], dict[str, str]],
    ) -> list[dict[str, Any]]:
        """The poll run at ``home``: the requests it handed the bot.  Raises ``Replaced``
        (the session is over: replaced or closed) or ``HomeLost``."""
        path = f"/relay/{bot_id}/poll"
        body = orjson.dumps(
            {"token": token, "answers": list(answers), "draining": draining, "wait": wait}
        )
        try:
            response = self._session.post(
                home + path,
                data=body,
                headers={"Content-Type": "application/json", **sign(path, body)},
                timeout=(CONNECT_SECONDS, wait + READ_GRACE),
            )
        except requests.RequestException as exc:
            raise HomeLost(f"{type(exc).__name__}: {exc}") from None
        if response.status_code == 200:
            return orjson.loads(response.content)["requests"]  # type: ignore[no-any-return]
        detail = ""
        reason = ""
        try:
            said = orjson.loads(response.content)
            reason, detail = str(said.get("reason", "")), str(said.get("detail", ""))
        except (orjson.JSONDecodeError, AttributeError):
            pass
        if response.status_code == 409 and reason in ("replaced", "closed"):
            raise Replaced(reason, detail)
        raise HomeLost(f"HTTP {response.status_code} {reason}: {detail}".strip())

    def close(self) -> None:
        self._session.close()
