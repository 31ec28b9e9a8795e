"""Hue-turned sets: validation photos with their colours turned, dice as they were."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from derived_sets import assert_unreadable_photo_keeps_built_set

from companion.vision.evaluate import LabelledDie, ManifestImage
from reader_lab import dice_photos, hue_turned


def _photo(path: Path) -> ManifestImage:
    """A grey photo holding a red square (a "die"), a white one and a black one."""
    img = np.full((120, 160, 3), 128, np.uint8)
    img[10:40, 10:40] = (0, 0, 255)  # red (BGR)
    img[10:40, 60:90] = 255
    img[10:40, 110:140] = 0
    cv2.imwrite(str(path), img)
    return ManifestImage(key=f"sub/{path.name}", path=path,
                         dice=(LabelledDie(face="5", box=(10, 10, 40, 40)),
                               LabelledDie(face="2", box=(60, 10, 90, 40))))


def test_a_hue_turn_moves_colours_and_keeps_white_grey_and_black():
    img = np.zeros((2, 4, 3), np.uint8)
    img[0, 0] = (0, 0, 255)  # red
    img[0, 1] = (255, 255, 255)
    img[0, 2] = (128, 128, 128)
    img[0, 3] = (0, 0, 0)
    img[1] = (0, 255, 0)  # green
    out = hue_turned.turn_hue(img, 120)
    assert tuple(out[0, 0]) == (0, 255, 0)  # red turned 120 degrees is green
    assert tuple(out[1, 0]) == (255, 0, 0)  # green is blue
    assert (out[0, 1:] == img[0, 1:]).all()  # no saturation, no hue to turn
    assert (hue_turned.turn_hue(img, 360) == img).all()


def test_a_source_is_turned_by_one_angle_of_the_list_every_time():
    angles = {hue_turned.angle_of(f"photo{i}") for i in range(200)}
    assert angles == set(hue_turned.ANGLES)  # each is drawn
    assert hue_turned.angle_of("photo7") == hue_turned.angle_of("photo7")


def test_built_once_each_image_under_its_key_with_its_dice(tmp_path):
    items = [_photo(tmp_path / "a.jpg"), _photo(tmp_path / "b.jpg")]
    folder = tmp_path / "cache" / "x-hue"
    built = hue_turned.build(items, ["s", "t"], folder)
    assert [m.key for m in built] == ["sub/a.png", "sub/b.png"]
    assert [dice_photos.source_of(m.key) for m in built] == ["a", "b"]
    rf = "dice_1_jpg.rf.0a1b.jpg"  # a Roboflow copy: its source photo is kept
    assert dice_photos.source_of(hue_turned.turned_key(rf)) == dice_photos.source_of(rf)
    assert [m.dice for m in built] == [m.dice for m in items]
    for m, source in zip(built, ["s", "t"], strict=True):
        img = cv2.imread(str(m.path))
        want = hue_turned.turn_hue(cv2.imread(str(tmp_path / (Path(m.key).stem + ".jpg"))),
                                   hue_turned.angle_of(source))
        assert (img == want).all()  # a PNG: exactly the turned photo
    made = built[0].path.stat().st_mtime_ns
    assert hue_turned.build(items, ["s", "t"], folder) == built
    assert built[0].path.stat().st_mtime_ns == made  # not built again
    hue_turned.build(items, ["s", "s"], folder)  # other sources: built again
    assert sorted(p.name for p in folder.parent.iterdir()) == ["x-hue"]


def test_an_unreadable_photo_names_it_and_keeps_the_built_set(tmp_path):
    items = [_photo(tmp_path / "a.jpg"), _photo(tmp_path / "b.jpg")]
    assert_unreadable_photo_keeps_built_set(hue_turned.build, items,
                                            tmp_path / "cache" / "x-hue", ["s", "t"],
                                            ["s", "u"])


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
@pytest.mark.parametrize("name", ["table-val", "trays-val"])
def test_a_validation_set_hue_turned_keeps_its_dice_and_source_photos(name, photo_cache):
    whole = dice_photos.load_set(name)
    turned = dice_photos.load_set(name + "-hue")
    assert [m.dice for m in turned] == [m.dice for m in whole]
    sources = dice_photos.sources_of(name, whole)
    assert dice_photos.sources_of(name + "-hue", turned) == sources
    # as the reports group them, by file name: the base set's source photos too
    assert len({dice_photos.source_of(m.key) for m in turned}) == len(
        {dice_photos.source_of(m.key) for m in whole})
    assert turned[0].path.is_relative_to(photo_cache)
