"""The learned reader on a frozen sample: three rendered scenes stored as PNG (so the
renderer is not part of the comparison) and the answers the committed model gave on
x86-64 (tests/vision/frozen/answers.json). The same answers on every machine and runtime:
ONNX Runtime on aarch64 (the Pi; proved under emulation by systemd/emulated-pi-check.sh)
and OpenCV's DNN module (the fallback without ONNX Runtime), each against what was stored.

Write the answers again after a model change (and say so in the commit):
``python tests/vision/test_learned_frozen.py --write``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

FROZEN = Path(__file__).resolve().parent / "frozen"
ANSWERS = FROZEN / "answers.json"
# how far a machine's answer may be from the stored one: the same face, the box's
# corners within a pixel (the reader rounds boxes to whole pixels, and float sums in
# another order or another CPU's kernels may tip one), the confidence within 0.01; a
# face that changes is never within tolerance
BOX_PX = 1.0
CONFIDENCE = 0.01


def answers(reader, image) -> list[dict]:
    """What ``reader`` reads in ``image``, top to bottom, as plain numbers."""
    out = [{"face": r.face, "box": [round(float(v), 2) for v in r.box],
            "confidence": round(float(r.confidence), 4)} for r in reader(image)]
    return sorted(out, key=lambda a: (a["box"][1], a["box"][0]))


def _nearest(got: list[dict], box: list[float]) -> dict:
    return min(got, key=lambda g: max(abs(a - b) for a, b in zip(g["box"], box, strict=True)))


def _scenes() -> list[str]:
    return sorted(json.loads(ANSWERS.read_text())["scenes"])


@pytest.mark.parametrize("backend", ["onnxruntime", "opencv"])
def test_the_frozen_sample_reads_as_stored(backend):
    from companion.vision.frames import load_image
    from companion.vision.learned import MODEL_DIR, LearnedReader

    stored = json.loads(ANSWERS.read_text())
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    reader = LearnedReader(backend=backend)
    assert reader.fingerprints == stored["fingerprints"], (
        f"the model in {MODEL_DIR} is not the one the answers were stored for: write them "
        "again (this module's docstring)")
    for name in _scenes():
        got = answers(reader, load_image(FROZEN / name))
        want = stored["scenes"][name]
        assert len(got) == len(want), (name, got, want)
        matched = [_nearest(got, w["box"]) for w in want]  # each stored die, its nearest
        assert len({id(g) for g in matched}) == len(want), (name, got, want)
        for g, w in zip(matched, want, strict=True):
            assert g["face"] == w["face"], (name, g, w)
            assert max(abs(a - b) for a, b in zip(g["box"], w["box"], strict=True)) <= BOX_PX, (
                name, g, w)
            assert abs(g["confidence"] - w["confidence"]) <= CONFIDENCE, (name, g, w)


def _write() -> None:
    import platform

    import cv2
    import onnxruntime

    from companion.vision.frames import load_image
    from companion.vision.learned import LearnedReader

    reader = LearnedReader(backend="onnxruntime")
    scenes = {p.name: answers(reader, load_image(p)) for p in sorted(FROZEN.glob("*.png"))}
    ANSWERS.write_text(json.dumps({
        "written_on": f"{platform.machine()}, ONNX Runtime {onnxruntime.__version__}, "
                      f"OpenCV {cv2.__version__}",
        "fingerprints": reader.fingerprints, "scenes": scenes}, indent=1) + "\n")
    print(f"wrote {ANSWERS}: {sum(len(v) for v in scenes.values())} dice in "
          f"{len(scenes)} scenes")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/vision/test_learned_frozen.py --write")
    _write()
