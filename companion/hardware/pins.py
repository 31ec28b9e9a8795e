"""Pin factories by name, and a mock pin whose edges carry a chosen timestamp.

gpiozero reports each edge to a pin-level ``when_changed(ticks, state)`` callback.
With the lgpio factory (Pi 5, and any Pi on Raspberry Pi OS Bookworm) `ticks` is the
kernel's CLOCK_MONOTONIC edge timestamp in seconds; RPi.GPIO and native only stamp
when the callback runs; MockFactory stamps with time.monotonic() when the test drives
the pin. `StampedMockPin` adds `drive_low(ts_ns=...)` so tests and scripts can inject
an edge stamped exactly, through gpiozero's real callback path.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
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


# Factories that may load lgpio: lgpio itself, "auto" (gpiozero's pick on Bookworm) and
# "rpigpio" (Raspberry Pi OS's RPi.GPIO can be the rpi-lgpio shim over lgpio).
LGPIO_FACTORIES = frozenset({"lgpio", "auto", "rpigpio"})


def _writable_dir(path: str | Path | None) -> Path | None:
    if not path:
        return None
    p = Path(path)
    return p if p.is_dir() and os.access(p, os.W_OK | os.X_OK) else None


def prepare_lgpio_workdir(state_dir: str | Path | None = None) -> Path | None:
    """Give lgpio a working directory it can write, before it is imported.

    lgpio's C library creates its notification pipe (``.lgd-nfy<N>``) when the module is
    imported, in ``$LG_WD`` or else the current directory, and chdir()s there. Run from
    a directory the user cannot write (``sudo -u companion companion check`` from
    someone's home), the import fails. So: keep a writable ``$LG_WD``, else use
    ``state_dir`` (the companion's state/log directory) when writable, else a private
    temporary directory (removed at exit); import lgpio there, and go back to the
    directory we were started in. Returns the directory, or None when lgpio was
    already imported (too late to choose) or is not installed.
    """
    if "lgpio" in sys.modules:
        return None
    workdir = _writable_dir(os.environ.get("LG_WD")) or _writable_dir(state_dir)
    if workdir is None:
        workdir = Path(tempfile.mkdtemp(prefix="companion-lgpio-"))
        atexit.register(shutil.rmtree, workdir, True)
    os.environ["LG_WD"] = str(workdir)
    try:
        cwd: str | None = os.getcwd()
    except OSError:  # started in a directory that is gone
        cwd = None
    try:
        import lgpio  # noqa: F401  # creates the pipe in LG_WD and chdir()s there
    except ImportError:
        return None
    except Exception:  # the factory's own import of lgpio reports it, in one line
        pass
    finally:
        if cwd is not None:
            with contextlib.suppress(OSError):
                os.chdir(cwd)
    return workdir


def make_pin_factory(name: str = "mock", *, workdir: str | Path | None = None) -> Any:
    """A gpiozero pin factory by name; Pi-only back ends are imported only when asked for.
    "auto" returns None: gpiozero picks its default (lgpio on Bookworm).

    workdir: where lgpio may put its notification pipe (the state directory); see
    prepare_lgpio_workdir. Only used by factories that can load lgpio."""
    if name == "mock":
        return MockFactory(pin_class=StampedMockPin)
    if name in LGPIO_FACTORIES:
        prepare_lgpio_workdir(workdir)
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
