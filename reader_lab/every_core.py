"""Work drawn on every core at the start of a training call (clutter scenes, glyph dice)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any


def map_on_every_core(fn: Callable[[Any], Any], jobs: Sequence[Any], *, least: int = 8,
                      workers: int | None = None) -> list[Any]:
    """``[fn(job) for job in jobs]``, in order, on a pool of spawned processes (one a core,
    or ``workers``) when there are more than ``least`` jobs and more than one worker; in
    this process otherwise. ``fn`` must be a module-level function (it is pickled)."""
    workers = workers or os.cpu_count() or 1
    if workers > 1 and len(jobs) > least:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(workers) as pool:
            return pool.map(fn, jobs, chunksize=max(1, len(jobs) // (workers * 4)))
    return [fn(job) for job in jobs]
