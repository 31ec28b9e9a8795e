"""Where people find the page: on every address of the box it is announced as
HOSTNAME.local and the LAN IPv4 addresses, never http://0.0.0.0:PORT/; the lookups are
injected, so none of this needs a network."""

from __future__ import annotations

import asyncio
import subprocess

from companion.loop import Referee, TableLoop
from companion.web.address import (
    Lookup,
    lan_ipv4,
    mdns_name,
    page_host,
    page_urls,
    parse_ip_addr,
)
from companion.web.server import PageServer

IP_ADDR = (
    "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
    "2: eth0    inet 192.168.1.20/24 brd 192.168.1.255 scope global dynamic noprefixroute "
    "eth0\\       valid_lft 86124sec preferred_lft 86124sec\n"
    "3: wlan0    inet 169.254.7.9/16 brd 169.254.255.255 scope link wlan0\\       valid_lft "
    "forever preferred_lft forever\n"
    "3: wlan0    inet 10.0.0.7/8 scope global wlan0\\       valid_lft forever\n"
    "4: eth0    inet 192.168.1.20/24 scope global secondary eth0\n"
    "5: odd    inet not-an-address scope global odd\n"
    "garbage inet\n"
)
VAULT = Lookup(hostname=lambda: "vault", addresses=lambda: ["192.168.1.20", "10.0.0.7"])


def test_ip_addr_output_gives_the_lan_addresses_once_each_in_order():
    assert parse_ip_addr(IP_ADDR) == ["192.168.1.20", "10.0.0.7"]
    assert parse_ip_addr("") == []


def test_without_ip_the_routed_address_and_without_a_route_none():
    def no_ip() -> str:
        raise FileNotFoundError("ip")

    def failing_ip() -> str:
        raise subprocess.CalledProcessError(1, ["ip"])

    def no_route() -> str:
        raise OSError(101, "Network is unreachable")

    assert lan_ipv4(lambda: IP_ADDR, lambda: "10.9.9.9") == ["192.168.1.20", "10.0.0.7"]
    assert lan_ipv4(no_ip, lambda: "192.168.4.2") == ["192.168.4.2"]
    assert lan_ipv4(failing_ip, lambda: "127.0.0.1") == []  # loopback is nobody's LAN
    assert lan_ipv4(no_ip, no_route) == []


def test_the_mdns_name_is_the_hostnames_first_label():
    assert mdns_name("vault") == "vault.local"
    assert mdns_name("Vault.lan") == "vault.local"
    assert [mdns_name(n) for n in ("", "localhost", "bad name", "vault_1")] == [None] * 4


def test_every_address_is_announced_as_the_name_and_the_lan_addresses():
    assert page_urls("0.0.0.0", 8080, VAULT) == [
        "http://vault.local:8080/", "http://192.168.1.20:8080/", "http://10.0.0.7:8080/"]
    assert page_urls("::", 80, VAULT)[0] == "http://vault.local/"
    # one address: that one, nothing looked up
    nothing = Lookup(hostname=lambda: 1 / 0, addresses=lambda: 1 / 0)
    assert page_urls("192.168.1.20", 8080, nothing) == ["http://192.168.1.20:8080/"]
    assert page_urls("::1", 8080, nothing) == ["http://[::1]:8080/"]
    # no usable name: the first LAN address, else loopback
    nameless = Lookup(hostname=lambda: "localhost", addresses=lambda: ["10.0.0.7"])
    assert page_host("0.0.0.0", nameless) == "10.0.0.7"
    assert page_host("0.0.0.0", Lookup(lambda: "", lambda: [])) == "127.0.0.1"


def test_a_page_served_on_every_address_never_says_0_0_0_0():
    async def go():
        server = PageServer(TableLoop(Referee()), host="0.0.0.0", port=0)
        server.lookup = VAULT
        await server.start()
        try:
            return server.port, server.url, server.urls()
        finally:
            await server.stop()

    port, url, urls = asyncio.run(go())
    assert port > 0 and url == f"http://vault.local:{port}/"
    assert urls == [url, f"http://192.168.1.20:{port}/", f"http://10.0.0.7:{port}/"]
    assert not any("0.0.0.0" in u for u in urls)
