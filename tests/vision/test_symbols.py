"""Reading symbol dice on the mat view with the shipped synthetic profile.

The large figures (thousands of frames) come from benchmarks/symbol_accuracy.py; here
a smaller honest sample holds the same bars.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion.games.vault_assault.interpret import interpret
from companion.vision.mat import find_mat
from companion.vision.mat_spec import DEFAULT_MAT
from companion.vision.profile import default_profile_path, load_profile
from companion.vision.symbols import read_symbol_dice
from companion.vision.synthetic import (
    DieSpec,
    mosaic_specs,
    pip_dice_specs,
    render_scene,
    render_view,
    truth_reading,
    vault_scene,
)
from companion.vision.types import UNKNOWN, FrameReading

PROFILE = load_profile(default_profile_path("synthetic"))
PPM = DEFAULT_MAT.px_per_mm


def match(readings, truth):
    """(right, unknown, wrong, missed, extra) matching readings to true dice."""
    pts = [(d.mat_xy[0] * PPM, d.mat_xy[1] * PPM) for d in truth.dice]
    used: set[int] = set()
    right = unknown = wrong = extra = 0
    for r in readings:
        dist = [math.dist(r.centre, p) if i not in used else math.inf for i, p in enumerate(pts)]
        i = int(np.argmin(dist)) if dist else -1
        if i < 0 or dist[i] > truth.die_mm * PPM / 2:
            extra += 1
            continue
        used.add(i)
        t = truth.dice[i]
        if r.face == UNKNOWN:
            unknown += 1
        elif (r.face, r.dice_set) == (t.face, t.dice_set):
            right += 1
        else:
            wrong += 1
    return right, unknown, wrong, len(truth.dice) - len(used), extra


def test_fifty_busy_views_meet_the_accuracy_bar_with_no_false_verdicts() -> None:
    total = right_all = wrong_all = 0
    false_verdicts = 0
    for k in range(50):
        rng = np.random.default_rng([4242, k])
        _, specs = vault_scene(rng)
        view, truth = render_view(rng, dice=specs)
        readings = read_symbol_dice(view, PROFILE)
        right, _unknown, wrong, _missed, _extra = match(readings, truth)
        total += len(truth.dice)
        right_all += right
        wrong_all += wrong
        seen = interpret(FrameReading(840, 594, tuple(readings), mat_found=True), PROFILE.dice)
        real = interpret(truth_reading(truth), PROFILE.dice)
        false_verdicts += sum(s.complete and not r.complete
                              for s, r in zip(seen.stages, real.stages, strict=True))
        false_verdicts += sum(seen.robbers[n].escaped and not real.robbers[n].escaped
                              for n in real.robbers)
    assert total == 800
    assert right_all / total >= 0.995
    assert wrong_all <= 1
    assert false_verdicts == 0


def test_camera_frames_through_the_mat_warp() -> None:
    total = right_all = 0
    for k in range(10):
        rng = np.random.default_rng([99, k])
        frame, truth = render_scene(rng, width=1280, height=720)
        mat = find_mat(frame)
        assert mat is not None
        right, *_ = match(read_symbol_dice(mat.warp(frame), PROFILE), truth)
        total += len(truth.dice)
        right_all += right
    assert right_all / total >= 0.99


@pytest.mark.parametrize("face", ["piece-1-1", "piece-3-2", "alarm", "wild-4"])
def test_any_angle_reads_the_same_face_and_the_glyphs_turn(face: str) -> None:
    kind = next(k for k in PROFILE.dice.sets["red"].dice if face in PROFILE.dice.kinds[k])
    for angle in range(0, 360, 30):
        view, truth = render_view(angle, dice=[DieSpec("red", kind, face, (200.0, 150.0),
                                                       float(angle))])
        (r,) = read_symbol_dice(view, PROFILE)
        assert (r.dice_set, r.face) == ("red", face), angle
        assert r.confidence >= 0.5
        if face.startswith("piece"):
            assert abs((r.angle - angle + 180) % 360 - 180) < 8, (angle, r.angle)


def test_a_touching_mosaic_reads_piece_by_piece() -> None:
    specs = mosaic_specs(PROFILE.dice, 2, (210.0, 150.0), angle=33.0, gap_mm=0.0)
    view, truth = render_view(5, dice=specs)
    readings = read_symbol_dice(view, PROFILE)
    assert sorted(r.face for r in readings) == ["piece-2-1", "piece-2-2", "piece-2-3",
                                               "piece-2-4"]
    assert interpret(FrameReading(840, 594, tuple(readings)), PROFILE.dice).complete_stages == (2,)


def test_readings_carry_view_boxes_and_mat_millimetres() -> None:
    view, truth = render_view(31)
    readings = read_symbol_dice(view, PROFILE)
    assert len(readings) == 16
    for r in readings:
        x0, y0, x1, y1 = r.box
        assert x0 < r.centre[0] < x1 and y0 < r.centre[1] < y1
        assert 30 <= x1 - x0 <= 48
        assert r.mat_xy == pytest.approx((r.centre[0] / PPM, r.centre[1] / PPM))
        assert 0.0 <= r.confidence <= 1.0 and 0.0 <= r.angle < 360.0


def test_pip_dice_are_not_mistaken_for_symbol_faces() -> None:
    view, truth = render_view(12, dice=pip_dice_specs(8))
    readings = read_symbol_dice(view, PROFILE)
    assert len(readings) == 8
    assert all(r.face == UNKNOWN for r in readings)


def test_a_face_the_profile_never_learnt_reads_unknown() -> None:
    partial = load_profile(default_profile_path("synthetic"))
    del partial.templates[("black", "escape")]
    spec = [DieSpec("black", "robber", "escape", (200.0 + 40 * i, 150.0), 30.0 * i)
            for i in range(5)]
    view, _truth = render_view(3, dice=spec)
    readings = read_symbol_dice(view, partial)
    assert len(readings) == 5
    assert all(r.face == UNKNOWN and r.dice_set == "black" for r in readings)


def test_empty_mat_and_garbage_images() -> None:
    view, _ = render_view(1, dice=[])
    assert read_symbol_dice(view, PROFILE) == []
    grey = np.full((594, 840, 3), 128, np.uint8)
    assert read_symbol_dice(grey, PROFILE) == []
    noise = np.random.default_rng(0).integers(0, 256, (200, 300, 3), dtype=np.uint8)
    assert all(r.face == UNKNOWN for r in read_symbol_dice(noise, PROFILE))
    with pytest.raises(ValueError, match="BGR image"):
        read_symbol_dice(np.zeros((594, 840), np.uint8), PROFILE)


def test_a_whole_frame_without_the_mat_view_measures_the_dice_itself() -> None:
    right = total = 0
    for k in range(2):
        frame, truth = render_scene(np.random.default_rng([5, k]), perspective=False)
        readings = read_symbol_dice(frame, PROFILE)
        assert all(r.mat_xy is None for r in readings)
        for r in readings:  # whatever is not a die (the markers) has no face
            if all(math.dist(r.centre, t.centre) > 12 for t in truth.dice):
                assert r.face == UNKNOWN
        for t in truth.dice:
            near = [r for r in readings if math.dist(r.centre, t.centre) < 10]
            total += 1
            right += bool(near) and (near[0].face, near[0].dice_set) == (t.face, t.dice_set)
    assert right / total >= 0.95
