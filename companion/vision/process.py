"""The camera in a process of its own, beside the referee.

A camera thread in the referee's process shares its interpreter lock: while the thread
runs Python (the dice readers do, between OpenCV calls) the loop waits for the lock,
and a camera thread given a lower priority makes it worse, since a descheduled thread
still holds the lock (on a busy machine, tens to hundreds of milliseconds). So
``VisionProcess`` runs the same ``VisionWorker`` (source, pipeline, change gate, settle
tracker) in a child process (spawned, not forked: the parent has threads) whose CPU
priority is lowered with ``os.nice`` and whose BLAS/OpenCV are held to ``threads``.
What the worker would hand the loop comes back over a pipe the loop watches with
``add_reader``: no thread in the referee's process at all, and only small settled
readings cross.

Interface as ``VisionWorker``: ``start()``, ``stop()``, ``await aclose()``, ``status``,
``frames``, ``detections``, ``reused``, ``skipped``, ``frames_dropped``, ``cpu_ms`` (the
child reports these every ``stats_every_s``). A child that dies is "camera gone"; so is
one that cannot load its profile or its pip reader (``reader``, a name in
companion.vision.readers: "learned" needs the committed model), said in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any

from companion.vision.readers import DEFAULT_PIP_READER, load_pip_reader

log = logging.getLogger(__name__)

STATS = ("frames", "detections", "reused", "skipped", "frames_dropped", "frame_errors", "cpu_s")


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


def _child(
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


class VisionProcess:
    """A VisionWorker in a child process; callbacks run on the loop's thread."""

    def __init__(
        self,
        source: Any,
        loop: asyncio.AbstractEventLoop,
        on_reading: Callable[[Any], Any],
        *,
        on_camera_gone: Callable[[Exception], Any] | None = None,
        on_frame_error: Callable[[str], Any] | None = None,
        on_end: Callable[[], Any] | None = None,
        profile_dir: str = "",
        pips: bool = True,
        every_frame: bool = False,
        max_fps: float | None = None,
        threads: int = 1,
        nice: int = 10,
        gate: bool = True,
        stats_every_s: float = 1.0,
        reader: str = DEFAULT_PIP_READER,
    ) -> None:
        self.source = source
        self.loop = loop
        self.callbacks: dict[str, Callable[..., Any] | None] = {
            "reading": on_reading,
            "gone": on_camera_gone,
            "frame_error": on_frame_error,
            "end": on_end,
        }
        self.args = (profile_dir, pips, max_fps, threads, nice, gate, every_frame, stats_every_s,
                     reader)
        self.status = "idle"
        self.frames = self.detections = self.reused = self.skipped = 0
        self.frames_dropped = self.frame_errors = 0
        self.cpu_s = 0.0
        # What the child says it holds to: pid, nice, BLAS and OpenCV threads.
        self.child_info: dict[str, Any] = {}
        self._proc: Any = None
        self._conn: Any = None
        self._stop: Any = None
        self._stopping = False
        self._ended = False

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu_s / self.frames if self.frames else 0.0

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    def start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child_conn = ctx.Pipe(duplex=False)
        # Stop goes by pipe, not a multiprocessing.Event: a child killed inside the
        # Event's wait leaves its lock held, and set() would then hang the loop.
        stop_read, self._stop = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(
            target=_child,
            args=(child_conn, stop_read, self.source, *self.args),
            name="vision",
            daemon=True,
        )
        self._proc.start()
        child_conn.close()
        stop_read.close()
        self.status = "running"
        self.loop.add_reader(self._conn.fileno(), self._readable)

    def _readable(self) -> None:
        try:
            while self._conn.poll():
                kind, args = self._conn.recv()
                self._dispatch(kind, args)
        except (EOFError, OSError):
            self._closed_pipe()

    def _dispatch(self, kind: str, args: tuple) -> None:
        if kind == "stats":
            for key, value in zip(STATS, args, strict=True):
                setattr(self, key, value)
            return
        if kind == "status":
            self.status = args[0]
            return
        if kind == "info":
            self.child_info = args[0]
            return
        if kind == "gone":
            self.status = "camera gone"
            self._ended = True
        elif kind == "end":
            self.status = "ended"
            self._ended = True
        callback = self.callbacks.get(kind)
        if callback is not None:
            callback(*args)

    def _closed_pipe(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.remove_reader(self._conn.fileno())
        if not self._stopping and not self._ended:
            from companion.vision.faults import CameraGone

            code = self._proc.exitcode if self._proc is not None else None
            self.status = "camera gone"
            self._ended = True
            gone = self.callbacks.get("gone")
            if gone is not None:
                gone(CameraGone(f"the camera process ended unexpectedly (exit code {code})"))
        elif self.status == "running":
            self.status = "stopped"

    def _ask_to_stop(self) -> None:
        self._stopping = True
        if self._stop is not None:
            with contextlib.suppress(OSError, EOFError, BrokenPipeError):
                self._stop.send("stop")
            self._stop.close()
            self._stop = None

    def stop(self, timeout: float = 5.0) -> None:
        self._ask_to_stop()
        if self._proc is not None:
            self._proc.join(timeout)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join(1)
        self._drain()

    async def aclose(self, timeout: float = 5.0) -> None:
        self._ask_to_stop()
        if self._proc is not None:
            await asyncio.to_thread(self._proc.join, timeout)
            if self._proc.is_alive():
                self._proc.terminate()
                await asyncio.to_thread(self._proc.join, 1)
        self._drain()

    def _drain(self) -> None:
        """The last stats and status, then the pipe closed."""
        if self._conn is None:
            return
        with contextlib.suppress(Exception):
            self.loop.remove_reader(self._conn.fileno())
        try:
            while self._conn.poll():
                kind, args = self._conn.recv()
                if kind in ("stats", "status"):
                    self._dispatch(kind, args)
        except (EOFError, OSError):
            pass
        self._conn.close()
        self._conn = None
        if self.status == "running":
            self.status = "stopped"
