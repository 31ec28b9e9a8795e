"""The photo pack: the real sets packed small to travel to the accelerator, read back."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from reader_lab import dice_photos, photo_pack
from reader_lab.photo_pack import PackError, build, load_pack


def _pack(folder, images, not_dice=None):
    (folder / "img").mkdir(parents=True)
    entries = []
    for k, (img, dice) in enumerate(images):
        file = f"img/x-{k}.webp"
        cv2.imwrite(str(folder / file), img, [cv2.IMWRITE_WEBP_QUALITY, 90])
        entries.append({"file": file, "set": "table-train", "source": f"s{k}", "dice": dice})
        if not_dice and k in not_dice:
            entries[-1]["not_dice"] = not_dice[k]
    (folder / "pack.json").write_text(json.dumps({"version": 1, "images": entries}))


def test_a_pack_reads_back_its_images_boxes_and_faces(tmp_path):
    img = np.full((96, 128, 3), 40, np.uint8)
    img[20:40, 30:50] = 230
    _pack(tmp_path, [(img, [[30, 20, 50, 40, 6], [60, 60, 80, 80, 2]]), (img, [])])
    imgs, labels = load_pack(tmp_path)
    assert [i.shape for i in imgs] == [(96, 128, 3)] * 2
    assert labels[0].boxes.tolist() == [[30, 20, 50, 40], [60, 60, 80, 80]]
    assert labels[0].faces.tolist() == [6, 2]
    assert labels[1].boxes.shape == (0, 4)
    # a pack of before the board pieces went into packs holds none
    assert labels[0].not_dice.shape == labels[1].not_dice.shape == (0, 4)
    assert imgs[0][30, 40].mean() > 200 and imgs[0][80, 100].mean() < 80
    assert load_pack(tmp_path, sets=("trays-train",)) == ([], [])


@pytest.mark.parametrize("damage, says", [
    (lambda f: (f / "pack.json").unlink(), "no pack.json"),
    (lambda f: (f / "pack.json").write_text("{"), "unreadable"),
    (lambda f: (f / "pack.json").write_text('{"version": 9, "images": []}'), "version 1"),
    (lambda f: (f / "img" / "x-0.webp").unlink(), "missing or not an image"),
])
def test_a_damaged_pack_is_named_in_one_line(tmp_path, damage, says):
    _pack(tmp_path, [(np.zeros((32, 32, 3), np.uint8), [[1, 1, 9, 9, 1]])])
    damage(tmp_path)
    with pytest.raises(PackError) as err:
        load_pack(tmp_path)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_held_aside_sets_are_never_packed(tmp_path):
    for name in dice_photos.HELD_ASIDE:
        with pytest.raises(PackError, match="held aside"):
            build(tmp_path, sets=("table-train", name))
    assert not any(s in dice_photos.HELD_ASIDE for s in photo_pack.PACK_SETS)


@pytest.mark.skipif(not dice_photos.available(), reason="the shared photo sets are not here")
def test_a_packed_photo_keeps_its_dice_where_they_were(tmp_path):
    meta = build(tmp_path, sets=("table-train",), side=320, limit=3, log=lambda line: None)
    item = dice_photos.load_set("table-train")[0]
    entry = meta["images"][0]
    h, w = cv2.imread(str(item.path)).shape[:2]
    r = 320 / max(h, w)
    assert [d[4] for d in entry["dice"]] == [int(d.face) for d in item.dice]
    for packed, die in zip(entry["dice"], item.dice, strict=True):
        assert packed[:4] == pytest.approx([v * r for v in die.box], abs=0.01)
    imgs, _ = load_pack(tmp_path)
    assert max(imgs[0].shape[:2]) == 320


def test_the_command_refuses_bad_options_and_names_a_bad_set(tmp_path, capsys):
    with pytest.raises(SystemExit):
        photo_pack.main([str(tmp_path), "--side", "10"])
    assert photo_pack.main([str(tmp_path), "--sets", "no-such-set"]) == 2
    assert "unknown photo set" in capsys.readouterr().out


def test_board_pieces_raters_called_not_a_die_read_back(tmp_path):
    img = np.full((64, 64, 3), 40, np.uint8)
    _pack(tmp_path, [(img, []), (img, [])], not_dice={1: [[4, 5, 20, 21], [30, 30, 40, 44]]})
    _, labels = load_pack(tmp_path)
    assert labels[0].not_dice.shape == (0, 4)
    assert labels[1].not_dice.tolist() == [[4, 5, 20, 21], [30, 30, 40, 44]]


@pytest.mark.skipif(not dice_photos.available(), reason="the shared photo sets are not here")
def test_a_packed_photo_keeps_the_boxes_raters_called_not_a_die(tmp_path, monkeypatch):
    item = dice_photos.load_set("table-train")[1]
    key = dice_photos.photo_key(item.path)
    monkeypatch.setattr(photo_pack, "read_rated_negatives",
                        lambda folder: {key: [(100.0, 40.0, 140.0, 90.0)]})
    meta = build(tmp_path, sets=("table-train",), side=320, limit=3, log=lambda line: None)
    h, w = cv2.imread(str(item.path)).shape[:2]
    r = 320 / max(h, w)
    assert "not_dice" not in meta["images"][0]
    assert meta["images"][1]["not_dice"] == [pytest.approx([100 * r, 40 * r, 140 * r, 90 * r],
                                                           abs=0.01)]
    none = build(tmp_path / "none", sets=("table-train",), side=320, limit=3,
                 log=lambda line: None, not_dice=None)
    assert not any("not_dice" in e for e in none["images"])


@pytest.mark.skipif(not dice_photos.available(), reason="the shared photo sets are not here")
def test_every_rated_board_piece_of_the_round_falls_on_a_packed_photo():
    from reader_lab.rated_boxes import read_rated_negatives

    rated = read_rated_negatives(photo_pack.NOT_DICE)
    keys = {dice_photos.photo_key(item.path) for name in photo_pack.PACK_SETS
            for item in dice_photos.load_set(name)}
    assert len(rated) == 22 and set(rated) <= keys
