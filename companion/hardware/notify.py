"""systemd notifications (sd_notify) through sdnotify: READY=1, WATCHDOG=1, STATUS=...

A no-op when ``NOTIFY_SOCKET`` is unset (a laptop, a terminal, the tests), so the loop
can call it unconditionally. Never raises: a lost notification is systemd's problem
(the watchdog will say so), not a reason to stop refereeing.

The loop should call ``ready()`` once the hardware is up, then ``watchdog()`` every
``watchdog_period()`` seconds (half of the unit's WatchdogSec) from the event loop
itself, so a stuck loop stops the pings and systemd restarts the service.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


class Notifier:
    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.socket_path = env.get("NOTIFY_SOCKET") or None
        self._watchdog_usec = _int_or_none(env.get("WATCHDOG_USEC"))
        pid = _int_or_none(env.get("WATCHDOG_PID"))
        if pid is not None and pid != os.getpid():
            self._watchdog_usec = None  # the watchdog is meant for another process
        self._notifier: Any = None
        self.sent: list[str] = []  # what was sent, newest last (bounded)

    @property
    def enabled(self) -> bool:
        return self.socket_path is not None

    def _send(self, message: str) -> bool:
        if not self.enabled:
            return False
        try:
            if self._notifier is None:
                import sdnotify

                # sdnotify reads NOTIFY_SOCKET from os.environ when it is created.
                old = os.environ.get("NOTIFY_SOCKET")
                os.environ["NOTIFY_SOCKET"] = self.socket_path or ""
                try:
                    self._notifier = sdnotify.SystemdNotifier(debug=True)  # raise, we catch
                    # Never block the event loop on a full notify socket (a datagram
                    # queue holds ~10 messages): a lost ping is the watchdog's to judge.
                    sock = getattr(self._notifier, "socket", None)
                    if sock is not None:
                        sock.setblocking(False)
                finally:
                    if old is None:
                        os.environ.pop("NOTIFY_SOCKET", None)
                    else:
                        os.environ["NOTIFY_SOCKET"] = old
            self._notifier.notify(message)
        except Exception:
            return False
        self.sent = (self.sent + [message])[-20:]
        return True

    def ready(self, status: str | None = None) -> bool:
        """Tell systemd the service is up (Type=notify waits for this)."""
        return self._send("READY=1" + (f"\nSTATUS={_one_line(status)}" if status else ""))

    def watchdog(self) -> bool:
        return self._send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """A one-line status shown by ``systemctl status``."""
        return self._send(f"STATUS={_one_line(text)}")

    def stopping(self) -> bool:
        return self._send("STOPPING=1")

    def watchdog_period(self) -> float | None:
        """Seconds between watchdog pings (half of WatchdogSec), or None if no watchdog."""
        if not self.enabled or not self._watchdog_usec:
            return None
        return self._watchdog_usec / 2 / 1_000_000


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split())
