"""WATCHDOG=1 means the referee is taking events: each ping is sent by the referee task
itself (a probe queued behind the events), so a dead or wedged referee stops the pings
and systemd restarts the service. Measured on a real notify socket."""

from __future__ import annotations

import asyncio
import socket
import time

from companion.appliance import Appliance
from companion.config import parse_config


def config(tmp_path):
    return parse_config(
        '[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n'
        f'[log]\ndir = "{tmp_path / "logs"}"\n'
    )


def pings(sock: socket.socket) -> int:
    n = 0
    while True:
        try:
            n += sock.recv(4096).decode().count("WATCHDOG=1")
        except BlockingIOError:
            return n


def test_pings_stop_when_the_referee_task_dies(tmp_path, monkeypatch):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "100000")  # pings every 50 ms
    monkeypatch.delenv("WATCHDOG_PID", raising=False)

    async def run() -> tuple[int, int, int]:
        app = Appliance(config(tmp_path), echo=False)
        await app.start()
        dog = asyncio.create_task(app.watchdog())
        await asyncio.sleep(0.5)
        alive = pings(sock)
        # A wedge: the referee task stops taking events (what one exception used to do).
        referee_task = app.table._tasks[0]
        referee_task.cancel()
        await asyncio.sleep(0.1)
        pings(sock)  # (a probe already taken may still be on its way)
        await asyncio.sleep(0.5)
        after = pings(sock)
        dog.cancel()
        await app.close()
        return alive, after, app.pings

    alive, after, sent = asyncio.run(run())
    sock.close()
    assert alive >= 3, "pings flow while the referee takes events"
    assert after == 0, "no ping once the referee task is gone: systemd will restart"
    assert sent >= alive


def test_a_busy_referee_still_pings_between_events(tmp_path, monkeypatch):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "100000")

    async def run() -> int:
        app = Appliance(config(tmp_path), echo=False)
        await app.start()
        dog = asyncio.create_task(app.watchdog())
        start = time.monotonic()
        while time.monotonic() - start < 0.5:
            app.table.post({"type": "loot", "seat": 1})  # rejected: no game; still work
            await asyncio.sleep(0.001)
        await app.table.drain()
        dog.cancel()
        await app.close()
        return pings(sock)

    assert asyncio.run(run()) >= 3
    sock.close()
