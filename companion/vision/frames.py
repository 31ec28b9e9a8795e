"""Frame sources: where the camera pipeline gets its pictures, behind one small interface.

Every source has ``open()``, ``read() -> Frame | None`` and ``close()``, and works as a
context manager (``with open_source("0") as src: ...``). ``read()`` returns the next
frame, or None at the end of a finite stream (a video file, a folder, a bounded
synthetic run). Three things can go wrong, each with its own exception and a one-line
message that names the device or file:

- ``SourceError``: the source cannot be opened (no such device, file or folder, no
  picamera2 installed). Raised by ``open()``; never silent.
- ``FrameUnreadable``: one frame could not be decoded (a truncated or garbage image in
  a folder). The source stays open: the caller reports it and calls ``read()`` again,
  which carries on with the next frame.
- ``CameraGone``: a live camera stopped delivering frames (``max_failures`` reads in a
  row failed). The companion keeps refereeing from the buttons and says so.

Every camera failure is a camera failure: ``open_checked(source)`` and ``read_checked``
(and ``GuardedReader``, which also declares a source gone after ``max_unreadable``
unreadable frames in a row) turn any other exception a source raises (a driver's
IndexError, an OpenCV error, a numpy ABI clash inside picamera2) into SourceError on
open and CameraGone on read, so callers need to handle only the three above.

Sources: ``Picamera2Source`` (Raspberry Pi camera), ``VideoCaptureSource`` (USB webcam
by index, or a video file), ``FolderSource`` (a folder of images, sorted by name),
``SyntheticSource`` (the synthetic renderer in ``companion.vision.synthetic``), and the
factory ``open_source(spec)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

import cv2
import numpy as np

from companion.vision.faults import CameraGone, FrameUnreadable, SourceError

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})
DEFAULT_CAMERA_SIZE = (1280, 720)  # what the pipeline is tuned and benchmarked for
DEFAULT_MAX_FAILURES = 10
DEFAULT_RETRY_DELAY_S = 0.05
DEFAULT_MAX_UNREADABLE = 30  # unreadable frames in a row before a source counts as gone
# Refuse to decode an image larger than this (a 75-byte PNG can claim 60000x60000 pixels:
# 10 GB of BGR). 100 Mpx is above any camera or phone photo the table will see.
MAX_IMAGE_PIXELS = 100_000_000


@dataclass(frozen=True)
class Frame:
    """One picture from a source.

    image: BGR uint8, shape (height, width, 3).
    index: 0, 1, 2, ... in the order the source delivered frames (unreadable frames
        of a folder use up an index, so indices name positions in the stream).
    timestamp: time.monotonic() when the frame was read.
    name: where it came from (file name, "camera 0", "synthetic seed 7").
    truth: ground truth for synthetic frames (whatever the renderer returns), else None.
    """

    image: np.ndarray
    index: int
    timestamp: float
    name: str = ""
    truth: Any = None


@runtime_checkable
class FrameSource(Protocol):
    """What every frame source offers."""

    description: str

    def open(self) -> None: ...

    def read(self) -> Frame | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class _BaseSource:
    """Context manager plumbing and the frame counter shared by every source."""

    description = "frame source"

    def __init__(self) -> None:
        self._index = 0
        self._opened = False

    def open(self) -> None:
        self._opened = True

    def close(self) -> None:
        self._opened = False

    def read(self) -> Frame | None:  # pragma: no cover - every source overrides it
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        """Frames until the end of the stream (FrameUnreadable and CameraGone propagate)."""
        while (frame := self.read()) is not None:
            yield frame

    def _require_open(self) -> None:
        if not self._opened:
            raise SourceError(f"{self.description}: read() before open()")

    def _frame(self, image: np.ndarray, name: str, truth: Any = None) -> Frame:
        frame = Frame(image, self._index, time.monotonic(), name, truth)
        self._index += 1
        return frame


def _one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (just the type when there is no message)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def open_checked(source: FrameSource) -> None:
    """``source.open()``, with any failure raised as SourceError naming the source."""
    try:
        source.open()
    except SourceError:
        raise
    except Exception as exc:
        name = getattr(source, "description", type(source).__name__)
        raise SourceError(f"{name}: cannot open: {_one_line(exc)}") from exc


def read_checked(source: FrameSource) -> Frame | None:
    """``source.read()``: FrameUnreadable and CameraGone as they are, None at the end,
    and any other failure (a driver error, read before open) raised as CameraGone."""
    try:
        return source.read()
    except (FrameUnreadable, CameraGone):
        raise
    except Exception as exc:
        name = getattr(source, "description", type(source).__name__)
        if isinstance(exc, SourceError) and str(exc).startswith(name):
            raise CameraGone(str(exc)) from exc
        raise CameraGone(f"{name}: {_one_line(exc)}") from exc


class GuardedReader:
    """A source read inside the camera-failure boundary.

    ``open()`` and ``read()`` raise only SourceError, FrameUnreadable and CameraGone
    (see open_checked / read_checked), and ``max_unreadable`` unreadable frames in a
    row raise CameraGone: a source that only ever yields garbage is gone, not busy.
    ``max_unreadable=None`` never gives up (a finite folder of photos ends by itself).
    """

    def __init__(
        self, source: FrameSource, max_unreadable: int | None = DEFAULT_MAX_UNREADABLE
    ) -> None:
        if max_unreadable is not None and max_unreadable < 1:
            raise ValueError("max_unreadable must be at least 1 (or None)")
        self.source = source
        self.max_unreadable = max_unreadable
        self.unreadable_in_a_row = 0

    @property
    def description(self) -> str:
        return str(getattr(self.source, "description", type(self.source).__name__))

    def open(self) -> None:
        open_checked(self.source)

    def read(self) -> Frame | None:
        try:
            frame = read_checked(self.source)
        except FrameUnreadable as exc:
            self.unreadable_in_a_row += 1
            limit = self.max_unreadable
            if limit is not None and self.unreadable_in_a_row >= limit:
                raise CameraGone(
                    f"{self.description}: {self.unreadable_in_a_row} frames in a row "
                    f"unreadable (last: {exc})"
                ) from exc
            raise
        self.unreadable_in_a_row = 0
        return frame


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image


class Picamera2Source(_BaseSource):
    """The Raspberry Pi camera through picamera2 (libcamera).

    picamera2 is not on PyPI in a usable form: on the Pi it comes from apt,
    ``sudo apt install python3-picamera2``, and the project's venv must see the system
    packages: create it with ``python3 -m venv --system-site-packages .venv``. It is
    imported lazily in ``open()``, so the rest of the companion runs anywhere.

    picamera2's "RGB888" format is BGR in memory, which is what OpenCV wants.
    A capture that raises or returns nothing counts as a failure; ``max_failures`` in
    a row raise CameraGone (cable pulled, camera stack crashed).
    """

    def __init__(
        self,
        size: tuple[int, int] = DEFAULT_CAMERA_SIZE,
        *,
        camera_num: int = 0,
        max_failures: int = DEFAULT_MAX_FAILURES,
        retry_delay_s: float = DEFAULT_RETRY_DELAY_S,
        timeout_s: float = 2.0,
    ) -> None:
        super().__init__()
        self.size = size
        self.timeout_s = timeout_s
        self.camera_num = camera_num
        self.max_failures = max_failures
        self.retry_delay_s = retry_delay_s
        self.description = f"picamera {camera_num}"
        self._cam: Any = None

    def open(self) -> None:
        try:
            from picamera2 import Picamera2  # type: ignore[import-not-found]
        except ImportError as exc:
            raise SourceError(
                "picamera: picamera2 is not installed (on the Pi: `sudo apt install "
                "python3-picamera2` and a venv made with --system-site-packages)"
            ) from exc
        except Exception as exc:  # e.g. numpy 2 in the venv: "numpy.dtype size changed"
            raise SourceError(
                f"picamera: picamera2 cannot be imported: {_one_line(exc)} (numpy "
                f"{np.__version__} here; the apt camera stack needs numpy < 2: "
                "systemd/pi-constraints.txt)"
            ) from exc
        try:
            cam = Picamera2(self.camera_num)
            config = cam.create_video_configuration(
                main={"size": self.size, "format": "RGB888"}
            )
            cam.configure(config)
            cam.start()
        except Exception as exc:  # picamera2 raises a variety of errors
            raise SourceError(f"{self.description}: cannot start the camera: {exc}") from exc
        self._cam = cam
        super().open()

    def read(self) -> Frame | None:
        self._require_open()
        failures = 0
        last = ""
        while True:
            try:
                image = self._capture()
            except Exception as exc:  # TimeoutError, RuntimeError from libcamera, ...
                image, last = None, str(exc) or type(exc).__name__
            if image is not None and getattr(image, "size", 0):
                return self._frame(_as_bgr(np.ascontiguousarray(image)), self.description)
            failures += 1
            if failures >= self.max_failures:
                why = f": {last}" if last else ""
                raise CameraGone(f"{self.description}: {failures} captures in a row failed{why}")
            time.sleep(self.retry_delay_s)

    def _capture(self) -> Any:
        """One frame, waiting at most timeout_s (picamera2 >= 0.3.13 has wait(job, timeout))."""
        try:
            job = self._cam.capture_array("main", wait=False)
            return self._cam.wait(job, timeout=self.timeout_s)
        except TypeError:  # an older picamera2 without non-blocking capture
            return self._cam.capture_array("main")

    def close(self) -> None:
        if self._cam is not None:
            try:
                self._cam.stop()
                self._cam.close()
            except Exception:  # closing a camera that is already gone
                pass
            self._cam = None
        super().close()


class VideoCaptureSource(_BaseSource):
    """OpenCV VideoCapture: a USB webcam by index, or a video file.

    VideoCapture fails silently (an unopened capture just returns no frames), so
    ``open()`` checks ``isOpened()`` and the first read, and raises SourceError naming
    the device or file.

    live: a webcam is live, a file is not (by default). On a live source a failed read
    is retried; ``max_failures`` failures in a row raise CameraGone. On a file, a failed
    read is the end of the stream (None). Passing ``live=True`` with a file replays a
    recording as if it were a camera that disappears when the recording ends.
    """

    def __init__(
        self,
        device: int | str | Path,
        *,
        live: bool | None = None,
        size: tuple[int, int] | None = None,
        max_failures: int = DEFAULT_MAX_FAILURES,
        retry_delay_s: float = DEFAULT_RETRY_DELAY_S,
    ) -> None:
        super().__init__()
        self.device = device if isinstance(device, int) else Path(device)
        self.live = isinstance(device, int) if live is None else live
        self.size = size
        self.max_failures = max_failures
        self.retry_delay_s = retry_delay_s
        self.description = (
            f"camera {device}" if isinstance(device, int) else f"video file {self.device}"
        )
        self._cap: cv2.VideoCapture | None = None
        self._pending: np.ndarray | None = None

    def open(self) -> None:
        if isinstance(self.device, Path) and not self.device.is_file():
            raise SourceError(f"{self.description}: no such file")
        cap = cv2.VideoCapture(
            self.device if isinstance(self.device, int) else str(self.device)
        )
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.description}: cannot open (VideoCapture.isOpened() is false)")
        if isinstance(self.device, int):
            # A webcam: MJPG gets 720p at full frame rate over USB 2 (raw YUYV does not),
            # and a one-frame buffer keeps the picture current. Drivers may ignore both.
            cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        if self.size is not None:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        tries = self.max_failures if self.live else 1  # webcams may need a moment
        for attempt in range(tries):
            ok, image = cap.read()
            if ok and image is not None and image.size:
                break
            if attempt + 1 < tries:
                time.sleep(self.retry_delay_s)
        else:
            cap.release()
            raise SourceError(f"{self.description}: opened but the first read returned no frame")
        self._cap = cap
        self._pending = image
        super().open()

    def read(self) -> Frame | None:
        self._require_open()
        assert self._cap is not None
        if self._pending is not None:
            image, self._pending = self._pending, None
            return self._frame(_as_bgr(image), self.description)
        failures = 0
        while True:
            ok, image = self._cap.read()
            if ok and image is not None and image.size:
                return self._frame(_as_bgr(image), self.description)
            if not self.live:
                return None
            failures += 1
            if failures >= self.max_failures:
                raise CameraGone(f"{self.description}: {failures} reads in a row returned no frame")
            time.sleep(self.retry_delay_s)

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
        self._pending = None
        super().close()


def jpeg_is_truncated(data: bytes) -> bool:
    """True when JPEG bytes stop before the image's end-of-image marker.

    Some OpenCV builds decode a truncated JPEG into a half-grey picture with only a
    warning. 0xFFD9 cannot occur inside entropy-coded data (0xFF is byte-stuffed), so
    a complete file has an end-of-image marker after its last start-of-scan marker.
    """
    return data.rfind(b"\xff\xd9") < data.rfind(b"\xff\xda")


def claimed_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) a PNG or JPEG header claims, without decoding; None for other
    formats or when the header cannot be found."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 <= len(data):  # walk the JPEG markers up to the first start-of-frame
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            width = int.from_bytes(data[i + 7 : i + 9], "big")
            return width, height
        if length < 2:
            return None
        i += 2 + length
    return None


def load_image(path: Path) -> np.ndarray:
    """Decode one image file into BGR, or raise FrameUnreadable naming the file.

    Never raises anything else: an image claiming more than MAX_IMAGE_PIXELS is refused
    before decoding, and an OpenCV error (or no memory) while decoding is unreadable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FrameUnreadable(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    if not data:
        raise FrameUnreadable(f"{path}: empty file")
    if data[:2] == b"\xff\xd8" and jpeg_is_truncated(data):
        raise FrameUnreadable(f"{path}: truncated JPEG (no end-of-image marker)")
    if data[:8] == b"\x89PNG\r\n\x1a\n" and b"IEND" not in data[-64:]:
        raise FrameUnreadable(f"{path}: truncated PNG (no IEND chunk)")
    size = claimed_size(data)
    if size is not None and size[0] * size[1] > MAX_IMAGE_PIXELS:
        raise FrameUnreadable(
            f"{path}: claims {size[0]}x{size[1]} pixels, more than the "
            f"{MAX_IMAGE_PIXELS // 1_000_000} Mpx this reader decodes"
        )
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except (cv2.error, MemoryError) as exc:
        raise FrameUnreadable(f"{path}: cannot decode: {_one_line(exc)}") from exc
    if image is None or not image.size:
        raise FrameUnreadable(f"{path}: not a readable image (truncated or not an image)")
    return image


class FolderSource(_BaseSource):
    """Every image in a folder (by suffix: .png, .jpg, ...), sorted by file name.

    recursive: True takes sub-folders too, False only the folder itself; None (the
    default) takes the folder itself, or its sub-folders when it holds no image.
    A file that cannot be decoded raises FrameUnreadable naming it; the next read()
    goes on with the next file. Other files (labels, READMEs) are skipped.
    """

    def __init__(self, folder: str | Path, *, recursive: bool | None = None) -> None:
        super().__init__()
        self.folder = Path(folder)
        self.recursive = recursive
        self.description = f"folder {self.folder}"
        self.paths: list[Path] = []
        self._next = 0

    def open(self) -> None:
        if not self.folder.is_dir():
            raise SourceError(f"{self.description}: no such folder")
        def images(pattern: str) -> list[Path]:
            return sorted(
                p for p in self.folder.glob(pattern)
                if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
            )

        self.paths = images("**/*" if self.recursive else "*")
        if not self.paths and self.recursive is None:
            self.paths = images("**/*")  # a photo set kept in sub-folders
        if not self.paths:
            kinds = " ".join(sorted(IMAGE_SUFFIXES))
            raise SourceError(f"{self.description}: no images (looked for {kinds})")
        self._next = 0
        super().open()

    def read(self) -> Frame | None:
        self._require_open()
        if self._next >= len(self.paths):
            return None
        path = self.paths[self._next]
        self._next += 1
        try:
            image = load_image(path)
        except FrameUnreadable:
            self._index += 1  # the bad file keeps its place in the stream
            raise
        return self._frame(image, str(path.relative_to(self.folder)))


RenderFn = Callable[..., tuple[np.ndarray, Any]]


def _default_renderer() -> RenderFn:
    from companion.vision.synthetic import render_scene

    return render_scene


class SyntheticSource(_BaseSource):
    """The simulated camera: frames from ``companion.vision.synthetic.render_scene``.

    Scene k is rendered with seed ``seed + k`` and held for ``hold`` frames in a row
    (dice lie still for a while, so the settle tracker can settle them), then the next
    scene follows: a fresh throw. ``frames`` bounds the stream (None: endless).
    Extra keyword arguments go to the renderer unchanged (size, dice, ...), and each
    frame carries the renderer's ground truth in ``Frame.truth``.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        hold: int = 5,
        frames: int | None = None,
        renderer: RenderFn | None = None,
        **render_kwargs: Any,
    ) -> None:
        super().__init__()
        if hold < 1:
            raise ValueError("hold must be at least 1")
        self.seed = seed
        self.hold = hold
        self.frames = frames
        self.render_kwargs = render_kwargs
        self._renderer = renderer
        self._scene: tuple[int, np.ndarray, Any] | None = None
        self.description = f"synthetic seed {seed}"

    def open(self) -> None:
        if self._renderer is None:
            try:
                self._renderer = _default_renderer()
            except ImportError as exc:
                raise SourceError(f"{self.description}: no synthetic renderer ({exc})") from exc
        self._scene = None
        super().open()

    def read(self) -> Frame | None:
        self._require_open()
        if self.frames is not None and self._index >= self.frames:
            return None
        scene_seed = self.seed + self._index // self.hold
        if self._scene is None or self._scene[0] != scene_seed:
            assert self._renderer is not None
            image, truth = self._renderer(scene_seed, **self.render_kwargs)
            self._scene = (scene_seed, image, truth)
        _, image, truth = self._scene
        return self._frame(image.copy(), f"synthetic seed {scene_seed}", truth)


def open_source(spec: str | int, **kwargs: Any) -> _BaseSource:
    """Build (not yet open) the source a command-line SOURCE names.

    "picamera" (or "picamera2") -> Pi camera; "0", "1", ... -> USB webcam by index (asked for
    DEFAULT_CAMERA_SIZE unless ``size`` is given); "synthetic" or
    "synthetic:SEED" -> the synthetic renderer; an existing folder -> FolderSource;
    anything else -> a video file (SourceError on open when it does not exist).
    Keyword arguments go to the source's constructor.
    """
    if isinstance(spec, int):
        kwargs.setdefault("size", DEFAULT_CAMERA_SIZE)
        return VideoCaptureSource(spec, **kwargs)
    text = spec.strip()
    if text in ("picamera", "picamera2"):  # the config file says "picamera2"
        return Picamera2Source(**kwargs)
    if text.isdigit():
        kwargs.setdefault("size", DEFAULT_CAMERA_SIZE)
        return VideoCaptureSource(int(text), **kwargs)
    if text == "synthetic" or text.startswith("synthetic:"):
        _, _, seed = text.partition(":")
        try:
            seed_value = int(seed) if seed else 0
        except ValueError:
            raise SourceError(f"{text}: the seed after 'synthetic:' must be an integer") from None
        return SyntheticSource(seed_value, **kwargs)
    path = Path(text).expanduser()
    if path.is_dir():
        return FolderSource(path, **kwargs)
    return VideoCaptureSource(path, **kwargs)
