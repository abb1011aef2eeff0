"""Misbehaving bot endpoints on loopback, for the referee's fault tests."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INFO = {"apiversion": "1", "name": "bad", "author": "tests", "version": "0", "games": []}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    behaviour = "ok"
    redirect_to = ""

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        head = f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n"
        head += "Content-Type: application/json\r\n"
        for k, v in (headers or {}).items():
            head += f"{k}: {v}\r\n"
        self.wfile.write(head.encode() + b"\r\n" + body)

    def do_GET(self) -> None:
        self._send(200, json.dumps(INFO).encode())

    def do_POST(self) -> None:
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/act":
            self._send(200, b"{}")
            return
        legal = payload["legal_actions"]
        b = self.behaviour
        if b == "sleepy":
            time.sleep(payload["deadline_ms"] / 1000 + 0.5)
            self._send(200, json.dumps({"action": legal[0]}).encode())
        elif b == "error500":
            self._send(500, b'{"error": "boom"}')
        elif b == "not_json":
            self._send(200, b"<html>hello</html>")
        elif b == "illegal":
            self._send(200, json.dumps({"action": {"type": "fly"}}).encode())
        elif b == "huge":
            self._send(200, b'{"action": "' + b"x" * (5 * 1024 * 1024) + b'"}')
        elif b == "redirect":
            self._send(302, b"", {"Location": self.redirect_to})
        elif b == "trickle":  # one byte at a time, each well inside a read timeout
            body = json.dumps({"action": legal[0]}).encode()
            self.wfile.write(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode())
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.1)
        else:
            self._send(200, json.dumps({"action": legal[-1]}).encode())


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded loopback server with this handler; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def http_bot(behaviour: str, redirect_to: str = "") -> Iterator[str]:
    """An HTTP bot misbehaving on /act as ``behaviour``; yields its URL."""
    handler = type("Handler", (_Handler,), {"behaviour": behaviour, "redirect_to": redirect_to})
    with serving(handler) as url:
        yield url


@contextmanager
def closing_bot() -> Iterator[str]:
    """Accepts every connection and closes it at once, without a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop = threading.Event()

    def run() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        listener.close()


def absent_bot_url() -> str:
    """A loopback port nobody listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"
