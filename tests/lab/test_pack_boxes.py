"""A detector's boxes on a photo pack (reader_lab.pack_boxes)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from reader_lab import pack_boxes as B
from reader_lab.photo_pack import PackError, load_pack

BOXES = np.array([[40, 30, 72, 62], [120, 90, 160, 130]], np.float32)


def _pack(folder, n=3):
    (folder / "img").mkdir(parents=True)
    entries = []
    for k in range(n):
        file = f"img/p{k}.png"
        cv2.imwrite(str(folder / file), np.full((160, 200, 3), 30, np.uint8))
        entries.append({"file": file, "set": "trays-train", "source": f"s{k}",
                        "dice": [[*b, 3] for b in BOXES.tolist()]})
    (folder / "pack.json").write_text(json.dumps({"version": 1, "images": entries}))


def test_the_detector_boxes_split_into_dice_and_phantoms_only_where_every_die_is_boxed():
    boxes = BOXES
    found = [(42, 28, 70, 60, 0.9), (118, 92, 150, 140, 0.6), (0, 130, 20, 150, 0.35)]
    dice, phantoms = B.boxes_of(found, boxes, whole=True)
    assert [d[5] for d in dice] == [0, 1] and dice[0][4] == 0.9
    assert phantoms == [[0, 130, 20, 150, 0.35]]
    assert B.boxes_of(found, boxes, whole=False)[1] == []  # unboxed dice may lie anywhere


def test_a_boxes_file_made_for_another_pack_or_broken_is_refused_in_one_line(tmp_path):
    _pack(tmp_path / "pack")
    _, labels = load_pack(tmp_path / "pack")
    path = tmp_path / "boxes.json"
    images = {lab.file: {"dice": [[40, 30, 72, 62, 0.9, 0]], "phantoms": []} for lab in labels}
    path.write_text(json.dumps({"version": 1, "images": images}))
    dice, phantoms = B.load_boxes(path, labels)
    assert dice[0].shape == (1, 6) and phantoms[0].shape == (0, 5)
    cases = [
        ("{", "unreadable"),
        (json.dumps({"version": 2, "images": images}), "not a version 1 boxes file"),
        (json.dumps({"version": 1, "images": dict(list(images.items())[1:])}),
         "no boxes for img/p0.png"),
        (json.dumps({"version": 1, "images": {k: {"dice": [[1, 2, 3, 4, 0.5, 7]],
                                                  "phantoms": []} for k in images}}),
         "has 2 dice"),
        (json.dumps({"version": 1, "images": {k: {"dice": "x"} for k in images}}),
         "not rows of numbers"),
    ]
    for text, said in cases:
        path.write_text(text)
        with pytest.raises(PackError) as err:
            B.load_boxes(path, labels)
        assert said in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(PackError, match="pack-boxes"):
        B.load_boxes(tmp_path / "none.json", labels)


def test_the_picture_draws_the_boxes_of_photos_with_phantoms(tmp_path, capsys):
    _pack(tmp_path / "pack")
    meta = json.loads((tmp_path / "pack" / "pack.json").read_text())
    for entry in meta["images"]:
        entry["set"] = "trays-val"
    (tmp_path / "pack" / "pack.json").write_text(json.dumps(meta))
    images = {e["file"]: {"dice": [[41, 31, 71, 61, 0.9, 0]], "phantoms": []}
              for e in meta["images"]}
    (tmp_path / "pack" / "boxes.json").write_text(json.dumps({"version": 1,
                                                              "images": images}))
    out = tmp_path / "boxes.png"
    # no phantom anywhere: nothing worth drawing, said in one line
    assert B.main(["--pack", str(tmp_path / "pack"), "--picture", str(out)]) == 2
    assert "no validation photo with a phantom" in capsys.readouterr().out
    images["img/p1.png"]["phantoms"] = [[5, 120, 25, 140, 0.4]]
    (tmp_path / "pack" / "boxes.json").write_text(json.dumps({"version": 1,
                                                              "images": images}))
    assert B.main(["--pack", str(tmp_path / "pack"), "--picture", str(out)]) == 0
    img = cv2.imread(str(out))
    assert img.shape == (320, 400, 3)  # one photo, 160 px high, drawn twice as large
    red = (img[..., 2] > 200) & (img[..., 1] < 60) & (img[..., 0] < 60)
    assert red[200:300, :80].any() and not red[:, 120:].any()  # the phantom, lower left
    with pytest.raises(SystemExit):  # neither --model nor --picture
        B.main(["--pack", str(tmp_path / "pack")])
