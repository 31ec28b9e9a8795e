"""A stand-in for the `lgpio` module (lg 0.2 API), enough for gpiozero's real
`gpiozero.pins.lgpio` pin factory to run on a machine without GPIO.

It implements exactly what gpiozero's lgpio.py uses for GPIO input and output:
gpiochip_open/close, gpio_get_mode, gpio_claim_input/output/alert, gpio_free,
gpio_read/write, gpio_set_debounce_micros, callback(...).cancel(), the line/edge
constants and the `error` exception. Alerts are delivered the way lgpio does: one
background thread calls each matching callback as func(chip, gpio, level, tick_ns),
where tick_ns is the kernel's edge timestamp in nanoseconds; here the test chooses it.

Put the module in sys.modules["lgpio"] before importing gpiozero.pins.lgpio, and call
reset() between tests. `alert(...)` / `alerts(...)` queue edges; `wait_idle()` waits until
the alert thread has delivered everything queued so far.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

# GPIO levels
LOW = 0
HIGH = 1
TIMEOUT = 2

# line flags (lg 0.2 names; gpiozero patches the 0.1.6 names if these are missing)
SET_ACTIVE_LOW = 4
SET_OPEN_DRAIN = 8
SET_OPEN_SOURCE = 16
SET_PULL_UP = 32
SET_PULL_DOWN = 64
SET_PULL_NONE = 128
SET_BIAS_PULL_UP = SET_PULL_UP
SET_BIAS_PULL_DOWN = SET_PULL_DOWN
SET_BIAS_DISABLE = SET_PULL_NONE

# edge flags
RISING_EDGE = 1
FALLING_EDGE = 2
BOTH_EDGES = 3

# gpio_get_mode bits (as gpiozero's LGPIOPin reads them)
_KERNEL = 1 << 0
_KERNEL_OUT = 1 << 1
_LG_INPUT = 1 << 8
_LG_OUTPUT = 1 << 9
_LG_ALERT = 1 << 10
_LINE_FLAGS = SET_ACTIVE_LOW | SET_OPEN_DRAIN | SET_OPEN_SOURCE | SET_PULL_UP | SET_PULL_DOWN
_LINE_FLAGS |= SET_PULL_NONE

# error codes used here
OKAY = 0
BAD_HANDLE = -5
BAD_EVENT_REQUEST = -72
BAD_GPIO_NUMBER = -73
CANNOT_OPEN_CHIP = -78
GPIO_NOT_ALLOCATED = -80
BAD_DEBOUNCE_MICS = -98

_ERRORS = {
    BAD_HANDLE: "unknown handle",
    BAD_EVENT_REQUEST: "bad event request",
    BAD_GPIO_NUMBER: "bad GPIO number",
    CANNOT_OPEN_CHIP: "can not open gpiochip",
    GPIO_NOT_ALLOCATED: "GPIO not allocated",
    BAD_DEBOUNCE_MICS: "bad debounce microseconds",
}

exceptions = True
LINES = 54  # lines on the stand-in's chip 0 (the Pi 4's gpiochip0 has 58, the Pi 5's 54)


class error(Exception):  # noqa: N801 - lgpio's name
    """lgpio raises this for a negative status when `exceptions` is on."""


def error_text(errnum: int) -> str:
    return _ERRORS.get(errnum, "unknown error")


def _status(code: int) -> int:
    if code < 0 and exceptions:
        raise error(error_text(code))
    return code


@dataclass
class _Line:
    mode: int = 0
    level: int = 1
    edges: int = 0  # alert edges claimed, 0 when not an alert line
    debounce_us: int = 0


@dataclass
class _Chip:
    number: int
    lines: dict[int, _Line] = field(default_factory=dict)


class _Callback:
    def __init__(self, chip: int, gpio: int, edge: int, func: Callable[..., None]) -> None:
        self.chip, self.gpio, self.edge, self.func = chip, gpio, edge, func
        self.cancelled = False

    def cancel(self) -> None:
        with _lock:
            self.cancelled = True
            if self in _callbacks:
                _callbacks.remove(self)


_lock = threading.RLock()
_handles: dict[int, _Chip] = {}
_callbacks: list[_Callback] = []
_queue: queue.Queue = queue.Queue()
_thread: threading.Thread | None = None
calls: list[tuple] = []  # every call into the module: (name, args...)
debounce_set: dict[int, int] = {}  # gpio -> micros, for every gpio_set_debounce_micros call
chips_available = (0,)


def reset() -> None:
    """Forget every handle, claim and callback (between tests)."""
    global exceptions
    wait_idle()
    with _lock:
        _handles.clear()
        _callbacks.clear()
        calls.clear()
        debounce_set.clear()
        exceptions = True


def _chip(handle: int) -> _Chip:
    chip = _handles.get(handle)
    if chip is None:
        raise error(error_text(BAD_HANDLE))
    return chip


def _line(handle: int, gpio: int, create: bool = False) -> _Line:
    chip = _chip(handle)
    if not 0 <= gpio < LINES:
        raise error(error_text(BAD_GPIO_NUMBER))
    line = chip.lines.get(gpio)
    if line is None:
        if not create:
            raise error(error_text(GPIO_NOT_ALLOCATED))
        line = chip.lines[gpio] = _Line()
    return line


def _bias_level(flags: int, level: int) -> int:
    if flags & SET_PULL_UP:
        return 1
    if flags & SET_PULL_DOWN:
        return 0
    return level


# ---- the lgpio API gpiozero uses


def gpiochip_open(gpiochip: int) -> int:
    with _lock:
        calls.append(("gpiochip_open", gpiochip))
        if gpiochip not in chips_available:
            return _status(CANNOT_OPEN_CHIP)
        handle = max(_handles, default=99) + 1
        _handles[handle] = _Chip(gpiochip)
        return handle


def gpiochip_close(handle: int) -> int:
    with _lock:
        calls.append(("gpiochip_close", handle))
        _chip(handle)
        del _handles[handle]
        for cb in [c for c in _callbacks if c.chip == handle]:
            cb.cancel()
        return OKAY


def gpio_get_mode(handle: int, gpio: int) -> int:
    with _lock:
        line = _line(handle, gpio, create=True)
        return line.mode


def gpio_claim_input(handle: int, gpio: int, lFlags: int = 0) -> int:  # noqa: N803
    with _lock:
        calls.append(("gpio_claim_input", handle, gpio, lFlags))
        line = _line(handle, gpio, create=True)
        line.mode = _KERNEL | _LG_INPUT | (lFlags & _LINE_FLAGS)
        line.edges = 0
        line.level = _bias_level(lFlags, line.level)
        return OKAY


def gpio_claim_output(handle: int, gpio: int, level: int = 0, lFlags: int = 0) -> int:  # noqa: N803
    with _lock:
        calls.append(("gpio_claim_output", handle, gpio, level, lFlags))
        line = _line(handle, gpio, create=True)
        line.mode = _KERNEL | _KERNEL_OUT | _LG_OUTPUT | (lFlags & _LINE_FLAGS)
        line.edges = 0
        line.level = int(bool(level))
        return OKAY


def gpio_claim_alert(
    handle: int,
    gpio: int,
    eFlags: int,  # noqa: N803
    lFlags: int = 0,  # noqa: N803
    notify_handle: int | None = None,
) -> int:
    with _lock:
        calls.append(("gpio_claim_alert", handle, gpio, eFlags, lFlags))
        if eFlags not in (RISING_EDGE, FALLING_EDGE, BOTH_EDGES):
            return _status(BAD_EVENT_REQUEST)
        line = _line(handle, gpio, create=True)
        line.mode = _KERNEL | _LG_INPUT | _LG_ALERT | (lFlags & _LINE_FLAGS)
        line.edges = eFlags
        line.level = _bias_level(lFlags, line.level)
        return OKAY


def gpio_free(handle: int, gpio: int) -> int:
    with _lock:
        calls.append(("gpio_free", handle, gpio))
        chip = _chip(handle)
        line = chip.lines.get(gpio)
        if line is None:
            return _status(GPIO_NOT_ALLOCATED)
        line.mode, line.edges = 0, 0
        return OKAY


def gpio_read(handle: int, gpio: int) -> int:
    with _lock:
        return _line(handle, gpio, create=True).level


def gpio_write(handle: int, gpio: int, level: int) -> int:
    with _lock:
        calls.append(("gpio_write", handle, gpio, level))
        _line(handle, gpio).level = int(bool(level))
        return OKAY


def gpio_set_debounce_micros(handle: int, gpio: int, debounce_micros: int) -> int:
    with _lock:
        calls.append(("gpio_set_debounce_micros", handle, gpio, debounce_micros))
        if debounce_micros < 0:
            return _status(BAD_DEBOUNCE_MICS)
        _line(handle, gpio, create=True).debounce_us = debounce_micros
        debounce_set[gpio] = debounce_micros
        return OKAY


def callback(handle: int, gpio: int, edge: int = RISING_EDGE, func=None) -> _Callback:
    if func is None:
        raise NotImplementedError("the stand-in supports callbacks with a function only")
    with _lock:
        calls.append(("callback", handle, gpio, edge))
        _chip(handle)
        cb = _Callback(handle, gpio, edge, func)
        _callbacks.append(cb)
        _start_thread()
        return cb


# ---- driving it from a test


def _start_thread() -> None:
    global _thread
    if _thread is None or not _thread.is_alive():
        _thread = threading.Thread(target=_alert_thread, name="lgpio-standin-alerts", daemon=True)
        _thread.start()


def _wants(cb: _Callback, level: int) -> bool:
    if level == TIMEOUT:
        return True
    return bool(cb.edge & (RISING_EDGE if level else FALLING_EDGE))


def _alert_thread() -> None:
    while True:
        item = _queue.get()
        try:
            if item is None:
                continue
            handle, gpio, level, tick_ns = item
            with _lock:
                chip = _handles.get(handle)
                line = chip.lines.get(gpio) if chip else None
                if line is None or not line.edges:
                    continue  # not an alert line: the kernel reports nothing
                if level != TIMEOUT:
                    line.level = level
                targets = [
                    c
                    for c in _callbacks
                    if c.chip == handle and c.gpio == gpio and _wants(c, level)
                ]
                chip_number = chip.number
            for cb in targets:
                if not cb.cancelled:
                    cb.func(chip_number, gpio, level, tick_ns)
        finally:
            _queue.task_done()


def alert(handle: int, gpio: int, level: int, tick_ns: int) -> None:
    """Queue one edge on `gpio`, stamped `tick_ns` (the kernel's nanosecond stamp)."""
    _start_thread()
    _queue.put((handle, gpio, level, tick_ns))


def alerts(handle: int, edges) -> None:
    """Queue (gpio, level, tick_ns) edges, delivered in this order by one thread."""
    for gpio, level, tick_ns in edges:
        alert(handle, gpio, level, tick_ns)


def wait_idle() -> None:
    _queue.join()


def alert_lines(handle: int) -> dict[int, int]:
    """gpio -> claimed alert edges, for lines claimed for alerts."""
    with _lock:
        return {g: ln.edges for g, ln in _chip(handle).lines.items() if ln.edges}


def active_callbacks() -> list[tuple[int, int]]:
    with _lock:
        return [(c.gpio, c.edge) for c in _callbacks]
