"""What the learned die reader's two networks eat, shared by training and run time.

Detector: the frame scaled so its longest side is ``DET_SIZE`` (padded to a multiple of
32 with grey), BGR, 0..1, NCHW. It answers a centre heat map (``hm``, after a sigmoid)
and the log of each die's width and height in output cells (``wh``), both at stride 4.
Classifier: a ``CROP`` x ``CROP`` square around a die, side ``CROP_SPAN`` x the die's
longest box side; answers 7 logits (faces 1..6, then "not a die") and a 64-number
embedding (for few-shot symbol calibration). numpy + OpenCV only here.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.vision.learned_spec import (  # noqa: F401 (importers find them here too)
    CROP,
    CROP_FILTER_KEY,
    CROP_SPAN,
    CROP_SPAN_KEY,
    DET_SIZE,
    NOT_A_DIE,
    PAD_VALUE,
    STRIDE,
)
from companion.vision.types import box_side


def letterbox(image: np.ndarray, size: int = DET_SIZE) -> tuple[np.ndarray, float]:
    """The detector's input blob (1x3xHxW float32) and the scale frame -> blob."""
    h, w = image.shape[:2]
    r = size / max(h, w)
    nh, nw = max(1, round(h * r)), max(1, round(w * r))
    small = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    if small.ndim == 2:
        small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    ph, pw = -(-nh // 32) * 32, -(-nw // 32) * 32
    canvas = np.full((ph, pw, 3), PAD_VALUE, np.uint8)
    canvas[:nh, :nw] = small
    return cv2.dnn.blobFromImage(canvas, 1.0 / 255.0), r


def decode(hm: np.ndarray, wh: np.ndarray, scale: float, threshold: float,
           max_dice: int = 100) -> list[tuple[float, float, float, float, float]]:
    """Peaks of the heat map above ``threshold`` as (x0, y0, x1, y1, score) in frame px."""
    heat = hm.reshape(hm.shape[-2:])
    peaks = heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero(peaks & (heat >= threshold))
    if len(xs) > max_dice:
        order = np.argsort(-heat[ys, xs])[:max_dice]
        ys, xs = ys[order], xs[order]
    out = []
    wh = wh.reshape(2, *heat.shape)
    for y, x in zip(ys, xs, strict=True):
        # sub-cell centre from the neighbours' heat
        cx, cy = float(x), float(y)
        if 0 < x < heat.shape[1] - 1:
            lft, mid, rgt = heat[y, x - 1], heat[y, x], heat[y, x + 1]
            cx += 0.5 * (rgt - lft) / max(1e-6, 2 * mid - lft - rgt)
        if 0 < y < heat.shape[0] - 1:
            top, mid, bot = heat[y - 1, x], heat[y, x], heat[y + 1, x]
            cy += 0.5 * (bot - top) / max(1e-6, 2 * mid - top - bot)
        bw = float(np.exp(wh[0, y, x])) * STRIDE
        bh = float(np.exp(wh[1, y, x])) * STRIDE
        fx, fy = (cx + 0.5) * STRIDE, (cy + 0.5) * STRIDE
        out.append(((fx - bw / 2) / scale, (fy - bh / 2) / scale,
                    (fx + bw / 2) / scale, (fy + bh / 2) / scale, float(heat[y, x])))
    return out


def crop(image: np.ndarray, cx: float, cy: float, side: float, angle: float = 0.0,
         size: int = CROP, area: bool = False) -> np.ndarray:
    """A size x size BGR crop centred on (cx, cy) spanning ``side`` frame pixels, turned
    by ``angle`` degrees; outside the frame is replicated border.

    Shrinking, ``warpAffine`` samples the frame bilinearly (it has no area filter), so a
    large die's pips and a noisy sensor's dots alias. ``area``: the die's neighbourhood is
    first shrunk with ``cv2.INTER_AREA`` (each crop pixel the mean of the frame pixels it
    covers), then cut and turned at that scale. Off: the crops the older networks were
    trained on."""
    s = size / max(side, 1.0)
    if area and s < 1:
        reach = int(math.ceil(side * 0.75)) + 2  # the turned square's corners and a margin
        x0, y0 = int(math.floor(cx)) - reach, int(math.floor(cy)) - reach
        h, w = image.shape[:2]
        part = image[max(0, y0):max(0, min(h, y0 + 2 * reach)),
                     max(0, x0):max(0, min(w, x0 + 2 * reach))]
        if part.size:
            top, left = max(0, y0) - y0, max(0, x0) - x0
            part = cv2.copyMakeBorder(part, top, 2 * reach - top - part.shape[0], left,
                                      2 * reach - left - part.shape[1], cv2.BORDER_REPLICATE)
            small_side = max(1, round(2 * reach * s))
            f = small_side / (2 * reach)
            part = cv2.resize(part, (small_side, small_side), interpolation=cv2.INTER_AREA)
            return crop(part, (cx - x0 + 0.5) * f - 0.5, (cy - y0 + 0.5) * f - 0.5,
                        side * f, angle, size)
    m = cv2.getRotationMatrix2D((cx, cy), angle, s)
    m[0, 2] += size / 2 - cx
    m[1, 2] += size / 2 - cy
    flags = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    out = cv2.warpAffine(image, m, (size, size), flags=flags, borderMode=cv2.BORDER_REPLICATE)
    if out.ndim == 2:
        out = cv2.cvtColor(out, cv2.COLOR_GRAY2BGR)
    return out


def box_crops(image: np.ndarray, boxes, size: int = CROP, span: float = CROP_SPAN,
              area: bool = False) -> list[np.ndarray]:
    """One ``crop`` per box (x0, y0, x1, y1, ...): centred on the box, ``span`` times its
    longer side across, ``size`` px square; how the reader cuts a classifier's crops."""
    return [crop(image, (b[0] + b[2]) / 2, (b[1] + b[3]) / 2,
                 box_side(b) * span, size=size, area=area)
            for b in boxes]


def crops_blob(crops: list[np.ndarray]) -> np.ndarray:
    return cv2.dnn.blobFromImages(crops, 1.0 / 255.0)
