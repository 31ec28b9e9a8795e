"""Where people find the page: its addresses when it listens on all of the box's.

A page served on one address is found there. A page served on every address
(``[page] host = "0.0.0.0"``, what the Pi image uses) is announced as the box's mDNS
name, ``http://HOSTNAME.local:PORT/`` (avahi answers for it), and the box's LAN IPv4
addresses, read from ``ip -o -4 addr show`` or, without ``ip``, from the address a
UDP socket would send from (nothing is sent). The lookups are injected (``Lookup``),
so tests need no network.
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

ALL_ADDRESSES = frozenset({"0.0.0.0", "::", ""})
IP_TIMEOUT_S = 2.0
PROBE = ("192.0.2.1", 9)  # TEST-NET-1: a UDP connect() there only picks a route


def everywhere(host: str) -> bool:
    """Whether `host` means every address of the box."""
    return host in ALL_ADDRESSES


def parse_ip_addr(text: str) -> list[str]:
    """The LAN IPv4 addresses in `ip -o -4 addr show` output, in its order, each once:
    no loopback, no link-local (169.254/16), and nothing that is not an address."""
    found: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if "inet" not in words[:-1]:
            continue
        cidr = words[words.index("inet") + 1]
        try:
            address = ipaddress.IPv4Interface(cidr).ip
        except ValueError:
            continue
        if address.is_loopback or address.is_link_local or address.is_unspecified:
            continue
        if str(address) not in found:
            found.append(str(address))
    return found


def _ip_addr_text() -> str:
    return subprocess.run(
        ["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=True,
        timeout=IP_TIMEOUT_S,
    ).stdout


def _routed_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(PROBE)
        return str(s.getsockname()[0])


def lan_ipv4(
    ip_addr: Callable[[], str] = _ip_addr_text,
    routed: Callable[[], str] = _routed_address,
) -> list[str]:
    """The box's LAN IPv4 addresses: `ip`'s list, else the routed one, else none."""
    try:
        found = parse_ip_addr(ip_addr())
    except (OSError, subprocess.SubprocessError):
        found = []
    if found:
        return found
    try:
        return parse_ip_addr(f"inet {routed()}/32")
    except OSError:  # no route: no network yet
        return []


def mdns_name(hostname: str) -> str | None:
    """The box's mDNS name ("vault" -> "vault.local"), or None for a name nobody can
    look up that way (empty, localhost, not a DNS label)."""
    label = hostname.strip().split(".")[0].lower()
    if (not label or label == "localhost" or not label.isascii()
            or not label.replace("-", "").isalnum()):
        return None
    return f"{label}.local"


@dataclass(frozen=True)
class Lookup:
    """How the box's name and LAN addresses are found (tests give their own)."""

    hostname: Callable[[], str] = socket.gethostname
    addresses: Callable[[], list[str]] = lan_ipv4


def host_port(host: str, port: int) -> str:
    """"HOST:PORT" as a URL writes it (IPv6 in brackets); port 80 left out."""
    host = f"[{host}]" if ":" in host else host
    return host if port == 80 else f"{host}:{port}"


def page_host(host: str, lookup: Lookup) -> str:
    """The one name people type for the page: the address it listens on, or (on every
    address) the box's mDNS name, else its first LAN address, else loopback. No
    address lookup when the name will do."""
    if not everywhere(host):
        return host
    name = mdns_name(lookup.hostname())
    if name is not None:
        return name
    addresses = lookup.addresses()
    return addresses[0] if addresses else "127.0.0.1"


def page_urls(host: str, port: int, lookup: Lookup) -> list[str]:
    """Every URL the page answers on for people: the one of `page_host` first, then,
    on every address, each LAN IPv4 address."""
    urls = [f"http://{host_port(page_host(host, lookup), port)}/"]
    if everywhere(host):
        for address in lookup.addresses():
            url = f"http://{host_port(address, port)}/"
            if url not in urls:
                urls.append(url)
    return urls
