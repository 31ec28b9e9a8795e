"""The learned reader's crops (companion/vision/learned_model.py): numpy + OpenCV only."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.learned_model import CROP, crop


def _dot_centre(c: np.ndarray) -> tuple[float, float]:
    """Where the bright pixels of a crop are, on average (x, y)."""
    grey = c.astype(np.float64).mean(axis=2)
    ys, xs = np.nonzero(grey > 60)
    return float(xs.mean()), float(ys.mean())


@pytest.mark.parametrize("angle", [0.0, 30.0])
@pytest.mark.parametrize("side", [140.0, 100.0])
def test_area_crop_keeps_the_die_where_the_sampled_crop_has_it(angle, side):
    image = np.zeros((400, 500, 3), np.uint8)
    image[140:162, 192:214] = 255  # a 22 px bright square centred at (202.5, 150.5)
    plain = crop(image, 202.5, 150.5, side, angle)
    area = crop(image, 202.5, 150.5, side, angle, area=True)
    assert area.shape == plain.shape == (CROP, CROP, 3)
    (px, py), (ax, ay) = _dot_centre(plain), _dot_centre(area)
    # crop() puts (cx, cy) at pixel CROP / 2 of the crop (the convention the networks
    # were trained on), so the square's bright pixels centre there: the sampled crop's
    # (to 0.05 px), the area crop's within a fifth of a pixel (OpenCV 4.11, the Pi's:
    # 0.12 at 30 degrees; this was once checked against CROP / 2 - 0.5 within 0.6, which
    # 4.11 missed by 0.02)
    assert abs(px - CROP / 2) < 0.05 and abs(py - CROP / 2) < 0.05
    assert abs(ax - CROP / 2) < 0.2 and abs(ay - CROP / 2) < 0.2
    assert abs(ax - px) < 0.2 and abs(ay - py) < 0.2


def test_area_crop_averages_fine_detail_that_sampling_aliases():
    # one-pixel stripes shrunk about 4x: each crop pixel should be their mean (grey);
    # sampling picks single stripes and keeps full contrast
    image = np.zeros((300, 300, 3), np.uint8)
    image[:, ::2] = 255
    plain = crop(image, 150, 150, 4.1 * CROP)
    area = crop(image, 150, 150, 4.1 * CROP, area=True)
    assert plain.std() > 60
    assert area.std() < 12 and abs(area.mean() - 127.5) < 10


def test_area_crop_enlarging_is_the_sampled_crop():
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)
    for side in (20.0, 48.0):
        assert np.array_equal(crop(image, 70.3, 60.8, side, 15.0),
                              crop(image, 70.3, 60.8, side, 15.0, area=True))


@pytest.mark.parametrize("cx, cy", [(3.0, 4.0), (496.0, 397.0), (-30.0, 200.0)])
def test_area_crop_past_the_frame_edge_replicates_the_border(cx, cy):
    image = np.full((400, 500, 3), 90, np.uint8)
    image[:, :250] = 200
    plain = crop(image, cx, cy, 150.0)
    area = crop(image, cx, cy, 150.0, area=True)
    assert area.shape == (CROP, CROP, 3)
    assert np.abs(area.astype(int) - plain).mean() < 3


def test_area_crop_of_a_grey_frame_is_three_channels():
    image = np.full((200, 200), 77, np.uint8)
    out = crop(image, 100, 100, 120.0, area=True)
    assert out.shape == (CROP, CROP, 3) and (out == 77).all()
