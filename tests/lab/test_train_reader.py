"""Training helpers of the learned reader (need the optional [train] extra: skipped without)."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from reader_lab import train_reader as T  # noqa: E402


def _with_batch_norm_stats(model) -> None:
    """Running statistics far from (0, 1), so folding them into the convs matters."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g))
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g))
    model.eval()


@pytest.mark.parametrize("kind", ["detector", "classifier"])
def test_weights_come_back_from_the_exported_onnx(tmp_path, kind):
    torch.manual_seed(0)
    model = T.Detector() if kind == "detector" else T.Classifier()
    _with_batch_norm_stats(model)
    (T._export_det if kind == "detector" else T._export_cls)(model, tmp_path)
    shape = (1, 3, 128, 160) if kind == "detector" else (3, 3, T.CROP, T.CROP)
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    session = ort.InferenceSession(str(tmp_path / f"{kind}.onnx"))
    want = session.run(None, {session.get_inputs()[0].name: x})

    again = T.Detector() if kind == "detector" else T.Classifier()
    T.load_onnx_weights(again, tmp_path / f"{kind}.onnx")
    again.eval()
    with torch.no_grad():
        got = again(torch.from_numpy(x))
    for w, g in zip(want, got, strict=True):
        assert np.abs(w - g.numpy()).max() < 1e-4


@pytest.mark.parametrize("grid, side", [(2, 64), (4, 64), (3, 48)])
def test_a_grid_classifier_exports_and_comes_back_on_both_runtimes(tmp_path, grid, side):
    """--cls-grid (issue 8z): the last feature map averaged over grid x grid parts; the
    exported file gives the torch network's outputs in ONNX Runtime and OpenCV DNN, and
    its weights come back for a fine-tune."""
    import cv2

    from reader_lab.train_spec import feature_side

    assert feature_side(side) % grid == 0
    torch.manual_seed(0)
    model = T.Classifier(grid=grid)
    _with_batch_norm_stats(model)
    assert model.emb.in_features == 128 * grid * grid
    T._export_cls(model, tmp_path, "classifier_upright", crop_size=side)
    x = np.random.default_rng(1).random((3, 3, side, side), dtype=np.float32)
    with torch.no_grad():
        want = [t.numpy() for t in model(torch.from_numpy(x))]
    path = str(tmp_path / "classifier_upright.onnx")
    got_ort = ort.InferenceSession(path).run(None, {"crops": x})
    net = cv2.dnn.readNetFromONNX(path)
    net.setInput(x)
    got_cv = net.forward(["logits", "embedding"])
    again = T.Classifier(grid=grid)
    T.load_onnx_weights(again, tmp_path / "classifier_upright.onnx")
    again.eval()
    with torch.no_grad():
        got_back = [t.numpy() for t in again(torch.from_numpy(x))]
    for got in (got_ort, got_cv, got_back):
        for w, g in zip(want, got, strict=True):
            assert np.abs(w - g).max() < 2e-2 * max(1.0, float(np.abs(w).max()))


def test_a_grid_that_does_not_tile_the_feature_map_is_refused_before_training():
    """Called from code, not the command line (which says so in one line first)."""
    with pytest.raises(ValueError, match="grid 2 does not divide the 3 cells across a 48 px"):
        T.train_classifier([], [1.0], 1, 2, 0, log=lambda m: None, grid=2)


def test_a_grid_classifier_knows_where_in_the_crop_it_saw_what():
    """Whole-map averaging cannot tell a feature map from the same map turned upside down
    (the same cells, moved); kept in parts (grid 2), the embedding can."""
    torch.manual_seed(0)
    f = torch.rand(2, 128, 4, 4)
    flipped = torch.flip(f, dims=[2])
    for grid, differs in ((1, False), (2, True)):
        model = T.Classifier(grid=grid).eval()
        model.body = torch.nn.Identity()
        with torch.no_grad():
            a, b = model(f)[1], model(flipped)[1]
        assert bool((a - b).abs().max() > 1e-4) == differs


def test_an_onnx_file_of_another_network_is_refused_naming_it(tmp_path):
    T._export_cls(T.Classifier().eval(), tmp_path)
    with pytest.raises(ValueError, match="classifier.onnx"):
        T.load_onnx_weights(T.Detector(), tmp_path / "classifier.onnx")


def test_fine_tuning_from_onnx_keeps_batch_norm_frozen(tmp_path):
    model = T.Classifier()
    _with_batch_norm_stats(model)
    T._export_cls(model, tmp_path)
    frozen = T._start_from(T.Classifier(), tmp_path, "classifier", log=lambda m: None)
    assert frozen  # no classifier.pt there: the ONNX weights, batch norm folded
    again = T.Classifier()
    T.load_onnx_weights(again, tmp_path / "classifier.onnx")
    again.train()
    T.freeze_batch_norm(again)
    bn = next(m for m in again.modules() if isinstance(m, torch.nn.BatchNorm2d))
    before = bn.running_mean.clone()
    again(torch.rand(4, 3, T.CROP, T.CROP) * 5)
    assert torch.equal(bn.running_mean, before)
    assert again.training and not bn.training


def test_a_saved_pt_is_preferred_and_trains_batch_norm(tmp_path):
    model = T.Detector()
    torch.save(model.state_dict(), tmp_path / "detector.pt")
    assert not T._start_from(T.Detector(), tmp_path, "detector", log=lambda m: None)
    assert not T._start_from(T.Detector(), None, "detector", log=lambda m: None)


def test_detector_scale_range_sets_the_die_size_seen():
    img = np.full((400, 400, 3), 90, np.uint8)
    # one 40 px die in the middle: in the crop whatever its offset
    boxes = np.array([[180, 180, 220, 220]], np.float32)

    def size_seen(scales):
        _, hm, wh, mask = T._det_sample(img, boxes.copy(), np.random.default_rng(3), 256,
                                        scales)
        iy, ix = np.argwhere(mask == 1)[0]
        return math.exp(wh[0, iy, ix]) * T.STRIDE

    base = 40 * T.DET_SIZE / 400
    assert size_seen((1.0, 1.0)) == pytest.approx(base, rel=0.02)
    assert size_seen((0.5, 0.5)) == pytest.approx(base / 2, rel=0.02)


def test_detector_stretch_squeezes_dice_within_the_ratio_and_is_off_by_default():
    img = np.full((400, 400, 3), 90, np.uint8)
    boxes = np.array([[180, 180, 220, 220]], np.float32)  # a square die

    def ratios(stretch, n=40):
        rng = np.random.default_rng(5)
        out = []
        for _ in range(n):
            _, _, wh, mask = T._det_sample(img, boxes.copy(), rng, 256, (1.0, 1.0), stretch)
            iy, ix = np.argwhere(mask == 1)[0]
            out.append(math.exp(wh[0, iy, ix] - wh[1, iy, ix]))  # width / height seen
        return np.array(out)

    assert np.allclose(ratios(1.0), 1.0, atol=0.02)
    seen = ratios(1.5)
    assert seen.min() >= 1 / 1.5 - 0.03 and seen.max() <= 1.5 + 0.03
    assert seen.min() < 0.85 and seen.max() > 1.15  # both ways
    # off: the same random draws as before the option, so earlier models rebuild
    a = T._det_sample(img, boxes.copy(), np.random.default_rng(9), 256)
    b = T._det_sample(img, boxes.copy(), np.random.default_rng(9), 256, T.DET_SCALES, 1.0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_detector_colour_draws_turn_hues_and_invert_but_leave_the_targets(monkeypatch):
    img = np.full((400, 400, 3), 90, np.uint8)
    img[180:220, 180:220] = (40, 40, 220)  # a red die on a grey table
    boxes = np.array([[180, 180, 220, 220]], np.float32)

    def pair(seed):
        plain = T._det_sample(img, boxes.copy(), np.random.default_rng(seed), 256, (1, 1))
        colour = T._det_sample(img, boxes.copy(), np.random.default_rng(seed), 256, (1, 1),
                               colour=True)
        # the geometry is drawn first: the same crop and targets, other colours
        assert all(np.array_equal(x, y) for x, y in zip(plain[1:], colour[1:], strict=True))
        return plain[0], colour[0]

    monkeypatch.setattr(T, "_colour_jitter", lambda c, rng, strong: c)  # colours alone
    monkeypatch.setattr(T, "DET_HUE_SHARE", 0.0)
    monkeypatch.setattr(T, "DET_INVERT_SHARE", 1.0)
    for seed in range(5):
        plain, colour = pair(seed)
        assert np.array_equal(colour, 255 - plain)
    monkeypatch.setattr(T, "DET_HUE_SHARE", 1.0)
    monkeypatch.setattr(T, "DET_INVERT_SHARE", 0.0)
    hues = []
    for seed in range(10):
        plain, colour = pair(seed)
        grey = (plain == plain[..., :1]).all(axis=2)  # the table: no hue to turn
        assert grey.mean() > 0.9 and np.array_equal(colour[grey], plain[grey])
        die = np.argwhere(~grey)[len(np.argwhere(~grey)) // 2]
        hues.append(int(cv2.cvtColor(colour[None, None, die[0], die[1]],
                                     cv2.COLOR_BGR2HSV)[0, 0, 0]))
    assert len({h // 15 for h in hues}) >= 4  # the red die turned to other hues
    # off (the default): the same draws as before the option, so earlier models rebuild
    monkeypatch.undo()
    a = T._det_sample(img, boxes.copy(), np.random.default_rng(9), 256)
    b = T._det_sample(img, boxes.copy(), np.random.default_rng(9), 256, colour=False)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


class _Photos:
    """A source of two photos, as RealImages holds them: each with its set's name."""

    def __init__(self, sets):
        self.sets = sets


def test_dyeing_repaints_whole_die_photos_a_share_of_draws_and_is_off_by_default():
    img = np.full((200, 200, 3), 90, np.uint8)
    img[80:120, 80:120] = 240  # a white die
    img[96:104, 96:104] = 10  # its pip
    boxes = np.array([[80, 80, 120, 120]], np.float32)
    src = _Photos(["table-train", "webcam-train"])
    rng = np.random.default_rng(3)
    dyed = [not np.array_equal(T._maybe_dye(src, 0, img, boxes, rng, 0.5), img)
            for _ in range(200)]
    assert 0.35 < np.mean(dyed) < 0.65  # about half the draws
    out = T._maybe_dye(src, 0, img, boxes, np.random.default_rng(1), 1.0)
    assert np.array_equal(out[:60], img[:60]) and not np.array_equal(out, img)
    # webcam boxes hug the pips, a rendered source has no set: never dyed, nothing drawn
    for source, i in ((src, 1), (object(), 0)):
        rng = np.random.default_rng(4)
        assert T._maybe_dye(source, i, img, boxes, rng, 1.0) is img
        assert rng.random() == np.random.default_rng(4).random()
    # off (the default): no draw at all, so earlier models rebuild
    rng = np.random.default_rng(4)
    assert T._maybe_dye(src, 0, img, boxes, rng, 0.0) is img
    assert rng.random() == np.random.default_rng(4).random()


def test_missed_dice_are_those_the_detector_scores_below_the_threshold():
    import cv2

    from companion.vision.learned import MODEL_DIR
    from reader_lab.render_dice import render_dice_scene

    img, dice = render_dice_scene(5, size=T.DET_SIZE)
    boxes = np.array([d.box for d in dice], np.float32)
    faces = np.array([d.face for d in dice])
    blank = np.full_like(img, 120)
    real = T.RealImages((), None)
    # the scene as labelled; a blank photo "labelled" with the same dice (none there)
    real.items = [(cv2.imencode(".png", im)[1].tobytes(), boxes, faces) for im in (img, blank)]
    real.sets = ["table-train"] * 2
    n = T.mine_missed(real, MODEL_DIR, log=lambda m: None)
    found, blind = real.missed
    assert blind == len(boxes)  # nothing on a blank photo: every label missed
    assert found < len(boxes) / 2  # most rendered dice are found
    assert n == found + blind
    # a threshold above every score misses them all
    T.mine_missed(real, MODEL_DIR, threshold=1.01, log=lambda m: None)
    assert real.missed == [len(boxes), len(boxes)]


def test_hard_share_draws_photos_in_proportion_to_missed_dice(monkeypatch):
    drawn = []

    class Photos:
        missed = [0, 0, 3, 1]

        def __len__(self):
            return 4

        def get(self, i):
            drawn.append(i)
            return (np.full((64, 64, 3), 90, np.uint8), np.zeros((0, 4), np.float32),
                    np.zeros(0, np.int64))

    def draws(share):
        drawn.clear()
        T.train_detector([Photos()], [1.0], steps=1, batch=400, size=64, seed=0,
                         log=lambda m: None, hard_share=share)
        return np.bincount(drawn, minlength=4) / len(drawn)

    monkeypatch.setattr(T, "_focal", lambda pred, gt: pred.mean())
    plain = draws(0.0)
    assert np.allclose(plain, 0.25, atol=0.07)
    hard = draws(1.0)
    assert hard[0] == hard[1] == 0 and hard[2] == pytest.approx(0.75, abs=0.07)
    half = draws(0.5)
    assert half[2] == pytest.approx(0.5 * 0.75 + 0.5 * 0.25, abs=0.07)


def test_hard_dice_give_more_classifier_crops_and_none_by_default():
    img = np.full((200, 200, 3), 90, np.uint8)
    boxes = np.array([[10, 10, 60, 60], [100, 100, 160, 160]], np.float32)
    faces = np.array([2, 5])
    hard = np.array([False, True])
    for weight, want in ((1, [1, 4]), (4, [1, 4, 4, 4, 4])):
        _, labels = T._cls_samples(img, boxes, faces, np.random.default_rng(0), per_die=1,
                                   backgrounds=0, hard=hard, hard_weight=weight)
        assert labels == want
    a = T._cls_samples(img, boxes, faces, np.random.default_rng(4), per_die=2, backgrounds=1)
    b = T._cls_samples(img, boxes, faces, np.random.default_rng(4), per_die=2, backgrounds=1,
                       hard=np.array([False, False]), hard_weight=5)
    assert a[1] == b[1] and all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True))


def test_hard_dice_are_those_the_reader_reads_wrong_or_unsure():
    import cv2

    from companion.vision.learned import MODEL_DIR
    from reader_lab.render_dice import render_dice_scene

    img, dice = render_dice_scene(7, size=T.DET_SIZE)
    boxes = np.array([d.box for d in dice], np.float32)
    faces = np.array([d.face for d in dice])
    wrong = faces % 6 + 1  # every die labelled with another face
    data = cv2.imencode(".png", img)[1].tobytes()
    real = T.RealImages((), None)
    real.items = [(data, boxes, faces), (data, boxes, wrong), (data, boxes[:0], faces[:0])]
    real.sets = ["table-train"] * 3
    n = T.mine_hard_dice(real, MODEL_DIR, log=lambda m: None)
    right, mislabelled, empty = real.hard_dice
    assert mislabelled.all() and len(empty) == 0
    assert right.sum() < len(right)  # the committed reader reads rendered dice
    assert n == right.sum() + len(mislabelled)
    T.mine_hard_dice(real, MODEL_DIR, threshold=1.01, log=lambda m: None)
    assert real.hard_dice[0].all()  # nothing is read that sure


def test_small_dice_give_more_classifier_crops_when_asked():
    img = np.full((200, 200, 3), 90, np.uint8)
    boxes = np.array([[10, 10, 30, 30], [100, 100, 160, 160]], np.float32)  # 20 px, 60 px
    faces = np.array([2, 5])
    for weight, want in ((1, [1, 4]), (3, [1, 1, 1, 4])):
        _, labels = T._cls_samples(img, boxes, faces, np.random.default_rng(0), per_die=1,
                                   backgrounds=0, small_weight=weight)
        assert labels == want


def test_a_model_to_start_from_that_will_not_load_is_one_line_naming_it(tmp_path):
    (tmp_path / "detector.onnx").write_bytes(b"not an onnx file")
    with pytest.raises(T.InitUnusable, match="detector.onnx: cannot read") as exc:
        T._start_from(T.Detector(), tmp_path, "detector", log=lambda m: None)
    assert "\n" not in str(exc.value)
    torch.save(T.Classifier().state_dict(), tmp_path / "detector.pt")  # the wrong network
    with pytest.raises(T.InitUnusable, match="detector.pt: cannot load") as exc:
        T._start_from(T.Detector(), tmp_path, "detector", log=lambda m: None)
    assert "\n" not in str(exc.value)


def test_render_cube_gives_the_upright_classifier_cube_scenes_only(tmp_path):
    from reader_lab import dice_photos

    if not dice_photos.available():
        pytest.skip(f"photo sets not found under {dice_photos.photo_root()}")
    logs: list[str] = []
    T.train(tmp_path, parts=("cls-upright",), upright_steps=1, rendered=2, render_cube=True,
            log=logs.append)
    assert any(m.startswith("upright cube scenes 2") for m in logs), logs
    assert not any(m.startswith("rendered scenes") for m in logs)  # no flat scenes drawn
    assert (tmp_path / "classifier_upright.onnx").is_file()
    flat, cube = T.Rendered(1, 0, upright=True), T.Rendered(1, 0, upright=True, cube=True)
    assert not np.array_equal(flat.get(0)[0], cube.get(0)[0])


def test_parts_of_dice_and_false_peaks_are_not_a_die():
    img = np.full((200, 200, 3), 90, np.uint8)
    boxes = np.array([[10, 10, 50, 50], [100, 100, 160, 160]], np.float32)
    faces = np.array([2, 5])
    peaks = np.array([[150, 20, 180, 50]], np.float32)
    crops, labels = T._cls_samples(img, boxes, faces, np.random.default_rng(0), per_die=1,
                                   backgrounds=0, part_share=1.0, false_peaks=peaks)
    # each die: its face, then a part of it; the false peak: two crops
    assert labels == [1, T.NOT_A_DIE, 4, T.NOT_A_DIE, T.NOT_A_DIE, T.NOT_A_DIE]
    assert len(crops) == len(labels)
    plain = T._cls_samples(img, boxes, faces, np.random.default_rng(0), per_die=1,
                           backgrounds=0)[1]
    assert plain == [1, 4]  # by default neither


@pytest.fixture
def crops_seen(monkeypatch) -> list[tuple[float, float, float]]:
    """Each crop _cls_samples asks for, as (centre x, centre y, side), in order."""
    seen = []

    def crop(img, cx, cy, side, angle=0.0, size=T.CROP, area=False):
        seen.append((cx, cy, side))
        return np.zeros((size, size, 3), np.uint8)

    monkeypatch.setattr(T, "crop", crop)
    return seen


def test_part_of_a_die_is_off_its_centre_and_smaller(crops_seen):
    seen = crops_seen
    img = np.zeros((300, 300, 3), np.uint8)
    boxes = np.array([[100, 100, 200, 200]], np.float32)  # a 100 px die centred at 150
    rng = np.random.default_rng(3)
    for _ in range(50):
        seen.clear()
        _, labels = T._cls_samples(img, boxes, np.array([1]), rng, per_die=1,
                                   backgrounds=0, part_share=1.0)
        assert labels == [0, T.NOT_A_DIE]
        (wx, wy, whole), (px, py, part) = seen
        assert math.hypot(wx - 150, wy - 150) < 30 and whole >= 0.8 * T.CROP_SPAN * 100
        # a part: its centre a third to two thirds of the die off, a third to two
        # thirds of the die's crop in size
        assert 33 <= math.hypot(px - 150, py - 150) <= 67
        assert 0.33 * T.CROP_SPAN * 100 <= part <= 0.67 * T.CROP_SPAN * 100


def test_half_the_crops_of_a_die_are_centred_on_its_detector_box(crops_seen):
    seen = crops_seen
    img = np.zeros((400, 400, 3), np.uint8)
    boxes = np.array([[100, 100, 200, 200], [300, 300, 340, 340]], np.float32)
    # the detector boxed the first die 40 px right of its label and larger; not the second
    die_boxes = np.array([[140, 100, 260, 220, 0]], np.float32)
    crops, labels = T._cls_samples(img, boxes, np.array([3, 5]), np.random.default_rng(0),
                                   per_die=200, backgrounds=0, die_boxes=die_boxes)
    assert labels == [2] * 200 + [4] * 200
    first, second = seen[:200], seen[200:]
    on_det = [s for s in first if math.hypot(s[0] - 200, s[1] - 160) < 15]
    on_label = [s for s in first if math.hypot(s[0] - 150, s[1] - 150) < 25]
    assert len(on_det) + len(on_label) == 200 and 70 <= len(on_det) <= 130
    assert all(0.9 * 120 * T.CROP_SPAN <= side <= 1.1 * 120 * T.CROP_SPAN
               for _, _, side in on_det)
    assert all(math.hypot(x - 320, y - 320) < 15 for x, y, _ in second)  # its own label
    # without detector boxes the crops (and the random draws) are as before
    seen.clear()
    T._cls_samples(img, boxes, np.array([3, 5]), np.random.default_rng(0), per_die=200,
                   backgrounds=0)
    plain = list(seen)
    seen.clear()
    T._cls_samples(img, boxes, np.array([3, 5]), np.random.default_rng(0), per_die=200,
                   backgrounds=0, die_boxes=np.zeros((0, 5), np.float32))
    assert seen == plain


def test_wide_box_jitter_spreads_crops_on_detector_boxes_as_unseen_dice_need(crops_seen):
    """--wide-box-jitter (issue 8z): crops on a detector box span 0.75-1.25x its side and
    move by 5% of it instead of 0.9-1.1x and 3%; the random draws are the same, so crops
    on the labelled box stay where they were."""
    seen = crops_seen
    img = np.zeros((400, 400, 3), np.uint8)
    boxes = np.array([[100, 100, 200, 200]], np.float32)
    die_boxes = np.array([[100, 100, 200, 200, 0]], np.float32)  # on the label: same centre
    kw = {"per_die": 400, "backgrounds": 0, "die_boxes": die_boxes}
    ra, rb = np.random.default_rng(0), np.random.default_rng(0)
    T._cls_samples(img, boxes, np.array([3]), ra, **kw)
    plain = list(seen)
    seen.clear()
    T._cls_samples(img, boxes, np.array([3]), rb, box_jitter=T.WIDE_BOX_JITTER, **kw)
    wide = list(seen)
    assert ra.random() == rb.random()  # the same number of draws
    moved = [(p, w) for p, w in zip(plain, wide, strict=True) if p != w]
    assert 130 <= len(moved) <= 270  # about half the crops are on the detector's box
    span = 100 * T.CROP_SPAN
    assert all(0.9 * span <= p[2] <= 1.1 * span and 0.75 * span <= w[2] <= 1.25 * span
               for p, w in moved)
    # the same draw, scaled: the size's offset from the middle and the centre's shift grow
    for p, w in moved:
        assert abs(w[2] / span - 1) >= abs(p[2] / span - 1) - 1e-6
        assert abs(w[0] - 150) == pytest.approx(abs(p[0] - 150) * 0.05 / 0.03, abs=1e-3)
    sides = np.array([w[2] for _, w in moved]) / span
    assert sides.min() < 0.85 and sides.max() > 1.15


def test_die_boxes_are_the_detectors_boxes_on_labelled_dice():
    import cv2

    from companion.vision.learned import MODEL_DIR
    from reader_lab.render_dice import render_dice_scene

    img, dice = render_dice_scene(5, size=T.DET_SIZE)
    boxes = np.array([d.box for d in dice], np.float32)
    real = T.RealImages((), None)
    real.items = [(cv2.imencode(".png", img)[1].tobytes(), boxes[:2],
                   np.array([d.face for d in dice[:2]]))]
    real.sets = ["table-train"]  # boxes on dice are mined whether or not all are labelled
    n = T.mine_die_boxes(real, MODEL_DIR, log=lambda m: None)
    (found,) = real.die_boxes
    assert n == len(found) >= 2 and set(found[:, 4].astype(int)) == {0, 1}
    for x0, y0, x1, y1, j in found:  # each on the labelled die it names
        b = boxes[int(j)]
        assert b[0] <= (x0 + x1) / 2 <= b[2] and b[1] <= (y0 + y1) / 2 <= b[3]


def test_false_peaks_are_the_detectors_boxes_where_no_die_is_labelled(tmp_path):
    import cv2

    from companion.vision.learned import MODEL_DIR
    from reader_lab.render_dice import render_dice_scene

    img, dice = render_dice_scene(5, size=T.DET_SIZE)
    assert len(dice) >= 3
    boxes = np.array([d.box for d in dice], np.float32)
    faces = np.array([d.face for d in dice])
    data = cv2.imencode(".png", img)[1].tobytes()
    real = T.RealImages((), None)
    # the same photo labelled with its first die only, in a fully labelled set and not
    real.items = [(data, boxes[:1], faces[:1])] * 2
    real.sets = ["trays-train", "table-train"]
    n = T.mine_false_peaks(real, MODEL_DIR, log=lambda m: None)
    found, none = real.false_peaks
    assert len(none) == 0  # not every die is labelled there: nothing is taught
    assert n == len(found) >= 1
    for x0, y0, x1, y1 in found:  # never on the labelled die
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        b = boxes[0]
        assert not (b[0] <= cx <= b[2] and b[1] <= cy <= b[3])
    # most are the dice left unlabelled
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in boxes[1:]]
    on_dice = sum(any(x0 <= cx <= x1 and y0 <= cy <= y1 for cx, cy in centres)
                  for x0, y0, x1, y1 in found)
    assert on_dice >= min(len(centres), 2)


def test_a_detector_to_mine_that_will_not_load_is_one_line_naming_it(tmp_path):
    from companion.vision.learned import ModelUnreadable

    (tmp_path / "detector.onnx").write_bytes(b"not an onnx file")
    real = T.RealImages((), None)
    with pytest.raises(ModelUnreadable, match="detector.onnx: cannot load") as exc:
        T.mine_false_peaks(real, tmp_path, log=lambda m: None)
    assert "\n" not in str(exc.value)


class _Scripted:
    """A generator whose draws are given: ``random`` and ``uniform`` / ``integers`` in turn
    (``_camera_augment``'s decisions), arrays from a real generator."""

    def __init__(self, draws):
        self.draws = list(draws)
        self.real = np.random.default_rng(0)

    def random(self, size=None):
        return self.real.random(size) if size is not None else self.draws.pop(0)

    def uniform(self, lo, hi):
        return self.draws.pop(0)

    def integers(self, lo, hi):
        return self.draws.pop(0)


def _square() -> np.ndarray:
    c = np.full((T.CROP, T.CROP, 3), 90, np.uint8)
    c[14:34, 14:34] = 230  # a light die, 20 px, in the middle
    return c


def test_camera_squeeze_shortens_the_die_top_to_bottom_only():
    out = T._camera_augment(_square(), _Scripted([0.0, 0.7, 1.0, 1.0]))
    rows = np.flatnonzero(out[:, 24, 0] > 160)
    cols = np.flatnonzero(out[24, :, 0] > 160)
    assert out.shape == (T.CROP, T.CROP, 3) and out.dtype == np.uint8
    assert 12 <= len(rows) <= 16  # 20 px times 0.7, about the centre
    assert abs((rows[0] + rows[-1]) / 2 - 23.5) <= 1
    assert len(cols) == 20


def test_camera_dots_and_jpeg_change_pixels_as_drawn():
    grey = np.full((T.CROP, T.CROP, 3), 128, np.uint8)
    dotted = T._camera_augment(grey, _Scripted([1.0, 0.0, 0.04, 1.0]))
    dots = np.all(dotted == 0, axis=2) | np.all(dotted == 255, axis=2)
    assert 0.02 < dots.mean() < 0.06
    assert np.all(dotted[~dots] == 128)
    jpeg = T._camera_augment(_square(), _Scripted([1.0, 1.0, 0.0, 25]))
    diff = np.abs(jpeg.astype(int) - _square().astype(int))
    assert 0 < diff.max() < 80  # blocks and ringing at the die's edges, not a new picture
    untouched = T._camera_augment(_square(), _Scripted([1.0, 1.0, 1.0]))
    assert np.array_equal(untouched, _square())


def test_camera_aug_off_keeps_the_old_draws():
    c = _square()
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(T._cls_augment(c, a), T._cls_augment(c, b, camera=False))
    assert a.random() == b.random()
    on = np.random.default_rng(5)
    T._cls_augment(c, on, camera=True)
    assert on.random() != np.random.default_rng(5).random()  # it draws more


def _fine_detail(c: np.ndarray) -> float:
    return float(cv2.Laplacian(cv2.cvtColor(c, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var())


def test_low_res_share_sets_how_many_crops_lose_their_detail():
    """Issue 9g: every crop at share 1, none at 0; the default is the old 10%."""
    board = np.kron((np.indices((24, 24)).sum(0) % 2), np.ones((2, 2)))  # 2 px squares
    c = np.repeat((board * 200 + 30).astype(np.uint8)[..., None], 3, axis=2)
    seeds = range(40)
    none = [T._cls_augment(c, np.random.default_rng(s), low_res=0.0) for s in seeds]
    every = [T._cls_augment(c, np.random.default_rng(s), low_res=1.0) for s in seeds]
    # the same draws up to the last step, so each pair differs by the shrink alone
    shrunk = [_fine_detail(e) < 0.5 * _fine_detail(n) for n, e in zip(none, every, strict=True)]
    assert all(shrunk)
    assert all(e.shape == c.shape for e in every)
    old = [T._cls_augment(c, np.random.default_rng(s)) for s in seeds]
    tenth = [T._cls_augment(c, np.random.default_rng(s), low_res=0.1) for s in seeds]
    assert all(np.array_equal(o, t) for o, t in zip(old, tenth, strict=True))
    lost = sum(not np.array_equal(o, n) for o, n in zip(old, none, strict=True))
    assert 0 < lost < len(seeds) // 2  # a few of forty, not none and not most


def _die_crop(face: int = 5, side: int = 64) -> np.ndarray:
    """A white die with black pips filling 1/1.3 of a grey crop: plenty of fine detail."""
    c = np.full((side, side, 3), 120, np.uint8)
    d = int(side / 1.3)
    o = (side - d) // 2
    c[o:o + d, o:o + d] = 235
    spots = {1: [(2, 2)], 5: [(1, 1), (1, 3), (2, 2), (3, 1), (3, 3)],
             6: [(1, 1), (2, 1), (3, 1), (1, 3), (2, 3), (3, 3)]}[face]
    for gx, gy in spots:
        cv2.circle(c, (o + gx * d // 4, o + gy * d // 4), max(2, d // 12), (20, 20, 20), -1)
    return c


def test_an_unreadable_die_keeps_its_size_and_loses_its_pips():
    """Issue 9x: shrunk past reading or blurred, a die crop keeps its shape but not the
    fine detail its pips give; a five and a six differ far less than they did."""
    five, six = _die_crop(5), _die_crop(6)
    for s in range(20):
        a = T._unreadable(five, np.random.default_rng(s), 1.3)
        b = T._unreadable(six, np.random.default_rng(s), 1.3)
        assert a.shape == five.shape and a.dtype == np.uint8
        assert _fine_detail(a) < 0.05 * _fine_detail(five)
        apart = np.abs(five.astype(int) - six).mean()
        assert np.abs(a.astype(int) - b).mean() < 0.75 * apart
        assert abs(float(a.mean()) - float(five.mean())) < 12  # still a light die on grey


def test_unreadable_share_relabels_die_crops_only_and_is_off_by_default():
    """That share of the die crops become unreadable, labelled evenly over the six faces
    and nothing on "not a die"; "not a die" crops (a class or a row) are never touched,
    and at share 0 the crops, labels and draws are those of before."""
    crops = [_die_crop(5) for _ in range(400)]
    row = np.array([0, .9, 0, 0, 0, 0, .1], np.float32)  # a soft die label
    not_row = np.array([0, 0, 0, 0, 0, .2, .8], np.float32)
    labels = [4, T.NOT_A_DIE, row, not_row] * 100
    take = list(zip(crops, labels, strict=True))
    rng = np.random.default_rng(3)
    out = T._make_unreadable(take, rng, 0.25, 1.3)
    changed = [i for i, ((c, _), (d, _)) in enumerate(zip(take, out, strict=True))
               if c is not d]
    assert all(i % 4 in (0, 2) for i in changed)  # dice only
    assert 0.15 < len(changed) / 200 < 0.35
    for i in changed:
        np.testing.assert_allclose(out[i][1], [1 / 6] * 6 + [0])
    assert all(out[i][1] is labels[i] for i in range(len(take)) if i not in changed)
    off = np.random.default_rng(3)
    assert all(x is y and m is n for (x, m), (y, n)
               in zip(T._make_unreadable(take, off, 0.0, 1.3), take, strict=True))
    assert off.random() == np.random.default_rng(3).random()  # nothing drawn at 0 either


def test_a_checkpoint_from_before_low_res_share_resumes_with_the_old_share(tmp_path):
    """Runs checkpointed before the option existed had the default share."""
    path = tmp_path / "classifier_upright.resume.pt"
    T.Checkpoint(path, {"seed": 9}).save(500)  # written without the key
    assert T.Checkpoint(path, {"seed": 9, "low_res_share": T.LOW_RES_SHARE}
                        ).load().state["step"] == 500
    with pytest.raises(T.CheckpointUnusable, match="other low_res_share"):
        T.Checkpoint(path, {"seed": 9, "low_res_share": 0.4}).load()


@pytest.mark.parametrize("key, new", [("det_colour", True), ("dye_share", 0.5)])
def test_a_checkpoint_from_before_the_colour_options_resumes_with_them_off(tmp_path, key,
                                                                           new):
    """Runs checkpointed before issue 9r's --det-colour and 9s's --dye-share had them off."""
    path = tmp_path / "detector.resume.pt"
    T.Checkpoint(path, {"seed": 9}).save(500)  # written without the keys
    off = {"seed": 9, "det_colour": False, "dye_share": 0.0}
    assert T.Checkpoint(path, off).load().state["step"] == 500
    with pytest.raises(T.CheckpointUnusable, match=f"other {key}"):
        T.Checkpoint(path, off | {key: new}).load()


@pytest.mark.parametrize("kind", ["detector", "classifier"])
def test_exported_weights_are_stored_at_half_precision_and_read_as_before(tmp_path, kind):
    """The committed networks must stay "a few MB": an export keeps its weights as
    16-bit floats cast back at load, so the file is about half the size and ONNX Runtime
    and OpenCV DNN give what the full-precision network gives, to rounding."""
    import cv2
    import onnx

    torch.manual_seed(0)
    model = T.Detector() if kind == "detector" else T.Classifier()
    _with_batch_norm_stats(model)
    (T._export_det if kind == "detector" else T._export_cls)(model, tmp_path)
    path = tmp_path / f"{kind}.onnx"
    weights = [t for t in onnx.load(str(path)).graph.initializer if len(t.dims)]
    assert weights and all(t.data_type == onnx.TensorProto.FLOAT16 for t in weights
                           if np.prod(t.dims) >= 16)
    shape = (1, 3, 128, 160) if kind == "detector" else (3, 3, T.CROP, T.CROP)
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    with torch.no_grad():
        want = [t.numpy() for t in model(torch.from_numpy(x))]
    session = ort.InferenceSession(str(path))
    got = session.run(None, {session.get_inputs()[0].name: x})
    net = cv2.dnn.readNetFromONNX(str(path))
    net.setInput(x)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == np.float32
        assert np.abs(w - g).max() < 2e-2 * max(1.0, np.abs(w).max())
    assert np.abs(net.forward() - got[0]).max() < 1e-4
    # running it again changes nothing
    size = path.stat().st_size
    assert not T.store_half(path) and path.stat().st_size == size


def test_store_half_halves_a_full_precision_file(tmp_path):
    path = tmp_path / "full.onnx"
    torch.onnx.export(T.Classifier().eval(), torch.zeros(1, 3, T.CROP, T.CROP), str(path),
                      input_names=["crops"], output_names=["logits", "embedding"],
                      **T._ONNX)
    full = path.stat().st_size
    assert T.store_half(path)
    assert path.stat().st_size < 0.55 * full


def test_store_half_refuses_a_file_with_no_network_naming_it(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("x\n")
    with pytest.raises(ValueError, match="notes.onnx: not an ONNX network"):
        T.store_half(path)
    assert path.read_text() == "x\n"  # left as it was


def test_store_half_refuses_a_missing_file_naming_it(tmp_path):
    with pytest.raises(ValueError, match="gone.onnx: cannot read"):
        T.store_half(tmp_path / "gone.onnx")


def _unmerged_detector(path: Path) -> None:
    """A detector exported as before issue 9p: two output convolutions, half weights."""
    torch.manual_seed(0)
    model = T.Detector()
    _with_batch_norm_stats(model)
    torch.onnx.export(model, torch.zeros(1, 3, T.DET_SIZE, T.DET_SIZE), str(path),
                      input_names=["image"], output_names=["hm", "wh"],
                      dynamic_axes={"image": {2: "h", 3: "w"}, "hm": {2: "oh", 3: "ow"},
                                    "wh": {2: "oh", 3: "ow"}}, **T._ONNX)
    T.store_half(path)


def _convs(path: Path) -> int:
    import onnx

    return sum(n.op_type == "Conv" for n in onnx.load(str(path)).graph.node)


def test_merge_heads_gives_both_outputs_bit_for_bit_on_both_runtimes(tmp_path):
    """Issue 9p: the heat map's and the box sizes' convolutions made one; ONNX Runtime and
    OpenCV DNN give exactly what the unmerged file gives, at any input size."""
    import shutil

    import cv2

    before, after = tmp_path / "before.onnx", tmp_path / "after.onnx"
    _unmerged_detector(before)
    shutil.copy(before, after)
    assert T.merge_heads(after)
    assert _convs(after) == _convs(before) - 1
    rng = np.random.default_rng(3)
    for shape in ((1, 3, 128, 160), (1, 3, 96, 64)):
        x = rng.random(shape, dtype=np.float32)
        want = ort.InferenceSession(str(before)).run(["hm", "wh"], {"image": x})
        got = ort.InferenceSession(str(after)).run(["hm", "wh"], {"image": x})
        for w, g in zip(want, got, strict=True):
            assert w.shape == g.shape and np.array_equal(w, g)
        net = cv2.dnn.readNetFromONNX(str(after))
        net.setInput(x)
        for w, g in zip(want, net.forward(["hm", "wh"]), strict=True):
            assert np.abs(w - g).max() < 1e-5
    # the same bytes merge to the same bytes (a retrain's export rebuilds the file the
    # conversion made); running it again changes nothing; the weights come back for a
    # fine-tune as before
    data = after.read_bytes()
    again = tmp_path / "again.onnx"
    shutil.copy(before, again)
    assert T.merge_heads(again) and again.read_bytes() == data
    assert not T.merge_heads(after) and after.read_bytes() == data
    a, b = T.Detector(), T.Detector()
    T.load_onnx_weights(a, before)
    T.load_onnx_weights(b, after)
    assert all(torch.equal(v, b.state_dict()[k]) for k, v in a.state_dict().items())


def test_an_exported_detector_has_its_output_convolutions_merged(tmp_path):
    path = tmp_path / "plain.onnx"
    _unmerged_detector(path)
    T._export_det(T.Detector().eval(), tmp_path)
    assert _convs(tmp_path / "detector.onnx") == _convs(path) - 1


def test_the_committed_detector_has_its_output_convolutions_merged():
    from companion.vision.learned import MODEL_DIR

    path = MODEL_DIR / "detector.onnx"
    if not path.is_file():
        pytest.skip("no committed model")
    data = path.read_bytes()
    assert not T.merge_heads(path)  # nothing left to merge, file untouched
    assert path.read_bytes() == data


def test_merge_heads_refuses_a_file_with_no_network_or_none_at_all_naming_it(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("x\n")
    with pytest.raises(ValueError, match="notes.onnx: not an ONNX network"):
        T.merge_heads(path)
    assert path.read_text() == "x\n"
    with pytest.raises(ValueError, match="gone.onnx: cannot read"):
        T.merge_heads(tmp_path / "gone.onnx")


def test_merge_heads_leaves_a_classifier_alone(tmp_path):
    T._export_cls(T.Classifier().eval(), tmp_path)
    path = tmp_path / "classifier.onnx"
    data = path.read_bytes()
    assert not T.merge_heads(path) and path.read_bytes() == data


def test_the_merge_tool_converts_a_file_once_and_names_one_it_cannot_read(tmp_path):
    import shutil
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    before, path = tmp_path / "before.onnx", tmp_path / "detector.onnx"
    _unmerged_detector(before)
    shutil.copy(before, path)

    def run(*names):
        done = subprocess.run([sys.executable, "-m", "reader_lab", "merge-heads",
                               *map(str, names)], capture_output=True, text=True, cwd=repo)
        return done.returncode, done.stdout.strip().splitlines()

    assert run(path, path) == (0, [f"{path}: output convolutions now one",
                                   f"{path}: nothing to merge"])
    assert _convs(path) == _convs(before) - 1
    code, lines = run(tmp_path / "gone.onnx")
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"{tmp_path / 'gone.onnx'}:")
    code, lines = run()
    assert code == 2 and lines == ["Merge a detector's two output convolutions into one: "
                                   "python -m reader_lab merge-heads FILE..."]


def test_rewrite_files_stops_at_the_first_file_it_cannot_read(tmp_path):
    said, seen = [], []

    def rewrite(path):
        seen.append(path.name)
        if path.name == "bad.onnx":
            raise T.InitUnusable(f"{path}: cannot read: broken")
        return path.name == "a.onnx"

    names = [str(tmp_path / n) for n in ("a.onnx", "b.onnx", "bad.onnx", "c.onnx")]
    assert T.rewrite_files(names, rewrite, "done", "as it was", "usage", said.append) == 2
    assert seen == ["a.onnx", "b.onnx", "bad.onnx"]
    assert [str(x) for x in said] == [f"{names[0]}: done", f"{names[1]}: as it was",
                                      f"{names[2]}: cannot read: broken"]
    assert T.rewrite_files([], rewrite, "done", "as it was", "usage", said.append) == 2
    assert said[-1] == "usage"


def test_ema_returns_the_running_average_of_the_same_steps(monkeypatch):
    """--ema changes what is exported, not the steps: after two steps the network is
    decay x the first step's weights + (1 - decay) x the second's (the first copied).
    The rate is held still, so a one-step run's weights are a two-step run's first."""

    class Still:
        def __init__(self, *args, **kwargs):
            pass

        def step(self):
            pass

    monkeypatch.setattr(T.torch.optim.lr_scheduler, "OneCycleLR", Still)

    class OneDie:
        def __len__(self):
            return 1

        def get(self, i):
            img = np.full((96, 96, 3), 60, np.uint8)
            img[30:60, 30:60] = 230
            return img, np.array([[30, 30, 60, 60]], np.float32), np.array([2])

    def run(steps, ema=0.0):
        torch.manual_seed(0)
        net = T.train_classifier([OneDie()], [1.0], steps=steps, batch=8, seed=0,
                                 log=lambda m: None, ema=ema)
        return {k: v.detach().clone() for k, v in net.state_dict().items()}

    one, two = run(1), run(2)
    averaged = run(2, ema=0.75)
    moved = [k for k in two if two[k].is_floating_point() and not torch.equal(one[k], two[k])]
    assert moved  # the second step changed weights, so the average can tell them apart
    for k in moved:
        torch.testing.assert_close(averaged[k], 0.75 * one[k] + 0.25 * two[k])
    assert run(2, ema=0.0).keys() == two.keys()


def test_area_crops_draw_the_same_samples_cut_with_an_area_filter():
    from companion.vision.learned_model import crop

    img = np.random.default_rng(2).integers(0, 256, (300, 300, 3), dtype=np.uint8)
    boxes = np.array([[20, 20, 120, 120], [150, 160, 260, 270]], np.float32)  # big dice
    faces = np.array([3, 6])
    kw = {"per_die": 2, "backgrounds": 2, "upright": True, "part_share": 1.0,
          "false_peaks": np.array([[200, 20, 290, 110]], np.float32)}
    ra, rb = np.random.default_rng(9), np.random.default_rng(9)
    plain, plain_labels = T._cls_samples(img, boxes, faces, ra, **kw)
    area, area_labels = T._cls_samples(img, boxes, faces, rb, area=True, **kw)
    assert plain_labels == area_labels and ra.random() == rb.random()  # the same draws
    assert all(a.shape == p.shape for a, p in zip(area, plain, strict=True))
    assert all(not np.array_equal(a, p) for a, p in zip(area, plain, strict=True))
    # the first crop is the first die's: the same cut with the filter
    again = np.random.default_rng(9)
    side = 100 * T.CROP_SPAN * again.uniform(0.8, 1.3)
    cx, cy = 70 + again.normal(0, 0.06) * 100, 70 + again.normal(0, 0.06) * 100
    angle = float(again.normal(0, T.UPRIGHT_TURN))
    want = crop(img, cx, cy, side, angle, area=True)
    if again.random() < 0.5:
        want = np.ascontiguousarray(want[:, ::-1])
    assert np.array_equal(area[0], want)


def test_a_classifier_trained_on_area_crops_says_so_in_its_file(tmp_path):
    from reader_lab.tune_reader import area_networks

    torch.manual_seed(0)
    model = T.Classifier()
    model.eval()
    T._export_cls(model, tmp_path, "classifier_upright", area_crops=True)
    T._export_cls(model, tmp_path, "classifier_upright_b")
    files = ["classifier_upright.onnx", "classifier_upright_b.onnx", "missing.onnx"]
    assert area_networks(tmp_path, files) == ["classifier_upright.onnx"]
    # the mark changes nothing the network computes
    x = np.random.default_rng(1).random((2, 3, T.CROP, T.CROP), dtype=np.float32)
    a, b = (ort.InferenceSession(str(tmp_path / f)).run(None, {"crops": x})[0]
            for f in files[:2])
    assert np.array_equal(a, b)


def test_crop_size_and_span_draw_the_same_samples_cut_larger_and_wider():
    """--cls-crop / --cls-span (issue 8u): the same random draws, each crop cut ``size``
    px square over ``span`` die sides instead of 48 px over 1.3."""
    from companion.vision.learned_model import crop

    img = np.random.default_rng(3).integers(0, 256, (300, 300, 3), dtype=np.uint8)
    boxes = np.array([[20, 20, 120, 120], [150, 160, 260, 270]], np.float32)
    faces = np.array([2, 5])
    kw = {"per_die": 2, "backgrounds": 2, "upright": True, "part_share": 1.0,
          "false_peaks": np.array([[200, 20, 290, 110]], np.float32)}
    ra, rb = np.random.default_rng(4), np.random.default_rng(4)
    plain, plain_labels = T._cls_samples(img, boxes, faces, ra, **kw)
    wide, wide_labels = T._cls_samples(img, boxes, faces, rb, size=64, span=1.7, **kw)
    assert plain_labels == wide_labels and ra.random() == rb.random()
    assert all(p.shape == (T.CROP, T.CROP, 3) for p in plain)
    assert all(w.shape == (64, 64, 3) for w in wide)
    again = np.random.default_rng(4)
    side0, centre = np.float32(100), np.float32(70)  # as the boxes' own arithmetic
    side = side0 * 1.7 * again.uniform(0.8, 1.3)
    cx = centre + again.normal(0, 0.06) * side0
    cy = centre + again.normal(0, 0.06) * side0
    want = crop(img, cx, cy, side, float(again.normal(0, T.UPRIGHT_TURN)), size=64)
    if again.random() < 0.5:
        want = np.ascontiguousarray(want[:, ::-1])
    assert np.array_equal(wide[0], want)
    # the augmentations keep a crop's size
    rng = np.random.default_rng(5)
    assert all(T._cls_augment(w, rng, camera=True).shape == (64, 64, 3) for w in wide)


def test_a_classifier_of_another_crop_says_so_and_the_reader_cuts_its_crops(tmp_path,
                                                                            monkeypatch):
    """A network exported at 64 px over 1.7 die sides: its file's input is 64 px and its
    metadata names the span; tuning records both (``crop_shapes_of``) and a reader given
    them reads that network on such crops, the others on 48 px over 1.3."""
    import json
    import shutil

    from learned_model import record_forwards

    from companion.vision.learned import (
        MODEL_DIR,
        LearnedReader,
        ModelUnreadable,
        _softmax,
        crops_blob,
    )
    from reader_lab.render_dice import render_dice_scene
    from reader_lab.tune_reader import crop_shapes_of

    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("no committed model")
    torch.manual_seed(0)
    model = T.Classifier().eval()
    T._export_cls(model, tmp_path, "classifier_upright_w", crop_size=64, crop_span=1.7)
    T._export_cls(model, tmp_path, "classifier_upright")
    for name in ("detector.onnx", "classifier.onnx"):
        shutil.copy(MODEL_DIR / name, tmp_path / name)
    files = ["classifier.onnx", "classifier_upright.onnx", "classifier_upright_w.onnx"]
    shapes = crop_shapes_of(tmp_path, files)
    assert shapes == {"classifier_upright_w.onnx": [64, 1.7]}
    assert ort.InferenceSession(str(tmp_path / files[2])).get_inputs()[0].shape[2:] == [64, 64]
    meta = json.loads((MODEL_DIR / "reader.json").read_text())
    meta.update(upright_files=files[1:], upright_weight=1.0, views=1, crop_shapes=shapes)
    (tmp_path / "reader.json").write_text(json.dumps(meta))
    reader = LearnedReader(tmp_path)
    image, dice = render_dice_scene(7_000_013)
    boxes = [die.box for die in dice]
    forward = reader._forward  # the passes themselves, unrecorded
    fed = record_forwards(reader)
    got = reader.classify_both(image, boxes, upright=True)[2]
    nets = {id(net): blob for net, blob in fed}
    plain = crops_blob(reader._crops(image, boxes))
    wide = crops_blob(reader._crops(image, boxes, side=64, span=1.7))
    assert plain.shape[2:] == (48, 48) and wide.shape[2:] == (64, 64)
    assert np.array_equal(nets[id(reader._up_nets[0])], plain)
    assert np.array_equal(nets[id(reader._up_nets[1])], wide)
    want = (_softmax(forward(reader._up_nets[0], plain)[0])
            + _softmax(forward(reader._up_nets[1], wide)[0])) / 2
    assert np.allclose(got, want, atol=1e-6)
    # reader.json that does not say so is refused in one line naming the file
    meta["crop_shapes"] = {}
    (tmp_path / "reader.json").write_text(json.dumps(meta))
    with pytest.raises(ModelUnreadable) as exc:
        LearnedReader(tmp_path)
    message = str(exc.value)
    assert "classifier_upright_w.onnx reads 64 px crops spanning 1.7" in message
    assert "\n" not in message
    # tuning the folder again, as the line says, writes the shapes back (and loads each
    # network file once)
    import cv2

    from companion.vision.evaluate import LabelledDie, ManifestImage
    from reader_lab import dice_photos, tune_reader

    cv2.imwrite(str(tmp_path / "v.png"), image)
    val = [ManifestImage("v.png", tmp_path / "v.png", tuple(
        LabelledDie(str(d.face), tuple(float(v) for v in d.box)) for d in dice))]
    monkeypatch.setattr(dice_photos, "load_set", lambda name, root=None: val)
    loads = []
    sessions = tune_reader._sessions
    monkeypatch.setattr(tune_reader, "_sessions", lambda d, names: (loads.extend(names),
                                                                     sessions(d, names))[1])
    got = tune_reader.tune_thresholds(tmp_path, log=lambda line: None, val_sets=("v",),
                                      sizes=(416,), views=(1,), upright_weights=(1.0,))
    assert got["crop_shapes"] == shapes and got["area_crops"] == []
    assert sorted(loads) == sorted(files)


@pytest.mark.parametrize("span", ["wide", "0", "nan"])
def test_a_network_file_with_a_broken_crop_span_is_one_line_naming_it(tmp_path, span):
    import onnx

    from companion.vision.learned import ModelUnreadable
    from companion.vision.learned_model import CROP_SPAN_KEY
    from reader_lab.tune_reader import crop_shapes_of

    T._export_cls(T.Classifier().eval(), tmp_path, "classifier_upright")
    path = tmp_path / "classifier_upright.onnx"
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {CROP_SPAN_KEY: span})
    onnx.save(model, str(path))
    with pytest.raises(ModelUnreadable) as exc:
        crop_shapes_of(tmp_path, ["classifier_upright.onnx"])
    message = str(exc.value)
    assert "classifier_upright.onnx" in message and "'crop_span'" in message
    assert "\n" not in message


def test_soft_dice_label_a_dies_crops_with_a_row_and_draw_the_same_crops():
    """Issue 9b: with a teacher's reading of each die, the die's crops are labelled
    1 - share on its face plus share spread as the teacher read it; the crops, and the
    "not a die" ones, are those drawn without it."""
    img = np.full((200, 200, 3), 90, np.uint8)
    boxes = np.array([[10, 10, 60, 60], [100, 100, 160, 160]], np.float32)
    faces = np.array([2, 5])
    soft = np.array([[0, .9, 0, 0, 0, 0, .1], [.2, 0, 0, 0, .8, 0, 0]], np.float32)
    plain = T._cls_samples(img, boxes, faces, np.random.default_rng(4), per_die=2,
                           backgrounds=1)
    taught = T._cls_samples(img, boxes, faces, np.random.default_rng(4), per_die=2,
                            backgrounds=1, soft=soft, soft_share=0.5)
    assert all(np.array_equal(a, b) for a, b in zip(plain[0], taught[0], strict=True))
    assert plain[1] == [1, 1, 4, 4, 6]
    rows, background = taught[1][:4], taught[1][4]
    assert background == 6  # not a die stays a class
    np.testing.assert_allclose(rows[0], [0, .95, 0, 0, 0, 0, .05])
    np.testing.assert_allclose(rows[2], [.1, 0, 0, 0, .9, 0, 0])
    assert all(abs(float(r.sum()) - 1) < 1e-6 for r in rows)
    off = T._cls_samples(img, boxes, faces, np.random.default_rng(4), per_die=2,
                         backgrounds=1, soft=soft, soft_share=0.0)
    assert off[1] == plain[1]


def test_targets_are_classes_unless_a_row_is_among_them():
    assert T._targets([1, 6, 0]).tolist() == [1, 6, 0]
    t = T._targets([1, np.array([0, .5, .5, 0, 0, 0, 0], np.float32), 6])
    assert t.shape == (3, 7)
    assert t[0].tolist() == [0, 1, 0, 0, 0, 0, 0] and t[2].argmax() == 6
    assert t[1].tolist() == [0, .5, .5, 0, 0, 0, 0]


def test_soft_targets_are_the_readers_probabilities_of_the_labelled_boxes():
    import cv2

    from companion.vision.learned import MODEL_DIR, LearnedReader
    from reader_lab.render_dice import render_dice_scene

    img, dice = render_dice_scene(7, size=T.DET_SIZE)
    boxes = np.array([d.box for d in dice], np.float32)
    faces = np.array([d.face for d in dice])
    data = cv2.imencode(".png", img)[1].tobytes()
    real = T.RealImages((), None)
    real.items = [(data, boxes, faces), (data, boxes[:0], faces[:0])]
    real.sets = ["table-train"] * 2
    mean = T.mine_soft_dice(real, MODEL_DIR, log=lambda m: None)
    rows, empty = real.soft_dice
    want = LearnedReader(MODEL_DIR).face_probabilities(cv2.imdecode(
        np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR), boxes)
    np.testing.assert_allclose(rows, want, atol=1e-6)
    assert rows.shape == (len(faces), 7) and empty.shape == (0, 7)
    assert mean == pytest.approx(float(want[np.arange(len(faces)), faces - 1].mean()), abs=1e-6)


def test_soft_dice_train_toward_the_teacher_and_a_one_hot_teacher_trains_as_labels():
    """A teacher that reads each die exactly as labelled changes nothing (the loss is the
    same); one that reads it otherwise moves the weights elsewhere."""

    class OneDie:
        def __init__(self, soft=None):
            if soft is not None:
                self.soft_dice = [np.array([soft], np.float32)]

        def __len__(self):
            return 1

        def get(self, i):
            img = np.full((96, 96, 3), 60, np.uint8)
            img[30:60, 30:60] = 230
            return img, np.array([[30, 30, 60, 60]], np.float32), np.array([2])

    def run(src, share):
        torch.manual_seed(0)
        net = T.train_classifier([src], [1.0], steps=2, batch=8, seed=0,
                                 log=lambda m: None, soft_share=share)
        return {k: v.detach().clone() for k, v in net.state_dict().items()}

    plain = run(OneDie(), 0.5)  # no soft_dice: classes
    same = run(OneDie([0, 1, 0, 0, 0, 0, 0]), 0.5)
    other = run(OneDie([0, 0, 1, 0, 0, 0, 0]), 0.5)
    for k in plain:
        if plain[k].is_floating_point():
            torch.testing.assert_close(same[k], plain[k], atol=1e-5, rtol=1e-4)
    assert any(not torch.allclose(other[k], plain[k], atol=1e-4)
               for k in plain if plain[k].is_floating_point())


# ---------------------------------------------------------------- checkpoints (issue 9d)


class _OneDie:
    def __len__(self):
        return 2

    def get(self, i):
        img = np.full((96, 96, 3), 60 + 40 * i, np.uint8)
        img[30:60, 30:60] = 230
        return img, np.array([[30, 30, 60, 60]], np.float32), np.array([2 + i])


def _weights(net) -> dict:
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


class _Stop(Exception):
    pass


def _stop_after_saving(monkeypatch, at: int) -> None:
    """The run is cut (as by a power cut) just after its checkpoint of step ``at``."""
    save = T.Checkpoint.save

    def save_then_stop(self, step, **parts):
        save(self, step, **parts)
        if step == at:
            raise _Stop

    monkeypatch.setattr(T.Checkpoint, "save", save_then_stop)


@pytest.mark.parametrize("network, ema", [("classifier", 0.0), ("classifier", 0.5),
                                          ("detector", 0.0)])
def test_a_run_cut_part_way_resumes_to_the_weights_of_an_unbroken_run(tmp_path, monkeypatch,
                                                                      network, ema):
    """Model, optimiser, rate, running average, random draws and the crop pool all come
    back: six steps cut after the fourth and resumed end bit for bit where six unbroken
    steps end. (Without the draws or the pool the weights differ, which this would see.)"""
    torch.set_num_threads(1)

    def run(checkpoint=None):
        torch.manual_seed(0)
        logs: list[str] = []
        if network == "detector":
            net = T.train_detector([_OneDie()], [1.0], steps=6, batch=2, size=64, seed=0,
                                   log=logs.append, checkpoint=checkpoint)
        else:
            net = T.train_classifier([_OneDie()], [1.0], steps=6, batch=8, seed=0,
                                     log=logs.append, ema=ema, checkpoint=checkpoint)
        return _weights(net), logs

    unbroken, _ = run()
    path = tmp_path / f"{network}.resume.pt"
    with monkeypatch.context() as m:
        _stop_after_saving(m, at=4)
        with pytest.raises(_Stop):
            run(T.Checkpoint(path, {"seed": 0}, every=2).load())
    resumed, logs = run(T.Checkpoint(path, {"seed": 0}, every=2).load())
    assert f"{network} resumes at step 4/6 from {path}" in logs
    assert not any(f"step {s}/6" in m for s in (0, 1, 2, 3) for m in logs)  # not redone
    assert resumed.keys() == unbroken.keys()
    for k in unbroken:
        assert torch.equal(resumed[k], unbroken[k]), k


def test_checkpoints_come_every_so_many_steps_and_never_after_the_last(tmp_path, monkeypatch):
    saved: list[int] = []
    monkeypatch.setattr(T.Checkpoint, "save", lambda self, step, **parts: saved.append(step))
    T.train_classifier([_OneDie()], [1.0], steps=7, batch=4, seed=0, log=lambda m: None,
                       checkpoint=T.Checkpoint(tmp_path / "c.pt", {}, every=3))
    assert saved == [3, 6]


def test_a_checkpoint_of_other_options_is_refused_naming_what_differs(tmp_path):
    path = tmp_path / "classifier_upright.resume.pt"
    T.Checkpoint(path, {"seed": 9, "upright_steps": 28000, "cls_crop": 48}).save(500)
    with pytest.raises(T.CheckpointUnusable) as exc:
        T.Checkpoint(path, {"seed": 9, "upright_steps": 14000, "cls_crop": 64}).load()
    assert str(exc.value) == (f"{path}: a checkpoint of a run with other cls_crop, "
                              "upright_steps (run the same command again to resume it, or "
                              "delete it to start over)")
    assert path.is_file()  # nothing lost: it is still there to resume with the old options
    assert T.Checkpoint(path, {"seed": 9, "upright_steps": 28000,
                               "cls_crop": 48}).load().state["step"] == 500


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", None])
def test_an_unreadable_checkpoint_is_one_line_naming_it(tmp_path, content):
    path = tmp_path / "detector.resume.pt"
    if content is None:  # a torch file, but not one of ours
        torch.save({"weights": torch.zeros(2)}, path)
    else:
        path.write_bytes(content)
    with pytest.raises(T.CheckpointUnusable) as exc:
        T.Checkpoint(path, {}).load()
    message = str(exc.value)
    assert message.startswith(f"{path}: cannot resume from it: ") and "\n" not in message
    assert message.endswith("(delete it to train this network from the start)")


@pytest.mark.parametrize("network", ["classifier", "detector"])
def test_a_checkpoint_that_does_not_fit_the_network_is_one_line_naming_it(tmp_path, network):
    """Its options match, but other code wrote it (other layers, a part missing): refused
    in one line before a step is trained, and left in place."""
    path = tmp_path / f"{network}.resume.pt"
    T.Checkpoint(path, {"seed": 0}).save(4, model={"stem.weight": torch.zeros(3)},
                                         opt={}, sched={})
    with pytest.raises(T.CheckpointUnusable) as exc:
        if network == "detector":
            T.train_detector([_OneDie()], [1.0], steps=6, batch=2, size=64, seed=0,
                             log=lambda m: None,
                             checkpoint=T.Checkpoint(path, {"seed": 0}).load())
        else:
            T.train_classifier([_OneDie()], [1.0], steps=6, batch=8, seed=0,
                               log=lambda m: None,
                               checkpoint=T.Checkpoint(path, {"seed": 0}).load())
    message = str(exc.value)
    assert message.startswith(f"{path}: cannot resume from it: ") and "\n" not in message
    assert message.endswith("(delete it to train this network from the start)")
    assert path.is_file()


def test_a_checkpoint_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A cut while writing leaves the last whole checkpoint, never half of a new one."""
    path = tmp_path / "classifier.resume.pt"
    ck = T.Checkpoint(path, {"seed": 1})
    ck.save(500)

    def cut(obj, f):
        Path(f).write_bytes(b"half")
        raise _Stop

    monkeypatch.setattr(T.torch, "save", cut)
    with pytest.raises(_Stop):
        ck.save(1000)
    assert T.Checkpoint(path, {"seed": 1}).load().state["step"] == 500


def test_train_resumes_a_cut_network_and_removes_its_checkpoint_when_exported(tmp_path,
                                                                             monkeypatch):
    from reader_lab import dice_photos

    if not dice_photos.available():
        pytest.skip(f"photo sets not found under {dice_photos.photo_root()}")
    monkeypatch.setattr(T, "CHECKPOINT_EVERY", 2)

    def run(steps, logs):
        T.train(tmp_path, parts=("cls-upright",), upright_steps=steps, rendered=2,
                render_cube=True, log=logs.append)

    with monkeypatch.context() as m:
        _stop_after_saving(m, at=2)
        with pytest.raises(_Stop):
            run(3, [])
    path = tmp_path / "classifier_upright.resume.pt"
    assert path.is_file()
    with pytest.raises(T.CheckpointUnusable, match="other upright_steps"):
        run(4, [])
    logs: list[str] = []
    run(3, logs)
    assert f"classifier_upright resumes at step 2/3 from {path}" in logs
    assert (tmp_path / "classifier_upright.onnx").is_file() and not path.is_file()


def test_rated_negatives_are_taught_on_train_photos_only(tmp_path):
    folder = tmp_path / "round"
    folder.mkdir()
    (folder / "key.csv").write_text(
        "tile,kind,set,image,x0,y0,x1,y1,read,confidence\n"
        "1,unmatched,table-train,t/a.jpg,1,2,11,12,1,0.9\n"
        "2,unmatched,table-val,t/v.jpg,0,0,8,8,3,0.8\n", encoding="utf-8")
    for name in ("rater-A.csv", "rater-B.csv"):
        (folder / name).write_text("tile,face\n1,n\n2,n\n", encoding="utf-8")
    real = T.RealImages((), None)
    real.items = [(b"", np.zeros((0, 4), np.float32), np.zeros(0, np.int64))] * 2
    real.keys = ["t/a.jpg", "t/b.jpg"]  # the validation photo t/v.jpg is not a train photo
    real.sets = ["table-train"] * 2
    assert T.add_rated_negatives(real, folder, log=lambda m: None) == 1
    a, b = real.false_peaks[:2]
    assert a.tolist() == [[1, 2, 11, 12]] * T.RATED_COPIES and len(b) == 0
    # the photo holding it is drawn RATED_DRAWS times as often, its boxes with it
    assert len(real) == 2 + T.RATED_DRAWS - 1
    assert real.keys[2:] == ["t/a.jpg"] * (T.RATED_DRAWS - 1)
    assert all(p.tolist() == a.tolist() for p in real.false_peaks[2:])
    assert len(real.sets) == len(real.false_peaks) == len(real)
    # appended to a miner's false peaks, not in place of them
    real.items, real.keys, real.sets = real.items[:2], real.keys[:2], real.sets[:2]
    real.false_peaks = [np.array([[5, 5, 9, 9]], np.float32), np.zeros((0, 4), np.float32)]
    T.add_rated_negatives(real, folder, log=lambda m: None)
    assert real.false_peaks[0].tolist() == [[5, 5, 9, 9]] + [[1, 2, 11, 12]] * T.RATED_COPIES


def test_mined_boxes_read_from_the_cache_are_those_mined_fresh(tmp_path):
    """Issue 9w: the committed detector's false peaks, mined once into the cache and read
    back into another run's photos, are the same boxes to the bit."""
    import cv2

    from companion.vision.learned import MODEL_DIR
    from reader_lab import mine_cache
    from reader_lab.render_dice import render_dice_scene

    img, dice = render_dice_scene(5, size=T.DET_SIZE)
    boxes = np.array([d.box for d in dice], np.float32)
    data = cv2.imencode(".png", img)[1].tobytes()

    def photos():
        real = T.RealImages((), None)
        real.items = [(data, boxes[:1], np.array([dice[0].face]))]
        real.sets, real.keys = ["trays-train"], ["t/a.png"]
        return real

    fresh = photos()
    T.mine_false_peaks(fresh, MODEL_DIR, log=lambda m: None)
    settings = T.miner_settings(T.mine_false_peaks)
    assert settings.pop("code") == T.miner_settings(T.mine_false_peaks)["code"]
    assert settings == {"threshold": 0.3, "sizes": (416, 512)}
    assert T.miner_settings(T.mine_die_boxes)["code"] != T.miner_settings(
        T.mine_false_peaks)["code"]  # each miner's own code
    for _ in range(2):  # the first run mines and stores, the second reads
        real = photos()
        mine_cache.mined(tmp_path, "false_peaks", settings, MODEL_DIR, real,
                         lambda r=real: T.mine_false_peaks(r, MODEL_DIR, log=lambda m: None),
                         log=lambda m: None)
        assert len(fresh.false_peaks[0]) >= 1
        assert real.false_peaks[0].tobytes() == fresh.false_peaks[0].tobytes()
    assert len(list(tmp_path.glob("false_peaks-*.npz"))) == 1


@pytest.mark.parametrize("init_lr, peak, at", [(None, 4e-3, 14), (T.INIT_LR, 1e-3, 4),
                                                (1e-4, 1e-4, 4)])
def test_a_fine_tune_peaks_at_its_own_rate_early(init_lr, peak, at):
    """Issue 9w: from scratch the rate peaks 15% in; a fine-tune peaks 5% in, at
    --init-lr (default 1e-3, the rate of every fine-tune before)."""
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=2e-3)
    sched = T.one_cycle(opt, 100, 4e-3, init_lr)
    rates = []
    for _ in range(100):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert max(rates) == pytest.approx(peak) and int(np.argmax(rates)) == at
    assert rates[-1] < peak / 1000


def test_a_checkpoint_from_before_init_lr_resumes_at_the_old_rate(tmp_path):
    path = tmp_path / "classifier_upright.resume.pt"
    T.Checkpoint(path, {"seed": 9}).save(500)  # written without the key
    assert T.Checkpoint(path, {"seed": 9, "init_lr": 1e-3}).load().state["step"] == 500
    with pytest.raises(T.CheckpointUnusable, match="other init_lr"):
        T.Checkpoint(path, {"seed": 9, "init_lr": 1e-4}).load()


def test_a_checkpoint_from_before_unreadable_share_resumes_with_it_off(tmp_path):
    path = tmp_path / "classifier_upright.resume.pt"
    T.Checkpoint(path, {"seed": 9}).save(500)  # written without the key
    assert T.Checkpoint(path, {"seed": 9, "unreadable_share": 0.0}).load().state["step"] == 500
    with pytest.raises(T.CheckpointUnusable, match="other unreadable_share"):
        T.Checkpoint(path, {"seed": 9, "unreadable_share": 0.15}).load()


def test_rendered_scenes_read_from_the_cache_are_those_drawn(tmp_path):
    """Issue 9w: a second run reads the same cube scenes, pixel for pixel, from --cache."""
    drawn = T.Rendered(3, 5, upright=True, cube=True)
    T.Rendered(3, 5, upright=True, cube=True, cache=tmp_path, log=lambda m: None)
    back = T.Rendered(3, 5, upright=True, cube=True, cache=tmp_path, log=lambda m: None)
    assert len(list(tmp_path.glob("rendered-*.npz"))) == 1
    for i in range(3):
        assert all(np.array_equal(a, b) for a, b in zip(drawn.get(i), back.get(i), strict=True))


class _FaintReader:
    """Stands in for LearnedReader in ``mine_sure_phantoms``: fixed boxes and readings."""

    det_threshold = 0.7
    boxes: list = []
    probs: list = []
    asked: list = []

    def __init__(self, model_dir, threads=1):
        pass

    def detect(self, img, threshold=None):
        self.asked.append(threshold)
        return [b for b in self.boxes if b[4] >= threshold]

    def face_probabilities(self, img, boxes):
        return np.array([self.probs[self.boxes.index(b)] for b in boxes], np.float32)


def test_sure_phantoms_are_faint_boxes_read_surely_where_no_die_is_labelled(monkeypatch):
    """Issue 9y: on a set not fully labelled (table-train), the faint boxes (from 0.1 up
    to the reader's own threshold) read at least 0.8 sure as a face, on no labelled die,
    one per place, are added to the photo's "not a die" boxes; nothing on a fully
    labelled set (its false peaks are mine_false_peaks'), nothing read unsure or as "not
    a die", nothing the detector alone would keep."""
    import cv2

    from companion.vision import learned

    sure = [0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01]
    unsure = [0.6, 0.1, 0.1, 0.1, 0.05, 0.03, 0.02]
    sure_not = [0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9]
    _FaintReader.boxes = [
        (100, 100, 120, 120, 0.2),   # taught: faint, sure, nowhere near the die
        (102, 101, 121, 119, 0.15),  # the same place again: once is enough
        (10, 10, 40, 40, 0.3),       # on the labelled die
        (200, 50, 230, 80, 0.75),    # the detector alone keeps it: not this miner's
        (50, 150, 70, 170, 0.4),     # read unsure
        (150, 150, 170, 170, 0.5),   # read "not a die"
        (20, 170, 40, 190, 0.05),    # below 0.1: never asked for
    ]
    _FaintReader.probs = [sure, sure, sure, sure, unsure, sure_not, sure]
    _FaintReader.asked = []
    monkeypatch.setattr(learned, "LearnedReader", _FaintReader)
    data = cv2.imencode(".png", np.full((240, 240, 3), 90, np.uint8))[1].tobytes()
    real = T.RealImages((), None)
    die = np.array([[12, 12, 42, 42]], np.float32)
    real.items = [(data, die, np.array([3]))] * 2
    real.sets = ["table-train", "trays-train"]
    real.false_peaks = [np.array([[1, 2, 3, 4]], np.float32), np.zeros((0, 4), np.float32)]
    n = T.mine_sure_phantoms(real, "/stub", log=lambda m: None)
    assert n == 1 and _FaintReader.asked == [T.SURE_PHANTOM_LOW]
    assert real.false_peaks[0].tolist() == [[1, 2, 3, 4], [100, 100, 120, 120]]
    assert len(real.false_peaks[1]) == 0
    # a reader asked for surer faces teaches nothing here
    real.false_peaks = []
    assert T.mine_sure_phantoms(real, "/stub", face=0.95, log=lambda m: None) == 0
    assert [len(f) for f in real.false_peaks] == [0, 0]


def test_a_reader_to_mine_sure_phantoms_from_that_will_not_load_is_one_line(tmp_path):
    import shutil

    from companion.vision.learned import MODEL_DIR, ModelUnreadable

    for f in MODEL_DIR.iterdir():
        if f.suffix in (".json", ".onnx"):
            shutil.copy(f, tmp_path / f.name)
    (tmp_path / "detector.onnx").write_bytes(b"not an onnx file")
    real = T.RealImages((), None)
    with pytest.raises(ModelUnreadable, match="detector.onnx: cannot load") as exc:
        T.mine_sure_phantoms(real, tmp_path, log=lambda m: None)
    assert "\n" not in str(exc.value) and real.false_peaks == []
