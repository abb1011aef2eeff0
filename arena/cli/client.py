"""A client of a running arena's JSON API: what ``arena bots``, ``arena tournaments``,
``arena ratings show``, ``arena matches``, ``arena accounts``, ``arena events`` and
``arena ladders`` (and the demo) call.

One ``requests`` session per command, with connect and read timeouts.  Idempotent calls
(GET, PUT, DELETE) are retried on a failed connection, a lost answer and a 502, 503 or
504, with a short backoff; a POST is retried only when the connection could not be made
(nothing was sent), never after it may have reached the server.

Every failure is a ``RemoteError`` with one line to show: the server's own ``message``
for a 4xx, what went wrong for a server that is down, slow, failing (5xx) or not an
arena at all.  ``server_side`` tells a failure of the server (5xx) from one the user can
fix (a URL, a token, an argument).

An address given with the API's own prefix (``http://host:port/api``, what the API's
documentation shows) means the arena there: the prefix is dropped rather than refused,
since an arena's API is always under ``/api`` of the arena's address.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, ReadTimeoutError
from urllib3.util.retry import Retry
from werkzeug.exceptions import NotFound

SERVER_ENV = "ARENA_SERVER"
TOKEN_ENV = "ARENA_TOKEN"  # an account's API token (arena accounts token)
ORGANISER_TOKEN_ENV = "ARENA_ORGANISER_TOKEN"  # the one the server's configuration reads
OWNER_TOKEN_ENV = "ARENA_OWNER_TOKEN"  # a bot's owner token, from its registration
BOT_SECRET_ENV = "ARENA_BOT_SECRET"  # where the SDK's bots read their signing secret
# which token a command sends when several are set: the first of these that the command
# takes.  An account's comes first: what is done with it is that person's (the event it
# creates is organised by it, the bot it registers belongs to it); then the server's
# organiser token (every power) before a bot's owner token (one bot's).
TOKEN_PRECEDENCE = (TOKEN_ENV, ORGANISER_TOKEN_ENV, OWNER_TOKEN_ENV)
DEFAULT_SERVER = "http://127.0.0.1:8000"
CONNECT_TIMEOUT = 5.0  # seconds
READ_TIMEOUT = 30.0  # seconds: creating a big tournament takes a few
RETRIES = 3
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
PAGE_SIZE = 100  # the API's largest page
API_PREFIX = "/api"
# what an arena's API answers for a path that is none of its routes (Flask's own words):
# the address is wrong, not the bot or tournament asked for
NO_ROUTE = NotFound.description


class RemoteError(Exception):
    """A call that failed, with the one line that says why."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status

    @property
    def server_side(self) -> bool:
        return self.status is not None and self.status >= 500


class ArenaClient:
    """The JSON API of the arena at ``server`` (``http://host:port``, with or without a
    path prefix); ``timeout`` bounds the wait for an answer, in seconds (a connection
    gets at most CONNECT_TIMEOUT of it)."""

    def __init__(
        self,
        server: str,
        *,
        timeout: float = READ_TIMEOUT,
        retries: int = RETRIES,
        backoff: float = 0.2,
    ):
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RemoteError(
                f"{server!r} is not an arena's address: give http://host:port "
                f"(--server or ${SERVER_ENV})"
            )
        self.base = server.rstrip("/").removesuffix(API_PREFIX).rstrip("/")
        self.timeout = (min(CONNECT_TIMEOUT, timeout), timeout)
        retry = Retry(
            total=retries,
            connect=retries,
            read=retries,
            status=retries,
            other=0,
            backoff_factor=backoff,
            status_forcelist=(502, 503, 504),
            allowed_methods=IDEMPOTENT,
            raise_on_status=False,  # the last answer is shown with its message
            respect_retry_after_header=True,
        )
        self.session = requests.Session()
        self.session.trust_env = False  # no proxy or .netrc credentials picked up silently
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["Accept"] = "application/json"

    def __enter__(self) -> ArenaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.session.close()

    # -- calls -------------------------------------------------------------------------
    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        token: tuple[str, str | None] | None = None,
        raw: tuple[bytes, str] | None = None,
    ) -> requests.Response:
        """The answer to ``method path``, a 2xx with a JSON body.  ``token`` is
        ``(environment variable, its value)``: sent when set, named when refused.  ``raw``:
        a body that is not JSON, with its content type (an upload)."""
        headers = {}
        if token is not None and token[1]:
            headers["Authorization"] = f"Bearer {token[1]}"
        if raw is not None:
            headers["Content-Type"] = raw[1]
        try:
            response = self.session.request(
                method,
                self.base + path,
                json=body if raw is None else None,
                data=raw[0] if raw is not None else None,
                params=params,
                headers=headers,
                timeout=self.timeout,
                allow_redirects=False,
            )
        except requests.exceptions.ConnectTimeout:
            raise RemoteError(
                f"cannot reach {self.base} (no connection within {self.timeout[0]:g} s): is "
                f"the arena running there? (--server or ${SERVER_ENV})"
            ) from None
        except requests.exceptions.RequestException as exc:
            if _read_timed_out(exc):
                after = "" if method in IDEMPOTENT else " (it may still have been done)"
                raise RemoteError(
                    f"{self.base} did not answer {method} {path} within "
                    f"{self.timeout[1]:g} s{after}"
                ) from None
            raise RemoteError(
                f"cannot reach {self.base} ({_reason(exc)}): is the arena running there? "
                f"(--server or ${SERVER_ENV})"
            ) from None
        return self._checked(method, path, response, token)

    def _checked(
        self,
        method: str,
        path: str,
        response: requests.Response,
        token: tuple[str, str | None] | None,
    ) -> requests.Response:
        status = response.status_code
        try:
            data = response.json() if _is_json(response) else None
        except ValueError:  # a JSON content type, not JSON
            data = None
        message = data.get("message") if isinstance(data, dict) else None
        if isinstance(message, str):
            message = " ".join(message.split())  # one line, whatever the server sent
        if status >= 500:
            raise RemoteError(
                f"{self.base} failed: {status} {message or response.reason} "
                f"({method} {path}; see the server's log)",
                status,
            )
        if status == 404 and message == NO_ROUTE:
            raise RemoteError(
                f"{self.base} is not an arena's address: it has no {method} {path}; "
                f"check --server or ${SERVER_ENV}",
                status,
            )
        if status >= 400 and isinstance(message, str):
            hint = ""
            if status in (401, 403) and token is not None:
                hint = f" (check ${token[0]})" if token[1] else f" (set ${token[0]})"
            raise RemoteError(f"{self.base} answered {status}: {message}{hint}", status)
        if not 200 <= status < 300 or (data is None and status != 204):
            kind = response.headers.get("Content-Type", "no content type").split(";")[0]
            raise RemoteError(
                f"{self.base} is not an arena: {method} {path} answered {status} ({kind}); "
                f"check --server or ${SERVER_ENV}",
                status,
            )
        return response

    def get(self, path: str, token: tuple[str, str | None] | None = None, **params: Any) -> Any:
        return self.call("GET", path, params=params or None, token=token).json()

    def get_object(
        self, path: str, token: tuple[str, str | None] | None = None, **params: Any
    ) -> dict[str, Any]:
        return self._shaped(self.get(path, token, **params), dict, "GET", path)

    def get_list(
        self, path: str, token: tuple[str, str | None] | None = None, **params: Any
    ) -> list[Any]:
        return self._shaped(self.get(path, token, **params), list, "GET", path)

    def get_all(
        self, path: str, token: tuple[str, str | None] | None = None, **params: Any
    ) -> list[Any]:
        """Every item of a paged list (the pages are read one after the other); ``token``
        as for ``call``: some answers show more to it (a bot's endpoint)."""
        return [item for page in self._pages(path, params, token) for item in page]

    def _pages(
        self, path: str, params: dict[str, Any], token: tuple[str, str | None] | None = None
    ) -> Iterator[list[Any]]:
        page = 1
        while True:
            response = self.call("GET", path, params={**params, "page": page,
                                                      "page_size": PAGE_SIZE},
                                 token=token)  # fmt: skip
            yield self._shaped(response.json(), list, "GET", path)
            try:
                pagination = json.loads(response.headers.get("X-Pagination") or "{}")
            except ValueError:
                pagination = {}
            next_page = pagination.get("next_page") if isinstance(pagination, dict) else None
            if not isinstance(next_page, int) or next_page <= page:
                return
            page = next_page

    def post(
        self, path: str, body: Any = None, token: tuple[str, str | None] | None = None
    ) -> dict[str, Any]:
        data = self.call("POST", path, body if body is not None else {}, token=token).json()
        return self._shaped(data, dict, "POST", path)

    def put(
        self, path: str, body: Any, token: tuple[str, str | None] | None = None
    ) -> dict[str, Any]:
        return self._shaped(self.call("PUT", path, body, token=token).json(), dict, "PUT", path)

    def put_raw(
        self, path: str, data: bytes, content_type: str, token: tuple[str, str | None] | None = None
    ) -> dict[str, Any]:
        answer = self.call("PUT", path, token=token, raw=(data, content_type)).json()
        return self._shaped(answer, dict, "PUT", path)

    def patch(
        self, path: str, body: Any, token: tuple[str, str | None] | None = None
    ) -> dict[str, Any]:
        data = self.call("PATCH", path, body, token=token).json()
        return self._shaped(data, dict, "PATCH", path)

    def delete(self, path: str, token: tuple[str, str | None] | None = None) -> None:
        self.call("DELETE", path, token=token)

    def _shaped(self, data: Any, kind: type, method: str, path: str) -> Any:
        if not isinstance(data, kind):
            raise RemoteError(
                f"{self.base} is not an arena: {method} {path} answered JSON of another shape; "
                f"check --server or ${SERVER_ENV}"
            )
        return data


def _is_json(response: requests.Response) -> bool:
    kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


def _read_timed_out(exc: requests.exceptions.RequestException) -> bool:
    """A read timeout, raised as is or, once the retries are spent, as a ConnectionError
    around urllib3's MaxRetryError."""
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return True
    cause = exc.args[0] if exc.args else None
    return isinstance(cause, MaxRetryError) and isinstance(cause.reason, ReadTimeoutError)


def _reason(exc: requests.exceptions.RequestException) -> str:
    """``connection refused``, ``unknown host`` ...: the cause urllib3 buried in its
    exception chain, in a few words."""
    text = str(exc)
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("Name or service not known", "unknown host"),
        ("nodename nor servname", "unknown host"),
        ("Temporary failure in name resolution", "unknown host"),
        ("No route to host", "no route to host"),
        ("Network is unreachable", "network unreachable"),
        ("CERTIFICATE_VERIFY_FAILED", "its TLS certificate is not trusted"),
        ("Connection reset", "connection reset"),
        ("RemoteDisconnected", "it closed the connection"),
    ):
        if needle in text:
            return reason
    return type(exc).__name__
