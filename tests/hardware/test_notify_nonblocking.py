"""A notify socket nobody reads must never block the referee: the datagram
queue holds about 10 messages; the 11th ping used to block the whole event loop."""

from __future__ import annotations

import socket
import time

from companion.hardware.notify import Notifier


def test_a_full_notify_socket_drops_pings_instead_of_blocking(tmp_path):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    n = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1000000"})
    start = time.monotonic()
    results = [n.watchdog() for _ in range(200)]  # nobody reads: the queue fills
    assert time.monotonic() - start < 5
    assert results[0] and not all(results)  # some sent, the rest dropped, none blocked
    sock.close()
