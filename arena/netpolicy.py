"""Which addresses a bot endpoint may have (DESIGN.md, "Non-negotiable" 4).

In the production profile an endpoint that resolves to a private, loopback, link-local,
reserved, multicast or unspecified address is refused, at registration and again at call
time, unless the operator lists its network.  The local profile (the default, for
development and the embedded demo) also allows loopback.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass(frozen=True)
class AddressPolicy:
    allow_loopback: bool = True
    allowed_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        default_factory=tuple
    )

    @classmethod
    def for_profile(cls, profile: str, allowed: Iterable[str] = ()) -> AddressPolicy:
        networks = tuple(ipaddress.ip_network(n, strict=False) for n in allowed)
        return cls(allow_loopback=profile != "production", allowed_networks=networks)

    def check(self, address: str) -> None:
        """Raise ValueError naming the reason when ``address`` may not be called."""
        ip = ipaddress.ip_address(address.split("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in net for net in self.allowed_networks):
            return
        if ip.is_loopback:
            if self.allow_loopback:
                return
            raise ValueError(f"{address} is a loopback address")
        for reason, flag in (
            ("link-local", ip.is_link_local),
            ("private", ip.is_private),
            ("multicast", ip.is_multicast),
            ("reserved", ip.is_reserved),
            ("unspecified", ip.is_unspecified),
        ):
            if flag:
                raise ValueError(f"{address} is a {reason} address")

    def check_endpoint(self, endpoint: str) -> None:
        """Check every address the endpoint's host name resolves to."""
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the endpoint must be an http:// or https:// URL with a host")
        try:
            infos = socket.getaddrinfo(parts.hostname, parts.port or 80, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise ValueError(f"cannot resolve {parts.hostname}: {exc}") from None
        for info in infos:
            self.check(str(info[4][0]))
