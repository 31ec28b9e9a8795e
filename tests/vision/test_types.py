"""The plain data the pipeline hands out (companion/vision/types.py)."""

from __future__ import annotations

import pickle

import numpy as np

from companion.vision.types import DieReading


def test_a_reading_made_of_numpy_numbers_holds_python_ones_of_the_same_value():
    """whatever a reader computed with, a reading pickled from the camera's
    process needs no numpy to unpickle, and its values do not change."""
    f = np.float32
    r = DieReading("pip", "4", f(0.8123), tuple(np.int64(v) for v in (1, 2, 30, 40)),
                   (f(15.5), f(21.25)), np.float64(12.5), (f(3.5), f(4.0)), f(0.75))
    assert b"numpy" not in pickle.dumps(r)
    assert type(r.confidence) is float and r.confidence == float(f(0.8123))
    assert r.box == (1, 2, 30, 40) and all(type(v) is int for v in r.box)
    assert r.centre == (15.5, 21.25) and all(type(v) is float for v in r.centre)
    assert (r.angle, r.mat_xy, r.set_confidence) == (12.5, (3.5, 4.0), 0.75)
    assert all(type(v) is float for v in (r.angle, *r.mat_xy, r.set_confidence))


def test_a_reading_of_python_numbers_is_kept_as_given():
    box, centre = (1, 2, 3, 4), (2.0, 3.0)
    r = DieReading("red", "escape", 0.9, box, centre)
    assert r.box is box and r.centre is centre and r.mat_xy is None
    assert r == DieReading("red", "escape", 0.9, (1, 2, 3, 4), (2.0, 3.0))
