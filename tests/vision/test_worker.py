"""The vision worker: readings reach a running asyncio loop; a lost camera is reported
and the loop carries on refereeing."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from companion.vision.frames import (
    CameraGone,
    FolderSource,
    SourceError,
    SyntheticSource,
    VideoCaptureSource,
)
from companion.vision.pipeline import Pipeline
from companion.vision.settle import SettleTracker
from companion.vision.synthetic import pip_dice_specs, render_scene
from companion.vision.types import DieReading, FrameReading
from companion.vision.worker import ChangeGate, VisionWorker


def fixed_dice(img):
    return [DieReading("pip", "5", 0.9, (100, 100, 140, 140), (120.0, 120.0)),
            DieReading("pip", "2", 0.9, (300, 100, 340, 140), (320.0, 120.0))]


def write_video(path: Path, frames=6, size=(320, 240)) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, size)
    for i in range(frames):
        writer.write(np.full((size[1], size[0], 3), 100 + i, np.uint8))  # a still table
    writer.release()
    return path


class Recorder:
    """Callbacks that note what they got and on which thread they ran."""

    def __init__(self):
        self.readings: list[FrameReading] = []
        self.errors: list[str] = []
        self.gone: list[Exception] = []
        self.threads: set[int] = set()
        self.done = asyncio.Event()

    def on_reading(self, reading):
        self.threads.add(threading.get_ident())
        self.readings.append(reading)

    def on_frame_error(self, message):
        self.threads.add(threading.get_ident())
        self.errors.append(message)

    def on_camera_gone(self, exc):
        self.threads.add(threading.get_ident())
        self.gone.append(exc)
        self.done.set()

    def on_end(self):
        self.threads.add(threading.get_ident())
        self.done.set()


def run_worker(source, timeout=20.0, **kw):
    async def main():
        rec = Recorder()
        loop = asyncio.get_running_loop()
        worker = VisionWorker(source, loop, rec.on_reading, on_camera_gone=rec.on_camera_gone,
                              on_frame_error=rec.on_frame_error, on_end=rec.on_end, **kw)
        ticks = 0

        async def buttons():  # the rest of the companion, still running
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(buttons())
        worker.start()
        await asyncio.wait_for(rec.done.wait(), timeout)
        at_end = ticks
        await asyncio.sleep(0.05)
        assert ticks > at_end  # the loop keeps going after the camera is gone
        task.cancel()
        worker.stop()
        assert not worker.running
        return rec, worker, threading.get_ident()

    return asyncio.run(main())


def test_settled_readings_reach_the_loop_thread():
    source = SyntheticSource(4, hold=5, frames=10, renderer=render_scene,
                             dice=pip_dice_specs(3), width=640, height=480)
    rec, worker, loop_thread = run_worker(
        source, pipeline=Pipeline(pip_reader=fixed_dice), tracker=SettleTracker(3))
    assert rec.threads == {loop_thread}
    # the two dice settle on frame 2 and stay: one change, handed over once
    assert len(rec.readings) == 1
    assert rec.readings[0].frame_index == 2
    assert sorted(d.face for d in rec.readings[0].dice) == ["2", "5"]
    assert worker.status == "ended" and worker.frames == 10
    assert not source._opened  # closed on the worker's thread


def test_every_frame_with_the_real_pipeline():
    source = SyntheticSource(1, hold=3, frames=6, renderer=render_scene,
                             dice=pip_dice_specs(2), width=640, height=480)
    rec, worker, _ = run_worker(source, every_frame=True)
    assert [r.frame_index for r in rec.readings] == [0, 1, 2, 3, 4, 5]
    assert all(r.mat_found for r in rec.readings)
    assert rec.errors == [] and rec.gone == []


def test_camera_disappearing_is_reported_and_the_loop_carries_on(tmp_path):
    video = write_video(tmp_path / "cam.avi", frames=6)
    source = VideoCaptureSource(video, live=True, max_failures=3, retry_delay_s=0.0)
    rec, worker, loop_thread = run_worker(
        source, pipeline=Pipeline(pip_reader=fixed_dice), tracker=SettleTracker(2))
    assert len(rec.gone) == 1
    assert isinstance(rec.gone[0], CameraGone)
    assert "cam.avi" in str(rec.gone[0])
    assert worker.status == "camera gone"
    assert worker.frames == 6
    assert len(rec.readings) == 1  # what it saw before going is still delivered
    assert rec.threads == {loop_thread}


def test_camera_that_never_opens_is_reported(tmp_path):
    rec, worker, _ = run_worker(VideoCaptureSource(tmp_path / "missing.avi"),
                                pipeline=Pipeline(pip_reader=fixed_dice))
    assert len(rec.gone) == 1 and isinstance(rec.gone[0], SourceError)
    assert "missing.avi" in str(rec.gone[0])
    assert worker.frames == 0


def test_unreadable_images_are_named_and_the_worker_goes_on(tmp_path):
    folder = tmp_path / "shots"
    folder.mkdir()
    image = np.full((120, 160, 3), 200, np.uint8)
    cv2.imwrite(str(folder / "1.png"), image)
    (folder / "2.jpg").write_bytes(cv2.imencode(".jpg", image)[1].tobytes()[:300])
    cv2.imwrite(str(folder / "3.png"), image)
    rec, worker, _ = run_worker(FolderSource(folder), every_frame=True,
                                pipeline=Pipeline(pip_reader=fixed_dice, motion=False))
    assert len(rec.errors) == 1 and "2.jpg" in rec.errors[0]
    assert [r.frame_index for r in rec.readings] == [0, 2]
    assert worker.status == "ended"


def test_a_frame_the_pipeline_chokes_on_is_skipped():
    calls = 0

    def flaky(img):
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ValueError("bad pixels")
        return fixed_dice(img)

    source = SyntheticSource(0, hold=10, frames=4, renderer=lambda seed: (
        np.zeros((48, 64, 3), np.uint8), None))
    rec, worker, _ = run_worker(source, every_frame=True,
                                pipeline=Pipeline(pip_reader=flaky, motion=False))
    assert len(rec.errors) == 1 and "frame 1" in rec.errors[0] and "bad pixels" in rec.errors[0]
    assert [r.frame_index for r in rec.readings] == [0, 2, 3]


def test_stop_ends_an_endless_source_cleanly():
    source = SyntheticSource(0, renderer=lambda seed: (np.zeros((48, 64, 3), np.uint8), None))

    async def main():
        got = []
        enough = asyncio.Event()

        def on_reading(reading):
            got.append(reading)
            if len(got) >= 5:
                enough.set()

        worker = VisionWorker(source, asyncio.get_running_loop(), on_reading, every_frame=True,
                              pipeline=Pipeline(pip_reader=fixed_dice), max_fps=200)
        worker.start()
        await asyncio.wait_for(enough.wait(), 10)
        await worker.aclose()
        return worker

    worker = asyncio.run(main())
    assert not worker.running
    assert worker.status == "stopped"
    assert not source._opened


def test_a_closed_loop_stops_the_worker():
    loop = asyncio.new_event_loop()
    source = SyntheticSource(0, renderer=lambda seed: (np.zeros((48, 64, 3), np.uint8), None))
    worker = VisionWorker(source, loop, lambda r: None, every_frame=True,
                          pipeline=Pipeline(pip_reader=fixed_dice))
    loop.close()
    worker.start()
    worker._thread.join(5)
    assert not worker.running
    assert not source._opened


def test_companion_keeps_refereeing_from_the_buttons_when_the_camera_goes(tmp_path):
    """Mid-game the camera disappears: the referee says so and the buttons still count."""
    from game_builders import ROW5, new_game

    from companion.hardware.buttons import SeatButtons
    from companion.hardware.pins import make_pin_factory
    from companion.loop import Referee, TableLoop

    video = write_video(tmp_path / "overhead.avi", frames=4)

    async def main():
        ref = Referee()
        table = TableLoop(ref, tick_seconds=0.01)
        await table.start()
        for ev in (new_game(2), {"type": "heist_hide", "row": ROW5},
                   {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
                   {"type": "assault_start"}):
            table.post(ev)
        await table.drain()
        gone = asyncio.Event()

        def camera_gone(exc):
            ref.notice(f"Camera gone ({exc}); referee from the buttons")
            gone.set()

        worker = VisionWorker(
            VideoCaptureSource(video, live=True, max_failures=2, retry_delay_s=0.0),
            asyncio.get_running_loop(), lambda reading: None, on_camera_gone=camera_gone,
            pipeline=Pipeline(pip_reader=fixed_dice))
        worker.start()
        await asyncio.wait_for(gone.wait(), 10)
        buttons = SeatButtons([17, 27], table.on_press, pin_factory=make_pin_factory("mock"))
        # an edge after Go!, on the loop's CLOCK_MONOTONIC (as lgpio stamps it)
        press = threading.Thread(target=buttons.press, args=(1, time.monotonic_ns()))
        press.start()
        press.join()
        for _ in range(200):
            await asyncio.sleep(0.001)
            if ref.state.seats[1].escaped:
                break
        await table.drain()
        buttons.close()
        worker.stop()
        await table.stop()
        return ref, worker

    ref, worker = asyncio.run(main())
    assert worker.status == "camera gone" and not worker.running
    assert any(m.startswith("Camera gone") and "overhead.avi" in m for m in ref.messages)
    assert ref.state.seats[1].escaped == 1


def test_a_die_taken_away_leaves_once_the_table_is_still_again():
    """A hand takes the die (the whole frame changes: a moving blob, a hand), then the
    table lies still without it: the frames the change gate calls "same" carry no hand,
    so the die leaves the settled reading instead of staying under a hand that is gone."""
    with_die = np.full((120, 160, 3), 90, np.uint8)
    without = np.full((120, 160, 3), 200, np.uint8)  # every pixel changed: a "hand"
    frames = [with_die] * 6 + [without] * 12

    def reader(img):  # the die is there while the table is dark
        return fixed_dice(img)[:1] if int(img[0, 0, 0]) == 90 else []

    source = SyntheticSource(0, hold=1, frames=len(frames),
                             renderer=lambda seed: (frames[seed], None))
    rec, worker, _ = run_worker(source, pipeline=Pipeline(pip_reader=reader),
                                gate=ChangeGate(refresh_every=1000))
    assert worker.reused >= 8  # the still frames after the change were "same"
    assert [len(r.dice) for r in rec.readings][0] == 1  # the die settled
    assert len(rec.readings[-1].dice) == 0  # and left
