"""Frame sources: each opens loudly or not at all, and bad frames are named and skipped."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.frames import (
    CameraGone,
    FolderSource,
    Frame,
    FrameSource,
    FrameUnreadable,
    Picamera2Source,
    SourceError,
    SyntheticSource,
    VideoCaptureSource,
    jpeg_is_truncated,
    load_image,
    open_source,
)

COLOURS = [(0, 0, 255), (0, 255, 0), (255, 0, 0), (0, 255, 255), (255, 0, 255)]


def write_video(path: Path, colours=COLOURS, size=(160, 120)) -> Path:
    """A short MJPG .avi, one flat colour per frame (OpenCV writes it headless)."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, size)
    assert writer.isOpened()
    for colour in colours:
        writer.write(np.full((size[1], size[0], 3), colour, np.uint8))
    writer.release()
    return path


def test_video_file_frames_come_back_in_order_then_none(tmp_path):
    path = write_video(tmp_path / "clip.avi")
    with VideoCaptureSource(path) as src:
        assert isinstance(src, FrameSource)
        frames = list(src)
        assert src.read() is None
    assert [f.index for f in frames] == [0, 1, 2, 3, 4]
    for frame, colour in zip(frames, COLOURS, strict=True):
        assert frame.image.shape == (120, 160, 3)
        assert frame.image.dtype == np.uint8
        mean = frame.image.reshape(-1, 3).mean(axis=0)
        assert np.abs(mean - colour).max() < 20  # MJPG is lossy


def test_missing_video_file_is_a_loud_one_line_error(tmp_path):
    missing = tmp_path / "nope.avi"
    with pytest.raises(SourceError) as info:
        VideoCaptureSource(missing).open()
    assert str(missing) in str(info.value)
    assert "\n" not in str(info.value)


def test_a_file_that_is_not_a_video_fails_to_open(tmp_path):
    junk = tmp_path / "junk.avi"
    junk.write_bytes(b"this is not a video at all" * 40)
    with pytest.raises(SourceError, match="junk.avi"):
        VideoCaptureSource(junk).open()


def test_missing_webcam_index_is_a_loud_error():
    with pytest.raises(SourceError, match="camera 97"):
        open_source("97").open()


def test_read_before_open_is_refused(tmp_path):
    with pytest.raises(SourceError, match="before open"):
        VideoCaptureSource(write_video(tmp_path / "a.avi")).read()


def test_camera_disappearing_mid_stream_raises_camera_gone(tmp_path):
    """A live source whose reads start failing: the recording ends, as if the USB
    cable were pulled. Frames first, then CameraGone naming the device."""
    path = write_video(tmp_path / "live.avi")
    src = VideoCaptureSource(path, live=True, max_failures=3, retry_delay_s=0.0)
    got = []
    with src, pytest.raises(CameraGone, match="live.avi.*3 reads in a row"):
        while True:
            got.append(src.read())
    assert len(got) == len(COLOURS)


def write_folder(folder: Path) -> Path:
    folder.mkdir()
    image = np.zeros((60, 80, 3), np.uint8)
    cv2.circle(image, (40, 30), 20, (200, 200, 200), -1)
    cv2.imwrite(str(folder / "a_good.png"), image)
    ok, jpeg = cv2.imencode(".jpg", image)
    assert ok
    (folder / "b_truncated.jpg").write_bytes(jpeg.tobytes()[: len(jpeg) // 2])
    (folder / "c_garbage.png").write_bytes(b"\x89PNG not really" * 20)
    (folder / "d_labels.txt").write_text("0 0.5 0.5 0.1 0.1\n")  # not an image: skipped
    cv2.imwrite(str(folder / "e_good.jpg"), image)
    return folder


def test_folder_names_each_bad_image_and_carries_on(tmp_path):
    folder = write_folder(tmp_path / "shots")
    frames: list[Frame] = []
    errors: list[str] = []
    with FolderSource(folder) as src:
        while True:
            try:
                frame = src.read()
            except FrameUnreadable as exc:
                errors.append(str(exc))
                continue
            if frame is None:
                break
            frames.append(frame)
    assert [f.name for f in frames] == ["a_good.png", "e_good.jpg"]
    assert [f.index for f in frames] == [0, 3]
    assert len(errors) == 2
    assert "b_truncated.jpg" in errors[0] and "truncated" in errors[0]
    assert "c_garbage.png" in errors[1]
    assert all("\n" not in e for e in errors)


def test_truncated_jpeg_detection():
    image = np.random.default_rng(1).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    ok, jpeg = cv2.imencode(".jpg", image)
    data = jpeg.tobytes()
    assert not jpeg_is_truncated(data)
    assert not jpeg_is_truncated(data + b"\x00\x00trailing junk")
    assert jpeg_is_truncated(data[:-2])
    assert jpeg_is_truncated(data[: len(data) // 3])


def test_empty_and_unreadable_files(tmp_path):
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(FrameUnreadable, match="empty.png: empty file"):
        load_image(empty)
    with pytest.raises(FrameUnreadable, match="gone.png"):
        load_image(tmp_path / "gone.png")


def test_missing_or_empty_folder_fails_to_open(tmp_path):
    with pytest.raises(SourceError, match="no such folder"):
        FolderSource(tmp_path / "missing").open()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no images"):
        FolderSource(tmp_path / "empty").open()


def test_open_source_picks_the_right_kind(tmp_path):
    video = write_video(tmp_path / "v.avi")
    assert isinstance(open_source(str(video)), VideoCaptureSource)
    assert open_source(str(video)).live is False
    cam = open_source("1")
    assert isinstance(cam, VideoCaptureSource) and cam.device == 1 and cam.live
    assert isinstance(open_source(str(tmp_path)), FolderSource)
    assert isinstance(open_source("picamera"), Picamera2Source)
    synth = open_source("synthetic:7")
    assert isinstance(synth, SyntheticSource) and synth.seed == 7
    assert open_source("synthetic").seed == 0
    with pytest.raises(SourceError, match="integer"):
        open_source("synthetic:x")
    with pytest.raises(SourceError, match="no such file"):
        open_source(str(tmp_path / "missing.mp4")).open()


def test_synthetic_source_holds_each_scene_then_throws_again():
    calls = []

    def renderer(seed, size=(64, 48)):
        calls.append(seed)
        return np.full((size[1], size[0], 3), seed, np.uint8), {"seed": seed}

    with SyntheticSource(10, hold=3, frames=7, renderer=renderer, size=(32, 24)) as src:
        frames = list(src)
    assert [f.truth["seed"] for f in frames] == [10, 10, 10, 11, 11, 11, 12]
    assert calls == [10, 11, 12]
    assert frames[0].image.shape == (24, 32, 3)
    frames[0].image[:] = 0  # a frame is the caller's to scribble on
    assert frames[1].image[0, 0, 0] == 10


def test_synthetic_source_uses_the_real_renderer():
    with SyntheticSource(3, hold=2, frames=3) as src:
        frames = list(src)
    assert len(frames) == 3
    for frame in frames:
        assert frame.image.ndim == 3 and frame.image.shape[2] == 3
        assert frame.truth is not None
    assert np.array_equal(frames[0].image, frames[1].image)
    assert not np.array_equal(frames[1].image, frames[2].image)


def test_picamera_missing_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails, as off the Pi
    with pytest.raises(SourceError) as info:
        Picamera2Source().open()
    message = str(info.value)
    assert "python3-picamera2" in message and "--system-site-packages" in message


def test_picamera_that_stops_capturing_is_camera_gone(monkeypatch):
    """No test double ships with picamera2, so a minimal stand-in of its capture API."""

    class FakePicamera2:
        def __init__(self, num):
            self.captures = 0
            self.closed = False

        def create_video_configuration(self, main):
            return {"main": main}

        def configure(self, config):
            self.size = config["main"]["size"]

        def start(self):
            pass

        def capture_array(self, name, wait=None):
            return "job"

        def wait(self, job, timeout=None):
            self.captures += 1
            if self.captures > 2:
                raise TimeoutError("camera frontend timed out")
            return np.zeros((self.size[1], self.size[0], 3), np.uint8)

        def stop(self):
            pass

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=FakePicamera2))
    src = Picamera2Source((64, 48), max_failures=2, retry_delay_s=0.0)
    with src:
        cam = src._cam
        assert src.read().image.shape == (48, 64, 3)
        assert src.read().index == 1
        with pytest.raises(CameraGone, match="picamera 0: 2 captures in a row failed: camera"):
            src.read()
    assert cam.closed


def test_folder_with_images_only_in_sub_folders(tmp_path):
    image = np.full((20, 30, 3), 128, np.uint8)
    (tmp_path / "set" / "b").mkdir(parents=True)
    (tmp_path / "set" / "a").mkdir()
    cv2.imwrite(str(tmp_path / "set" / "b" / "1.png"), image)
    cv2.imwrite(str(tmp_path / "set" / "a" / "2.png"), image)
    with FolderSource(tmp_path / "set") as src:
        assert [f.name for f in src] == ["a/2.png", "b/1.png"]
    with pytest.raises(SourceError, match="no images"):
        FolderSource(tmp_path / "set", recursive=False).open()
    cv2.imwrite(str(tmp_path / "set" / "top.png"), image)
    with FolderSource(tmp_path / "set") as src:
        assert [f.name for f in src] == ["top.png"]
