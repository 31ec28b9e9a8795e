"""The pip-dice reader on small drawn dice: every face, both polarities, rotated, at any
sensible scale, touching; nothing read off an empty or noisy table."""

from __future__ import annotations

import math
import pickle

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.vision.pips import fit_face, read_pip_dice
from companion.vision.types import UNKNOWN

# Pip positions of each face on the 3x3 grid (units of the grid step).
LAYOUT = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (-1, 1), (1, 1), (0, 0)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}
WHITE, BLACK = (235, 238, 240), (25, 25, 30)
RED, CREAM = (40, 45, 200), (170, 220, 240)


def table(width=320, height=240, seed=0, colour=(120, 140, 150)) -> np.ndarray:
    """A plain table top with a little sensor noise."""
    rng = np.random.default_rng(seed)
    img = np.empty((height, width, 3), np.int16)
    img[:] = colour
    img += rng.integers(-6, 7, size=img.shape, dtype=np.int16)
    return np.clip(img, 0, 255).astype(np.uint8)


def draw_die(img, centre, size, face, angle=0.0, body=WHITE, pip=BLACK, pip_ratio=0.17):
    """A die seen from straight above: a rounded square body with its pips."""
    cx, cy = centre
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    half = size / 2
    corners = np.array([(-half, -half), (half, -half), (half, half), (-half, half)]) @ rot.T
    cv2.fillConvexPoly(img, np.rint(corners + (cx, cy)).astype(np.int32), body, cv2.LINE_AA)
    grid = size * 0.27
    radius = size * pip_ratio / 2
    for gx, gy in LAYOUT[face]:
        px, py = rot @ (gx * grid, gy * grid)
        cv2.circle(img, (round(cx + px), round(cy + py)), max(1, round(radius)), pip, -1,
                   cv2.LINE_AA)
    return img


def only_reading(img):
    readings = read_pip_dice(img)
    assert len(readings) == 1, readings
    return readings[0]


@pytest.mark.parametrize("face", range(1, 7))
def test_each_face_black_pips_on_a_white_die(face):
    reading = only_reading(draw_die(table(), (160, 120), 60, face))
    assert reading.face == str(face)
    assert reading.dice_set == "pip"
    assert reading.confidence >= 0.5
    # plain numbers: pickled from the camera's process, no numpy needed
    assert type(reading.confidence) is float and b"numpy" not in pickle.dumps(reading)
    assert abs(reading.centre[0] - 160) < 4 and abs(reading.centre[1] - 120) < 4
    x0, y0, x1, y1 = reading.box
    assert x0 < 160 < x1 and y0 < 120 < y1


@pytest.mark.parametrize("face", range(1, 7))
def test_each_face_light_pips_on_a_red_die(face):
    """The pips are lighter than the die here: the reader looks for both polarities."""
    reading = only_reading(draw_die(table(), (150, 110), 64, face, body=RED, pip=CREAM))
    assert reading.face == str(face)


@pytest.mark.parametrize("face,angle", [(2, 20), (3, 35), (4, 45), (5, 12), (6, 30), (6, 75)])
def test_rotated_dice(face, angle):
    reading = only_reading(draw_die(table(seed=1), (160, 120), 64, face, angle=angle))
    assert reading.face == str(face)


@pytest.mark.parametrize("size", [40, 90, 200])
def test_any_sensible_scale_without_a_hint(size):
    img = table(width=max(320, 2 * size + 60), height=max(240, 2 * size + 60), seed=2)
    centre = (img.shape[1] // 2, img.shape[0] // 2)
    for face in (5, 6):
        reading = only_reading(draw_die(img.copy(), centre, size, face, angle=10))
        assert reading.face == str(face)


def test_several_dice_touching_and_apart():
    img = table(width=480, height=240, seed=3)
    draw_die(img, (70, 80), 60, 6, angle=0)
    draw_die(img, (130, 80), 60, 3, angle=0)  # touches the 6
    draw_die(img, (300, 90), 60, 2, angle=25)
    draw_die(img, (400, 170), 60, 5, angle=60, body=RED, pip=CREAM)
    draw_die(img, (220, 180), 60, 1, angle=40)
    readings = read_pip_dice(img)
    got = sorted((round(r.centre[0] / 10), r.face) for r in readings)
    assert got == [(7, "6"), (13, "3"), (22, "1"), (30, "2"), (40, "5")]


def test_empty_and_noisy_tables_give_no_dice():
    assert read_pip_dice(table()) == []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        noise = rng.integers(0, 256, size=(240, 320, 3), dtype=np.uint8)
        grainy = np.clip(rng.normal(130, 25, size=(240, 320, 3)), 0, 255).astype(np.uint8)
        # garbage may at worst look like a die nobody can read, never like a face
        assert [r.face for r in read_pip_dice(noise)] in ([], [UNKNOWN])
        assert [r.face for r in read_pip_dice(grainy)] in ([], [UNKNOWN])


def test_scattered_spots_on_the_table_are_no_dice():
    """Dark spots of pip size on a plain table: no die body around them, no dice."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        spots = table(seed=seed)
        for x, y in rng.integers(20, 220, size=(12, 2)):
            cv2.circle(spots, (int(x), int(y)), 4, BLACK, -1)
        assert read_pip_dice(spots) == []


def test_min_confidence_turns_readings_into_unknown():
    img = draw_die(table(), (160, 120), 60, 4)
    assert only_reading(img).face == "4"
    unsure = read_pip_dice(img, min_confidence=1.01)
    assert [r.face for r in unsure] == [UNKNOWN]
    assert unsure[0].confidence == only_reading(img).confidence


def test_grey_and_bgra_frames_are_read_and_bad_dtypes_refused():
    img = draw_die(table(), (160, 120), 60, 3)
    assert only_reading(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)).face == "3"
    assert only_reading(cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)).face == "3"
    with pytest.raises(ValueError, match="uint8"):
        read_pip_dice(img.astype(np.float32))
    assert read_pip_dice(np.zeros((0, 0, 3), np.uint8)) == []


@settings(max_examples=60, deadline=None)
@given(
    face=st.integers(2, 6),
    angle=st.floats(0, 360),
    scale=st.floats(4, 40),
    squash=st.floats(0.8, 1.0),
)
def test_fit_face_accepts_any_view_of_a_layout(face, angle, scale, squash):
    """A face's layout seen rotated, at any scale, a little foreshortened still fits."""
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    pts = (np.array(LAYOUT[face], float) * (1.0, squash)) @ rot.T * scale + (500, 300)
    fit = fit_face(pts, diam=scale)
    assert fit is not None
    assert fit.centre == pytest.approx(tuple(pts.mean(axis=0)), abs=1e-6 * scale + 1e-6)


def test_fit_face_refuses_what_is_no_face():
    d = 10.0
    assert fit_face(np.array([(0, 0), (12, 0), (40, 3)], float), d) is None  # not a line
    assert fit_face(np.array([(0, 0), (80, 80)], float), d) is None  # too far apart
    assert fit_face(np.array([(0, 0), (10, 0), (0, 10), (30, 30)], float), d) is None
    six_in_a_row = np.array([(i * 12.0, 0.0) for i in range(6)])
    assert fit_face(six_in_a_row, d) is None
    seven = np.array([(0, 0)] * 7, float)
    assert fit_face(seven, d) is None
