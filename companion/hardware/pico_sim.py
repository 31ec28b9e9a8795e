"""A simulated Pico co-processor behind a pyserial URL: ``picosim://NAME?seats=4``.

The simulated firmware answers like hardware/pico/main.py (HELLO, PING, ACK, RESEND,
LED, LOCKOUT; see hardware/pico/PROTOCOL.md) and keeps numbered edges in a ring so a
host can ask for them again. Tests and ``companion sim`` drive it through the
:class:`SimPico` object that the URL names (``SimPico.create(name)`` or
``get_device(name)``): press and release buttons at chosen times, and inject faults:
garbage bytes, a torn line, a corrupted or dropped line, an edge that never reaches
the host however often it is asked for, an unplug/replug, a reboot.

``register_url_handlers()`` adds ``companion.hardware.urlhandler`` to pyserial's
``serial.protocol_handler_packages``, after which ``serial.serial_for_url("picosim://x")``
opens one (companion.hardware.pico_link calls it on import).
"""

from __future__ import annotations

import random
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from typing import Any

import serial
from serial.serialutil import PortNotOpenError, SerialBase, SerialException

from companion.hardware.pico_protocol import (
    DOWN,
    HOST_KINDS,
    PROTOCOL_VERSION,
    UP,
    LineSplitter,
    ProtocolError,
    encode,
    parse_line,
)

URL_PACKAGE = "companion.hardware.urlhandler"
_devices: dict[str, SimPico] = {}
_devices_lock = threading.Lock()


def register_url_handlers() -> None:
    """Make ``picosim://`` known to pyserial (idempotent)."""
    if URL_PACKAGE not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append(URL_PACKAGE)


def get_device(name: str, **options: Any) -> SimPico:
    """The simulated Pico called ``name``, created with ``options`` if new."""
    with _devices_lock:
        dev = _devices.get(name)
        if dev is None:
            dev = _devices[name] = SimPico(name, **options)
        return dev


def forget_devices() -> None:
    with _devices_lock:
        _devices.clear()


class SimPico:
    """One simulated Pico: its clock, buttons, lamps, edge ring and USB plug."""

    def __init__(
        self,
        name: str = "pico",
        seats: int = 4,
        clock: Callable[[], int] = time.monotonic_ns,
        clock_offset_us: int = 0,
        lockout_us: int = 50_000,
        ring: int = 64,
        firmware: str = "vault-pico-sim",
    ) -> None:
        self.name = name
        self.seats = seats
        self.clock = clock
        self.firmware = firmware
        self.ring_size = ring
        self._lock = threading.RLock()
        self._conn: Serial | None = None
        self._splitter = LineSplitter()
        self.plugged = True
        self._clock_offset_us = clock_offset_us
        self._boot(lockout_us)
        # what the host sent, for tests
        self.received: list[str] = []
        self.errors: list[str] = []
        # output faults, applied to the next lines sent
        self._faults: deque[str] = deque()

    @classmethod
    def create(cls, name: str, **options: Any) -> SimPico:
        """A fresh device under ``name`` (replacing any earlier one)."""
        dev = cls(name, **options)
        with _devices_lock:
            _devices[name] = dev
        return dev

    def _boot(self, lockout_us: int) -> None:
        self.boot_id = random.getrandbits(31) + 1
        # The Pico's microsecond timer counts from its boot; the host's clock does not.
        self._epoch_ns = self.clock() - self._clock_offset_us * 1000
        self.next_n = 1
        self.ring: deque[tuple[int, int, str, int]] = deque(maxlen=self.ring_size)
        self.level = [UP] * self.seats
        self.lock_until_us = [-(10**18)] * self.seats
        self.lockout_us = lockout_us
        self.led_mask = 0
        self.acked = 0
        # Edges numbered but never sent, not even on RESEND (`withhold_next_edge`).
        self.withheld: set[int] = set()
        self._withhold_next = False

    # --- the Pico's clock ------------------------------------------------------------

    def pico_us(self, host_ns: int | None = None) -> int:
        """The Pico's timer (us since boot) at host monotonic time ``host_ns`` (now)."""
        t = self.clock() if host_ns is None else host_ns
        return (t - self._epoch_ns) // 1000

    # --- buttons -----------------------------------------------------------------------

    def press(self, seat: int, at_ns: int | None = None) -> int | None:
        """The button of ``seat`` goes down at host time ``at_ns`` (default now).
        Returns the edge number, or None when the lockout or the level swallows it."""
        return self._edge(seat, DOWN, at_ns)

    def release(self, seat: int, at_ns: int | None = None) -> int | None:
        return self._edge(seat, UP, at_ns)

    def _edge(self, seat: int, level: str, at_ns: int | None) -> int | None:
        if not 0 <= seat < self.seats:
            raise ValueError(f"seat must be 0-{self.seats - 1}, got {seat}")
        with self._lock:
            us = self.pico_us(at_ns)
            if us < self.lock_until_us[seat] or self.level[seat] == level:
                return None
            self.level[seat] = level
            self.lock_until_us[seat] = us + self.lockout_us
            n = self.next_n
            self.next_n += 1
            self.ring.append((n, seat, level, us))
            if self._withhold_next:
                self._withhold_next = False
                self.withheld.add(n)
            else:
                self._send(encode("EDGE", n, seat, level, us))
            return n

    # --- faults --------------------------------------------------------------------------

    def send_garbage(self, data: bytes) -> None:
        """Raw bytes on the wire, as a noisy line or a stray debug print would give."""
        with self._lock:
            self._write_raw(data)

    def tear_next(self) -> None:
        """The next line loses its second half and its newline (it runs into the next)."""
        self._faults.append("tear")

    def corrupt_next(self) -> None:
        """The next line has one byte changed (its checksum no longer matches)."""
        self._faults.append("corrupt")

    def drop_next(self) -> None:
        """The next line never arrives (the host sees a gap in the edge numbers)."""
        self._faults.append("drop")

    def withhold_next_edge(self) -> None:
        """The next edge gets its number but never reaches the host, first time or on
        any RESEND (a ring entry the firmware lost, or a line noise hits every time);
        its number stays in the ring, so no LOST names it either."""
        with self._lock:
            self._withhold_next = True

    def unplug(self) -> None:
        """USB gone: the open port fails; opening fails until ``plug``. The Pico keeps
        running (powered hub), so edges meanwhile stay in its ring."""
        with self._lock:
            self.plugged = False
            conn, self._conn = self._conn, None
        if conn is not None:
            conn._break("picosim device unplugged")

    def plug(self) -> None:
        with self._lock:
            self.plugged = True

    def reboot(self) -> None:
        """Power cycle: new boot id, timer from zero, ring empty. The link stays."""
        with self._lock:
            self._boot(self.lockout_us)
            self._splitter.reset()

    @property
    def connected(self) -> bool:
        return self._conn is not None

    # --- the wire ------------------------------------------------------------------------

    def _attach(self, conn: Serial) -> None:
        with self._lock:
            if not self.plugged:
                raise SerialException(f"picosim://{self.name}: no such device (unplugged)")
            old, self._conn = self._conn, conn
            self._splitter.reset()
        if old is not None and old is not conn:
            old._break("picosim port opened again elsewhere")

    def _detach(self, conn: Serial) -> None:
        with self._lock:
            if self._conn is conn:
                self._conn = None

    def _send(self, line: bytes) -> None:
        fault = self._faults.popleft() if self._faults else None
        if fault == "drop":
            return
        if fault == "corrupt":
            i = line.index(b" ") + 1 if b" " in line else 0
            line = line[:i] + (b"9" if line[i : i + 1] != b"9" else b"8") + line[i + 1 :]
        elif fault == "tear":
            line = line[: len(line) // 2]
        self._write_raw(line)

    def _write_raw(self, data: bytes) -> None:
        conn = self._conn
        if conn is not None:
            conn._feed(data)

    def _receive(self, data: bytes) -> None:
        with self._lock:
            for line in self._splitter.feed(data):
                try:
                    msg = parse_line(line, HOST_KINDS)
                except ProtocolError as exc:
                    self.errors.append(str(exc))
                    self._send(encode("ERR", "crc" if "checksum" in str(exc) else "bad"))
                    continue
                self.received.append(str(msg))
                self._handle(msg.kind, [int(a) for a in msg.args])

    def _handle(self, kind: str, args: list[int]) -> None:
        if kind == "HELLO":
            if args[0] != PROTOCOL_VERSION:
                self._send(encode("ERR", "version"))
                return
            self._send(encode("HI", PROTOCOL_VERSION, self.boot_id, self.seats, self.next_n,
                              self.firmware))
        elif kind == "PING":
            self._send(encode("PONG", args[0], self.pico_us(), self.next_n))
        elif kind == "ACK":
            self.acked = max(self.acked, args[0])
        elif kind == "RESEND":
            first = args[0]
            oldest = self.ring[0][0] if self.ring else self.next_n
            if first < oldest:
                self._send(encode("LOST", first, oldest - 1))
            for n, seat, level, us in list(self.ring):
                if n >= first and n not in self.withheld:
                    self._send(encode("EDGE", n, seat, level, us))
        elif kind == "LED":
            self.led_mask = args[0] & ((1 << self.seats) - 1)
            self._send(encode("LED", self.led_mask))
        elif kind == "LOCKOUT":
            self.lockout_us = args[0]
            self._send(encode("LOCKOUT", self.lockout_us))


class Serial(SerialBase):
    """pyserial port class for ``picosim://NAME[?seats=N&clock_offset_us=U]``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._dev: SimPico | None = None
        self._in = bytearray()
        self._cond = threading.Condition()
        self._broken: str | None = None
        super().__init__(*args, **kwargs)

    def open(self) -> None:
        if self.is_open:
            raise SerialException("Port is already open.")
        if self._port is None:
            raise SerialException("Port must be configured before it can be used.")
        name, options = _parse_url(self.port)
        dev = get_device(name, **options)
        self._in = bytearray()
        self._broken = None
        dev._attach(self)
        self._dev = dev
        self.is_open = True

    def close(self) -> None:
        if self.is_open and self._dev is not None:
            self._dev._detach(self)
        self.is_open = False
        with self._cond:
            self._cond.notify_all()

    def _reconfigure_port(self, *args: Any, **kwargs: Any) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass

    def _update_break_state(self) -> None:
        pass

    # called by the device
    def _feed(self, data: bytes) -> None:
        with self._cond:
            self._in += data
            self._cond.notify_all()

    def _break(self, reason: str) -> None:
        with self._cond:
            self._broken = reason
            self._cond.notify_all()

    def _check(self) -> None:
        if not self.is_open:
            raise PortNotOpenError()
        if self._broken:
            raise SerialException(f"{self.port}: {self._broken}")

    @property
    def in_waiting(self) -> int:
        self._check()
        return len(self._in)

    def read(self, size: int = 1) -> bytes:
        self._check()
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        with self._cond:
            while len(self._in) < size and not self._broken and self.is_open:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._cond.wait(remaining)
            if self._broken and not self._in:
                raise SerialException(f"{self.port}: {self._broken}")
            data = bytes(self._in[:size])
            del self._in[:size]
            return data

    def write(self, data: bytes) -> int:
        self._check()
        data = bytes(data)
        assert self._dev is not None
        self._dev._receive(data)
        return len(data)

    def reset_input_buffer(self) -> None:
        self._check()
        with self._cond:
            self._in.clear()

    def reset_output_buffer(self) -> None:
        self._check()

    def cancel_read(self) -> None:
        with self._cond:
            self._cond.notify_all()

    @property
    def out_waiting(self) -> int:
        return 0


def _parse_url(url: str) -> tuple[str, dict[str, int]]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "picosim" or not parts.netloc:
        raise SerialException(
            f"expected picosim://NAME[?seats=N&clock_offset_us=U], got {url!r}"
        )
    options: dict[str, int] = {}
    for key, values in urllib.parse.parse_qs(parts.query).items():
        if key not in ("seats", "clock_offset_us", "lockout_us"):
            raise SerialException(f"{url}: unknown option {key!r}")
        try:
            options[key] = int(values[0])
        except ValueError:
            raise SerialException(f"{url}: {key} must be a whole number") from None
    return parts.netloc, options
