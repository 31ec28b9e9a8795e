"""reader_lab/benchmarks/compare_readers.py: two models on the same photos, with paired intervals
(needs the shared photo sets)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scripts import load_script

from companion.vision.learned import MODEL_DIR
from reader_lab import dice_photos

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/compare_readers.py"


def _rows(out: str) -> dict[str, list[str]]:
    return {cells[1].strip(): [c.strip() for c in cells[2:5]]
            for cells in (line.split("|") for line in out.splitlines()
                          if line.startswith("| ") and not line.startswith("| figure"))}


@pytest.mark.skipif(not dice_photos.available() or not (MODEL_DIR / "detector.onnx").is_file(),
                    reason="photo sets or model missing")
def test_a_model_against_itself_differs_by_nothing_and_a_stricter_one_reads_less(
        tmp_path, capsys):
    module = load_script(SCRIPT)
    assert module.main(["--second", str(MODEL_DIR), "--sets", "webcam-val",
                        "--draws", "200"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert set(rows) == {"end_to_end", "wrong_confident", "precision", "recall", "objective"}
    for first, second, diff in rows.values():
        assert first == second
        assert diff == "+0.0000 (+0.0000 to +0.0000)"
    # the same networks asking every face to be 0.999 sure: fewer dice read, surely
    strict = tmp_path / "strict"
    shutil.copytree(MODEL_DIR, strict)
    cfg = json.loads((strict / "reader.json").read_text())
    cfg["face_threshold"] = 0.999
    (strict / "reader.json").write_text(json.dumps(cfg))
    assert module.main(["--second", str(strict), "--sets", "webcam-val",
                        "--draws", "200"]) == 0
    rows = _rows(capsys.readouterr().out)
    diff = rows["end_to_end"][2]
    low, high = (float(v) for v in diff.split("(")[1].rstrip(")").split(" to "))
    assert float(diff.split()[0]) < 0 and low <= high < 0


@pytest.mark.skipif(not dice_photos.available() or not (MODEL_DIR / "detector.onnx").is_file(),
                    reason="photo sets or model missing")
@pytest.mark.parametrize("args, says", [
    (["--second", "/nonexistent"], "learned reader model not found in /nonexistent"),
    (["--second", str(MODEL_DIR), "--sets", "nosuch"], "unknown photo set 'nosuch'"),
    (["--second", str(MODEL_DIR), "--draws", "0"], "--draws must be at least 1, not 0"),
])
def test_bad_arguments_get_one_line(capsys, args, says):
    module = load_script(SCRIPT)
    assert module.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


@pytest.mark.skipif(not dice_photos.available() or not (MODEL_DIR / "detector.onnx").is_file(),
                    reason="photo sets or model missing")
def test_wrong_lists_the_dice_behind_wrong_confident(capsys):
    """Issue 9g: --wrong names each die counted in wrong_confident, for each model."""
    module = load_script(SCRIPT)
    assert module.main(["--second", str(MODEL_DIR), "--sets", "table-test",
                        "--draws", "20", "--wrong"]) == 0
    out = capsys.readouterr().out
    dice = int(out.split(" dice;")[0].rsplit(" ", 1)[1])
    share = float(_rows(out)["wrong_confident"][0].split()[0])
    listed = [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines()
              if line.startswith("| first |") or line.startswith("| second |")]
    firsts = [row[1:] for row in listed if row[0] == "first"]
    # the committed model has two there (issue 9w's reads none of the validation dice,
    # webcam-val's included, confidently wrong)
    assert len(firsts) == round(share * dice) > 0
    assert firsts == [row[1:] for row in listed if row[0] == "second"]
    for row in firsts:
        assert row[0] == "table-test" and row[5] != row[4]  # read other than labelled
        assert 0.0 < float(row[6]) <= 1.0


def _photo(key: str):
    from companion.vision.evaluate import ManifestImage

    return ManifestImage(key=key, path=Path("/photos") / key, dice=())


def test_a_set_pooled_with_its_copies_is_drawn_with_them_by_source_photo():
    """Issue 9x: table-val with its half-size copy groups each half-size image with the
    full-size photos of the source it shows; sets of different families, or one set
    alone, keep their old groups (so earlier figures come out to the digit)."""
    module = load_script(SCRIPT)
    full = [_photo("images/train/dice_105_jpg.rf.aa.jpg"),
            _photo("images/train/dice_105_jpg.rf.bb.jpg"),
            _photo("images/train/dice_7_jpg.rf.cc.jpg")]
    half = [_photo("0000_dice_105.png"), _photo("0001_dice_7.png")]
    pooled = ["table-val", "table-val-half"]
    a = module.photo_groups("table-val", full, pooled, [m.key for m in full])
    b = module.photo_groups("table-val-half", half, pooled, [m.key for m in half])
    assert a == ["table-val/dice_105", "table-val/dice_105", "table-val/dice_7"]
    assert b == ["table-val/dice_105", "table-val/dice_7"]
    alone = module.photo_groups("table-val-half", half, ["table-val-half", "trays-val-half"],
                                [m.key for m in half])
    assert alone == ["table-val-half/0000_dice_105", "table-val-half/0001_dice_7"]
    assert module.photo_groups("table-val", full, ["table-val", "trays-val"],
                               [full[2].key]) == ["table-val/dice_7"]
