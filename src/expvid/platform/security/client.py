"""The address of the client behind a request, trusting a proxy header only from configured proxies.

Why our own rule rather than uvicorn's `--proxy-headers`: the throttle keys on this address, so a
forged `X-Forwarded-For` from anywhere but the proxy must not change it. The header is read only on
connections whose peer address is a trusted proxy; for `X-Forwarded-For` (a list the proxies append
to) the client is the right-most address that is not itself a trusted proxy. Anything that does not
parse as an IP address is ignored in favour of the peer address.
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
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


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
    peer = peer or "unknown"
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
