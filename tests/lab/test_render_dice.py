"""The renderer: deterministic, labelled scenes; upright sides; cube dice with the geometry a
camera would see and the faces a real die carries."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reader_lab.render_dice import cube_quads, render_dice_scene, side_faces


def _height(quad: np.ndarray) -> float:
    return float(quad[:, 1].max() - quad[:, 1].min())


def _tall(dice) -> int:
    """How many of the dice have a box taller than wide."""
    return sum((d.box[3] - d.box[1]) > 1.1 * (d.box[2] - d.box[0]) for d in dice)


@pytest.mark.parametrize(("seed", "cube"), [(5, False), (11, True)])
def test_rendered_scenes_are_deterministic_and_labelled(seed, cube):
    a, da = render_dice_scene(seed, cube=cube)
    b, db = render_dice_scene(seed, cube=cube)
    assert np.array_equal(a, b) and da == db
    assert a.shape == (416, 416, 3) and da
    for d in da:
        assert 1 <= d.face <= 6
        x0, y0, x1, y1 = d.box
        assert 0 <= x0 < x1 <= 416 and 0 <= y0 < y1 <= 416


def test_upright_scenes_show_sides_below_the_top_face_with_the_same_draws():
    # a side shown below its top face makes the die's box taller than wide; sides in
    # any direction do that far less often (60 scenes, 441 dice: 42 against 16)
    tall = {False: 0, True: 0}
    for seed in range(60):
        plain, dice = render_dice_scene(seed)
        up, up_dice = render_dice_scene(seed, upright=True)
        assert [d.face for d in up_dice] == [d.face for d in dice]  # the same draws
        tall[False] += _tall(dice)
        tall[True] += _tall(up_dice)
    assert tall[True] >= 30 and tall[True] >= 2 * tall[False], tall


@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_side_faces_are_the_four_a_real_die_has_around_its_top(top, seed):
    sides = side_faces(np.random.default_rng(seed), top)
    assert sorted(sides) == sorted(v for v in range(1, 7) if v not in (top, 7 - top))
    # across the die from each other: opposite faces sum to 7
    assert sides[0] + sides[2] == 7 and sides[1] + sides[3] == 7


def test_straight_down_shows_only_the_top_face_as_a_square():
    faces = cube_quads(40.0, yaw=0.0, elevation=math.pi / 2, roll=0.0)
    assert [i for i, _, _ in faces] == [0]
    quad = faces[0][1]
    assert np.allclose(np.ptp(quad, axis=0), [40.0, 40.0])


def test_a_low_camera_sees_the_front_larger_than_the_squashed_top_and_below_it():
    # 30 degrees above the table, die square to the camera: the top face is squashed to
    # sin 30 = half its height, the front side keeps cos 30 of it and lies below the top
    faces = {i: (q, facing) for i, q, facing in
             cube_quads(40.0, yaw=0.0, elevation=math.radians(30), roll=0.0)}
    assert set(faces) == {0, 4}  # top and the side facing the camera (-y)
    top, front = faces[0][0], faces[4][0]
    assert math.isclose(_height(top), 20.0, abs_tol=1e-6)
    assert math.isclose(_height(front), 40 * math.cos(math.radians(30)), abs_tol=1e-6)
    assert top[:, 1].mean() < front[:, 1].mean()  # image y points down
    assert faces[4][1] > faces[0][1]  # the front faces the camera more squarely


def test_a_turned_picture_turns_the_die_and_a_turned_die_shows_two_sides():
    up = {i: q for i, q, _ in cube_quads(40.0, 0.0, math.radians(30), 0.0)}
    down = {i: q for i, q, _ in cube_quads(40.0, 0.0, math.radians(30), math.pi)}
    assert np.allclose(down[0], -up[0])  # half a turn: the top now below the side
    assert down[0][:, 1].mean() > down[4][:, 1].mean()
    assert len(cube_quads(40.0, math.radians(35), math.radians(40), 0.0)) == 3


def test_cube_scenes_differ_from_flat_ones():
    cube, _ = render_dice_scene(11, cube=True)
    flat, _ = render_dice_scene(11)
    assert not np.array_equal(cube, flat)


def test_upright_cube_scenes_show_dice_taller_than_wide():
    # seen from the front and above, a die's box is its width by top + front: taller than
    # wide unless the camera looks almost straight down or the die is turned 45 degrees
    tall = {False: 0, True: 0}
    total = {False: 0, True: 0}
    for seed in range(40):
        for upright in (False, True):
            _, dice = render_dice_scene(seed, upright=upright, cube=True)
            total[upright] += len(dice)
            tall[upright] += _tall(dice)
    assert tall[True] > 0.3 * total[True] and tall[True] > 1.5 * tall[False], (tall, total)
