# vault-companion: Raspberry Pi Pico (RP2040) co-processor firmware, MicroPython.
#
# Stamps each seat's arcade button with the Pico's own microsecond timer in a hard
# IRQ, debounces by lockout (the first edge of a press is the press and keeps its own
# stamp; the line is ignored for LOCKOUT_US afterwards), keeps numbered edges in a ring
# so the host can ask for them again, drives the button lamps, and talks to the host
# over USB serial (the REPL's stdin/stdout) in the line protocol of PROTOCOL.md.
#
# Install: copy this file to the Pico as main.py (e.g. `mpremote cp main.py :main.py`),
# then reset it. Edit BUTTON_PINS / LAMP_PINS below to match the wiring (GP numbers).
#
# Tested on the host by tests/hardware/test_pico_firmware.py, which runs the Firmware
# class below on CPython with stand-in machine/micropython modules.

import select
import sys
import time

import micropython
from machine import Pin

try:
    from array import array
except ImportError:  # pragma: no cover
    from uarray import array

PROTOCOL = 1
FIRMWARE = "vault-pico-1.0"
BUTTON_PINS = (2, 3, 4, 5)  # GP numbers, seat 0 first; each button to GND (pull-up)
LAMP_PINS = (6, 7, 8, 9)  # GP numbers, through a transistor each; high = lit
LOCKOUT_US = 50000  # default; the host sets its own with LOCKOUT
RING = 64  # numbered edges kept for RESEND
RAW = 32  # IRQ queue (a power of two)
MAX_LINE = 96
DOWN = "D"
UP = "U"

micropython.alloc_emergency_exception_buf(100)


def crc8(data):
    """CRC-8, polynomial 0x07, initial 0: crc8(b"123456789") == 0xF4."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            if crc & 0x80:
                crc = ((crc << 1) ^ 0x07) & 0xFF
            else:
                crc = (crc << 1) & 0xFF
    return crc


def frame(text):
    return "%s*%02X\n" % (text, crc8(text.encode()))


def unframe(line):
    """The fields of a checked line, or None (bad checksum / framing)."""
    line = line.strip()
    star = line.rfind("*")
    if star < 0 or len(line) - star != 3:
        return None
    body = line[:star]
    try:
        if int(line[star + 1 :], 16) != crc8(body.encode()):
            return None
    except ValueError:
        return None
    return body.split(" ")


class Clock64:
    """time.ticks_us() wraps every 2**30 us (about 18 minutes); this extends it to a
    count of microseconds since boot that does not wrap. ``now`` must run at least
    every few minutes (the main loop runs it every millisecond)."""

    def __init__(self):
        self.base_raw = time.ticks_us()
        self.base = 0

    def now(self):
        raw = time.ticks_us()
        self.base += time.ticks_diff(raw, self.base_raw)
        self.base_raw = raw
        return self.base

    def extend(self, raw):
        """A raw ticks_us() reading from the recent past (or future) as us since boot."""
        return self.base + time.ticks_diff(raw, self.base_raw)


# The IRQ queue: filled by the hard IRQ handlers (no allocation there), drained by the
# main loop. raw_idx[0] = head (IRQ), raw_idx[1] = tail (main loop).
raw_t = array("i", [0] * RAW)
raw_seat = bytearray(RAW)
raw_idx = array("i", [0, 0, 0])  # head, tail, overflow count


def make_handler(seat):
    def handler(pin):
        t = time.ticks_us()
        h = raw_idx[0]
        if h - raw_idx[1] >= RAW:
            raw_idx[2] += 1
            return
        i = h & (RAW - 1)
        raw_t[i] = t
        raw_seat[i] = seat
        raw_idx[0] = h + 1

    return handler


class Firmware:
    """Debounce, edge ring and protocol. ``levels`` reads the buttons (0 = pressed),
    ``lamps`` sets lamp outputs, ``out`` writes a line to the host."""

    def __init__(self, clock, seats, levels, lamps, out, boot_id):
        self.clock = clock
        self.seats = seats
        self.levels = levels  # function(seat) -> 0 pressed / 1 released
        self.lamps = lamps  # function(seat, on)
        self.out = out
        self.boot_id = boot_id
        self.lockout_us = LOCKOUT_US
        self.next_n = 1
        self.ring_seat = bytearray(RING)
        self.ring_level = [UP] * RING
        self.ring_us = [0] * RING
        # A button held down at boot is reported by its release, not as a press.
        self.reported = [DOWN if levels(s) == 0 else UP for s in range(seats)]
        self.lock_until = [0] * seats
        self.last_edge = [0] * seats
        self.last_report = [0] * seats
        self.led_mask = 0

    def send(self, text):
        self.out(frame(text))

    # --- edges ---------------------------------------------------------------------

    def raw_edge(self, seat, us):
        """One IRQ edge on ``seat`` at ``us`` (us since boot)."""
        self.last_edge[seat] = us
        if us < self.lock_until[seat]:
            return  # bounce inside the lockout: the edge that started it counts
        # Whatever this edge's direction, it moves the line away from the reported
        # level: the first edge of a press or of a release is the event.
        level = DOWN if self.reported[seat] == UP else UP
        self.report(seat, level, us)

    def reconcile(self, now):
        """After a lockout, a line resting at the other level than reported (a tap
        shorter than the lockout) gets its change reported, stamped with its last edge."""
        for seat in range(self.seats):
            if now < self.lock_until[seat]:
                continue
            level = DOWN if self.levels(seat) == 0 else UP
            if level != self.reported[seat]:
                self.report(seat, level, max(self.last_edge[seat], self.last_report[seat]))

    def report(self, seat, level, us):
        n = self.next_n
        self.next_n = n + 1
        i = n % RING
        self.ring_seat[i] = seat
        self.ring_level[i] = level
        self.ring_us[i] = us
        self.reported[seat] = level
        self.last_report[seat] = us
        self.lock_until[seat] = us + self.lockout_us
        self.send("EDGE %d %d %s %d" % (n, seat, level, us))

    def resend(self, first):
        oldest = max(1, self.next_n - RING)
        if first < oldest:
            self.send("LOST %d %d" % (first, oldest - 1))
            first = oldest
        for n in range(first, self.next_n):
            i = n % RING
            self.send("EDGE %d %d %s %d" % (n, self.ring_seat[i], self.ring_level[i],
                                           self.ring_us[i]))

    # --- host lines ------------------------------------------------------------------

    def handle_line(self, line):
        fields = unframe(line)
        if fields is None:
            self.send("ERR crc")
            return
        kind = fields[0]
        try:
            arg = int(fields[1]) if len(fields) == 2 else None
        except ValueError:
            arg = None
        if arg is None or arg < 0:
            self.send("ERR bad")
        elif kind == "HELLO":
            if arg != PROTOCOL:
                self.send("ERR version")
            else:
                self.send("HI %d %d %d %d %s" % (PROTOCOL, self.boot_id, self.seats,
                                                 self.next_n, FIRMWARE))
        elif kind == "PING":
            self.send("PONG %d %d %d" % (arg, self.clock.now(), self.next_n))
        elif kind == "ACK":
            pass  # the ring overwrites the oldest anyway; ACK is for the host's books
        elif kind == "RESEND":
            self.resend(arg)
        elif kind == "LED":
            self.led_mask = arg & ((1 << self.seats) - 1)
            for seat in range(self.seats):
                self.lamps(seat, (self.led_mask >> seat) & 1)
            self.send("LED %d" % self.led_mask)
        elif kind == "LOCKOUT":
            self.lockout_us = arg
            self.send("LOCKOUT %d" % arg)
        else:
            self.send("ERR unknown")

    def drain(self):
        """Move IRQ edges into the debouncer, oldest first."""
        while raw_idx[1] != raw_idx[0]:
            i = raw_idx[1] & (RAW - 1)
            self.raw_edge(raw_seat[i], self.clock.extend(raw_t[i]))
            raw_idx[1] += 1


def main():
    import random

    clock = Clock64()
    buttons = [Pin(p, Pin.IN, Pin.PULL_UP) for p in BUTTON_PINS]
    lamp_pins = [Pin(p, Pin.OUT, value=0) for p in LAMP_PINS]

    def lamps(seat, on):
        if seat < len(lamp_pins):
            lamp_pins[seat].value(1 if on else 0)

    def out(text):
        sys.stdout.write(text)

    fw = Firmware(clock, len(buttons), lambda s: buttons[s].value(), lamps, out,
                  random.getrandbits(30) | 1)
    handlers = []  # keep the closures alive
    for seat, pin in enumerate(buttons):
        h = make_handler(seat)
        handlers.append(h)
        pin.irq(handler=h, trigger=Pin.IRQ_FALLING | Pin.IRQ_RISING, hard=True)

    poll = select.poll()
    poll.register(sys.stdin, select.POLLIN)
    line = []
    while True:
        now = clock.now()
        fw.drain()
        fw.reconcile(now)
        if poll.poll(1):
            ch = sys.stdin.read(1)
            if ch == "\n":
                if line:
                    fw.handle_line("".join(line))
                line = []
            elif ch != "\r":
                line.append(ch)
                if len(line) > MAX_LINE:
                    line = []
                    fw.send("ERR long")


if __name__ == "__main__":
    main()
