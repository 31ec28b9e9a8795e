"""Tuning the learned reader on validation (``reader_lab.tune_reader``,
``reader_lab.tune_fewshot``): what the rules it chooses read, counted the plain way, and
what it reads of a model folder's networks."""

from __future__ import annotations

import numpy as np
import pytest
from learned_model import FROZEN_SEEDS, model_copy, needs_model

from companion.vision.evaluate import predicted_dice, score_image, summarise
from companion.vision.frames import load_image
from companion.vision.learned import MODEL_DIR, LearnedReader, ModelMissing
from companion.vision.types import UNKNOWN
from reader_lab import dice_photos
from reader_lab.render_dice import render_dice_scene


@needs_model
@pytest.mark.parametrize("flip", [True, None])
def test_tuning_a_folder_keeps_whether_its_detector_reads_the_mirror(tmp_path, monkeypatch,
                                                                      flip):
    import cv2

    from companion.vision.evaluate import LabelledDie, ManifestImage
    from reader_lab import tune_reader

    d = model_copy(tmp_path, det_flip=flip)
    image, dice = render_dice_scene(7_000_004)
    cv2.imwrite(str(tmp_path / "v.png"), image)
    val = [ManifestImage("v.png", tmp_path / "v.png", tuple(
        LabelledDie(str(die.face), tuple(float(v) for v in die.box)) for die in dice))]
    monkeypatch.setattr(dice_photos, "load_set", lambda name, root=None: val)
    got = tune_reader.tune_thresholds(d, log=lambda line: None, val_sets=("v",), sizes=(416,),
                                  views=(1,), upright_weights=(0.0,))
    assert got["det_flip"] is bool(flip)


@needs_model
def test_the_committed_model_cuts_every_crop_as_its_networks_were_trained(reader):
    from companion.vision.learned import MODEL_DIR as committed
    from reader_lab.tune_reader import area_networks

    files = ["classifier.onnx", *reader.upright_files]
    assert reader.area_crops == area_networks(committed, files)


@needs_model
def test_the_committed_model_cuts_its_crops_at_the_networks_own_shape(reader):
    from companion.vision.learned import MODEL_DIR as committed
    from reader_lab.tune_reader import crop_shapes_of

    files = ["classifier.onnx", *reader.upright_files]
    assert reader.crop_shapes == crop_shapes_of(committed, files)


@needs_model
def test_tuning_picks_what_scoring_every_rule_the_plain_way_picks(tmp_path, monkeypatch):
    """tune_thresholds counts each face threshold from one matching per kept-box rule;
    it must choose exactly what scoring each rule through readings_from / score_image
    (as `companion eval` does) chooses, ties included."""
    import cv2

    from companion.vision import learned
    from companion.vision.evaluate import LabelledDie, ManifestImage
    from reader_lab import tune_reader

    images = []
    for seed in FROZEN_SEEDS[:8]:
        img, dice = render_dice_scene(seed, size=416)
        path = tmp_path / f"{seed}.png"
        cv2.imwrite(str(path), img)
        images.append(ManifestImage(path.name, path, tuple(
            LabelledDie(str(d.face), tuple(float(v) for v in d.box)) for d in dice)))
    monkeypatch.setattr(dice_photos, "load_set", lambda name, root=None: images[:4]
                        if name == "a" else images[4:])
    grid = {"sizes": (416,), "views": (1,), "low_thresholds": (0.2,), "low_faces": (0.95,),
            "upright_weights": (0.0, 0.5)}
    logs: list[str] = []
    got = tune_reader.tune_thresholds(MODEL_DIR, log=logs.append, val_sets=("a", "b"), **grid)

    reader = LearnedReader(MODEL_DIR, det_threshold=0.1)
    cache = []
    for m in images:
        image = load_image(m.path)
        boxes = reader.detect(image, 0.1)
        probs, _, upright = reader.classify_both(image, boxes, upright=True)
        cache.append((boxes, probs, upright, m.dice))
    best = None
    for nested in (True, False):
        for mix in grid["upright_weights"]:
            for dt in tune_reader.DET_GRID:
                for ft in tune_reader.FACE_GRID:
                    for low, lf in [(dt, 1.0)] + [(0.2, 0.95)] * (dt > 0.2 and ft <= 0.95):
                        reader.det_threshold, reader.det_low_threshold = dt, low
                        reader.low_face_threshold = lf
                        s = summarise([score_image(predicted_dice(learned.readings_from(
                            b, learned.mix_upright(p, u, mix), ft, reader.keeps, nested)), d)
                            for b, p, u, d in cache], [])
                        false = (s.predicted - s.matched) / max(1, s.labelled)
                        key = (round(s.end_to_end - 10 * s.wrong_share - false, 3),
                               s.precision, -1, -416, -mix, nested)
                        if best is None or key > best[0]:
                            best = (key, dt, ft, low, lf, mix, nested, s)
    _, dt, ft, low, lf, mix, nested, s = best
    assert (got["det_threshold"], got["face_threshold"], got["det_low_threshold"],
            got["low_face_threshold"], got["upright_weight"], got["keep_nested"]) == (
        dt, ft, low, lf, mix, nested)
    # every upright classifier in the folder was averaged, and reader.json will say so
    assert got["upright_files"] == tune_reader.upright_members(MODEL_DIR) == reader.upright_files
    assert len(got["upright_files"]) == 3
    assert got["val"] == {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
                          "end_to_end": round(s.end_to_end, 4),
                          "wrong_confident": round(s.wrong_share, 4), "dice": s.labelled}
    # the last line says how sure the chosen rule's objective is, over the 8 photos
    low, high = (float(v) for v in logs[-1].split("source photos ")[1].split(" (")[0]
                 .split(" to "))
    objective = s.end_to_end - 10 * s.wrong_share - (s.predicted - s.matched) / s.labelled
    assert "over the 8 source photos" in logs[-1]
    assert low - 1e-4 <= objective <= high + 1e-4


@needs_model
def test_the_rule_best_rule_chooses_reads_as_it_was_counted():
    """best_rule counts each face threshold from tallies; rule_scores reads the photos the
    plain way (readings_from, score_image): the chosen rule's end to end, wrong share
    and objective must be the plain scores' own, and the rule must fall in the grids."""
    from companion.vision.evaluate import LabelledDie
    from reader_lab import tune_reader

    reader = tune_reader.tuning_reader(MODEL_DIR)
    images = []
    for seed in FROZEN_SEEDS[:6]:
        img, dice = render_dice_scene(seed, size=416)
        images.append((img, tuple(LabelledDie(str(d.face), tuple(float(v) for v in d.box))
                                  for d in dice)))
    reads = tune_reader.tuning_reads(reader, images)
    assert [len(r.dice) for r in reads] == [len(d) for _, d in images]
    key, rule, e2e, wrong, objective = tune_reader.best_rule(
        reader, reads, low_thresholds=(0.2,), low_faces=(0.95,), upright_weights=(0.0, 1.0))
    s = summarise(tune_reader.rule_scores(reader, reads, rule), [])
    assert s.end_to_end == pytest.approx(e2e) and s.wrong_share == pytest.approx(wrong)
    false = (s.predicted - s.matched) / s.labelled
    assert objective == pytest.approx(s.end_to_end - 10 * s.wrong_share - false)
    assert key[0] == round(objective, 3) and s.end_to_end > 0.5
    assert rule.det in tune_reader.DET_GRID and rule.face in tune_reader.FACE_GRID
    assert rule.mix in (0.0, 1.0) and rule.low in (rule.det, 0.2)
    assert (reader.det_threshold, reader.face_threshold, reader.upright_weight) == (
        rule.det, rule.face, rule.mix)


def _sure(face: int, conf: float) -> list[float]:
    """Probabilities reading ``face`` (1-6) ``conf`` sure, the rest spread, no "not a die"."""
    p = [(1 - conf) / 5] * 6 + [0.0]
    p[face - 1] = conf
    return p


def test_a_small_box_reads_its_face_only_as_sure_as_small_face_asks():
    from companion.vision import learned

    boxes = [(0.0, 0.0, 15.0, 15.0, 0.9), (100.0, 0.0, 150.0, 50.0, 0.9)]
    probs = np.array([_sure(3, 0.85), _sure(4, 0.85)])
    plain = learned.readings_from(boxes, probs, 0.7)
    assert [r.face for r in plain] == ["3", "4"]
    sized = learned.readings_from(boxes, probs, 0.7, small_side=20, small_face=0.9)
    assert [r.face for r in sized] == [UNKNOWN, "4"] and sized[0].confidence == 0.85
    # a box of exactly the side is not under it; a small face below the face threshold
    # asks nothing more of small boxes
    assert [r.face for r in learned.readings_from(boxes, probs, 0.7, small_side=15,
                                                  small_face=0.9)] == ["3", "4"]
    assert [r.face for r in learned.readings_from(boxes, probs, 0.9, small_side=20,
                                                  small_face=0.5)] == [UNKNOWN] * 2


@needs_model
def test_best_rule_asks_small_dice_for_a_surer_face_only_when_offered_and_worth_it():
    """Ten large dice read right 0.75 sure; ten 15 px dice, three read wrong 0.85 sure
    and seven right 0.95 sure. One face threshold must rise to 0.9 and lose the large
    dice; a threshold of its own for boxes under 20 px keeps them and drops the three."""
    from companion.vision.evaluate import LabelledDie
    from reader_lab import tune_reader

    reader = tune_reader.tuning_reader(MODEL_DIR)
    reads = []
    for i in range(10):
        big, small = (0.0, 0.0, 60.0, 60.0), (200.0, 0.0, 215.0, 15.0)
        got = 2 if i < 3 else 5
        reads.append(tune_reader.TuningRead(
            [(*big, 0.9), (*small, 0.9)],
            np.array([_sure(1, 0.75), _sure(got, 0.85 if i < 3 else 0.95)]), None,
            (LabelledDie("1", big), LabelledDie("5", small))))
    grid = {"low_thresholds": (0.2,), "low_faces": (0.95,), "upright_weights": (1.0,)}
    _, plain, e2e, wrong, _ = tune_reader.best_rule(reader, reads, **grid)
    assert (plain.face, plain.small_side, e2e, wrong) == (0.9, 0.0, 0.35, 0.0)
    key, sized, e2e, wrong, objective = tune_reader.best_rule(reader, reads,
                                                          small_sides=(20.0, 40.0), **grid)
    assert sized.face <= 0.7 and (sized.small_side, sized.small_face) == (20.0, 0.9)
    assert (e2e, wrong) == (0.85, 0.0) and key[-1] is False
    s = summarise(tune_reader.rule_scores(reader, reads, sized), [])
    assert (s.end_to_end, s.wrong_share) == (0.85, 0.0)
    # offered a side no box is under, it sets no size rule (ties go to none)
    _, none, *_ = tune_reader.best_rule(reader, reads, small_sides=(10.0,), **grid)
    assert none.small_side == 0.0 and none == plain


@pytest.fixture
def webcam_tuning_sets(monkeypatch):
    """Few-shot tuning on a small real split: webcam-white's first 12 photos as
    webcam-val, the next 68 as its train split (skipped without the photo sets)."""
    if not dice_photos.available():
        pytest.skip(f"photo sets not found under {dice_photos.photo_root()}")
    every = dice_photos.load_manifest(dice_photos.photo_root() / "webcam-white-d6"
                                      / "labels.csv")
    parts = {"webcam-val": every[:12], "webcam-train": every[12:80]}
    monkeypatch.setattr(dice_photos, "load_set", lambda name, root=None: parts[name])


@needs_model
@pytest.mark.parametrize("useful", ["turned", "upright", "members"])
def test_tune_fewshot_chooses_the_embedding_that_reads_validation(webcam_tuning_sets,
                                                                 monkeypatch, useful):
    """With every other embedding made noise, tuning picks this one for every number of
    shots."""
    from reader_lab import tune_fewshot

    reader = LearnedReader()
    classify_all = reader.classify_all  # classify and tune_fewshot both read through it
    noise = np.random.default_rng(0)

    def spoilt(image, boxes, embeddings=None):
        probs, embs = classify_all(image, boxes, embeddings)
        for kind in embs:
            if kind != useful:
                emb = noise.normal(size=embs[kind].shape).astype(np.float32)
                embs[kind] = emb / np.linalg.norm(emb, axis=1, keepdims=True)
        return probs, embs

    monkeypatch.setattr(reader, "classify_all", spoilt)
    chosen = tune_fewshot.tune_fewshot(reader, shots=(1, 3), seeds=1, log=lambda _: None,
                                  val_sets=("webcam-val",))
    assert [v[2] for v in chosen.values()] == [useful, useful]
    assert all(v[3] in tune_fewshot.FEWSHOT_DET_GRID for v in chosen.values())


@needs_model
def test_tune_fewshot_counts_boxes_where_no_die_is(webcam_tuning_sets, monkeypatch):
    """Each photo: one real die the detector scores 0.35 and six phantom boxes scored
    0.36 that the classifier takes for dice. Reading from 0.3 finds the die but brings
    the phantoms: counting boxes where no die is (as tune_thresholds does) chooses 0.4;
    end to end alone would choose 0.3."""
    from reader_lab import tune_fewshot

    reader = LearnedReader()
    detect, classify_all = reader.detect, reader.classify_all

    def with_phantoms(image, threshold=None):
        h, w = image.shape[:2]
        found = [b for b in detect(image, 0.45) if b[4] >= 0.45]
        found[:1] = [(*b[:4], 0.35) for b in found[:1]]
        return found + [(x, h - 60.0, x + 40.0, h - 20.0, 0.36)
                        for x in range(20, w - 60, 80)][:6]

    def sure(image, boxes, embeddings=None):
        probs, embs = classify_all(image, boxes, embeddings)
        probs = probs.copy()
        for i, b in enumerate(boxes):
            if len(b) > 4 and b[4] == 0.36:  # a phantom taken for a die
                probs[i] = [0.9, 0.02, 0.02, 0.02, 0.02, 0.02, 0.0]
        return probs, embs

    monkeypatch.setattr(reader, "detect", with_phantoms)
    monkeypatch.setattr(reader, "classify_all", sure)
    chosen = tune_fewshot.tune_fewshot(reader, shots=(3,), seeds=1, log=lambda _: None,
                                  val_sets=("webcam-val",), dets=(0.3, 0.4))
    assert chosen["3"][3] == 0.4


@needs_model
@pytest.mark.parametrize("keep_nested", [True, False])
def test_fewshot_tally_counts_what_reading_and_scoring_count(reader, keep_nested):
    """tune_fewshot counts each threshold pair from one tally per detector threshold;
    that must be the count reading with nearest_faces and scoring gives."""
    from companion.vision.evaluate import LabelledDie
    from companion.vision.fewshot import nearest_faces
    from reader_lab.tune_fewshot import fewshot_tally

    rows = []
    for seed in range(7_000_010, 7_000_014):
        image, dice = render_dice_scene(seed)
        boxes = reader.detect(image, 0.05)
        probs, emb = reader.classify(image, boxes)
        rows.append((boxes, probs, {"turned": emb},
                     [LabelledDie(str(d.face), tuple(float(v) for v in d.box))
                      for d in dice]))
    faces = ["1", "2", "3", "4", "5", "6"]
    protos = np.random.default_rng(3).normal(size=(6, rows[0][2]["turned"].shape[1]))
    protos = (protos / np.linalg.norm(protos, axis=1, keepdims=True)).astype(np.float32)
    protos[2] = rows[0][2]["turned"][0]  # one face near a real die's embedding
    top, gap, right, predicted, labelled = fewshot_tally(rows, "turned", faces, protos,
                                                        keep_nested)
    assert predicted > len(top) > 0  # phantom boxes at 0.05 too
    for sim, margin in [(-1.0, 0.0), (0.0, 0.0), (0.1, 0.02), (0.3, 0.1), (0.9, 0.0)]:
        s = summarise([score_image(predicted_dice(nearest_faces(
            b, p, e["turned"], faces, protos, sim, margin, keep_nested=keep_nested)), d)
            for b, p, e, d in rows], [], [x.face for *_, d in rows for x in d])
        sure = (top >= sim) & (gap >= margin)
        assert (s.predicted, s.matched, s.labelled) == (predicted, len(top), labelled)
        assert (s.correct, s.wrong) == (np.count_nonzero(sure & right),
                                        np.count_nonzero(sure & ~right))


@needs_model
def test_tune_fewshot_adds_a_faint_box_rule_when_it_reads_more(webcam_tuning_sets,
                                                              monkeypatch):
    """Every die scored 0.35, below the one detector threshold tried: reading from 0.3
    when the nearest face is at least 0.5 similar reads them, so tuning adds that rule;
    a similarity no die reaches reads nothing more, and the tie keeps no rule (the
    four numbers an 8m table holds)."""
    from reader_lab import tune_fewshot

    reader = LearnedReader()
    detect = reader.detect

    def faint(image, threshold=None):
        return [(*b[:4], 0.35) for b in detect(image, 0.45)]

    monkeypatch.setattr(reader, "detect", faint)
    chosen = tune_fewshot.tune_fewshot(reader, shots=(3,), seeds=1, log=lambda _: None,
                                  val_sets=("webcam-val",), dets=(0.4,), lows=(0.3,),
                                  low_sims=(0.5,))
    assert chosen["3"][3:] == [0.4, 0.3, 0.5]
    never = tune_fewshot.tune_fewshot(reader, shots=(3,), seeds=1, log=lambda _: None,
                                 val_sets=("webcam-val",), dets=(0.4,), lows=(0.3,),
                                 low_sims=(1.0,))
    assert len(never["3"]) == 4 and never["3"][3] == 0.4


@needs_model
def test_a_classifier_file_alone_loads_with_the_crops_the_reader_cuts_for_it(tmp_path):
    """``load_classifier`` (the network-alone benchmark): a network file on its own, fed
    the crops the reader would cut for it, as its input and metadata say."""
    from companion.vision.learned import ModelUnreadable
    from reader_lab.tune_reader import load_classifier

    reader = LearnedReader()
    for name, cut in zip(reader.upright_files, reader._up_cuts, strict=True):
        net, own = load_classifier(MODEL_DIR / name)
        assert own == cut
        assert net.get_inputs()[0].name == "crops"
    assert load_classifier(MODEL_DIR / "classifier_upright.onnx")[1] == (False, 64, 1.3)
    assert load_classifier(MODEL_DIR / "classifier_upright_c28.onnx")[1] == (False, 48, 1.3)
    with pytest.raises(ModelMissing, match="no such network file"):
        load_classifier(tmp_path / "absent.onnx")
    cut_short = tmp_path / "short.onnx"
    cut_short.write_bytes((MODEL_DIR / "classifier.onnx").read_bytes()[:1000])
    with pytest.raises(ModelUnreadable) as exc:
        load_classifier(cut_short)
    assert str(exc.value).startswith(f"{cut_short}: cannot load the network")
    assert "\n" not in str(exc.value)



@needs_model
def test_tuning_takes_every_upright_classifier_a_training_folder_holds(tmp_path):
    import shutil

    from reader_lab.tune_reader import upright_members

    d = model_copy(tmp_path, upright_weight=0.5, views=1)
    shutil.copy(d / "classifier.onnx", d / "classifier_upright.onnx")
    shutil.copy(MODEL_DIR / "classifier_upright_c28.onnx", d / "classifier_upright_b.onnx")
    assert upright_members(d) == ["classifier_upright.onnx", "classifier_upright_b.onnx"]
    (d / "classifier_upright.onnx").unlink()
    assert upright_members(d) is None  # the others are extra members of it, not alone
