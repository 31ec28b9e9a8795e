"""Train the learned die reader (needs the optional ``[train]`` extra: torch, onnx).

    python -m reader_lab train --out companion/data/models

Two small plain-torch networks (no torchvision):
- a CenterNet-style detector (heat map of die centres + box size, stride 4), trained on
  random crops of the real train splits (``dice_photos.TRAIN_SETS``) and of rendered
  scenes (``render_dice``), at random scales;
- a crop classifier (faces 1..6 + "not a die", 64-number embedding) trained on
  jittered, turned, recoloured crops of the same dice plus rendered dice and crops of
  table with no die.
Both are exported to ONNX; the thresholds are then chosen on the validation splits
(``dice_photos.VAL_SETS``), never on the held-aside sets, and written to reader.json.
Deterministic for a seed (single process, deterministic torch kernels).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from companion.errors import CompanionError
from companion.vision.learned_model import (
    CROP,
    CROP_FILTER_KEY,
    CROP_SPAN,
    CROP_SPAN_KEY,
    DET_SIZE,
    NOT_A_DIE,
    STRIDE,
    crop,
    decode,
    letterbox,
)
from companion.vision.types import box_side
from reader_lab import dice_photos, mine_cache
from reader_lab.dyed_dice import dye_dice
from reader_lab.pack_boxes import on_die as _on_die  # a detector box on a labelled die
from reader_lab.rated_boxes import read_rated_negatives
from reader_lab.render_dice import render_dice_scene
from reader_lab.train_spec import (
    INIT_LR,
    LOW_RES_SHARE,
    PART_NETWORKS,
    TRAIN_PARTS,
    feature_side,
    grid_tiles,
)

# a crop on a detector's box (--die-boxes): its side lo..hi times the box's, its centre
# moved by sd of a side. The detector's boxes on validation dice (issue 8z) are 0.74-1.24x
# the labelled side (10th-90th percentile) and off centre by 2-6%: --wide-box-jitter.
BOX_JITTER = (0.9, 1.1, 0.03)
WIDE_BOX_JITTER = (0.75, 1.25, 0.05)
UPRIGHT_TURN = 12.0  # degrees (standard deviation) an upright classifier crop is turned
SMALL_DIE = 32  # px (box side in the photo): a small die, for ``small_weight``
# options added after checkpoints were first written, with the value older runs had
LATER_OPTIONS = {"low_res_share": LOW_RES_SHARE, "det_colour": False, "dye_share": 0.0,
                 "rated_negatives": None, "init_lr": INIT_LR, "unreadable_share": 0.0,
                 "sure_phantoms": None}
# an unreadable die (``unreadable_share``, issue 9x): shrunk until it is this many px across
# (its pips gone), or blurred with a sigma of this many die sides; learnt as "a die, face
# unknown": even over the six faces, nothing on "not a die"
UNREADABLE_SIDE = (2.5, 5.5)
UNREADABLE_BLUR = (0.1, 0.18)
UNREADABLE_ROW = np.array([1 / 6] * 6 + [0.0], np.float32)


def _cbr(i: int, o: int, s: int = 1, k: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o),
                         nn.ReLU(inplace=True))


class Detector(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.s1 = _cbr(3, 16, 2)
        self.s2 = nn.Sequential(_cbr(16, 24, 2), _cbr(24, 24))
        self.s3 = nn.Sequential(_cbr(24, 48, 2), _cbr(48, 48))
        self.s4 = nn.Sequential(_cbr(48, 64, 2), _cbr(64, 64))
        self.s5 = nn.Sequential(_cbr(64, 96, 2), _cbr(96, 96))
        self.top = nn.Conv2d(96, 48, 1)
        self.l4 = nn.Conv2d(64, 48, 1)
        self.l3 = nn.Conv2d(48, 48, 1)
        self.l2 = nn.Conv2d(24, 48, 1)
        self.head = _cbr(48, 32)
        self.hm = nn.Conv2d(32, 1, 3, 1, 1)
        self.wh = nn.Conv2d(32, 2, 3, 1, 1)
        nn.init.constant_(self.hm.bias, -2.19)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c2 = self.s2(self.s1(x))
        c3 = self.s3(c2)
        c4 = self.s4(c3)
        c5 = self.s5(c4)
        p = self.top(c5)
        p = F.interpolate(p, scale_factor=2.0, mode="nearest") + self.l4(c4)
        p = F.interpolate(p, scale_factor=2.0, mode="nearest") + self.l3(c3)
        p = F.interpolate(p, scale_factor=2.0, mode="nearest") + self.l2(c2)
        h = self.head(p)
        return torch.sigmoid(self.hm(h)), self.wh(h)


class Classifier(nn.Module):
    """48x48 crop -> 7 logits + 64-number embedding; a stride-2 stem keeps it cheap
    (width 1: ~0.43M parameters, ~16M multiply-adds per crop; the channels scale with
    ``width``). The last feature map (the crop's side / 16 cells across) is averaged
    whole (``grid`` 1), or (``grid`` g) over g x g parts kept side by side, so the
    embedding knows where in the crop a feature is: whether the pips seen are on the
    top face or on a side below it (issue 8z)."""

    def __init__(self, width: float = 1.0, grid: int = 1) -> None:
        super().__init__()
        c = [max(8, round(n * width / 8) * 8) for n in (24, 32, 48, 96, 128)]
        self.body = nn.Sequential(
            _cbr(3, c[0], 2), _cbr(c[0], c[1]), _cbr(c[1], c[2], 2), _cbr(c[2], c[2]),
            _cbr(c[2], c[3], 2), _cbr(c[3], c[3]), _cbr(c[3], c[4], 2), _cbr(c[4], c[4]),
        )
        self.grid = grid
        self.emb = nn.Linear(c[4] * grid * grid, 64)
        self.out = nn.Linear(64, 7)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.body(x)
        if self.grid == 1:
            f = f.mean(dim=(2, 3))
        else:
            f = F.avg_pool2d(f, f.shape[-1] // self.grid).flatten(1)
        e = self.emb(f)
        return self.out(F.relu(e)), e


# ------------------------------------------------------------------ data


class RealImages:
    """Encoded photos of the train (or val) splits, decoded when drawn."""

    def __init__(self, names: tuple[str, ...], root: str | Path | None) -> None:
        self.items: list[tuple[bytes, np.ndarray, np.ndarray]] = []
        self.sets: list[str] = []  # each photo's set name
        # per photo: boxes a detector found where no die is labelled (``mine_false_peaks``)
        self.false_peaks: list[np.ndarray] = []
        # per photo: a detector's boxes on labelled dice (``mine_die_boxes``)
        self.die_boxes: list[np.ndarray] = []
        # per photo: how many labelled dice a detector misses (``mine_missed``)
        self.missed: list[int] = []
        # per photo: which labelled dice a model reads wrong or unsure (``mine_hard_dice``)
        self.hard_dice: list[np.ndarray] = []
        # per photo: a model's face probabilities of the labelled dice (``mine_soft_dice``)
        self.soft_dice: list[np.ndarray] = []
        self.keys: list[str | None] = []  # each photo's path below the photo root
        for name in names:
            for m in dice_photos.load_set(name, root):
                boxes = np.array([d.box for d in m.dice], np.float32)
                faces = np.array([int(d.face) for d in m.dice], np.int64)
                self.items.append((m.path.read_bytes(), boxes, faces))
                self.sets.append(name)
                self.keys.append(dice_photos.photo_key(m.path, root))

    def __len__(self) -> int:
        return len(self.items)

    def repeat(self, i: int) -> None:
        """Add photo ``i`` once more at the end, with everything mined for it."""
        for part in (self.items, self.sets, self.keys, self.false_peaks, self.die_boxes,
                     self.missed, self.hard_dice, self.soft_dice):
            if len(part) > i:
                part.append(part[i])

    def ready_false_peaks(self) -> None:
        """Give every photo an empty list of "not a die" boxes when none was mined, so
        boxes can be added to any of them (``add_false_peaks``)."""
        if not self.false_peaks:
            self.false_peaks = [np.zeros((0, 4), np.float32) for _ in range(len(self))]

    def add_false_peaks(self, i: int, boxes) -> None:
        """Add ``boxes`` (x0, y0, x1, y1 rows) to photo ``i``'s "not a die" boxes."""
        self.ready_false_peaks()
        self.false_peaks[i] = np.vstack([self.false_peaks[i],
                                         np.array(boxes, np.float32).reshape(-1, 4)])

    def get(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data, boxes, faces = self.items[i]
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        return img, boxes.copy(), faces.copy()


def _peaks(session, img: np.ndarray, sizes: tuple[int, ...], threshold: float):
    """The detector's boxes (x0, y0, x1, y1) scored at least ``threshold``, at each input
    side of ``sizes`` in turn."""
    for size in sizes:
        blob, scale = letterbox(img, size)
        session.setInput(blob)
        hm, wh = session.forward(["hm", "wh"])
        for x0, y0, x1, y1, _ in decode(hm, wh, scale, threshold):
            yield x0, y0, x1, y1


def _detector(model_dir: str | Path):
    from companion.vision.learned import _load, _read_onnx_cv2

    return _load(Path(model_dir) / "detector.onnx", _read_onnx_cv2)


def miner_settings(miner) -> dict:
    """A miner's settings, part of its cache key (``mine_cache``): its keyword defaults
    but ``log``, and ``code``, a digest of its source, of the helpers it calls here and of
    the modules that read photos and networks for it (so a change of how it mines names
    another file)."""
    from companion.vision import learned, learned_model, learned_spec

    code = hashlib.sha256()
    for f in (miner, _peaks, _on_die, _detector, _train_dice_probabilities):
        code.update(inspect.getsource(f).encode())
    for module in (learned, learned_model, learned_spec, dice_photos):
        code.update(Path(module.__file__).read_bytes())
    return {k: v.default for k, v in inspect.signature(miner).parameters.items()
            if v.default is not inspect.Parameter.empty and k != "log"} | {
        "code": code.hexdigest()}


def mine_false_peaks(real: RealImages, model_dir: str | Path, threshold: float = 0.3,
                     sizes: tuple[int, ...] = (416, 512), log=print) -> int:
    """Fill ``real.false_peaks``: the boxes the detector in ``model_dir`` scores at least
    ``threshold`` (at each input side of ``sizes``) on each photo of a fully labelled set
    (``dice_photos.fully_labelled``) that hold no labelled die (neither centre inside the
    other's box), one box per place. The classifiers then learn them as "not a die".
    Returns how many were found; a detector that will not load is ``ModelUnreadable``."""
    session = _detector(model_dir)
    real.false_peaks = []
    for i, name in enumerate(real.sets):
        found: list[tuple[float, float, float, float]] = []
        if dice_photos.fully_labelled(name):
            img, boxes, _ = real.get(i)
            for box in _peaks(session, img, sizes, threshold):
                if not any(_on_die(box, b) for b in [*boxes, *found]):
                    found.append(box)
        real.false_peaks.append(np.array(found, np.float32).reshape(-1, 4))
    n = sum(len(f) for f in real.false_peaks)
    log(f"false peaks of {model_dir}'s detector (score >= {threshold}) on the fully "
        f"labelled train photos: {n}")
    return n


# the faint boxes ``mine_sure_phantoms`` looks at: scored at least this by the detector
SURE_PHANTOM_LOW = 0.1


def mine_sure_phantoms(real: RealImages, model_dir: str | Path, low: float = SURE_PHANTOM_LOW,
                       face: float = 0.8, log=print) -> int:
    """Append to ``real.false_peaks`` (the classifiers' "not a die" boxes) the faint boxes
    the reader in ``model_dir`` reads surely as a die where none is labelled, on the
    photos of the sets that are not fully labelled (table-train, whose false peaks
    ``mine_false_peaks`` leaves alone, since a few far dice there are unboxed): boxes its
    detector scores from ``low`` up to (not including) its own ``det_threshold``, with no
    labelled die on them (``_on_die``), one per place, whose top face its classifiers read
    at least ``face`` sure and above "not a die". Such boxes cost a rule that keeps faint
    boxes more than they give; on table-train they are mostly a board's round number
    tokens read as a one (issue 9y). Returns how many boxes."""
    from companion.vision.learned import NOT_A_DIE, LearnedReader

    reader = LearnedReader(model_dir, threads=1)
    real.ready_false_peaks()
    n = 0
    for i, name in enumerate(real.sets):
        if dice_photos.fully_labelled(name):
            continue
        img, boxes, _ = real.get(i)
        faint = [b for b in reader.detect(img, threshold=low)
                 if b[4] < reader.det_threshold and not any(_on_die(b, d) for d in boxes)]
        if not faint:
            continue
        found: list[tuple[float, float, float, float]] = []
        for b, p in zip(faint, reader.face_probabilities(img, faint), strict=True):
            k = int(p[:NOT_A_DIE].argmax())
            if p[k] >= face and p[k] > p[NOT_A_DIE] and not any(_on_die(b, f) for f in found):
                found.append(tuple(float(v) for v in b[:4]))
        if found:
            real.add_false_peaks(i, found)
            n += len(found)
    log(f"faint boxes ({low} <= detector < {reader.det_threshold}) that {model_dir}'s reader "
        f"reads at least {face} sure where no die is labelled, on the train photos not fully "
        f"labelled: {n}")
    return n


RATED_COPIES = 3  # times each rated "not a die" box is taught (2 crops each time)
RATED_DRAWS = 20  # times as often a train photo holding such a box is drawn


def add_rated_negatives(real: RealImages, folder: str | Path, log=print) -> int:
    """Append to ``real.false_peaks`` (the classifiers' "not a die" boxes) each box of
    the train photos that a box audit's two raters both called not a die
    (``read_rated_negatives``), ``RATED_COPIES`` times, and add each photo holding one
    ``RATED_DRAWS - 1`` more times (so it is drawn that many times as often: a few dozen
    boxes among 3000 photos would otherwise be seen about once); photos of other splits
    in the round (validation, held aside) are never taught. Returns how many boxes."""
    rated = read_rated_negatives(folder)
    real.ready_false_peaks()
    n, again = 0, []
    for i, key in enumerate(list(real.keys)):
        boxes = rated.get(key or "", [])
        if boxes:
            real.add_false_peaks(i, boxes * RATED_COPIES)
            n += len(boxes)
            again += [i] * (RATED_DRAWS - 1)
    for i in again:
        real.repeat(i)
    log(f"boxes two raters called not a die in {folder}, on the train photos: {n} "
        f"(of {sum(len(b) for b in rated.values())} in the round)")
    return n


def mine_die_boxes(real: RealImages, model_dir: str | Path, threshold: float = 0.2,
                   sizes: tuple[int, ...] = (416, 512), log=print) -> int:
    """Fill ``real.die_boxes``: per photo, the boxes the detector in ``model_dir`` scores
    at least ``threshold`` on a labelled die, as rows (x0, y0, x1, y1, index of the die),
    each box on the die whose centre is nearest. The classifiers then read dice in the
    boxes the detector gives them at run time too (off centre, too large or too small),
    not only in the labelled ones. Returns how many were found."""
    session = _detector(model_dir)
    real.die_boxes = []
    for i in range(len(real)):
        img, boxes, _ = real.get(i)
        found = []
        for box in _peaks(session, img, sizes, threshold):
            on = [j for j, b in enumerate(boxes) if _on_die(box, b)]
            if on:
                cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
                j = min(on, key=lambda k: math.hypot((boxes[k][0] + boxes[k][2]) / 2 - cx,
                                                     (boxes[k][1] + boxes[k][3]) / 2 - cy))
                found.append((*box, j))
        real.die_boxes.append(np.array(found, np.float32).reshape(-1, 5))
    n = sum(len(f) for f in real.die_boxes)
    log(f"boxes of {model_dir}'s detector (score >= {threshold}) on labelled train dice: {n}")
    return n


def mine_missed(real: RealImages, model_dir: str | Path, threshold: float = 0.5,
                sizes: tuple[int, ...] = (416,), log=print) -> int:
    """Fill ``real.missed``: per photo, how many of its labelled dice have no box the
    detector in ``model_dir`` scores at least ``threshold`` on them (at each input side
    of ``sizes``), the photos a detector fine-tuned from it should see more often
    (``train_detector``'s ``hard_share``). Returns how many dice were missed in all."""
    session = _detector(model_dir)
    real.missed = []
    for i in range(len(real)):
        img, boxes, _ = real.get(i)
        found = list(_peaks(session, img, sizes, threshold))
        real.missed.append(sum(not any(_on_die(box, b) for box in found) for b in boxes))
    n = sum(real.missed)
    log(f"dice {model_dir}'s detector misses (score < {threshold}) on the train photos: {n} "
        f"on {sum(m > 0 for m in real.missed)} photos")
    return n


def _train_dice_probabilities(real: RealImages, model_dir: str | Path) -> list[np.ndarray]:
    """Per train photo, the reader in ``model_dir``'s face probabilities (dice x 7, its
    classifiers as its reader.json mixes them) of each labelled die in its labelled box."""
    from companion.vision.learned import LearnedReader

    reader = LearnedReader(model_dir, threads=1)
    out = []
    for i in range(len(real)):
        img, boxes, _ = real.get(i)
        out.append(reader.face_probabilities(img, boxes))  # 0 x 7 for a photo with no die
    return out


def mine_hard_dice(real: RealImages, model_dir: str | Path, threshold: float = 0.9,
                   log=print) -> int:
    """Fill ``real.hard_dice``: per photo, which labelled dice the reader in
    ``model_dir`` (its classifiers as its reader.json mixes them) reads in their labelled
    boxes as another face, or as their face with less than ``threshold`` probability; the
    classifiers then see those dice more often (``hard_weight``). Returns how many."""
    from companion.vision.learned import FACES

    real.hard_dice = []
    for (_, _, faces), probs in zip(real.items, _train_dice_probabilities(real, model_dir),
                                    strict=True):
        k = probs[:, :len(FACES)].argmax(1)
        right = (k == faces - 1) & (probs[np.arange(len(k)), k] >= threshold)
        real.hard_dice.append(~right)
    n = int(sum(h.sum() for h in real.hard_dice))
    log(f"dice {model_dir}'s reader reads wrong or below {threshold} in their labelled boxes "
        f"on the train photos: {n} of {sum(len(h) for h in real.hard_dice)}")
    return n


def mine_soft_dice(real: RealImages, model_dir: str | Path, log=print) -> float:
    """Fill ``real.soft_dice``: per photo, the reader in ``model_dir``'s probabilities
    (dice x 7) of each labelled die in its labelled box, the soft targets a classifier then
    learns that die's crops toward (``soft_share``, issue 9b). Returns the mean probability
    the reader gives the labelled face."""
    real.soft_dice = [p.astype(np.float32) for p in _train_dice_probabilities(real, model_dir)]
    given = [p[np.arange(len(f)), f - 1] for (_, _, f), p in zip(real.items, real.soft_dice,
                                                                  strict=True) if len(f)]
    mean = float(np.concatenate(given).mean()) if given else 0.0
    log(f"soft targets from {model_dir}'s reader for the train dice: the labelled face "
        f"{mean:.3f} on average")
    return mean


class Rendered:
    """``n`` rendered scenes of ``seed``, drawn into memory, or read from ``cache``
    (``mine_cache.scenes``) when drawn there before."""

    def __init__(self, n: int, seed: int, upright: bool = False, cube: bool = False,
                 cache: str | Path | None = None, log=print) -> None:
        def draw(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            img, dice = render_dice_scene(seed * 100003 + i, size=DET_SIZE, upright=upright,
                                          cube=cube)
            boxes = np.array([d.box for d in dice], np.float32).reshape(-1, 4)
            faces = np.array([d.face for d in dice], np.int64)
            return img, boxes, faces

        self.items = mine_cache.scenes(cache, n, seed, upright, cube, DET_SIZE, draw, log=log)

    def __len__(self) -> int:
        return len(self.items)

    def get(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        img, boxes, faces = self.items[i]
        return img, boxes.copy(), faces.copy()


def _colour_jitter(img: np.ndarray, rng: np.random.Generator, strong: bool) -> np.ndarray:
    f = img.astype(np.float32)
    if strong and rng.random() < 0.3:
        f = f[..., rng.permutation(3)]
    if rng.random() < 0.15:
        f = np.repeat(f.mean(axis=2, keepdims=True), 3, axis=2)
    f = f * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    if rng.random() < 0.3:
        f = f + rng.normal(0, rng.uniform(1, 8), f.shape)
    return np.clip(f, 0, 255).astype(np.uint8)


DET_SCALES = (0.7, 1.5)  # a frame is scaled to DET_SIZE times a factor drawn in this range
# ``colour`` detector crops (issue 9r): shares hue-turned and inverted
DET_HUE_SHARE = 0.5
DET_INVERT_SHARE = 0.1


def _maybe_dye(src, i: int, img: np.ndarray, boxes: np.ndarray, rng: np.random.Generator,
               share: float) -> np.ndarray:
    """Photo ``i`` of ``src`` with its dice dyed other colours (``dyed_dice.dye_dice``) a
    ``share`` of the times it is drawn (issue 9s), when it is a real photo of a set whose
    boxes hold whole dice (``dice_photos.whole_die_boxes``; rendered dice are drawn in any
    colours already). ``share`` 0: no draw at all, so the draws are as before."""
    if share <= 0 or not len(boxes):
        return img
    sets = getattr(src, "sets", None)
    if sets is None or not dice_photos.whole_die_boxes(sets[i]) or rng.random() >= share:
        return img
    return dye_dice(img, boxes, rng)


def _det_sample(img: np.ndarray, boxes: np.ndarray, rng: np.random.Generator, size: int,
                scales: tuple[float, float] = DET_SCALES, stretch: float = 1.0,
                colour: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A size x size training crop at a random scale; targets at stride 4. ``stretch``
    (> 1) also scales width and height apart, their ratio drawn from 1/stretch..stretch,
    as a photo squeezed to another aspect ratio shows its dice (1: no draw at all).
    ``colour`` (issue 9r): half the crops hue-turned with their saturation scaled, as the
    classifiers' are (``_hue_turn``), and a tenth inverted, so the detector meets die and
    table colours nobody photographed (off: no draw at all)."""
    h, w = img.shape[:2]
    scale = DET_SIZE / max(h, w) * math.exp(rng.uniform(math.log(scales[0]),
                                                        math.log(scales[1])))
    sx = sy = scale
    if stretch > 1:
        aspect = math.exp(rng.uniform(-math.log(stretch), math.log(stretch)))
        sx, sy = scale * math.sqrt(aspect), scale / math.sqrt(aspect)
    nw, nh = max(1, round(w * sx)), max(1, round(h * sy))
    img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if min(sx, sy) < 1 else
                     cv2.INTER_LINEAR)
    boxes = boxes * np.array([sx, sy, sx, sy], np.float32)
    ox = int(rng.integers(min(0, nw - size), max(0, nw - size) + 1))
    oy = int(rng.integers(min(0, nh - size), max(0, nh - size) + 1))
    canvas = np.full((size, size, 3), 114, np.uint8)
    sx0, sy0 = max(0, ox), max(0, oy)
    dx0, dy0 = max(0, -ox), max(0, -oy)
    cw, ch = min(nw - sx0, size - dx0), min(nh - sy0, size - dy0)
    canvas[dy0:dy0 + ch, dx0:dx0 + cw] = img[sy0:sy0 + ch, sx0:sx0 + cw]
    boxes = boxes - [ox, oy, ox, oy]
    if rng.random() < 0.5:
        canvas = canvas[:, ::-1]
        boxes = np.stack([size - boxes[:, 2], boxes[:, 1], size - boxes[:, 0], boxes[:, 3]], 1)
    if rng.random() < 0.5:
        canvas = canvas[::-1]
        boxes = np.stack([boxes[:, 0], size - boxes[:, 3], boxes[:, 2], size - boxes[:, 1]], 1)
    canvas = np.ascontiguousarray(canvas)
    if colour:
        if rng.random() < DET_HUE_SHARE:
            canvas = _hue_turn(canvas, rng)
        if rng.random() < DET_INVERT_SHARE:
            canvas = 255 - canvas
    canvas = _colour_jitter(canvas, rng, strong=True)
    out = size // STRIDE
    hm = np.zeros((out, out), np.float32)
    wh = np.zeros((2, out, out), np.float32)
    mask = np.zeros((out, out), np.float32)
    yy, xx = np.mgrid[0:out, 0:out].astype(np.float32)
    for x0, y0, x1, y1 in boxes:
        cx, cy = (x0 + x1) / 2 / STRIDE - 0.5, (y0 + y1) / 2 / STRIDE - 0.5
        bw, bh = (x1 - x0) / STRIDE, (y1 - y0) / STRIDE
        if not (0 <= cx < out and 0 <= cy < out) or bw < 0.5 or bh < 0.5:
            continue
        sigma = max(0.6, min(bw, bh) / 6)
        g = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma * sigma))
        np.maximum(hm, g, out=hm)
        ix, iy = int(round(cx)), int(round(cy))
        if 0 <= ix < out and 0 <= iy < out:
            hm[iy, ix] = 1.0
            wh[:, iy, ix] = (math.log(bw), math.log(bh))
            mask[iy, ix] = 1.0
    return canvas, hm, wh, mask


def _focal(pred: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
    pred = pred.clamp(1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(pred) * (1 - pred) ** 2 * pos
    neg_loss = torch.log(1 - pred) * pred ** 2 * (1 - gt) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / n


def _cls_samples(img: np.ndarray, boxes: np.ndarray, faces: np.ndarray,
                 rng: np.random.Generator, per_die: int, backgrounds: int,
                 upright: bool = False, small_weight: int = 1,
                 false_peaks: np.ndarray | None = None, part_share: float = 0.0,
                 die_boxes: np.ndarray | None = None, hard: np.ndarray | None = None,
                 hard_weight: int = 1, area: bool = False, size: int = CROP,
                 span: float = CROP_SPAN, box_jitter: tuple[float, float, float] = BOX_JITTER,
                 soft: np.ndarray | None = None, soft_share: float = 0.0
                 ) -> tuple[list[np.ndarray], list[int | np.ndarray]]:
    """Jittered crops of each die and of table with no die. Turned any way, or (upright)
    only a little and mirrored half the time: a photo's up stays up, so in an oblique view
    the top face stays the one above the sides. A die under ``SMALL_DIE`` px gives
    ``small_weight`` times as many crops. Also "not a die": two crops of each of
    ``false_peaks`` (boxes a detector found where no die is), and for a ``part_share`` of
    the dice one crop of a part of the die (a third to two thirds of its size, its centre
    off the die's by a third to two thirds of it), as a detector's box on a die's side or
    corner looks. ``die_boxes`` (rows x0, y0, x1, y1, die index: a detector's boxes on
    the dice) centre half of a die's crops on one of its detector boxes instead, as the
    reader crops it at run time. A die marked in ``hard`` (``mine_hard_dice``: a model
    read it wrong or unsure) gives ``hard_weight`` times as many crops. ``area``: every
    crop is shrunk with an area filter (``learned_model.crop``). ``size``: the crops'
    side (px); ``span``: a crop's side in die sides (``learned_model.CROP_SPAN`` unless a
    network was trained to see more or less around the die, issue 8u). ``box_jitter``
    (lo, hi, sd): a crop on a detector box spans lo..hi times the box's side and its
    centre moves by sd of a side (``BOX_JITTER``, or ``WIDE_BOX_JITTER`` as a detector
    boxes dice it never trained on, issue 8z); the draws are the same either way.
    ``soft`` (dice x 7, ``mine_soft_dice``) with ``soft_share`` above 0: a die's crops are
    labelled with a probability row, ``1 - soft_share`` of it on the die's face and
    ``soft_share`` spread as ``soft`` gives (issue 9b); other crops keep their class."""
    out: list[np.ndarray] = []
    labels: list[int | np.ndarray] = []

    def angle() -> float:
        return float(rng.normal(0, UPRIGHT_TURN)) if upright else float(rng.uniform(0, 360))

    def maybe_mirror(c: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(c[:, ::-1]) if upright and rng.random() < 0.5 else c

    h, w = img.shape[:2]
    for index, ((x0, y0, x1, y1), face) in enumerate(zip(boxes, faces, strict=True)):
        side0 = max(x1 - x0, y1 - y0)
        if side0 < 4:
            continue
        seen = (die_boxes[die_boxes[:, 4] == index, :4] if die_boxes is not None
                else np.zeros((0, 4), np.float32))
        times = ((small_weight if side0 < SMALL_DIE else 1)
                 * (hard_weight if hard is not None and hard[index] else 1))
        for _ in range(per_die * times):
            if len(seen) and rng.random() < 0.5:  # as the detector boxed it, a little jitter
                bx0, by0, bx1, by1 = seen[int(rng.integers(len(seen)))]
                bside = max(bx1 - bx0, by1 - by0)
                lo, hi, sd = box_jitter
                side = bside * span * rng.uniform(lo, hi)
                cx = (bx0 + bx1) / 2 + rng.normal(0, sd) * bside
                cy = (by0 + by1) / 2 + rng.normal(0, sd) * bside
            else:
                side = side0 * span * rng.uniform(0.8, 1.3)
                cx = (x0 + x1) / 2 + rng.normal(0, 0.06) * side0
                cy = (y0 + y1) / 2 + rng.normal(0, 0.06) * side0
            out.append(maybe_mirror(crop(img, cx, cy, side, angle(), area=area, size=size)))
            labels.append(int(face) - 1 if soft is None or soft_share <= 0
                          else _soft_row(int(face) - 1, soft[index], soft_share))
        if part_share and rng.random() < part_share:
            away, turn = side0 * rng.uniform(0.33, 0.67), rng.uniform(0, 2 * math.pi)
            out.append(maybe_mirror(crop(img, (x0 + x1) / 2 + away * math.cos(turn),
                                         (y0 + y1) / 2 + away * math.sin(turn),
                                         side0 * span * rng.uniform(0.33, 0.67),
                                         angle(), area=area, size=size)))
            labels.append(NOT_A_DIE)
    for x0, y0, x1, y1 in false_peaks if false_peaks is not None else ():
        side0 = max(x1 - x0, y1 - y0)
        for _ in range(2):
            side = side0 * span * rng.uniform(0.8, 1.3)
            out.append(maybe_mirror(crop(img, (x0 + x1) / 2 + rng.normal(0, 0.06) * side0,
                                         (y0 + y1) / 2 + rng.normal(0, 0.06) * side0,
                                         side, angle(), area=area, size=size)))
            labels.append(NOT_A_DIE)
    sizes = [box_side(b) for b in boxes] or [w / 10]
    for _ in range(backgrounds):
        side = float(rng.choice(sizes)) * span * rng.uniform(0.7, 1.5)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        # no die centre within the crop's middle half
        if any(abs(cx - (b[0] + b[2]) / 2) < side * 0.45 and abs(cy - (b[1] + b[3]) / 2)
               < side * 0.45 for b in boxes):
            continue
        out.append(maybe_mirror(crop(img, cx, cy, side, angle(), area=area, size=size)))
        labels.append(NOT_A_DIE)
    return out, labels


def _soft_row(k: int, soft: np.ndarray, share: float) -> np.ndarray:
    """A probability row: ``1 - share`` on class ``k`` and ``share`` spread as ``soft``."""
    row = np.asarray(soft, np.float32) * share
    row[k] += 1.0 - share
    return row


def _targets(labels: list) -> torch.Tensor:
    """Class indices (every label a class), else a probability row per crop."""
    if all(isinstance(lab, int) for lab in labels):
        return torch.tensor(labels)
    rows = np.zeros((len(labels), 7), np.float32)
    for r, lab in enumerate(labels):
        if isinstance(lab, int):
            rows[r, lab] = 1.0
        else:
            rows[r] = lab
    return torch.from_numpy(rows)


def _hue_turn(c: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Turn the hue and scale the saturation: die and table colours nobody trained on."""
    hsv = cv2.cvtColor(c, cv2.COLOR_BGR2HSV).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(0, 180))) % 180
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.3, 1.8), 0, 255)
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)


def _camera_augment(c: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """What other cameras do to a crop (``camera_aug``): the die squeezed or stretched
    top to bottom (seen from lower or higher than in the photo), salt-and-pepper dots
    (a noisy sensor) and JPEG blocks (a cheap encoder). The size stays the crop's."""
    size = c.shape[0]
    if rng.random() < 0.3:
        f = float(rng.uniform(0.7, 1.15))  # height scale about the centre
        m = np.float32([[1, 0, 0], [0, f, size / 2 * (1 - f)]])
        c = cv2.warpAffine(c, m, (size, size), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REFLECT)
    if rng.random() < 0.2:
        dots = rng.random(c.shape[:2]) < rng.uniform(0.005, 0.04)
        c = c.copy()
        c[dots] = np.where(rng.random((int(dots.sum()), 1)) < 0.5, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, buf = cv2.imencode(".jpg", c, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 90))])
        if ok:
            c = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return c


def _cls_augment(c: np.ndarray, rng: np.random.Generator, camera: bool = False,
                 low_res: float = LOW_RES_SHARE) -> np.ndarray:
    """Colour, blur and resolution draws for a classifier crop; ``camera`` adds
    ``_camera_augment`` first (off: the draws are exactly those of earlier models).
    ``low_res``: the share of crops shrunk to 10 px .. three quarters of their side and
    scaled back, as a die seen small looks (``LOW_RES_SHARE``: the share, and so the
    draws, of every network before issue 9g)."""
    if camera:
        c = _camera_augment(c, rng)
    # hue turns and saturation scaling: die and table colours nobody trained on
    if rng.random() < 0.5:
        c = _hue_turn(c, rng)
    c = _colour_jitter(c, rng, strong=True)
    if rng.random() < 0.1:
        c = 255 - c
    if rng.random() < 0.2:
        k = int(rng.choice([3, 5]))
        c = cv2.GaussianBlur(c, (k, k), 0)
    if rng.random() < low_res:  # lower resolution: a die seen small
        size = c.shape[0]
        s = int(rng.integers(10, size * 3 // 4))
        c = cv2.resize(cv2.resize(c, (s, s), interpolation=cv2.INTER_AREA), (size, size))
    return c


def _is_die(label: int | np.ndarray) -> bool:
    """Whether a crop's label (a class, or a probability row) is a die's face."""
    return (label if isinstance(label, int) else int(np.argmax(label))) != NOT_A_DIE


def _unreadable(c: np.ndarray, rng: np.random.Generator, span: float) -> np.ndarray:
    """A die crop (the die ``span`` times smaller than the crop) made unreadable: shrunk
    until the die is ``UNREADABLE_SIDE`` px across and scaled back, or blurred by
    ``UNREADABLE_BLUR`` die sides; the same size, its pips gone either way."""
    size = c.shape[0]
    if rng.random() < 0.5:
        s = max(2, round(float(rng.uniform(*UNREADABLE_SIDE)) * span))
        small = cv2.resize(c, (s, s), interpolation=cv2.INTER_AREA)
        return cv2.resize(small, (size, size), interpolation=cv2.INTER_LINEAR)
    return cv2.GaussianBlur(c, (0, 0), size / span * float(rng.uniform(*UNREADABLE_BLUR)))


def _make_unreadable(take: list, rng: np.random.Generator, share: float, span: float
                     ) -> list:
    """``share`` of the die crops in ``take`` ((crop, label) pairs) made unreadable
    (``_unreadable``) and labelled ``UNREADABLE_ROW``; the rest as they were. At share 0
    nothing is drawn."""
    if share <= 0:
        return list(take)
    out = []
    for c, lab in take:
        if _is_die(lab) and rng.random() < share:
            c, lab = _unreadable(c, rng, span), UNREADABLE_ROW
        out.append((c, lab))
    return out


def _to_tensor(batch: list[np.ndarray]) -> torch.Tensor:
    arr = np.stack(batch).astype(np.float32) / 255.0
    return torch.from_numpy(np.ascontiguousarray(arr.transpose(0, 3, 1, 2)))


# ------------------------------------------------------------------ training


class InitUnusable(CompanionError, ValueError):
    """A model to fine-tune from that cannot be used (one line naming the file)."""


class CheckpointUnusable(CompanionError, ValueError):
    """A half-trained network's checkpoint that cannot be resumed (one line naming it)."""


CHECKPOINT_EVERY = 500  # steps between a network's checkpoints


@dataclass
class Checkpoint:
    """Where a network in training keeps its progress, and the run it belongs to.
    Every ``every`` steps the network, its optimiser, rate schedule, running average,
    random draws and crop pool are written to ``path`` (whole or not at all), so a run
    stopped part way (a power cut, a closed laptop) resumes at the last one when the same
    command runs again and ends with the weights an unbroken run ends with. ``run``: the
    options that made the run; a checkpoint of other options is refused, not mixed in.
    ``state``: what ``load`` found (None: start from step 0)."""

    path: Path
    run: dict
    every: int = CHECKPOINT_EVERY
    state: dict | None = None

    def load(self) -> Checkpoint:
        """Read ``path`` when it is there; CheckpointUnusable when it is unreadable or
        of another run, naming the file and what differs."""
        if not self.path.is_file():
            return self
        try:  # our own file: it holds numpy draws and crops, so not weights only
            state = torch.load(self.path, map_location="cpu", weights_only=False)
            run, step = state["run"], int(state["step"])
        except Exception as exc:  # a truncated or foreign file
            raise CheckpointUnusable(f"{self.path}: cannot resume from it: {_first_line(exc)} "
                                     "(delete it to train this network from the start)"
                                     ) from None
        run, mine = LATER_OPTIONS | run, LATER_OPTIONS | self.run  # absent: the old value
        if run != mine:
            differ = sorted(k for k in set(run) | set(mine) if run.get(k) != mine.get(k))
            raise CheckpointUnusable(f"{self.path}: a checkpoint of a run with other "
                                     f"{', '.join(differ)} (run the same command again to "
                                     "resume it, or delete it to start over)")
        self.state = state | {"step": step}
        return self

    def save(self, step: int, **parts) -> None:
        tmp = self.path.with_name(self.path.name + ".part")
        torch.save({"run": self.run, "step": step, **parts}, tmp)
        os.replace(tmp, self.path)

    def due(self, done: int, steps: int) -> bool:
        """After ``done`` steps of ``steps``: time to write one (never after the last)."""
        return done % self.every == 0 and done < steps

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _rng_parts(rng: np.random.Generator) -> dict:
    return {"numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}


def _resume(checkpoint: Checkpoint | None, name: str, steps: int, rng: np.random.Generator,
            log, **parts) -> tuple[int, dict]:
    """The step to start at and the checkpoint's state (loaded into ``parts``, each a
    module, optimiser or scheduler by name, and into ``rng``); step 0 without one."""
    state = checkpoint.state if checkpoint else None
    if not state:
        return 0, {}
    try:  # a file of this run's options, but written by code with other networks
        for key, part in parts.items():
            if part is not None:
                part.load_state_dict(state[key])
        rng.bit_generator.state = state["numpy_rng"]
        torch.set_rng_state(state["torch_rng"])
    except (KeyError, RuntimeError, ValueError, TypeError) as exc:
        raise CheckpointUnusable(f"{checkpoint.path}: cannot resume from it: "
                                 f"{_first_line(exc)} (delete it to train this network "
                                 "from the start)") from None
    log(f"{name} resumes at step {state['step']}/{steps} from {checkpoint.path}")
    return state["step"], state


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _read_onnx(path: Path):
    """The ONNX model in ``path``, else InitUnusable naming the file."""
    import onnx

    try:
        return onnx.load(str(path))
    except Exception as exc:  # a missing, truncated or foreign file; onnx has its own kinds
        raise InitUnusable(f"{path}: cannot read: {_first_line(exc)}") from None


def load_onnx_weights(model: nn.Module, path: Path) -> None:
    """Set ``model``'s weights from its own exported ONNX file. The export folded each
    batch norm into the convolution before it, so each conv takes the folded weights and
    its batch norm becomes the identity plus the folded bias (keep it frozen: see
    ``freeze_batch_norm``). Convolutions are matched in order, other tensors by name."""
    from onnx import numpy_helper

    graph = _read_onnx(path).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:  # weights stored at half precision (store_half) cast back
        if node.op_type == "Cast" and node.input[0] in tensors:
            tensors[node.output[0]] = tensors[node.input[0]].astype(np.float32)
    convs = []  # (node, its output channels start:stop or None for all) in order
    for node in (n for n in graph.node if n.op_type == "Conv"):
        sizes = _merged_sizes(graph, node, tensors)
        if sizes is None:
            convs.append((node, None))
            continue
        start = 0  # a merged output convolution (merge_heads): its parts, in order
        for size in sizes:
            convs.append((node, slice(start, start + size)))
            start += size
    mods = list(model.modules())
    pairs = []
    for i, m in enumerate(mods):
        if isinstance(m, nn.Conv2d):
            nxt = mods[i + 1] if i + 1 < len(mods) else None
            pairs.append((m, nxt if isinstance(nxt, nn.BatchNorm2d) else None))
    if len(pairs) != len(convs):
        raise InitUnusable(f"{path}: {len(convs)} convolutions, the network has {len(pairs)}")
    with torch.no_grad():
        for (conv, bn), (node, part) in zip(pairs, convs, strict=True):
            wa = tensors[node.input[1]]
            ba = tensors[node.input[2]] if len(node.input) > 2 else None
            if part is not None:
                wa, ba = wa[part], None if ba is None else ba[part]
            w = torch.from_numpy(wa.copy())
            b = torch.from_numpy(ba.copy()) if ba is not None else None
            if tuple(w.shape) != tuple(conv.weight.shape):
                raise InitUnusable(f"{path}: convolution {node.name} is {tuple(w.shape)}, the "
                                 f"network's is {tuple(conv.weight.shape)}")
            conv.weight.copy_(w)
            if bn is None:
                if b is not None:
                    conv.bias.copy_(b)
                continue
            bn.weight.fill_(1.0)
            bn.bias.copy_(b if b is not None else torch.zeros_like(bn.bias))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)  # sqrt(var + eps) == 1
        state = model.state_dict()
        for name, value in tensors.items():
            if name in state and tuple(state[name].shape) == value.shape:
                state[name].copy_(torch.from_numpy(value.copy()))


def store_half(path: Path) -> bool:
    """Keep an ONNX file's weights as 16-bit floats, each cast back to 32-bit by a Cast
    node ahead of the graph: ONNX Runtime and OpenCV DNN fold the casts when they load
    the file and compute in 32-bit as before, the file is half the size and outputs move
    by about 1e-3 (rounding). Tensors already 16-bit, and tiny ones, are left; False when
    nothing was left to halve (running it again changes nothing). A file with no network
    in it, or none to read, raises InitUnusable (a ValueError) naming it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = _read_onnx(path)
    graph = model.graph
    if not graph.node:  # onnx reads many a stray file as an empty model
        raise InitUnusable(f"{path}: not an ONNX network (no nodes in it)")
    full = [t for t in graph.initializer
            if t.data_type == TensorProto.FLOAT and math.prod(t.dims) >= 16]
    for t in full:
        half = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16),
                                       f"{t.name}_f16")
        graph.initializer.remove(t)
        graph.initializer.append(half)
        graph.node.insert(0, helper.make_node("Cast", [half.name], [t.name],
                                              to=TensorProto.FLOAT, name=f"{t.name}_cast"))
    if full:
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
    return bool(full)


def _merged_sizes(graph, conv, tensors: dict) -> list[int] | None:
    """The output channels of each network convolution a merged one (``merge_heads``)
    holds, in order, else None: a convolution whose one user splits its channels."""
    users = [n for n in graph.node if conv.output[0] in n.input]
    if len(users) != 1 or users[0].op_type != "Split" or len(users[0].input) < 2:
        return None
    sizes = [int(v) for v in tensors.get(users[0].input[1], np.zeros(0, np.int64))]
    return sizes or None


MERGED_HEADS = "heads_"  # the prefix of the merged output convolution's tensors


def merge_heads(path: Path) -> bool:
    """Rewrite a detector file so its two output convolutions (the heat map's, before
    its sigmoid, and the box sizes') are one, its output channels split after it: the
    same sums in the same order per channel, so both outputs come out bit for bit as
    before (tested), in one convolution pass instead of two over the stride-4 map
    (issue 9p: each of the two took 1.3 ms of a 416 px pass, the merged one 1.3 ms).
    False when there is nothing to merge (a file already merged); a file with no
    network in it raises InitUnusable naming it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = _read_onnx(path)
    graph = model.graph
    if not graph.node:
        raise InitUnusable(f"{path}: not an ONNX network (no nodes in it)")
    made_by = {out: n for n in graph.node for out in n.output}
    sig = next((n for n in graph.node if n.op_type == "Sigmoid" and n.output[0] == "hm"),
               None)
    hm = made_by.get(sig.input[0]) if sig is not None else None
    wh = made_by.get("wh")
    if (hm is None or wh is None or hm.op_type != "Conv" or wh.op_type != "Conv"
            or hm.input[0] != wh.input[0] or len(hm.input) < 3 or len(wh.input) < 3
            or list(hm.attribute) != list(wh.attribute)):
        return False
    inits = {t.name: t for t in graph.initializer}
    casts = {n.output[0]: n for n in graph.node if n.op_type == "Cast"}

    def source(name: str) -> str:  # weights kept at half precision (store_half): cast
        return casts[name].input[0] if name in casts else name

    def stored(name: str) -> tuple[np.ndarray, onnx.NodeProto | None]:
        return numpy_helper.to_array(inits[source(name)]), casts.get(name)

    if any(source(n) not in inits for n in (*hm.input[1:3], *wh.input[1:3])):
        return False  # weights computed in the graph: not a file this knows how to merge
    (hw, hcast), (ww, wcast) = stored(hm.input[1]), stored(wh.input[1])
    (hb, _), (wb, _) = stored(hm.input[2]), stored(wh.input[2])
    weight = f"{MERGED_HEADS}weight"
    tensors = [numpy_helper.from_array(np.concatenate([hb, wb]), f"{MERGED_HEADS}bias"),
               numpy_helper.from_array(np.array([len(hw), len(ww)], np.int64),
                                       f"{MERGED_HEADS}split")]
    nodes = []
    if hcast is not None and wcast is not None:
        tensors.append(numpy_helper.from_array(np.concatenate([hw, ww]), f"{weight}_f16"))
        nodes.append(helper.make_node("Cast", [f"{weight}_f16"], [weight],
                                      to=TensorProto.FLOAT, name=f"{weight}_cast"))
    else:
        tensors.append(numpy_helper.from_array(
            np.concatenate([hw, ww]).astype(np.float32), weight))
    logit, merged = hm.output[0], f"{MERGED_HEADS}out"
    nodes.append(helper.make_node("Conv", [hm.input[0], weight, f"{MERGED_HEADS}bias"],
                                  [merged], name=f"/{MERGED_HEADS}conv"))
    nodes[-1].attribute.extend(hm.attribute)
    nodes.append(helper.make_node("Split", [merged, f"{MERGED_HEADS}split"], [logit, "wh"],
                                  axis=1, name=f"/{MERGED_HEADS}split"))
    gone = {hm.name, wh.name}
    unused = {hm.input[1], hm.input[2], wh.input[1], wh.input[2]}
    kept = [n for n in graph.node if n.name not in gone
            and not (n.op_type == "Cast" and n.output[0] in unused)]
    at = kept.index(sig)
    kept[at:at] = nodes
    del graph.node[:]
    graph.node.extend(kept)
    still = {i for n in graph.node for i in n.input}
    for t in list(graph.initializer):
        if t.name not in still:
            graph.initializer.remove(t)
    graph.initializer.extend(tensors)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return True


def rewrite_files(names: list[str], rewrite, changed: str, unchanged: str,
                  usage: str, say=print) -> int:
    """The command line of a tool that rewrites network files in place
    (the lab commands ``half-weights`` and ``merge-heads``): ``rewrite(path)`` on each
    file, one line each saying whether it changed; the usage line and 2 when no file is
    named; a file that cannot be read or written ends it with one line naming it and 2."""
    if not names:
        say(usage)
        return 2
    for name in names:
        try:
            done = rewrite(Path(name))
        except (InitUnusable, OSError) as exc:  # unreadable or unwritable: names the file
            say(exc)
            return 2
        say(f"{name}: {changed if done else unchanged}")
    return 0


def freeze_batch_norm(model: nn.Module) -> None:
    """Batch norms keep their running statistics (call after ``model.train()``)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def _start_from(model: nn.Module, init: Path | None, name: str, log) -> bool:
    """Load ``init``/``name``.pt, else ``init``/``name``.onnx (then True: batch norms
    frozen); nothing when ``init`` is None."""
    if init is None:
        return False
    pt, onnx_file = init / f"{name}.pt", init / f"{name}.onnx"
    if pt.is_file():
        try:
            model.load_state_dict(torch.load(pt, map_location="cpu"))
        except Exception as exc:  # a truncated file, another network's weights
            raise InitUnusable(f"{pt}: cannot load: {_first_line(exc)}") from None
        log(f"{name} starts from {pt}")
        return False
    load_onnx_weights(model, onnx_file)
    log(f"{name} starts from {onnx_file} (batch norm folded, kept frozen)")
    return True


def one_cycle(opt, steps: int, scratch_lr: float, init_lr: float | None):
    """The rate schedule: one cycle peaking at ``scratch_lr`` 15% in from scratch, or for a
    fine-tune (``init_lr`` given) peaking at ``init_lr`` 5% in."""
    return torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=scratch_lr if init_lr is None else init_lr, total_steps=steps,
        pct_start=0.15 if init_lr is None else 0.05)


def train_detector(sources: list, weights: list[float], steps: int, batch: int, size: int,
                   seed: int, log, init: Path | None = None,
                   scales: tuple[float, float] = DET_SCALES, stretch: float = 1.0,
                   hard_share: float = 0.0,
                   checkpoint: Checkpoint | None = None, colour: bool = False,
                   dye_share: float = 0.0, init_lr: float = INIT_LR) -> Detector:
    """From scratch, or fine-tuned from the model in folder ``init`` at a lower rate
    (its one-cycle peak ``init_lr``).
    ``stretch``, ``colour``: see ``_det_sample``; ``dye_share``: see ``_maybe_dye``.
    ``hard_share``: that share of the draws from a source with ``missed`` counts
    (``mine_missed``) picks a photo in proportion to the dice missed on it, not uniformly.
    ``checkpoint``: progress is kept there and resumed from it (``Checkpoint``)."""
    rng = np.random.default_rng(seed)
    hard = {}
    for k, src in enumerate(sources):
        missed = np.array(getattr(src, "missed", None) or [], np.float64)
        if hard_share > 0 and missed.sum() > 0:
            hard[k] = missed / missed.sum()
    model = Detector()
    frozen = _start_from(model, init, "detector", log)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = one_cycle(opt, steps, 3e-3, init_lr if init is not None else None)
    p = np.array(weights) / sum(weights)
    model.train()
    if frozen:
        freeze_batch_norm(model)
    start, _ = _resume(checkpoint, "detector", steps, rng, log, model=model, opt=opt,
                       sched=sched)
    t0 = time.time()
    for step in range(start, steps):
        imgs, hms, whs, masks = [], [], [], []
        for _ in range(batch):
            k = int(rng.choice(len(sources), p=p))
            src = sources[k]
            if k in hard and rng.random() < hard_share:
                i = int(rng.choice(len(src), p=hard[k]))
            else:
                i = int(rng.integers(len(src)))
            img, boxes, _ = src.get(i)
            img = _maybe_dye(src, i, img, boxes, rng, dye_share)
            c, hm, wh, mask = _det_sample(img, boxes, rng, size, scales, stretch, colour)
            imgs.append(c)
            hms.append(hm)
            whs.append(wh)
            masks.append(mask)
        x = _to_tensor(imgs)
        hm_t = torch.from_numpy(np.stack(hms))[:, None]
        wh_t = torch.from_numpy(np.stack(whs))
        m_t = torch.from_numpy(np.stack(masks))[:, None]
        hm_p, wh_p = model(x)
        loss_hm = _focal(hm_p, hm_t)
        loss_wh = (F.l1_loss(wh_p * m_t, wh_t * m_t, reduction="sum") / m_t.sum().clamp(min=1))
        loss = loss_hm + 0.5 * loss_wh
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 50 == 0 or step == steps - 1:
            log(f"det step {step}/{steps} loss {loss.item():.3f} (hm {loss_hm.item():.3f} "
                f"wh {loss_wh.item():.3f}) {time.time() - t0:.0f}s")
        if checkpoint and checkpoint.due(step + 1, steps):
            checkpoint.save(step + 1, model=model.state_dict(), opt=opt.state_dict(),
                            sched=sched.state_dict(), **_rng_parts(rng))
    model.eval()
    return model


def train_classifier(sources: list, weights: list[float], steps: int, batch: int, seed: int,
                     log, init: Path | None = None, width: float = 1.0,
                     upright: bool = False, small_weight: int = 1,
                     part_share: float = 0.0, hard_weight: int = 1,
                     camera_aug: bool = False, ema: float = 0.0,
                     box_jitter: tuple[float, float, float] = BOX_JITTER,
                     area_crops: bool = False, crop_size: int = CROP,
                     crop_span: float = CROP_SPAN, grid: int = 1,
                     soft_share: float = 0.0, low_res_share: float = LOW_RES_SHARE,
                     checkpoint: Checkpoint | None = None,
                     dye_share: float = 0.0, init_lr: float = INIT_LR,
                     unreadable_share: float = 0.0) -> Classifier:
    """From scratch, or fine-tuned from the model in folder ``init`` at a lower rate
    (its one-cycle peak ``init_lr``).
    ``camera_aug``: crops also get ``_camera_augment``'s draws. ``area_crops``: crops are
    shrunk with an area filter (``learned_model.crop``), as the reader must then cut them
    for this network; the random draws are the same either way. ``ema`` (a decay above 0):
    the network returned is the running average of the weights and batch norm statistics
    after each step (``torch.optim.swa_utils``), not the last ones; the steps themselves
    and their random draws are the same either way. ``crop_size`` / ``crop_span``: the
    crops' side in px and in die sides (issue 8u; the defaults: every earlier network).
    A source's ``false_peaks`` (when it has them) and ``part_share`` of its dice give
    "not a die" crops, and its ``die_boxes`` crops of dice as a detector boxed them
    (``_cls_samples``); its ``hard_dice`` give ``hard_weight`` times as many crops.
    ``grid``: the network's last feature map is averaged over grid x grid parts
    (``Classifier``; 1: whole, as every network before issue 8z). ``soft_share``: a
    source's ``soft_dice`` (when it has them) pull its dice's labels that far toward a
    model's own reading (``_cls_samples``; 0: plain classes, as before issue 9b).
    ``low_res_share``: the share of crops seen at a lower resolution (``_cls_augment``).
    ``dye_share``: that share of the real photos drawn have their dice dyed other colours
    first (``_maybe_dye``; issue 9s).
    ``unreadable_share``: that share of the die crops are made unreadable and learnt as
    a die whose face is unknown (``_make_unreadable``; issue 9x; 0: the draws of before).
    ``checkpoint``: progress is kept there and resumed from it (``Checkpoint``)."""
    if not grid_tiles(crop_size, grid):
        raise ValueError(f"grid {grid} does not divide the {feature_side(crop_size)} cells "
                         f"across a {crop_size} px crop's last feature map")
    rng = np.random.default_rng(seed + 1)
    model = Classifier(width, grid)
    frozen = _start_from(model, init, "classifier_upright" if upright else "classifier", log)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = one_cycle(opt, steps, 4e-3, init_lr if init is not None else None)
    p = np.array(weights) / sum(weights)
    pool: list[tuple[np.ndarray, int]] = []
    model.train()
    if frozen:
        freeze_batch_norm(model)
    average = None
    if ema > 0:
        from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

        average = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(ema),
                                use_buffers=True)
    start, state = _resume(checkpoint, "classifier_upright" if upright else "classifier",
                           steps, rng, log, model=model, opt=opt, sched=sched,
                           average=average)
    pool = state.get("pool", pool)
    t0 = time.time()
    for step in range(start, steps):
        while len(pool) < batch * 4:
            src = sources[int(rng.choice(len(sources), p=p))]
            i = int(rng.integers(len(src)))
            img, boxes, faces = src.get(i)
            img = _maybe_dye(src, i, img, boxes, rng, dye_share)
            peaks = getattr(src, "false_peaks", None)
            on_dice = getattr(src, "die_boxes", None)
            hard = getattr(src, "hard_dice", None)
            soft = getattr(src, "soft_dice", None)
            cs, ls = _cls_samples(img, boxes, faces, rng, per_die=3,
                                  backgrounds=max(1, len(boxes) // 3), upright=upright,
                                  small_weight=small_weight,
                                  false_peaks=peaks[i] if peaks else None,
                                  part_share=part_share,
                                  die_boxes=on_dice[i] if on_dice else None,
                                  hard=hard[i] if hard else None, hard_weight=hard_weight,
                                  area=area_crops, size=crop_size, span=crop_span,
                                  box_jitter=box_jitter,
                                  soft=soft[i] if soft else None, soft_share=soft_share)
            pool.extend(zip(cs, ls, strict=True))
        idx = rng.permutation(len(pool))
        take = [pool[i] for i in idx[:batch]]
        pool = [pool[i] for i in idx[batch:]]
        take = _make_unreadable(take, rng, unreadable_share, crop_span)  # at 0: as drawn
        x = _to_tensor([_cls_augment(c, rng, camera_aug, low_res_share) for c, _ in take])
        y = _targets([lab for _, lab in take])
        logits, _ = model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.05)
        if y.ndim == 2:
            y = y.argmax(1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if average is not None:
            average.update_parameters(model)
        if step % 100 == 0 or step == steps - 1:
            acc = (logits.argmax(1) == y).float().mean().item()
            log(f"cls step {step}/{steps} loss {loss.item():.3f} acc {acc:.3f} "
                f"{time.time() - t0:.0f}s")
        if checkpoint and checkpoint.due(step + 1, steps):
            checkpoint.save(step + 1, model=model.state_dict(), opt=opt.state_dict(),
                            sched=sched.state_dict(), pool=pool,
                            average=average.state_dict() if average is not None else None,
                            **_rng_parts(rng))
    if average is not None:
        model = average.module
    model.eval()
    return model


def _export_det(det: Detector, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(det, torch.zeros(1, 3, DET_SIZE, DET_SIZE), str(out / "detector.onnx"),
                      input_names=["image"], output_names=["hm", "wh"],
                      dynamic_axes={"image": {2: "h", 3: "w"}, "hm": {2: "oh", 3: "ow"},
                                    "wh": {2: "oh", 3: "ow"}}, **_ONNX)
    store_half(out / "detector.onnx")
    merge_heads(out / "detector.onnx")


def _export_cls(cls: Classifier, out: Path, name: str = "classifier",
                area_crops: bool = False, crop_size: int = CROP,
                crop_span: float = CROP_SPAN) -> None:
    """The classifier as ONNX (weights at half precision), its input ``crop_size`` square.
    ``area_crops``: the file says so in its metadata (``crop_filter``: ``area``), where
    tuning reads it (``tune_reader.area_networks``); a ``crop_span`` other than
    ``CROP_SPAN`` is written there too (``crop_span``), where the reader reads it."""
    out.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(cls, torch.zeros(1, 3, crop_size, crop_size), str(out / f"{name}.onnx"),
                      input_names=["crops"], output_names=["logits", "embedding"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"},
                                    "embedding": {0: "n"}}, **_ONNX)
    store_half(out / f"{name}.onnx")
    props = {CROP_FILTER_KEY: "area"} if area_crops else {}
    if crop_span != CROP_SPAN:
        props[CROP_SPAN_KEY] = repr(float(crop_span))
    if props:
        import onnx

        model = onnx.load(str(out / f"{name}.onnx"))
        onnx.helper.set_model_props(model, props)
        onnx.save(model, str(out / f"{name}.onnx"))



DET_BATCH, DET_CROP, CLS_BATCH = 16, 256, 96
_ONNX = {"opset_version": 17, "do_constant_folding": True, "dynamo": False}
PARTS = TRAIN_PARTS


def train(out: str | Path, *, seed: int = 0, root: str | Path | None = None,
          det_steps: int = 7000, cls_steps: int = 16000, rendered: int = 3000,
          threads: int = 1, parts: tuple[str, ...] = PARTS, log=print,
          init: str | Path | None = None, cls_width: float = 1.0,
          upright_steps: int = 14000, upright_render: bool = False,
          det_scales: tuple[float, float] = DET_SCALES, small_weight: int = 1,
          val_tenths: int | None = None, webcam_val: bool | None = None,
          tray_small_val: bool | None = None, render_cube: bool = False,
          false_peaks: str | Path | None = None, part_negatives: float = 0.0,
          die_boxes: str | Path | None = None,
          tune_sizes: tuple[int, ...] = (416, 512, 640),
          tune_views: tuple[int, ...] = (1, 4), det_stretch: float = 1.0,
          hard_photos: str | Path | None = None, hard_share: float = 0.3,
          hard_dice: str | Path | None = None, hard_weight: int = 3,
          camera_aug: bool = False, ema: float = 0.0, area_crops: bool = False,
          cls_crop: int = CROP, cls_span: float = CROP_SPAN, cls_grid: int = 1,
          wide_box_jitter: bool = False, soft_dice: str | Path | None = None,
          soft_share: float = 0.5, low_res_share: float = LOW_RES_SHARE,
          det_colour: bool = False, dye_share: float = 0.0,
          rated_negatives: str | Path | None = None,
          cache_dir: str | Path | None = None, init_lr: float = INIT_LR,
          unreadable_share: float = 0.0, sure_phantoms: str | Path | None = None) -> Path:
    """Train the parts asked for, in order. Each part is seeded on its own, so the parts
    may also run as separate processes at once (``--part det`` / ``--part cls`` /
    ``--part cls-upright``, then ``--part tune``) and give the same model as one run.
    ``cls-upright`` trains the second, upright classifier (``classifier_upright.onnx``);
    tuning mixes it in when it is there. ``val_tenths`` (1 or 2) is how many tenths of the
    source photos the validation split takes (``dice_photos.SPLITS``; None: the folder's
    own, else 1); ``webcam_val``: the webcam frames are split too (``webcam-train`` /
    ``webcam-val``; None: the folder's own, else not); ``tray_small_val``: half the train
    part's small-dice tray sources move to validation (``trays-val-small``, issue 9c;
    None: the folder's own, else not); another split than the folder's is refused
    (``SplitMismatch``).
    ``render_cube``: the rendered dice are cubes seen from 20-90 degrees
    (``render_dice.cube_quads``; the upright classifier's camera below the scene, over
    ``upright_render``). ``false_peaks``: a model folder whose detector's false peaks on
    the fully labelled train photos the classifiers learn as "not a die"
    (``mine_false_peaks``); ``part_negatives``: the share of dice that also give a crop
    of a part of the die as "not a die" (``_cls_samples``); ``die_boxes``: a model folder
    whose detector's boxes on the train dice give half of the classifiers' crops of them
    (``mine_die_boxes``). ``tune_sizes`` / ``tune_views``: the detector input sides and
    test-time views tuning may choose from (fewer keep a model within a speed budget).
    ``det_stretch``: the detector's photos are also squeezed to other aspect ratios
    (``_det_sample``); ``hard_photos``: a model folder whose detector's misses on the train
    photos (``mine_missed``) make ``hard_share`` of the detector's real draws;
    ``hard_dice``: a model folder whose reader's wrong or unsure readings of the train dice
    (``mine_hard_dice``) give those dice ``hard_weight`` times as many classifier crops.
    ``camera_aug``: the classifiers' crops are also squeezed, dotted and JPEG-encoded
    (``_camera_augment``). ``ema``: the classifiers exported are the running average of
    their weights with this decay (``train_classifier``; 0: the last weights).
    ``area_crops``: the classifiers learn from area-shrunk crops and their files say so
    (``learned_model.crop``, ``tune_reader.area_networks``); tuning has the reader cut
    theirs so.
    ``cls_crop`` / ``cls_span``: the classifiers' input side (px) and crop side in die
    sides (issue 8u); the reader cuts each network's crops as its file says.
    ``soft_dice``: a model folder whose reader's probabilities of the train dice
    (``mine_soft_dice``) the classifiers' labels of those dice are pulled ``soft_share``
    toward (issue 9b). ``low_res_share``: the share of the classifiers' crops shrunk and
    scaled back, as small dice look (``_cls_augment``; issue 9g). ``det_colour``: the
    detector's crops are also hue-turned and inverted (``_det_sample``; issue 9r).
    ``dye_share``: every network's real photos have their dice dyed other die and pip
    colours that share of the times they are drawn (``_maybe_dye``; issue 9s).
    ``rated_negatives``: a box audit's round folder whose boxes on the train photos both
    raters called not a die the classifiers also learn as "not a die"
    (``add_rated_negatives``; issue 9v). ``cache_dir``: a folder where what the
    teachers mined, and the rendered scenes, are kept and read back when the same inputs
    come again (``mine_cache``; issue 9w); None: mined and drawn every run. The networks
    come out the same.
    ``init_lr``: the peak learning rate of a fine-tune from ``init`` (issue 9w).
    ``unreadable_share``: that share of the classifiers' die crops are blurred or shrunk
    past reading and learnt as a die whose face is unknown (``_make_unreadable``; issue 9x).
    ``sure_phantoms``: a model folder whose reader's faint boxes read surely where no die
    is labelled, on table-train, the classifiers learn as "not a die"
    (``mine_sure_phantoms``; issue 9y).
    A network stopped part way resumes at its last checkpoint (``Checkpoint``, in
    ``out``/<network>.resume.pt) when the same options run again; the file goes when
    the network is exported."""
    options = {k: v for k, v in locals().items()
               if k not in ("out", "root", "threads", "parts", "log", "tune_sizes",
                            "tune_views", "cache_dir")}
    out = Path(out)
    split = dice_photos.resolve_split(out, val_tenths, webcam_val, tray_small_val)
    train_sets, val_sets = dice_photos.SPLITS[split]
    run = json.loads(json.dumps(options | {"split": split}, default=str))
    checkpoints = {part: Checkpoint(out / f"{name}.resume.pt", run | {"network": name},
                                 CHECKPOINT_EVERY).load()
                   for part, name in PART_NETWORKS.items() if part in parts}
    if {"det", "cls", "cls-upright"} & set(parts):
        dice_photos.record_split(out, split)
    log(f"split: {dice_photos.split_options(split)} (train {', '.join(train_sets)}; "
        f"validation {', '.join(val_sets)})")
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    t0 = time.time()
    if {"det", "cls", "cls-upright"} & set(parts):
        real = RealImages(train_sets, root)
        log(f"real train images {len(real)} ({time.time() - t0:.0f}s)")
        classifiers = bool({"cls", "cls-upright"} & set(parts))
        for wanted, kind, miner, teacher in (
                (classifiers, "false_peaks", mine_false_peaks, false_peaks),
                (classifiers, "die_boxes", mine_die_boxes, die_boxes),
                (classifiers, "hard_dice", mine_hard_dice, hard_dice),
                (classifiers, "soft_dice", mine_soft_dice, soft_dice),
                ("det" in parts, "missed", mine_missed, hard_photos)):
            if wanted and teacher:
                mine_cache.mined(cache_dir, kind, miner_settings(miner), teacher, real,
                                 functools.partial(miner, real, teacher, log=log), log=log)
        if sure_phantoms and classifiers:  # after mining: false peaks start over there
            mine_sure_phantoms(real, sure_phantoms, log=log)
        if rated_negatives and classifiers:  # after mining: it adds photos
            add_rated_negatives(real, rated_negatives, log=log)
    if {"det", "cls"} & set(parts) or ("cls-upright" in parts
                                        and not (upright_render or render_cube)):
        ren = Rendered(rendered, seed, cube=render_cube, cache=cache_dir, log=log)
        log(f"rendered {'cube ' if render_cube else ''}scenes {len(ren)} "
            f"({time.time() - t0:.0f}s)")
    if "det" in parts:
        torch.manual_seed(seed)
        det = train_detector([real, ren], [0.6, 0.4], det_steps, DET_BATCH, DET_CROP, seed, log,
                             init=Path(init) if init else None, scales=det_scales,
                             stretch=det_stretch,
                             hard_share=hard_share if hard_photos else 0.0,
                             checkpoint=checkpoints["det"], colour=det_colour,
                             dye_share=dye_share, init_lr=init_lr)
        _export_det(det, out)
        torch.save(det.state_dict(), out / "detector.pt")
        checkpoints["det"].remove()
        log(f"detector exported to {out} ({time.time() - t0:.0f}s)")
    for part, name, upright in (("cls", "classifier", False),
                                ("cls-upright", "classifier_upright", True)):
        if part not in parts:
            continue
        torch.manual_seed(seed + 1)
        steps = upright_steps if upright else cls_steps
        if upright and (render_cube or upright_render):  # sides below the top face
            ren_up = Rendered(rendered, seed, upright=True, cube=render_cube, cache=cache_dir,
                              log=log)
            log(f"upright {'cube' if render_cube else 'rendered'} scenes {len(ren_up)} "
                f"({time.time() - t0:.0f}s)")
            sources = [real, ren_up]
        else:
            sources = [real, ren]
        cls = train_classifier(sources, [0.65, 0.35], steps, CLS_BATCH, seed, log,
                               init=Path(init) if init else None,
                               width=cls_width, upright=upright, small_weight=small_weight,
                               part_share=part_negatives,
                               hard_weight=hard_weight if hard_dice else 1,
                               camera_aug=camera_aug, ema=ema, area_crops=area_crops,
                               box_jitter=WIDE_BOX_JITTER if wide_box_jitter else BOX_JITTER,
                               crop_size=cls_crop, crop_span=cls_span, grid=cls_grid,
                               soft_share=soft_share if soft_dice else 0.0,
                               low_res_share=low_res_share,
                               checkpoint=checkpoints[part], dye_share=dye_share,
                               init_lr=init_lr, unreadable_share=unreadable_share)
        _export_cls(cls, out, name, area_crops, cls_crop, cls_span)
        torch.save(cls.state_dict(), out / f"{name}.pt")
        checkpoints[part].remove()
        log(f"{name} exported to {out} ({time.time() - t0:.0f}s)")
    if "tune" not in parts:
        return out
    from reader_lab.tune_reader import tune_thresholds

    meta = tune_thresholds(out, root=root, log=log, val_sets=val_sets,
                           sizes=tuple(tune_sizes), views=tuple(tune_views))
    meta.update({"crop": CROP, "cls_crop": cls_crop, "cls_span": cls_span, "seed": seed,
                 "det_steps": det_steps, "det_batch": DET_BATCH,
                 "det_crop": DET_CROP, "det_scales": list(det_scales),
                 "cls_steps": cls_steps, "cls_batch": CLS_BATCH,
                 "cls_width": cls_width, "cls_grid": cls_grid,
                 "wide_box_jitter": wide_box_jitter,
                 "upright_steps": upright_steps,
                 "upright_render": upright_render, "render_cube": render_cube,
                 "small_weight": small_weight, "low_res_share": low_res_share,
                 "false_peaks": str(false_peaks) if false_peaks else None,
                 "part_negatives": part_negatives,
                 "die_boxes": str(die_boxes) if die_boxes else None,
                 "det_stretch": det_stretch, "det_colour": det_colour,
                 "dye_share": dye_share, "init_lr": init_lr if init else None,
                 "unreadable_share": unreadable_share,
                 "rated_negatives": str(rated_negatives) if rated_negatives else None,
                 "sure_phantoms": str(sure_phantoms) if sure_phantoms else None,
                 "hard_photos": str(hard_photos) if hard_photos else None,
                 "hard_share": hard_share if hard_photos else 0.0,
                 "hard_dice": str(hard_dice) if hard_dice else None,
                 "hard_weight": hard_weight if hard_dice else 1,
                 "camera_aug": camera_aug, "ema": ema, "area_crops_trained": area_crops,
                 "tune_sizes": list(tune_sizes), "tune_views": list(tune_views),
                 "rendered": rendered, "train_sets": list(train_sets),
                 "val_sets": list(val_sets)})
    if init:
        meta["init"] = ("fine-tuned from an earlier run's model (its .pt files, or its ONNX "
                        "files with batch norm frozen)")
    (out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")
    from companion.vision.learned import LearnedReader
    from reader_lab.tune_fewshot import tune_fewshot

    meta["fewshot"] = tune_fewshot(LearnedReader(out), root=root, log=log,
                                   val_sets=val_sets)
    (out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")
    log(f"done in {time.time() - t0:.0f}s: {out / 'reader.json'}")
    return out
