"""Annotated frames: a box per die in its set's colour, red for unknown, hands marked."""

from __future__ import annotations

import numpy as np

from companion.vision.annotate import (
    HAND_COLOUR,
    UNKNOWN_FACE_COLOUR,
    annotate,
    die_label,
    set_colour,
)
from companion.vision.settle import hand_note
from companion.vision.types import DieReading, FrameReading


def test_boxes_in_set_colours_and_the_frame_untouched():
    image = np.full((480, 640, 3), 30, np.uint8)
    before = image.copy()
    reading = FrameReading(640, 480, (
        DieReading("red", "alarm", 0.9, (100, 200, 150, 250), (125.0, 225.0)),
        DieReading("pip", "unknown", 0.2, (400, 200, 450, 250), (425.0, 225.0)),
    ), False, 0, (hand_note((300, 20, 600, 150)),))
    out = annotate(image, reading)
    assert np.array_equal(image, before)
    assert out.shape == image.shape
    assert tuple(out[240, 100]) == set_colour("red")  # left edge of the red die's box
    assert tuple(out[240, 400]) == UNKNOWN_FACE_COLOUR
    assert tuple(out[100, 300]) == HAND_COLOUR
    assert tuple(out[225, 125]) == (30, 30, 30)  # inside a box: the die itself shows


def test_grey_frames_and_labels():
    out = annotate(np.zeros((100, 100), np.uint8), FrameReading(100, 100))
    assert out.shape == (100, 100, 3)
    assert die_label(DieReading("pip", "6", 0.954, (0, 0, 1, 1), (0.0, 0.0))) == "6 0.95"
    assert die_label(DieReading("blue", "wild-2", 0.5, (0, 0, 1, 1), (0.0, 0.0))) == \
        "blue wild-2 0.50"
    assert set_colour("green") == set_colour("green") != set_colour("teal")
