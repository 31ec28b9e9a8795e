"""Tuning the learned die reader on the validation splits (``python -m reader_lab train
--part tune``): which detector and face thresholds, faint-box rule, input size, test-time
views, upright mix and nested-box choice a model folder's reader.json gets, chosen on
validation photos only, never on the sets held aside.

Also what tuning and training read of a model folder's networks: which classifiers it
holds (``upright_members``), which were trained on area-shrunk crops (``area_networks``),
each one's crop shape (``crop_shapes_of``), and one classifier file alone
(``load_classifier``). The reader that runs at the table (``companion.vision.learned``)
only reads what this writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from companion.vision.intervals import FALSE_COST, WRONG_COST
from companion.vision.learned import (
    FACES,
    TURNED,
    UPRIGHT,
    LearnedReader,
    ModelMissing,
    _load,
    kept_boxes,
    mix_upright,
    network_shape,
    readings_from,
)
from companion.vision.learned_model import CROP, CROP_FILTER_KEY, CROP_SPAN, NOT_A_DIE
from companion.vision.types import box_side

# the detector and face thresholds tuning tries
DET_GRID = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
FACE_GRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99)
# the faint-box rule's detector and face thresholds it tries (issue 8m widened both: a
# box the detector scores 0.3-0.7 may be a die whose face reads 0.8 sure, not only 0.95)
LOW_GRID = (0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
LOW_FACE_GRID = (0.7, 0.8, 0.9, 0.95, 0.97, 0.99)


@dataclass(frozen=True)
class TuningRule:
    """What tuning chooses for one input size and view count: the detector threshold, the
    face threshold, the faint-box rule (detector ``low`` with face ``low_face``), the
    upright mix and whether nested boxes stay."""
    det: float
    face: float
    low: float
    low_face: float
    mix: float
    nested: bool
    small_side: float = 0.0  # a box under this side (px) reads a face only at small_face
    small_face: float = 0.0

    def apply(self, reader: LearnedReader) -> None:
        """Set ``reader``'s kept-box rule (``keeps``), face threshold, upright mix and
        nested-box choice to this rule's (the small-dice rule is ``rule_scores``' alone)."""
        reader.det_threshold, reader.det_low_threshold = self.det, self.low
        reader.low_face_threshold, reader.face_threshold = self.low_face, self.face
        reader.upright_weight, reader.keep_nested = self.mix, self.nested


@dataclass(frozen=True)
class TuningRead:
    """One labelled photo as tuning reads it: every box the detector scores 0.1 or more,
    the turned and upright classifiers' probabilities for them, and the labelled dice."""
    boxes: list
    probs: np.ndarray
    upright: np.ndarray | None
    dice: tuple


def tuning_reader(model_dir: str | Path) -> LearnedReader:
    """The model's reader as tuning reads with it: every upright member the folder
    holds, each network's own crop shape, boxes down to a detector score of 0.1."""
    members = upright_members(model_dir)
    nets = _sessions(model_dir, [TURNED, *(members or [])])  # each loaded once
    return LearnedReader(model_dir, det_threshold=0.1, upright_files=members,
                         area_crops=_area_marked(nets), crop_shapes=_shapes(nets))


def tuning_reads(reader: LearnedReader, images: list[tuple[np.ndarray, tuple]]
                 ) -> list[TuningRead]:
    """Each (image, labelled dice) read once at the reader's input size and views, for
    any rule to be chosen or scored from (``best_rule``, ``rule_scores``)."""
    out = []
    for img, dice in images:
        boxes = reader.detect(img, 0.1)
        probs, _, upright = reader.classify_both(img, boxes, upright=reader.has_upright)
        out.append(TuningRead(boxes, probs, upright, tuple(dice)))
    return out


def best_rule(reader: LearnedReader, reads: list[TuningRead], *,
              wrong_cost: float = WRONG_COST, false_cost: float = FALSE_COST,
              low_thresholds: tuple[float, ...] = LOW_GRID,
              low_faces: tuple[float, ...] = LOW_FACE_GRID,
              upright_weights: tuple[float, ...] = (0.0, 0.3, 0.5, 0.7, 1.0),
              small_sides: tuple[float, ...] = ()
              ) -> tuple[tuple, TuningRule, float, float, float]:
    """The rule that maximises end to end less ``wrong_cost`` per confidently wrong die
    and ``false_cost`` per box where there is no die, over the labelled dice of
    ``reads``: (its sort key, the rule, end to end, confidently wrong share, objective).
    Ties go to higher precision, then a lower upright mix, then keeping nested boxes,
    then the first tried. Which boxes are kept does not depend on the face threshold,
    so each kept-box rule is matched to the labels once and every face threshold is
    counted from that (``_tally``). With ``small_sides``, the rule may also ask boxes
    under one of those sides (px) for a surer face (``small_face``, from ``FACE_GRID``,
    above the face threshold); ties go to no such rule. ``reader``'s thresholds are
    changed on the way."""
    labelled = max(1, sum(len(r.dice) for r in reads))
    mixes = upright_weights if reader.has_upright else (0.0,)
    best = None
    # in the order rules were always tried, so ties go the same way
    for nested in (True, False):  # keep nested boxes or not
        for mix in mixes:
            mixed = [(r.boxes, mix_upright(r.probs, r.upright, mix), r.dice) for r in reads]
            for dt in DET_GRID:
                lows = [(dt, 1.0)] + [(lo, f) for lo in low_thresholds if lo < dt
                                      for f in low_faces]
                tallies = {}
                for low, lf in lows:
                    reader.det_threshold, reader.det_low_threshold = dt, low
                    reader.low_face_threshold = lf
                    tallies[low, lf] = _tally(mixed, reader.keeps, nested)
                for ft in FACE_GRID:
                    for low, lf in lows:
                        if (low, lf) != (dt, 1.0) and lf < ft:
                            continue
                        predicted, confs, right, sides = tallies[low, lf]
                        matched = len(confs)
                        precision = matched / predicted if predicted else 0.0
                        false_share = (predicted - matched) / labelled
                        for ss, sf in [(0.0, 0.0)] + [(z, f) for z in small_sides
                                                      for f in FACE_GRID if f > ft]:
                            sure = confs >= (np.where(sides < ss, sf, ft) if ss else ft)
                            correct = int(np.count_nonzero(sure & right))
                            wrong = int(np.count_nonzero(sure & ~right))
                            objective = (correct / labelled - wrong_cost * (wrong / labelled)
                                         - false_cost * false_share)
                            key = (round(objective, 3), precision, -mix, nested, not ss)
                            if best is None or key > best[0]:
                                best = (key, TuningRule(dt, ft, low, lf, mix, nested, ss, sf),
                                        correct / labelled, wrong / labelled, objective)
    return best


def rule_scores(reader: LearnedReader, reads: list[TuningRead], rule: TuningRule) -> list:
    """Each photo's score (``evaluate.ImageScore``) read by ``rule``, scored the plain way,
    as ``companion eval`` would. ``reader`` keeps the rule."""
    from companion.vision.evaluate import predicted_dice, score_image

    rule.apply(reader)
    return [score_image(predicted_dice(readings_from(
        r.boxes, mix_upright(r.probs, r.upright, rule.mix), rule.face, reader.keeps,
        rule.nested, rule.small_side, rule.small_face)), r.dice) for r in reads]


def tune_thresholds(model_dir: str | Path, *, root=None, log=print,
                    wrong_cost: float = WRONG_COST, false_cost: float = FALSE_COST,
                    sizes: tuple[int, ...] = (416, 512, 640),
                    views: tuple[int, ...] = (1, 4),
                    low_thresholds: tuple[float, ...] = LOW_GRID,
                    low_faces: tuple[float, ...] = LOW_FACE_GRID,
                    upright_weights: tuple[float, ...] = (0.0, 0.3, 0.5, 0.7, 1.0),
                    val_sets: tuple[str, ...] | None = None) -> dict:
    """Pick the detector and face thresholds (and the faint-box rule), input size,
    test-time views, the upright mix and whether nested boxes stay, on the validation
    splits only: for each input size and view count the best rule (``best_rule``) over
    the labelled dice of ``val_sets`` (default ``dice_photos.VAL_SETS``), then the best
    of those (ties to fewer views, then the smaller size); the figures written are then
    scored the plain way, as ``companion eval`` would."""
    from companion.vision.evaluate import summarise
    from companion.vision.frames import FrameUnreadable, load_image
    from companion.vision.intervals import bootstrap_intervals
    from reader_lab import dice_photos

    reader = tuning_reader(model_dir)
    val, groups = [], []  # groups: each photo's set and source photo (for the interval)
    for name in val_sets or dice_photos.VAL_SETS:
        for m in dice_photos.load_set(name, root):
            try:
                val.append((load_image(m.path), m.dice))
            except FrameUnreadable:
                continue
            groups.append(f"{name}/{dice_photos.source_of(m.key)}")
    best = None
    for size, nviews in ((z, v) for v in views for z in sizes):
        reader.det_size = size
        reader.views = nviews
        reads = tuning_reads(reader, val)
        (obj, precision, less_mix, nested, _), rule, e2e, wrong, objective = best_rule(
            reader, reads, wrong_cost=wrong_cost, false_cost=false_cost,
            low_thresholds=low_thresholds, low_faces=low_faces,
            upright_weights=upright_weights)
        key = (obj, precision, -nviews, -size, less_mix, nested)
        if best is None or key > best[0]:
            best = (key, rule, size, nviews, reads, e2e, wrong, objective)
        rule, bsize, bviews = best[1], best[2], best[3]
        log(f"val at det_size {size} views {nviews}: best so far det {rule.det} face "
            f"{rule.face} size {bsize} views {bviews} end-to-end {best[5]:.4f} wrong "
            f"{best[6]:.4f} objective {best[7]:.4f}")
    _, rule, size, nviews, reads, _, _, _ = best
    scores = rule_scores(reader, reads, rule)
    s = summarise(scores, [], [d.face for r in reads for d in r.dice])
    spread = bootstrap_intervals(scores, groups, costs=(wrong_cost, false_cost))["objective"]
    log(f"val: det_size {size} views {nviews} upright_weight {rule.mix} keep_nested "
        f"{rule.nested} det_threshold {rule.det} "
        f"face_threshold {rule.face} det_low_threshold {rule.low} low_face_threshold "
        f"{rule.low_face}: precision "
        f"{s.precision:.4f} recall {s.recall:.4f} end-to-end {s.end_to_end:.4f} wrong "
        f"{s.wrong_share:.4f}; objective 95% interval over the {len(set(groups))} source "
        f"photos {spread.low:.4f} to {spread.high:.4f} (compare candidates with "
        f"reader_lab/benchmarks/compare_readers.py)")
    return {"det_threshold": rule.det, "face_threshold": rule.face,
            "det_low_threshold": rule.low, "low_face_threshold": rule.low_face,
            "det_size": size, "views": nviews, "det_flip": reader.det_flip,
            "upright_weight": rule.mix, "keep_nested": rule.nested,
            "upright_files": reader.upright_files or None, "area_crops": reader.area_crops,
            "crop_shapes": reader.crop_shapes,
            "val": {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
                    "end_to_end": round(s.end_to_end, 4),
                    "wrong_confident": round(s.wrong_share, 4), "dice": s.labelled}}


def area_networks(model_dir: str | Path, files: list[str]) -> list[str]:
    """Which of ``files`` (classifiers in ``model_dir``; those not there are passed over)
    were trained on area-shrunk crops, as their ONNX metadata says
    (``CROP_FILTER_KEY``, written by ``train_reader._export_cls``)."""
    return _area_marked(_sessions(model_dir, files))


def _area_marked(nets: list[tuple[str, Path, Any]]) -> list[str]:
    """``area_networks`` of loaded (name, path, session) triples (``_sessions``)."""
    return [name for name, _, net in nets
            if net.get_modelmeta().custom_metadata_map.get(CROP_FILTER_KEY) == "area"]


def _sessions(model_dir: str | Path, files: list[str]) -> list[tuple[str, Path, Any]]:
    """(name, path, ONNX Runtime session) of each of ``files`` that is in ``model_dir``
    (a file that will not load is one line naming it)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3

    def session(data: bytes) -> Any:
        return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])

    paths = [(name, Path(model_dir) / name) for name in files]
    return [(name, path, _load(path, session)) for name, path in paths if path.is_file()]


def load_classifier(path: str | Path) -> tuple[Any, tuple[bool, int, float]]:
    """One classifier network file alone, as ONNX Runtime loads it, and the crops it is
    fed, as the reader would cut them for it: (area-shrunk, side px, span in die sides),
    from its input and metadata (an input side that is not fixed takes ``CROP``). A file
    that is missing, will not load, or has a span that is no number from 0.8 to 4, is one
    line naming it."""
    path = Path(path)
    if not path.is_file():
        raise ModelMissing(f"{path}: no such network file")
    nets = _sessions(path.parent, [path.name])
    side, span = network_shape(nets[0][2], CROP, path)
    return nets[0][2], (bool(_area_marked(nets)), side, span)


def crop_shapes_of(model_dir: str | Path, files: list[str]) -> dict[str, list]:
    """reader.json ``crop_shapes`` for ``files`` (classifiers in ``model_dir``; those not
    there are passed over): each one whose input side or crop span differs from the
    first's (the turned classifier's side, ``CROP_SPAN``), as [side, span]."""
    return _shapes(_sessions(model_dir, files))


def _shapes(nets: list[tuple[str, Path, Any]]) -> dict[str, list]:
    """``crop_shapes_of`` of loaded (name, path, session) triples (``_sessions``)."""
    shapes, base = {}, None
    for name, path, net in nets:
        side, span = network_shape(net, 0, path)
        base = base or side
        if side and (side, span) != (base, CROP_SPAN):
            shapes[name] = [side, span]
    return shapes


def upright_members(model_dir: str | Path) -> list[str] | None:
    """The upright classifiers a training folder holds, to be averaged: its
    classifier_upright.onnx, then any classifier_upright_*.onnx by name (None: none)."""
    d = Path(model_dir)
    if not (d / UPRIGHT).is_file():
        return None
    return [UPRIGHT, *sorted(p.name for p in d.glob("classifier_upright_*.onnx"))]


def match_kept(boxes, kept: list[int], dice) -> list[tuple[int, int]]:
    """The kept boxes (indices into ``boxes``) matched one to one to the labelled
    ``dice`` by centre, as scoring matches readings (``evaluate.match``): pairs of
    (position in ``kept``, index in ``dice``). Which face a box reads plays no part."""
    from companion.vision.evaluate import PredictedDie, match

    preds = [PredictedDie("", tuple(boxes[i][:4]), ((boxes[i][0] + boxes[i][2]) / 2,
                                                    (boxes[i][1] + boxes[i][3]) / 2), 0.0)
             for i in kept]
    return match(preds, dice)


def _tally(mixed, keeps: Callable[[float, float], bool], nested: bool
           ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """For one kept-box rule over the validation photos' (boxes, mixed probabilities,
    labelled dice): how many boxes are kept, and for each kept box matched to a labelled
    die, how sure its face reads, whether that face is the label's and the box's longer
    side (what any face threshold then counts)."""
    predicted, confs, right, sides = 0, [], [], []
    for boxes, p, dice in mixed:
        kept = kept_boxes(boxes, p, keeps, nested)
        predicted += len(kept)
        for pi, li in match_kept(boxes, kept, dice):
            face_p = p[kept[pi]][:NOT_A_DIE]
            k = int(face_p.argmax())
            confs.append(float(face_p[k]))
            right.append(FACES[k] == dice[li].face)
            sides.append(box_side(boxes[kept[pi]]))
    return (predicted, np.array(confs, np.float64), np.array(right, bool),
            np.array(sides, np.float64))
