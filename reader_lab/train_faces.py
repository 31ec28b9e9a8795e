"""Train a face classifier on a photo pack: on the accelerator (CUDA, bf16, every crop cut
and changed on the GPU), or slowly on the CPU to try it.

    python -m reader_lab photo-pack .lab/pack
    python -m reader_lab train-faces --pack .lab/pack --out .lab/faces --minutes 8
    python -m reader_lab train-faces --pack .lab/pack --baseline companion/data/models

The network is the companion's upright classifier (``train_reader.Classifier``: a
``--crop`` px crop spanning ``CROP_SPAN`` die sides -> 7 logits, faces 1-6 and "not a
die", and a 64-number embedding), ``--width`` times as wide. Crops keep the photo's up
(turned a little, mirrored half the time), as the upright classifiers of record do.

Each call trains for at most ``--minutes`` of wall time, then writes into OUT:
``resume.pt`` (the weights' moving average at half precision and the step reached),
``NAME.onnx`` (that average in the companion's classifier format, ``--name``,
``classifier_upright_dev`` unless named), ``val.json`` (the call's figures, appended) and
``train.log``. ``--resume`` continues one cosine schedule over ``--steps`` across calls, as
``train-detector`` does.

What it learns from, per batch: the dice of the training sets (each set's weight shared by
its dice; a crop centred on the die by 6% of its side, 0.8-1.3 times its span), and
``--negatives`` of the batch "not a die": parts of dice (a third to two thirds of a die,
off its centre), table with no die (only from sets that box every die, so no unlabelled die
is taught as table) and, with ``--rendered N``, the things of N clutter scenes
(``reader_lab.clutter``: coins, buttons, tokens, cards, knobs; the scenes' dice are never
cut as table). Colours, blur, noise and a lower resolution for a tenth of the crops are
drawn as ``train-detector`` draws them.

With ``--metric W`` the embedding is taught too, for few-shot symbol dice: a supervised
contrastive loss (weight W, temperature ``TAU``) over the batch's dice, the same face
drawn from any set being the same class, and with ``--glyphs N`` over views of dice with
made-up symbols (``reader_lab.glyph_dice``: N glyphs, ``--glyph-views`` views each, drawn
at the start on every core; a batch of B dice adds B / ``GLYPH_SHARE`` of them, four
views each), each glyph a class of its own. A view changes the die's colours, so only the
symbol tells one glyph from another. Glyph views are dice, never taught "not a die", and
take no part in the face loss.

With ``--boxes PACK/boxes.json`` (``python -m reader_lab pack-boxes``: a detector's boxes
on the pack, as they fall) a share ``--box-share`` of each batch's dice is cut where the
detector boxed them, exactly as the companion cuts a box (no jitter of its own: the
detector's is the point), and its boxes on no die of the sets that box every die
("phantoms") join the "not a die" kinds. Validation then reads each set in the detector's
boxes too ("<set> boxes": its boxes on dice, and its phantoms as "not a die").

Validation cuts every labelled die of the pack's validation sets with the companion's own
``crop`` (OpenCV, as the reader cuts them at the table) and, on the sets that box every die,
one crop of table per die: the share of dice read right, read "not a die" and read as
another face, and of table read "not a die"; and few-shot, nearest prototype on the unit
embedding (``fewshot_figures``): on each validation set from N = 1, 3, 10 dice per face of
the other set, and on 5 dice of 6 glyphs never trained on (16 views each, ``VAL_GLYPH_SEED``)
from N views per face. ``--baseline DIR`` prints the same figures for
a model folder's reader (``LearnedReader.classify``: its networks and views mixed as at the
table) and trains nothing: the figure a new network must reach.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from companion.vision.learned_model import crop
from companion.vision.learned_spec import CROP_SPAN, NOT_A_DIE, PAD_VALUE
from reader_lab import dice_photos
from reader_lab.every_core import map_on_every_core
from reader_lab.photo_pack import PackError, load_pack
from reader_lab.train_detector import (
    TRAIN_WEIGHTS,
    VAL_SETS,
    TrainError,
    _half,
    _photometric,
    append_history,
    device_name,
    logger,
    optimise,
    pick_device,
    training_parts,
)
from reader_lab.train_reader import UPRIGHT_TURN, Classifier, _export_cls
from reader_lab.train_spec import LOW_RES_SHARE

RESUME_VERSION = 1
TAU = 0.1  # the contrastive loss's temperature
GLYPH_SHARE = 16  # a batch of B crops draws B / 16 glyphs (--glyphs), four views each
GLYPH_VIEWS_DRAWN = 4
PIECE_COPIES = 20  # times each rated board piece is listed among the things cut
SHOTS = (1, 3, 10)
FEWSHOT_DRAWS = 5  # draws of the shots, averaged
VAL_GLYPH_SEED = 424_242  # glyphs no training bank draws (banks use seeds 0-1000)
VAL_GLYPH_DICE, VAL_GLYPH_VIEWS = 5, 16  # 6 glyphs a die
CENTRE_SD = 0.06  # of the die's side: how far a die's crop centre wanders
SPAN_JITTER = (0.8, 1.3)  # a die's crop: that many times its span
PART_SIZE = (0.33, 0.67)  # a part of a die: its crop that share of the die's span
TABLE_SPAN = (0.7, 1.5)  # a crop of table: a die of the photo's, that many times its span
KINDS = ("part", "table", "thing", "phantom")
DEFAULT_WIDTH = 1.5  # at 64 px: 62M multiply-adds a crop, under the three networks of record
DEFAULT_CROP = 64


class Crops:
    """The pack's photos on the device (letterboxed into one uint8 tensor) and what a
    crop is cut around: every labelled die (photo, box, face), the photos whose every die
    is boxed (where table may be cut), and the things of the clutter scenes."""

    def __init__(self, imgs: list[np.ndarray], boxes: list[np.ndarray],
                 faces: list[np.ndarray | None], whole: list[bool],
                 things: list[np.ndarray], device: torch.device,
                 weights: list[float], det_dice: list[np.ndarray] | None = None,
                 phantoms: list[np.ndarray] | None = None) -> None:
        side = max(max(i.shape[:2]) for i in imgs)
        n = len(imgs)
        canvas = np.full((n, side, side, 3), PAD_VALUE, np.uint8)
        wh = np.zeros((n, 2), np.float32)
        most = max(1, max(len(b) for b in boxes))
        centres = np.full((n, most, 2), -1e6, np.float32)
        die_rows, die_w, thing_rows = [], [], []
        box_rows, box_w, phantom_rows = [], [], []
        own: list[list[float]] = [[] for _ in range(n)]  # each photo's dice's sizes
        for i, (img, b, f) in enumerate(zip(imgs, boxes, faces, strict=True)):
            h, w = img.shape[:2]
            canvas[i, :h, :w] = img
            wh[i] = w, h
            if len(b):
                centres[i, :len(b)] = np.stack([(b[:, 0] + b[:, 2]) / 2,
                                                (b[:, 1] + b[:, 3]) / 2], 1)
            for k, box in enumerate(b):
                s = float(max(box[2] - box[0], box[3] - box[1]))
                if s < 4:
                    continue
                own[i].append(s)
                if f is not None:
                    die_rows.append([i, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, s,
                                     int(f[k]) - 1])
                    die_w.append(weights[i])
            for box in things[i]:
                thing_rows.append([i, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2,
                                   float(max(box[2] - box[0], box[3] - box[1]))])
            for box in det_dice[i] if det_dice is not None and f is not None else ():
                s = float(max(box[2] - box[0], box[3] - box[1]))
                if s >= 4:
                    box_rows.append([i, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, s,
                                     int(f[int(box[5])]) - 1])
                    box_w.append(weights[i])
            for box in phantoms[i] if phantoms is not None else ():
                phantom_rows.append([i, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2,
                                     float(max(box[2] - box[0], box[3] - box[1]))])
        if not die_rows:
            raise TrainError("no labelled die to train on")
        self.device = device
        self.images = torch.from_numpy(canvas).to(device).permute(0, 3, 1, 2).contiguous()
        self.wh = torch.from_numpy(wh).to(device)
        self.centres = torch.from_numpy(centres).to(device)
        dice = torch.tensor(die_rows, dtype=torch.float32, device=device)
        self.die_photo, self.die_xys, self.die_face = (dice[:, 0].long(), dice[:, 1:4],
                                                       dice[:, 4].long())
        share = torch.tensor(die_w, dtype=torch.float64)
        self.die_share = (share / share.sum()).to(device)
        self.table_photos = torch.tensor([i for i in range(n) if whole[i]], dtype=torch.long,
                                         device=device)
        sizes = [v for photo in own for v in photo]
        self.typical = float(np.median(sizes)) if sizes else side / 10
        things_t = torch.tensor(thing_rows, dtype=torch.float32, device=device).reshape(-1, 4)
        self.thing_photo, self.thing_xys = things_t[:, 0].long(), things_t[:, 1:4]
        # the detector's boxes on dice (photo, centre, side, face - 1) and on no die
        boxed = torch.tensor(box_rows, dtype=torch.float32, device=device).reshape(-1, 5)
        self.box_photo, self.box_xys, self.box_face = (boxed[:, 0].long(), boxed[:, 1:4],
                                                       boxed[:, 4].long())
        share = torch.tensor(box_w, dtype=torch.float64).reshape(-1)
        self.box_weight = (share / share.sum() if len(share) and float(share.sum()) > 0
                          else torch.ones_like(share) / max(1, len(share))).to(device)
        ph = torch.tensor(phantom_rows, dtype=torch.float32, device=device).reshape(-1, 4)
        self.phantom_photo, self.phantom_xys = ph[:, 0].long(), ph[:, 1:4]
        # each photo's dice's sizes (its table crops take one of them)
        padded = np.full((n, most), self.typical, np.float32)
        count = np.ones(n, np.int64)
        for i, v in enumerate(own):
            if v:
                padded[i, :len(v)], count[i] = v, len(v)
        self.photo_sizes = torch.from_numpy(padded).to(device)
        self.photo_count = torch.from_numpy(count).to(device)

    def __len__(self) -> int:
        return int(self.die_photo.shape[0])


def cut(images: torch.Tensor, wh: torch.Tensor, photo: torch.Tensor, cx: torch.Tensor,
        cy: torch.Tensor, span: torch.Tensor, angle: torch.Tensor, mirror: torch.Tensor,
        size: int) -> torch.Tensor:
    """Crops (n x 3 x size x size, 0-1) of ``images`` (uint8, letterboxed squares): each
    centred on (cx, cy) in its photo's pixels, ``span`` pixels across, turned by ``angle``
    degrees as ``learned_model.crop`` turns it, mirrored left to right where ``mirror``;
    outside the photo its edge is repeated (the companion's border)."""
    n, dev, side = photo.shape[0], images.device, images.shape[-1]
    # as cv2.warpAffine samples: output pixel j reads the source pixel (index, not edge)
    # coordinate cx + (j - size / 2) * span / size, turned about the centre
    u = (torch.arange(size, device=dev, dtype=torch.float32) - size / 2) / size
    ux = u[None, None, :].expand(n, size, size) * span[:, None, None]
    uy = u[None, :, None].expand(n, size, size) * span[:, None, None]
    a = torch.deg2rad(angle)[:, None, None]
    # getRotationMatrix2D turns the content by +angle (counter-clockwise on screen): the
    # output offset (ux, uy) reads the source at that offset turned back; + 0.5 makes a
    # pixel index a position (pixel i spans i..i+1)
    x = cx[:, None, None] + 0.5 + ux * torch.cos(a) - uy * torch.sin(a)
    y = cy[:, None, None] + 0.5 + ux * torch.sin(a) + uy * torch.cos(a)
    w, h = wh[photo, 0][:, None, None], wh[photo, 1][:, None, None]
    x = torch.minimum(torch.clamp(x, min=0.5), w - 0.5)
    y = torch.minimum(torch.clamp(y, min=0.5), h - 0.5)
    grid = torch.stack([x * 2 / side - 1, y * 2 / side - 1], -1)
    src = images[photo].float() / 255
    out = F.grid_sample(src, grid, mode="bilinear", padding_mode="border",
                        align_corners=False)
    return torch.where(mirror[:, None, None, None], out.flip(-1), out)


def _uniform(gen: torch.Generator, n: int, lo: float, hi: float, dev) -> torch.Tensor:
    return torch.rand(n, generator=gen, device=dev) * (hi - lo) + lo


def draw(data: Crops, batch: int, negatives: float, size: int, gen: torch.Generator,
         photometric: bool = True, box_share: float = 0.0
         ) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch: crops (batch x 3 x size x size) and their classes (face - 1, or
    ``NOT_A_DIE``); ``box_share`` of the dice cut in the detector's boxes when ``data``
    has them."""
    dev = data.device
    kinds = [k for k in KINDS if (k != "thing" or len(data.thing_photo))
             and (k != "phantom" or len(data.phantom_photo))]
    if not len(data.table_photos):
        kinds.remove("table")
    n_neg = round(batch * negatives) if kinds else 0
    n_die = batch - n_neg
    per = [n_neg // len(kinds) + (k < n_neg % len(kinds)) for k in range(len(kinds))]
    photos, xs, ys, spans, labels, free = [], [], [], [], [], []

    def dice(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        k = torch.multinomial(data.die_share, n, replacement=True, generator=gen)
        return k, data.die_xys[k]

    n_box = round(n_die * box_share) if len(data.box_photo) else 0
    n_die -= n_box
    if n_die:
        k, xys = dice(n_die)
        photos.append(data.die_photo[k])
        jitter = CENTRE_SD * xys[:, 2]
        xs.append(xys[:, 0] + torch.randn(n_die, generator=gen, device=dev) * jitter)
        ys.append(xys[:, 1] + torch.randn(n_die, generator=gen, device=dev) * jitter)
        spans.append(xys[:, 2] * CROP_SPAN * _uniform(gen, n_die, *SPAN_JITTER, dev))
        labels.append(data.die_face[k])
        free.append(torch.zeros(n_die, dtype=torch.bool, device=dev))
    if n_box:  # where the detector put them, cut as the companion cuts a box
        k = torch.multinomial(data.box_weight, n_box, replacement=True, generator=gen)
        photos.append(data.box_photo[k])
        xs.append(data.box_xys[k, 0])
        ys.append(data.box_xys[k, 1])
        spans.append(data.box_xys[k, 2] * CROP_SPAN)
        labels.append(data.box_face[k])
        free.append(torch.zeros(n_box, dtype=torch.bool, device=dev))
    for kind, m in zip(kinds, per, strict=True):
        if m == 0:
            continue
        if kind == "part":
            k, xys = dice(m)
            away = xys[:, 2] * _uniform(gen, m, *PART_SIZE, dev)
            turn = _uniform(gen, m, 0, 2 * math.pi, dev)
            photos.append(data.die_photo[k])
            xs.append(xys[:, 0] + away * torch.cos(turn))
            ys.append(xys[:, 1] + away * torch.sin(turn))
            spans.append(xys[:, 2] * CROP_SPAN * _uniform(gen, m, *PART_SIZE, dev))
        elif kind == "table":
            p = data.table_photos[torch.randint(len(data.table_photos), (m,), generator=gen,
                                                device=dev)]
            pick = torch.randint(1 << 30, (m,), generator=gen, device=dev) % data.photo_count[p]
            sizes = data.photo_sizes[p, pick]
            span = sizes * CROP_SPAN * _uniform(gen, m, *TABLE_SPAN, dev)
            cx = torch.rand(m, generator=gen, device=dev) * data.wh[p, 0]
            cy = torch.rand(m, generator=gen, device=dev) * data.wh[p, 1]
            photos.append(p)
            xs.append(cx)
            ys.append(cy)
            spans.append(span)
        elif kind == "phantom":  # a detector's box on no die, cut as it falls
            k = torch.randint(len(data.phantom_photo), (m,), generator=gen, device=dev)
            xys = data.phantom_xys[k]
            photos.append(data.phantom_photo[k])
            xs.append(xys[:, 0])
            ys.append(xys[:, 1])
            spans.append(xys[:, 2] * CROP_SPAN)
        else:
            k = torch.randint(len(data.thing_photo), (m,), generator=gen, device=dev)
            xys = data.thing_xys[k]
            photos.append(data.thing_photo[k])
            xs.append(xys[:, 0] + torch.randn(m, generator=gen, device=dev) * CENTRE_SD * xys[:, 2])
            ys.append(xys[:, 1] + torch.randn(m, generator=gen, device=dev) * CENTRE_SD * xys[:, 2])
            spans.append(xys[:, 2] * CROP_SPAN * _uniform(gen, m, *SPAN_JITTER, dev))
        labels.append(torch.full((m,), NOT_A_DIE, dtype=torch.long, device=dev))
        free.append(torch.full((m,), kind != "part", dtype=torch.bool, device=dev))
    photo, cx, cy = torch.cat(photos), torch.cat(xs), torch.cat(ys)
    span, label = torch.cat(spans), torch.cat(labels)
    # table and things: dropped where a labelled die's centre is within the crop's
    # middle half
    near = ((data.centres[photo, :, 0] - cx[:, None]).abs() < span[:, None] * 0.45) & (
        (data.centres[photo, :, 1] - cy[:, None]).abs() < span[:, None] * 0.45)
    off = ~(torch.cat(free) & near.any(1))
    photo, cx, cy, span, label = photo[off], cx[off], cy[off], span[off], label[off]
    m = photo.shape[0]
    angle = torch.randn(m, generator=gen, device=dev) * UPRIGHT_TURN
    mirror = torch.rand(m, generator=gen, device=dev) < 0.5
    x = cut(data.images, data.wh, photo, cx, cy, span, angle, mirror, size)
    if photometric:
        x = _photometric(x, gen)
        low = torch.rand(m, generator=gen, device=dev) < LOW_RES_SHARE
        if bool(low.any()):
            s = int(torch.randint(10, max(11, size * 3 // 4), (1,), generator=gen,
                                  device=dev))
            small = F.interpolate(x[low], size=(s, s), mode="area")
            x[low] = F.interpolate(small, size=(size, size), mode="bilinear",
                                   align_corners=False)
    return x, label


def draw_glyphs(bank: torch.Tensor, classes: int, gen: torch.Generator
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """``classes`` glyphs of ``bank`` (glyphs x views x 3 x size x size, uint8) drawn
    without repeats, ``GLYPH_VIEWS_DRAWN`` different views of each, changed as the dice's
    crops are (``_photometric``): the crops (0-1) and each one's glyph number."""
    dev = bank.device
    n, views = bank.shape[:2]
    k = min(classes, n)
    pick = torch.randperm(n, generator=gen, device=dev)[:k]
    m = min(GLYPH_VIEWS_DRAWN, views)
    view = torch.rand(k, views, generator=gen, device=dev).argsort(1)[:, :m]
    x = bank[pick[:, None], view].flatten(0, 1).float() / 255
    mirror = torch.rand(x.shape[0], generator=gen, device=dev) < 0.5
    x = torch.where(mirror[:, None, None, None], x.flip(-1), x)
    return _photometric(x, gen), pick.repeat_interleave(m)


def table_place(rng: np.random.Generator, w: int, h: int, die_side: float,
                boxes: np.ndarray) -> tuple[float, float, float] | None:
    """A crop of table near a die's size: (cx, cy, span) with no box's centre in the
    crop's middle half, or None when 20 draws found no such place."""
    for _ in range(20):
        span = die_side * CROP_SPAN * rng.uniform(*TABLE_SPAN)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        if not any(abs(cx - (d[0] + d[2]) / 2) < span * 0.45
                   and abs(cy - (d[1] + d[3]) / 2) < span * 0.45 for d in boxes):
            return cx, cy, span
    return None


def val_crops(imgs: list[np.ndarray], boxes: list[np.ndarray], faces: list[np.ndarray],
              whole: list[bool], size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every labelled die of the photos cut as the companion cuts it (``crop``), and one
    crop of table per die where a photo boxes every die: crops (n x size x size x 3 BGR)
    and their classes."""
    rng = np.random.default_rng(seed)
    out, classes = [], []
    for img, b, f, all_boxed in zip(imgs, boxes, faces, whole, strict=True):
        h, w = img.shape[:2]
        for box, face in zip(b, f, strict=True):
            s = float(max(box[2] - box[0], box[3] - box[1]))
            out.append(crop(img, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2,
                            s * CROP_SPAN, size=size))
            classes.append(int(face) - 1)
            place = table_place(rng, w, h, s, b) if all_boxed else None
            if place is not None:
                out.append(crop(img, *place, size=size))
                classes.append(NOT_A_DIE)
    return (np.stack(out) if out else np.zeros((0, size, size, 3), np.uint8),
            np.array(classes, np.int64))


def supcon(emb: torch.Tensor, labels: torch.Tensor, tau: float = TAU) -> torch.Tensor:
    """The supervised contrastive loss (Khosla et al. 2020) of unit ``emb``: for each row
    with another of its label in the batch, minus the mean log share of those among all
    other rows by softmax of the cosine similarity over ``tau``."""
    z = F.normalize(emb.float(), dim=1)
    n = z.shape[0]
    eye = torch.eye(n, dtype=torch.bool, device=z.device)
    sim = (z @ z.T / tau).masked_fill(eye, float("-inf"))
    logp = sim - torch.logsumexp(sim, dim=1, keepdim=True)
    pos = (labels[:, None] == labels[None, :]) & ~eye
    has = pos.any(1)
    if not bool(has.any()):
        return z.sum() * 0
    mean_pos = logp.masked_fill(~pos, 0).sum(1)[has] / pos.sum(1)[has]
    return -mean_pos.mean()


def nearest_prototype(emb: np.ndarray, classes: np.ndarray, shots: int,
                      rng: np.random.Generator, queries: tuple[np.ndarray, np.ndarray]
                      | None = None) -> float | None:
    """The share of queries given their class by the nearest (cosine) prototype, each
    class's prototype the mean unit embedding of ``shots`` rows of it drawn from ``emb``.
    The queries are ``queries`` (embeddings, classes) when given, else the rows not
    drawn. None when a class has too few rows."""
    z = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    names = np.unique(classes)
    protos, drawn = [], np.zeros(len(z), bool)
    for c in names:
        rows = np.flatnonzero(classes == c)
        if len(rows) < shots + (queries is None):
            return None
        pick = rng.choice(rows, shots, replace=False)
        drawn[pick] = True
        p = z[pick].mean(0)
        protos.append(p / max(float(np.linalg.norm(p)), 1e-12))
    if queries is None:
        qz, qc = z[~drawn], classes[~drawn]
    else:
        q, qc = queries
        qz = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    if not len(qz):
        return None
    pred = names[(qz @ np.stack(protos).T).argmax(1)]
    return float((pred == qc).mean())


def fewshot_figures(sets: dict[str, tuple[np.ndarray, np.ndarray]],
                    glyphs: np.ndarray | None, seed: int = 0) -> dict:
    """Few-shot by nearest prototype: ``sets`` maps a validation set to its dice's
    embeddings and faces (``NOT_A_DIE`` rows left out); each set is read from prototypes
    of N dice per face of another set (of its own when there is no other), and
    ``glyphs`` (dice x 6 faces x views x embedding) from N views of each face of its own
    die. The share read right at each N of ``SHOTS``, the mean of ``FEWSHOT_DRAWS``
    draws."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, float]] = {}
    for name, (emb, cls) in sets.items():
        others = [o for o in sets if o != name]
        src = sets[others[0]] if others else None
        row = {}
        for n in SHOTS:
            got = [nearest_prototype(src[0], src[1], n, rng, (emb, cls)) if src is not None
                   else nearest_prototype(emb, cls, n, rng) for _ in range(FEWSHOT_DRAWS)]
            if all(g is not None for g in got):
                row[str(n)] = round(float(np.mean(got)), 4)
        out[name] = row
    if glyphs is not None and len(glyphs):
        row = {}
        for n in SHOTS:
            if n >= glyphs.shape[2]:
                continue
            got = []
            for die in glyphs:
                emb = die.reshape(-1, die.shape[-1])
                cls = np.repeat(np.arange(die.shape[0]), die.shape[1])
                got += [nearest_prototype(emb, cls, n, rng) for _ in range(FEWSHOT_DRAWS)]
            row[str(n)] = round(float(np.mean(got)), 4)
        out["glyphs"] = row
    return out


def fewshot_summary(f: dict) -> str:
    return "; ".join(f"{name} " + ", ".join(f"N={n} {v:.1%}" for n, v in row.items())
                     for name, row in f.items())


def val_glyphs(size: int) -> np.ndarray:
    """The validation glyphs' views: dice x 6 x views x size x size x 3, cut exactly
    (``glyph_views(..., jitter=False)``: centred, ``CROP_SPAN`` die sides across)."""
    from reader_lab.glyph_dice import glyph_bank

    bank = glyph_bank(VAL_GLYPH_DICE * 6, VAL_GLYPH_VIEWS, size, VAL_GLYPH_SEED,
                      jitter=False)
    return bank.reshape(VAL_GLYPH_DICE, 6, *bank.shape[1:])


def figures(pred: np.ndarray, classes: np.ndarray) -> dict:
    """Dice read right, "not a die" and as another face; table read "not a die"."""
    die = classes != NOT_A_DIE
    dice, table = int(die.sum()), int((~die).sum())
    right = int((pred[die] == classes[die]).sum())
    nod = int((pred[die] == NOT_A_DIE).sum())
    return {"dice": dice, "right": round(right / max(1, dice), 4),
            "not_a_die": round(nod / max(1, dice), 4),
            "other_face": round((dice - right - nod) / max(1, dice), 4),
            "table": table,
            "table_right": round(int((pred[~die] == NOT_A_DIE).sum()) / max(1, table), 4)}


def summary(v: dict) -> str:
    """One set's figures in a line's part."""
    table = (f"; table {v['table_right']:.1%} of {v['table']} read not a die" if v["table"]
             else "")
    return (f"{v['right']:.1%} of {v['dice']} dice right, {v['not_a_die']:.1%} not a die, "
            f"{v['other_face']:.1%} another face{table}")


@torch.no_grad()
def _run(model: torch.nn.Module, crops: np.ndarray, device: torch.device
         ) -> tuple[np.ndarray, np.ndarray]:
    """Predicted classes and embeddings of BGR uint8 crops."""
    preds, embs = [np.zeros(0, np.int64)], [np.zeros((0, 64), np.float32)]
    for k in range(0, len(crops), 512):
        x = torch.from_numpy(crops[k:k + 512]).to(device).permute(0, 3, 1, 2).float() / 255
        logits, emb = model(x)
        preds.append(logits.argmax(1).cpu().numpy())
        embs.append(emb.float().cpu().numpy())
    return np.concatenate(preds), np.concatenate(embs)


def evaluate(model: torch.nn.Module, sets: dict[str, tuple[np.ndarray, np.ndarray]],
             device: torch.device, glyphs: np.ndarray | None = None) -> dict:
    """The face figures of each validation set and, under "fewshot", few-shot's."""
    model.eval()
    out: dict = {}
    dice = {}
    for name, (crops, classes) in sets.items():
        pred, emb = _run(model, crops, device)
        out[name] = figures(pred, classes)
        die = classes != NOT_A_DIE
        if not name.endswith(" boxes"):  # few-shot reads the labelled boxes
            dice[name] = (emb[die], classes[die])
    glyph_emb = None
    if glyphs is not None:
        _, e = _run(model, glyphs.reshape(-1, *glyphs.shape[-3:]), device)
        glyph_emb = e.reshape(*glyphs.shape[:3], -1)
    out["fewshot"] = fewshot_figures(dice, glyph_emb)
    model.train()
    return out


def box_crops(imgs: list[np.ndarray], labels: list, det_dice: list[np.ndarray],
              phantoms: list[np.ndarray], size: int) -> tuple[np.ndarray, np.ndarray]:
    """The detector's boxes cut as the companion cuts them: those on a labelled die with
    its face, those on no die as "not a die"."""
    out, classes = [], []
    for img, lab, d, ph in zip(imgs, labels, det_dice, phantoms, strict=True):
        for box, face in [*((b, int(lab.faces[int(b[5])]) - 1) for b in d),
                          *((b, NOT_A_DIE) for b in ph)]:
            s = float(max(box[2] - box[0], box[3] - box[1]))
            out.append(crop(img, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2,
                            s * CROP_SPAN, size=size))
            classes.append(face)
    return (np.stack(out) if out else np.zeros((0, size, size, 3), np.uint8),
            np.array(classes, np.int64))


def _val_sets(pack: str | Path, size: int, boxes: str | Path | None = None
              ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each validation set's crops and classes; with ``boxes`` also "<set> boxes", the
    set cut in the detector's boxes (``box_crops``)."""
    from reader_lab.pack_boxes import load_boxes

    out = {}
    for name in VAL_SETS:
        imgs, labels = load_pack(pack, (name,))
        if not imgs:
            continue
        out[name] = val_crops(imgs, [lab.boxes for lab in labels],
                              [lab.faces for lab in labels],
                              [dice_photos.fully_labelled(name)] * len(imgs), size)
        if boxes is not None:
            out[f"{name} boxes"] = box_crops(imgs, labels, *load_boxes(boxes, labels), size)
    return out


def baseline(pack: str | Path, model_dir: str | Path, boxes: str | Path | None = None
             ) -> dict:
    """The figures of a model folder's reader on the pack's validation crops: its own
    ``classify`` on the labelled boxes, and on the same table crops (cut at its crop side,
    the boxes given as its networks' crops span); with ``boxes`` also on the detector's
    boxes ("<set> boxes", as ``box_crops`` cuts them)."""
    from companion.vision.learned import LearnedReader
    from reader_lab.pack_boxes import load_boxes

    reader = LearnedReader(model_dir)
    out: dict = {}
    dice: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in VAL_SETS:
        imgs, labels = load_pack(pack, (name,))
        if not imgs:
            continue
        whole = dice_photos.fully_labelled(name)
        preds, classes, embs = [], [], []
        rng = np.random.default_rng(0)
        for img, lab in zip(imgs, labels, strict=True):
            labelled = [list(b) for b in lab.boxes]
            table = []
            h, w = img.shape[:2]
            for b in lab.boxes if whole else ():
                place = table_place(rng, w, h, float(max(b[2] - b[0], b[3] - b[1])),
                                    lab.boxes)
                if place is not None:
                    cx, cy, span = place
                    half = span / CROP_SPAN / 2  # the box whose crop spans that
                    table.append([cx - half, cy - half, cx + half, cy + half])
            every = labelled + table
            if every:
                probs, emb = reader.classify_all(img, every, ("upright",))
                preds.append(np.asarray(probs).argmax(1))
                embs.append(emb["upright"][:len(labelled)])
            classes.append(np.concatenate([lab.faces - 1,
                                           np.full(len(table), NOT_A_DIE, np.int64)]))
        out[name] = figures(np.concatenate(preds), np.concatenate(classes))
        faces = np.concatenate([lab.faces - 1 for lab in labels])
        dice[name] = (np.concatenate(embs), faces)
        if boxes is not None:
            preds, classes = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
            for img, lab, d, ph in zip(imgs, labels, *load_boxes(boxes, labels),
                                       strict=True):
                every = [list(b[:4]) for b in d] + [list(b[:4]) for b in ph]
                if every:
                    preds.append(np.asarray(reader.classify(img, every)[0]).argmax(1))
                classes.append(np.concatenate([lab.faces[d[:, 5].astype(int)] - 1,
                                               np.full(len(ph), NOT_A_DIE, np.int64)]))
            out[f"{name} boxes"] = figures(np.concatenate(preds), np.concatenate(classes))
    glyphs = val_glyphs(DEFAULT_CROP)
    side = glyphs.shape[-2]
    half = side / CROP_SPAN / 2  # the box whose crop spans the whole view
    box = [[side / 2 - half, side / 2 - half, side / 2 + half, side / 2 + half]]
    glyph_emb = np.stack([reader.classify_all(v, box, ("upright",))[1]["upright"][0]
                          for v in glyphs.reshape(-1, side, side, 3)])
    out["fewshot"] = fewshot_figures(dice, glyph_emb.reshape(*glyphs.shape[:3], -1))
    return out


def load_resume(path: Path, model: torch.nn.Module, arch: dict) -> dict:
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file: one line
        raise TrainError(f"{path}: not a resume file ({str(exc).splitlines()[0]})") from None
    if not isinstance(blob, dict) or blob.get("version") != RESUME_VERSION \
            or blob.get("kind") != "faces":
        raise TrainError(f"{path}: not a version {RESUME_VERSION} face classifier resume file")
    if blob.get("arch") != arch:
        raise TrainError(f"{path}: made for {blob.get('arch')}, not {arch}")
    model.load_state_dict({k: v.float() if v.is_floating_point() else v
                           for k, v in blob["weights"].items()})
    return blob


def save_resume(path: Path, ema: torch.nn.Module, step: int, steps: int, seed: int,
                arch: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save({"version": RESUME_VERSION, "kind": "faces", "arch": arch, "step": step,
                "steps": steps, "seed": seed, "weights": _half(ema.state_dict())}, tmp)
    tmp.replace(path)


def train(pack: str | Path, out: str | Path, *, minutes: float, steps: int, batch: int,
          crop_size: int, width: float, lr: float, negatives: float, seed: int,
          name: str = "classifier_upright_dev", resume: str | Path | None = None,
          device: str = "auto", rendered: int = 0, metric: float = 0.0, glyphs: int = 0,
          glyph_views: int = 8, boxes: str | Path | None = None, box_share: float = 0.5,
          log=print) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dev = pick_device(device)
    cuda = dev.type == "cuda"
    t_start = time.time()
    imgs, labels = load_pack(pack, tuple(TRAIN_WEIGHTS))
    if not imgs:
        raise TrainError(f"{pack}: no photos of the training sets {', '.join(TRAIN_WEIGHTS)}")
    counts = {s: sum(lab.set == s for lab in labels) for s in TRAIN_WEIGHTS}
    weights = [TRAIN_WEIGHTS[lab.set] / counts[lab.set] / max(1, len(lab.boxes))
               for lab in labels]
    boxes_of = [lab.boxes for lab in labels]
    faces: list[np.ndarray | None] = [lab.faces for lab in labels]
    whole = [dice_photos.fully_labelled(lab.set) for lab in labels]
    # the board pieces two raters called not a die (the pack's not_dice: issue 9u's
    # audit, the CPU recipe's --rated-negatives), among the clutter scenes' things
    things: list[np.ndarray] = [np.repeat(lab.not_dice, PIECE_COPIES, axis=0)
                                for lab in labels]
    pieces = sum(len(lab.not_dice) for lab in labels)
    det_dice: list[np.ndarray] | None = None
    phantoms: list[np.ndarray] | None = None
    if boxes is not None:
        from reader_lab.pack_boxes import load_boxes

        det_dice, phantoms = load_boxes(boxes, labels)
    if rendered > 0:
        t_scenes = time.time()
        scenes = _scenes(rendered, seed)
        for img, dice_boxes, thing_boxes in scenes:
            imgs.append(img)
            boxes_of.append(dice_boxes)
            faces.append(None)  # drawn from any side: not an upright die to learn
            whole.append(False)
            things.append(thing_boxes)
            weights.append(0.0)
            if det_dice is not None and phantoms is not None:
                det_dice.append(np.zeros((0, 6), np.float32))
                phantoms.append(np.zeros((0, 5), np.float32))
        log(f"{len(scenes)} clutter scenes drawn in {time.time() - t_scenes:.0f}s")
    data = Crops(imgs, boxes_of, faces, whole, things, dev, weights, det_dice, phantoms)
    val = _val_sets(pack, crop_size, boxes)
    bank = None
    if glyphs > 0:
        from reader_lab.glyph_dice import glyph_bank

        t_bank = time.time()
        # (glyphs x views) x 3 x size x size on the device
        bank = torch.from_numpy(glyph_bank(glyphs, glyph_views, crop_size, seed)).to(dev)
        bank = bank.permute(0, 1, 4, 2, 3).contiguous()
        log(f"{glyphs} glyphs x {glyph_views} views drawn in {time.time() - t_bank:.0f}s")
    val_glyph_views = val_glyphs(crop_size)
    arch = {"width": width, "crop": crop_size}
    model = Classifier(width).to(dev)
    start = 0
    if resume is not None:
        start = int(load_resume(Path(resume), model, arch)["step"])
        log(f"resumed at step {start} from {resume}")
    model, ema, opt, gen = training_parts(model, dev, lr, seed, start)
    params = sum(p.numel() for p in model.parameters())
    log(f"{params:,} parameters, {crop_size} px crops; {len(data)} dice, "
        f"{len(data.table_photos)} photos to cut table from, {len(data.thing_photo)} things "
        f"({pieces} rated board pieces x {PIECE_COPIES}), "
        f"{len(data.box_photo)} detector boxes on dice and {len(data.phantom_photo)} on none; "
        f"{sum(len(c) for c, _ in val.values())} validation crops on {dev}; "
        f"loaded in {time.time() - t_start:.0f}s")
    deadline = t_start + minutes * 60
    step, t0, losses = start, time.time(), []
    while step < steps and time.time() < deadline:
        x, y = draw(data, batch, negatives, crop_size, gen, box_share=box_share)
        n_face = x.shape[0]
        if bank is not None:
            g, g_class = draw_glyphs(bank, max(2, batch // GLYPH_SHARE), gen)
            x = torch.cat([x, g])
        if cuda:
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits, emb = model(x)
        loss = F.cross_entropy(logits[:n_face].float(), y, label_smoothing=0.05)
        if metric > 0:
            die = y != NOT_A_DIE
            e, c = emb[:n_face][die], y[die]
            if bank is not None:  # a glyph's class: 7 + its number, after every face
                e, c = torch.cat([e, emb[n_face:]]), torch.cat([c, g_class + NOT_A_DIE + 1])
            loss = loss + metric * supcon(e, c)
        optimise(model, ema, opt, loss, step, steps, start, lr)
        losses.append(loss.item())
        step += 1
        if step % 200 == 0 or step == start + 1:
            took = max(1e-6, time.time() - t0)  # lines 200 steps apart give the rate between
            log(f"step {step}/{steps} loss {np.mean(losses[-200:]):.3f} "
                f"lr {opt.param_groups[0]['lr']:.2e} {(step - start) / took:.1f} steps/s, "
                f"{took:.1f} s")
    trained = time.time() - t0
    save_resume(out / "resume.pt", ema, step, steps, seed, arch)
    cpu_ema = Classifier(width)
    cpu_ema.load_state_dict({k: v.float().cpu() for k, v in ema.state_dict().items()})
    cpu_ema.eval()
    figs = evaluate(cpu_ema, val, torch.device("cpu"), val_glyph_views)
    _export_cls(cpu_ema, out, name, crop_size=crop_size)
    record = {"steps_done": step, "steps": steps, "this_call_steps": step - start,
              "train_seconds": round(trained, 1), "device": str(dev),
              "device_name": device_name(dev), "batch": batch,
              "crop": crop_size, "width": width, "lr": lr, "negatives": negatives,
              "rendered": rendered, "name": name, "metric": metric, "glyphs": glyphs,
              "glyph_views": glyph_views, "boxes": None if boxes is None else str(boxes),
              "box_share": box_share if boxes is not None else 0.0,
              "loss_last_200": round(float(np.mean(losses[-200:])), 4) if losses else None,
              "val": figs}
    append_history(out / "val.json", record)
    log(f"val: step {step}; " + "; ".join(f"{s}: {summary(v)}" for s, v in figs.items()
                                          if s != "fewshot"))
    log(f"few-shot: {fewshot_summary(figs['fewshot'])}")
    return record


def _scene_with_things(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from reader_lab.clutter import clutter_scene

    things: list = []
    img, boxes = clutter_scene(seed, 512, things)
    return img, boxes, np.array(things, np.float32).reshape(-1, 4)


def _scenes(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``n`` clutter scenes with their things' squares, drawn on every core (the seeds
    ``train-detector`` draws its scenes from, so both see the same scenes)."""
    seeds = [seed * 1_000_003 + 7_919 * k for k in range(n)]
    return map_on_every_core(_scene_with_things, seeds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab train-faces",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", required=True, help="a photo pack (python -m reader_lab photo-pack)")
    ap.add_argument("--out", help="where the call's files go")
    ap.add_argument("--baseline", metavar="DIR", help="print a model folder's figures on "
                    "the same validation crops, and train nothing")
    ap.add_argument("--resume", default=None, help="a resume.pt to continue from")
    ap.add_argument("--minutes", type=float, default=8.0, help="wall time for training")
    ap.add_argument("--steps", type=int, default=12000, help="the whole schedule's steps")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--crop", type=int, default=DEFAULT_CROP, help="the crop's side (px, /16)")
    ap.add_argument("--width", type=float, default=DEFAULT_WIDTH, help="channels, times the "
                    "classifiers of record's (1.5 at 64 px: 62M multiply-adds a crop, "
                    "less than the three networks of record together)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--negatives", type=float, default=0.3, help="the share of each batch "
                    "that is not a die")
    ap.add_argument("--name", default="classifier_upright_dev",
                    help="the exported network's file name, without .onnx")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto", help="auto, cuda or cpu")
    ap.add_argument("--rendered", type=int, default=0, help="clutter scenes whose things "
                    "are cut as 'not a die' (drawn at the start on every core)")
    ap.add_argument("--metric", type=float, default=0.0, help="the contrastive loss's "
                    "weight on the embedding, for few-shot (0: the face loss alone)")
    ap.add_argument("--glyphs", type=int, default=0, help="dice with made-up symbols "
                    "taught to the embedding, each a class (needs --metric)")
    ap.add_argument("--glyph-views", type=int, default=8, help="views drawn of each glyph")
    ap.add_argument("--boxes", default=None, help="a detector's boxes on the pack "
                    "(python -m reader_lab pack-boxes: PACK/boxes.json) to cut dice from")
    ap.add_argument("--box-share", type=float, default=0.5, help="the share of each "
                    "batch's dice cut in the detector's boxes (with --boxes)")
    args = ap.parse_args(argv)
    try:
        if args.baseline:
            figs = baseline(args.pack, args.baseline, args.boxes)
            for name, v in figs.items():
                if name != "fewshot":
                    print(f"{name}: {summary(v)}")
            print(f"few-shot: {fewshot_summary(figs['fewshot'])}")
            return 0
        if not args.out:
            ap.error("--out is needed to train (or --baseline DIR to measure a model)")
        if args.crop % 16 or not 32 <= args.crop <= 128:
            ap.error("--crop must be a multiple of 16 in 32-128")
        if args.batch < 1 or args.steps < 1 or args.minutes <= 0:
            ap.error("--batch, --steps and --minutes must be positive")
        if not 0 <= args.negatives < 1 or not 0.25 <= args.width <= 4:
            ap.error("--negatives must be in 0-1 and --width in 0.25-4")
        if not 0 <= args.rendered <= 20000:
            ap.error("--rendered must be 0-20000")
        if not 0 <= args.metric <= 10 or not 0 <= args.glyphs <= 100000 \
                or not 2 <= args.glyph_views <= 64:
            ap.error("--metric must be 0-10, --glyphs 0-100000 and --glyph-views 2-64")
        if not 0 <= args.box_share <= 1:
            ap.error("--box-share must be in 0-1")
        if args.glyphs and not args.metric:
            ap.error("--glyphs teaches the embedding alone: give --metric too")
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        log, logfile = logger(out)
        with logfile:
            train(args.pack, out, minutes=args.minutes, steps=args.steps, batch=args.batch,
                  crop_size=args.crop, width=args.width, lr=args.lr,
                  negatives=args.negatives, seed=args.seed, name=args.name,
                  resume=args.resume, device=args.device, rendered=args.rendered,
                  metric=args.metric, glyphs=args.glyphs, glyph_views=args.glyph_views,
                  boxes=args.boxes, box_share=args.box_share, log=log)
    except (TrainError, PackError) as exc:
        print(f"train-faces: {exc}")
        return 2
    return 0
