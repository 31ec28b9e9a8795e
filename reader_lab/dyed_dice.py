"""Dyed dice: a photo set's labelled dice given other die and pip colours.

Hue-turned sets (``hue_turned``) keep white, grey and black dice as they were, so they
cannot show a dark die with light pips where the photos hold only white dice with dark
ones; the issue found dark dice the weakest. A dyed set shows validation's own photos
with every labelled die repainted inside its box: the die's own light and dark (its body,
its pips, its shading) are kept as a ramp from one colour to the other, and the two
colours are drawn anew for each die, a third of dice dark-bodied with light pips, a third
mid-toned and a third light-bodied with dark pips, at any hue. The table around a die is
as it was, except where a die's box holds it (an ellipse over the box, its edge
feathered). The draws are seeded by the photo's source photo, so augmented copies of one
photo draw the same colours, die by die in label order.

``table-val-dyed`` is ``table-val`` so. Built once into the companion's cache
(``cache_dir("dyed-dice")``), each image under its own key made a PNG, as the hue-turned
sets are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from companion.cache import cache_dir
from companion.vision.evaluate import ManifestImage
from companion.vision.frames import load_image
from reader_lab.half_size import build_cached, inputs_stamp, manifest_row, write_image
from reader_lab.hue_turned import turned_key

VERSION = 1  # bumped when the images are made otherwise (older caches are rebuilt)
FEATHER = 0.08  # the mask's edge blur, in die sides


def folder(name: str) -> Path:
    """Where the dyed set ``name`` is built (the companion's cache)."""
    return cache_dir("dyed-dice") / name


def _bgr(hue: float, sat: float, val: float) -> np.ndarray:
    hsv = np.uint8([[[round(hue / 2) % 180, round(sat * 255), round(val * 255)]]])
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def draw_colours(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(body, pips) as BGR floats: the body dark, mid-toned or light (a third each), at
    any hue and saturation; the pips far from it in brightness, at any hue."""
    kind = int(rng.integers(3))
    body_val = float(rng.uniform(*((0.1, 0.35), (0.35, 0.7), (0.7, 0.97))[kind]))
    body = _bgr(rng.uniform(0, 360), rng.uniform(0, 1), body_val)
    pip_val = float(rng.uniform(0.75, 1.0) if body_val < 0.55 else rng.uniform(0.03, 0.3))
    pips = _bgr(rng.uniform(0, 360), rng.uniform(0, 0.7), pip_val)
    return body, pips


def dye_die(image: np.ndarray, box: Sequence[float], body: np.ndarray,
            pips: np.ndarray) -> None:
    """Repaint the die in ``box`` (x0, y0, x1, y1) of ``image`` (BGR, changed in place):
    its brightness, from its darkest to its lightest twentieth, becomes a ramp from
    ``pips`` to ``body`` (from the side most of the die is on to ``body``), inside an
    ellipse over the box with a feathered edge. A box under 2 px, or off the image, is
    left alone."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (float(v) for v in box)
    side = max(x1 - x0, y1 - y0)
    if min(x1 - x0, y1 - y0) < 2:
        return
    pad = int(np.ceil(side * FEATHER * 3)) + 1
    X0, Y0 = max(0, int(np.floor(x0)) - pad), max(0, int(np.floor(y0)) - pad)
    X1, Y1 = min(w, int(np.ceil(x1)) + pad), min(h, int(np.ceil(y1)) + pad)
    if X1 - X0 < 2 or Y1 - Y0 < 2:
        return
    roi = image[Y0:Y1, X0:X1]
    yy, xx = np.mgrid[Y0:Y1, X0:X1].astype(np.float32) + 0.5
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    inside = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
    if inside.sum() < 4:
        return
    grey = cv2.cvtColor(roi, cv2.COLOR_BGR2GRAY).astype(np.float32)
    lo, hi = np.percentile(grey[inside], (5, 95))
    t = np.clip((grey - lo) / max(hi - lo, 1.0), 0.0, 1.0)
    if np.median(t[inside]) < 0.5:  # most of the die is dark: the dark side is the body
        t = 1.0 - t
    new = pips[None, None] + t[..., None] * (body - pips)[None, None]
    mask = cv2.GaussianBlur(inside.astype(np.float32), (0, 0), max(0.5, side * FEATHER))
    mask = np.minimum(mask * 2.0, 1.0) * (mask > 0.01)  # full inside, feathered at the rim
    out = roi.astype(np.float32) * (1 - mask[..., None]) + new * mask[..., None]
    roi[...] = np.clip(out + 0.5, 0, 255).astype(np.uint8)


def dye_dice(image: np.ndarray, boxes: Sequence[Sequence[float]],
             rng: np.random.Generator) -> np.ndarray:
    """A copy of ``image`` with each die in ``boxes`` dyed colours drawn from ``rng``."""
    out = image.copy()
    for box in boxes:
        body, pips = draw_colours(rng)
        dye_die(out, box, body, pips)
    return out


def _rng_for(source: str) -> np.random.Generator:
    """The draws for one photo: seeded by its source photo (``source``), so augmented
    copies of one photo draw the same colours for their dice in label order."""
    digest = hashlib.sha1(f"dyed/{source}".encode()).hexdigest()
    return np.random.default_rng(int(digest[:16], 16))


def build(items: Sequence[ManifestImage], sources: Sequence[str], folder: Path
          ) -> list[ManifestImage]:
    """The dyed images of ``items`` (``sources``: each one's source photo) in ``folder``
    (built there unless it already holds these inputs' images whole), as a manifest: each
    image under its own key made a PNG (``turned_key``), its dice as they were."""

    def write(tmp: Path) -> list[str]:
        rows = []
        for m, source in zip(items, sources, strict=True):
            key = turned_key(m.key)
            dyed = dye_dice(load_image(m.path), [d.box for d in m.dice], _rng_for(source))
            write_image(tmp / key, dyed)
            rows += [manifest_row(key, d.face, d.box) for d in m.dice]
        return rows

    stamp = inputs_stamp(items, sources, version=VERSION, feather=FEATHER)
    return build_cached(folder, stamp, write)
