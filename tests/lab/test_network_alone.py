"""reader_lab/benchmarks/network_alone.py: one classifier network on the labelled boxes (needs the
shared photo sets)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scripts import load_script

from companion.vision.frames import load_image
from companion.vision.learned import FACES, MODEL_DIR, LearnedReader
from companion.vision.types import box_side
from reader_lab import dice_photos

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/network_alone.py"
needs_photos = pytest.mark.skipif(
    not dice_photos.available() or not (MODEL_DIR / "detector.onnx").is_file(),
    reason="photo sets or model missing")


def _module():
    return load_script(SCRIPT)


def _one_member_reader(tmp_path: Path, name: str) -> LearnedReader:
    """The committed reader with ``name`` as its only upright network."""
    d = tmp_path / "one"
    d.mkdir()
    for f in ("detector.onnx", "classifier.onnx", name):
        shutil.copy(MODEL_DIR / f, d / f)
    meta = json.loads((MODEL_DIR / "reader.json").read_text())
    meta["upright_files"] = [name]
    meta["crop_shapes"] = {k: v for k, v in meta["crop_shapes"].items() if k == name}
    (d / "reader.json").write_text(json.dumps(meta))
    return LearnedReader(d, threads=1)


def _rows(capsys, name: str) -> list[list[str]]:
    """The table rows (split at "|") printed for network file ``name``."""
    return [line.split("|") for line in capsys.readouterr().out.splitlines()
            if line.startswith(f"| {name} ")]


@needs_photos
@pytest.mark.parametrize("name", ["classifier_upright.onnx", "classifier_upright_c28.onnx"])
def test_a_network_alone_reads_what_a_one_network_reader_reads(tmp_path, capsys, name):
    """The share "right" is the share of webcam-val dice whose most probable class, in a
    reader holding only that network, is the labelled face: the crops are the reader's."""
    assert _module().main([str(MODEL_DIR / name), "--sets", "webcam-val"]) == 0
    rows = _rows(capsys, str(MODEL_DIR / name))
    assert len(rows) == 1
    dice, right = int(rows[0][4]), rows[0][5].strip()
    reader = _one_member_reader(tmp_path, name)
    n = hits = 0
    for m in dice_photos.load_set("webcam-val"):
        if not m.dice:
            continue
        probs = reader.face_probabilities(load_image(m.path), [d.box for d in m.dice])
        for d, p in zip(m.dice, probs, strict=True):
            n += 1
            k = int(np.argmax(p))
            hits += k < len(FACES) and FACES[k] == d.face
    assert (dice, right) == (n, f"{100 * hits / n:.1f}%")
    assert n == 255 and hits / n > 0.9


@needs_photos
def test_under_counts_only_the_dice_smaller_than_it(capsys):
    """``--under 32`` tallies exactly trays-val's labelled dice under 32 px (a few of its
    dice); a bound above every die tallies what no bound does."""
    net = str(MODEL_DIR / "classifier_upright_c28.onnx")
    module = _module()
    assert module.main([net, "--sets", "trays-val"]) == 0
    whole = _rows(capsys, net)
    assert module.main([net, "--sets", "trays-val", "--under", "100000"]) == 0
    assert _rows(capsys, net) == whole
    assert module.main([net, "--sets", "trays-val", "--under", "32"]) == 0
    small = _rows(capsys, net)
    expected = sum(box_side(d.box) < 32 for m in dice_photos.load_set("trays-val")
                   for d in m.dice)
    assert len(small) == 1 and int(small[0][4]) == expected
    assert 0 < expected < int(whole[0][4])


@needs_photos
@pytest.mark.parametrize("args, says", [
    (["/nonexistent.onnx"], "network_alone: /nonexistent.onnx: no such network file"),
    ([str(MODEL_DIR / "classifier.onnx"), "--under", "0"],
     "network_alone: --under must be more than 0 pixels, not 0"),
    ([str(MODEL_DIR / "classifier.onnx"), "--sets", "nosuch"], "unknown photo set 'nosuch'"),
])
def test_bad_arguments_get_one_line(capsys, args, says):
    assert _module().main(args) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


@needs_photos
def test_a_file_that_is_no_network_is_one_line_naming_it(tmp_path, capsys):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes((MODEL_DIR / "classifier.onnx").read_bytes()[:1000])
    assert _module().main([str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"network_alone: {broken}: cannot load the network" in err and err.count("\n") == 1
