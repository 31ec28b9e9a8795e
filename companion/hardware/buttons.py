"""The seat buttons: one arcade button per seat, wired from a GPIO pin to ground with
the pin's pull-up on, read through gpiozero at pin level so each press keeps its
edge timestamp.

Debounce is by lockout, not gpiozero's bounce_time (which would re-stamp the edge
late): the first falling edge of a press is the press; edges on that line are ignored
for `lockout_ns` afterwards. Presses are handed to `on_press(seat, ts_ns)` from
whatever thread gpiozero calls back on; the event loop passes them on with
call_soon_threadsafe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from companion.hardware.pins import ticks_to_ns

PressCallback = Callable[[int, int], None]

DEFAULT_PINS = (17, 27, 22, 23)  # BCM numbers, seat 0..3
DEFAULT_LOCKOUT_NS = 50_000_000


class SeatButtons:
    def __init__(
        self,
        pins: Sequence[int | str],
        on_press: PressCallback,
        pin_factory: Any = None,
        lockout_ns: int = DEFAULT_LOCKOUT_NS,
    ) -> None:
        from gpiozero import InputDevice

        self.on_press = on_press
        self.lockout_ns = lockout_ns
        self.devices: list[Any] = []
        # gpiozero holds when_changed callbacks weakly: keep strong references here.
        self._callbacks: list[Callable[[float, int], None]] = []
        self._last_press_ns: list[int | None] = [None] * len(pins)
        self.presses = 0  # presses passed on
        self.bounces = 0  # edges ignored inside a lockout
        try:
            for seat, pin in enumerate(pins):
                dev = InputDevice(pin, pull_up=True, pin_factory=pin_factory)
                cb = self._make_callback(seat)
                self._callbacks.append(cb)
                dev.pin.edges = "both"
                dev.pin.when_changed = cb
                self.devices.append(dev)
        except Exception:
            self.close()
            raise

    def _make_callback(self, seat: int) -> Callable[[float, int], None]:
        def changed(ticks: float, state: int) -> None:
            if state:  # rising edge: the button was let go
                return
            ts = ticks_to_ns(ticks)
            last = self._last_press_ns[seat]
            if last is not None and 0 <= ts - last < self.lockout_ns:
                self.bounces += 1
                return
            self._last_press_ns[seat] = ts
            self.presses += 1
            self.on_press(seat, ts)

        return changed

    def pin(self, seat: int) -> Any:
        return self.devices[seat].pin

    def press(self, seat: int, ts_ns: int | None = None) -> None:
        """Simulated pins only: press and release seat's button (edge stamped ts_ns)."""
        pin = self.pin(seat)
        if ts_ns is None:
            pin.drive_low()
            pin.drive_high()
        else:
            pin.drive_low(ts_ns=ts_ns)
            pin.drive_high(ts_ns=ts_ns + 1_000_000)

    def close(self) -> None:
        for dev in self.devices:
            dev.close()
        self.devices.clear()
        self._callbacks.clear()
