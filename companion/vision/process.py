"""The camera in a process of its own, beside the referee.

A camera thread in the referee's process shares its interpreter lock: while the thread
runs Python (the dice readers do, between OpenCV calls) the loop waits for the lock,
and a camera thread given a lower priority makes it worse, since a descheduled thread
still holds the lock (on a busy machine, tens to hundreds of milliseconds). So
``VisionProcess`` runs the same ``VisionWorker`` (source, pipeline, change gate, settle
tracker) in a child process (a fresh interpreter, not a fork: the parent has threads;
``companion.vision.child`` says how it is started and what crosses) whose CPU
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
import pickle
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Pipe
from typing import Any

from companion.vision.child import BOOTSTRAP, STATS
from companion.vision.readers import DEFAULT_PIP_READER

log = logging.getLogger(__name__)


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
        return self._proc is not None and self._proc.poll() is None

    def _join(self, timeout: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout)

    def start(self) -> None:
        args = pickle.dumps((self.source, *self.args))  # a source that cannot cross fails here
        self._conn, results = Pipe(duplex=False)
        # Stop goes by pipe, not a multiprocessing.Event: a child killed inside the
        # Event's wait leaves its lock held, and set() would then hang the loop.
        orders, self._stop = Pipe(duplex=False)
        fds = (results.fileno(), orders.fileno())
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-P", "-c", BOOTSTRAP, *map(str, fds)],
                pass_fds=fds,
                stdin=subprocess.DEVNULL,
            )
        finally:
            results.close()
            orders.close()
        with contextlib.suppress(OSError):  # a child already gone is said by its pipe
            self._stop.send(list(sys.path))
            self._stop.send_bytes(args)
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

            code = self._proc.poll() if self._proc is not None else None
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
            self._join(timeout)
            if self.running:
                self._proc.terminate()
                self._join(1)
        self._drain()

    async def aclose(self, timeout: float = 5.0) -> None:
        self._ask_to_stop()
        if self._proc is not None:
            await asyncio.to_thread(self._join, timeout)
            if self.running:
                self._proc.terminate()
                await asyncio.to_thread(self._join, 1)
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
