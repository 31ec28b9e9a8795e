"""The host side of the Pico co-processor link (hardware/pico/PROTOCOL.md), over pyserial.

``PicoLink(port, on_press)`` opens ``serial.serial_for_url(port)`` (a device such as
/dev/vault-pico, or ``picosim://NAME`` for the simulated firmware, or any pyserial URL)
in a reader thread of its own, shakes hands, estimates the offset between the Pico's
microsecond timer and the host's CLOCK_MONOTONIC (NTP-style ping/pong, the sample with
the shortest round trip wins), and calls ``on_press(seat, ts_ns)`` once for every
button press the Pico accepted, with the Pico's edge time translated to host
``time.monotonic_ns()`` nanoseconds.

Robustness: a garbage, torn or corrupted line is reported in one line (``on_error``,
``errors``, the log) and skipped; edges are numbered, so a gap makes the link ask the
Pico to send them again (RESEND) and deliver in order; duplicates are dropped; after a
disconnect it reopens the port every ``reconnect_s`` and asks for everything after the
last edge it delivered, so no accepted press is lost or delivered twice. No exception
escapes to the caller: not from the thread, not from ``set_lamps``/``stop``.

A gap is never waited on for ever. An edge the Pico numbered but that still has not
come ``GIVE_UP_AFTER_TIMEOUTS`` reply timeouts after the gap was seen (RESEND asked
again every reply timeout; 0.9 s at the default ``reply_timeout_s`` of 0.3 s, plus one
read timeout, 20 ms) is given up: counted in ``stats.lost_edges``, reported in one line
("pico: edge N never resent; counted lost, later presses judged without it"), and the
edges held after it are delivered in order at once. "Numbered" is the Pico's own word:
the link pings while a gap lasts and gives up only edges below the ``next`` of a PONG
that came after the gap was seen; a held edge that arrived before that PONG and is
numbered at or past its ``next`` was never numbered by the Pico (a corrupted line that
passed the checksum) and is dropped, not delivered. (With a Pico that answers no PING
for that long, the link gives up against the numbers it has seen.)

Callbacks run on the link's reader thread: an asyncio loop should hand them over with
``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import serial

from companion.hardware.pico_protocol import (
    DOWN,
    PROTOCOL_VERSION,
    LineSplitter,
    Message,
    ProtocolError,
    encode,
    parse_resync,
)
from companion.hardware.pico_sim import register_url_handlers

log = logging.getLogger(__name__)

MAX_EDGE_JUMP = 4096  # edges the Pico may number between two of its reports (a PONG per 2 s)
MAX_PENDING = 256  # edges held waiting for a gap to fill (the Pico's ring holds 64)
# A gap in the edge numbers is given up after this many reply timeouts (RESEND is asked
# again every reply timeout meanwhile): the bound on how long a press waits behind an
# edge that never comes. 3 x the default reply_timeout_s (0.3 s) = 0.9 s.
GIVE_UP_AFTER_TIMEOUTS = 3
register_url_handlers()

Callback = Callable[[int, int], Any]


@dataclass
class LinkStats:
    connects: int = 0
    disconnects: int = 0
    bad_lines: int = 0
    duplicates: int = 0
    gaps: int = 0
    resend_requests: int = 0
    lost_edges: int = 0
    presses: int = 0
    releases: int = 0
    sync_samples: int = 0


@dataclass
class _Sample:
    rtt_ns: int
    offset_ns: int


@dataclass
class _Pending:
    seat: int
    level: str
    pico_us: int
    offset_ns: int | None = None  # fixed once known, for edges of an older boot
    arrived: int = 0  # the number of the line it came in (the link counts lines)


@dataclass
class _Ping:
    token: int
    sent_ns: int
    sent_mono: float


@dataclass
class _Session:
    state: str = "hello"  # hello -> sync -> run
    hello_sent: float = 0.0
    hello_tries: int = 0
    ping: _Ping | None = None
    pings_sent: int = 0
    samples: list[_Sample] = field(default_factory=list)
    last_ping: float = 0.0
    last_resend: float = 0.0
    # The gap being waited on: since when (time.monotonic()) and at which edge number.
    gap_since: float | None = None
    gap_at: int = 0
    # The Pico's own count from its latest PONG in this session, when it came
    # (time.monotonic()) and in which line.
    pong_next: int = 0
    pong_at: float = 0.0
    pong_line: int = 0


class PicoLink:
    def __init__(
        self,
        port: str,
        on_press: Callback,
        *,
        baud: int = 115200,
        on_release: Callback | None = None,
        on_error: Callable[[str], Any] | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        lockout_us: int | None = None,
        reconnect_s: float = 0.25,
        ping_interval_s: float = 2.0,
        sync_pings: int = 8,
        reply_timeout_s: float = 0.3,
        quiet_s: float = 1.0,
        read_timeout_s: float = 0.02,
    ) -> None:
        self.port = port
        self.baud = baud
        self.on_press = on_press
        self.on_release = on_release
        self.on_error = on_error
        self.clock = clock
        self.lockout_us = lockout_us
        self.reconnect_s = reconnect_s
        self.ping_interval_s = ping_interval_s
        self.sync_pings = max(1, sync_pings)
        self.reply_timeout_s = reply_timeout_s
        self.quiet_s = quiet_s
        self.read_timeout_s = read_timeout_s

        self.stats = LinkStats()
        self.errors: deque[str] = deque(maxlen=200)
        self.boot_id: int | None = None
        self.firmware: str | None = None
        self.seats: int | None = None
        self.offset_ns: int | None = None  # host_ns = pico_us * 1000 + offset_ns
        self.rtt_ns: int | None = None
        self.expected = 1  # the next edge number to deliver
        # The highest "next edge number" the Pico has shown (HI, PONG, EDGE): edge
        # numbers and LOST ranges far past it are not believed (one bad but well-formed
        # line must not move `expected` to 10**20 and drop every later press).
        self.pico_next = 1
        self._last_pico_us = 0  # the Pico's timer in its last PONG (it only goes back on a reboot)
        self._pending: dict[int, _Pending] = {}
        self._delivered: dict[int, int] = {}  # recent edge number -> its Pico time
        self._window: deque[_Sample] = deque(maxlen=8)
        self._last_edge_mono = 0.0
        self._lamp_mask = 0
        self._token = 0
        self._splitter = LineSplitter()
        self._ser: Any = None
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._connected = False
        self._thread: threading.Thread | None = None
        self._session = _Session()
        self._open_failures = 0
        self._lines = 0  # lines received, all sessions: the order things arrived in

    @classmethod
    def from_config(cls, config: Any, on_press: Callback, **options: Any) -> PicoLink:
        """From a ``companion.config.Config``: its [pico] port and baud, and its
        timing.lockout_ms as the Pico's debounce lockout."""
        options.setdefault("lockout_us", round(config.timing.lockout_ms * 1000))
        return cls(config.pico.port, on_press, baud=config.pico.baud, **options)

    # --- public API ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread (returns at once; the port opens in the thread)."""
        if self._thread and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"pico-link {self.port}",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        ser = self._ser
        if ser is not None:
            with contextlib.suppress(Exception):
                ser.cancel_read()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> PicoLink:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def synced(self) -> bool:
        """Connected, handshake done and the clock offset known: presses flow."""
        return self._synced.is_set()

    def wait_synced(self, timeout: float = 5.0) -> bool:
        return self._synced.wait(timeout)

    def set_lamps(self, seats: Iterable[int]) -> None:
        """Light the button lamps of these seats (remembered and re-sent on reconnect)."""
        self._lamp_mask = sum(1 << s for s in set(seats) if 0 <= s < 32)
        if self.synced:
            self._send_quietly("LED", self._lamp_mask)

    def to_host_ns(self, pico_us: int) -> int | None:
        """A Pico timer reading as host monotonic nanoseconds (None before the sync)."""
        return None if self.offset_ns is None else pico_us * 1000 + self.offset_ns

    # --- thread --------------------------------------------------------------------------

    def _error(self, message: str) -> None:
        line = " ".join(message.split())
        self.errors.append(line)
        log.warning("%s", line)
        if self.on_error is not None:
            try:
                self.on_error(line)
            except Exception:  # a broken error sink must not stop the link
                log.exception("on_error callback failed")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ser = serial.serial_for_url(self.port, baudrate=self.baud,
                                            timeout=self.read_timeout_s)
            except Exception as exc:
                self._open_failures += 1
                if self._open_failures == 1 or self._open_failures % 40 == 0:
                    self._error(f"pico: cannot open {self.port}: {_one_line(exc)}; retrying")
                self._stop.wait(self.reconnect_s)
                continue
            if self._open_failures:
                self._open_failures = 0
            self._ser = ser
            self._connected = True
            self.stats.connects += 1
            try:
                self._serve(ser)
            except Exception as exc:  # SerialException, OSError, or a bug: reconnect
                if not self._stop.is_set():
                    self.stats.disconnects += 1
                    self._error(f"pico: connection to {self.port} lost: {_one_line(exc)}")
            finally:
                self._connected = False
                self._synced.clear()
                self._ser = None
                with contextlib.suppress(Exception):
                    ser.close()
            self._stop.wait(self.reconnect_s)

    def _serve(self, ser: Any) -> None:
        dropped = self._splitter.reset()
        if dropped:
            self._error(f"pico: dropped {len(dropped)} bytes of a torn line at reconnect")
        self._session = _Session()
        self._send_hello()
        while not self._stop.is_set():
            waiting = ser.in_waiting
            data = ser.read(waiting if waiting else 1)
            if data:
                for line in self._splitter.feed(data):
                    self._handle_line(line)
            self._tick()

    def _write(self, kind: str, *args: int | str) -> None:
        ser = self._ser
        if ser is None:
            raise serial.SerialException("not connected")
        with self._write_lock:
            ser.write(encode(kind, *args))

    def _send_quietly(self, kind: str, *args: int | str) -> None:
        try:
            self._write(kind, *args)
        except Exception as exc:  # the reader thread will notice and reconnect
            self._error(f"pico: could not send {kind}: {_one_line(exc)}")

    # --- handshake and clock -------------------------------------------------------------

    def _send_hello(self) -> None:
        s = self._session
        s.state = "hello"
        s.hello_sent = time.monotonic()
        s.hello_tries += 1
        if s.hello_tries == 4:
            self._error(f"pico: no HI from {self.port} after 3 HELLOs; still trying")
        self._write("HELLO", PROTOCOL_VERSION)

    def _send_ping(self) -> None:
        s = self._session
        self._token = (self._token + 1) % 1_000_000_000
        s.ping = _Ping(self._token, self.clock(), time.monotonic())
        s.pings_sent += 1
        s.last_ping = time.monotonic()
        self._write("PING", self._token)

    def _tick(self) -> None:
        s = self._session
        now = time.monotonic()
        if s.state == "hello":
            if now - s.hello_sent > self.reply_timeout_s:
                self._send_hello()
        elif s.state == "sync":
            if s.ping is None or now - s.ping.sent_mono > self.reply_timeout_s:
                if s.pings_sent >= 3 * self.sync_pings and s.samples:
                    self._finish_sync()
                else:
                    self._send_ping()
        else:
            self._watch_gap(now)
            if s.ping is not None and now - s.ping.sent_mono > self.reply_timeout_s:
                s.ping = None  # lost; the next interval sends a new one
            if s.ping is None and (
                now - s.last_ping > self.ping_interval_s
                # While a gap lasts: the Pico's count, to know what it numbered.
                or (s.gap_since is not None and s.pong_at <= s.gap_since
                    and now - s.last_ping > self.reply_timeout_s)
            ):
                self._send_ping()
            if s.gap_since is not None and now - s.last_resend > self.reply_timeout_s:
                self._request_resend()
            self._maybe_adopt_offset()

    def _watch_gap(self, now: float) -> None:
        """Note when the edge awaited went missing; give it up after the bound."""
        s = self._session
        if self.pico_next <= self.expected:  # (anything held raised pico_next past it)
            s.gap_since = None  # nothing missing
            return
        if s.gap_since is None or s.gap_at != self.expected:
            s.gap_since, s.gap_at = now, self.expected  # a new gap (or the old one moved)
            return
        if now - s.gap_since >= GIVE_UP_AFTER_TIMEOUTS * self.reply_timeout_s:
            self._give_up_gap()

    def _give_up_gap(self) -> None:
        """The edges missing at `expected` did not come after RESEND for the bound:
        count them lost and deliver what is held after them, in order."""
        s = self._session
        if s.gap_since is not None and s.pong_at > s.gap_since:  # the Pico's count is known
            # Held edges from before that PONG, at or past its count: never numbered.
            bogus = [n for n, e in self._pending.items()
                     if n >= s.pong_next and e.arrived < s.pong_line]
            for n in bogus:
                del self._pending[n]
            if bogus:
                self.stats.bad_lines += len(bogus)
                self._error(f"pico: held edge {min(bogus)} was never numbered by the Pico "
                            f"(its count is {s.pong_next}); dropped"
                            + (f" with {len(bogus) - 1} more" if len(bogus) > 1 else ""))
            count = s.pong_next
        else:
            count = self.pico_next
        # What is held now is real: numbered below the count, or sent after the PONG.
        upto = min(self._pending) if self._pending else count
        self.pico_next = max(count, self.expected, max(self._pending, default=0) + 1)
        s.gap_since = None
        if upto > self.expected:
            first, last = self.expected, upto - 1
            self.stats.lost_edges += last - first + 1
            which = f"edge {first}" if first == last else f"edges {first}-{last}"
            self._error(f"pico: {which} never resent; counted lost, later presses judged "
                        "without it")
            self.expected = upto
            self._send_quietly("ACK", self.expected - 1)
        self._deliver()

    def _on_hi(self, version: int, boot_id: int, seats: int, next_n: int, fw: str) -> None:
        s = self._session
        if version != PROTOCOL_VERSION:
            self._error(f"pico: firmware speaks protocol {version}, the host {PROTOCOL_VERSION};"
                        " update hardware/pico/main.py on the Pico")
            return
        if s.state != "hello":
            return  # a late duplicate
        if boot_id != self.boot_id:
            if self.boot_id is not None:
                self._flush_old_boot()
                self._error(f"pico: the Pico restarted (boot {self.boot_id} -> {boot_id});"
                            f" its edge numbers start again at {next_n}")
                # A Pico the host knew restarted: its edges since then happened while
                # the link was down, like those kept over a plain reconnect. From 1.
                self.expected = 1
            else:
                # First contact: presses from before the host knew the Pico are old news.
                self.expected = next_n
            self.boot_id = boot_id
            self._pending.clear()
        self.pico_next = next_n
        self.seats, self.firmware = seats, fw
        s.state = "sync"
        s.samples = []
        self._send_ping()

    def _on_pong(self, token: int, pico_us: int, next_n: int) -> None:
        s = self._session
        if s.ping is None or token != s.ping.token:
            return  # stale
        t3 = self.clock()
        t0 = s.ping.sent_ns
        s.ping = None
        sample = _Sample(t3 - t0, (t0 + t3) // 2 - pico_us * 1000)
        self.stats.sync_samples += 1
        if s.state == "sync":
            self._last_pico_us = pico_us
            s.samples.append(sample)
            if len(s.samples) >= self.sync_pings:
                self._finish_sync()
            else:
                self._send_ping()
        elif s.state == "run":
            if pico_us < self._last_pico_us:
                # The Pico's timer went back: it restarted, whatever its edge numbers say
                # (a restart plus as many presses as before looks like no change at all).
                self._error("pico: the Pico's clock went back: it restarted; shaking hands again")
                self._last_pico_us = pico_us
                self._synced.clear()
                self._send_hello()
                return
            self._last_pico_us = pico_us
            if next_n < self.expected:
                self._error(f"pico: the Pico's edge count went back ({next_n} after "
                            f"{self.expected - 1}): it restarted; shaking hands again")
                self._synced.clear()
                self._send_hello()
                return
            if next_n > self.pico_next + MAX_EDGE_JUMP:
                self._error(f"pico: PONG says next edge {next_n}, far past {self.pico_next};"
                            " shaking hands again")
                self._synced.clear()
                self._send_hello()
                return
            self.pico_next = max(self.pico_next, next_n)
            s.pong_next, s.pong_at, s.pong_line = next_n, time.monotonic(), self._lines
            self._window.append(sample)
            if next_n > self.expected and not self._pending and s.gap_since is None:
                self._error(f"pico: edges {self.expected}-{next_n - 1} never arrived;"
                            " asking again")
                self.stats.gaps += 1
                self._request_resend()
                s.gap_since, s.gap_at = time.monotonic(), self.expected

    def _finish_sync(self) -> None:
        s = self._session
        best = min(s.samples, key=lambda x: x.rtt_ns)
        self._window.clear()
        self._window.extend(s.samples)
        self.offset_ns, self.rtt_ns = best.offset_ns, best.rtt_ns
        s.state = "run"
        s.last_ping = time.monotonic()
        if self.lockout_us is not None:
            self._write("LOCKOUT", self.lockout_us)
        self._write("LED", self._lamp_mask)
        # Everything after the last delivered edge, again: covers a disconnect.
        self._request_resend()
        self._synced.set()
        self._deliver()

    def _maybe_adopt_offset(self) -> None:
        """Follow clock drift, but only while no button is moving: a new offset applied
        in the middle of a race could reorder presses microseconds apart."""
        if not self._window or self._pending:
            return
        if time.monotonic() - self._last_edge_mono < self.quiet_s:
            return
        best = min(self._window, key=lambda x: x.rtt_ns)
        self.offset_ns, self.rtt_ns = best.offset_ns, best.rtt_ns

    # --- edges ---------------------------------------------------------------------------

    def _request_resend(self) -> None:
        self._session.last_resend = time.monotonic()
        self.stats.resend_requests += 1
        self._write("RESEND", self.expected)

    def _on_edge(self, n: int, seat: int, level: str, pico_us: int) -> None:
        if self._session.state == "hello":
            return  # which boot is this from? RESEND after the sync brings it again
        self._last_edge_mono = time.monotonic()
        if n < self.expected and self._delivered.get(n, pico_us) != pico_us:
            # An edge number already delivered, with another time: not a repeat but a
            # Pico that restarted (and numbered as many edges since) -> shake hands.
            self._error(f"pico: the edge count went back (edge {n} again, another time): "
                        "the Pico restarted;"
                        " shaking hands again")
            self._delivered.clear()
            self._synced.clear()
            self._send_hello()
            return
        if n < self.expected or n in self._pending:
            self.stats.duplicates += 1
            return
        if n > max(self.pico_next, self.expected) + MAX_EDGE_JUMP or (
            len(self._pending) >= MAX_PENDING
        ):
            self.stats.bad_lines += 1
            self._error(f"pico: edge {n} is far past the edges the Pico has numbered "
                        f"(next {self.pico_next}); skipped")
            return
        self.pico_next = max(self.pico_next, n + 1)
        self._pending[n] = _Pending(seat, level, pico_us, arrived=self._lines)
        if n > self.expected and n - 1 not in self._pending:
            self.stats.gaps += 1
            self._error(f"pico: edge {n} arrived before edge {self.expected}; asking again")
            if self._session.state == "run":
                self._request_resend()
        if self._session.state == "run":
            self._deliver()

    def _on_lost(self, first: int, last: int) -> None:
        if first > last or last >= self.pico_next:
            self.stats.bad_lines += 1
            self._error(f"pico: LOST {first} {last} names edges the Pico has not numbered "
                        f"(next {self.pico_next}); ignored")
            return
        self._error(f"pico: edges {first}-{last} are gone from the Pico's buffer")
        if first <= self.expected <= last:
            self.stats.lost_edges += last - self.expected + 1
            self.expected = last + 1
            self._deliver()

    def _deliver(self) -> None:
        delivered = False
        while self.expected in self._pending:
            edge = self._pending.pop(self.expected)
            self._delivered[self.expected] = edge.pico_us
            if len(self._delivered) > MAX_PENDING:
                self._delivered.pop(next(iter(self._delivered)))
            self.expected += 1
            delivered = True
            self._emit(edge)
        if delivered:
            self._send_quietly("ACK", self.expected - 1)

    def _emit(self, edge: _Pending) -> None:
        if edge.seat < 0:
            return
        offset = edge.offset_ns if edge.offset_ns is not None else self.offset_ns
        assert offset is not None
        ts_ns = edge.pico_us * 1000 + offset
        pressed = edge.level == DOWN
        callback = self.on_press if pressed else self.on_release
        if pressed:
            self.stats.presses += 1
        else:
            self.stats.releases += 1
        if callback is None:
            return
        try:
            callback(edge.seat, ts_ns)
        except Exception as exc:
            self._error(f"pico: {'on_press' if pressed else 'on_release'} callback failed "
                        f"for seat {edge.seat}: {_one_line(exc)}")

    def _flush_old_boot(self) -> None:
        """The Pico restarted: deliver what arrived from the old boot, in order, and
        report the numbers that never came."""
        if not self._pending:
            return
        # Counted, never listed: however far apart the numbers, this costs nothing.
        span = max(self._pending) - self.expected
        held_below = sum(1 for n in self._pending if n < max(self._pending))
        missing = max(0, span - held_below)
        if missing:
            self.stats.lost_edges += missing
            self._error(f"pico: {missing} edges from {self.expected} lost in the Pico restart")
        for n in sorted(self._pending):
            self._emit(self._pending[n])
        self._pending.clear()

    # --- dispatch ------------------------------------------------------------------------

    def _handle_line(self, line: bytes) -> None:
        self._lines += 1
        try:
            msg, problem = parse_resync(line)
        except ProtocolError as exc:
            self.stats.bad_lines += 1
            self._error(f"pico: bad line skipped: {exc}")
            if self._session.state == "run":
                self._request_resend()  # it may have been an edge
            return
        if problem:
            self.stats.bad_lines += 1
            self._error(f"pico: {problem}")
            if self._session.state == "run":
                self._request_resend()
        self._dispatch(msg)

    def _dispatch(self, msg: Message) -> None:
        a = msg.args
        if msg.kind == "EDGE":
            seat, level = int(a[1]), str(a[2])
            if self.seats is not None and not 0 <= seat < self.seats:
                self._error(f"pico: edge {a[0]} for seat {seat}, but the Pico has "
                            f"{self.seats} seats; skipped")
                seat = -1  # keeps its number, so the sequence has no hole; never delivered
            self._on_edge(int(a[0]), seat, level, int(a[3]))
        elif msg.kind == "PONG":
            self._on_pong(int(a[0]), int(a[1]), int(a[2]))
        elif msg.kind == "HI":
            self._on_hi(int(a[0]), int(a[1]), int(a[2]), int(a[3]), str(a[4]))
        elif msg.kind == "LOST":
            self._on_lost(int(a[0]), int(a[1]))
        elif msg.kind == "ERR":
            self._error(f"pico: the Pico could not use a line from the host ({a[0]})")
        # LED / LOCKOUT are confirmations; nothing to do.


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
