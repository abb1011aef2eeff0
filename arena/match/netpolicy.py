"""Which addresses a bot endpoint may have.  Endpoints are untrusted: a bot must not make
the arena call into the operator's own networks.

An allow list, not a deny list: an endpoint may be called only at a globally reachable
unicast address, or at an address in one of the networks the operator lists
(``ARENA_ALLOWED_NETWORKS``); the local profile (the default, for development and the
embedded demo) also allows loopback.  What is global is this module's own table, not the
interpreter's ``is_global`` (whose tables lag behind IANA's and differ between Python
versions):

- IPv4: anything outside the IANA special-purpose registry's blocks that are not globally
  reachable (private and shared address space 100.64.0.0/10, where cloud metadata
  services such as 100.100.100.200 live, link-local 169.254.169.254, documentation,
  benchmarking, reserved), multicast and broadcast.
- IPv6: only IANA's global unicast space 2000::/3, less the special-purpose blocks that
  are not globally reachable (2001::/23, 2001:db8::/32, 3fff::/20).  Everything else is
  refused: unique local, link-local, site-local ``fec0::/10``, multicast, the SRv6 SID
  block ``5f00::/16``, the discard prefix, and what IANA has not allocated yet.  The
  anycast and identifier blocks inside 2001::/23 that IANA marks global (PCP, TURN, AMT,
  AS112, ORCHIDv2) are services, never a bot, so the block is refused whole.

An IPv6 address that carries IPv4 addresses (IPv4-mapped ``::ffff:a.b.c.d``,
IPv4-translated ``::ffff:0:a.b.c.d``, the deprecated IPv4-compatible ``::a.b.c.d``, 6to4
``2002:AABB:CCDD::``, NAT64 ``64:ff9b::/96``, Teredo's server and client) reaches those
in the end: it is allowed only when every one of them is.  The local-use NAT64 prefix
``64:ff9b:1::/48`` is not globally reachable and may embed its IPv4 address at several
places, so it is refused unless the operator lists it.

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


def _networks(*cidrs: str) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


# IANA's IPv4 special-purpose registry, the blocks not globally reachable (the anycast
# exceptions inside 192.0.0.0/24 are services, never a bot), plus multicast
_IPV4_NOT_GLOBAL = _networks(
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
)  # fmt: skip
_IPV6_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
# inside 2000::/3, IANA's special-purpose blocks not globally reachable
_IPV6_NOT_GLOBAL = _networks("2001::/23", "2001:db8::/32", "3fff::/20")
_TEREDO = ipaddress.ip_network("2001::/32")
_SIXTOFOUR = ipaddress.ip_network("2002::/16")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
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
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _IPV4_MAPPED or ip in _IPV4_TRANSLATED or ip in _NAT64:
        return [low]
    if ip in _IPV4_COMPATIBLE:
        return [low] if int(ip) > 1 else []  # :: and ::1 are not IPv4 addresses
    if ip in _SIXTOFOUR:
        return [ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF)]
    if ip in _TEREDO:
        server = ipaddress.IPv4Address((int(ip) >> 64) & 0xFFFFFFFF)
        return [
            server,
            ipaddress.IPv4Address(~int(ip) & 0xFFFFFFFF),
        ]  # the traffic goes through both
    return []


def is_global(ip: IPAddress) -> bool:
    """A globally reachable unicast address by this module's table (see above); an IPv6
    address that carries IPv4 addresses is judged by those alone."""
    if isinstance(ip, ipaddress.IPv4Address):
        return not any(ip in net for net in _IPV4_NOT_GLOBAL)
    return ip in _IPV6_GLOBAL_UNICAST and not any(ip in net for net in _IPV6_NOT_GLOBAL)


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
        return self._reason(ip)

    def _reason(self, ip: IPAddress) -> str | None:
        # an operator's network allows the address as written
        if any(ip in net for net in self.allowed_networks):
            return None
        if self.allow_loopback and ip.is_loopback:
            return None
        inner = embedded_ipv4(ip)
        if inner:  # where the traffic ends up: every address it goes through must pass
            for a in inner:
                if (why := self._reason(a)) is not None:
                    return f"{ip} leads to {a}: {why}"
            return None
        if not is_global(ip):
            return f"{ip} is not a global unicast address"
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
