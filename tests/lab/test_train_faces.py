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
    assert len(out) == 2 and out[0].startswith("trays-val: ")
    assert "of 4 dice right" in out[0] and "of 4 read not a die" in out[0]
    # few-shot on the embedding of record: trays-val from its own dice (no other set)
    # at N = 1 (3 and 10 need more dice a face than 4), the glyphs at every N
    assert out[1].startswith("few-shot: trays-val N=1 ")
    assert "glyphs N=1 " in out[1] and "N=3 " in out[1] and "N=10 " in out[1]


def test_the_contrastive_loss_is_lower_when_each_class_sits_together():
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    together = torch.eye(3).repeat_interleave(2, 0) + 0.01 * torch.randn(6, 3)
    apart = torch.eye(3)[torch.tensor([0, 1, 1, 2, 2, 0])]
    assert T.supcon(together, labels) < T.supcon(apart, labels)
    # no row with a partner: no loss, and a gradient of zeros rather than NaN
    e = torch.randn(3, 4, requires_grad=True)
    loss = T.supcon(e, torch.tensor([0, 1, 2]))
    loss.backward()
    assert float(loss) == 0 and torch.isfinite(e.grad).all()


def test_nearest_prototype_reads_classes_that_sit_apart_and_says_when_shots_run_short():
    rng = np.random.default_rng(0)
    centres = np.eye(4, 8) * 5
    classes = np.repeat(np.arange(4), 6)
    emb = centres[classes] + rng.normal(0, 0.3, (24, 8))
    assert T.nearest_prototype(emb, classes, 3, rng) == 1.0
    shuffled = rng.permutation(classes)
    assert T.nearest_prototype(emb, shuffled, 3, np.random.default_rng(1)) < 0.9
    assert T.nearest_prototype(emb, classes, 6, rng) is None  # no query left a class
    # prototypes of one set read another's dice
    other = centres[classes] + rng.normal(0, 0.3, (24, 8))
    assert T.nearest_prototype(emb, classes, 6, rng, (other, classes)) == 1.0


def test_fewshot_figures_read_each_set_from_the_other_and_glyphs_from_their_own_die():
    rng = np.random.default_rng(2)
    faces = np.repeat(np.arange(6), 12)
    sets = {"a": (np.eye(6, 16)[faces] + rng.normal(0, 0.1, (72, 16)), faces),
            "b": (np.eye(6, 16)[faces] + rng.normal(0, 0.1, (72, 16)), faces)}
    glyphs = np.eye(6, 16)[None, :, None, :] + rng.normal(0, 0.1, (2, 6, 16, 16))
    f = T.fewshot_figures(sets, glyphs)
    assert set(f) == {"a", "b", "glyphs"}
    assert f["a"] == f["b"] == f["glyphs"] == {"1": 1.0, "3": 1.0, "10": 1.0}
    noise = T.fewshot_figures({"a": (rng.normal(size=(72, 16)), faces)}, None)
    assert set(noise) == {"a"} and noise["a"]["10"] < 0.5


def test_a_glyph_batch_holds_views_of_each_glyph_changed_as_dice_crops_are():
    bank = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (5, 6, 3, 16, 16),
                                                              dtype=np.uint8))
    gen = torch.Generator().manual_seed(0)
    x, cls = T.draw_glyphs(bank, 3, gen)
    assert x.shape == (12, 3, 16, 16) and float(x.min()) >= 0 and float(x.max()) <= 1
    assert cls.tolist()[::4] == cls.unique_consecutive().tolist() and len(set(cls.tolist())) == 3
    x, cls = T.draw_glyphs(bank, 9, gen)  # more asked than the bank holds: each once
    assert sorted(set(cls.tolist())) == [0, 1, 2, 3, 4]


def test_a_call_that_teaches_the_embedding_records_few_shot_figures(tmp_path, capsys):
    _pack(tmp_path / "pack")
    lines = []
    rec = T.train(tmp_path / "pack", tmp_path / "out", minutes=5, steps=2, batch=8,
                  crop_size=32, width=0.5, lr=1e-3, negatives=0.3, seed=0, metric=0.5,
                  glyphs=4, glyph_views=4, log=lines.append)
    assert rec["metric"] == 0.5 and rec["glyphs"] == 4
    few = rec["val"]["fewshot"]
    assert set(few) == {"trays-val", "glyphs"} and set(few["glyphs"]) == {"1", "3", "10"}
    assert any(line.startswith("few-shot: trays-val") for line in lines)
    assert any("4 glyphs x 4 views drawn" in line for line in lines)
    # glyphs teach the embedding alone: refused without --metric
    with pytest.raises(SystemExit):
        T.main(["--pack", str(tmp_path / "pack"), "--out", str(tmp_path / "o"),
                "--glyphs", "10"])
    assert "give --metric too" in capsys.readouterr().err


def test_a_share_of_dice_is_cut_where_the_detector_boxed_them_and_phantoms_are_no_die():
    img, boxes, faces = _photo()
    # the detector: one box on die 2 (shifted, too large), one on no die (dark table)
    det = [np.array([[110, 85, 170, 145, 0.9, 1]], np.float32)]
    phantom = [np.array([[5, 120, 25, 140, 0.4]], np.float32)]
    data = T.Crops([img], [boxes], [faces], [True], [np.zeros((0, 4), np.float32)], CPU,
                   [1.0], det, phantom)
    assert len(data.box_photo) == 1 and int(data.box_face[0]) == 4  # die 2 shows a 5
    assert len(data.phantom_photo) == 1
    gen = torch.Generator().manual_seed(3)
    x, y = T.draw(data, 200, 0.0, 32, gen, photometric=False, box_share=1.0)
    assert y.tolist() == [4] * 200  # every die from the one detector box
    # cut where the box falls (its centre 5 px below the die's, its side 60 px against
    # the die's 40), turned a little and mirrored as every crop is, never moved or
    # scaled: the bright die sits a little above the middle, always as large
    bright = (x.mean(1) > 0.5).float()
    rows = torch.arange(32, dtype=torch.float32)[None, :, None]
    centre_y = (bright * rows).sum((1, 2)) / bright.sum((1, 2))
    share = bright.mean((1, 2))
    want = crop(img, 140, 115, 60 * CROP_SPAN, size=32).mean(2) > 127
    assert abs(float(share.mean()) - float(want.mean())) < 0.02
    assert float(share.std()) < 0.02 and 12.5 < float(centre_y.mean()) < 14.5
    # no box share: the labelled dice; "not a die" now also of the phantom (a quarter of
    # the 200 asked, less table and phantoms dropped with a die in their middle)
    assert "phantom" in T.KINDS
    _, y = T.draw(data, 400, 0.5, 32, gen, photometric=False)
    assert 150 <= int((y == NOT_A_DIE).sum()) <= 200
    assert set(y[y != NOT_A_DIE].tolist()) == {2, 4}


@needs_model
def test_pack_boxes_writes_what_a_call_cuts_dice_from_and_reads_validation_in(tmp_path,
                                                                             capsys):
    from reader_lab import pack_boxes

    _pack(tmp_path / "pack")
    assert pack_boxes.main(["--pack", str(tmp_path / "pack"), "--model", str(MODEL_DIR),
                            "--threshold", "0.05"]) == 0
    written = json.loads((tmp_path / "pack" / "boxes.json").read_text())
    assert written["version"] == 1 and len(written["images"]) == 6
    assert capsys.readouterr().out.strip().endswith("boxes.json")
    rec = T.train(tmp_path / "pack", tmp_path / "out", minutes=5, steps=2, batch=8,
                  crop_size=32, width=0.5, lr=1e-3, negatives=0.3, seed=0,
                  boxes=tmp_path / "pack" / "boxes.json", box_share=0.5,
                  log=lambda _: None)
    assert rec["box_share"] == 0.5 and "trays-val boxes" in rec["val"]
    assert set(rec["val"]["fewshot"]) == {"trays-val", "glyphs"}  # labelled boxes only
    # the model folder's own reader in the same boxes: the bar
    assert T.main(["--pack", str(tmp_path / "pack"), "--baseline", str(MODEL_DIR),
                   "--boxes", str(tmp_path / "pack" / "boxes.json")]) == 0
    said = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in said] == ["trays-val", "trays-val boxes",
                                                     "few-shot"]
    # bad options and a model folder that is not there: one line, exit 2
    with pytest.raises(SystemExit):
        pack_boxes.main(["--pack", str(tmp_path / "pack"), "--model", ".",
                         "--threshold", "2"])
    assert pack_boxes.main(["--pack", str(tmp_path / "pack"), "--model",
                            str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().out.startswith("pack-boxes: ")


def test_the_packs_rated_board_pieces_are_cut_as_not_a_die(tmp_path):
    _pack(tmp_path / "pack")
    meta = json.loads((tmp_path / "pack" / "pack.json").read_text())
    meta["images"][0]["not_dice"] = [[150.0, 10.0, 180.0, 40.0]]
    (tmp_path / "pack" / "pack.json").write_text(json.dumps(meta))
    lines: list[str] = []
    T.train(tmp_path / "pack", tmp_path / "out", minutes=5, steps=2, batch=8, crop_size=32,
            width=0.5, lr=1e-3, negatives=0.3, seed=0, name="classifier_upright_x",
            log=lines.append)
    said = next(line for line in lines if "things" in line)
    assert f"{T.PIECE_COPIES} things (1 rated board pieces x {T.PIECE_COPIES})" in said
