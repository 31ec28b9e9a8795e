"""Giving the camera process's free memory back to the system once the dice lie still.

A frame read by the learned reader allocates tens of MiB (the detector's activations,
the crops, OpenCV's temporaries) and frees them again; the C library keeps what was
freed for the next allocation (as an ONNX Runtime arena would), so the camera's process
would hold its busiest frame's memory for good. With glibc two calls change that:

- ``one_heap()``: one malloc arena for the whole process (``mallopt(M_ARENA_MAX, 1)``),
  called first thing in the camera's process, before its threads start. glibc gives a
  thread of its own an arena of its own, and ``malloc_trim`` does not return the free
  pages inside those.
- ``give_back()``: ``malloc_trim(0)``, which returns every free page of that arena.

The camera's process (``companion.vision.child``) calls ``give_back`` on the first frame
that shows the dice still after a full detection (``VisionWorker``'s ``when_still``):
while the dice lie still it holds only what it keeps, and the next detection pays the
page faults of the memory it takes again (``docs/benchmarks.md``: serve's memory and the
camera's CPU a frame, both ways).

Elsewhere (musl, macOS) both calls do nothing and say so by returning False.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h

_one_heap: list[bool] = []  # whether one_heap() took, in this process


@functools.cache
def _glibc() -> Any:
    """The C library with glibc's two calls, or None where it has not got them."""
    try:
        libc = ctypes.CDLL(None)  # this process's own symbols: the C library's among them
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


def one_heap() -> bool:
    """Every thread of this process allocates from one arena (True where glibc took it)."""
    libc = _glibc()
    took = bool(libc is not None and libc.mallopt(M_ARENA_MAX, 1))
    _one_heap[:] = [took]
    return took


def gives_back() -> bool:
    """Whether this process has one heap (``one_heap``), so that ``give_back`` returns
    all its free memory: the learned reader's sessions then keep no arena of their own."""
    return bool(_one_heap and _one_heap[0])


def give_back() -> bool:
    """Return the heap's free pages to the system (True where glibc returned some)."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))
