"""The client's address behind the deployment's own proxies (``ARENA_TRUSTED_PROXIES``).

Behind an ingress, a load balancer or a Service that rewrites addresses, every request
reaches the web process from the proxy's address: rate limits counted per address would
then count the whole class as one client, and one attacker would lock everyone out.  The
proxy names the client in ``X-Forwarded-For``; a client can write that header too, so it
is read only from the proxies the operator names:

- a count (``1``, ``2``): that many proxies in front, each appending the address it saw
  (werkzeug's ``ProxyFix``; ``X-Forwarded-Proto`` read the same way);
- networks (``10.0.0.0/8,fd00::/8``): the request came from one of them, and the client
  is the nearest address in ``X-Forwarded-For`` that is not in them, read from the right
  (where the proxies append), so a header the client wrote itself is never taken for it.

Unset, ``REMOTE_ADDR`` is the client and every forwarded header is ignored.  No Flask here:
a WSGI middleware ``create_app`` puts around the app.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.middleware.proxy_fix import ProxyFix

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse(text: str) -> int | tuple[Network, ...]:
    """``ARENA_TRUSTED_PROXIES``: a count of proxies, or networks (ValueError otherwise)."""
    text = text.strip()
    if not text:
        return 0
    if text.isdigit():
        return int(text)
    return tuple(ipaddress.ip_network(part.strip()) for part in text.split(",") if part.strip())


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


class FromNetworks:
    """``REMOTE_ADDR`` set to the client a trusted proxy names (see the module docstring);
    the address the request came from stays in ``arena.proxy_addr``."""

    def __init__(self, app: Callable[..., Any], networks: Iterable[Network]):
        self.app = app
        self.networks = tuple(networks)

    def trusted(self, text: str) -> bool:
        address = _address(text)
        return address is not None and any(address in net for net in self.networks)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        peer = environ.get("REMOTE_ADDR", "")
        if self.trusted(peer):
            client = peer
            hops = environ.get("HTTP_X_FORWARDED_FOR", "").split(",")
            for hop in reversed([h.strip() for h in hops if h.strip()]):
                if _address(hop) is None:
                    break  # not an address: nothing left of it can be trusted
                client = hop
                if not self.trusted(hop):
                    break
            environ["arena.proxy_addr"] = peer
            environ["REMOTE_ADDR"] = client
        return self.app(environ, start_response)


def behind(app: Callable[..., Any], trusted: int | tuple[Network, ...]) -> Callable[..., Any]:
    """``app`` reading the client's address as ``trusted`` says (unchanged when nothing
    is trusted)."""
    if isinstance(trusted, int):
        return ProxyFix(app, x_for=trusted, x_proto=trusted) if trusted else app
    return FromNetworks(app, trusted) if trusted else app
