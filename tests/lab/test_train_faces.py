"""The face classifier's accelerator training (needs the optional [train] extra)."""

from __future__ import annotations

import json
import shutil

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from companion.vision.learned_model import crop  # noqa: E402
from companion.vision.learned_spec import CROP_SPAN, NOT_A_DIE  # noqa: E402
from reader_lab import train_faces as T  # noqa: E402
from reader_lab.clutter import clutter_scene  # noqa: E402
from reader_lab.train_detector import TrainError  # noqa: E402
from reader_lab.train_reader import Classifier  # noqa: E402
from tests.support.learned_model import MODEL_DIR, needs_model  # noqa: E402

CPU = torch.device("cpu")
DICE = ((40, 30, 72, 62, 3), (120, 90, 160, 130, 5))


def _photo(h=160, w=200, dice=DICE):
    """A dark table with bright dice, each with a dark dot nearer its top left corner."""
    img = np.full((h, w, 3), 30, np.uint8)
    for x0, y0, x1, y1, _ in dice:
        img[y0:y1, x0:x1] = 240
        img[y0 + 4:y0 + 10, x0 + 4:x0 + 10] = 0
    boxes = np.array([d[:4] for d in dice], np.float32)
    return img, boxes, np.array([d[4] for d in dice], np.int64)


def _pattern(h=120, w=160):
    """An image no turn, mirror or shift leaves the same."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([x * 1.5, y * 2, (x * y) % 97 * 2.5], -1)
    cv2.circle(img, (50, 40), 9, (255, 0, 0), -1)
    return np.clip(img, 0, 255).astype(np.uint8)


def _crops(imgs, dice_boxes, faces, whole, things=None):
    things = things or [np.zeros((0, 4), np.float32)] * len(imgs)
    return T.Crops(imgs, dice_boxes, faces, whole, things, CPU, [1.0] * len(imgs))


def _cut(data, cx, cy, span, angle, mirror=False, size=32):
    out = T.cut(data.images, data.wh, torch.tensor([0]), torch.tensor([float(cx)]),
                torch.tensor([float(cy)]), torch.tensor([float(span)]),
                torch.tensor([float(angle)]), torch.tensor([mirror]), size)
    return out[0].permute(1, 2, 0).numpy() * 255


def test_a_crop_cut_on_the_device_is_the_one_the_companion_cuts():
    img = _pattern()
    data = _crops([img], [np.array([[40, 30, 60, 50]], np.float32)], [np.array([2])],
                  [False])
    for angle, span in ((0, 40), (25, 40), (-30, 40), (10, 120)):  # 120: shrunk
        ours = _cut(data, 60, 50, span, angle)
        theirs = crop(img, 60, 50, span, angle, size=32).astype(np.float32)
        # the same to a level of rounding (out of 255)
        assert np.abs(ours - theirs).mean() < 1, angle
        if angle:
            turned_wrong = crop(img, 60, 50, span, -angle, size=32).astype(np.float32)
            assert np.abs(ours - turned_wrong).mean() > 10, angle
    # mirrored: the same crop flipped left to right
    assert np.abs(_cut(data, 60, 50, 40, 0, True) - _cut(data, 60, 50, 40, 0)[:, ::-1]
                  ).mean() < 1e-3
    # outside the photo its edge repeats, as the companion's border does
    edge = crop(img, 5, 5, 40, 0, size=32).astype(np.float32)
    assert np.abs(_cut(data, 5, 5, 40, 0) - edge).mean() < 1


def test_a_batch_holds_dice_with_their_faces_and_table_that_is_no_die():
    img, boxes, faces = _photo()
    data = _crops([img], [boxes], [faces], [True])
    gen = torch.Generator()
    gen.manual_seed(0)
    x, y = T.draw(data, 200, 0.3, 32, gen, photometric=False)
    assert x.shape[1:] == (3, 32, 32) and len(x) == len(y)
    dice = y != NOT_A_DIE
    assert set(y[dice].tolist()) == {2, 4}  # faces 3 and 5
    assert 30 <= int((~dice).sum()) <= 60
    centre = x[:, :, 12:20, 12:20].mean((1, 2, 3))
    assert float(centre[dice].min()) > 0.4  # a die's crop is centred on the bright die
    # table crops (never a die's centre in their middle half) are mostly dark; parts of
    # dice may be bright: the darkest half of the "not a die" crops is table
    neg = centre[~dice].sort().values
    assert float(neg[: len(neg) // 2].max()) < 0.4


def test_table_is_cut_only_from_photos_that_box_every_die():
    img, boxes, faces = _photo()
    data = _crops([img], [boxes], [faces], [False])
    assert len(data.table_photos) == 0
    gen = torch.Generator()
    gen.manual_seed(1)
    x, y = T.draw(data, 100, 0.3, 32, gen, photometric=False)
    # the only "not a die" left is parts of dice: each holds some of a bright die
    neg = x[y == NOT_A_DIE]
    assert len(neg) and float(neg.amax((1, 2, 3)).min()) > 0.5


def test_the_things_of_clutter_scenes_are_cut_as_not_a_die():
    things: list = []
    scene, dice_boxes = clutter_scene(4, 256, things)
    again, _ = clutter_scene(4, 256)
    assert np.array_equal(scene, again)  # asking for the things changes no scene
    assert things and all(0 <= (x0 + x1) / 2 <= 256 for x0, _, x1, _ in things)
    img, boxes, faces = _photo()
    data = _crops([img, scene], [boxes, dice_boxes], [faces, None], [True, False],
                  [np.zeros((0, 4), np.float32), np.array(things, np.float32)])
    assert len(data) == 2  # the scene's dice are not taught (drawn from any side)
    assert len(data.thing_photo) == len(things)
    gen = torch.Generator()
    gen.manual_seed(2)
    _, y = T.draw(data, 300, 0.3, 32, gen, photometric=False)
    assert int((y == NOT_A_DIE).sum()) >= 60


def test_figures_count_dice_right_not_a_die_another_face_and_table():
    classes = np.array([0, 1, 2, 3, NOT_A_DIE, NOT_A_DIE])
    pred = np.array([0, 1, NOT_A_DIE, 4, NOT_A_DIE, 2])
    f = T.figures(pred, classes)
    assert (f["dice"], f["right"], f["not_a_die"], f["other_face"]) == (4, 0.5, 0.25, 0.25)
    assert (f["table"], f["table_right"]) == (2, 0.5)


def _pack(folder, n=6):
    (folder / "img").mkdir(parents=True)
    entries = []
    for k in range(n):
        img, boxes, faces = _photo()
        file = f"img/p{k}.png"
        cv2.imwrite(str(folder / file), img)
        entries.append({"file": file, "set": "trays-train" if k < n - 2 else "trays-val",
                        "source": f"s{k}",
                        "dice": [[*b, int(f)] for b, f in zip(boxes.tolist(), faces,
                                                              strict=True)]})
    (folder / "pack.json").write_text(json.dumps({"version": 1, "images": entries}))


def test_a_short_call_writes_what_comes_back_and_a_second_resumes_it(tmp_path):
    _pack(tmp_path / "pack")
    out = tmp_path / "out"
    lines = []
    opts = dict(minutes=5, batch=8, crop_size=32, width=0.5, lr=1e-3, negatives=0.3,
                seed=0, name="classifier_upright_x", log=lines.append)
    first = T.train(tmp_path / "pack", out, steps=3, **opts)
    assert first["steps_done"] == 3
    assert first["val"]["trays-val"]["dice"] == 4 and first["val"]["trays-val"]["table"] == 4
    assert {p.name for p in out.iterdir()} >= {"resume.pt", "classifier_upright_x.onnx",
                                               "val.json"}
    session = ort.InferenceSession(str(out / "classifier_upright_x.onnx"),
                                   providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["crops"]
    assert [o.name for o in session.get_outputs()] == ["logits", "embedding"]
    logits, emb = session.run(None, {"crops": np.zeros((2, 3, 32, 32), np.float32)})
    assert logits.shape == (2, 7) and emb.shape == (2, 64)
    second = T.train(tmp_path / "pack", out, steps=5, resume=out / "resume.pt", **opts)
    assert second["steps_done"] == 5 and second["this_call_steps"] == 2
    assert any("resumed at step 3" in line for line in lines)
    assert len(json.loads((out / "val.json").read_text())) == 2
    # another width or crop cannot resume it
    with pytest.raises(TrainError, match="made for"):
        T.train(tmp_path / "pack", out, steps=9, resume=out / "resume.pt",
                **{**opts, "width": 1.0})


def test_a_foreign_resume_file_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "resume.pt"
    bad.write_bytes(b"not a checkpoint")
    arch = {"width": 1.0, "crop": 64}
    with pytest.raises(TrainError) as err:
        T.load_resume(bad, Classifier(), arch)
    assert "not a resume file" in str(err.value) and "\n" not in str(err.value)
    torch.save({"version": 1, "step": 0, "weights": {}}, bad)  # the detector's kind
    with pytest.raises(TrainError, match="face classifier resume file"):
        T.load_resume(bad, Classifier(), arch)


def test_the_command_refuses_bad_options_and_a_missing_pack(tmp_path, capsys):
    for bad in (["--crop", "40"], ["--negatives", "1"], ["--width", "9"]):
        with pytest.raises(SystemExit):
            T.main(["--pack", str(tmp_path), "--out", str(tmp_path / "o"), *bad])
    with pytest.raises(SystemExit):
        T.main(["--pack", str(tmp_path)])  # neither --out nor --baseline
    assert T.main(["--pack", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no pack.json" in capsys.readouterr().out


@needs_model
def test_the_companion_reads_faces_with_the_trained_network(tmp_path):
    from companion.vision.learned import LearnedReader

    _pack(tmp_path / "pack")
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    T.train(tmp_path / "pack", tmp_path / "out", minutes=5, steps=2, batch=8, crop_size=64,
            width=0.5, lr=1e-3, negatives=0.3, seed=0, name="classifier_upright_x",
            log=lambda _: None)
    shutil.copy(tmp_path / "out" / "classifier_upright_x.onnx", folder)
    reader = LearnedReader(folder, upright_files=["classifier_upright_x.onnx"],
                           crop_shapes={"classifier_upright_x.onnx": [64, CROP_SPAN]})
    img, boxes, _ = _photo()
    probs, _ = reader.classify(img, [list(b) for b in boxes])
    assert np.asarray(probs).shape == (2, 7)


@needs_model
def test_the_baseline_reads_the_same_validation_crops_with_a_model_folder(tmp_path, capsys):
    _pack(tmp_path / "pack")
    assert T.main(["--pack", str(tmp_path / "pack"), "--baseline", str(MODEL_DIR)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [line for line in out if line.startswith("trays-val: ")]
    assert "of 4 dice right" in out[0] and "of 4 read not a die" in out[0]
