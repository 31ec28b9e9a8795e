"""The camera's process, as ``VisionProcess`` starts it:
``python -P -c BOOTSTRAP RESULTS_FD ORDERS_FD``.

A plain program (``subprocess``), not a multiprocessing child: a spawned multiprocessing
child brings multiprocessing's resource tracker with it, a third Python process of
8 MiB (``benchmarks/serve_memory.py``) that the camera never needs. What crosses, pickled
as ``multiprocessing.connection`` pickles:

- on the orders pipe (the parent writes): the parent's ``sys.path`` first, taken before
  this package is imported (``BOOTSTRAP``; ``-P``: no working folder put before it), so
  that the child runs the parent's ``companion`` and what the arguments name (a frame
  source's class) imports here as there; then ``run``'s arguments; then "stop", or
  nothing more until the parent closes its end.
- on the results pipe (the child writes): the worker's callbacks by name, "stats",
  "status" and "info".

This module imports no asyncio (the referee's loop lives in the parent) and loads the
camera's libraries only in ``run``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from multiprocessing.connection import Connection
from typing import Any

from companion.vision.readers import DEFAULT_PIP_READER, load_pip_reader

log = logging.getLogger(__name__)

STATS = ("frames", "detections", "reused", "skipped", "frames_dropped", "frame_errors", "cpu_s")

# The child's first lines (``python -P -c BOOTSTRAP RESULTS_FD ORDERS_FD``): the parent's
# import path, then this module's ``main``; a parent gone before it said is exit code 1.
BOOTSTRAP = """\
import sys
from multiprocessing.connection import Connection
orders = Connection(int(sys.argv[2]), writable=False)
try:
    sys.path[:] = orders.recv()
except (EOFError, OSError):
    sys.exit(1)
from companion.vision.child import main
sys.exit(main(sys.argv[1:2], orders))
"""


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class _PipeLoop:
    """Stands in for the asyncio loop inside the child: each callback the worker would
    schedule is sent to the parent by name."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def send(self, message: tuple) -> None:
        with self.lock:
            self.conn.send(message)

    def call_soon_threadsafe(self, callback: Any, *args: Any) -> None:
        try:
            self.send((callback, args))
        except (OSError, EOFError, BrokenPipeError):
            raise RuntimeError("the referee is gone") from None  # the worker stops


def run(
    conn: Any,
    stop: Any,
    source: Any,
    profile_dir: str,
    pips: bool,
    fps: float | None,
    threads: int,
    nice: int,
    gate: bool,
    every_frame: bool,
    stats_every_s: float,
    reader: str = DEFAULT_PIP_READER,
) -> None:
    # A terminal's Ctrl-C reaches every process of its group: the referee decides when
    # the camera stops (its "stop", or its end of the pipes closing), with no traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)  # before numpy loads in this process
    if nice > 0:
        with contextlib.suppress(OSError):
            os.nice(nice)
    parent = os.getppid()
    from companion.vision.frames import open_source
    from companion.vision.pipeline import Pipeline
    from companion.vision.worker import ChangeGate, VisionWorker

    pipe = _PipeLoop(conn)
    try:
        profile = None
        if profile_dir:
            from companion.vision.profile import load_profile

            profile = load_profile(profile_dir)
        pip_reader = load_pip_reader(reader, threads) if pips else None
    except Exception as exc:  # said to the table as the camera gone, in one line
        from companion.vision.faults import CameraGone

        line = _first_line(exc)
        log.error("camera gone: %s", line)  # the journal's line, as the worker writes it
        with contextlib.suppress(OSError, EOFError, BrokenPipeError):
            pipe.send(("gone", (CameraGone(line),)))
        conn.close()
        return
    if not (hasattr(source, "read") and hasattr(source, "open")):
        source = open_source(source)
    worker = VisionWorker(
        source,
        pipe,  # type: ignore[arg-type]
        "reading",  # type: ignore[arg-type]  # callbacks by name, sent to the parent
        on_camera_gone="gone",  # type: ignore[arg-type]
        on_frame_error="frame_error",  # type: ignore[arg-type]
        on_end="end",  # type: ignore[arg-type]
        pipeline=Pipeline(profile=profile, pips=pips, pip_reader=pip_reader),
        every_frame=every_frame,
        max_fps=fps,
        threads=threads,
        gate=ChangeGate() if gate else None,
    )

    def watch() -> None:
        """Stats now and then; stop when asked, or when the parent is gone (its end of
        the stop pipe closes: a message or EOF both make poll() true)."""
        while True:
            try:
                if stop.poll(stats_every_s) or os.getppid() != parent:
                    break
            except (OSError, EOFError):
                break
            with contextlib.suppress(OSError, EOFError, BrokenPipeError):
                pipe.send(("stats", tuple(getattr(worker, k) for k in STATS)))
        worker._stop.set()

    threading.Thread(target=watch, daemon=True, name="vision-watch").start()
    worker._hold_back()  # OpenCV's pool, now, so the report below says what holds
    import cv2

    with contextlib.suppress(OSError, EOFError, BrokenPipeError):
        pipe.send(
            (
                "info",
                (
                    {
                        "pid": os.getpid(),
                        "nice": os.getpriority(os.PRIO_PROCESS, 0),
                        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
                        "opencv_threads": cv2.getNumThreads(),
                    },
                ),
            )
        )
    worker._run()
    with contextlib.suppress(OSError, EOFError, BrokenPipeError):
        pipe.send(("stats", tuple(getattr(worker, k) for k in STATS)))
        pipe.send(("status", (worker.status,)))
    conn.close()


def main(fds: list[str], orders: Connection) -> int:
    """After ``BOOTSTRAP``: the results pipe's descriptor (``fds[0]``), then what the
    orders pipe says next."""
    results = Connection(int(fds[0]), readable=False)
    try:
        args = orders.recv()
    except (EOFError, OSError):  # the parent went before saying what to read
        results.close()
        orders.close()
        return 1
    run(results, orders, *args)
    return 0
