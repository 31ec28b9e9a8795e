"""Weight soups (issue 9t): one network whose weights are the mean of fine-tunes'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from reader_lab import train_reader as T  # noqa: E402
from reader_lab.weight_soup import soup  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _classifier(folder: Path, seed: int) -> Path:
    torch.manual_seed(seed)
    T._export_cls(T.Classifier().eval(), folder)
    return folder / "classifier.onnx"


def _weights(path: Path) -> dict[str, np.ndarray]:
    from onnx import numpy_helper

    return {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}


def test_each_weight_is_the_mean_stored_as_the_first_file_stores_it(tmp_path):
    a, b = _classifier(tmp_path / "a", 1), _classifier(tmp_path / "b", 2)
    out = tmp_path / "soup" / "classifier.onnx"
    n = soup([a, b], out)
    wa, wb, ws = _weights(a), _weights(b), _weights(out)
    assert n == len(ws) and ws.keys() == wa.keys()
    for name, w in ws.items():
        assert w.dtype == wa[name].dtype and w.shape == wa[name].shape
        mean = (wa[name].astype(np.float64) + wb[name].astype(np.float64)) / 2
        assert np.allclose(w.astype(np.float64), mean, atol=2e-3, rtol=2e-3)
    assert not all(np.array_equal(wa[k], wb[k]) for k in wa)  # two networks, not one
    # it is a network both runtimes read, its outputs shaped as its sources'
    x = np.random.default_rng(0).random((2, 3, 48, 48), dtype=np.float32)
    got = ort.InferenceSession(str(out)).run(None, {"crops": x})
    want = ort.InferenceSession(str(a)).run(None, {"crops": x})
    assert [g.shape for g in got] == [w.shape for w in want]
    assert not np.allclose(got[0], want[0])
    # a soup of one network twice is that network
    same = tmp_path / "same.onnx"
    soup([a, a], same)
    assert all(np.array_equal(v, _weights(a)[k]) for k, v in _weights(same).items())


def test_other_networks_and_bad_shares_are_refused_naming_them(tmp_path):
    a = _classifier(tmp_path / "a", 1)
    T._export_det(T.Detector().eval(), tmp_path / "d")
    det = tmp_path / "d" / "detector.onnx"
    out = tmp_path / "out.onnx"
    with pytest.raises(ValueError, match="detector.onnx: not the same network as"):
        soup([a, det], out)
    # the same weights' shapes, but crops of another side: not the same network
    T._export_cls(T.Classifier().eval(), tmp_path / "c64", crop_size=64)
    with pytest.raises(ValueError, match="c64/classifier.onnx: not the same network as"):
        soup([a, tmp_path / "c64" / "classifier.onnx"], out)
    T._export_cls(T.Classifier().eval(), tmp_path / "span", crop_span=1.6)
    with pytest.raises(ValueError, match="span/classifier.onnx: not the same network as"):
        soup([a, tmp_path / "span" / "classifier.onnx"], out)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00\xffnot a network\n")
    with pytest.raises(ValueError, match="garbage.onnx: "):
        soup([garbage, a], out)
    with pytest.raises(ValueError, match="at least two networks"):
        soup([a], out)
    with pytest.raises(ValueError, match="soup weights"):
        soup([a, a], out, weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="gone.onnx: cannot read"):
        soup([a, tmp_path / "gone.onnx"], out)
    assert not out.exists()


def test_the_tool_writes_a_soup_and_names_what_it_cannot_read(tmp_path):
    a, b = _classifier(tmp_path / "a", 1), _classifier(tmp_path / "b", 2)

    def run(*names):
        done = subprocess.run([sys.executable, "-m", "reader_lab", "soup-networks",
                               *map(str, names)], capture_output=True, text=True, cwd=REPO)
        return done.returncode, done.stdout.strip().splitlines()

    out = tmp_path / "s.onnx"
    code, lines = run(out, a, b)
    floats = sum(np.issubdtype(w.dtype, np.floating) for w in _weights(a).values())
    assert code == 0 and lines == [f"{out}: {floats} weight tensors, each the mean of 2 networks"]
    code, lines = run(tmp_path / "t.onnx", a, tmp_path / "gone.onnx")
    assert code == 2 and len(lines) == 1 and "gone.onnx: cannot read" in lines[0]
    assert run()[0] == 2
