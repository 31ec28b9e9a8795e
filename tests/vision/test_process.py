"""The camera in a process of its own: readings reach the loop's thread over a pipe; a
camera that will not open, or a camera process that dies, is "camera gone"."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import threading

import cv2
import numpy as np
import pytest

from companion.vision.frames import CameraGone, SourceError
from companion.vision.process import VisionProcess
from companion.vision.synthetic import pip_dice_specs, render_scene


def folder_of_dice(tmp_path, frames=8):
    folder = tmp_path / "shots"
    folder.mkdir()
    image, _ = render_scene(1, pip_dice_specs(2), width=1280, height=720)
    for i in range(frames):
        cv2.imwrite(str(folder / f"{i:02d}.png"), image)  # a still table
    return folder


def run(spec, *, until_gone=False, kill=False, **kw):
    async def main():
        got, gone, threads = [], [], set()
        done = asyncio.Event()

        def on_reading(reading):
            threads.add(threading.get_ident())
            got.append(reading)
            if kill and proc.running:
                os.kill(proc._proc.pid, signal.SIGKILL)

        def on_gone(exc):
            threads.add(threading.get_ident())
            gone.append(exc)
            done.set()

        proc = VisionProcess(
            spec,
            asyncio.get_running_loop(),
            on_reading,
            on_camera_gone=on_gone,
            on_end=done.set,
            stats_every_s=0.05,
            **kw,
        )
        proc.start()
        await asyncio.wait_for(done.wait(), 60)
        await proc.aclose()
        return proc, got, gone, threads

    return asyncio.run(main())


def test_readings_come_back_to_the_loop_thread(tmp_path):
    proc, got, gone, threads = run(str(folder_of_dice(tmp_path)), every_frame=True)
    assert gone == [] and proc.status == "ended"
    assert threads == {threading.get_ident()}
    assert [r.frame_index for r in got] == list(range(8))
    assert got[-1].mat_found and len(got[-1].dice) == 2  # settled by the last frame
    assert proc.frames == 8 and proc.detections + proc.reused == 8 and proc.cpu_ms > 0
    assert not proc.running


def test_a_camera_that_will_not_open_is_gone(tmp_path):
    proc, got, gone, _ = run(str(tmp_path / "missing.avi"))
    assert len(gone) == 1 and isinstance(gone[0], SourceError) and "missing.avi" in str(gone[0])
    assert proc.status == "camera gone"


def test_a_camera_process_that_dies_is_gone(tmp_path):
    folder = folder_of_dice(tmp_path, frames=60)
    proc, got, gone, _ = run(str(folder), every_frame=True, max_fps=20, kill=True)
    assert len(got) >= 1
    assert len(gone) == 1 and isinstance(gone[0], CameraGone)
    assert "ended unexpectedly" in str(gone[0])


def test_the_child_holds_its_threads_and_priority(tmp_path):
    """What the child runs with, as it reports it: a lower priority than ours, BLAS and
    OpenCV held to the threads given, a process other than ours."""
    proc, got, gone, _ = run(str(folder_of_dice(tmp_path, frames=3)), nice=5, threads=1)
    assert gone == [] and proc.frames == 3 and np.isfinite(proc.cpu_ms)
    info = proc.child_info
    assert info["pid"] != os.getpid()
    assert info["nice"] == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)
    assert info["blas_threads"] == "1" and info["opencv_threads"] == 1


def our_children() -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        try:  # a thread may end between the listing and the reading
            with open(f"/proc/{os.getpid()}/task/{task}/children") as f:
                out += [int(pid) for pid in f.read().split()]
        except FileNotFoundError:
            continue
    return out


def test_the_camera_is_our_one_child_process(tmp_path):
    """The camera's process is the only process the camera starts: no multiprocessing
    resource tracker beside it (a Python process of 8 MiB the camera has no use for)."""
    seen = []
    before = set(our_children())  # a tracker an earlier test's multiprocessing left

    def look(reading):
        seen.append(sorted(set(our_children()) - before))

    async def main():
        done = asyncio.Event()
        proc = VisionProcess(str(folder_of_dice(tmp_path, frames=40)), asyncio.get_running_loop(),
                             look, on_end=done.set, every_frame=True, max_fps=20)
        proc.start()
        await asyncio.wait_for(done.wait(), 60)
        await proc.aclose()
        return proc

    proc = asyncio.run(main())
    assert seen and all(children == [proc._proc.pid] for children in seen)


def test_ctrl_c_is_the_referees_to_handle_not_the_cameras(tmp_path, capfd):
    """A terminal's Ctrl-C reaches the camera's process too (one process group): it reads
    on, and stops when the referee says, with no traceback."""
    interrupted = []

    def on_reading(reading):
        if not interrupted:
            os.kill(proc_box[0]._proc.pid, signal.SIGINT)
            interrupted.append(reading.frame_index)

    proc_box = []

    async def main():
        done = asyncio.Event()
        proc = VisionProcess(str(folder_of_dice(tmp_path, frames=20)), asyncio.get_running_loop(),
                             on_reading, on_end=done.set, every_frame=True, max_fps=20)
        proc_box.append(proc)
        proc.start()
        await asyncio.wait_for(done.wait(), 60)
        await proc.aclose()
        return proc

    proc = asyncio.run(main())
    assert interrupted and proc.status == "ended" and proc.frames == 20
    assert "KeyboardInterrupt" not in capfd.readouterr().err


def test_a_source_that_cannot_cross_to_the_child_fails_at_start_and_starts_nothing():
    class Unsendable:  # a class local to this test: pickle cannot name it
        def read(self):
            return None

        def open(self):
            pass

    async def main():
        proc = VisionProcess(Unsendable(), asyncio.get_running_loop(), lambda r: None)
        before = set(our_children())
        with pytest.raises((AttributeError, pickle.PicklingError), match="pickle"):
            proc.start()
        return proc, set(our_children()) - before

    proc, started = asyncio.run(main())
    assert proc._proc is None and started == set() and proc.status == "idle"


def test_a_child_that_cannot_load_its_profile_says_so_in_one_line(tmp_path):
    # the camera's own start checks the profile first; the child's guard is the last word
    proc, got, gone, _ = run(str(folder_of_dice(tmp_path)), profile_dir=str(tmp_path / "nope"))
    assert got == [] and len(gone) == 1 and isinstance(gone[0], CameraGone)
    assert "\n" not in str(gone[0]) and "nope" in str(gone[0])
    assert proc.status == "camera gone"


def test_the_child_reads_pip_dice_with_the_reader_it_is_named(tmp_path):
    from companion.vision.learned import LearnedReader
    from companion.vision.pipeline import read_frame
    from reader_lab.render_dice import render_dice_scene

    image, _ = render_dice_scene(7_000_003)  # the two readers see different dice here
    folder = tmp_path / "shots"
    folder.mkdir()
    for i in range(8):
        cv2.imwrite(str(folder / f"{i:02d}.png"), image)
    seen = {}
    for reader, read in (("learned", LearnedReader()), ("pips", None)):
        proc, got, gone, _ = run(str(folder), every_frame=True, reader=reader)
        assert gone == [] and got
        seen[reader] = sorted(d.face for d in got[-1].dice)
        assert seen[reader] == sorted(d.face for d in read_frame(image, pip_reader=read).dice)
    assert seen["learned"] != seen["pips"]
