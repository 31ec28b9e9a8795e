"""Dyed sets: validation photos with their dice repainted, the table and the labels kept."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from derived_sets import assert_unreadable_photo_keeps_built_set

from companion.vision.evaluate import LabelledDie, ManifestImage
from reader_lab import dice_photos, dyed_dice


def _die(img: np.ndarray, x0: int, y0: int, side: int, body, pips) -> None:
    """A die seen from above: a square of ``body`` with four round ``pips``."""
    img[y0:y0 + side, x0:x0 + side] = body
    for fx in (0.28, 0.72):
        for fy in (0.28, 0.72):
            cv2.circle(img, (round(x0 + fx * side), round(y0 + fy * side)),
                       max(2, side // 9), pips, -1)


def _photo(path: Path) -> ManifestImage:
    """A grey-green table holding a white die with black pips and a black one with white."""
    img = np.full((120, 200, 3), (90, 120, 100), np.uint8)
    _die(img, 20, 30, 50, (245, 245, 245), (10, 10, 10))
    _die(img, 120, 30, 50, (15, 15, 15), (240, 240, 240))
    cv2.imwrite(str(path), img)
    return ManifestImage(key=f"sub/{path.name}", path=path,
                         dice=(LabelledDie(face="4", box=(20, 30, 70, 80)),
                               LabelledDie(face="4", box=(120, 30, 170, 80))))


def _value(bgr) -> float:
    return float(cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2HSV)[0, 0, 2]) / 255


def test_colours_are_dark_mid_or_light_bodies_with_pips_far_from_them():
    rng = np.random.default_rng(0)
    bodies, gaps = [], []
    for _ in range(300):
        body, pips = dyed_dice.draw_colours(rng)
        bodies.append(_value(body))
        gaps.append(abs(_value(body) - _value(pips)))
    bodies = np.array(bodies)
    assert (bodies < 0.36).mean() > 0.25 and (bodies > 0.69).mean() > 0.25  # both kinds
    assert min(gaps) > 0.18  # pips always stand out from the body (by design 0.2)


def test_a_dyed_die_keeps_its_pips_apart_and_the_table_outside_its_box():
    img = np.full((120, 200, 3), (90, 120, 100), np.uint8)
    _die(img, 20, 30, 50, (245, 245, 245), (10, 10, 10))
    body, pips = np.float32([30, 30, 200]), np.float32([200, 230, 240])  # red, cream pips
    out = img.copy()
    dyed_dice.dye_die(out, (20, 30, 70, 80), body, pips)
    face, pip = out[40, 45], out[44, 34]  # mid-body, a pip's centre (0.28 of the side)
    assert np.abs(face.astype(int) - body).max() < 25  # the white body is now red
    assert np.abs(pip.astype(int) - pips).max() < 25  # the black pips cream
    # the table away from the box is untouched
    assert (out[:, 100:] == img[:, 100:]).all() and (out[:5] == img[:5]).all()
    # the dark-bodied die: its body (the side most of it is on) takes the body colour
    dark = np.full((120, 200, 3), (90, 120, 100), np.uint8)
    _die(dark, 20, 30, 50, (15, 15, 15), (240, 240, 240))
    dyed_dice.dye_die(dark, (20, 30, 70, 80), body, pips)
    assert np.abs(dark[40, 45].astype(int) - body).max() < 25
    assert np.abs(dark[44, 34].astype(int) - pips).max() < 25


def test_a_box_too_small_or_off_the_photo_is_left_alone():
    img = np.full((50, 50, 3), 128, np.uint8)
    for box in ((10, 10, 11, 30), (60, 60, 90, 90), (-40, -40, -10, -10)):
        out = img.copy()
        dyed_dice.dye_die(out, box, np.float32([0, 0, 255]), np.float32([255, 255, 255]))
        assert (out == img).all()


def test_built_once_each_image_under_its_key_with_its_dice(tmp_path):
    items = [_photo(tmp_path / "a.jpg"), _photo(tmp_path / "b.jpg")]
    folder = tmp_path / "cache" / "x-dyed"
    built = dyed_dice.build(items, ["s", "t"], folder)
    assert [m.key for m in built] == ["sub/a.png", "sub/b.png"]
    assert [dice_photos.source_of(m.key) for m in built] == ["a", "b"]
    assert [m.dice for m in built] == [m.dice for m in items]
    a, b = (cv2.imread(str(m.path)) for m in built)
    plain = cv2.imread(str(items[0].path))
    assert (a[:, 80:110] == plain[:, 80:110]).all()  # the table between the dice kept
    assert not (a[30:80, 20:70] == plain[30:80, 20:70]).all()  # the dice repainted
    assert not (a == b).all()  # another source photo: other colours
    again = dyed_dice.build(items, ["s", "s"], tmp_path / "cache" / "y-dyed")
    assert (cv2.imread(str(again[1].path)) == a).all()  # one source: dyed alike
    made = built[0].path.stat().st_mtime_ns
    assert dyed_dice.build(items, ["s", "t"], folder) == built
    assert built[0].path.stat().st_mtime_ns == made  # not built again


def test_an_unreadable_photo_names_it_and_keeps_the_built_set(tmp_path):
    items = [_photo(tmp_path / "a.jpg"), _photo(tmp_path / "b.jpg")]
    assert_unreadable_photo_keeps_built_set(dyed_dice.build, items,
                                            tmp_path / "cache" / "x-dyed", ["s", "t"],
                                            ["s", "u"])


def test_webcam_boxes_are_not_whole_dice_and_the_others_are():
    assert not any(dice_photos.whole_die_boxes(n)
                   for n in ("webcam-white", "webcam-train", "webcam-val", "webcam-val-half"))
    assert all(dice_photos.whole_die_boxes(n)
               for n in ("table-train", "trays-train", "table-val", "webcam-two"))


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
def test_a_validation_set_dyed_keeps_its_dice_and_source_photos(photo_cache):
    whole = dice_photos.load_set("table-val")
    dyed = dice_photos.load_set("table-val-dyed")
    assert [m.dice for m in dyed] == [m.dice for m in whole]
    assert dice_photos.sources_of("table-val-dyed", dyed) == dice_photos.sources_of(
        "table-val", whole)
    assert dyed[0].path.is_relative_to(photo_cache)
