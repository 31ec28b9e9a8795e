"""Giving the camera process's free heap back (companion.vision.heap): each test runs in
a fresh interpreter, as the camera's process is one, so that one_heap() comes before any
thread starts and the test process's own heap is left alone."""

from __future__ import annotations

import pytest
from fresh_process import in_fresh_process

FRAGMENTED = """
import sys
from pathlib import Path
from companion.vision.heap import give_back, gives_back, one_heap

def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

assert not gives_back()
took = one_heap()
assert gives_back() is took
if not took:
    print("no glibc")
    sys.exit(0)
# 64 MiB in blocks under the heap's mmap threshold, freed but for the last one, which
# pins the top of the heap: freed, they stay in the process until given back
blocks = [bytearray(32 * 1024) for _ in range(2048)]
last = blocks[-1]
del blocks
held = rss_mib()
returned = give_back()
print(f"{held:.1f} {rss_mib():.1f} {returned}")
"""


def test_freed_memory_goes_back_to_the_system():
    said = in_fresh_process(FRAGMENTED)
    if said == "no glibc":
        pytest.skip("no glibc malloc here: the calls do nothing and say so")
    held, after, returned = said.split()
    assert returned == "True"
    assert float(held) - float(after) > 40  # of the 64 MiB freed


def test_a_process_without_one_heap_keeps_arenas_for_the_learned_reader():
    from companion.vision.heap import gives_back

    assert gives_back() is False  # the test process never asked for one heap


def test_without_glibc_the_calls_do_nothing_and_say_so(monkeypatch):
    """musl, macOS: no mallopt or malloc_trim; each call returns False, and the learned
    reader's sessions keep their shared arena."""
    from companion.vision import heap

    monkeypatch.setattr(heap, "_glibc", lambda: None)
    monkeypatch.setattr(heap, "_one_heap", [])
    assert heap.one_heap() is False
    assert heap.gives_back() is False
    assert heap.give_back() is False
