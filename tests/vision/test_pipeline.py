"""The pipeline: mat found, readers tied together, everything back in frame pixels and mm."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision import pipeline as pipeline_module
from companion.vision.mat_spec import DEFAULT_MAT
from companion.vision.pipeline import MotionDetector, Pipeline, merge_readings, read_frame
from companion.vision.settle import hand_boxes
from companion.vision.synthetic import pip_dice_specs, render_scene
from companion.vision.types import DieReading


def scene(seed=3, n=4, **kw):
    kw.setdefault("lighting", "flat")
    kw.setdefault("touching", 0.0)
    return render_scene(seed, dice=pip_dice_specs(n), **kw)


def mm_to_frame(truth, pts):
    return cv2.perspectiveTransform(
        np.float64(pts).reshape(-1, 1, 2), truth.homography).reshape(-1, 2)


def die_at(xy, face="3", dice_set="pip", half=15):
    x, y = (float(v) for v in xy)
    return DieReading(dice_set, face, 0.9, (int(x - half), int(y - half), int(x + half),
                                            int(y + half)), (x, y))


def test_dice_get_mat_mm_and_marker_or_off_mat_readings_are_dropped():
    image, truth = scene()
    on_mat, on_marker, off_mat = mm_to_frame(truth, [(200, 150), (30, 30), (-30, 150)])
    seen = []

    def reader(img):
        seen.append(img.shape)
        return [die_at(on_mat, "5"), die_at(on_marker, "1"), die_at(off_mat, "2")]

    reading = read_frame(image, pip_reader=reader, frame_index=7)
    assert seen == [image.shape]  # pip dice are read on the frame itself
    assert reading.mat_found and reading.frame_index == 7
    assert (reading.width, reading.height) == (image.shape[1], image.shape[0])
    assert [d.face for d in reading.dice] == ["5"]
    assert np.allclose(reading.dice[0].mat_xy, (200, 150), atol=1.5)
    assert reading.dice[0].centre == pytest.approx(tuple(on_mat))
    assert "mat:0,1,2,3" in reading.notes
    assert "dropped 1 off the mat" in reading.notes
    assert "dropped 1 on a marker" in reading.notes


def test_without_a_mat_the_whole_frame_is_read():
    table = np.full((480, 640, 3), (60, 90, 120), np.uint8)
    dice = [die_at((20, 20)), die_at((600, 440), "6")]
    reading = read_frame(table, pip_reader=lambda img: dice)
    assert not reading.mat_found
    assert reading.dice == tuple(dice)
    assert all(d.mat_xy is None for d in reading.dice)


def test_symbol_dice_are_read_in_the_top_down_view_and_mapped_back():
    image, truth = scene(seed=5, perspective=0.08)
    profile = object()
    calls = []
    s = DEFAULT_MAT.px_per_mm

    def symbols(view, prof, spec):
        calls.append((view.shape, prof, spec))
        # a die at (250, 100) mm in the view, 16 mm across
        return [DieReading("red", "alarm", 0.97, (int(242 * s), int(92 * s), int(258 * s),
                                                  int(108 * s)), (250 * s, 100 * s), 30.0)]

    reading = read_frame(image, profile=profile, pip_reader=lambda img: [],
                         symbol_reader=symbols)
    w, h = DEFAULT_MAT.view_size
    assert calls == [((h, w, 3), profile, DEFAULT_MAT)]
    (die,) = reading.dice
    assert (die.dice_set, die.face, die.angle) == ("red", "alarm", 30.0)
    assert die.mat_xy == pytest.approx((250, 100))
    expected = mm_to_frame(truth, [(250, 100)])[0]
    assert np.abs(np.array(die.centre) - expected).max() < 2.0
    x0, y0, x1, y1 = die.box
    assert x0 < die.centre[0] < x1 and y0 < die.centre[1] < y1
    corners = mm_to_frame(truth, [(242, 92), (258, 108)])
    assert abs((x1 - x0) - abs(corners[1, 0] - corners[0, 0])) < 12


def test_symbol_reader_is_not_called_without_a_profile():
    image, _ = scene()

    def symbols(view, prof, spec):
        raise AssertionError("no profile, no symbol dice")

    read_frame(image, pip_reader=lambda img: [], symbol_reader=symbols)


def test_merge_prefers_a_symbol_reading_that_knows_its_set():
    pip = die_at((100, 100), "1")
    other = die_at((300, 100), "4")
    red = die_at((102, 98), "escape", dice_set="red")
    unsure = DieReading("unknown", "unknown", 0.2, (285, 85, 315, 115), (300.0, 100.0),
                        set_confidence=0.1)
    apart = die_at((500, 100), "loot", dice_set="black")
    merged = merge_readings([pip, other], [red, unsure, apart])
    assert sorted(d.face for d in merged) == ["4", "escape", "loot"]


def test_real_pip_reader_on_a_synthetic_table():
    """End to end with the real reader: whatever it reads lands at the right mm."""
    found_right = 0
    for seed in range(3):
        image, truth = scene(seed=seed, n=3, width=1920, height=1080, perspective=False)
        reading = read_frame(image)
        assert reading.mat_found
        for die in reading.dice:
            nearest = min(truth.dice, key=lambda t: np.hypot(t.mat_xy[0] - die.mat_xy[0],
                                                             t.mat_xy[1] - die.mat_xy[1]))
            if np.hypot(nearest.mat_xy[0] - die.mat_xy[0],
                        nearest.mat_xy[1] - die.mat_xy[1]) < 4.0:
                found_right += die.face == nearest.face
    assert found_right >= 3


def test_motion_detector_sees_a_hand_but_not_a_die():
    still = np.full((720, 1280, 3), (60, 120, 70), np.uint8)
    motion = MotionDetector()
    assert motion.update(still) == []
    assert motion.update(still.copy()) == []
    die = still.copy()
    cv2.rectangle(die, (600, 300), (640, 340), (230, 230, 230), -1)
    assert motion.update(die) == []  # a die landing is not a hand
    hand = die.copy()
    cv2.ellipse(hand, (300, 400), (220, 120), 20, 0, 360, (150, 170, 220), -1)
    (box,) = motion.update(hand)
    x0, y0, x1, y1 = box
    assert x0 < 120 and y0 < 320 and x1 > 480 and y1 > 480
    assert x1 < 620 and x0 >= 0


def test_pipeline_marks_hands_and_looks_for_the_mat_now_and_then(monkeypatch):
    image, _ = scene()
    calls = []
    real_find = pipeline_module.find_mat

    def counting_find(img, spec):
        calls.append(1)
        return real_find(img, spec)

    monkeypatch.setattr(pipeline_module, "find_mat", counting_find)
    pipe = Pipeline(mat_every=10, pip_reader=lambda img: [])
    readings = [pipe.process(image) for _ in range(25)]
    assert len(calls) == 3  # frames 0, 10, 20
    assert all(r.mat_found for r in readings)
    assert [r.frame_index for r in readings[:3]] == [0, 1, 2]
    hand = image.copy()
    cv2.circle(hand, (640, 360), 180, (140, 160, 210), -1)
    reading = pipe.process(hand)
    assert len(hand_boxes(reading.notes)) == 1
    # a bump of the camera moves everything: the mat is looked for at once
    before = len(calls)
    pipe.process(np.roll(image, 40, axis=1))
    assert len(calls) == before + 1


def test_a_mat_hidden_for_a_moment_is_kept(monkeypatch):
    image, _ = scene()
    blank = np.full_like(image, 90)
    pipe = Pipeline(mat_every=1, mat_keep=2, motion=False, pip_reader=lambda img: [])
    assert pipe.process(image).mat_found
    assert pipe.process(blank).mat_found  # one look missed: kept
    assert pipe.process(blank).mat_found  # two: kept
    assert not pipe.process(blank).mat_found  # three: gone
    assert pipe.process(image).mat_found


def test_real_symbol_reader_with_the_shipped_profile():
    """All 16 Vault Assault dice through the whole pipeline: each die read lands on the
    die the renderer put there (frame pixels and mat mm)."""
    from companion.vision.profile import default_profile_path, load_profile

    profile = load_profile(default_profile_path("synthetic"))
    image, truth = render_scene(11, width=1280, height=720)
    reading = read_frame(image, profile=profile)
    assert reading.mat_found
    symbol = [d for d in reading.dice if d.dice_set != "pip"]
    right = 0
    for die in symbol:
        nearest = min(truth.dice, key=lambda t: np.hypot(t.centre[0] - die.centre[0],
                                                         t.centre[1] - die.centre[1]))
        assert np.hypot(nearest.centre[0] - die.centre[0],
                        nearest.centre[1] - die.centre[1]) < 6.0
        assert np.hypot(nearest.mat_xy[0] - die.mat_xy[0],
                        nearest.mat_xy[1] - die.mat_xy[1]) < 2.5
        x0, y0, x1, y1 = die.box
        assert x0 <= nearest.centre[0] <= x1 and y0 <= nearest.centre[1] <= y1
        right += (die.dice_set, die.face) == (nearest.dice_set, nearest.face)
    assert right >= 15


def test_pips_off_for_a_symbol_only_game():
    image, _ = scene()

    def pips(img):
        raise AssertionError("pip reader called with pips=False")

    reading = read_frame(image, profile=object(), pips=False, pip_reader=pips,
                         symbol_reader=lambda view, prof, spec: [])
    assert reading.dice == () and reading.mat_found
    pipe = Pipeline(profile=object(), pips=False, pip_reader=pips,
                    symbol_reader=lambda view, prof, spec: [])
    assert pipe.process(image).dice == ()
