"""The synthetic camera: deterministic scenes with honest ground truth."""

from __future__ import annotations

import math
from collections import Counter

import cv2
import numpy as np
import pytest

from companion.vision.dice_data import load_dice_data
from companion.vision.mat import find_mat
from companion.vision.mat_spec import DEFAULT_MAT
from companion.vision.synthetic import (
    PIP_FACES,
    DieSpec,
    all_dice_specs,
    draw_mat,
    face_texture,
    mosaic_specs,
    pip_dice_specs,
    render_scene,
    render_view,
    vault_scene,
)

DICE = load_dice_data()


def test_same_seed_same_frame_and_truth_other_seed_differs() -> None:
    a, ta = render_scene(11, width=640, height=480)
    b, tb = render_scene(11, width=640, height=480)
    c, tc = render_scene(12, width=640, height=480)
    assert a.shape == (480, 640, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b) and ta.dice == tb.dice
    assert not np.array_equal(a, c) and ta.dice != tc.dice


def test_default_scene_holds_all_sixteen_vault_assault_dice() -> None:
    _img, truth = render_scene(3)
    assert len(truth.dice) == 16
    assert Counter(d.dice_set for d in truth.dice) == {"red": 3, "blue": 3, "black": 5,
                                                       "white": 5}
    for d in truth.dice:
        assert d.face in DICE.kinds[d.kind]
        assert d.face in DICE.set_faces(d.dice_set)


def _poly_mm(d, side: float) -> np.ndarray:
    th = math.radians(d.angle)
    c, s = math.cos(th), math.sin(th)
    h = side / 2
    return np.array([(d.mat_xy[0] + u * c - v * s, d.mat_xy[1] + u * s + v * c)
                     for u, v in ((-h, -h), (h, -h), (h, h), (-h, h))], np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_dice_never_overlap_stay_on_the_mat_and_often_touch(seed: int) -> None:
    _img, truth = render_view(seed, touching=0.9)
    polys = [_poly_mm(d, truth.die_mm * 0.97) for d in truth.dice]
    touching = 0
    for i in range(len(polys)):
        for j in range(i + 1, len(polys)):
            area, _ = cv2.intersectConvexConvex(polys[i], polys[j])
            assert area < 1.0
            if math.dist(truth.dice[i].mat_xy, truth.dice[j].mat_xy) < truth.die_mm * 1.2:
                touching += 1
    assert touching >= 3
    for d in truth.dice:
        x, y = d.mat_xy
        assert 10 < x < DEFAULT_MAT.width_mm - 10 and 10 < y < DEFAULT_MAT.height_mm - 10


def test_camera_frame_shows_all_markers_and_truth_agrees_with_the_mat_fit() -> None:
    img, truth = render_scene(5, width=1280, height=720, perspective=0.08)
    mat = find_mat(img)
    assert mat is not None and set(mat.markers) == {0, 1, 2, 3}
    for d in truth.dice:
        (mx, my), = mat.frame_to_mm([d.centre])
        assert math.dist((mx, my), d.mat_xy) < 1.5
        x0, y0, x1, y1 = d.box
        assert x0 <= d.centre[0] <= x1 and y0 <= d.centre[1] <= y1


def test_top_down_view_truth_is_in_view_pixels() -> None:
    view, truth = render_view(8, lighting="flat")
    assert view.shape[:2] == (DEFAULT_MAT.view_size[1], DEFAULT_MAT.view_size[0])
    red = [d for d in truth.dice if d.dice_set == "red"][0]
    cx, cy = red.centre
    assert red.centre == pytest.approx((red.mat_xy[0] * 2, red.mat_xy[1] * 2))
    # Just inside the die's edge the body colour shows: red.
    th = math.radians(red.angle)
    off = 0.4 * truth.die_mm * 2
    px = view[round(cy - off * math.cos(th)), round(cx + off * math.sin(th))].astype(int)
    assert px[2] > 120 and px[2] > px[1] + 60 and px[2] > px[0] + 60


def test_pip_dice_render_with_pip_faces() -> None:
    view, truth = render_view(4, dice=pip_dice_specs(6), lighting="flat")
    assert len(truth.dice) == 6
    assert all(d.dice_set == "pip" and d.face in PIP_FACES for d in truth.dice)
    # A five shows its centre pip: dark at the die's centre.
    _v, t5 = render_view(4, dice=[DieSpec("pip", "pip", "5", (200.0, 150.0), 20.0)],
                         lighting="flat")
    cx, cy = (round(v) for v in t5.dice[0].centre)
    assert _v[cy, cx].max() < 90
    _v, t2 = render_view(4, dice=[DieSpec("pip", "pip", "2", (200.0, 150.0), 20.0)],
                         lighting="flat")
    assert _v[cy, cx].min() > 150


def test_lighting_varies_between_scenes() -> None:
    means = [render_view(s, dice=[])[0].mean() for s in range(6)]
    assert max(means) - min(means) > 15
    a, _ = render_view(1, dice=[], lighting="flat")
    b, _ = render_view(2, dice=[], lighting="flat")
    assert abs(a.mean() - b.mean()) < 2


def test_every_face_of_a_set_draws_differently() -> None:
    for set_name in DICE.sets:
        seen = []
        for face in DICE.set_faces(set_name):
            tex, alpha = face_texture(DICE, set_name, face, 48)
            assert tex.shape == (48, 48, 3) and alpha.shape == (48, 48)
            gray = cv2.cvtColor(tex, cv2.COLOR_BGR2GRAY).astype(float)
            for other in seen:
                assert np.abs(gray - other).mean() > 4
            seen.append(gray)


def test_mosaic_specs_lay_out_the_four_pieces_in_order() -> None:
    specs = mosaic_specs(DICE, 2, (200.0, 150.0), angle=0.0, gap_mm=0.0)
    faces = [s.face for s in specs]
    assert faces == ["piece-2-1", "piece-2-2", "piece-2-3", "piece-2-4"]
    xs = [s.xy_mm for s in specs]
    assert xs[0][0] < xs[1][0] and xs[0][1] < xs[2][1]
    assert math.dist(xs[0], xs[1]) == pytest.approx(DICE.die_mm)
    with_wild = mosaic_specs(DICE, 3, (200.0, 150.0), wild_position=2)
    assert [s.face for s in with_wild][1] == "wild-3"


@pytest.mark.parametrize("scenario", ["mosaic", "mosaic_swapped", "escapes", "random"])
def test_vault_scene_uses_each_physical_die_once(scenario: str) -> None:
    _, specs = vault_scene(np.random.default_rng(1), DICE, scenario)
    assert sorted((s.dice_set, s.kind) for s in specs) == sorted(
        (s.dice_set, s.kind) for s in all_dice_specs(DICE))


def test_the_mat_artwork_carries_the_four_markers() -> None:
    mat = draw_mat(DEFAULT_MAT, px_per_mm=3.0)
    assert mat.shape[:2] == (round(297 * 3), round(420 * 3))
    found = find_mat(mat)
    assert found is not None and set(found.markers) == {0, 1, 2, 3}
