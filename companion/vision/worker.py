"""The vision worker: camera, pipeline and settle tracker on a thread of their own.

Reading a frame blocks and reading dice takes milliseconds of CPU; neither may stall
the event loop that runs the buttons, the LEDs and the rules. ``VisionWorker`` runs
source -> ``Pipeline`` -> ``SettleTracker`` in a daemon thread and hands results back
to the asyncio loop with ``loop.call_soon_threadsafe``, so every callback runs on the
loop's own thread:

- ``on_reading(settled: FrameReading)``: each time the settled dice change (or every
  frame with ``every_frame=True``).
- ``on_camera_gone(exc)``: the source could not be opened (SourceError) or stopped
  delivering frames (CameraGone). The worker stops; the companion carries on from the
  buttons and says the camera is gone. Any exception the source raises on open or read
  counts (``frames.GuardedReader``), and so do ``max_unreadable`` unreadable frames in
  a row: the thread never dies with a traceback.
- ``on_frame_error(message)``: one frame was unreadable (or the pipeline failed on
  it); a one-line message naming it. The worker carries on with the next frame.
- ``on_end()``: a finite source (video file, folder) ran out.

``stop()`` asks the thread to finish after the current frame and waits for it
(``await worker.aclose()`` does the same without blocking the loop); the source is
closed on the worker's thread either way.

Stream economy (the camera sits beside the referee and must never take its core):

- ``fps``: frames are taken at this rate at most; a frame that cannot be taken on time
  is dropped, never queued (``frames_dropped`` counts the slots missed), so the camera
  never falls behind and never catches up in a burst.
- ``threads``: OpenCV's pool is held to this many threads (BLAS is held before numpy
  loads: companion.vision.threads); ``nice``: the worker thread's scheduling priority
  is lowered by this much (Linux schedules threads one by one), so the loop's thread
  runs first whenever both want a core.
- ``gate``: a ``ChangeGate`` runs the full detection only when something on the table
  moved, or every ``refresh_every`` frames; between, the last reading stands for the
  frame (nothing changed), and while things move only every ``busy_every``-th frame is
  read (the settle tracker waits for stillness anyway).
- ``cpu_ms``: the worker thread's own CPU time per frame, averaged (``thread_time``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from companion.vision.frames import (
    DEFAULT_MAX_UNREADABLE,
    CameraGone,
    FrameSource,
    FrameUnreadable,
    GuardedReader,
    SourceError,
)
from companion.vision.pipeline import Pipeline
from companion.vision.settle import HAND_PREFIX, SettleTracker
from companion.vision.types import FrameReading

if TYPE_CHECKING:
    import asyncio  # the camera's own process runs no loop and imports no asyncio

log = logging.getLogger(__name__)

DEFAULT_FPS = 30.0
FULL = "full"  # run the full detection on this frame
SAME = "same"  # nothing moved since the last detection: its reading stands
SKIP = "skip"  # things are moving: not read (the next full detection will be)


def still_notes(notes: tuple[str, ...]) -> tuple[str, ...]:
    """A reading's notes for a frame where nothing moved: without its hands."""
    return tuple(n for n in notes if not n.startswith(HAND_PREFIX))


class ChangeGate:
    """Whether a frame needs the full detection, from a small grey copy of it.

    The frame is sampled every n-th pixel to about ``width`` pixels wide (a 1280x720
    frame: 160x90, a few hundred microseconds) and compared with the copy taken at the
    last full detection: more than ``changed_fraction`` of its pixels off by more than
    ``threshold`` grey levels means something moved. Frames where nothing moved reuse
    the last reading (SAME) for up to ``refresh_every`` frames; while the frame keeps
    changing from one frame to the next, only every ``busy_every``-th is read (SKIP
    between).
    """

    def __init__(
        self,
        *,
        width: int = 160,
        threshold: int = 18,
        changed_fraction: float = 0.0005,
        refresh_every: int = 30,
        busy_every: int = 3,
    ) -> None:
        self.width = width
        self.threshold = threshold
        self.changed_fraction = changed_fraction
        self.refresh_every = max(1, refresh_every)
        self.busy_every = max(1, busy_every)
        self._ref: np.ndarray | None = None
        self._prev: np.ndarray | None = None
        self._small: np.ndarray | None = None
        self._since_full = 0

    def _changed(self, a: np.ndarray, b: np.ndarray) -> bool:
        diff = cv2.absdiff(a, b)
        limit = max(1, int(self.changed_fraction * a.size))
        return int(np.count_nonzero(diff > self.threshold)) >= limit

    def check(self, image: np.ndarray) -> str:
        step = max(1, image.shape[1] // self.width)
        small = np.ascontiguousarray(image[::step, ::step])
        if small.ndim == 3:
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        small = cv2.blur(small, (3, 3))
        prev, self._prev, self._small = self._prev, small, small
        self._since_full += 1
        ref = self._ref
        if ref is None or ref.shape != small.shape:
            return FULL
        if not self._changed(small, ref):
            return FULL if self._since_full >= self.refresh_every else SAME
        moving = prev is not None and prev.shape == small.shape and self._changed(small, prev)
        if moving and self._since_full < self.busy_every:
            return SKIP
        return FULL

    def detected(self) -> None:
        """The full detection ran on the frame last checked: it is the new reference."""
        self._ref = self._small
        self._since_full = 0


class VisionWorker:
    """Runs one frame source through the pipeline off the event loop."""

    def __init__(
        self,
        source: FrameSource,
        loop: asyncio.AbstractEventLoop,
        on_reading: Callable[[FrameReading], Any],
        *,
        on_camera_gone: Callable[[Exception], Any] | None = None,
        on_frame_error: Callable[[str], Any] | None = None,
        on_end: Callable[[], Any] | None = None,
        pipeline: Pipeline | None = None,
        tracker: SettleTracker | None = None,
        every_frame: bool = False,
        max_fps: float | None = None,
        name: str = "vision",
        threads: int | None = None,
        nice: int = 0,
        gate: ChangeGate | None = None,
        max_unreadable: int | None = DEFAULT_MAX_UNREADABLE,
    ) -> None:
        self.source = source
        self.loop = loop
        self.on_reading = on_reading
        self.on_camera_gone = on_camera_gone
        self.on_frame_error = on_frame_error
        self.on_end = on_end
        self.pipeline = pipeline if pipeline is not None else Pipeline()
        self.tracker = tracker if tracker is not None else SettleTracker()
        self.every_frame = every_frame
        self.min_interval = 1.0 / max_fps if max_fps else 0.0
        self.threads = threads
        self.nice = nice
        self.gate = gate
        self.status = "idle"  # idle, running, ended, camera gone, stopped
        self.frames = 0
        self.frame_errors = 0
        self.frames_dropped = 0  # frame slots missed (the frame before took too long)
        self.detections = 0  # frames given the full detection
        self.reused = 0  # frames where the last reading stood (nothing moved)
        self.skipped = 0  # frames not read while things moved
        self.cpu_s = 0.0  # this thread's CPU time over all frames
        self._reader = GuardedReader(source, max_unreadable)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self.status = "running"
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to finish and wait for it (at most ``timeout`` seconds)."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    async def aclose(self, timeout: float = 5.0) -> None:
        """``stop()`` from a coroutine: waits for the thread without blocking the loop
        (a camera read can take up to its timeout to give up)."""
        import asyncio

        self._stop.set()
        if self._thread.is_alive():
            await asyncio.to_thread(self._thread.join, timeout)

    def _post(self, callback: Callable[..., Any] | None, *args: Any) -> None:
        if callback is None:
            return
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self._stop.set()

    @property
    def cpu_ms(self) -> float:
        """The worker thread's average CPU time per frame taken, in milliseconds."""
        return 1000 * self.cpu_s / self.frames if self.frames else 0.0

    def _hold_back(self) -> None:
        """On the worker's own thread: its thread budget and its lower priority."""
        if self.threads is not None:
            from companion.vision.threads import set_opencv_threads

            set_opencv_threads(self.threads)
        if self.nice > 0 and hasattr(os, "setpriority"):
            tid = threading.get_native_id()
            try:
                niceness = os.getpriority(os.PRIO_PROCESS, tid) + self.nice
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
            except OSError as exc:  # not allowed here: say so, run anyway
                log.warning("vision: cannot lower the camera thread's priority: %s", exc)

    def _run(self) -> None:
        self._hold_back()
        try:
            self._reader.open()  # any exception from open() arrives as SourceError
        except SourceError as exc:
            log.error("camera gone: %s", exc)
            self.status = "camera gone"
            self._post(self.on_camera_gone, exc)
            return
        try:
            self._loop()
        finally:
            try:
                self.source.close()
            except Exception as exc:  # a source that fails to close must not hide why
                log.warning("%s: close failed: %s", self.source.description, exc)

    def _loop(self) -> None:
        due = time.monotonic()
        last: FrameReading | None = None
        while not self._stop.is_set():
            if self.min_interval:
                now = time.monotonic()
                if now < due:
                    if self._stop.wait(due - now):
                        break
                elif now - due >= self.min_interval:
                    # Late by whole frames: those frames are dropped, not caught up.
                    missed = int((now - due) / self.min_interval)
                    self.frames_dropped += missed
                    due += missed * self.min_interval
                due += self.min_interval
            cpu0 = time.thread_time()
            try:
                frame = self._reader.read()
            except FrameUnreadable as exc:
                self.frame_errors += 1
                log.warning("%s", exc)
                self._post(self.on_frame_error, str(exc))
                continue
            except CameraGone as exc:
                log.error("camera gone: %s", exc)
                self.status = "camera gone"
                self._post(self.on_camera_gone, exc)
                return
            except Exception as exc:  # a driver error we do not know: the camera is gone
                gone = CameraGone(f"{self.source.description}: {type(exc).__name__}: {exc}")
                log.error("camera gone: %s", gone)
                self.status = "camera gone"
                self._post(self.on_camera_gone, gone)
                return
            if frame is None:
                self.status = "ended"
                self._post(self.on_end)
                return
            self.frames += 1
            try:
                decision = self.gate.check(frame.image) if self.gate is not None else FULL
                if decision == FULL or last is None:
                    reading = self.pipeline.process(frame.image, frame.index)
                    self.detections += 1
                    if self.gate is not None:
                        self.gate.detected()
                elif decision == SAME:
                    # Nothing moved since that detection, so no hand moves now: its
                    # reading stands without the hands it saw moving (else a die a
                    # hand took away would stay "settled" under a hand that is gone)
                    reading = dataclasses.replace(last, frame_index=frame.index,
                                                  notes=still_notes(last.notes))
                    self.reused += 1
                else:
                    self.skipped += 1
                    self.cpu_s += time.thread_time() - cpu0
                    continue
            except Exception as exc:  # one bad frame must not stop the camera
                self.frame_errors += 1
                message = f"{frame.name or self.source.description} frame {frame.index}: " \
                          f"pipeline failed: {type(exc).__name__}: {exc}"
                log.warning("%s", message)
                self._post(self.on_frame_error, message)
                self.cpu_s += time.thread_time() - cpu0
                continue
            last = reading
            settled = self.tracker.update(reading)
            self.cpu_s += time.thread_time() - cpu0
            if self.tracker.changed or self.every_frame:
                self._post(self.on_reading, settled)
        self.status = "stopped"
