"""Pairing a phone with the box: a short PIN, session tokens, wrong PINs rate-limited.

Pure bookkeeping with an injectable clock; the HTTP side is in companion.web.server.
A new PIN per process (a game night is a restart), or the one given on the command
line / in the config. Unpairing all devices clears every session and draws a new PIN.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PIN_DIGITS = 4
MAX_SESSIONS = 64
# Wrong PINs: each client may try FREE_TRIES times, then waits LOCK_SECONDS, doubling
# with every further miss (capped). All clients together: GLOBAL_TRIES misses per
# GLOBAL_WINDOW seconds, so a 4-digit PIN cannot be walked from many addresses.
FREE_TRIES = 5
LOCK_SECONDS = 30.0
MAX_LOCK_SECONDS = 900.0
GLOBAL_TRIES = 30
GLOBAL_WINDOW = 600.0


def new_pin(digits: int = PIN_DIGITS) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def valid_pin(pin: object) -> bool:
    return isinstance(pin, str) and 4 <= len(pin) <= 8 and pin.isascii() and pin.isdigit()


@dataclass
class _Client:
    misses: int = 0
    locked_until: float = 0.0


@dataclass
class Pairing:
    pin: str = field(default_factory=new_pin)
    clock: Callable[[], float] = time.monotonic
    sessions: set[str] = field(default_factory=set)
    clients: dict[str, _Client] = field(default_factory=dict)
    global_misses: list[float] = field(default_factory=list)
    # Called with the new PIN when it changes (the LED display / speaker show it).
    on_pin: list[Callable[[str], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not valid_pin(self.pin):
            raise ValueError(f"a PIN is 4 to 8 digits, got {self.pin!r}")

    def locked(self, client: str) -> float:
        """Seconds this client must wait before its next try (0: may try now)."""
        now = self.clock()
        self.global_misses = [t for t in self.global_misses if now - t < GLOBAL_WINDOW]
        wait = 0.0
        c = self.clients.get(client)
        if c is not None:
            wait = max(wait, c.locked_until - now)
        if len(self.global_misses) >= GLOBAL_TRIES:
            wait = max(wait, self.global_misses[0] + GLOBAL_WINDOW - now)
        return max(wait, 0.0)

    def try_pin(self, client: str, pin: object) -> str | None:
        """A session token for the right PIN, else None (and the miss is counted).
        Callers check `locked` first: a locked client's tries are not even compared."""
        if valid_pin(pin) and hmac.compare_digest(str(pin), self.pin):
            self.clients.pop(client, None)
            token = secrets.token_urlsafe(24)
            if len(self.sessions) >= MAX_SESSIONS:
                self.sessions.pop()
            self.sessions.add(token)
            return token
        now = self.clock()
        self.global_misses.append(now)
        if len(self.clients) > 1024:  # bounded: forget the oldest record
            self.clients.pop(next(iter(self.clients)))
        c = self.clients.setdefault(client, _Client())
        c.misses += 1
        if c.misses >= FREE_TRIES:
            extra = c.misses - FREE_TRIES
            c.locked_until = now + min(LOCK_SECONDS * 2**extra, MAX_LOCK_SECONDS)
        return None

    def is_paired(self, token: str | None) -> bool:
        return bool(token) and any(hmac.compare_digest(token, s) for s in self.sessions)

    def unpair(self, token: str | None) -> None:
        if token:
            self.sessions.discard(token)

    def unpair_all(self, pin: str | None = None) -> str:
        """Forget every device and draw a new PIN (or take the one given)."""
        self.sessions.clear()
        self.clients.clear()
        self.pin = pin if pin is not None else new_pin()
        for callback in self.on_pin:
            callback(self.pin)
        return self.pin
