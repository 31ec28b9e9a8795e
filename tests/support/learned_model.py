"""The committed learned reader model, for the tests that read with it (the reader's
own, tests/vision, and the lab's, tests/lab)."""

import json
from pathlib import Path

import pytest

from companion.vision.learned import MODEL_DIR

needs_model = pytest.mark.skipif(not (MODEL_DIR / "detector.onnx").is_file(),
                                 reason="no learned model committed yet")

# Rendered scenes the training never drew (training uses seeds seed * 100003 + i, i < 3000).
FROZEN_SEEDS = range(7_000_000, 7_000_012)


def model_copy(tmp_path: Path, **meta_changes) -> Path:
    """A model folder in ``tmp_path`` with the committed detector and turned classifier
    and its reader.json changed by ``meta_changes`` (a key given None is left out; the
    upright networks are not copied, so their keys are left out unless given)."""
    import shutil

    d = tmp_path / "model"
    d.mkdir(parents=True)
    for name in ("detector.onnx", "classifier.onnx"):
        shutil.copy(MODEL_DIR / name, d / name)
    meta = json.loads((MODEL_DIR / "reader.json").read_text())
    meta_changes.setdefault("upright_files", None)  # the upright networks are not copied
    meta_changes.setdefault("crop_shapes", None)  # nor what their crops are
    for key, value in meta_changes.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    (d / "reader.json").write_text(json.dumps(meta))
    return d


def record_forwards(reader) -> list:
    """Make ``reader`` note every classifier pass it runs, as (network, input blob) pairs
    in a list it returns; the passes still run."""
    fed: list = []
    forward = reader._forward

    def noted(net, blob):
        fed.append((net, blob))
        return forward(net, blob)

    reader._forward = noted
    return fed
