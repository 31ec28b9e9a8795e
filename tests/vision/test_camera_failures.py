"""Every camera failure is a camera failure: whatever a source raises on open or read,
the worker reports it once as the source error, the table is told (CAMERA GONE), the
loop goes on, and no thread dies with a traceback. Plus the image bomb: a 75-byte PNG
claiming 60000x60000 pixels is one unreadable frame, not the end of the camera."""

from __future__ import annotations

import asyncio
import logging
import struct
import sys
import threading
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_worker import run_worker

from companion.camera import CameraInput
from companion.display.model import FLASH_WORDS
from companion.loop import Referee, TableLoop
from companion.vision import frames as frames_mod
from companion.vision.frames import (
    CameraGone,
    FolderSource,
    FrameUnreadable,
    GuardedReader,
    Picamera2Source,
    SourceError,
    claimed_size,
    load_image,
    open_checked,
    read_checked,
)


def png_claiming(width: int, height: int) -> bytes:
    """A tiny, well-formed PNG whose header claims width x height RGB pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\0" * 7, 0)) + chunk(b"IEND", b""))


@pytest.fixture
def bomb_folder(tmp_path: Path) -> Path:
    good = np.full((60, 80, 3), 120, np.uint8)
    cv2.imwrite(str(tmp_path / "a.png"), good)
    (tmp_path / "b_bomb.png").write_bytes(png_claiming(60000, 60000))
    cv2.imwrite(str(tmp_path / "c.png"), good)
    return tmp_path


@pytest.fixture
def no_thread_tracebacks(monkeypatch):
    """Records exceptions that escape any thread (threading.excepthook)."""
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    return escaped


# ---------------------------------------------------------------- the image bomb


def test_the_bomb_is_75_bytes_and_claims_3_6_gigapixels():
    data = png_claiming(60000, 60000)
    assert len(data) == 75
    assert claimed_size(data) == (60000, 60000)


def test_claimed_size_reads_jpeg_and_png_headers():
    img = np.zeros((48, 64, 3), np.uint8)
    for ext in (".jpg", ".png"):
        ok, buf = cv2.imencode(ext, img)
        assert ok
        assert claimed_size(buf.tobytes()) == (64, 48)
    assert claimed_size(b"BM not a png or jpeg") is None


def test_a_pixel_bomb_is_refused_before_decoding(tmp_path, monkeypatch):
    path = tmp_path / "bomb.png"
    path.write_bytes(png_claiming(60000, 60000))
    decoded = []
    monkeypatch.setattr(frames_mod.cv2, "imdecode", lambda *a: decoded.append(a))
    with pytest.raises(FrameUnreadable, match=r"bomb.png: claims 60000x60000 pixels"):
        load_image(path)
    assert decoded == []  # never handed to the decoder


def test_an_opencv_error_while_decoding_is_an_unreadable_frame(tmp_path, monkeypatch):
    path = tmp_path / "odd.png"
    cv2.imwrite(str(path), np.zeros((8, 8, 3), np.uint8))

    def explode(*_args):
        raise cv2.error("OpenCV(4.11.0) loadsave.cpp:77: error: (-215:Assertion failed) "
                        "pixels <= CV_IO_MAX_IMAGE_PIXELS\nsecond line")

    monkeypatch.setattr(frames_mod.cv2, "imdecode", explode)
    with pytest.raises(FrameUnreadable, match=r"odd.png: cannot decode: error: OpenCV") as info:
        load_image(path)
    assert "\n" not in str(info.value)


def test_a_folder_camera_skips_the_bomb_and_goes_on(bomb_folder):
    with FolderSource(bomb_folder) as src:
        first = src.read()
        with pytest.raises(FrameUnreadable, match="b_bomb.png"):
            src.read()
        third = src.read()
        assert src.read() is None
    assert first is not None and third is not None
    assert (first.index, third.index) == (0, 2)


def test_the_worker_reports_the_bomb_and_reads_on(bomb_folder, no_thread_tracebacks):
    rec, worker, _ = run_worker(FolderSource(bomb_folder), every_frame=True)
    assert rec.gone == [] and worker.status == "ended"
    assert len(rec.errors) == 1 and "claims 60000x60000" in rec.errors[0]
    assert worker.frames == 2
    assert no_thread_tracebacks == []


def test_watch_survives_the_bomb(bomb_folder, capsys):
    from companion.cli import main

    status = main(["watch", str(bomb_folder)])
    err = capsys.readouterr().err
    assert status == 0
    assert "skipped:" in err and "claims 60000x60000" in err
    assert "2 frames, 1 skipped" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------- foreign exceptions


class Flaky:
    """A FrameSource whose open() or read() raises what a driver might."""

    description = "flaky camera"

    def __init__(self, on_open: BaseException | None = None,
                 on_read: BaseException | None = None, unreadable: bool = False):
        self.on_open, self.on_read, self.unreadable = on_open, on_read, unreadable
        self.reads = 0
        self.closed = False

    def open(self):
        if self.on_open is not None:
            raise self.on_open

    def read(self):
        self.reads += 1
        if self.unreadable:
            raise FrameUnreadable(f"flaky camera frame {self.reads}: garbage")
        if self.on_read is not None:
            raise self.on_read
        return None

    def close(self):
        self.closed = True

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()


def test_open_checked_turns_any_exception_into_a_source_error():
    with pytest.raises(SourceError, match=r"^flaky camera: cannot open: IndexError: list index"):
        open_checked(Flaky(on_open=IndexError("list index out of range")))
    with pytest.raises(SourceError, match="^already a source error$"):
        open_checked(Flaky(on_open=SourceError("already a source error")))


def test_read_checked_turns_any_exception_into_camera_gone():
    with pytest.raises(CameraGone, match=r"^flaky camera: OSError: \[Errno 19\] No such device"):
        read_checked(Flaky(on_read=OSError(19, "No such device")))
    with pytest.raises(FrameUnreadable):
        read_checked(Flaky(unreadable=True))


def test_open_raising_a_foreign_exception_is_camera_gone(no_thread_tracebacks, caplog):
    caplog.set_level(logging.ERROR)
    src = Flaky(on_open=IndexError("list index out of range"))
    rec, worker, _ = run_worker(src)
    assert worker.status == "camera gone"
    assert len(rec.gone) == 1 and isinstance(rec.gone[0], SourceError)
    assert "IndexError: list index out of range" in str(rec.gone[0])
    assert no_thread_tracebacks == []
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None  # one line, no traceback


def test_read_raising_a_foreign_exception_is_camera_gone(no_thread_tracebacks):
    src = Flaky(on_read=KeyError("buffer"))
    rec, worker, _ = run_worker(src)
    assert worker.status == "camera gone" and len(rec.gone) == 1
    assert isinstance(rec.gone[0], CameraGone) and "KeyError" in str(rec.gone[0])
    assert src.closed
    assert no_thread_tracebacks == []


def test_a_source_of_only_unreadable_frames_is_declared_gone(no_thread_tracebacks):
    src = Flaky(unreadable=True)
    rec, worker, _ = run_worker(src, max_unreadable=5)
    assert worker.status == "camera gone"
    assert len(rec.errors) == 4  # four reported one by one, the fifth ends it
    assert "5 frames in a row unreadable" in str(rec.gone[0])
    assert "garbage" in str(rec.gone[0])
    assert src.reads == 5


def test_unreadable_frames_between_good_ones_do_not_add_up():
    results = iter([FrameUnreadable("bad"), "ok", FrameUnreadable("bad"), "ok",
                    FrameUnreadable("bad"), "ok"])

    class Mixed(Flaky):
        def read(self):
            item = next(results)
            if isinstance(item, Exception):
                raise item
            return item

    reader = GuardedReader(Mixed(), max_unreadable=2)
    for _ in range(3):
        with pytest.raises(FrameUnreadable):
            reader.read()
        assert reader.read() == "ok"


# ---------------------------------------------------------------- picamera2


@pytest.fixture
def fake_picamera2(tmp_path, monkeypatch):
    """Installs a picamera2 package whose import or constructor fails as asked."""

    def install(body: str) -> None:
        pkg = tmp_path / "fakecam" / "picamera2"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(body)
        monkeypatch.syspath_prepend(str(pkg.parent))
        monkeypatch.delitem(sys.modules, "picamera2", raising=False)

    yield install
    sys.modules.pop("picamera2", None)


NUMPY_ABI = ('raise ValueError("numpy.dtype size changed, may indicate binary '
             'incompatibility. Expected 96 from C header, got 88 from PyObject")\n')
NO_CAMERA = ("class Picamera2:\n"
             "    def __init__(self, camera_num=0):\n"
             "        self.info = [][camera_num]\n")


def test_picamera2_failing_to_import_names_numpy(fake_picamera2):
    fake_picamera2(NUMPY_ABI)
    with pytest.raises(SourceError) as info:
        Picamera2Source().open()
    text = str(info.value)
    assert "picamera2 cannot be imported: ValueError: numpy.dtype size changed" in text
    assert "numpy < 2" in text and "pi-constraints.txt" in text


def test_picamera2_without_a_camera_is_a_source_error(fake_picamera2):
    fake_picamera2(NO_CAMERA)
    with pytest.raises(SourceError, match="cannot start the camera: list index out of range"):
        Picamera2Source().open()


@pytest.mark.parametrize("body", [NUMPY_ABI, NO_CAMERA], ids=["numpy-abi", "no-camera"])
def test_the_table_is_told_camera_gone_and_plays_on(fake_picamera2, body, caplog,
                                                    no_thread_tracebacks):
    fake_picamera2(body)
    caplog.set_level(logging.WARNING)

    async def main():
        ref = Referee()
        table = TableLoop(ref)
        await table.start()
        # A thread: the stand-in picamera2 module lives in this process only.
        cam = CameraInput(ref, "picamera2", process=False)
        cam.start(asyncio.get_running_loop())
        for _ in range(500):
            if cam.gone:
                break
            await asyncio.sleep(0.01)
        flash = ref.flash
        table.post({"type": "new_game", "players": ["Ann", "Ben"]})
        await table.drain()
        await cam.aclose()
        await table.stop()
        return ref, cam, flash

    ref, cam, flash = asyncio.run(main())
    assert cam.gone
    assert flash == "camera_gone" and FLASH_WORDS[flash] == "CAMERA GONE"
    notices = [m for m in ref.messages if m.startswith("Camera gone (")]
    assert len(notices) == 1 and "picamera" in notices[0]
    assert ref.view().camera == "Camera: GONE (refereeing from the buttons)"
    assert ref.state.phase != "no game"  # the game went on
    journal = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(journal) == 1 and "\n" not in journal[0]
    assert journal[0].startswith("camera gone: picamera")
    assert no_thread_tracebacks == []


def gone_from_the_camera_process(capfd, source: str, polls: int, started=None,
                                 **options) -> tuple[str, str]:
    """Start a camera process on ``source`` (``options`` to CameraInput), wait up to
    ``polls`` hundredths of a second for it to be gone (``started(cam)`` checked just
    after the start), and check the table heard it and the journal got one line: the
    child's stderr (inherited). Returns that line and all of stderr."""

    async def main():
        ref = Referee()
        cam = CameraInput(ref, source, **options)
        cam.start(asyncio.get_running_loop())
        if started is not None:
            started(cam)
        for _ in range(polls):
            if cam.gone:
                break
            await asyncio.sleep(0.01)
        await cam.aclose()
        return ref, cam

    ref, cam = asyncio.run(main())
    assert cam.gone and ref.flash == "camera_gone"
    err = capfd.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("camera gone: "), err
    return lines[0], err


def test_a_camera_process_that_cannot_open_is_one_journal_line_and_camera_gone(capfd):
    """The default: the camera in a child process. Its journal line is the child's
    stderr (inherited), one line; the referee is told through the pipe."""
    _, err = gone_from_the_camera_process(capfd, str(Path("/nonexistent/no-such-camera.mp4")),
                                          1500)
    assert "Traceback" not in err


def test_a_profile_that_will_not_load_is_one_line_and_camera_gone(tmp_path, caplog):
    caplog.set_level(logging.ERROR)

    async def main():
        ref = Referee()
        cam = CameraInput(ref, "synthetic", profile_dir=str(tmp_path / "no-such-profile"))
        cam.start(asyncio.get_running_loop())  # must not raise
        return ref, cam

    ref, cam = asyncio.run(main())
    assert cam.gone and cam.worker is None
    assert ref.flash == "camera_gone"
    journal = [r.getMessage() for r in caplog.records]
    assert len(journal) == 1 and journal[0].startswith("camera gone: ")


def test_a_profile_whose_face_image_is_broken_is_camera_gone_from_the_camera_process(
        tmp_path, capfd):
    """The referee's process reads only a profile's head; a broken face image
    further in is found by the camera's process, which says so in one line naming the
    image, and the table hears the camera is gone."""
    import shutil

    from companion.vision.profile import default_profile_path

    profile = tmp_path / "profile"
    shutil.copytree(default_profile_path(), profile)
    face = profile / "faces" / "black" / "backup.png"
    face.write_bytes(b"not a png")

    def knows_the_dice(cam) -> None:
        assert cam._dice is not None  # the head was enough to know the dice

    line, _ = gone_from_the_camera_process(capfd, "synthetic", 3000, knows_the_dice,
                                           profile_dir=str(profile))
    assert face.name in line and "unreadable" in line, line


def test_watch_reports_a_foreign_read_error_as_camera_gone(monkeypatch, capsys):
    from companion.cli import main
    from companion.commands import watch  # noqa: F401  (registers the command)

    monkeypatch.setattr(frames_mod, "open_source",
                        lambda spec, **kw: Flaky(on_read=RuntimeError("DMA timeout")))
    status = main(["watch", "anything"])
    err = capsys.readouterr().err
    assert status == 1
    assert "camera gone: flaky camera: RuntimeError: DMA timeout" in err
    assert "Traceback" not in err


def test_watch_reports_a_foreign_open_error_in_one_line(monkeypatch, capsys):
    from companion.cli import main

    monkeypatch.setattr(frames_mod, "open_source",
                        lambda spec, **kw: Flaky(on_open=IndexError("list index out of range")))
    status = main(["watch", "anything"])
    err = capsys.readouterr().err
    assert status == 2
    assert "flaky camera: cannot open: IndexError: list index out of range" in err


def test_calibration_reports_a_failing_camera_in_one_line():
    from companion.vision.calibrate import CalibrationError, LiveTable, Step

    table = LiveTable(Flaky(on_read=RuntimeError("libcamera: dequeue failed")),
                      ask=lambda _q: "")
    with pytest.raises(CalibrationError,
                       match="camera gone: flaky camera: RuntimeError: libcamera: dequeue"):
        table.frame(Step("empty"))
