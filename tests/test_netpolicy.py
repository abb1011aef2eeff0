"""The address policy: the server calls a bot only at a globally routable address, or at
one in the networks the operator allows, so that a registered endpoint cannot reach the
operator's internal services.  Every refused address gets the same message."""

from __future__ import annotations

import socket

import pytest

from arena.match.faults import BotFault
from arena.match.netpolicy import REFUSED, AddressPolicy, AddressRefused, embedded_ipv4
from arena.match.pools import EndpointPool

PRODUCTION = AddressPolicy.for_profile("production")
LOCAL = AddressPolicy.for_profile("local")

# (address, what it is): none of these may be dialled in production
REFUSED_ADDRESSES = [
    ("100.100.100.200", "a cloud metadata service in shared address space"),
    ("100.64.0.1", "shared address space (RFC 6598)"),
    ("169.254.169.254", "link-local: the classic metadata address"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.5", "private"),
    ("127.0.0.1", "loopback"),
    ("0.0.0.0", "unspecified"),
    ("192.0.2.10", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("240.0.0.1", "reserved"),
    ("224.0.0.1", "multicast"),
    ("255.255.255.255", "broadcast"),
    ("::1", "IPv6 loopback"),
    ("::", "IPv6 unspecified"),
    ("fe80::1%1", "IPv6 link-local with a zone"),
    ("fc00::1", "IPv6 unique local"),
    ("ff02::1", "IPv6 multicast"),
    ("2001:db8::1", "IPv6 documentation"),
    # IPv6 forms that lead to a refused IPv4 address
    ("2002:a9fe:a9fe::1", "6to4 form of 169.254.169.254"),
    ("2002:a9fe:a9fe::", "6to4 form of 169.254.169.254"),
    ("2002:6464:64c8::1", "6to4 form of 100.100.100.200"),
    ("2002:6440:0001::1", "6to4 form of 100.64.0.1"),
    ("::ffff:100.100.100.200", "IPv4-mapped 100.100.100.200"),
    ("::ffff:169.254.169.254", "IPv4-mapped 169.254.169.254"),
    ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
    ("::100.100.100.200", "IPv4-compatible 100.100.100.200"),
    ("::127.0.0.1", "IPv4-compatible loopback"),
    ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
    ("64:ff9b::6464:64c8", "NAT64 form of 100.100.100.200"),
    ("64:ff9b::6440:1", "NAT64 form of 100.64.0.1"),
    ("64:ff9b:1::a9fe:a9fe", "local-use NAT64 form of 169.254.169.254"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    # forms and ranges the interpreter's own ``is_global`` lets through
    ("::ffff:0:a9fe:a9fe", "IPv4-translated 169.254.169.254"),
    ("::ffff:0:a00:1", "IPv4-translated 10.0.0.1"),
    ("::ffff:0:7f00:1", "IPv4-translated loopback"),
    ("fec0::1", "IPv6 site-local (deprecated, still routed inside sites)"),
    ("3fff::1", "IPv6 documentation (RFC 9637)"),
    ("5f00::1", "SRv6 SIDs (RFC 9602)"),
    ("100::1", "IPv6 discard-only"),
    ("2001:2::1", "IPv6 benchmarking"),
    ("2001:10::1", "deprecated ORCHID"),
    ("4000::1", "IPv6 space IANA has not allocated"),
    ("192.0.0.9", "IPv4 IETF protocol assignments"),
    ("192.88.99.1", "deprecated 6to4 relay anycast"),
]


@pytest.mark.parametrize(("address", "what"), REFUSED_ADDRESSES)
def test_production_refuses_every_address_that_is_not_global(address, what):
    with pytest.raises(AddressRefused) as refused:
        PRODUCTION.check(address)
    # one message for every refusal: a caller cannot map the operator's ranges with it
    assert str(refused.value) == REFUSED
    assert refused.value.reason  # the operator's log says why


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "2002:5db8:d70e::1", "::ffff:8.8.8.8"],
)
def test_production_allows_global_addresses_and_their_ipv6_forms(address):
    PRODUCTION.check(address)


def test_embedded_ipv4_is_found_in_every_ipv6_form():
    import ipaddress

    def inner(text: str) -> list[str]:
        return [str(a) for a in embedded_ipv4(ipaddress.ip_address(text))]

    assert inner("::ffff:1.2.3.4") == ["1.2.3.4"]
    assert inner("2002:102:304::9") == ["1.2.3.4"]
    assert inner("64:ff9b::102:304") == ["1.2.3.4"]
    assert inner("::ffff:0:102:304") == ["1.2.3.4"]
    assert inner("::102:304") == ["1.2.3.4"]
    assert inner("2001:0:4136:e378:8000:63bf:3fff:fdd2") == ["65.54.227.120", "192.0.2.45"]
    assert inner("2606:4700:4700::1111") == [] and inner("::1") == [] and inner("1.2.3.4") == []
    # the local-use NAT64 prefix may embed its IPv4 address at several places: not a carrier
    assert inner("64:ff9b:1::102:304") == []


def test_a_teredo_address_passes_only_when_both_its_ends_do():
    """Teredo traffic goes through its server to its client: an operator's network
    allowing one of them does not let the other through."""
    policy = AddressPolicy.for_profile("production", ["10.77.0.0/24"])
    # server 10.77.0.1 (allowed), client 169.254.169.254 (the metadata service)
    with pytest.raises(AddressRefused):
        policy.check(_teredo("10.77.0.1", "169.254.169.254"))
    # server 8.8.8.8 (global), client 10.77.0.9 (allowed): both pass
    policy.check(_teredo("8.8.8.8", "10.77.0.9"))
    PRODUCTION.check(_teredo("8.8.8.8", "93.184.215.14"))
    with pytest.raises(AddressRefused):
        PRODUCTION.check(_teredo("8.8.8.8", "10.77.0.9"))


def _teredo(server: str, client: str) -> str:
    import ipaddress

    value = (0x20010000 << 96) | (int(ipaddress.IPv4Address(server)) << 64)
    value |= ~int(ipaddress.IPv4Address(client)) & 0xFFFFFFFF
    return str(ipaddress.IPv6Address(value))


def test_an_operator_network_allows_a_carrier_only_when_every_address_in_it_is_allowed():
    policy = AddressPolicy.for_profile("production", ["10.77.0.0/24", "64:ff9b:1::/96"])
    for address in ("::ffff:0:a4d:5", "2002:a4d:5::1", "64:ff9b::a4d:5", "64:ff9b:1::a4d:5"):
        policy.check(address)  # 10.77.0.5 in its IPv6 forms, and a listed local NAT64
    for address in ("::ffff:0:a4e:5", "2002:a4e:5::1", "64:ff9b:1:1::a4d:5"):
        with pytest.raises(AddressRefused):
            policy.check(address)


def test_local_profile_allows_loopback_only_besides_global_addresses():
    for address in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "8.8.8.8"):
        LOCAL.check(address)
    for address in ("10.1.2.3", "100.100.100.200", "169.254.169.254", "2002:a9fe:a9fe::1"):
        with pytest.raises(AddressRefused):
            LOCAL.check(address)


def test_operator_networks_are_allowed_also_in_their_ipv6_forms():
    policy = AddressPolicy.for_profile("production", ["10.77.0.0/24", " fd00:77::/64"])
    for address in ("10.77.0.5", "::ffff:10.77.0.5", "fd00:77::5"):
        policy.check(address)
    for address in ("10.77.1.5", "100.100.100.200", "fd00:78::5"):
        with pytest.raises(AddressRefused):
            policy.check(address)


def test_check_endpoint_checks_every_resolved_address_and_bad_urls(monkeypatch):
    answers = {
        "public.example": ["93.184.215.14"],
        "mixed.example": ["93.184.215.14", "100.100.100.200"],
    }

    def fake_getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    PRODUCTION.check_endpoint("https://public.example/bot")
    with pytest.raises(AddressRefused):  # one bad address among good ones is enough
        PRODUCTION.check_endpoint("http://mixed.example:8000")
    for endpoint in ("ftp://public.example", "http://", "http://public.example:99999"):
        with pytest.raises(ValueError):
            PRODUCTION.check_endpoint(endpoint)
    with pytest.raises(ValueError, match="cannot resolve"):
        PRODUCTION.check_endpoint("http://nowhere.example")


def test_every_new_connection_is_checked_again(monkeypatch):
    """A name that rebinds to a refused address after registration is never dialled."""
    answers = ["93.184.215.14"]

    def fake_getaddrinfo(host, port, *args, **kwargs):
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (answers[0], port, 0, 0))]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    pool = EndpointPool("http://rebinding.example:8000", check_address=PRODUCTION.check)
    assert pool.address() == "93.184.215.14"
    answers[0] = "2002:a9fe:a9fe::1"
    pool._resolved_at = -1e9  # the cached address has expired
    with pytest.raises(BotFault) as fault:
        pool.address()
    assert fault.value.kind == "refused_address" and str(REFUSED) in str(fault.value)
