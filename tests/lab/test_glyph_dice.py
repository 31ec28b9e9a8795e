"""Dice with made-up symbols for the few-shot embedding (reader_lab.glyph_dice)."""

from __future__ import annotations

import numpy as np
import pytest

from reader_lab import glyph_dice as G


def test_a_glyph_is_one_to_three_shapes_inside_the_face():
    rng = np.random.default_rng(0)
    for _ in range(200):
        glyph = G.random_glyph(rng)
        assert 1 <= len(glyph) <= 3
        for kind, cx, cy, size, *_ in glyph:
            assert kind in G.KINDS
            assert cx - size / 2 >= -1 and cx + size / 2 <= 1
            assert cy - size / 2 >= -1 and cy + size / 2 <= 1


def test_views_are_drawn_the_same_for_a_seed_and_differ_from_one_another():
    a, b = G.glyph_views(7, 3, 32), G.glyph_views(7, 3, 32)
    assert a.shape == (3, 32, 32, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    assert not np.array_equal(a[0], a[1])
    assert not np.array_equal(a, G.glyph_views(8, 3, 32))


def test_the_glyph_is_drawn_in_ink_on_the_face():
    face = np.zeros((64, 64, 3), np.float32)
    G.draw_glyph(face, [("disc", 0.0, 0.0, 1.0, 0.0, 4, 0.2)], (255.0, 255.0, 255.0))
    assert face[32, 32].min() == 255 and face[2, 2].max() == 0  # a disc in the middle
    ring = np.zeros((64, 64, 3), np.float32)
    G.draw_glyph(ring, [("ring", 0.0, 0.0, 1.0, 0.0, 4, 0.2)], (255.0, 255.0, 255.0))
    assert ring[32, 32].max() == 0 and ring.max() == 255  # a ring: its middle empty


def test_a_view_cut_exactly_centres_the_die_in_the_crop():
    # without jitter the die (not the table) fills the crop's middle: the middle
    # pixels' colours differ little from each other while the views' tables differ
    views = G.glyph_views(3, 4, 48, jitter=False)
    middle = views[:, 22:26, 22:26].reshape(4, -1, 3).astype(float)
    assert views.shape == (4, 48, 48, 3)
    assert middle.std(1).mean() < 60


def test_a_bank_holds_each_glyph_views_as_drawn_alone():
    bank = G.glyph_bank(3, 2, 24, seed=5)
    assert bank.shape == (3, 2, 24, 24, 3)
    assert np.array_equal(bank[1], G.glyph_views(5 * 1_000_003 + 1, 2, 24))
    assert G.glyph_bank(0, 2, 24).shape == (0, 2, 24, 24, 3)


def test_the_picture_command_writes_a_png(tmp_path, capsys):
    import cv2

    out = tmp_path / "g.png"
    assert G.main([str(out), "--glyphs", "2", "--views", "3"]) == 0
    img = cv2.imread(str(out))
    assert img.shape == (2 * 96, 40 + 3 * 96, 3)
    assert capsys.readouterr().out.strip() == str(out)
    for bad in (["--glyphs", "0"], ["--views", "99"]):
        with pytest.raises(SystemExit):
            G.main([str(out), *bad])
    assert "--glyphs must be 1-64" in capsys.readouterr().err
