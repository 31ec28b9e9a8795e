"""The seat buttons: one arcade button per seat, wired from a GPIO pin to ground with
the pin's pull-up on, read through gpiozero at pin level so each press keeps its
edge timestamp (`when_changed(ticks, state)`; gpiozero holds that callback weakly, so
this class keeps strong references).

Debounce is by lockout, not gpiozero's `bounce_time` or the kernel's debounce (both
re-stamp the edge late, so a press that bounces longer could lose a race it won): the
first falling edge of a press is the press, stamped with that edge's time, and the
line is ignored for `lockout_ns` afterwards. A new press also needs the line to have
been quiet (no edges) for `lockout_ns` before it, so a chattering contact never turns
into a stream of presses.

A button held down, or chattering, for `stuck_ns` is reported once through
`on_stuck(seat, why)`; its presses are ignored until it has been released and quiet
for `lockout_ns`, then `on_unstuck(seat)` is called. Presses go to
`on_press(seat, ts_ns)` from whatever thread gpiozero calls back on; the event loop
passes them on with call_soon_threadsafe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from companion.hardware.pins import ticks_to_ns

PressCallback = Callable[[int, int], None]

DEFAULT_PINS = (17, 27, 22, 23)  # BCM numbers, seat 0..3
DEFAULT_LOCKOUT_NS = 50_000_000  # 50 ms
DEFAULT_STUCK_NS = 2_000_000_000  # 2 s


@dataclass
class _Line:
    last_edge: int | None = None  # ts of the last edge of any kind
    last_press: int | None = None
    down_since: int | None = None  # ts of the falling edge while the line is low
    activity_start: int | None = None  # first edge of the current run of activity
    stuck: bool = False


class SeatButtons:
    def __init__(
        self,
        pins: Sequence[int | str],
        on_press: PressCallback,
        pin_factory: Any = None,
        lockout_ns: int = DEFAULT_LOCKOUT_NS,
        stuck_ns: int = DEFAULT_STUCK_NS,
        on_stuck: Callable[[int, str], None] | None = None,
        on_unstuck: Callable[[int], None] | None = None,
    ) -> None:
        from gpiozero import InputDevice

        self.on_press = on_press
        self.on_stuck = on_stuck
        self.on_unstuck = on_unstuck
        self.lockout_ns = lockout_ns
        self.stuck_ns = stuck_ns
        self.devices: list[Any] = []
        # gpiozero holds when_changed callbacks weakly: keep strong references here.
        self._callbacks: list[Callable[[float, int], None]] = []
        self._lines = [_Line() for _ in pins]
        self._lock = threading.Lock()
        self.presses = 0  # presses passed on
        self.bounces = 0  # falling edges ignored (bounce, chatter, stuck)
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
            self.edge(seat, ticks_to_ns(ticks), bool(state))

        return changed

    def edge(self, seat: int, ts: int, high: bool) -> None:
        """One edge on a seat's line (high: released, low: pressed)."""
        reports: list[tuple[str, Any]] = []
        with self._lock:
            line = self._lines[seat]
            quiet_before = line.last_edge is None or ts - line.last_edge >= self.lockout_ns
            if quiet_before:
                line.activity_start = ts
                # Quiet for the lockout while released (a rising edge, or a falling one
                # after the line was left high): the button is free again.
                if line.stuck and (high or line.down_since is None):
                    line.stuck = False
                    reports.append(("unstuck", None))
            line.last_edge = ts
            line.down_since = None if high else (line.down_since or ts)
            active_for = 0 if line.activity_start is None else ts - line.activity_start
            if active_for >= self.stuck_ns and not line.stuck:
                line.stuck = True
                reports.append(("stuck", "chattering"))
            if not high:
                since_press = None if line.last_press is None else ts - line.last_press
                fresh = since_press is None or not 0 <= since_press < self.lockout_ns
                if quiet_before and fresh and not line.stuck:
                    line.last_press = ts
                    self.presses += 1
                    reports.append(("press", ts))
                else:
                    self.bounces += 1
        for report in reports:
            self._report(seat, report)

    def check_stuck(self, now_ns: int) -> list[int]:
        """Call now and then (the loop's ticker does): reports lines held down for
        `stuck_ns`. Returns the seats found stuck by this call."""
        found = []
        with self._lock:
            for seat, line in enumerate(self._lines):
                held = line.down_since is not None and now_ns - line.down_since >= self.stuck_ns
                if held and not line.stuck:
                    line.stuck = True
                    found.append(seat)
        for seat in found:
            self._report(seat, ("stuck", "held down"))
        return found

    def _report(self, seat: int, report: tuple[str, Any]) -> None:
        kind, value = report
        if kind == "press":
            self.on_press(seat, value)
        elif kind == "stuck" and self.on_stuck:
            self.on_stuck(seat, value)
        elif kind == "unstuck" and self.on_unstuck:
            self.on_unstuck(seat)

    def is_stuck(self, seat: int) -> bool:
        return self._lines[seat].stuck

    def pin(self, seat: int) -> Any:
        return self.devices[seat].pin

    def press(self, seat: int, ts_ns: int | None = None, hold_ns: int = 1_000_000) -> None:
        """Simulated pins only: press and release seat's button (edge stamped ts_ns)."""
        pin = self.pin(seat)
        if ts_ns is None:
            pin.drive_low()
            pin.drive_high()
        else:
            pin.drive_low(ts_ns=ts_ns)
            pin.drive_high(ts_ns=ts_ns + hold_ns)

    def close(self) -> None:
        for dev in self.devices:
            dev.close()
        self.devices.clear()
        self._callbacks.clear()
