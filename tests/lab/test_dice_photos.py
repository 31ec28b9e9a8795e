"""The photo sets' splits: the wider validation split, and a training folder's split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reader_lab import dice_photos
from reader_lab.dice_photos import SplitMismatch, folder_split, resolve_split


def test_tray_parts_by_tenths():
    stems = [f"photo{i}" for i in range(400)]
    one = {s: dice_photos.tray_part(s) for s in stems}
    two = {s: dice_photos.tray_part(s, 2) for s in stems}
    # the test part is the same; the wider validation holds the narrow one, taken from train
    assert {s for s in stems if one[s] == "test"} == {s for s in stems if two[s] == "test"}
    val1 = {s for s in stems if one[s] == "val"}
    val2 = {s for s in stems if two[s] == "val"}
    assert val1 < val2 and all(one[s] == "train" for s in val2 - val1)
    assert 1.5 < len(val2) / len(val1) < 2.7
    assert dice_photos.tray_part("i", 2) == "train"  # the unnamed source stays in train


def test_only_the_table_sets_leave_dice_unlabelled():
    for name in ("table-train", "table-val2", "table-test"):
        assert not dice_photos.fully_labelled(name)
    for name in ("trays-train", "trays-colour-test", "webcam-white", "webcam-two"):
        assert dice_photos.fully_labelled(name)


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
def test_the_wider_split_holds_the_narrow_one_and_keeps_photos_apart():
    def sources(name):
        return {dice_photos.source_of(m.key) for m in dice_photos.load_set(name)}

    for kind in ("table", "trays"):
        val1, val2 = sources(f"{kind}-val"), sources(f"{kind}-val2")
        train2 = sources(f"{kind}-train2")
        assert val1 < val2 and not train2 & val2
        assert train2 | val2 == sources(f"{kind}-train") | val1
    dice = sum(len(m.dice) for name in dice_photos.SPLITS[2, False, False][1]
               for m in dice_photos.load_set(name))
    assert dice > 1.8 * sum(len(m.dice) for name in dice_photos.VAL_SETS
                            for m in dice_photos.load_set(name))
    assert dice_photos.train_of("trays-val2") == "trays-train2"


def test_a_folder_split_comes_from_split_json_else_reader_json(tmp_path):
    assert folder_split(tmp_path) is None
    assert resolve_split(tmp_path, None) == (1, False, False)
    (tmp_path / "reader.json").write_text(json.dumps({"val_sets": ["table-val2",
                                                                   "trays-val2"]}))
    assert folder_split(tmp_path) == (2, False, False)
    with pytest.raises(SplitMismatch):  # the copied model's split is not another one's
        dice_photos.record_split(tmp_path, (1, False, False))
    (tmp_path / "split.json").write_text('{"val_tenths": 1}\n')  # split.json wins
    assert resolve_split(tmp_path, None) == (1, False, False) == resolve_split(tmp_path, 1)


def test_the_committed_model_says_its_split():
    assert folder_split(dice_photos.REPO / "companion" / "data" / "models") in dice_photos.SPLITS


def test_another_split_than_the_folders_is_refused_in_one_line(tmp_path):
    dice_photos.record_split(tmp_path, (2, False, False))
    with pytest.raises(SplitMismatch) as err:
        resolve_split(tmp_path, 1)
    assert str(err.value) == (f"{tmp_path}: its networks were trained with --val-tenths 2, "
                              "not --val-tenths 1")
    (tmp_path / "split.json").write_text("{not json")
    with pytest.raises(SplitMismatch, match="split.json: unreadable"):
        resolve_split(tmp_path, None)


def test_recording_another_split_than_the_one_recorded_is_refused(tmp_path):
    dice_photos.record_split(tmp_path, (2, False, False))  # say, a part started at the same time
    with pytest.raises(SplitMismatch):
        dice_photos.record_split(tmp_path, (1, False, False))
    assert folder_split(tmp_path) == (2, False, False)


def test_the_webcam_split_is_recorded_and_an_old_split_json_reads_without_it(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "split.json").write_text('{"val_tenths": 1}\n')  # written before issue 8l
    assert folder_split(old) == (1, False, False)
    with pytest.raises(SplitMismatch) as err:
        resolve_split(old, None, True)
    assert str(err.value) == (f"{old}: its networks were trained with --val-tenths 1, "
                              "not --val-tenths 1 --webcam-val")
    new = tmp_path / "new"
    dice_photos.record_split(new, (1, True, False))
    assert json.loads((new / "split.json").read_text()) == {"val_tenths": 1,
                                                            "webcam_val": True}
    assert resolve_split(new, None) == (1, True, False) == resolve_split(new, 1)
    with pytest.raises(SplitMismatch, match="not --val-tenths 1$"):
        resolve_split(new, 1, False)
    dice_photos.record_split(old, (1, False, False))  # the old split is still written as before
    assert json.loads((old / "split.json").read_text()) == {"val_tenths": 1}
    (new / "split.json").write_text('{"val_tenths": 1, "webcam_val": "yes"}\n')
    with pytest.raises(SplitMismatch, match="split.json: unreadable"):
        folder_split(new)


def test_a_copied_models_webcam_split_comes_from_its_val_sets(tmp_path):
    (tmp_path / "reader.json").write_text(json.dumps(
        {"val_sets": ["table-val", "trays-val", "webcam-val"]}))
    assert folder_split(tmp_path) == (1, True, False)


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
def test_the_webcam_frames_split_by_the_authors_folders():
    train = dice_photos.load_set("webcam-train")
    val = dice_photos.load_set("webcam-val")
    whole = dice_photos.load_set("webcam-white")
    assert {m.key for m in train}.isdisjoint(m.key for m in val)
    assert {m.key for m in train} | {m.key for m in val} == {m.key for m in whole}
    assert (len(train), sum(len(m.dice) for m in train)) == (310, 951)
    assert (len(val), sum(len(m.dice) for m in val)) == (86, 255)
    train_sets, val_sets = dice_photos.SPLITS[1, True, False]
    assert "webcam-white" not in train_sets and "webcam-val" in val_sets
    assert dice_photos.train_of("webcam-val") == "webcam-train"


def test_the_small_dice_split_moves_only_small_train_sources_to_validation():
    stems = [f"photo{i}" for i in range(400)]
    plain = {s: dice_photos.tray_part(s) for s in stems}
    small = {s: dice_photos.tray_part(s, 1, True) for s in stems}
    moved = {s for s in stems if plain[s] != small[s]}
    # only train sources move, all to validation; test and val stay as they were
    assert moved and all(plain[s] == "train" and small[s] == "val" for s in moved)
    assert 0.35 < len(moved) / sum(v == "train" for v in plain.values()) < 0.65
    assert dice_photos.tray_part("i", 1, True) == "train"


def test_the_small_dice_split_is_recorded_refused_elsewhere_and_not_with_two_tenths(tmp_path):
    dice_photos.record_split(tmp_path, (1, True, True))
    assert json.loads((tmp_path / "split.json").read_text()) == {
        "val_tenths": 1, "webcam_val": True, "tray_small_val": True}
    assert resolve_split(tmp_path, None) == (1, True, True) == resolve_split(tmp_path, 1)
    with pytest.raises(SplitMismatch) as err:
        resolve_split(tmp_path, None, None, False)
    assert str(err.value) == (f"{tmp_path}: its networks were trained with --val-tenths 1 "
                              "--webcam-val --tray-small-val, not --val-tenths 1 --webcam-val")
    with pytest.raises(SplitMismatch) as err:
        resolve_split(tmp_path / "new", 2, None, True)
    assert str(err.value) == ("--val-tenths 2 --tray-small-val: no such split "
                              "(--tray-small-val goes with --val-tenths 1)")
    copied = tmp_path / "copied"
    copied.mkdir()
    (copied / "reader.json").write_text(json.dumps(
        {"val_sets": ["table-val", "trays-val-small", "webcam-val"]}))
    assert folder_split(copied) == (1, True, True)


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
def test_the_small_dice_split_gives_validation_small_dice_and_keeps_photos_apart():
    def sources(name):
        return {dice_photos.source_of(m.key) for m in dice_photos.load_set(name)}

    def small_dice(name):
        return sum(max(d.box[2] - d.box[0], d.box[3] - d.box[1]) < 32
                   for m in dice_photos.load_set(name) for d in m.dice)

    val, train = sources("trays-val-small"), sources("trays-train-small")
    assert sources("trays-val") < val and not train & val
    assert train | val == sources("trays-train") | sources("trays-val")
    assert sources("trays-test").isdisjoint(val | train)
    assert val - sources("trays-val") <= dice_photos.small_sources()
    assert small_dice("trays-val") == 20 and small_dice("trays-val-small") == 319
    assert dice_photos.train_of("trays-val-small") == "trays-train-small"
    assert sources("trays-colour-val-small") <= val


def test_splits_are_source_disjoint():
    if not dice_photos.available():
        pytest.skip(f"photo sets not found under {dice_photos.photo_root()}")
    import csv

    groups = {}
    with (dice_photos.photo_root() / "trays-mixed-d6" / "groups.csv").open() as fh:
        for r in csv.DictReader(fh):
            groups[r["image"]] = r["source_stem"]
    parts = {p: {groups[m.key] for m in dice_photos.load_set(f"trays-{p}")}
             for p in ("train", "val", "test")}
    assert parts["test"] and parts["val"]
    assert not parts["train"] & parts["test"] and not parts["val"] & parts["test"]
    assert not parts["train"] & parts["val"]
    tr = {dice_photos.source_of(m.key) for m in dice_photos.load_set("table-train")}
    va = {dice_photos.source_of(m.key) for m in dice_photos.load_set("table-val")}
    assert va and not tr & va
    held = {Path(m.key).name for m in dice_photos.load_set("table-test")}
    assert not held & {Path(m.key).name for m in dice_photos.load_set("table-train")}

