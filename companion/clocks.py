"""Clock epochs: which clock a `ts_ns` stamp was read from.

Live stamps are CLOCK_MONOTONIC nanoseconds, which start again at every boot. So each
live stamp is paired with its epoch, the event's `"clock"` field: `"boot:"` and the
first 12 hex digits of the kernel's boot id. The game log records every change of
epoch (a `{"type":"clock"}` note), and the rules engine never compares stamps of two
epochs: a race resumed after a power cut goes on, its presses judged against the
resume, never as false starts. Stamps without a `clock` (a script's own, old logs) are
one epoch of their own; a `clock` note in the middle of a race whose Go! is of another
epoch, unknown ones included (an old log's live stamps carry no `clock`), makes the
engine let go of Go!'s stamp, so nothing after the note is compared with it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")


def boot_clock(path: Path = BOOT_ID_PATH) -> str:
    """This boot's epoch name. Without a boot id (not Linux), one made up per process
    start, which errs the safe way: never compare across restarts."""
    try:
        boot_id = path.read_text(encoding="ascii").strip().replace("-", "")
    except (OSError, UnicodeDecodeError):
        boot_id = ""
    if len(boot_id) >= 12 and all(c in "0123456789abcdef" for c in boot_id.lower()):
        return f"boot:{boot_id[:12].lower()}"
    return f"proc:{os.getpid():x}{time.time_ns() & 0xFFFFFFFF:08x}"


def clock_note(clock: str) -> dict[str, object]:
    """The log line that records an epoch change (a no-op for the rules)."""
    return {"type": "clock", "clock": clock, "wall_ns": time.time_ns()}
