"""Clutter scenes for the detector: things that are not dice, around dice or alone."""

from __future__ import annotations

import numpy as np

from reader_lab.clutter import KINDS, clutter_scene, draw_thing


def test_a_scene_is_the_same_for_a_seed_and_its_boxes_lie_inside_it():
    for seed in range(12):
        img, boxes = clutter_scene(seed, 256)
        again, boxes_again = clutter_scene(seed, 256)
        assert img.shape == (256, 256, 3) and img.dtype == np.uint8
        assert np.array_equal(img, again) and np.array_equal(boxes, boxes_again)
        assert boxes.shape[1] == 4
        assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
        assert (boxes >= -1).all() and (boxes <= 257).all()


def test_some_scenes_hold_no_die_and_most_hold_several():
    counts = [len(clutter_scene(seed, 256)[1]) for seed in range(40)]
    assert 3 <= sum(c == 0 for c in counts) <= 20
    assert sum(c >= 2 for c in counts) >= 15


def test_every_kind_of_thing_draws_something():
    rng = np.random.default_rng(0)
    for kind in KINDS:
        img = np.full((64, 64, 3), 128, np.uint8)
        draw_thing(rng, img, kind, 32, 32, 30)
        assert (img != 128).any(), kind
