"""Pairing a phone with the box: a short PIN, session tokens, wrong PINs rate-limited.

Pure bookkeeping with an injectable clock; the HTTP side is in companion.web.server.
A new PIN per process (a game night is a restart), or the one given on the command
line / in the config. Unpairing all devices clears every session and draws a new PIN.

A try is counted when it is begun (`attempt`), before the PIN it carries has even been
read, and only a right PIN takes it back: so requests sent all at once cannot compare
more PINs than the limits allow, however many there are. The limits, and what they
leave an attacker on the table's network:

- one address: FREE_TRIES tries at once, then a lock of LOCK_SECONDS doubling with each
  further miss up to MAX_LOCK_SECONDS: 12 tries in its first hour, then 4 an hour;
- every address together: GLOBAL_TRIES misses in any GLOBAL_WINDOW seconds, then
  pairing waits for everyone (phones already paired go on): at most 10 tries an hour,
  50 in a 4-hour game night (the window sliding over its ends), so the chance of
  pairing by guessing a 4-digit PIN in that night is at most 50 / 10,000 = 0.5%.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PIN_DIGITS = 4
MAX_SESSIONS = 64
MAX_CLIENTS = 1024  # addresses remembered (the oldest record is forgotten first)
# Wrong PINs: each client may try FREE_TRIES times, then waits LOCK_SECONDS, doubling
# with every further miss (capped). All clients together: GLOBAL_TRIES misses per
# GLOBAL_WINDOW seconds, so a 4-digit PIN cannot be walked from many addresses.
FREE_TRIES = 5
LOCK_SECONDS = 30.0
MAX_LOCK_SECONDS = 900.0
GLOBAL_TRIES = 10
GLOBAL_WINDOW = 3600.0


def new_pin(digits: int = PIN_DIGITS) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def valid_pin(pin: object) -> bool:
    return isinstance(pin, str) and 4 <= len(pin) <= 8 and pin.isascii() and pin.isdigit()


@dataclass
class _Client:
    misses: int = 0
    locked_until: float = 0.0


@dataclass(frozen=True)
class Attempt:
    """One counted try: its address and when it was counted (`Pairing.attempt`)."""

    client: str
    at: float


@dataclass
class Pairing:
    pin: str = field(default_factory=new_pin)
    clock: Callable[[], float] = time.monotonic
    sessions: set[str] = field(default_factory=set)
    clients: dict[str, _Client] = field(default_factory=dict)
    global_misses: list[float] = field(default_factory=list)
    # Called with the new PIN when it changes (the LED display / speaker show it).
    on_pin: list[Callable[[str], None]] = field(default_factory=list)
    compared: int = 0  # PINs compared with the right one (wrong and right), in all
    paired: int = 0  # devices paired since the start (a right PIN each)
    # Called after each pairing (the box stops announcing its address and PIN).
    on_paired: list[Callable[[], None]] = field(default_factory=list)

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

    def attempt(self, client: str) -> Attempt | float:
        """Begin a try for `client`: counted now as a miss (for the client and for
        everyone), before its PIN is known. Returns the Attempt to `check`, or the
        seconds to wait (> 0) when the client or everyone is locked out (nothing is
        counted then). Call it before awaiting anything for the request."""
        wait = self.locked(client)
        if wait > 0:
            return wait
        now = self.clock()
        self.global_misses.append(now)
        c = self.clients.get(client)
        if c is None:
            if len(self.clients) >= MAX_CLIENTS:  # bounded: forget the oldest record
                self.clients.pop(next(iter(self.clients)))
            c = self.clients[client] = _Client()
        c.misses += 1
        if c.misses >= FREE_TRIES:
            extra = c.misses - FREE_TRIES
            c.locked_until = now + min(LOCK_SECONDS * 2**extra, MAX_LOCK_SECONDS)
        return Attempt(client, now)

    def check(self, attempt: Attempt, pin: object) -> str | None:
        """Compare the attempt's PIN: a session token for the right one (the try is
        taken back and the client's misses forgotten), else None (the miss stays)."""
        self.compared += 1
        if not (valid_pin(pin) and hmac.compare_digest(str(pin), self.pin)):
            return None
        self.clients.pop(attempt.client, None)
        with contextlib.suppress(ValueError):  # older than the window already
            self.global_misses.remove(attempt.at)
        token = secrets.token_urlsafe(24)
        if len(self.sessions) >= MAX_SESSIONS:
            self.sessions.pop()
        self.sessions.add(token)
        self.paired += 1
        for callback in self.on_paired:
            callback()
        return token

    def try_pin(self, client: str, pin: object) -> str | None:
        """`attempt` and `check` at once: a session token for the right PIN, else None
        (a miss counted; nothing compared while the client or everyone is locked)."""
        attempt = self.attempt(client)
        if not isinstance(attempt, Attempt):
            return None
        return self.check(attempt, pin)

    def is_paired(self, token: str | None) -> bool:
        # A set lookup: hashing a guessed token tells nothing about the 192-bit ones
        # kept (the hash is salted per process), and it is one step however many.
        return bool(token) and token in self.sessions

    def unpair(self, token: str | None) -> None:
        if token:
            self.sessions.discard(token)

    def everyone_locked(self) -> bool:
        """Pairing waits for everyone: GLOBAL_TRIES misses within GLOBAL_WINDOW."""
        return self.locked("") > 0 and len(self.global_misses) >= GLOBAL_TRIES

    def unpair_all(self, pin: str | None = None) -> str:
        """Forget every device and draw a new PIN (or take the one given). The misses
        are forgotten too: guesses at the old PIN tell nothing of the new one, so a
        table whose pairing an attacker locked can open it again."""
        self.sessions.clear()
        self.clients.clear()
        self.global_misses.clear()
        self.pin = pin if pin is not None else new_pin()
        for callback in self.on_pin:
            callback(self.pin)
        return self.pin
