"""Half-size sets: validation photos with their dice half as large, four to an image."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from derived_sets import assert_unreadable_photo_keeps_built_set

from companion.vision.evaluate import LabelledDie, ManifestImage
from reader_lab import dice_photos, half_size


def _photo(path: Path, square: tuple[int, int, int, int], colour: int) -> ManifestImage:
    """A 640x640 grey photo with one bright square (a "die") at ``square``."""
    img = np.full((640, 640, 3), 60, np.uint8)
    x0, y0, x1, y1 = square
    img[y0:y1, x0:x1] = colour
    cv2.imwrite(str(path), img)
    return ManifestImage(key=path.name, path=path,
                         dice=(LabelledDie(face="3", box=(x0, y0, x1, y1)),))


@pytest.fixture
def copies(tmp_path):
    return [_photo(tmp_path / "a.png", (100, 200, 180, 280), 250),
            _photo(tmp_path / "b.png", (400, 40, 460, 100), 200)]


def test_a_mosaic_holds_the_copies_cycled_at_half_size_with_their_boxes(copies):
    canvas, dice = half_size.mosaic(copies)
    assert canvas.shape == (640, 640, 3)
    # tiles in order a, b, a, b (top left, top right, bottom left, bottom right)
    assert dice == [("3", (50.0, 100.0, 90.0, 140.0)), ("3", (520.0, 20.0, 550.0, 50.0)),
                    ("3", (50.0, 420.0, 90.0, 460.0)), ("3", (520.0, 340.0, 550.0, 370.0))]
    for (_, (x0, y0, x1, y1)), colour in zip(dice, (250, 200, 250, 200), strict=True):
        inside = canvas[int(y0) + 2:int(y1) - 2, int(x0) + 2:int(x1) - 2]
        assert (inside == colour).all()  # the die's pixels moved with its box
    assert (canvas[300:320, 0:320] == 60).all()  # no die where none was


def test_a_photo_not_square_keeps_its_shape_in_its_tile(tmp_path):
    img = np.full((480, 640, 3), 90, np.uint8)
    cv2.imwrite(str(tmp_path / "w.png"), img)
    m = ManifestImage(key="w.png", path=tmp_path / "w.png",
                      dice=(LabelledDie(face="6", box=(0, 0, 64, 48)),))
    canvas, dice = half_size.mosaic([m])
    assert dice[0] == ("6", (0.0, 0.0, 32.0, 24.0))
    assert (canvas[0:240, 0:320] == 90).all() and (canvas[240:320, 0:320] == 0).all()


def test_built_once_and_again_only_when_the_set_changes(copies, tmp_path):
    folder = tmp_path / "cache" / "x-half"
    first = half_size.build(copies, ["s", "s"], folder)
    assert [m.key for m in first] == ["0000_s.png"] and len(first[0].dice) == 4
    png = folder / "0000_s.png"
    made = png.stat().st_mtime_ns
    assert half_size.build(copies, ["s", "s"], folder) == first
    assert png.stat().st_mtime_ns == made  # not built again
    # two sources: two images; the folder is built again
    again = half_size.build(copies, ["s", "t"], folder)
    assert [m.key for m in again] == ["0000_s.png", "0001_t.png"]
    assert [len(m.dice) for m in again] == [4, 4]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["x-half"]  # nothing left over


@pytest.mark.parametrize("damage", ["labels", "image"])
def test_a_damaged_cache_is_built_again(copies, tmp_path, damage):
    folder = tmp_path / "cache" / "x-half"
    built = half_size.build(copies, ["s", "t"], folder)
    if damage == "labels":
        (folder / "labels.csv").write_text("garbage\n")
    else:
        (folder / "0001_t.png").unlink()
    assert half_size.build(copies, ["s", "t"], folder) == built
    assert (folder / "0001_t.png").is_file()
    assert (folder / "labels.csv").read_text().startswith("image,face,")


def test_a_set_another_process_built_meanwhile_is_taken(copies, tmp_path, monkeypatch):
    folder = tmp_path / "cache" / "x-half"
    same = half_size.build(copies, ["s", "s"], tmp_path / "same" / "x-half")
    half_size.build(copies, ["s", "t"], tmp_path / "other" / "x-half")
    replace = os.replace
    landing = {"from": tmp_path / "same" / "x-half"}

    def late(src, dst):  # the other process's folder lands just before ours
        shutil.copytree(landing["from"], dst)
        replace(src, dst)

    monkeypatch.setattr(half_size.os, "replace", late)
    assert half_size.build(copies, ["s", "s"], folder) == [
        ManifestImage(key=m.key, path=folder / m.key, dice=m.dice) for m in same]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["x-half"]
    # another set's build landing there is not taken for ours
    shutil.rmtree(folder)
    landing["from"] = tmp_path / "other" / "x-half"
    with pytest.raises(OSError):
        half_size.build(copies, ["s", "s"], folder)
    assert sorted(p.name for p in folder.parent.iterdir()) == ["x-half"]  # no tmp left


def test_an_unreadable_photo_names_it_and_keeps_the_built_set(copies, tmp_path):
    assert copies[1].path.name == "b.png"
    assert_unreadable_photo_keeps_built_set(half_size.build, copies,
                                            tmp_path / "cache" / "x-half", ["s", "s"],
                                            ["s", "t"])


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CACHE_DIRECTORY", f"{tmp_path / 'v'}:{tmp_path / 'w'}")
    assert half_size.folder("x-half") == tmp_path / "v" / "half-size" / "x-half"
    monkeypatch.delenv("CACHE_DIRECTORY")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert half_size.folder("x-half") == tmp_path / "x" / "vault-companion" / "half-size" / "x-half"


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
@pytest.mark.parametrize("name", ["table-val", "trays-val"])
def test_a_validation_set_at_half_size_is_one_image_per_source_photo(name, photo_cache):
    whole = dice_photos.load_set(name)
    half = dice_photos.load_set(name + "-half")
    sources = dice_photos.sources_of(name, whole)
    assert len(half) == len(set(sources))
    per_source: dict[str, list[int]] = {}
    for m, s in zip(whole, sources, strict=True):
        per_source.setdefault(s, []).append(len(m.dice))
    assert sum(len(m.dice) for m in half) == sum(
        sum(n[q % len(n)] for q in range(4)) for n in per_source.values())

    def side(dice) -> float:
        return float(np.median([max(d.box[2] - d.box[0], d.box[3] - d.box[1]) for d in dice]))

    ratio = side([d for m in half for d in m.dice]) / side([d for m in whole for d in m.dice])
    assert 0.4 < ratio < 0.6
    assert all(d.box[2] <= 640 and d.box[3] <= 640 for m in half for d in m.dice)


def test_an_unknown_set_names_the_half_size_sets():
    with pytest.raises(KeyError, match="with -half"):
        dice_photos.load_set("table-vall")
    with pytest.raises(KeyError, match="table-vall"):
        dice_photos.load_set("table-vall-half")
