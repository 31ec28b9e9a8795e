"""reader_lab/benchmarks/still_stream.py: a still camera's frames, and what the trackers settle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from scripts import load_script

from companion.vision.evaluate import LabelledDie
from companion.vision.types import DieReading, FrameReading

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/still_stream.py"


def die(x, face):
    return DieReading("pip", face, 0.9, (x - 10, 0, x + 10, 20), (float(x), 10.0))


def test_a_shaken_frame_is_the_scene_a_little_changed():
    bench = load_script(SCRIPT)
    image = np.full((48, 64, 3), 128, np.uint8)
    image[10:30, 20:40] = 250
    a = bench.shaken(image, np.random.default_rng(0), 2.0)
    b = bench.shaken(image, np.random.default_rng(1), 2.0)
    assert a.shape == image.shape and a.dtype == np.uint8
    assert not np.array_equal(a, image) and not np.array_equal(a, b)
    assert np.abs(a.astype(int) - image).mean() < 6  # noise, not another scene


def test_settled_dice_are_counted_against_the_labels_and_flicker_is_found():
    bench = load_script(SCRIPT)
    labels = [LabelledDie("3", (40, 0, 60, 20)), LabelledDie("5", (90, 0, 110, 20)),
              LabelledDie("2", (140, 0, 160, 20)), LabelledDie("6", (190, 0, 210, 20))]
    settled = FrameReading(640, 480, (die(50, "3"), die(100, "unknown"), die(150, "4"),
                                      die(400, "1")))
    assert bench.tally(settled, labels) == {"right": 1, "unknown": 1, "wrong": 1,
                                            "not settled": 1, "no die there": 1}
    frames = [FrameReading(640, 480, (die(50, "3"), die(100, "5"))),
              FrameReading(640, 480, (die(50, "unknown"), die(100, "5"))),
              FrameReading(640, 480, (die(50, "3"),))]
    assert bench.flickers(frames, labels) == 1


def test_fewer_frames_than_the_tracker_needs_is_refused_in_one_line():
    done = subprocess.run([sys.executable, str(SCRIPT), "--frames", "2"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "still_stream.py: error: --frames (2) must be at least --settle (3), which must be "
        "at least 1")
