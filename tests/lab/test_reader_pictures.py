"""reader_lab/benchmarks/reader_pictures.py: the README's pictures of the learned reader and of
few-shot profiles on held-aside photos count every labelled die once (needs the shared
photo sets)."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest
from scripts import load_script

from companion.vision.learned import MODEL_DIR
from reader_lab import dice_photos

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/reader_pictures.py"


@pytest.mark.skipif(not dice_photos.available() or not (MODEL_DIR / "detector.onnx").is_file(),
                    reason="photo sets or model missing")
@pytest.mark.parametrize("extra", [[], ["--fewshot", "3"]])
def test_the_picture_counts_every_labelled_die_once(tmp_path, capsys, extra):
    module = load_script(SCRIPT)
    out = tmp_path / "picture.png"
    assert module.main(["--out", str(out), *extra]) == 0
    picture = cv2.imread(str(out))
    assert picture is not None and picture.shape[0] == module.HEIGHT + 34
    lines = capsys.readouterr().out.splitlines()
    for name, line in zip(("table-test", "webcam-two", "trays-colour-test"), lines,
                          strict=False):
        counts = dict(part.rsplit(" ", 1) for part in line.split(": ", 1)[1].split(", "))
        labelled = max(len(m.dice) for m in dice_photos.load_set(name))
        found = sum(int(counts[k]) for k in ("right", "wrong", "unknown", "missed"))
        assert found == labelled, line


@pytest.mark.skipif(not dice_photos.available() or not (MODEL_DIR / "detector.onnx").is_file(),
                    reason="photo sets or model missing")
def test_named_sets_give_one_panel_each_a_photo_and_its_dyed_copy(tmp_path, capsys,
                                                                  photo_cache):
    module = load_script(SCRIPT)
    out = tmp_path / "dyed.png"
    assert module.main(["--sets", "table-val", "table-val-dyed", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["table-val", "table-val-dyed"]
    totals = []
    for line in lines[:2]:
        counts = dict(part.rsplit(" ", 1) for part in line.split(": ", 1)[1].split(", "))
        totals.append(sum(int(counts[k]) for k in ("right", "wrong", "unknown", "missed")))
    assert totals[0] == totals[1] == max(len(m.dice) for m in dice_photos.load_set("table-val"))
    assert module.main(["--sets", "table-val", "--fewshot", "3", "--out", str(out)]) == 2
    assert "only for the held-aside sets" in capsys.readouterr().err
