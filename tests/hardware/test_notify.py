from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from companion.hardware.notify import Notifier


@pytest.fixture
def notify_socket(tmp_path: Path):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    yield path, sock
    sock.close()


def receive(sock: socket.socket) -> str:
    return sock.recv(4096).decode()


def test_ready_watchdog_status_reach_the_socket(notify_socket) -> None:
    path, sock = notify_socket
    n = Notifier({"NOTIFY_SOCKET": str(path)})
    assert n.enabled
    assert n.ready("4 seats, display max7219")
    assert receive(sock) == "READY=1\nSTATUS=4 seats, display max7219"
    assert n.watchdog()
    assert receive(sock) == "WATCHDOG=1"
    assert n.status("round 2\nturn 3")
    assert receive(sock) == "STATUS=round 2 turn 3"
    assert n.stopping()
    assert receive(sock) == "STOPPING=1"
    assert n.sent[-1] == "STOPPING=1"


def test_environment_is_read_from_os_environ_by_default(notify_socket, monkeypatch) -> None:
    path, sock = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    assert Notifier().ready()
    assert receive(sock) == "READY=1"


def test_no_socket_is_a_silent_no_op(monkeypatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = Notifier()
    assert not n.enabled
    assert n.ready() is False and n.watchdog() is False
    assert n.watchdog_period() is None
    assert n.sent == []


def test_a_dead_socket_does_not_raise(tmp_path: Path) -> None:
    n = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens.sock")})
    assert n.enabled
    assert n.watchdog() is False  # nothing raised


def test_watchdog_period_is_half_of_watchdog_sec(notify_socket) -> None:
    path, _ = notify_socket
    env = {"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "10000000"}
    assert Notifier(env).watchdog_period() == 5.0
    env["WATCHDOG_PID"] = str(os.getpid())
    assert Notifier(env).watchdog_period() == 5.0
    env["WATCHDOG_PID"] = str(os.getpid() + 1)
    assert Notifier(env).watchdog_period() is None
    assert Notifier({"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "x"}).watchdog_period() is None
