"""The big detector and its accelerator training (need the optional [train] extra)."""

from __future__ import annotations

import json
import shutil

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from reader_lab import train_detector as T  # noqa: E402
from reader_lab.big_detector import BigDetector, count_macs, parameters  # noqa: E402
from tests.support.learned_model import MODEL_DIR, needs_model  # noqa: E402


def test_the_big_detector_is_ten_times_the_committed_one_with_its_outputs():
    from reader_lab.train_reader import Detector

    big = BigDetector().eval()
    assert 2_000_000 <= parameters(big) <= 3_000_000
    assert parameters(big) >= 8 * parameters(Detector())
    hm, wh = big(torch.zeros(1, 3, 480, 640))
    assert hm.shape == (1, 1, 120, 160) and wh.shape == (1, 2, 120, 160)
    assert float(hm.min()) >= 0 and float(hm.max()) <= 1
    # multiply-adds grow with the pixels
    assert count_macs(big, 640) == pytest.approx(count_macs(big, 320) * 4, rel=0.02)


def _photo(h=160, w=200, boxes=((40, 30, 70, 60), (120, 90, 160, 130))):
    img = np.full((h, w, 3), 30, np.uint8)
    for x0, y0, x1, y1 in boxes:
        img[y0:y1, x0:x1] = 240
    return img, np.array(boxes, np.float32)


def test_every_crop_flip_and_transpose_keeps_the_boxes_on_the_dice():
    img, boxes = _photo()
    data = T.DeviceData([img], [boxes], torch.device("cpu"), 256)
    gen = torch.Generator()
    gen.manual_seed(1)
    seen = 0
    for _ in range(6):
        x, b, v = T._augment(data, torch.zeros(16, dtype=torch.long), 128, (0.7, 1.4), gen,
                               photometric=False)
        grey = x.mean(1)
        base = grey.median()
        for i in range(16):
            for (x0, y0, x1, y1), ok in zip(b[i].tolist(), v[i].tolist(), strict=True):
                cx, cy = int((x0 + x1) / 2), int((y0 + y1) / 2)
                if ok and 3 <= cx < 125 and 3 <= cy < 125:
                    # the die's centre is brighter than the crop's typical pixel
                    assert grey[i, cy - 2:cy + 3, cx - 2:cx + 3].mean() > base + 0.1
                    seen += 1
    assert seen > 50


def test_a_die_is_a_peak_of_one_at_its_centre_with_its_log_size():
    boxes = torch.tensor([[[14.0, 18.0, 46.0, 42.0], [0, 0, 0, 0]]])
    valid = torch.tensor([[True, False]])
    hm, wh, mask = T.targets(boxes, valid, 64)
    assert hm.shape == (1, 1, 16, 16) and mask.sum() == 1
    iy, ix = (int(v) for v in torch.nonzero(mask[0, 0])[0])
    assert (iy, ix) == (7, 7) and hm[0, 0, iy, ix] == 1
    assert float(wh[0, 0, iy, ix]) == pytest.approx(np.log(8))
    assert float(wh[0, 1, iy, ix]) == pytest.approx(np.log(6))
    assert float(hm[0, 0, 0, 15]) < 0.01


def test_the_schedule_warms_up_after_every_resume_and_follows_one_cosine():
    assert T.learning_rate(0, 1000, 0, 1.0) < 0.01
    assert T.learning_rate(500, 1000, T.WARMUP, 1.0) == pytest.approx(0.5)
    assert T.learning_rate(500, 1000, 0, 1.0) < 0.01  # resumed at 500: warming up again
    assert T.learning_rate(1000, 1000, T.WARMUP, 1.0) == pytest.approx(0.02)


def _pack(folder, n=6):
    (folder / "img").mkdir(parents=True)
    entries = []
    for k in range(n):
        img, boxes = _photo()
        file = f"img/p{k}.png"
        cv2.imwrite(str(folder / file), img)
        entries.append({"file": file, "set": "table-train" if k < n - 2 else "table-val",
                        "source": f"s{k}", "dice": [[*b, 3] for b in boxes.tolist()]})
    (folder / "pack.json").write_text(json.dumps({"version": 1, "images": entries}))


def test_a_short_call_writes_what_comes_back_and_a_second_resumes_it(tmp_path):
    _pack(tmp_path / "pack")
    out = tmp_path / "out"
    lines = []
    opts = dict(minutes=5, batch=2, size=128, lr=1e-3, scales=(0.8, 1.2), seed=0,
                log=lines.append)
    first = T.train(tmp_path / "pack", out, steps=3, **opts)
    assert first["steps_done"] == 3 and first["val"]["0.3"]["dice"] == 4
    assert {p.name for p in out.iterdir()} >= {"resume.pt", "detector.onnx", "val.json"}
    assert (out / "resume.pt").stat().st_size < 16 * 2 ** 20
    # the exported detector is in the companion's format
    session = ort.InferenceSession(str(out / "detector.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["image"]
    assert [o.name for o in session.get_outputs()] == ["hm", "wh"]
    second = T.train(tmp_path / "pack", out, steps=5, resume=out / "resume.pt", **opts)
    assert second["steps_done"] == 5 and second["this_call_steps"] == 2
    assert any("resumed at step 3" in line for line in lines)
    assert len(json.loads((out / "val.json").read_text())) == 2


def test_a_foreign_resume_file_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "resume.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(T.TrainError) as err:
        T.load_resume(bad, BigDetector())
    assert "not a resume file" in str(err.value) and "\n" not in str(err.value)
    torch.save({"version": 1, "step": 0, "weights": {"w": torch.zeros(2)}}, bad)
    with pytest.raises(T.TrainError, match="another architecture"):
        T.load_resume(bad, BigDetector())


def test_resume_weights_round_trip_at_half_precision(tmp_path):
    model = BigDetector()
    T.save_resume(tmp_path / "r.pt", model, 7, 100, 0)
    again = BigDetector()
    assert T.load_resume(tmp_path / "r.pt", again)["step"] == 7
    for a, b in zip(model.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.allclose(a.float(), b.float(), atol=1e-3, rtol=1e-3)


@needs_model
def test_the_companion_reads_with_the_big_detector_unchanged(tmp_path):
    from companion.vision.learned import LearnedReader

    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    T.export(BigDetector(), folder / "detector.onnx")
    reader = LearnedReader(folder)
    img, _ = _photo(480, 640)
    assert isinstance(reader.detect(img), list)


def test_the_command_refuses_bad_options_and_a_missing_pack(tmp_path, capsys):
    with pytest.raises(SystemExit):
        T.main(["--pack", str(tmp_path), "--out", str(tmp_path / "o"), "--size", "100"])
    with pytest.raises(SystemExit):
        T.main(["--pack", str(tmp_path), "--out", str(tmp_path / "o"), "--scales", "2,1"])
    assert T.main(["--pack", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no pack.json" in capsys.readouterr().out


@needs_model
def test_detector_speed_prints_a_time_per_size_and_the_load(capsys):
    from reader_lab.benchmarks import detector_speed

    assert detector_speed.main(["--onnx", str(MODEL_DIR / "detector.onnx"), "--sizes", "64x64",
                                "128x96", "--runs", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("64x64: ") and out[1].startswith("128x96: ")
    assert out[-1].startswith("load average: ")
    with pytest.raises(SystemExit):
        detector_speed.main(["--sizes", "100x64"])


def test_clutter_scenes_drawn_on_several_cores_are_the_ones_drawn_on_one():
    one = T.rendered_scenes(10, 3, workers=1)
    many = T.rendered_scenes(10, 3, workers=2)
    assert all(np.array_equal(a, b) for a, b in zip(one[0], many[0], strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(one[1], many[1], strict=True))


def test_a_call_with_clutter_scenes_trains_on_them_too(tmp_path):
    _pack(tmp_path / "pack")
    lines = []
    record = T.train(tmp_path / "pack", tmp_path / "out", minutes=5, steps=2, batch=2,
                     size=128, lr=1e-3, scales=(0.8, 1.2), seed=0, rendered=3,
                     log=lines.append)
    assert record["rendered"] == 3
    assert any("3 clutter scenes" in line for line in lines)
    assert any("3 scenes" in line for line in lines)


@needs_model
def test_detector_speed_times_face_networks_on_a_frame_of_crops(capsys):
    from reader_lab.benchmarks import detector_speed

    ups = [MODEL_DIR / "classifier_upright.onnx", MODEL_DIR / "classifier_upright_c28.onnx"]
    assert detector_speed.main(["--no-detector", "--new-faces", "--dice", "4", "--runs", "1",
                                "--classifiers", *map(str, ups)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("classifier_upright.onnx: ") and "4 crops of 64 px" in out[0]
    assert out[1].startswith("classifier_upright_c28.onnx: ") and "of 48 px" in out[1]
    assert out[2].startswith("classifier_upright_dev.onnx: ") and "of 64 px" in out[2]
    assert out[3].startswith("the 2 named together: ")
    assert out[-1].startswith("load average: ")
    with pytest.raises(SystemExit):
        detector_speed.main(["--dice", "0"])


@needs_model
def test_the_baseline_counts_an_onnx_detector_as_a_trained_one_is_counted(tmp_path, capsys):
    _pack(tmp_path / "pack")
    onnx_file = tmp_path / "big.onnx"
    model = BigDetector().eval()
    T.export(model, onnx_file)
    imgs = [_photo()[0]] * 2
    boxes = [_photo()[1]] * 2
    # the same figures from the ONNX file as from the network it was exported from
    assert T.evaluate(T.OnnxDetector(onnx_file), imgs, boxes, torch.device("cpu")) == \
        T.evaluate(model, imgs, boxes, torch.device("cpu"))
    assert T.main(["--pack", str(tmp_path / "pack"), "--baseline",
                   str(MODEL_DIR / "detector.onnx")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["threshold 0.3", "threshold 0.5",
                                                    "threshold 0.7"]
    assert all(" of 4 dice)" in line for line in out)
    assert T.main(["--pack", str(tmp_path / "pack"), "--baseline",
                   str(tmp_path / "missing.onnx")]) == 2
    assert "cannot load the detector" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        T.main(["--pack", str(tmp_path / "pack")])  # neither --out nor --baseline
