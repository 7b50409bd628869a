"""The address of the client behind a request, trusting a proxy header only from configured proxies.

Why our own rule rather than uvicorn's `--proxy-headers`: the throttle keys on this address, so a
forged `X-Forwarded-For` from anywhere but the proxy must not change it. The header is read only on
connections whose peer address is a trusted proxy; for `X-Forwarded-For` (a list the proxies append
to) the client is the right-most address that is not itself a trusted proxy. Anything that does not
parse as an IP address is ignored in favour of the peer address. An IPv4 address written as IPv6
(`::ffff:203.0.113.7`, as dual-stack sockets report it) is the IPv4 address.

`source_key` is what the throttle and the hashing lanes count per: the address, or for IPv6 its /64
network (one subscriber's share: anyone holding a /64 has 2**64 addresses to rotate through).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=64)
def _networks(trusted: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in trusted if entry.strip())


def parse_networks(entries: Iterable[str]) -> list[str]:
    """Validate proxy addresses / CIDR ranges (ValueError names the bad entry)."""
    good = []
    for entry in entries:
        try:
            ipaddress.ip_network(entry.strip(), strict=False)
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or CIDR range") from None
        good.append(entry.strip())
    return good


def _address(text: str) -> str | None:
    text = text.strip().strip('"')
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.7:51234"
        text = text.split(":", 1)[0]
    try:
        return _canonical(ipaddress.ip_address(text))
    except ValueError:
        return None


def _canonical(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def source_key(address: str) -> str:
    """The key the sign-in throttle and the hashing lanes count per (see the module docstring)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return _canonical(ip)


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(
    peer: str | None, header_value: str | None, *, header: str | None, trusted_proxies: Iterable[str]
) -> str:
    """The client's address for throttling and the dashboard."""
    peer = (_address(peer) or peer) if peer else "unknown"
    if not header or not header_value:
        return peer
    networks = _networks(tuple(trusted_proxies))
    if not _trusted(peer, networks):
        return peer
    if header.lower() == "x-forwarded-for":
        hops = [_address(part) for part in header_value.split(",")]
        for hop in reversed(hops):
            if hop is None:
                return peer  # a malformed hop: trust nothing to its left
            if not _trusted(hop, networks):
                return hop
        return next((hop for hop in hops if hop), peer)
    return _address(header_value.split(",")[-1]) or peer
