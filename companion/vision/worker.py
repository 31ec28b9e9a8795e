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
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from companion.vision.frames import (
    DEFAULT_MAX_UNREADABLE,
    CameraGone,
    FrameSource,
    FrameUnreadable,
    GuardedReader,
    SourceError,
)
from companion.vision.pipeline import Pipeline
from companion.vision.settle import SettleTracker
from companion.vision.types import FrameReading

log = logging.getLogger(__name__)


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
        self.status = "idle"  # idle, running, ended, camera gone, stopped
        self.frames = 0
        self.frame_errors = 0
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

    def _run(self) -> None:
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
        last = 0.0
        while not self._stop.is_set():
            if self.min_interval:
                wait = last + self.min_interval - time.monotonic()
                if wait > 0 and self._stop.wait(wait):
                    break
                last = time.monotonic()
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
                reading = self.pipeline.process(frame.image, frame.index)
            except Exception as exc:  # one bad frame must not stop the camera
                self.frame_errors += 1
                message = f"{frame.name or self.source.description} frame {frame.index}: " \
                          f"pipeline failed: {type(exc).__name__}: {exc}"
                log.warning("%s", message)
                self._post(self.on_frame_error, message)
                continue
            settled = self.tracker.update(reading)
            if self.tracker.changed or self.every_frame:
                self._post(self.on_reading, settled)
        self.status = "stopped"
