"""Pin factories by name, and a mock pin whose edges carry a chosen timestamp.

gpiozero reports each edge to a pin-level ``when_changed(ticks, state)`` callback.
With the lgpio factory (Pi 5, and any Pi on Raspberry Pi OS Bookworm) `ticks` is the
kernel's CLOCK_MONOTONIC edge timestamp in seconds; RPi.GPIO and native only stamp
when the callback runs; MockFactory stamps with time.monotonic() when the test drives
the pin. `StampedMockPin` adds `drive_low(ts_ns=...)` so tests and scripts can inject
an edge stamped exactly, through gpiozero's real callback path.
"""

from __future__ import annotations

from time import monotonic
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPin

FACTORY_NAMES = ("mock", "lgpio", "rpigpio", "native", "auto")

# Which factories hand the callback the kernel's edge timestamp.
KERNEL_EDGE_STAMPS = {"lgpio": True, "rpigpio": False, "native": False, "mock": False}


class StampedMockPin(MockPin):
    """A MockPin whose next edge can be stamped with a given CLOCK_MONOTONIC time."""

    def __init__(self, factory: Any, info: Any) -> None:
        self._next_stamp: float | None = None
        super().__init__(factory, info)

    def _change_state(self, value: bool) -> bool:
        if self._state != value:
            t = monotonic() if self._next_stamp is None else self._next_stamp
            self._next_stamp = None
            self.states.append(type(self.states[0])(t - self._last_change, value))
            self._state = value
            self._last_change = t
            return True
        self._next_stamp = None
        return False

    def drive_low(self, ts_ns: int | None = None) -> None:  # type: ignore[override]
        self._next_stamp = None if ts_ns is None else ts_ns / 1e9
        super().drive_low()

    def drive_high(self, ts_ns: int | None = None) -> None:  # type: ignore[override]
        self._next_stamp = None if ts_ns is None else ts_ns / 1e9
        super().drive_high()


def ticks_to_ns(ticks: float) -> int:
    """gpiozero ticks (seconds, CLOCK_MONOTONIC for lgpio and the mock) to nanoseconds."""
    return round(ticks * 1e9)


def make_pin_factory(name: str = "mock") -> Any:
    """A gpiozero pin factory by name; Pi-only back ends are imported only when asked for.
    "auto" returns None: gpiozero picks its default (lgpio on Bookworm)."""
    if name == "mock":
        return MockFactory(pin_class=StampedMockPin)
    if name == "auto":
        return None
    if name == "lgpio":
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    if name == "rpigpio":
        from gpiozero.pins.rpigpio import RPiGPIOFactory

        return RPiGPIOFactory()
    if name == "native":
        from gpiozero.pins.native import NativeFactory

        return NativeFactory()
    raise ValueError(f"unknown pin factory {name!r} (expected one of {', '.join(FACTORY_NAMES)})")
