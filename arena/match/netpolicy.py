"""Which addresses a bot endpoint may have.  Endpoints are untrusted: a bot must not make
the arena call into the operator's own networks.

An allow list, not a deny list: an endpoint may be called only at a globally routable
address (``is_global``), or at an address in one of the networks the operator lists
(``ARENA_ALLOWED_NETWORKS``); the local profile (the default, for development and the
embedded demo) also allows loopback.  Anything else is refused: private and shared
address space (100.64.0.0/10, where cloud metadata services such as 100.100.100.200
live), link-local (169.254.169.254), reserved, documentation, multicast.

An IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, the
deprecated IPv4-compatible ``::a.b.c.d``, 6to4 ``2002:AABB:CCDD::``, Teredo, NAT64
``64:ff9b::/96`` and its local-use ``64:ff9b:1::/48``) reaches that IPv4 address in the
end, so the IPv4 address must pass too.

The policy is checked at registration and again on the address of every new connection
(a name can rebind).  Whoever is refused learns only that the address is not allowed,
never which check failed: a registration form that named the reason would be a scanner
of the operator's internal ranges.  The reason goes to the log for the operator.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

REFUSED = (
    "the endpoint's address is not allowed: a bot must be reachable at a public address "
    "(the operator can allow other networks)"
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class AddressRefused(ValueError):
    """An address the policy does not allow; its message never says why (see above)."""

    def __init__(self, reason: str):
        super().__init__(REFUSED)
        self.reason = reason  # for the operator's log, never for the caller


def embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to (none for a plain one)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return []
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)  # (server, client): the traffic goes through both
    if ip in _NAT64 or ip in _NAT64_LOCAL or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


@dataclass(frozen=True)
class AddressPolicy:
    allow_loopback: bool = True
    allowed_networks: tuple[IPNetwork, ...] = field(default_factory=tuple)

    @classmethod
    def for_profile(cls, profile: str, allowed: Iterable[str] = ()) -> AddressPolicy:
        networks = tuple(ipaddress.ip_network(n.strip(), strict=False) for n in allowed)
        return cls(allow_loopback=profile != "production", allowed_networks=networks)

    def reason(self, address: str) -> str | None:
        """Why ``address`` may not be called, or None when it may."""
        try:
            ip = ipaddress.ip_address(address.split("%")[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        inner = embedded_ipv4(ip)
        # an operator's network allows the address as written or the IPv4 it leads to
        if any(a in net for a in (ip, *inner) for net in self.allowed_networks):
            return None
        if self.allow_loopback and (ip.is_loopback or any(a.is_loopback for a in inner)):
            return None
        for a in (ip, *inner):
            if not a.is_global or a.is_multicast:
                return f"{a} is not a global unicast address"
        return None

    def check(self, address: str) -> None:
        """Raise AddressRefused (a ValueError) when ``address`` may not be called."""
        reason = self.reason(address)
        if reason is not None:
            log.info("refused a bot address: %s", reason)
            raise AddressRefused(reason)

    def check_endpoint(self, endpoint: str) -> None:
        """Check every address the endpoint's host name resolves to."""
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the endpoint must be an http:// or https:// URL with a host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError, ValueError) as exc:
            raise ValueError(f"cannot resolve {parts.hostname}: {exc}") from None
        for info in infos:
            self.check(str(info[4][0]))
